"""The few lines ``eventpath run`` and ``eventpath kvm run`` print about a run: each VM's own
metric, its exits (by reason and, from ``perf kvm stat``'s table, by vCPU), EHT/TIG and
latency, host CPU by who burns it, and any stalled flow as the model bug it is.

The lines are read from the summary through :mod:`eventpath.summary` and follow
docs/summary.md's definitions, which are printed under the numbers that need them. A testbed's
summary has no seed, profile, event count or per-thread times (null): those parts are left out.
"""

from __future__ import annotations

import sys

from eventpath import summary
from eventpath.summary import GBPS_KINDS, PPS_KINDS

#: docs/summary.md's definitions, printed under the VMs that show them.
EHT_TIG = ("EHT: exit handling time (the direct cost of exits, in the host); TIG: time in guest mode; "
           "both % of measured time x vCPUs")
#: docs/summary.md's exit time, printed under the exit tables.
EXIT_TIME = ("exit time: the direct handling time of the exits in the hypervisor (perf kvm stat's Time); "
             "'% of exit time' is a reason's share of the VM's, 'in exits' a vCPU's share of measured time; "
             "kvm_exits.csv has every VM, vCPU and reason")


def _f(v, nd: int = 1) -> str:
    return "n/a" if v is None else f"{v:,.{nd}f}"


def scenario_facts(scenario) -> tuple[list[str | None], list[int]]:
    """The workload kind of each VM (None where it has none) and the dedicated I/O cores
    (``[host.io] cores``) of a scenario file; nothing where it cannot be read."""
    import tomllib

    try:
        with open(scenario, "rb") as f:
            sc = tomllib.load(f)
        kinds = [((vm.get("workload") or {}).get("kind") if isinstance(vm, dict) else None) for vm in sc.get("vm") or []]
        return kinds, summary.io_cores(sc)
    except (OSError, ValueError, TypeError, AttributeError):
        return [], []


def vm_metric(vm: dict, kind: str | None) -> str:
    """A VM's own metric: pkt/s for UDP streams, Gbit/s for TCP streams, else ops/s where the
    workload counts operations (memcached, tcp_rr, http); webbench's requests/min and failed
    clients, httperf's reply rate and errors, SPECweb's finished requests and response times, a
    CPU job's completion time."""
    # webbench and the CPU job report their papers' own metrics (docs/summary.md).
    if (w := summary.web(vm)) is not None:
        return f"{_f(w.get('requests_per_min'), 0)} requests/min, {w['failed_clients']} of {w['clients']} clients failed"
    if (h := summary.httperf(vm)) is not None:
        return f"{_f(h.get('reply_rate_per_s'), 0)} replies/s of {_f(h['rate_rps'], 0)} offered, {h['errors']} errors"
    if (w := summary.specweb(vm)) is not None:
        return (f"{w['finished_requests']} requests finished ({_f(w.get('requests_per_s'), 1)}/s), "
                f"response time mean {_f(w.get('response_time_mean_ms'), 2)} ms, p95 {_f(w.get('response_time_p95_ms'), 2)} ms")
    if (b := summary.block(vm)) is not None:
        return (f"{_f(summary.ops_per_s(vm), 0)} IOPS ({_f(b.get('read_iops'), 0)} reads/s, {_f(b.get('write_iops'), 0)} writes/s, "
                f"{_f(b.get('bandwidth_mb_s'), 1)} MB/s) on {b['queues']} {'NVMe queue pair' if b.get('device') == 'nvme' else 'request queue'}{'s' if b['queues'] > 1 else ''}")
    if (j := summary.cpu_job(vm)) is not None:
        if j["finished"]:
            return f"CPU job done in {_f(j['completion_ms'], 3)} ms ({_f(j['work_ms'], 3)} ms of work)"
        return f"CPU job not finished: {_f(j['done_pct'], 1)} % of {_f(j['work_ms'], 3)} ms of work done"
    gbps, pps, ops = summary.gbps(vm), summary.pps(vm), summary.ops_per_s(vm)
    if kind in PPS_KINDS:
        return f"{_f(pps, 0)} pkt/s"
    if kind in GBPS_KINDS:
        return f"{_f(gbps, 3)} Gbit/s"
    if ops is not None:
        return f"{_f(ops, 0)} ops/s"
    if gbps is not None:
        return f"{_f(gbps, 3)} Gbit/s"
    if pps is not None:
        return f"{_f(pps, 0)} pkt/s"
    return "no throughput (no network workload)"


