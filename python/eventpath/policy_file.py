"""Python policies named on the command line: ``eventpath run --routing VM=FILE.py:CLASS``
loads CLASS from FILE.py and gives it to :func:`eventpath.run` as VM's router
(docs/python-policy.md)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Any

from eventpath._eventpath import InputError

_SPEC = re.compile(r"^(?P<vm>[^=]+)=(?P<file>.+\.py):(?P<cls>[A-Za-z_][A-Za-z0-9_.]*)$")


def routers(specs: list[str] | None) -> dict[str, Any] | None:
    """``VM=FILE.py:CLASS`` specs as :func:`eventpath.run`'s ``routing``; None for none."""
    if not specs:
        return None
    out: dict[str, Any] = {}
    for spec in specs:
        m = _SPEC.match(spec)
        if not m:
            raise InputError(f"--routing {spec}: not allowed; expected VM=FILE.py:CLASS, e.g. "
                             "vm0=examples/python_router.py:RunningFirst")
        vm, file, cls = m["vm"], m["file"], m["cls"]
        if vm in out:
            raise InputError(f"--routing {spec}: VM `{vm}` is given two routers; give one")
        out[vm] = _load(spec, Path(file), cls)
    return out


def _load(spec: str, file: Path, cls: str) -> Any:
    if not file.is_file():
        raise InputError(f"--routing {spec}: no file {file}")
    module = importlib.util.module_from_spec(importlib.util.spec_from_file_location(f"_eventpath_policy_{file.stem}", file))
    try:
        module.__spec__.loader.exec_module(module)
    except Exception as e:  # the user's file: any error of it is bad input, said in one line
        raise InputError(f"--routing {spec}: loading {file} raised {type(e).__name__}: {' '.join(str(e).split())}") from e
    obj: Any = module
    for part in cls.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise InputError(f"--routing {spec}: {file} defines no {cls}")
    return obj
