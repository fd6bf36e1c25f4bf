"""What a report shows, gathered into its directory: the reproductions (run now, or read from an
earlier ``reproduce all --out``), the head-to-head (an earlier ``compare --out``, or a run now),
the testbed comparison where ``/dev/kvm`` is usable, and the profiles.

Everything shown is read from what those commands wrote, in the same files (``ID.json``,
``compare.json``, ``kvm/EXP/compare.json``): the report computes nothing of its own, it only
displays. ``--quick`` shortens every run so that a whole site is built in well under a minute
(for its test); the pages say so.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from eventpath._eventpath import InputError

#: --quick: one reproduction of each figure form and paper (bars by exit reason, grouped bars,
#: lines against VMs and against the packet rate), each run shortened to QUICK_DURATION_S.
QUICK_EXPERIMENTS = ("es2-fig4", "es2-fig7a", "elvis-baseline-1vm", "elvis-fig5", "did-fig4", "did-fig6")
QUICK_DURATION_S = 0.005
#: --quick's head-to-head: two workloads, two families varied, one seed (~3 s on two cores).
QUICK_COMPARE = {"workloads": ["tcp_rr", "tcp_stream"], "vary": {"delivery": None, "handling": ["vhost", "elvis",
                                                                                                  "pmd/busy"]},
                 "seeds": [1]}
#: The full head-to-head: the README's (every family, three seeds; ~45 s on two cores).
FULL_COMPARE = {"workloads": ["tcp_stream", "tcp_receive", "memcached", "tcp_rr"], "vary": {}, "seeds": [1, 2, 3]}
#: --quick's testbed comparison: the cheapest experiment once, its twin on es2's profile (no probe).
QUICK_KVM = {"experiments": ["exp4"], "repeats": 1}

_COMPARE_FILES = ("compare.json", "ranked.csv", "cells.csv", "pareto.png")


@dataclass
class Gathered:
    """What the pages show; the folders are inside the site."""

    docs: list[dict] = field(default_factory=list)       # reproductions, ID.json's contract
    missing: list[str] = field(default_factory=list)     # experiments a given directory lacks
    compare: dict | None = None                          # compare.json
    advise: dict | None = None                           # advise.json
    kvm: list[dict] = field(default_factory=list)        # each experiment's kvm compare.json
    kvm_note: str = ""                                   # why there is no testbed page, or how it was made
    notes: list[str] = field(default_factory=list)       # how each part was made


def check_dir(p: str | None, flag: str, needs: str) -> Path | None:
    """An input directory that must hold ``needs`` (a file name or glob)."""
    if p is None:
        return None
    d = Path(p)
    if not d.is_dir():
        raise InputError(f"{flag} {p}: {'is a file, not' if d.exists() else 'no such'} directory; give the --out "
                         f"directory of an earlier run")
    if not any(d.glob(needs)):
        raise InputError(f"{flag} {p}: holds no {needs}; give the --out directory of an earlier run")
    return d


def reproductions(site: Path, quick: bool, source: Path | None, workers: int | None, say: Callable,
                  scheduler: str | None = None) -> Gathered:
    from eventpath import reproduce
    from eventpath.reproduce import figure

    g = Gathered()
    dest = site / "reproduce"
    dest.mkdir()
    if source is None:
        duration = QUICK_DURATION_S if quick else None
        ids = [i for i in reproduce.EXPERIMENTS if not quick or i in QUICK_EXPERIMENTS]
        g.missing = [i for i in reproduce.EXPERIMENTS if i not in ids]
        say(f"report: reproduce {'all' if not quick else ' '.join(ids)}"
            f"{f' (--quick: {duration:g} s per run)' if quick else ''} ...")
        g.docs = list(reproduce.run_many(ids, dest, duration=duration, workers=workers,
                                          scheduler=scheduler))
        g.notes.append("reproductions: `eventpath reproduce all` at each experiment's own run length" if not quick else
                       f"reproductions (--quick): {', '.join(ids)}, every run shortened to {duration:g} s: the numbers "
                       "are a smoke test of the site, not results")
    else:
        for i in reproduce.EXPERIMENTS:
            f = source / f"{i}.json"
            if not f.exists():
                g.missing.append(i)
                continue
            doc = json.loads(f.read_text())
            (dest / f.name).write_text(json.dumps(doc, indent=2) + "\n")
            figure.draw(doc, dest / f"{i}.png")  # drawn anew: the figure of this eventpath
            g.docs.append(doc)
        if not g.docs:
            raise InputError(f"--reproduce-dir {source}: holds no experiment's ID.json")
        g.notes.append(f"reproductions: read from {source} (an earlier `eventpath reproduce`), figures drawn anew")
    (dest / "scorecard.json").write_text(json.dumps(reproduce.scorecard(g.docs), indent=2) + "\n")
    return g


def head_to_head(site: Path, g: Gathered, quick: bool, source: Path | None, workers: int | None,
                 say: Callable, scheduler: str | None = None) -> None:
    dest = site / "compare"
    if source is not None:
        dest.mkdir()
        for f in _COMPARE_FILES:
            if (source / f).exists():
                shutil.copy2(source / f, dest / f)
        g.notes.append(f"head to head: read from {source} (an earlier `eventpath compare`)")
    else:
        from eventpath import compare
        from eventpath.compare import workloads

        spec = QUICK_COMPARE if quick else FULL_COMPARE
        inputs = workloads.named("es2", spec["workloads"], compare.DURATION_S, compare.WARMUP_S)
        vary = " ".join(f"--vary {k}" + (f"={','.join(v)}" if v else "") for k, v in spec["vary"].items())
        cmd = (f"eventpath compare --profile es2 --workloads {','.join(spec['workloads'])} "
               f"--seeds {','.join(map(str, spec['seeds']))} {vary}".strip())
        say(f"report: {cmd} ...")
        compare.compare(inputs, dest, seeds=spec["seeds"], workers=workers, vary=spec["vary"], command=cmd,
                        say=lambda s: None, scheduler=scheduler)
        g.notes.append(f"head to head: `{cmd}`" + (" (--quick: a small matrix)" if quick else ""))
    g.compare = json.loads((dest / "compare.json").read_text())


#: The scenario the report's advise page answers when no --advise-dir is given: the README's
#: platform engineer's host (examples/ beside the package in a checkout).
ADVISE_SCENARIO = Path(__file__).resolve().parents[3] / "examples" / "advise-cloud.toml"
#: --quick's advise: the page's plumbing, not an answer.
QUICK_ADVISE = {"seeds": 2, "max_seeds": 2, "duration": 0.01}


def advice(site: Path, g: Gathered, quick: bool, source: Path | None, workers: int | None, say: Callable,
           scheduler: str | None = None) -> None:
    """Which switch pays (``eventpath advise``): from ``source``, or run now on
    :data:`ADVISE_SCENARIO` where the checkout has it."""
    dest = site / "advise"
    if source is not None:
        dest.mkdir()
        for f in ("advise.json", "advise.csv"):
            if (source / f).exists():
                shutil.copy2(source / f, dest / f)
        g.notes.append(f"advise: read from {source} (an earlier `eventpath advise`)")
    elif not ADVISE_SCENARIO.exists():
        g.notes.append(f"advise: not run ({ADVISE_SCENARIO} is not here: give --advise-dir)")
        return
    else:
        from eventpath import advise as adv
        from eventpath.executor import start
        from eventpath.tables import write_csv

        kw = QUICK_ADVISE if quick else {}
        cmd = f"eventpath advise {ADVISE_SCENARIO.name}" + "".join(
            f" --{k.replace('_', '-')} {v}" for k, v in kw.items())
        say(f"report: {cmd} ...")
        with start(scheduler, workers) as ex:
            a = adv.advise(str(ADVISE_SCENARIO), ex=ex, **kw)
        dest.mkdir()
        write_csv(dest / "advise.csv", adv.table(a))
        (dest / "advise.json").write_text(json.dumps({
            "scenario": a.scenario, "profile": a.profile, "stock": a.stock, "seeds": a.seeds, "duration": a.duration,
            "wall_s": a.wall_s, "runs": a.runs, "budget_spent": a.budget_spent, "answer": adv.answer(a),
            "rows": adv.table(a)}, indent=2) + "\n")
        g.notes.append(f"advise: `{cmd}`" + (" (--quick: 2 seeds of 10 ms)" if quick else ""))
    g.advise = json.loads((dest / "advise.json").read_text())


def testbed(site: Path, g: Gathered, quick: bool, no_kvm: bool, source: Path | None, say: Callable) -> None:
    """The testbed beside its twins: from ``source``, or run now where /dev/kvm is usable."""
    from eventpath import _eventpath, kvm_compare

    dest = site / "kvm"
    if source is not None:
        found = sorted(source.glob("*/compare.json")) or sorted(source.glob("compare.json"))
        for f in found:
            d = dest / (f.parent.name if f.parent != source else "exp")
            d.mkdir(parents=True)
            shutil.copy2(f, d / "compare.json")
            doc = json.loads(f.read_text())
            kvm_compare.figure(doc, d / "compare.png")
            g.kvm.append(doc)
        g.kvm_note = f"read from {source} (an earlier `eventpath kvm compare`)"
        return
    ok, why = _eventpath.kvm_available()
    if no_kvm or not ok:
        g.kvm_note = "not run: --no-kvm" if no_kvm else f"not run: {why}"
        return
    if quick:
        profile = kvm_compare.ROOT / "profiles" / "es2.toml"
        exps, repeats = QUICK_KVM["experiments"], QUICK_KVM["repeats"]
        g.kvm_note = (f"--quick: {', '.join(exps)} once, its twin on es2's profile instead of this host's probe: "
                      "a smoke test of the page, not a measurement")
    else:
        say("report: eventpath kvm probe (5 trials) ...")
        _eventpath.kvm_probe(str(dest / "probe"), False)
        profile = dest / "probe" / "profile.toml"
        exps, repeats = list(kvm_compare.EXPERIMENTS), 3
        g.kvm_note = "`eventpath kvm compare all` on this host's probe (5 trials), 3 repeats per point"
    for e in exps:
        say(f"report: kvm compare {e} ...")
        g.kvm.append(kvm_compare.compare(e, dest / e, profile.resolve(), repeats=repeats))


def profiles() -> dict[str, dict]:
    """Every built-in profile as the simulator reads it (every value with its unit and source)."""
    from eventpath import api

    return {name: api.profile(name) for name, _ in api.profiles()}
