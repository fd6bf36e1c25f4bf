"""One run's row of the head-to-head, read from its summary.json through
:mod:`eventpath.summary` (docs/summary.md).

Throughput is the workload's own measure (operations/s where it counts them, else Gbit/s),
latency the worst VM's (a comparison of one VM: that VM's), host CPU in cores split by who
burns it (:func:`eventpath.summary.cpu_split`, whose parts are ``CPU_PARTS``).
"""

from __future__ import annotations

from typing import Any

from eventpath import summary
from eventpath.summary import CPU_PARTS  # noqa: F401  (the row's CPU columns, which add up to cpu_host)

#: Columns every run has, in table order (then ``exits_<reason>_per_s`` for each reason).
COLUMNS = ("throughput", "throughput_unit", "gbps", "ops_per_s", "pps", "exits_per_s", "tig_pct",
           "p50_us", "p99_us", "p999_us", "cpu_host", "cpu_vcpus", "cpu_halt_poll", "cpu_backend",
           "cpu_io_cores", "cpu_other")


def of_run(s: dict[str, Any], io_cores: list[int]) -> dict[str, Any]:
    """The head-to-head's numbers of run ``s`` (its summary); ``io_cores``: the scenario's
    dedicated I/O pCPUs (:func:`eventpath.summary.io_cores`)."""
    vms = summary.vms(s)
    ops = summary.total(summary.ops_per_s(v) for v in vms)
    gbps = summary.total(summary.gbps(v) for v in vms)
    row: dict[str, Any] = {
        "throughput": ops if ops is not None else gbps,
        "throughput_unit": "ops/s" if ops is not None else "Gbit/s",
        "gbps": gbps, "ops_per_s": ops, "pps": summary.total(summary.pps(v) for v in vms),
        "exits_per_s": summary.total(summary.exits_total_per_s(v) for v in vms),
        "tig_pct": sum(summary.tig_pct(v) for v in vms) / len(vms),
        "p50_us": summary.worst(summary.latency_us(v, "p50") for v in vms),
        "p99_us": summary.worst(summary.latency_us(v, "p99") for v in vms),
        "p999_us": summary.worst(summary.latency_us(v, "p999") for v in vms),
    }
    for reason in summary.exits_by_reason(vms[0]):
        row[f"exits_{reason}_per_s"] = sum(summary.exits_per_s(v, reason) for v in vms)
    row.update(summary.cpu_split(s, io_cores))
    return row
