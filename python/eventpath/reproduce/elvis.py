"""ELVIS (seed 001_057b634fca7e35c3.txt) experiments."""

from __future__ import annotations

from eventpath import api
from eventpath.reproduce import SCENARIOS, Experiment, Row, register


def _baseline_1vm(duration, step):
    r = api.run(SCENARIOS / "elvis-baseline-1vm-tcp64.toml", duration=duration)
    step("netperf TCP 64 B")
    vm = r.summary["vms"][0]
    ex = vm["exits_per_s"]
    rows = [
        # "Baseline suffered 142K, 109K and 146K exits/second for Netperf, Apache and Memcached
        # respectively when we used only a single VM" (ELVIS §4.4).
        Row("netperf-tcp64", "exits_total", "exits/s", vm["exits_total_per_s"], 142_000.0),
    ]
    for reason in ("io_instruction", "interrupt_delivery", "eoi", "external_interrupt"):
        rows.append(Row("netperf-tcp64", f"exits_{reason}", "exits/s", ex[reason], None))
    rows.append(Row("netperf-tcp64", "throughput", "Gbit/s", vm["throughput"]["gbps"], None))
    rows.append(Row("netperf-tcp64", "eht", "%", vm["eht_pct"], None))
    # Apache (ab, 4 KB page, 2 concurrent) and memcached (memslap, 32 concurrent, 90 % get) need
    # workloads the model does not have yet: not simulated.
    rows.append(Row("apache-4k-c2", "exits_total", "exits/s", None, 109_000.0))
    rows.append(Row("memcached-c32", "exits_total", "exits/s", None, 146_000.0))
    return rows


register(Experiment(
    id="elvis-baseline-1vm",
    title="ELVIS Baseline, one VM: exits per second (netperf TCP 64 B; Apache, memcached not simulated)",
    source="ELVIS §4.2 (Baseline), §4.4 (seed 001_057b634fca7e35c3.txt)",
    rows=_baseline_1vm,
    runs=1,
    notes=[
        "Baseline: host limited to N+1 = 2 cores, vCPU and vhost threads placed by the host scheduler "
        "(nothing pinned), as ELVIS §4.2 states.",
        "Apache and memcached rows have no simulated value: the ab-like and memaslap-like workloads "
        "are not built yet.",
    ],
))
