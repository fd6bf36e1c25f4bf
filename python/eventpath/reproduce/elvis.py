"""ELVIS (seed 001_057b634fca7e35c3.txt) experiments."""

from __future__ import annotations

from eventpath import api
from eventpath.reproduce import SCENARIOS, Experiment, Row, register


def _rows_of(config, vm, published):
    ex = vm["exits_per_s"]
    rows = [Row(config, "exits_total", "exits/s", vm["exits_total_per_s"], published)]
    for reason in ("io_instruction", "interrupt_delivery", "eoi", "external_interrupt", "hlt"):
        rows.append(Row(config, f"exits_{reason}", "exits/s", ex[reason], None))
    rows.append(Row(config, "eht", "%", vm["eht_pct"], None))
    rows.append(Row(config, "vcpu_util", "%", vm["cpu_util_pct"], None))
    return rows


def _baseline_1vm(duration, step):
    # "Baseline suffered 142K, 109K and 146K exits/second for Netperf, Apache and Memcached
    # respectively when we used only a single VM" (ELVIS §4.4).
    r = api.run(SCENARIOS / "elvis-baseline-1vm-tcp64.toml", duration=duration)
    step("netperf TCP 64 B")
    vm = r.summary["vms"][0]
    rows = _rows_of("netperf-tcp64", vm, 142_000.0)
    # "TCP stream achieved ... 1.08Gbps when it ran in a single VM using ... Baseline" (ELVIS §4.6).
    rows.append(Row("netperf-tcp64", "throughput", "Gbit/s", vm["throughput"]["gbps"], 1.08))
    # Apache: ab, 4 KB page, 2 concurrent; memcached: memslap, 32 concurrent, 90 % get (ELVIS §4.3).
    for config, scenario, published, label in (
        ("apache-4k-c2", "elvis-baseline-1vm-apache.toml", 109_000.0, "Apache (ab 4 KB, 2 concurrent)"),
        ("memcached-c32", "elvis-baseline-1vm-memcached.toml", 146_000.0, "memcached (memslap 32, 90 % get)"),
    ):
        r = api.run(SCENARIOS / scenario, duration=duration)
        step(label)
        vm = r.summary["vms"][0]
        rows += _rows_of(config, vm, published)
        rows.append(Row(config, "throughput", "ops/s", vm["throughput"]["ops_per_s"], None))
        rows.append(Row(config, "latency_mean", "us", vm["latency_us"]["mean"], None))
    return rows


register(Experiment(
    id="elvis-baseline-1vm",
    title="ELVIS Baseline, one VM: exits per second (netperf TCP 64 B, Apache, memcached)",
    source="ELVIS §4.2 (Baseline), §4.4, §4.6 (seed 001_057b634fca7e35c3.txt)",
    profile="elvis",
    rows=_baseline_1vm,
    runs=3,
    notes=[
        "Baseline: host limited to N+1 = 2 cores, vCPU and vhost threads placed by the host scheduler "
        "(nothing pinned), as ELVIS §4.2 states.",
        "Apache and memcached run as TCP request/response servers (docs/model.md): ab opens and "
        "closes a TCP connection per request (its default), memslap keeps 32 persistent ones; one "
        "server thread on the vCPU that takes the interrupt; application costs are first-principles "
        "estimates (profiles/elvis.toml [app]), not fitted.",
    ],
))
