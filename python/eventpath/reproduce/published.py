"""The papers' published values, as data beside each experiment (``published/ID.toml``).

Experiments compute simulated values only (:class:`~eventpath.reproduce.experiment.Measured`);
:func:`attach` puts each row's published value beside it. Published values are comparison data:
no model code reads them. A file::

    experiment = "es2-table1"                       # the experiment's ID (= the file's stem)
    paper = "ES2 (seed 000_8734db7c67a9fb1f.txt)"   # the paper every value below is from

    [measures]                  # each metric a value below names: what the row measures, on
                                # which VMs, vCPUs or pCPUs, over what window, a percentage's
                                # base, and any set-up detail the paper leaves unstated (the
                                # choice declared)
    exits_eoi = "EOI-write exits per second of the tested VM (all its vCPUs), ..."

    [[include]]                 # optional: another experiment's values (all, or one config's)
    experiment = "es2-table1"
    config = "tcp512-noPI"      # optional: only this configuration's values ...
    as = "*"                    # ... optional: under this configuration name ("*": every one)

    [[value]]
    config = "tcp512-noPI"      # a name, a list of names, or "*" (every configuration)
    metric = "exits_eoi"
    unit = "exits/s"            # must be the row's unit
    value = 30736               # a number the paper gives; or, exactly one of:
                                #   range = [1.4, 2.7]   a range it gives ("1.4x-2.7x")
                                #   at_most = 10         a bound ("below 10 %"); at_least = 90
                                #   holds = true         a direction it states (unit "holds": the
                                #                        row is 1 where it holds in the run, else 0)
    source = "ES2 §3.3, Table 1"   # where in the paper: section, figure or table
    read = "as printed"            # how the number was read (text, table, a bound, a midpoint...)

Strict, as scenarios are: an unknown key, a value that matches no row, a row two values
match, or a unit that differs from the row's is an error (a bug of the data or the experiment).
"""

from __future__ import annotations

import functools
import math
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from eventpath.comparison import PublishedRow

#: Where the data files live.
PUBLISHED = Path(__file__).parent / "published"

#: A value's ``config`` that matches every configuration of its experiment.
EVERY = "*"


class PublishedDataError(ValueError):
    """A published-data file, or its fit to its experiment's rows, is wrong."""


@dataclass(frozen=True)
class Value:
    """One published value and where it comes from."""

    config: str
    metric: str
    unit: str
    #: The number held against: a point's value, a range's midpoint, a bound's value, 1 for a
    #: direction that holds.
    value: float
    paper: str
    source: str
    read: str
    #: The file it was written in (an included value keeps its own).
    file: str
    #: "value", "range", "at_most", "at_least" or "holds".
    kind: str = "value"
    #: A range's or bound's ends (None: open).
    bounds: tuple[float | None, float | None] | None = None
    #: What its row measures (its file's ``[measures]`` entry for the metric).
    definition: str = ""

    def matches(self, config: str, metric: str) -> bool:
        return self.metric == metric and self.config in (config, EVERY)


_TOP = {"experiment", "paper", "measures", "include", "value"}
_INCLUDE = {"experiment", "config", "as"}
_VALUE = {"config", "metric", "unit", "source", "read"}
#: How a published value is given: exactly one of these keys.
_KINDS = ("value", "range", "at_most", "at_least", "holds")