def cpu_line(s: dict, io_cores: list[int]) -> str | None:
    """Host CPU in cores (a pCPU busy the whole window is 1.0) by who burns it; None where the
    summary lacks the per-thread times (a testbed's)."""
    try:
        c = summary.cpu_split(s, io_cores)
    except (KeyError, TypeError, ValueError):
        return None
    return (f"host CPU {c['cpu_host']:.2f} cores: vCPUs {c['cpu_vcpus']:.2f} (+ halt polling {c['cpu_halt_poll']:.2f}), "
            f"back-end threads {c['cpu_backend']:.2f}, I/O cores {c['cpu_io_cores']:.2f}, other {c['cpu_other']:.2f}")


def exit_lines(vm: str, rows: list[dict]) -> list[str]:
    """``perf kvm stat``-style lines of one VM: exit time by reason, then by vCPU; ``rows``:
    :meth:`eventpath.Result.kvm_exit_rows`."""
    mine = [r for r in rows if r["vm"] == vm]
    if not mine:
        return []
    by_reason: dict[str, list[float]] = {}
    for r in mine:
        n, t = by_reason.get(r["reason"], [0, 0.0])
        by_reason[r["reason"]] = [n + r["exits"], t + r["time_us"]]
    total = sum(t for _, t in by_reason.values())
    parts = [f"{k} {100 * t / total:.1f} % (avg {t / n:.2f} us)" if total else f"{k} 0 %"
             for k, (n, t) in sorted(by_reason.items(), key=lambda kv: -kv[1][1])]
    vcpus: dict[int, list[float]] = {}
    for r in mine:
        e, p = vcpus.get(r["vcpu"], [0.0, 0.0])
        vcpus[r["vcpu"]] = [e + (r["exits_per_s"] or 0.0), p + (r["vcpu_time_pct"] or 0.0)]
    per = [f"vCPU{v} {e:,.0f}/s, {p:.1f} % in exits" for v, (e, p) in sorted(vcpus.items())]
    return [f"    exit time by reason: {', '.join(parts)}", f"    exits by vCPU: {'; '.join(per)}"]


def print_summary(s: dict, kinds: list[str | None] | None = None, io_cores: list[int] | None = None,
                  exit_rows: list[dict] | None = None) -> None:
    """A few lines per run. ``kinds``: each VM's workload kind (picks its own metric);
    ``io_cores``: the dedicated I/O cores, which the host CPU line counts apart; ``exit_rows``:
    :meth:`eventpath.Result.kvm_exit_rows` (the exit time by reason and vCPU lines; none for a
    testbed's summary)."""
    prof, seed, events = summary.profile(s), summary.seed(s), summary.events(s)
    what = ", ".join(x for x in (prof and f"profile {prof}", seed is not None and f"seed {seed}") if x)
    print(f"{summary.scenario(s)}: {summary.sim_seconds(s):.3g} s {'simulated' if prof else 'measured'}"
          f"{f' ({what})' if what else ''} in {summary.wall_seconds(s):.2f} s wall"
          f"{f', {events:,} events' if events is not None else ''}")
    kinds = kinds or []
    for i, vm in enumerate(summary.vms(s)):
        kind = kinds[i] if i < len(kinds) else None
        ex = {k: v for k, v in summary.exits_by_reason(vm).items() if v}
        parts = ", ".join(f"{k} {v:,.0f}" for k, v in sorted(ex.items(), key=lambda kv: -kv[1]))
        name = summary.name(vm)
        print(f"  {name}{f' ({kind})' if kind else ''}: {vm_metric(vm, kind)}")
        print(f"    exits/s {_f(summary.exits_total_per_s(vm), 0)} ({parts or 'none'})")
        for line in exit_lines(name, exit_rows or []):
            print(line)
        print(f"    EHT {_f(summary.eht_pct(vm))} %, TIG {_f(summary.tig_pct(vm))} %, "
              f"kicks/s {_f(summary.kicks_per_s(vm), 0)}, interrupts/s {_f(summary.interrupts_per_s(vm), 0)}, "
              f"latency p50 {_f(summary.latency_us(vm, 'p50'))} us p99 {_f(summary.latency_us(vm, 'p99'))} us")
        if (lb := summary.lookbusy(vm)) is not None:
            print(f"    lookbusy {_f(lb.get('util_pct'), 1)} % of its vCPUs' time (asked {_f(lb['target_pct'], 1)} %)")
    cpu = cpu_line(s, io_cores or [])
    if cpu:
        print(cpu)
    if summary.vms(s):
        print(EHT_TIG)
    if exit_rows:
        print(EXIT_TIME)
    for st in summary.stalled_flows(s) or []:
        # The liveness watchdog: a stall is a model bug, never a result (docs/model.md).
        print(f"warning: MODEL BUG, not a result: the flow of VM {st['vm']} made no progress from "
              f"{st['stalled_from_s']:.4f} s (seen at {st['detected_s']:.4f} s"
              + (f", recovered at {st['recovered_s']:.4f} s" if st.get("recovered_s") is not None else ", never recovered")
              + f"); please report it with the scenario and seed. State: {st['state']}", file=sys.stderr)
