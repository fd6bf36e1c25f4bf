"""The seeds' experiments and what is built on them: ``reproduce`` (a seed experiment, our values
beside the published ones), ``calibrate`` (a profile's free parameters fitted to its
calibration targets) and ``report`` (one static site of every reproduction, the head to head,
the testbed comparison and every profile value).

Every argument is checked before anything runs, so a refused command leaves its ``--out`` as it
was; the work itself is :mod:`eventpath.reproduce`'s, :mod:`eventpath.calibrate`'s and
:mod:`eventpath.report`'s.
"""

from __future__ import annotations

import json
import sys

from eventpath import outdir
from eventpath.cli.common import (EXIT_INTERRUPTED, UsageError, add_workers, check_duration, check_workers,
                                  command_line, seconds, seed_list)


def add_reproduce(sub) -> None:
    rp = sub.add_parser("reproduce", help="reproduce a seed experiment (published values beside ours)")
    rp.add_argument("id", nargs="?", help="experiment ID (see --list), or 'all'")
    rp.add_argument("--list", action="store_true", help="list the experiments")
    rp.add_argument("--out", help="output directory (ID.json, ID.png)")
    rp.add_argument("--duration", type=seconds, help="override each run's measured seconds")
    rp.add_argument("--seeds", type=int, help="seeds per row: each row is their mean, with its spread "
                                              "(default: each experiment's own)")
    rp.add_argument("--converge", action="store_true",
                    help="also run twice the seeds and twice each run's length, and mark each row converged "
                         "(both moved it by under a tenth of its tolerance) or not; 4x the runs")
    add_workers(rp, "experiments run at once in separate processes (default: all cores)")
    rp.set_defaults(fn=cmd_reproduce)


def add_sensitivity(sub) -> None:
    se = sub.add_parser("sensitivity", help="which profile values move each reproduction row; each prediction "
                                            "miss parametric or structural")
    se.add_argument("id", help="experiment ID (see reproduce --list), or 'all'")
    se.add_argument("--out", required=True, help="output directory (ID.sensitivity.json, ID.tornado.png; a "
                                                 "reproduce ID.json there gains each miss's class)")
    se.add_argument("--duration", type=seconds, help="each run's measured seconds (default: the experiment's own)")
    se.add_argument("--seeds", type=int, default=1, help="seeds per evaluation (default 1)")
    se.add_argument("--keep", action="store_true",
                    help="also store the verdicts with the code (python/eventpath/reproduce/classes/ID.json), "
                         "where reproduce applies them to rows that still miss the same way")
    se.add_argument("--focus", type=int, metavar="N",
                    help="detail only the members of the N groups that move each miss most (default: of every group "
                         "that moves any row); for experiments whose every group moves some row")
    add_workers(se)
    se.set_defaults(fn=cmd_sensitivity)


def add_calibrate(sub) -> None:
    c = sub.add_parser("calibrate", help="fit a profile's free parameters to its calibration targets")
    c.add_argument("profile", help="built-in profile (es2, elvis, did)")
    c.add_argument("--out", required=True, help="output directory (PROFILE.toml, report.json, report.png, evals.jsonl)")
    c.add_argument("--budget", type=int, default=60, help="simulator evaluations of the optimizer (default 60)")
    add_workers(c)
    c.add_argument("--resume", action="store_true", help="continue the calibration in --out")
    c.add_argument("--seeds", help="seeds averaged per evaluation (default 1,2)")
    c.add_argument("--duration", type=seconds, default=0.3,
                   help="simulated seconds per run while fitting (default 0.3; before/after use each experiment's own)")
    c.add_argument("--targets", help="calibration targets file (default: the profile's built-in one)")
    c.add_argument("--apply", action="store_true", help="write the fitted profile over the built-in one (source checkout)")
    c.set_defaults(fn=cmd_calibrate)


