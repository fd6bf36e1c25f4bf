"""From runs to a ranked table: seeds summarised, cells ranked, differences judged against the
seed-to-seed spread.

A row is a distinct result (a :class:`~eventpath.compare.passes.Group`: the cells that ran the
same simulation). Its numbers are the mean over seeds, with the seeds' minimum and maximum. A
difference from the baseline (the scenario as given) is *beyond the spread* only when the two
rows' seed ranges do not overlap: with a few seeds, the range is the spread they show, and an
overlap means the seeds alone could explain the difference.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from eventpath.compare.metrics import COLUMNS
from eventpath.compare.passes import Group

#: The baseline's cell index in every workload's cell list.
BASELINE = 0
#: Metrics whose difference from the baseline the table judges (higher throughput is better;
#: lower latency and CPU are).
JUDGED = ("throughput", "p99_us", "cpu_host")


@dataclass
class Row:
    workload: str
    rank: int
    members: list[int]
    labels: list[str]
    mean: dict[str, Any]
    lo: dict[str, Any]
    hi: dict[str, Any]
    seeds: list[int]
    #: metric -> (change from the baseline in %, beyond the seed spread?)
    vs_base: dict[str, tuple[float, bool]] = field(default_factory=dict)

    @property
    def is_baseline(self) -> bool:
        return BASELINE in self.members

    @property
    def label(self) -> str:
        """The cells it stands for: ``a · x|y`` where they are every combination of the names at
        each place (each name on the page), else the first cell's label."""
        named = [lab.split(" · ") for i, lab in zip(self.members, self.labels) if i != BASELINE]
        if not named:
            return self.labels[0]
        places = [list(dict.fromkeys(parts[k] for parts in named)) for k in range(len(named[0]))]
        size = 1
        for p in places:
            size *= len(p)
        if size == len(set(map(tuple, named))):
            return " · ".join("|".join(p) for p in places)
        return " · ".join(named[0])

    @property
    def spelled_out(self) -> bool:
        """Whether :attr:`label` names every cell of the row."""
        n = sum(1 for i in self.members if i != BASELINE)
        return "|" in self.label or n <= 1


def _stats(rows: list[dict[str, Any]]) -> tuple[dict, dict, dict]:
    mean, lo, hi = {}, {}, {}
    for k in rows[0]:
        if k == "seed":
            continue
        vals = [r[k] for r in rows]
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
            mean[k], lo[k], hi[k] = sum(vals) / len(vals), min(vals), max(vals)
        else:  # a unit, or a latency a workload does not have (None)
            mean[k] = lo[k] = hi[k] = vals[0] if len(set(map(repr, vals))) == 1 else None
    return mean, lo, hi


def rows(workload: str, groups: list[Group], labels: list[str]) -> list[Row]:
    """The ranked rows of one workload: highest mean throughput first (less host CPU, then the
    label, breaks a tie); ``labels`` names every cell index."""
    out = []
    for g in groups:
        mean, lo, hi = _stats(g.rows)
        out.append(Row(workload, 0, g.members, [labels[i] for i in g.members], mean, lo, hi, [r["seed"] for r in g.rows]))
    out.sort(key=lambda r: (-(r.mean["throughput"] or 0.0), r.mean["cpu_host"], r.label))
    base = next((r for r in out if r.is_baseline), None)
    for i, r in enumerate(out, 1):
        r.rank = i
        if base is not None:
            r.vs_base = {m: d for m in JUDGED if (d := _versus(r, base, m)) is not None}
    return out


def _versus(r: Row, base: Row, metric: str) -> tuple[float, bool] | None:
    a, b = r.mean.get(metric), base.mean.get(metric)
    if a is None or b is None or b == 0:
        return None
    beyond = r.lo[metric] > base.hi[metric] or r.hi[metric] < base.lo[metric]
    return (100.0 * (a - b) / abs(b), beyond)


def coverage(ranked: list[Row], cells: list[tuple]) -> dict[tuple[str, str], Row]:
    """For each mechanism (family, name) that ran, its best-ranked row."""
    best: dict[tuple[str, str], Row] = {}
    for r in ranked:
        for i in r.members:
            if i == BASELINE:
                continue
            for c in cells[i]:
                best.setdefault((c.family, c.name), r)
    return best


def flat(r: Row, scenario: str | None = None) -> dict[str, Any]:
    """A row as a CSV line: means, seed ranges, the judged differences, the cells it stands for.
    ``scenario`` and ``seeds`` come first, as every eventpath CSV starts with the scenario and
    its seed; a ranked row summarises several seeds, so it has ``seeds``, their list ("1;2;3"),
    where a row of one run has ``seed``."""
    out: dict[str, Any] = {"scenario": scenario, "seeds": seed_list(r.seeds), "workload": r.workload,
                           "rank": r.rank, "cells": r.label, "identical_cells": len(r.members),
                           "baseline": r.is_baseline}
    for k in COLUMNS:
        out[k] = r.mean.get(k)
    for k in ("throughput", "p99_us", "cpu_host"):
        out[f"{k}_min"], out[f"{k}_max"] = r.lo.get(k), r.hi.get(k)
    for m in JUDGED:
        d = r.vs_base.get(m)
        out[f"{m}_vs_baseline_pct"] = None if d is None else round(d[0], 3)
        out[f"{m}_beyond_spread"] = None if d is None else d[1]
    out.update({k: v for k, v in r.mean.items() if k.startswith("exits_") and k != "exits_per_s"})
    out["same_results_as"] = " | ".join(r.labels)
    return out


def twins(cells: dict[str, list[tuple]], ranked: dict[str, list[Row]]) -> list[tuple[str, list[str]]]:
    """Names of one family that gave identical results in every cell of every workload, with the
    other families held: two names of one mechanism (a scenario alias) or a mechanism this
    comparison never exercised. [(family, [names])]"""
    where = {(w, i): r.rank for w, rows in ranked.items() for r in rows for i in r.members}
    families: dict[str, list[str]] = {}
    for cl in cells.values():
        for c in cl[1:]:
            for ch in c:
                names = families.setdefault(ch.family, [])
                if ch.name not in names:
                    names.append(ch.name)
    out = []
    for pos, (fam, names) in enumerate(families.items()):
        # Each name's results, keyed by the rest of the cell: equal keys, same row.
        sig = {n: {} for n in names}
        for w, cl in cells.items():
            for i, c in enumerate(cl[1:], 1):
                rest = tuple(ch.name for j, ch in enumerate(c) if j != pos)
                sig[c[pos].name][(w, rest)] = where.get((w, i), "not run")
        seen: list[list[str]] = []
        for n in names:
            for bucket in seen:
                if sig[bucket[0]] == sig[n] and any(v != "not run" for v in sig[n].values()):
                    bucket.append(n)
                    break
            else:
                seen.append([n])
        out += [(fam, b) for b in seen if len(b) > 1]
    return out


def seed_list(seeds: list[int]) -> str:
    """Seeds as one CSV cell: "1;2;3"."""
    return ";".join(map(str, seeds))
