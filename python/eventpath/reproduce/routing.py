"""Interrupt routing head to head (issue 31): no paper compares the routers side by side.

Every router the simulator has — ``fixed`` (the guest's affinity, vCPU 0: the vIOAPIC's physical
destination mode, Xen's vanilla event channel), ``lowest_priority_rr`` (logical destination mode,
round robin), ``running_first``, ``es2`` (ES2 §4.3's redirection) and ``h_balance`` (hBalance
Algorithm 1, with its BOOST and Algorithm 2 under Xen credit) — under each host scheduler, CFS
(KVM's) and Xen 4.2's credit scheduler (30 ms slices), on the same layout and the same two
workloads: a ping's round-trip tail (hBalance Fig. 7's measure) and a web server's throughput
(ES2 Fig. 10's and hBalance Fig. 9's).

The layout borrows ES2 §6.3's consolidated host on the es2 profile — ES2 §6.1's 8-core host
(``host.pcpus = 8``: CFS's latency scales by 1 + ilog2(8) = 4, 24 ms, as on ES2's host; it was
5 pCPUs, an 18 ms period, until issue 47), four VMs of four vCPUs time-sharing pCPUs 0-3,
vCPU ``j`` of every VM pinned to pCPU ``j`` (no vCPU stacking), each VM's vhost thread on pCPU
4 — but not ES2's load or measure: every VM runs lookbusy at 25 % of each vCPU (hBalance §6.1's
load; four vCPUs of 25 % fill each pCPU) where ES2 runs "lowest-priority CPU burn scripts", so
the host scheduler time-slices vCPUs that also block and wake; VM 0 is tested with a ping per
ms (p50/p99/max) where ES2 §6.4 pings once a second and reports the fractions under 0.2 and 5
ms. So no row here reproduces ES2 §6.4 (Fig. 9, Fig. 10), which no experiment reproduces yet.
(With ES2 §6.3's always-runnable CPU burns instead, every pCPU's slices switch at the same
instants and a VM's vCPUs run all at once or not at all: no router has a running sibling to
choose. That lock-step is a structural gap of the model's set-up, issue 48's.)
"""

from __future__ import annotations

from eventpath.reproduce.experiment import Axis, Experiment, Measured, register
from eventpath.reproduce.simulate import simulate

#: The routers, in the order of the table.
ROUTERS = ("fixed", "lowest_priority_rr", "running_first", "es2", "h_balance")
#: The host schedulers.
SCHEDULERS = ("cfs", "xen_credit")

#: hBalance §6.1.1: ping; one request per ms, answered in the guest's softirq.
_PING = {"kind": "ping", "interval_us": 1000.0}
#: ES2 §6.4's ApacheBench: a small static page at concurrency 16.
_WEB = {"kind": "http", "concurrency": 16, "file_bytes": 1024}

#: Every VM's lookbusy load, % of each vCPU (four vCPUs per pCPU at 25 % fill it).
LOAD_PCT = 25.0

#: Simulated seconds (1,000 pings at the default) and warm-up.
_DURATION, _WARMUP = 1.0, 0.1


def layout(router: str, scheduler: str, workload: dict, duration: float | None = None, seed: int = 1) -> dict:
    """The consolidated host with VM 0 running ``workload`` under ``router`` and ``scheduler``."""
    vms = []
    for i in range(4):
        vm = {"name": f"vm{i}", "vcpus": 4, "vcpu_pins": [0, 1, 2, 3], "lookbusy": {"util_pct": LOAD_PCT},
              "interrupt_delivery": "posted", "net": {"vhost_pin": 4}}
        if i == 0:
            vm["interrupt_routing"] = router
            vm["workload"] = dict(workload)
        vms.append(vm)
    return {"name": f"routing-{router}-{scheduler}", "profile": "es2", "seed": seed,
            "duration_s": _DURATION if duration is None else duration, "warmup_s": _WARMUP,
            "host": {"pcpus": 8, "scheduler": scheduler}, "vm": vms}


def _rows(duration, step):
    rows = []
    for sched in SCHEDULERS:
        for r in ROUTERS:
            c = f"{r} {sched}"
            ping = simulate(layout(r, sched, _PING, duration), what=f"ping, {c}").summary["vms"][0]
            lat = ping["latency_us"]
            rows.append(Measured(c, "ping_p50", "us", lat["p50"]))
            rows.append(Measured(c, "ping_p99", "us", lat["p99"]))
            rows.append(Measured(c, "ping_max", "us", lat["max"]))
            by = ping["device_interrupts_by_run_state_per_s"] or {}
            total = sum(v or 0.0 for v in by.values())
            rows.append(Measured(c, "irqs_to_runnable", "%", 100.0 * (by.get("runnable") or 0.0) / total if total else None))
            web = simulate(layout(r, sched, _WEB, duration), what=f"web, {c}").summary["vms"][0]
            rows.append(Measured(c, "web_requests", "req/s", web["throughput"]["ops_per_s"]))
            step(c)
    return rows


register(Experiment(
    id="routing-head-to-head",
    title="Interrupt routing head to head: fixed, round robin, running-first, ES2 redirection and hBalance "
          "under CFS and under Xen credit, on a ping's tail and a web server's throughput",
    source="no paper: ES2 §4.3 and §6.3's consolidated host (seed 000_8734db7c67a9fb1f.txt), hBalance §4 "
           "Algorithms 1-2 and §6.1 (seed 004_ee5e38d5cb394f30.txt)",
    profile="es2",
    rows=_rows,
    runs=2 * len(ROUTERS) * len(SCHEDULERS),
    notes=[
        "Every row is a prediction without a published value. Layout: eventpath.reproduce.routing.layout (ES2 "
        "§6.1's 8-pCPU host, four VMs of four vCPUs on pCPUs 0-3, every VM at lookbusy 25 %, VM 0 tested, posted "
        "interrupts, vhost on pCPU 4): ES2 §6.3's host with hBalance's load, not ES2 §6.4's set-up (burns, one "
        "ping a second), which no experiment reproduces. Ping: one echo request per ms for the run, answered in the guest's softirq on the vCPU "
        "that took the interrupt (so routing alone decides its wait). Web: an ab-like client at concurrency 16 "
        "fetching a 1 KB page from Apache workers on every vCPU.",
        "irqs_to_runnable: the share of VM 0's device interrupts the router sent to a preempted vCPU "
        "(vms[].device_interrupts_by_run_state_per_s), the wait hBalance and ES2 remove.",
        "Under CFS no vCPU is ever boosted: hBalance's scheduler half (BOOST, Algorithm 2) needs Xen credit.",
        "PV sched yield and directed yield are not in these rows: the model's guests send only unicast "
        "reschedule IPIs and take no spinlocks, so neither has anything to act on (issue 32's refusal).",
    ],
    axis=Axis(r"(?P<series>.+) (?P<x>cfs|xen_credit)", "host scheduler"),
))
