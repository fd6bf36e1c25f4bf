"""``eventpath kvm``: the real KVM testbed (docs/kvm.md) — ``probe`` measures this host's
primitive costs into a profile, ``compare`` runs a testbed experiment beside its simulator twin,
``run`` runs one testbed scenario.

The probe's and the experiments' threads are shielded from other processes where that is
permitted (:mod:`eventpath.kvm_noise`), and the machine's noise is written beside every
measurement, because the testbed's numbers are only as good as the machine was quiet. A probe
whose outlier rule refused a parameter exits with :data:`EXIT_PROBE_REFUSED` unless told not to.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from eventpath import outdir
from eventpath.cli import run_summary
from eventpath.cli.common import EXIT_PROBE_REFUSED, Parser, UsageError, seconds


def add_kvm(sub) -> None:
    k = sub.add_parser("kvm", help="the real KVM testbed")
    ks = k.add_subparsers(dest="kvm_cmd", required=True, parser_class=Parser)
    kp = ks.add_parser("probe", help="measure this host's primitive costs; write probe.json, profile.toml and overlay.toml")
    kp.add_argument("--out", required=True)
    kp.add_argument("--quick", action="store_true", help="shorter runs, 3 trials instead of 5")
    kp.add_argument("--json", action="store_true", help="print probe.json")
    kp.add_argument("--allow-outliers", action="store_true",
                    help="exit 0 even if the outlier rule refused a parameter (it is still not written into "
                         "profile.toml); without it such a run exits 3")
    kc = ks.add_parser("compare", help="run a testbed experiment and its simulator twin; compare.json + compare.png")
    kc.add_argument("experiment", help="exp1 .. exp5, or all (then a scorecard)")
    kc.add_argument("--out", required=True)
    kc.add_argument("--profile", help="a profile.toml from eventpath kvm probe (default: probe now, 5 trials)")
    kc.add_argument("--repeats", type=int, default=3, help="testbed runs per point (default 3)")
    kc.add_argument("--duration", type=seconds, help="seconds per run (default: each experiment's own)")
    kc.add_argument("--verbose", action="store_true", help="print each run as it finishes")
    kr = ks.add_parser("run", help="run a testbed scenario")
    kr.add_argument("scenario")
    kr.add_argument("--out", required=True)
    k.set_defaults(fn=cmd_kvm)


def cmd_kvm(a) -> int:
    from eventpath import _eventpath

    if a.kvm_cmd == "compare":
        return _kvm_compare(a)
    out = outdir.writable(a.out)
    if a.kvm_cmd == "probe":
        text, noise = _probe_shielded(out, a.quick)
        print(text if a.json else f"wrote {out}/probe.json, {out}/profile.toml, {out}/overlay.toml (the measured costs over the modern profile) and {out}/noise.json")
        print(f"noise: {_noise_line(noise)}", file=sys.stderr)
        refused = json.loads(text).get("refused") or {}
        for key, r in refused.items():
            where = "profile.toml keeps es2's value" if r.get("profile_key") else "not exported"
            print(f"warning: refused {key}: {r['reason']} ({where}; see probe.json refused)", file=sys.stderr)
        if refused and not a.allow_outliers:
            return EXIT_PROBE_REFUSED
    else:
        text = _eventpath.kvm_run(a.scenario, str(out))
        run_summary.print_summary(json.loads(text), *run_summary.scenario_facts(a.scenario))
        print(f"wrote {out}/summary.json")
    return 0


def _probe_shielded(out: Path, quick: bool) -> tuple[str, dict]:
    """``kvm probe`` with its threads shielded from other processes (``kvm_noise.shielded``),
    and the machine's noise beside it in ``out/noise.json``: others' demand before, what they
    took during, steal, load average."""
    from eventpath import _eventpath, kvm_noise

    quiet = kvm_noise.quiet_load()
    before = kvm_noise.sample()
    with kvm_noise.shielded() as shielded:
        text = _eventpath.kvm_probe(str(out), quick)
    noise = {"quiet_cpus": quiet["other_cpus"], **kvm_noise.between(before, kvm_noise.sample()),
             "shield": f"nice {kvm_noise.SHIELD_NICE}" if shielded else "none (no CAP_SYS_NICE)"}
    (out / "noise.json").write_text(json.dumps(noise, indent=2) + "\n")
    return text, noise


def _noise_line(n: dict) -> str:
    f = lambda x, fmt: "?" if x is None else format(x, fmt)  # noqa: E731
    return (f"other processes wanted {f(n['quiet_cpus'], '.2f')} CPUs before and took {f(n['other_cpus'], '.2f')} "
            f"during; steal {f(n['steal_pct'], '.1f')} %; load average {f(n['loadavg_1m'], '.2f')}; "
            f"probe threads {n['shield']}")


def _kvm_compare(a) -> int:
    """Testbed experiments beside their simulator twins (docs/kvm.md, "Simulator twins")."""
    from eventpath import _eventpath, kvm_compare

    ok, why = _eventpath.kvm_available()
    if not ok:
        raise UsageError(f"kvm compare needs a usable /dev/kvm: {why}")
    ids = list(kvm_compare.EXPERIMENTS) if a.experiment == "all" else [a.experiment]
    if ids[0] not in kvm_compare.EXPERIMENTS:
        raise UsageError(f"unknown experiment {a.experiment!r}; expected one of {', '.join(kvm_compare.EXPERIMENTS)} or all")
    if a.repeats < 1:
        raise UsageError(f"--repeats {a.repeats}: expected at least 1")
    out = outdir.writable(a.out)
    profile = Path(a.profile) if a.profile else None
    if profile is None:
        print("probing this host (eventpath kvm probe: 5 trials) ...", file=sys.stderr)
        text, noise = _probe_shielded(out / "probe", False)
        print(f"probe noise: {_noise_line(noise)}", file=sys.stderr)
        for key, r in (json.loads(text).get("refused") or {}).items():
            print(f"warning: refused {key}: {r['reason']} (the profile keeps es2's value)", file=sys.stderr)
        profile = out / "probe" / "profile.toml"
    elif not profile.is_file():
        raise UsageError(f"--profile {a.profile}: no such file; give a profile.toml written by eventpath kvm probe")
    docs = []
    for e in ids:
        d = out / e if len(ids) > 1 else out
        doc = kvm_compare.compare(e, d, profile.resolve(), repeats=a.repeats, duration=a.duration,
                                  progress=lambda s: print(s, file=sys.stderr) if a.verbose else None)
        docs.append(doc)
        print(f"{e}: {doc['within_tolerance']} of {doc['judged']} rows within tolerance -> {d}/compare.json, compare.png")
    if len(docs) > 1:
        card = kvm_compare.scorecard(docs)
        (out / "scorecard.txt").write_text(card + "\n")
        print(card)
    return 0
