"""``eventpath advise``: which switch pays on the user's scenario, by how much, at what host CPU,
and how sure (issue 50). The work is :mod:`eventpath.advise`'s; this module reads the arguments,
prints the one-page answer and writes advise.json and advise.csv.
"""

from __future__ import annotations

import json
import sys

from eventpath.cli.common import UsageError, add_workers, check_duration, check_workers, seconds


def add_advise(sub) -> None:
    a = sub.add_parser("advise", help="which switch pays on your scenario (delivery, halt polling, guest haltpoll, "
                                      "busy polling, PV features): gains with intervals, CPU cost")
    a.add_argument("scenario", help="scenario TOML file: your host's layout and workloads")
    a.add_argument("--out", required=True, help="output directory (advise.json, advise.csv)")
    a.add_argument("--seeds", type=int, default=4, help="seeds per option to start with (default 4; doubled for "
                                                       "options not yet resolved on every VM)")
    a.add_argument("--max-seeds", type=int, default=32, help="most seeds per option (default 32)")
    a.add_argument("--budget", type=seconds, default=240.0, help="wall seconds after which no more seeds start "
                                                                 "(default 240)")
    a.add_argument("--duration", type=seconds, help="override each run's measured simulated seconds")
    a.add_argument("--robust", action="store_true", help="also rerun each decisive option at the corners of the "
                                                         "profile's ranges (groups of 8 at their minima and maxima, "
                                                         "4 seeds): robust where the gain's sign holds at all")
    add_workers(a)
    a.set_defaults(fn=cmd_advise)


def cmd_advise(a) -> int:
    from eventpath import advise, outdir
    from eventpath.executor import start
    from eventpath.tables import write_csv

    check_workers(a)
    check_duration(a.duration)
    if a.seeds < 2:
        raise UsageError(f"--seeds {a.seeds}: not allowed; expected at least 2 (an interval needs two pairs)")
    out = outdir.writable(a.out)
    with start(a.scheduler, a.workers) as ex:
        adv = advise.advise(a.scenario, seeds=a.seeds, max_seeds=a.max_seeds, budget_s=a.budget,
                            duration=a.duration, robust=a.robust, ex=ex, progress=lambda m: print(f"advise: {m}", file=sys.stderr))
    lines = advise.answer(adv)
    print("\n".join(lines))
    write_csv(out / "advise.csv", advise.table(adv))
    (out / "advise.json").write_text(json.dumps({
        "scenario": adv.scenario, "profile": adv.profile, "stock": adv.stock, "seeds": adv.seeds,
        "duration": adv.duration, "wall_s": adv.wall_s, "runs": adv.runs, "budget_spent": adv.budget_spent,
        "robust_screen": adv.robust,
        "answer": lines, "rows": advise.table(adv)}, indent=2) + "\n")
    print(f"\nfull table: {out / 'advise.csv'} (one row per option and VM, intervals as _lo/_hi); advise.json")
    return 0
