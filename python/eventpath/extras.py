"""Optional dependencies: what only one command needs is an extra of the package
(``pyproject.toml``), imported when that command runs; a missing one is one line naming the
extra to install, not an ImportError trace."""

from __future__ import annotations

import importlib
from types import ModuleType

from eventpath._eventpath import InputError


def need(module: str, extra: str, what: str) -> ModuleType:
    """Import ``module``, which ``what`` needs; if it is not installed, raise :class:`InputError`
    saying which extra brings it (``pip install 'eventpath[extra]'``)."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise InputError(f"{what} needs {module}, which is not installed: pip install 'eventpath[{extra}]'") from None
