"""The matrix in two passes: every cell on the first seed, the other seeds once per distinct result.

Why: on one workload most combinations do not differ at all — a routing policy where only one
vCPU ever takes interrupts, halt polling where no vCPU halts, a throttle above the interrupt
rate. A run is deterministic, so cells whose first-seed summaries are equal (every number and
counter, :func:`eventpath.compare.execute._digest`) ran the same simulation: the mechanisms that
tell them apart were never exercised. Such a *group* is run on the other seeds once, by its
first cell, and confirmed by its last on the second seed: if the two differ there, every cell
of the group runs every seed and the group splits by what they gave. A group's cells are equal
on the first seed for certain, and on the second as far as its first and last cells show; the
other seeds' numbers are its first cell's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from eventpath.compare.execute import Outcome, run_all
from eventpath.executor import Executor


@dataclass
class Group:
    """Cells (indices into the workload's cell list) that gave the same results."""

    workload: str
    members: list[int]
    rows: list[dict[str, Any]] = field(default_factory=list)  # the first member's, one per seed
    digests: tuple[str, ...] = ()


@dataclass
class Matrix:
    """What the matrix gave: each workload's distinct results, the refused cells and those with
    a run that is not a result (on any seed) with their reasons, and the runs made (a refused
    cell's check counted as one)."""

    groups: dict[str, list[Group]]
    refused: dict[str, dict[int, str]]  # workload -> cell index -> the checker's reason
    unranked: dict[str, dict[int, tuple[str, str]]]  # workload -> cell index -> (liveness status, reason)
    runs: int


def run(cells: dict[str, list[dict]], seeds: list[int], duration: float | None, ex: Executor) -> Matrix:
    """``cells``: per workload, the cells' scenarios (index 0 is the baseline, as given)."""
    first, rest = seeds[:1], seeds[1:]
    jobs = [(w, i, sc) for w, scs in cells.items() for i, sc in enumerate(scs)]
    m = Matrix({w: [] for w in cells}, {w: {} for w in cells}, {w: {} for w in cells}, len(jobs))
    by_digest: dict[tuple[str, str], list[Outcome]] = {}
    for o in run_all(jobs, first, duration, ex, f"seed {first[0]}"):
        if not _failed(m, o):
            by_digest.setdefault((o.workload, o.digests[0]), []).append(o)
    groups = list(by_digest.values())
    if rest:
        groups = _other_seeds(m, cells, groups, rest, duration, ex)
    for g in groups:
        m.groups[g[0].workload].append(Group(g[0].workload, sorted(o.index for o in g), g[0].rows, tuple(g[0].digests)))
    return m


def _failed(m: Matrix, o: Outcome, members: list[Outcome] | None = None) -> bool:
    """Record a refused or unranked outcome (a seed's run that is no result) against every cell
    of its group."""
    for where, why in ((m.refused, o.refused), (m.unranked, o.unranked)):
        if why:
            for x in members or [o]:
                where[x.workload][x.index] = why
            return True
    return False


def _other_seeds(m: Matrix, cells, groups: list[list[Outcome]], rest: list[int], duration, ex: Executor):
    """Run ``rest`` for each group's first cell and the second seed for its last; a group whose
    two differ runs every seed in every cell and splits by what they gave."""
    firsts = {_key(g[0]) for g in groups}
    lasts = {_key(g[-1]) for g in groups if len(g) > 1}
    more = _extend(cells, firsts, rest, duration, ex, "seeds " + ",".join(map(str, rest)))
    check = _extend(cells, lasts, rest[:1], duration, ex, f"seed {rest[0]}, confirming groups")
    m.runs += len(firsts) * len(rest) + len(lasts)
    split = [g for g in groups if len(g) > 1 and more[_key(g[0])].digests[:1] != check[_key(g[-1])].digests]
    todo = {_key(o) for g in split for o in g[1:]}
    if todo:
        more.update(_extend(cells, todo, rest, duration, ex, "seeds of split groups"))
        m.runs += len(todo) * len(rest)
    out: list[list[Outcome]] = []
    for g in groups:
        parts: dict[tuple[str, ...], list[Outcome]] = {}
        for o in g:
            # In a group that did not split, every cell follows its first.
            parts.setdefault(tuple(more.get(_key(o), more[_key(g[0])]).digests), []).append(o)
        for part in parts.values():
            tail = more[_key(part[0])]
            if _failed(m, tail, part):
                continue
            part[0].rows += tail.rows
            part[0].digests += tail.digests
            out.append(part)
    return out


def _key(o: Outcome) -> tuple[str, int]:
    return (o.workload, o.index)


def _extend(cells, keys, seeds, duration, ex: Executor, what) -> dict[tuple[str, int], Outcome]:
    jobs = [(w, i, cells[w][i]) for w, i in sorted(keys)]
    return {_key(o): o for o in run_all(jobs, seeds, duration, ex, what)}
