"""A profile's values flattened to rows: one per dotted key (``section.key``) with its value,
unit, free range (``free = {min, max, prior}`` of a calibrated parameter), plausible range
(``range = {min, max, why}``, issue 47) and source. Shared by ``eventpath profiles NAME``, the
report's profiles page and ``eventpath sensitivity``'s screen."""

from __future__ import annotations

import json
from typing import Any, Iterator, NamedTuple


class Value(NamedTuple):
    key: str
    value: Any
    unit: str
    free: dict | None
    source: str
    range: dict | None = None
    #: Why a value has no range (a count, a kernel's constant), or None.
    exact: str | None = None


def free_note(free: dict | None) -> str:
    """A free parameter's calibration range and prior (``free 0.0..1.5, prior 0.2``); '' if fixed."""
    if not free:
        return ""
    n = {k: f"{free[k]:g}" if isinstance(free.get(k), (int, float)) else str(free.get(k)) for k in ("min", "max", "prior")}
    return f"free {n['min']}..{n['max']}, prior {n['prior']}"


def range_note(v: Value) -> str:
    """What a value may plausibly be: its free range and prior, or its range and why; ''."""
    if v.free:
        return free_note(v.free)
    if v.range:
        return f"range {v.range['min']:g}..{v.range['max']:g}: {v.range['why']}"
    if v.exact:
        return f"exact: {v.exact}"
    return ""


def values(table: dict, prefix: str = "", inherited: str = "") -> Iterator[Value]:
    """Every value of a profile (as :func:`eventpath.api.profile` returns it), nested tables
    flattened. A value without its own source (a plain key of a table) takes its table's."""
    src = table.get("source", "") if isinstance(table.get("source"), str) else ""
    for k, v in table.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict) and "value" in v:
            yield Value(key, v["value"], v.get("unit", ""), v.get("free") or None, str(v.get("source", "")),
                        v.get("range") or None, v.get("exact") or None)
        elif isinstance(v, dict):
            yield from values(v, f"{key}.", src or inherited)
        elif k != "source" or not prefix:  # a table's own source is shown beside its values instead
            plain = v if isinstance(v, (int, float, str)) else json.dumps(v)
            yield Value(key, plain, "", None, (src or inherited) if prefix else "")


def exact(value: Any) -> str:
    """A value as stored, never rounded: a profile value is an input, not a result."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{value:,.12g}"
    return str(value)
