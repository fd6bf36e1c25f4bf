"""``eventpath check-host``: a scenario's exits per reason and per second held against a real
host's (``perf kvm stat report`` or ``kvm_stat -1``) — the first step of fitting a scenario to
a production host (issue 50 item 4). The reading and grouping are :mod:`eventpath.perf_kvm_stat`.
"""

from __future__ import annotations

import json
from pathlib import Path

from eventpath.cli.common import UsageError, seconds, seed


def add_check_host(sub) -> None:
    c = sub.add_parser("check-host", help="hold a scenario's exits per reason against a host's perf kvm stat "
                                          "report or kvm_stat counters")
    c.add_argument("scenario", help="scenario TOML file describing the host's VMs and load")
    c.add_argument("--perf-kvm-stat", metavar="FILE", help="the text of `perf kvm stat report` (after `perf kvm stat "
                                                           "record -a sleep S`)")
    c.add_argument("--seconds", type=seconds, help="with --perf-kvm-stat: how long the recording ran (S)")
    c.add_argument("--kvm-stat", metavar="FILE", help="the text of `kvm_stat -1` (one second's kvm_exit(REASON) counts)")
    c.add_argument("--vm", action="append", metavar="NAME",
                   help="compare only this scenario VM (once per VM; default: all, as a host-wide recording)")
    c.add_argument("--seed", type=seed, help="override the scenario's seed")
    c.add_argument("--duration", type=seconds, help="override the measured simulated seconds")
    c.add_argument("--out", help="also write check-host.csv and check-host.json here")
    c.set_defaults(fn=cmd_check_host)


def _host(a):
    from eventpath import perf_kvm_stat as pks
    from eventpath._eventpath import InputError

    if (a.perf_kvm_stat is None) == (a.kvm_stat is None):
        raise UsageError("check-host: give one of --perf-kvm-stat FILE (with --seconds) or --kvm-stat FILE")
    if a.perf_kvm_stat is not None and a.seconds is None:
        raise UsageError("check-host: --perf-kvm-stat needs --seconds, how long `perf kvm stat record` ran "
                         "(the report does not say)")
    if a.kvm_stat is not None and a.seconds is not None:
        raise UsageError("check-host: --seconds is for --perf-kvm-stat; kvm_stat -1 counts one second")
    path = Path(a.perf_kvm_stat or a.kvm_stat)
    try:
        text = path.read_text(errors="replace")
    except OSError as e:
        raise InputError(f"{path}: cannot read it ({e.strerror or e})") from None
    if a.perf_kvm_stat is not None:
        return pks.parse_perf_kvm_stat(text, a.seconds, str(path))
    return pks.parse_kvm_stat(text, str(path))


def _model(a):
    """The scenario's exits/s by reason and its exit statistics, summed over the VMs compared."""
    from eventpath import api, summary
    from eventpath._eventpath import InputError

    res = api.run(a.scenario, seed=a.seed, duration=a.duration)
    vms = summary.vms(res.summary)
    names = [summary.name(v) for v in vms]
    chosen = a.vm or names
    unknown = [n for n in chosen if n not in names]
    if unknown:
        raise InputError(f"--vm {unknown[0]}: no such VM in {a.scenario}; its VMs are {', '.join(map(str, names))}")
    per_s = {r: sum(summary.exits_per_s(v, r) or 0.0 for v in vms if summary.name(v) in chosen)
             for r in api.EXIT_REASONS}
    stats = [s for s in res.exit_stats if s["vm"] in chosen]
    return res, chosen, per_s, stats


def _fmt(x: float | None, unit: str = "") -> str:
    if x is None:
        return "-"
    return f"{x:,.0f}{unit}" if abs(x) >= 100 else f"{x:.3g}{unit}"


def cmd_check_host(a) -> int:
    from eventpath import perf_kvm_stat as pks, summary
    from eventpath.tables import write_csv

    if a.out is not None:
        from eventpath import outdir

        out = outdir.writable(a.out)
    host = _host(a)  # read before the run: a bad file costs no simulation
    res, chosen, per_s, stats = _model(a)
    rows = pks.compare(host, *pks.model_groups(per_s, stats))
    secs = summary.sim_seconds(res.summary)
    print(f"check-host: {a.scenario} (seed {summary.seed(res.summary)}, {secs:g} s simulated, "
          f"VMs {', '.join(map(str, chosen))}) against {host.source} ({host.seconds:g} s, {host.scope})")
    head = f"{'group':<48} {'host/s':>10} {'scenario/s':>11} {'host µs':>8} {'scen. µs':>8}  verdict"
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r.group.label:<48} {_fmt(r.host_per_s):>10} {_fmt(r.model_per_s):>11} {_fmt(r.host_avg_us):>8} "
              f"{_fmt(r.model_avg_us):>8}  {r.verdict}")
    differ = [r for r in rows if r.verdict.startswith("differs") or r.verdict.endswith("has none")]
    for r in differ:
        if r.group.caveat:
            print(f"  note ({r.group.key}): {r.group.caveat}")
    agree = sum(r.verdict == "agrees" for r in rows)
    small = sum(r.verdict == "both small" for r in rows)
    print(f"{agree} of {len(rows)} groups agree within ±25 %, {small} are under 1 % of the exits on both sides, "
          f"{len(differ)} differ: each names a rate or a cost to set in the scenario or its profile's overrides")
    if a.out is not None:
        table = [{"group": r.group.key, "label": r.group.label, "host_exits_per_s": r.host_per_s,
                  "scenario_exits_per_s": r.model_per_s, "host_avg_us": r.host_avg_us,
                  "scenario_avg_us": r.model_avg_us, "verdict": r.verdict,
                  "model_reasons": " ".join(r.group.model), "hardware_reasons": " ".join(r.group.hardware)}
                 for r in rows]
        write_csv(out / "check-host.csv", table)
        (out / "check-host.json").write_text(json.dumps({
            "scenario": str(a.scenario), "seed": summary.seed(res.summary), "sim_seconds": secs, "vms": chosen,
            "host": {"source": host.source, "seconds": host.seconds, "scope": host.scope,
                     "exits": host.count, "avg_us": host.avg_us},
            "groups": table}, indent=2) + "\n")
        print(f"wrote {out / 'check-host.csv'} and check-host.json")
    return 0
