"""The checks of the Python API's arguments: one message shape for every entry point.

Each check takes the value, ``where`` (the entry point, ``"sweep"``) and ``name`` (the argument,
``"out"``), and returns the value in the form the code below it needs, or raises
:class:`InputError` whose one line reads ``where: name VALUE is not allowed; expected WHAT``.
An entry point checks every argument here before it touches it, so no ``TypeError``,
``KeyError`` or ``UnicodeDecodeError`` of a bad argument escapes from deeper code. Scenario
*contents* are not checked here: the simulator checks those once, for files, dicts and the
command line alike (``_eventpath.check_json``).
"""

from __future__ import annotations

import math
import numbers
import os
from typing import Any

from eventpath._eventpath import InputError


def one_line(s: str) -> str:
    return " ".join(s.split())


def short(v: Any) -> str:
    """A value as a one-line message shows it: at most 40 characters."""
    r = one_line(repr(v))
    return r if len(r) <= 40 else r[:37] + "..."


def refuse(where: str, name: str, value: Any, expected: str) -> InputError:
    """The one message shape: ``where: name VALUE is not allowed; expected ...``."""
    return InputError(f"{where}: {name} {short(value)} is not allowed; expected {expected}")


def path(value: Any, where: str, name: str, what: str) -> str:
    """``value`` as a path (``str`` or ``os.PathLike``, not empty, without NUL, valid UTF-8);
    ``what`` says what it names ("a directory")."""
    if isinstance(value, bytes) or not isinstance(value, (str, os.PathLike)):
        raise refuse(where, name, value, f"the path of {what} (str or pathlib.Path)")
    p = os.fspath(value)
    if not isinstance(p, str) or not p.strip() or "\0" in p:
        raise refuse(where, name, value, f"the path of {what} (not empty, no NUL character)")
    try:
        p.encode("utf-8")
    except UnicodeEncodeError:
        raise refuse(where, name, value, f"the path of {what} in valid UTF-8") from None
    return p


def integer(value: Any, where: str, name: str, lo: int, hi: int, unit: str = "") -> int:
    """``value`` as an int in ``lo..=hi`` (a bool is not one)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not lo <= value <= hi:
        raise refuse(where, name, value, f"an integer in {lo}..={hi}{' ' + unit if unit else ''}")
    return int(value)


def text(value: Any, where: str, name: str, expected: str) -> str:
    """``value`` as a str; ``expected`` says which strings are allowed."""
    if not isinstance(value, str):
        raise refuse(where, name, value, expected)
    return value


def toml_value(value: Any, where: str, name: str, depth: int = 0) -> Any:
    """``value`` if a scenario key could hold it (what TOML and JSON carry: str, int, finite
    float, bool, and lists and str-keyed dicts of them), else an :class:`InputError`."""
    expected = "a scenario value (str, int, finite float, bool, or a list or dict of them)"
    if depth > 32:
        raise refuse(where, name, value, expected + ", nested at most 32 deep")
    if isinstance(value, float) and not math.isfinite(value):
        raise refuse(where, name, value, "a finite number (NaN and infinities are values of no scenario key)")
    if isinstance(value, (str, bool, numbers.Integral, float)):
        return value
    if isinstance(value, (list, tuple)):
        for x in value:
            toml_value(x, where, name, depth + 1)
        return value
    if isinstance(value, dict):
        for k, x in value.items():
            if not isinstance(k, str):
                raise refuse(where, f"{name} key", k, "str keys")
            toml_value(x, where, name, depth + 1)
        return value
    raise refuse(where, name, value, expected)
