"""eventpath: simulate, reproduce and measure the virtual I/O event path.

The simulator and the KVM testbed are Rust (``eventpath._eventpath``); this package is the
user's entry point: :func:`run` for scenarios, :mod:`eventpath.reproduce` for the seeds'
experiments, and the ``eventpath`` command line (:mod:`eventpath.cli`).
"""

from eventpath._eventpath import RouteRequest
from eventpath.api import InputError, Interrupted, Result, profiles, run
from eventpath.version import version as _version

#: The installed package's version (None when run from a tree that is not installed).
__version__ = _version()

__all__ = ["InputError", "Interrupted", "Result", "RouteRequest", "profiles", "run", "__version__"]
