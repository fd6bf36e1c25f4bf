"""One run's numbers for the head-to-head, read from its summary.json (docs/summary.md).

Host CPU is in cores (a pCPU busy the whole window is 1.0), split by who burns it:

* ``cpu_vcpus``: the vCPUs not halted (guest and exit handling: ``cpu_util_pct`` × vCPUs);
* ``cpu_halt_poll``: the rest of the vCPU threads' time — a halted vCPU's thread still on its
  pCPU, which is KVM halt polling;
* ``cpu_backend``: host I/O threads (``host.io_threads``: vhost, ES2's joint threads) on
  pCPUs shared with others — vhost busy polling is inside it (summary.json does not split a
  thread's polling from its work);
* ``cpu_io_cores``: the busy time of dedicated I/O cores (``[host.io] cores``: ELVIS's
  sidecores, PMD cores), polling or not;
* ``cpu_other``: any other busy time (CPU hogs, host work not charged to a thread);
* ``cpu_host``: all of it, the sum of ``host.pcpu_util_pct``.
"""

from __future__ import annotations

from typing import Any

#: Columns every run has, in table order (then ``exits_<reason>_per_s`` for each reason).
COLUMNS = ("throughput", "throughput_unit", "gbps", "ops_per_s", "pps", "exits_per_s", "tig_pct",
           "p50_us", "p99_us", "p999_us", "cpu_host", "cpu_vcpus", "cpu_halt_poll", "cpu_backend",
           "cpu_io_cores", "cpu_other")
CPU_PARTS = ("cpu_vcpus", "cpu_halt_poll", "cpu_backend", "cpu_io_cores", "cpu_other")


def _sum(values) -> float | None:
    vals = [v for v in values if v is not None]
    return sum(vals) if vals else None


def _worst(values) -> float | None:
    vals = [v for v in values if v is not None]
    return max(vals) if vals else None


def of_run(summary: dict[str, Any], io_cores: list[int]) -> dict[str, Any]:
    """The head-to-head's numbers of one run; ``io_cores``: the scenario's dedicated I/O pCPUs.
    Throughput is the workload's own measure: operations/s where it counts them, else Gbit/s.
    Latency is the worst VM's (a comparison of one VM: that VM's)."""
    vms = summary["vms"]
    ops = _sum(vm["throughput"]["ops_per_s"] for vm in vms)
    gbps = _sum(vm["throughput"]["gbps"] for vm in vms)
    row: dict[str, Any] = {
        "throughput": ops if ops is not None else gbps,
        "throughput_unit": "ops/s" if ops is not None else "Gbit/s",
        "gbps": gbps, "ops_per_s": ops, "pps": _sum(vm["throughput"]["pps"] for vm in vms),
        "exits_per_s": _sum(vm["exits_total_per_s"] for vm in vms),
        "tig_pct": sum(vm["tig_pct"] for vm in vms) / len(vms),
        "p50_us": _worst(vm["latency_us"]["p50"] for vm in vms),
        "p99_us": _worst(vm["latency_us"]["p99"] for vm in vms),
        "p999_us": _worst(vm["latency_us"]["p999"] for vm in vms),
    }
    for reason in vms[0]["exits_per_s"]:
        row[f"exits_{reason}_per_s"] = sum(vm["exits_per_s"][reason] for vm in vms)
    row.update(cpu_split(summary, io_cores))
    return row


def io_cores(scenario: dict[str, Any]) -> list[int]:
    """A scenario's dedicated I/O pCPUs (``[host.io] cores``), what :func:`cpu_split` needs."""
    return list(((scenario.get("host") or {}).get("io") or {}).get("cores") or [])


def cpu_split(summary: dict[str, Any], io_cores: list[int]) -> dict[str, float]:
    host = summary["host"]
    threads = {t["name"]: t["pcpu_pct"] for t in host["threads"]}
    vcpu_threads = [name for name in threads if name.startswith("vcpu:")]
    vcpus_of = {vm["name"]: sum(1 for n in vcpu_threads if n.startswith(f"vcpu:{vm['name']}/")) for vm in summary["vms"]}
    running = sum(vm["cpu_util_pct"] * vcpus_of[vm["name"]] for vm in summary["vms"]) / 100
    on_cpu = sum(sum(threads[n]) for n in vcpu_threads) / 100
    dedicated = set(io_cores)
    backend = sum(p for t in host["io_threads"] for i, p in enumerate(threads.get(t["name"], ()))
                  if i not in dedicated) / 100
    io = sum(u for i, u in enumerate(host["pcpu_util_pct"]) if i in dedicated) / 100
    total = sum(host["pcpu_util_pct"]) / 100
    halt_poll = max(on_cpu - running, 0.0)
    return {"cpu_host": total, "cpu_vcpus": running, "cpu_halt_poll": halt_poll, "cpu_backend": backend,
            "cpu_io_cores": io, "cpu_other": max(total - running - halt_poll - backend - io, 0.0)}
