"""The commands that run many variants of one scenario and read across them: ``sweep`` (a grid of
key values, resumable), ``compare`` (every mechanism combination head to head) and ``qos`` (the
peak memcached rate whose p95 stays within a bound, by bisection).

Every argument is checked before anything runs; the work itself is :mod:`eventpath.sweep`'s,
:mod:`eventpath.compare`'s and :mod:`eventpath.qos`'s.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from eventpath import outdir
from eventpath.cli.common import (UsageError, add_workers, check_duration, check_workers, command_line, seconds,
                                  seed, seed_list)


def add_qos(sub) -> None:
    qs = sub.add_parser("qos", help="peak memcached request rate whose p95 latency stays within a bound (DID §5.7)")
    qs.add_argument("scenario", help="scenario TOML file with a memcached workload")
    qs.add_argument("--out", required=True, help="output directory (qos.json, qos.png)")
    qs.add_argument("--p95-ms", type=float, default=10.0, help="the bound on the 95th percentile (ms; default 10)")
    qs.add_argument("--vm", type=int, default=0, help="index of the VM whose workload is searched (default 0)")
    qs.add_argument("--lo", type=float, default=1_000.0, help="lowest offered rate (req/s; default 1000)")
    qs.add_argument("--hi", type=float, default=1_000_000.0, help="highest offered rate (req/s; default 1e6)")
    qs.add_argument("--steps", type=int, default=8, help="bisection steps (default 8)")
    qs.add_argument("--seed", type=seed, help="override the scenario's seed")
    qs.add_argument("--duration", type=seconds, help="override each run's measured seconds")
    qs.add_argument("--no-plots", action="store_true", help="write no figure")
    qs.set_defaults(fn=cmd_qos)


def add_sweep(sub) -> None:
    sw = sub.add_parser("sweep", help="run a grid of scenario variants in parallel, resumable")
    sw.add_argument("scenario", help="base scenario TOML file")
    sw.add_argument("--param", action="append", default=[], metavar="KEY=V1,V2",
                    help="dotted key and values (TOML literals; lists and inline tables keep their commas), "
                         "e.g. vm.0.workload.rate_pps=10000,20000 or host.io.cores=[14,15],[13]; vm.*.KEY sets "
                         "KEY on every VM (repeatable)")
    sw.add_argument("--seeds", help="comma-separated seeds (default: the scenario's)")
    sw.add_argument("--out", required=True, help="output directory (results.csv, runs/)")
    add_workers(sw)
    sw.add_argument("--duration", type=seconds, help="override each run's measured seconds")
    sw.set_defaults(fn=cmd_sweep)


def add_compare(sub) -> None:
    cp = sub.add_parser("compare", help="every mechanism combination head to head on a scenario or named workloads")
    cp.add_argument("scenario", nargs="?", help="scenario TOML file (or give --profile and --workloads)")
    cp.add_argument("--profile", help="the host the named --workloads run on (built-in name or path)")
    cp.add_argument("--workloads", help="comma-separated workload kinds, e.g. tcp_stream,tcp_receive,memcached,tcp_rr; "
                    "kind:key=value sets a parameter")
    cp.add_argument("--out", required=True, help="output directory (compare.json, ranked.csv, ranked.parquet, cells.csv, "
                    "pareto.png)")
    cp.add_argument("--seeds", help="comma-separated seeds per cell (default 1,2,3)")
    cp.add_argument("--duration", type=seconds, help="measured simulated seconds of each run (default 0.02)")
    cp.add_argument("--warmup", type=seconds, help="simulated warm-up seconds of each run (default 0.01)")
    cp.add_argument("--vary", action="append", default=[], metavar="FAMILY[=NAME,...]",
                    help="vary only this mechanism family, or only these of its mechanisms (repeatable; default: "
                         "every family: delivery, handling, moderation, routing, halt_poll)")
    add_workers(cp)
    cp.add_argument("--top", type=int, default=10, help="best rows printed per workload (default 10; the CSV has all)")
    cp.add_argument("--no-plots", action="store_true", help="write no figure")
    cp.set_defaults(fn=cmd_compare)


def cmd_qos(a) -> int:
    from eventpath import qos

    out = outdir.writable(a.out)
    s = qos.search(a.scenario, bound_ms=a.p95_ms, vm=a.vm, lo=a.lo, hi=a.hi, steps=a.steps, duration=a.duration,
                   seed=a.seed, step=lambda label: print(f"  {label}", file=sys.stderr))
    doc = s.as_dict()
    (out / "qos.json").write_text(json.dumps(doc, indent=2) + "\n")
    figs = ""
    if not a.no_plots:
        from eventpath.plots import qos_figure

        qos_figure(doc, out / "qos.png", f"{Path(a.scenario).name}: p95 within {a.p95_ms:g} ms")
        figs = f" and {out}/qos.png"
    for p in s.points:
        if p.liveness != "ok":
            print(f"warning: the run at {p.offered_rps:,.0f} req/s is {p.liveness}, not a result: {p.liveness_reason}; "
                  "it counts as missing the bound", file=sys.stderr)
    if s.peak_rps is None:
        print(f"no rate from {a.lo:g} req/s meets p95 <= {a.p95_ms:g} ms")
    else:
        print(f"peak {s.peak_rps:,.0f} req/s with p95 <= {a.p95_ms:g} ms" + (" (the highest rate tried: raise --hi)" if s.capped else ""))
    print(f"wrote {out}/qos.json{figs}")
    return 0


def cmd_sweep(a) -> int:
    import shlex

    from eventpath import sweep, tables

    params = [sweep.parse_param(p) for p in a.param]
    seeds = seed_list(a.seeds) if a.seeds is not None else None
    check_workers(a)
    res = sweep.sweep(Path(a.scenario), params, seeds, outdir.writable(a.out), workers=a.workers, duration=a.duration,
                      scheduler=a.scheduler, command="eventpath " + shlex.join(command_line(a, ["sweep"])))
    if tables.parquet_available():
        print(f"wrote {res} and {res.with_suffix('.parquet')}")
    else:
        print(f"wrote {res} (results.parquet as well with pyarrow: pip install 'eventpath[cluster]')")
    if (res.parent / "intervals.csv").exists():
        print(f"wrote {res.parent / 'intervals.csv'}: each grid point's and VM's mean over its {len(seeds or [])} seeds "
              "with a 95 % interval (_lo, _hi)")
    return 0


def cmd_compare(a) -> int:
    import shlex

    from eventpath import api, compare

    if (a.scenario is None) == (a.workloads is None):
        raise UsageError("compare: give a scenario file, or --profile P --workloads W1,W2,... (not both)")
    if a.workloads is not None and a.profile is None:
        raise UsageError("compare --workloads: give the host's --profile as well (e.g. --profile es2)")
    if a.scenario is not None and a.profile is not None:
        raise UsageError("compare: --profile goes with --workloads; a scenario file names its own profile")
    check_workers(a)
    if a.top < 1:
        raise UsageError(f"--top {a.top}: not allowed; expected at least 1 row")
    seeds = seed_list(a.seeds) if a.seeds is not None else list(compare.SEEDS)
    duration = compare.DURATION_S if a.duration is None else a.duration
    warmup = compare.WARMUP_S if a.warmup is None else a.warmup
    check_duration(duration)
    out = compare.OUT.check(a.out)  # before anything runs: a refused --out leaves nothing behind
    vary = {}
    for spec in a.vary:
        fam, eq, names = spec.partition("=")
        vary[fam.strip()] = [n.strip() for n in names.split(",")] if eq else None
        if eq and not all(vary[fam.strip()]):
            raise UsageError(f"--vary {spec}: an empty name; expected FAMILY or FAMILY=NAME,NAME")
    if a.scenario is not None:
        inputs = _scenario_input(a, duration, warmup)
    else:
        from eventpath.compare import workloads

        api.profile(a.profile)  # an unknown profile: one line naming the built-in ones
        workloads.check_warmup(a.profile, warmup)
        inputs = workloads.named(a.profile, [w for w in a.workloads.split(",")], duration, warmup)
    compare.compare(inputs, out, seeds=seeds, workers=a.workers, vary=vary, plots=not a.no_plots, top=a.top,
                    command="eventpath compare " + shlex.join(command_line(a, [])[1:]), scheduler=a.scheduler)
    return 0


def _scenario_input(a, duration: float, warmup: float) -> dict[str, dict]:
    """``compare SCENARIO``'s one input: the file, checked by the simulator, its runs set to the
    comparison's ``duration`` and ``warmup`` (a note says so where the file says otherwise)."""
    import tomllib

    from eventpath import _eventpath
    from eventpath.compare import workloads

    try:
        with open(a.scenario, "rb") as f:
            sc = tomllib.load(f)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        _eventpath.check_file(a.scenario)  # raises the simulator's one-line error for the file
        raise
    own = (sc.get("duration_s", 1.0), sc.get("warmup_s", 0.1))
    if (a.duration, a.warmup) == (None, None) and own != (duration, warmup):
        print(f"note: each run is {duration:g} s after {warmup:g} s of warm-up, the comparison's default (the "
              f"scenario says {own[0]:g} s after {own[1]:g} s); --duration and --warmup change it")
    workloads.check_warmup(str(sc.get("profile")), warmup)
    sc.update(duration_s=duration, warmup_s=warmup)
    _eventpath.check_json(json.dumps(sc), a.scenario)
    return {str(sc["name"]): sc}
