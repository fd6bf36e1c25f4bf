"""eventpath: simulate, reproduce and measure the virtual I/O event path.

The simulator and the KVM testbed are Rust (``eventpath._eventpath``); this package is the
user's entry point: :func:`run` for scenarios, :mod:`eventpath.reproduce` for the seeds'
experiments, and the ``eventpath`` command line (:mod:`eventpath.cli`).
"""

from eventpath.api import InputError, Interrupted, Result, profiles, run

__all__ = ["InputError", "Interrupted", "Result", "profiles", "run"]