def add_report(sub) -> None:
    rep = sub.add_parser("report", help="one static HTML site: scorecard, every reproduction's figure, the head "
                         "to head, the testbed comparison and every profile value")
    rep.add_argument("--out", required=True, help="output directory (index.html and the other pages)")
    rep.add_argument("--quick", action="store_true",
                     help="shorten every run and the head to head (docs/report.md): a smoke test of the site, "
                          "not results")
    rep.add_argument("--no-kvm", action="store_true", help="no testbed comparison even where /dev/kvm is usable")
    rep.add_argument("--compare-dir", help="show this earlier `eventpath compare --out` instead of running one")
    rep.add_argument("--advise-dir", help="show this earlier `eventpath advise --out` instead of running one on "
                                          "examples/advise-cloud.toml")
    rep.add_argument("--reproduce-dir", help="show this earlier `eventpath reproduce all --out` instead of running it")
    rep.add_argument("--kvm-dir", help="show this earlier `eventpath kvm compare --out` instead of running it")
    add_workers(rep)
    rep.set_defaults(fn=cmd_report)


def cmd_reproduce(a) -> int:
    from eventpath import reproduce

    if a.list:
        if a.id is not None and a.id not in reproduce.EXPERIMENTS:
            raise UsageError(f"reproduce --list {a.id}: unknown experiment; known: {', '.join(reproduce.EXPERIMENTS)}")
        for e in reproduce.EXPERIMENTS.values():
            if a.id is None or e.id == a.id:
                print(f"{e.id:22s} {e.title}  [{e.source}]")
        return 0
    if not a.id:
        raise UsageError("reproduce: give an experiment ID or --list")
    if a.out is None:
        raise UsageError("reproduce: --out DIR is required")
    ids = list(reproduce.EXPERIMENTS) if a.id == "all" else [a.id]
    for i in ids:
        if i not in reproduce.EXPERIMENTS:
            raise UsageError(f"reproduce: unknown experiment {i!r}; known: {', '.join(reproduce.EXPERIMENTS)} (or 'all')")
    check_workers(a)
    check_duration(a.duration)
    if a.seeds is not None and not 1 <= a.seeds <= 64:
        raise UsageError(f"--seeds {a.seeds}: expected 1..=64 seeds per row")
    out = outdir.writable(a.out)
    docs = []
    for i, doc in zip(ids, reproduce.run_many(ids, out, duration=a.duration, workers=a.workers,
                                              scheduler=a.scheduler, seeds=a.seeds, converge=a.converge)):
        reproduce.print_table(doc)
        print(f"wrote {out}/{i}.json and {out}/{i}.png")
        docs.append(doc)
    if len(docs) > 1:
        cards = reproduce.scorecard(docs)
        reproduce.print_scorecard(cards)
        v2 = reproduce.scorecard_v2(docs)
        reproduce.print_scorecard_v2(v2)
        (out / "scorecard.json").write_text(json.dumps({"papers": v2, "profiles": cards}, indent=2) + "\n")
    return 0


def cmd_sensitivity(a) -> int:
    """``eventpath sensitivity EXPERIMENT|all``: what moves each row; each miss (prediction or
    calibration) parametric or structural (:mod:`eventpath.sensitivity`)."""
    import time

    from eventpath import reproduce, sensitivity

    ids = [i for i, e in reproduce.EXPERIMENTS.items() if e.profile] if a.id == "all" else [a.id]
    for i in ids:
        if i not in reproduce.EXPERIMENTS:
            raise UsageError(f"sensitivity: unknown experiment {i!r}; known: {', '.join(reproduce.EXPERIMENTS)} (or 'all')")
    if a.seeds < 1:
        raise UsageError(f"--seeds {a.seeds}: expected at least 1")
    if a.focus is not None and not 1 <= a.focus <= 100:
        raise UsageError(f"--focus {a.focus}: not allowed; expected 1..=100 groups per miss")
    check_workers(a)
    check_duration(a.duration)
    out = outdir.writable(a.out)
    t0 = time.monotonic()
    for i in ids:
        doc = sensitivity.analyse(i, a.duration, a.seeds, a.workers, a.scheduler,
                                  progress=lambda s: print(s, file=sys.stderr), focus=a.focus)
        sensitivity.write(doc, out)
        if a.keep:
            from eventpath import version
            from eventpath.reproduce import classes as kept

            print(f"{i}: verdicts kept in {kept.keep(doc, version.provenance())}")
        classes = [d for d in doc["rows"] if "miss_class" in d]
        tally = []
        for role in ("prediction", "calibration"):
            of = [d for d in classes if (d["role"] == "calibration") == (role == "calibration")]
            n = {c: sum(d["miss_class"] == c for d in of) for c in ("parametric", "structural", "unclassified")}
            tally.append(f"{len(of)} {role} misses: {n['parametric']} parametric, {n['structural']} structural, "
                         f"{n['unclassified']} unclassified")
        print(f"{i}: {doc['parameters']} ranged parameters, {doc['screened_alone']} screened alone; "
              f"{'; '.join(tally)} -> {out}/{i}.sensitivity.json, {i}.tornado.png")
        for d in classes:
            role = " (calibration)" if d["role"] == "calibration" else ""
            print(f"  {d['config']} / {d['metric']}{role}: {d['miss_class']}: {d['evidence']}")
    print(f"sensitivity: {len(ids)} experiment(s) in {time.monotonic() - t0:.0f} s")
    return 0


