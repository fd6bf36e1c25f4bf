"""eventpath: simulate, reproduce and measure the virtual I/O event path.

The simulator and the KVM testbed are Rust (``eventpath._eventpath``); this package is the
user's entry point: :func:`run` for scenarios, :mod:`eventpath.reproduce` for the seeds'
experiments, and the ``eventpath`` command line (:mod:`eventpath.cli`).
"""

from eventpath._eventpath import RouteRequest
from eventpath.api import InputError, Interrupted, Result, Trace, keys, profiles, resolve, run, trace
from eventpath.version import version as _version

#: The installed package's version (None when run from a tree that is not installed).
__version__ = _version()


def __getattr__(name: str):
    """``eventpath.sweep`` and ``eventpath.reproduce`` are the submodules of those names, imported
    on first use; each is callable as its API function (:func:`eventpath.sweep.run_sweep`,
    :func:`eventpath.reproduce.run_reproductions`), so that ``eventpath.sweep(...)`` works
    whichever was imported first (a function of that name here would be replaced by the
    submodule when it is imported)."""
    if name in ("sweep", "reproduce"):
        import importlib

        return importlib.import_module(f"eventpath.{name}")
    raise AttributeError(f"module 'eventpath' has no attribute {name!r}")


__all__ = ["InputError", "Interrupted", "Result", "RouteRequest", "Trace", "keys", "profiles", "reproduce", "resolve",
           "run", "sweep", "trace", "__version__"]
