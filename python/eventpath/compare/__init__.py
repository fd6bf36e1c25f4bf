"""``eventpath compare``: every mechanism combination a host can run, head to head, on the
user's scenario or on named workloads.

The families are the simulator's seams — interrupt delivery, request handling (``[host.io]``
and vhost busy polling), interrupt moderation, interrupt routing, halt polling — and their
choices are what the scenario checker accepts today (:mod:`.seams`, :mod:`.matrix`), so a
mechanism added to a seam appears here unasked. Each cell runs on several seeds
(:mod:`.passes`, :mod:`.execute`); the results are ranked per workload with every difference
from the baseline judged against the seed spread (:mod:`.rank`), printed (:mod:`.table`),
drawn as a Pareto figure (:mod:`.figure`) and written with what produced them, into a
directory kept whole (:data:`OUT`):

* ``compare.json`` — the command, eventpath's version and commit, the profiles, every
  workload's scenario as run, the families and their choices, and every ranked row;
* ``ranked.csv`` — one row per distinct result per workload (means, seed ranges, exits/s by
  reason, host CPU by who burns it, the differences from the baseline); ``ranked.parquet``,
  the same table, beside it where pyarrow is installed;
* ``cells.csv`` — one row per cell: its mechanisms and its rank, or the checker's reason for
  refusing it, or why it is not ranked (``stalled``: a seed's run had a stalled flow, a model
  bug; ``unjudged``: a seed's summary had no liveness verdict; :mod:`eventpath.liveness`), as
  ``compare.json``'s ``not_ranked`` lists them too;
* ``pareto.png`` — throughput and p99 latency against host CPU, the frontier named.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Callable

from eventpath import api, outdir, tables
from eventpath._eventpath import InputError
from eventpath.compare import matrix, passes, rank, table
from eventpath.version import provenance

#: Defaults that keep the whole matrix near a minute on two cores (DESIGN §7): short runs, three
#: seeds. A mechanism that adapts over longer windows than the run (CGR's and AIR's 100 ms) is
#: then seen before it adapts: raise --warmup for those.
SEEDS = (1, 2, 3)
DURATION_S = 0.02
WARMUP_S = 0.01

#: Every file a comparison writes.
FILES = ("compare.json", "ranked.csv", "ranked.parquet", "cells.csv", "pareto.png")
#: A comparison's ``--out``: checked before anything runs, written whole or not at all, never
#: mixed with another run's files (:class:`eventpath.outdir.Owned`). A directory holding files a
#: comparison does not write is refused (a ``run``'s, a ``sweep``'s); an earlier comparison's
#: files are replaced, also a figure the new one does not draw (``--no-plots``).
OUT = outdir.Owned("a comparison", ".compare-", FILES.__contains__)


def compare(inputs: dict[str, dict], out: Path, *, seeds: list[int] = list(SEEDS), workers: int | None = None,
            vary: dict[str, list[str] | None] | None = None, plots: bool = True, top: int = 10,
            command: str | None = None, say: Callable[[str], None] = print,
            scheduler: str | None = None) -> dict[str, Any]:
    """Run the matrix on ``inputs`` ({workload label: scenario dict}) and write ``out``'s files
    (checked with ``OUT.check`` by the caller before anything runs). Returns the manifest.
    The runs go to ``workers`` local processes, or to the Dask scheduler at ``scheduler``."""
    from eventpath import executor

    started = time.monotonic()
    fams = {w: matrix.restrict(matrix.families(sc), vary or {}) for w, sc in inputs.items()}
    cell_lists = {w: [()] + matrix.cells(f) for w, f in fams.items()}  # index 0: the baseline, as given
    scenarios = {w: [matrix.variant(inputs[w], c) for c in cell_lists[w]] for w in inputs}
    total = sum(len(v) for v in scenarios.values())
    say(f"compare: {total} cells ({', '.join(f'{w} {len(v)}' for w, v in scenarios.items())}) x {len(seeds)} seeds; "
        f"each run {_seconds(inputs)}")
    with executor.start(scheduler, workers, total) as ex:
        m = passes.run(scenarios, seeds, None, ex)
    labels = {w: [matrix.label(c) for c in cl] for w, cl in cell_lists.items()}
    ranked = {w: rank.rows(w, m.groups[w], labels[w]) for w in inputs}
    manifest = {
        "command": command, **provenance(),
        "profiles": {p: api.profile(p) for p in sorted({sc["profile"] for sc in inputs.values()})},
        "seeds": seeds, "scenarios": inputs,
        "families": {w: {k: [c.name for c in v] for k, v in f.items()} for w, f in fams.items()},
        "cells": total, "runs": m.runs, "reproduction_flags": table.REPRO_FLAGS,
        "results": {w: [rank.flat(r, inputs[w].get("name", w)) for r in rows] for w, rows in ranked.items()},
    }
    # Cells whose run on some seed is not a result (a stalled flow, no watchdog verdict): never
    # ranked, listed apart with their reason in the table, compare.json and cells.csv.
    unranked = {w: [(labels[w][i], st, why) for i, (st, why) in sorted(m.unranked[w].items())] for w in inputs}
    manifest["not_ranked"] = {w: [{"cell": c, "status": st, "reason": why} for c, st, why in v]
                              for w, v in unranked.items()}
    cell_rows = []
    for w in inputs:
        where = {i: r for r in ranked[w] for i in r.members}
        for i, c in enumerate(cell_lists[w]):
            status, reason = ("ran", None) if i in where else ("refused", m.refused[w][i]) if i in m.refused[w] \
                else m.unranked[w][i]
            # A cell's row summarises its seeds: ``seeds`` is their list ("1;2;3"; empty where
            # the cell never ran), in the place where a row of one run has ``seed``.
            cell_rows.append({"scenario": inputs[w].get("name", w),
                              "seeds": rank.seed_list(where[i].seeds) if i in where else None,
                              "workload": w, "cell": labels[w][i], **{ch.family: ch.name for ch in c},
                              "rank": where[i].rank if i in where else None, "status": status, "reason": reason})
    for w in inputs:
        refused: dict[str, list[str]] = {}
        for i, why in m.refused[w].items():
            refused.setdefault(why, []).append(labels[w][i])
        best = rank.coverage(ranked[w], cell_lists[w])
        table.print_workload(w, list(fams[w]), ranked[w], best, refused, unranked[w], len(cell_lists[w]), top, say)
    same = rank.twins(cell_lists, ranked)
    manifest["identical_everywhere"] = [{"family": f, "names": n} for f, n in same]
    for fam, names in same:
        say(f"\n{fam}: {' = '.join(names)} gave identical results in every cell (two names of one mechanism, or one "
            "this comparison never exercised: a longer --warmup/--duration or another workload may tell them apart)")
    table.print_footer(say)
    manifest["wall_seconds"] = round(time.monotonic() - started, 3)
    with OUT.staged(out) as tmp:
        (tmp / "compare.json").write_text(json.dumps(manifest, indent=1) + "\n")
        flat = [r for rows in manifest["results"].values() for r in rows]
        tables.write_csv(tmp / "ranked.csv", flat)
        tables.write_parquet(tmp / "ranked.parquet", flat)  # where pyarrow is installed
        tables.write_csv(tmp / "cells.csv", cell_rows)
        if plots:
            from eventpath.compare import figure

            figure.pareto(ranked, tmp / "pareto.png")
        written = [f for f in FILES if (tmp / f).exists()]
    say(f"{m.runs} runs in {manifest['wall_seconds']:.1f} s ({time.monotonic() - started:.1f} s with the files); "
        f"wrote {out}/" + ", ".join(written))
    return manifest


def _seconds(inputs: dict[str, dict]) -> str:
    spans = {(sc.get("duration_s", 1.0), sc.get("warmup_s", 0.1)) for sc in inputs.values()}
    return "; ".join(f"{d:g} s measured after {w:g} s warm-up" for d, w in sorted(spans))


def check_seeds(seeds: list[int]) -> list[int]:
    if not seeds:
        raise InputError("--seeds: give at least one seed")
    return [api.check_seed(s, "--seeds") for s in seeds]
