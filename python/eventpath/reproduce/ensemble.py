"""A reproduction's rows over an ensemble of seeds, and whether they have converged (issue 47).

A row computed from one seed of one short run is a draw, not a value: ES2's memcached gain on
its own host was +4.9 / +14.9 / +32.2 / +33.4 % at 0.05 / 0.2 / 1.0 / 2.0 s, and two seeds of
one 0.2 s run differed by ±10 %. So an experiment runs as an ensemble — member ``k`` runs every
scenario at its own seed + k (``api.varied``) — and each row reports the members' mean with
their spread (``{"seeds", "sd", "min", "max"}``). A direction row (unit "holds") reports whether
it holds in a majority of the members, and in what share of them.

*Converged* (``--converge``): doubling the seeds and, apart, doubling every run's length each
move the row by less than a tenth of its tolerance (:data:`CONVERGED_WITHIN`), measured in the
row's own tolerance around its published value (or, without one, around its value); a row
that moved more says it did not converge, and is judged all the same.
"""

from __future__ import annotations

import math
import statistics
from typing import Callable, Iterable

from eventpath import api
from eventpath.comparison import HOLDS_UNIT, PublishedRow, published_tolerance

#: A move below this many tolerances is converged: a tenth of the bar.
CONVERGED_WITHIN = 0.1


def run_members(compare: Callable[[float | None, Callable[[str], None]], list[PublishedRow]],
                members: Iterable[int], duration: float | None, step: Callable[[str], None],
                duration_scale: float = 1.0) -> list[list[PublishedRow]]:
    """Each member's rows: ``compare`` run at seed offset ``k`` (and ``duration_scale``)."""
    out = []
    for k in members:
        with api.varied(k, duration_scale):
            out.append(compare(duration, step))
    return out


def combine(members: list[list[PublishedRow]]) -> list[PublishedRow]:
    """One row per (config, metric): the members' mean (a direction: its majority), with the
    spread where there are several members. Every member must give the same rows."""
    first = members[0]
    keys = [(r.config, r.metric) for r in first]
    for m in members[1:]:
        if [(r.config, r.metric) for r in m] != keys:
            raise AssertionError("an ensemble's members gave different rows: an experiment's rows must not "
                                 "depend on its seed")
    out = []
    for i, r in enumerate(first):
        vals = [m[i].simulated for m in members]
        have = [v for v in vals if v is not None]
        sim = None
        if have and len(have) == len(vals):
            mean = statistics.fmean(have)
            sim = (1.0 if mean > 0.5 else 0.0) if r.unit == HOLDS_UNIT else mean
        row = PublishedRow(r.config, r.metric, r.unit, sim, r.reference, role=r.role, bounds=r.bounds, kind=r.kind,
                           definition=r.definition)
        if len(members) > 1:
            row.spread = _spread(have, len(vals), r.unit)
        out.append(row)
    return out


def _spread(have: list[float], n: int, unit: str) -> dict:
    if not have:
        return {"seeds": n, "sd": None, "min": None, "max": None}
    sd = statistics.stdev(have) if len(have) > 1 else 0.0
    d = {"seeds": n, "sd": _round(sd), "min": _round(min(have)), "max": _round(max(have))}
    if len(have) < n:
        d["missing"] = n - len(have)
    if unit == HOLDS_UNIT:
        d["holds_in"] = _round(statistics.fmean(have))
    return d


def _round(x: float) -> float:
    return float(f"{x:.6g}") if math.isfinite(x) else x


def moved(a: PublishedRow, b: PublishedRow) -> float | None:
    """How far ``b``'s value lies from ``a``'s, in the row's tolerance (a range's or bound's
    inner bar) around its published value, or around ``a``'s value without one."""
    if a.simulated is None or b.simulated is None:
        return None if (a.simulated is None) == (b.simulated is None) else math.inf
    tol = published_tolerance(a.unit)
    ref = a.reference if a.reference is not None else a.simulated
    if ref == 0 and a.unit != "%" and a.unit != HOLDS_UNIT:
        return 0.0 if a.simulated == b.simulated else math.inf
    return abs(tol.miss(b.simulated, ref) - tol.miss(a.simulated, ref))


def mark_converged(rows: list[PublishedRow], more_seeds: list[PublishedRow], longer: list[PublishedRow]) -> None:
    """Set each row's ``converged``: both doublings moved it by under :data:`CONVERGED_WITHIN`."""
    for r, s, t in zip(rows, more_seeds, longer):
        ms, mt = moved(r, s), moved(r, t)
        r.converged = ms is not None and mt is not None and ms < CONVERGED_WITHIN and mt < CONVERGED_WITHIN
        if not r.converged:
            r.spread = dict(r.spread or {}, moved_doubling_seeds=_round(ms) if ms is not None else None,
                            moved_doubling_duration=_round(mt) if mt is not None else None)
