"""Running the matrix: every cell's seeds through :mod:`eventpath.executor` (this process, local
worker processes or a Dask cluster), with its progress display.

A job is one cell of one workload with all its seeds: the first seed's run is also the cell's
check (the checker refuses a pair the layout cannot run before anything is simulated), so a
refused cell costs one check and its reason comes back instead of numbers.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from eventpath._eventpath import InputError
from eventpath.executor import Executor, Progress


@dataclass
class Outcome:
    """What one job gave: per-seed rows, or the checker's refusal, or a run that is not a
    result (:mod:`eventpath.liveness`: a stalled flow, or no watchdog verdict) on some seed."""

    workload: str
    index: int
    rows: list[dict[str, Any]] = field(default_factory=list)
    #: One digest per seed of the summary less its wall time: equal digests, equal results.
    digests: list[str] = field(default_factory=list)
    refused: str | None = None
    #: (liveness status, "seed S: reason") of the first seed whose run is not a result.
    unranked: tuple[str, str] | None = None


def _digest(summary: dict) -> str:
    s = {k: v for k, v in summary.items() if k not in ("wall_seconds", "scenario")}
    return hashlib.sha1(json.dumps(s, sort_keys=True).encode()).hexdigest()[:16]


def run_job(workload: str, index: int, sc: dict, seeds: list[int], duration: float | None) -> Outcome:
    """Run one cell's seeds (in a worker). Bad input comes back as its message: the compiled
    module's exceptions are pickled by name, which a worker's death would not carry."""
    from eventpath import api, liveness, summary
    from eventpath.compare import metrics

    out = Outcome(workload, index)
    io_cores = summary.io_cores(sc)
    for seed in seeds:
        try:
            s = api.run(sc, seed=seed, duration=duration).summary
        except InputError as e:
            out.refused = str(e).split(": ", 1)[-1] if str(e).startswith("scenario <") else str(e)
            return out
        status, why = liveness.verdict(s)
        if status != liveness.OK:
            # One seed that is not a result and the cell is not ranked: its mean would hide it.
            out.unranked = (status, f"seed {seed}: {why}")
            return out
        out.rows.append({"seed": seed, **metrics.of_run(s, io_cores)})
        out.digests.append(_digest(s))
    return out


def _run_chunk(jobs: list[tuple[str, int, dict]], seeds: list[int], duration: float | None) -> list[Outcome]:
    return [run_job(w, i, sc, seeds, duration) for w, i, sc in jobs]


#: Jobs sent to a worker at once: fewer round trips through the pool (a job is a few ms), yet
#: small enough that the workers finish together and the bar moves.
CHUNK = 16


def run_all(jobs: list[tuple[str, int, dict]], seeds: list[int], duration: float | None, ex: Executor,
            what: str = "compare") -> list[Outcome]:
    """Run ``jobs`` (workload, cell index, scenario) on ``seeds`` through ``ex``; outcomes in job
    order. Jobs go out in chunks (one progress line or bar step per chunk)."""
    size = max(1, min(CHUNK, len(jobs) // (4 * ex.slots)))
    chunks = [(jobs[k:k + size], seeds, duration) for k in range(0, len(jobs), size)]
    done: dict[tuple[str, int], Outcome] = {}
    with Progress(len(jobs), f"compare ({what})", "cell") as bar:
        for _, outcomes in ex.map(_run_chunk, chunks):
            for o in outcomes:
                done[(o.workload, o.index)] = o
            bar.update(len(outcomes), ", ".join(dict.fromkeys(o.workload for o in outcomes)))
    return [done[(w, i)] for w, i, _ in jobs]