def _number(x, w: str, key: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
        raise PublishedDataError(f"{w}: key `{key}`: {x!r} is not a finite number")
    return float(x)


def _reference(v: dict, w: str) -> tuple[str, float, tuple[float | None, float | None] | None]:
    """(kind, the number held against, bounds) of a [[value]] table."""
    given = [k for k in _KINDS if k in v]
    if len(given) != 1:
        raise PublishedDataError(f"{w}: expected exactly one of {', '.join(_KINDS)}; got {given or 'none'}")
    kind = given[0]
    x = v[kind]
    if kind == "value":
        return kind, _number(x, w, kind), None
    if kind == "range":
        if not isinstance(x, list) or len(x) != 2:
            raise PublishedDataError(f"{w}: key `range`: expected [low, high]")
        lo, hi = _number(x[0], w, "range"), _number(x[1], w, "range")
        if lo > hi:
            raise PublishedDataError(f"{w}: key `range`: {lo} > {hi}")
        return kind, (lo + hi) / 2.0, (lo, hi)
    if kind == "holds":
        if x is not True:
            raise PublishedDataError(f"{w}: key `holds`: expected true (a direction the paper states)")
        if v.get("unit") != "holds":
            raise PublishedDataError(f"{w}: a direction's unit must be \"holds\"")
        return kind, 1.0, None
    b = _number(x, w, kind)
    return kind, b, (None, b) if kind == "at_most" else (b, None)


def _str(d: dict, key: str, where: str) -> str:
    v = d.get(key)
    if not isinstance(v, str) or not v.strip():
        raise PublishedDataError(f"{where}: key `{key}`: expected a non-empty string, got {v!r}")
    return v


@functools.lru_cache(maxsize=None)
def load(experiment: str) -> tuple[Value, ...]:
    """The published values of ``experiment`` (its file's and its includes'); none without a file."""
    path = PUBLISHED / f"{experiment}.toml"
    if not path.exists():
        return ()
    where = f"reproduce/published/{path.name}"
    doc = tomllib.loads(path.read_text())
    if set(doc) - _TOP:
        raise PublishedDataError(f"{where}: key `{sorted(set(doc) - _TOP)[0]}` is not allowed; expected {sorted(_TOP)}")
    if doc.get("experiment") != experiment:
        raise PublishedDataError(f"{where}: key `experiment`: {doc.get('experiment')!r}; expected {experiment!r}")
    paper = _str(doc, "paper", where)
    measures = doc.get("measures", {})
    if not isinstance(measures, dict):
        raise PublishedDataError(f"{where}: key `measures`: expected a table of metric = \"what it measures\"")
    for m in measures:
        _str(measures, m, f"{where}: measures")
    out: list[Value] = []
    for i, inc in enumerate(doc.get("include", [])):
        w = f"{where}: include[{i}]"
        if not isinstance(inc, dict) or set(inc) - _INCLUDE:
            raise PublishedDataError(f"{w}: expected {{ experiment, config?, as? }}")
        theirs = load(_str(inc, "experiment", w))
        if not theirs:
            raise PublishedDataError(f"{w}: experiment {inc['experiment']!r} has no published values")
        config = inc.get("config")
        picked = [v for v in theirs if config is None or v.config == config]
        if not picked:
            raise PublishedDataError(f"{w}: {inc['experiment']} has no values for config {config!r}")
        out += [Value(**{**v.__dict__, "config": inc.get("as", v.config)}) for v in picked]
    for i, v in enumerate(doc.get("value", [])):
        w = f"{where}: value[{i}]"
        if not isinstance(v, dict) or set(v) - _VALUE - set(_KINDS) or _VALUE - set(v):
            raise PublishedDataError(f"{w}: expected the keys {sorted(_VALUE)} and one of {', '.join(_KINDS)}")
        kind, x, bounds = _reference(v, w)
        configs = v["config"] if isinstance(v["config"], list) else [v["config"]]
        if not configs or not all(isinstance(c, str) and c for c in configs):
            raise PublishedDataError(f"{w}: key `config`: expected a name, a list of names or \"*\"")
        metric = _str(v, "metric", w)
        if metric not in measures:
            raise PublishedDataError(f"{w}: metric {metric!r} has no definition; add `{metric} = \"...\"` to [measures] "
                                     f"(what it measures, on which VMs or CPUs, a percentage's base)")
        for c in configs:
            out.append(Value(c, metric, _str(v, "unit", w), x, paper, _str(v, "source", w),
                             _str(v, "read", w), where, kind, bounds, measures[metric]))
    unused = set(measures) - {v.metric for v in out}
    if unused:
        raise PublishedDataError(f"{where}: measures: {sorted(unused)[0]!r} names no metric of a value here")
    seen: set[tuple[str, str]] = set()
    for v in out:
        if (v.config, v.metric) in seen:
            raise PublishedDataError(f"{where}: {v.config}/{v.metric} is given twice")
        seen.add((v.config, v.metric))
    return tuple(out)


def attach(experiment: str, measured: Iterable) -> list[PublishedRow]:
    """``measured`` rows (config, metric, unit, simulated) of ``experiment`` with their
    published values beside them (None where the paper gives none)."""
    values = load(experiment)
    used: set[Value] = set()
    rows = []
    for m in measured:
        hits = [v for v in values if v.matches(m.config, m.metric)]
        if len(hits) > 1:
            raise PublishedDataError(f"{experiment}: row {m.config}/{m.metric} matches {len(hits)} published values")
        pub = hits[0] if hits else None
        if pub is not None:
            if pub.unit != m.unit:
                raise PublishedDataError(f"{pub.file}: {pub.config}/{pub.metric} is in {pub.unit!r}; "
                                         f"the row is in {m.unit!r}")
            used.add(pub)
        rows.append(PublishedRow(m.config, m.metric, m.unit, m.simulated, pub.value if pub else None,
                                 bounds=pub.bounds if pub else None, kind=pub.kind if pub else "value",
                                 definition=pub.definition if pub else None))
    unused = [v for v in values if v not in used]
    if unused:
        v = unused[0]
        raise PublishedDataError(f"{v.file}: {v.config}/{v.metric} matches no row of {experiment}")
    return rows