def cmd_calibrate(a) -> int:
    from eventpath import calibrate

    if a.budget < 1:
        raise UsageError(f"--budget {a.budget}: not allowed; expected at least 1 evaluation")
    check_workers(a)
    seeds = seed_list(a.seeds) if a.seeds is not None else [1, 2]
    check_duration(a.duration)  # before anything is written: a failed start leaves no calibration
    out = outdir.writable(a.out)
    command = " ".join(["eventpath calibrate", a.profile, "--budget", str(a.budget), "--seeds",
                        ",".join(map(str, seeds)), "--duration", f"{a.duration:g}"]
                       + (["--targets", a.targets] if a.targets else []))
    try:
        rep = calibrate.calibrate(a.profile, out, budget=a.budget, workers=a.workers, resume=a.resume, seeds=seeds,
                                  duration=a.duration, targets=a.targets, command=command,
                                  scheduler=a.scheduler)
    except KeyboardInterrupt:
        print(f"eventpath: interrupted; finished evaluations are kept in {out}/evals.jsonl: "
              "run the same command with --resume to continue", file=sys.stderr)
        return EXIT_INTERRUPTED
    print(f"calibrate {a.profile}: objective {rep['objective_before']:.3g} -> {rep['objective_after']:.3g}; "
          f"targets within tolerance {rep['targets_ok_before']} -> {rep['targets_ok_after']} of {len(rep['targets'])} "
          f"({rep['evaluations']} evaluations)")
    for p in rep["parameters"]:
        flags = ("" if p["constrained"] else "  UNCONSTRAINED") + ("  at a bound" if p["at_bound"] else "")
        print(f"  {p['key']:28s} prior {p['prior']:<10.4g} fitted {p['fitted']:<10.4g} "
              f"range {p['range'][0]:g}..{p['range'][1]:g}{flags}")
    for t in rep["targets"]:
        if t["fragile"]:
            print(f"  fragile: {t['experiment']}:{t['config']}/{t['metric']} leaves its tolerance under a ±10 % move")
    print(f"wrote {out}/{a.profile}.toml, {out}/report.json, {out}/report.png")
    if a.apply:
        dest = calibrate.apply(a.profile, out)
        print(f"applied: {dest} (rebuild with `make install` so the built-in profile carries it)")
    return 0


def cmd_report(a) -> int:
    import shlex

    from eventpath import report
    from eventpath.report import gather

    check_workers(a)
    # Every input is checked before anything runs: a refused report leaves nothing behind.
    out = report.OUT.check(a.out)
    given = {"compare_dir": gather.check_dir(a.compare_dir, "--compare-dir", "compare.json"),
             "reproduce_dir": gather.check_dir(a.reproduce_dir, "--reproduce-dir", "*.json"),
             "kvm_dir": gather.check_dir(a.kvm_dir, "--kvm-dir", "**/compare.json"),
             "advise_dir": gather.check_dir(a.advise_dir, "--advise-dir", "advise.json")}
    report.build(out, quick=a.quick, no_kvm=a.no_kvm, workers=a.workers, scheduler=a.scheduler, **given,
                 command="eventpath report " + shlex.join(command_line(a, [])[1:]),
                 say=lambda s: print(s, file=sys.stderr))
    print(f"open {out.resolve()}/index.html")
    return 0
