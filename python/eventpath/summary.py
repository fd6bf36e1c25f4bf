"""summary.json read by name: one accessor per key of the results contract (docs/summary.md).

Why a module of accessors: the contract's paths (``vms[].throughput.gbps``,
``host.io_threads[]``, ``vms[].latency_us.p99``) used to be spelled out wherever a summary was
read, so a reader had to know the file's shape by heart and a renamed key meant a hunt. Here
each path is written once, beside the line of docs/summary.md it reads; the commands and the
comparisons ask for ``gbps(vm)`` or ``io_threads(s)``.

Two rules hold for every accessor, so that callers can rely on them:

* **null stays None.** A metric that does not apply is null in the contract (a testbed summary
  leaves many null, ``host.threads`` among them; a workload without operations has no
  ``ops_per_s``); the accessor returns None for it, and also for a key the summary lacks (an
  older build's, a test's hand-made one). It never makes up a zero or an empty list: a caller
  that wants one writes ``or 0.0`` where it reads, and a sum over a list that is null fails
  (:func:`io_thread_util_pct`, :func:`thread_pcpu_pct`, :func:`cpu_split`) rather than say 0.
  Only :func:`vms` is always a list: every run has its VMs.
* **Aggregates skip None** (:func:`total`, :func:`worst`) and are None where nothing is known.

``s`` is one run's summary (a dict, as :attr:`eventpath.Result.summary` or summary.json holds
it), ``vm`` one of its ``vms[]``. Host CPU by who burns it is :func:`cpu_split`, the one
computed reading here. Readers import the module, ``from eventpath import summary``, and read
``summary.gbps(vm)``; a local variable named ``summary`` would hide it, so a summary dict is
called ``s`` (as here).
"""

from __future__ import annotations

from typing import Any, Iterable

Summary = dict[str, Any]
Vm = dict[str, Any]


def _at(d: dict | None, *path: str) -> Any:
    """``d[path[0]][path[1]]...``, or None where a step is absent or null."""
    for key in path:
        if not isinstance(d, dict):
            return None
        d = d.get(key)
    return d


# --- the run -----------------------------------------------------------------------------------

def scenario(s: Summary) -> str | None:
    """``scenario``: the scenario's ``name``."""
    return s.get("scenario")


def seed(s: Summary) -> int | None:
    """``seed`` (testbed: null)."""
    return s.get("seed")


def profile(s: Summary) -> str | None:
    """``profile``: the profile's name (testbed: null, which also tells a measured run)."""
    return s.get("profile")


def sim_seconds(s: Summary) -> float | None:
    """``sim_seconds``: the measured window (testbed: its wall-clock window)."""
    return s.get("sim_seconds")


def wall_seconds(s: Summary) -> float | None:
    """``wall_seconds``: the run's wall-clock time."""
    return s.get("wall_seconds")


def events(s: Summary) -> int | None:
    """``events`` handled, warm-up included (testbed: null)."""
    return s.get("events")


def vms(s: Summary) -> list[Vm]:
    """``vms[]``, in scenario order."""
    return s.get("vms") or []


def vm(s: Summary, i: int = 0) -> Vm:
    """``vms[i]`` (an :class:`IndexError` where there is none: a run always has its VMs)."""
    return vms(s)[i]


def stalled_flows(s: Summary) -> list[dict] | None:
    """``stalled_flows[]``: empty in a healthy run; None where there is no watchdog (testbed),
    which :mod:`eventpath.liveness` tells apart from empty."""
    return s.get("stalled_flows")


# --- one VM ------------------------------------------------------------------------------------

def name(vm: Vm) -> str | None:
    """``vms[].name``."""
    return vm.get("name")


def throughput(vm: Vm, unit: str) -> float | None:
    """``vms[].throughput.<unit>``: ``gbps``, ``pps`` or ``ops_per_s``, for a reader that picks
    the unit at run time (a reproduction's metric key)."""
    return _at(vm, "throughput", unit)


def gbps(vm: Vm) -> float | None:
    """``vms[].throughput.gbps``: payload Gbit/s."""
    return throughput(vm, "gbps")


def pps(vm: Vm) -> float | None:
    """``vms[].throughput.pps``: packets/s."""
    return throughput(vm, "pps")


def ops_per_s(vm: Vm) -> float | None:
    """``vms[].throughput.ops_per_s``: the application's operations/s (null where it counts none)."""
    return throughput(vm, "ops_per_s")


#: Workload kinds whose own metric is packets/s and Gbit/s (a workload that counts operations,
#: memcached, tcp_rr, http, udp_rr, ping, reports ops/s; docs/summary.md ``vms[].throughput``).
PPS_KINDS = ("udp_stream", "udp_receive", "packet_gen", "udp_ping")
GBPS_KINDS = ("tcp_stream", "tcp_receive")


def own_throughput(vm: Vm, kind: str | None) -> tuple[float | None, str]:
    """A VM's own measure of work done, higher better, with its unit: what ``eventpath run``
    prints for it (pkt/s for UDP streams, Gbit/s for TCP streams, else ops/s; webbench's
    requests/min, httperf's replies/s, SPECweb's requests/s, a CPU job's share of its work done
    per unit of time as % of an idle CPU's, None unfinished)."""
    if (w := web(vm)) is not None:
        return w.get("requests_per_min"), "requests/min"
    if (h := httperf(vm)) is not None:
        return h.get("reply_rate_per_s"), "replies/s"
    if (w := specweb(vm)) is not None:
        return w.get("requests_per_s"), "requests/s"
    if block(vm) is not None:
        return ops_per_s(vm), "IOPS"
    if (j := cpu_job(vm)) is not None:
        # Unfinished, it has no speed to compare (done_pct is of the run, not of the job's time).
        speed = 100.0 * j["work_ms"] / j["completion_ms"] if j["finished"] and j.get("completion_ms") else None
        return speed, "% of an idle CPU's speed"
    if kind in PPS_KINDS:
        return pps(vm), "pkt/s"
    if kind in GBPS_KINDS:
        return gbps(vm), "Gbit/s"
    for value, unit in ((ops_per_s(vm), "ops/s"), (gbps(vm), "Gbit/s"), (pps(vm), "pkt/s")):
        if value is not None:
            return value, unit
    return None, ""


def latency_us(vm: Vm, q: str = "p50") -> float | None:
    """``vms[].latency_us.<q>``: ``mean``, ``p50``, ``p90``, ``p95``, ``p99``, ``p999`` or ``max``
    of the workload's latency, µs."""
    return _at(vm, "latency_us", q)


def exits_by_reason(vm: Vm) -> dict[str, float | None]:
    """``vms[].exits_per_s``: exits/s by reason, every reason present, in contract order."""
    return vm.get("exits_per_s") or {}


def exits_per_s(vm: Vm, reason: str) -> float | None:
    """``vms[].exits_per_s.<reason>``."""
    return _at(vm, "exits_per_s", reason)


def exits_total_per_s(vm: Vm) -> float | None:
    """``vms[].exits_total_per_s``: the sum over reasons."""
    return vm.get("exits_total_per_s")


def eht_pct(vm: Vm) -> float | None:
    """``vms[].eht_pct``: exit handling time, % of measured time x vCPUs."""
    return vm.get("eht_pct")


def tig_pct(vm: Vm) -> float | None:
    """``vms[].tig_pct``: time in guest mode, % of measured time x vCPUs."""
    return vm.get("tig_pct")


def cpu_util_pct(vm: Vm) -> float | None:
    """``vms[].cpu_util_pct``: vCPU not halted (guest + exits), % of vCPU time."""
    return vm.get("cpu_util_pct")


def kicks_per_s(vm: Vm) -> float | None:
    """``vms[].kicks_per_s``: virtqueue notifications the guest driver made."""
    return vm.get("kicks_per_s")


def interrupts_per_s(vm: Vm) -> float | None:
    """``vms[].interrupts_per_s``: virtual interrupts injected, all sources."""
    return vm.get("interrupts_per_s")


def latency_by_target_state_us(vm: Vm, state: str, q: str = "p50") -> float | None:
    """``vms[].latency_by_target_state_us.<state>.<q>``: the ``irq_source`` workload's latency by
    what ran at the raise (``home_running``, ``other_running``, ``none_running``)."""
    return _at(vm, "latency_by_target_state_us", state, q)


# The workloads' own blocks: present only for their workload, None for every other VM.

def web(vm: Vm) -> dict | None:
    """``vms[].web``: webbench's ``clients``, ``requests_per_min``, ``failed_clients``."""
    return vm.get("web")


def httperf(vm: Vm) -> dict | None:
    """``vms[].httperf``: ``rate_rps``, ``reply_rate_per_s``, ``errors``, ..."""
    return vm.get("httperf")


def specweb(vm: Vm) -> dict | None:
    """``vms[].specweb``: ``finished_requests``, ``requests_per_s``, response times (ms), ..."""
    return vm.get("specweb")


def cpu_job(vm: Vm) -> dict | None:
    """``vms[].cpu_job``: ``work_ms``, ``finished``, ``completion_ms``, ``done_pct``."""
    return vm.get("cpu_job")


def block(vm: Vm) -> dict | None:
    """``vms[].block``: a fio or filebench VM's ``read_iops``, ``write_iops``,
    ``bandwidth_mb_s``, ``queues`` and ``device`` (``virtio_blk`` or ``nvme``; its IOPS are
    ``throughput.ops_per_s``)."""
    return vm.get("block")


def lookbusy(vm: Vm) -> dict | None:
    """``vms[].lookbusy``: ``target_pct``, ``period_ms``, ``util_pct``."""
    return vm.get("lookbusy")


# The testbed's own keys (docs/kvm.md; typed in crates/kvm/src/measure/extra.rs): None in a
# simulator summary.

def guest(vm: Vm) -> dict | None:
    """``vms[].guest``: the testbed guest's counters (``kicks_per_request``, ...)."""
    return vm.get("guest")


def counters(s: Summary) -> dict | None:
    """``counters``: the testbed's counters by part (``backend``, ``irqgen``, ...)."""
    return s.get("counters")


def series(s: Summary) -> list[dict] | None:
    """``series``: the testbed's time series (a list of ``name``, ``t_s``, ``value``)."""
    return s.get("series")


def kvm_stats(s: Summary) -> list[dict] | None:
    """``kvm_stats``: raw KVM binary-statistics deltas, a list per VM (``vcpus[]``)."""
    return s.get("kvm_stats")


# --- the host ----------------------------------------------------------------------------------

def pcpu_util_pct(s: Summary) -> list[float] | None:
    """``host.pcpu_util_pct``: busy % of each pCPU."""
    return _at(s, "host", "pcpu_util_pct")


def io_threads(s: Summary) -> list[dict] | None:
    """``host.io_threads[]``: ``name``, ``util_pct``, ``empty_poll_pct``, ``remote_items_pct`` and
    ``remote_busy_pct`` (profile ``[numa]``: work on another node's memory) of each I/O thread."""
    return _at(s, "host", "io_threads")


def io_thread_util_pct(s: Summary) -> float:
    """The I/O threads' busy % summed (a thread without a value counts 0; a summary without
    ``host.io_threads`` raises :class:`TypeError`)."""
    return sum(t["util_pct"] or 0.0 for t in io_threads(s))


def threads(s: Summary) -> list[dict] | None:
    """``host.threads[]``: every scheduled host thread's ``name`` and ``pcpu_pct`` (% of the
    measured time on each pCPU); null in a testbed summary."""
    return _at(s, "host", "threads")


def thread_pcpu_pct(s: Summary, prefix: str) -> float:
    """The run time of the host threads whose name starts with ``prefix`` (``vcpu:``,
    ``vhost-``), % of one pCPU, summed over pCPUs (a testbed summary, whose ``host.threads``
    is null, raises :class:`TypeError`)."""
    return sum(sum(t["pcpu_pct"]) for t in threads(s) if t["name"].startswith(prefix))


def migrations_per_s(s: Summary) -> float | None:
    """``host.migrations_per_s``: thread moves between pCPUs per second."""
    return _at(s, "host", "migrations_per_s")


# --- across VMs --------------------------------------------------------------------------------

def total(values: Iterable[float | None]) -> float | None:
    """The sum of the values that are known; None where none is."""
    vals = [v for v in values if v is not None]
    return sum(vals) if vals else None


def worst(values: Iterable[float | None]) -> float | None:
    """The largest of the values that are known (the worst VM's latency); None where none is."""
    vals = [v for v in values if v is not None]
    return max(vals) if vals else None


# --- host CPU in cores, by who burns it ---------------------------------------------------------

#: :func:`cpu_split`'s parts, which add up to ``cpu_host``.
CPU_PARTS = ("cpu_vcpus", "cpu_halt_poll", "cpu_backend", "cpu_io_cores", "cpu_other")


def io_cores(scenario: dict[str, Any]) -> list[int]:
    """A *scenario's* dedicated I/O pCPUs (``[host.io] cores``), what :func:`cpu_split` needs
    beside the summary (the summary does not say which pCPUs were dedicated)."""
    return list(((scenario.get("host") or {}).get("io") or {}).get("cores") or [])


def cpu_split(s: Summary, io_cores: list[int]) -> dict[str, float]:
    """Host CPU in cores (a pCPU busy the whole window is 1.0), split by who burns it:

    * ``cpu_vcpus``: the vCPUs not halted (guest and exit handling: ``cpu_util_pct`` × vCPUs);
    * ``cpu_halt_poll``: the rest of the vCPU threads' time — a halted vCPU's thread still on
      its pCPU, which is KVM halt polling;
    * ``cpu_backend``: host I/O threads (``host.io_threads``: vhost, ES2's joint threads) on
      pCPUs shared with others — vhost busy polling is inside it (summary.json does not split
      a thread's polling from its work);
    * ``cpu_io_cores``: the busy time of dedicated I/O cores (``io_cores``: ELVIS's sidecores,
      PMD cores), polling or not;
    * ``cpu_other``: any other busy time (CPU hogs, host interrupt work on a pCPU no thread held);
    * ``cpu_host``: all of it, the sum of ``host.pcpu_util_pct``.

    Unlike the accessors it needs every per-thread time: a summary without them (a testbed's,
    whose ``host.threads`` is null) raises :class:`TypeError` or :class:`KeyError`, so that no
    split is made up."""
    host = s["host"]
    times = {t["name"]: t["pcpu_pct"] for t in host["threads"]}
    vcpu_threads = [n for n in times if n.startswith("vcpu:")]
    vcpus_of = {v["name"]: sum(1 for n in vcpu_threads if n.startswith(f"vcpu:{v['name']}/")) for v in s["vms"]}
    running = sum(v["cpu_util_pct"] * vcpus_of[v["name"]] for v in s["vms"]) / 100
    on_cpu = sum(sum(times[n]) for n in vcpu_threads) / 100
    dedicated = set(io_cores)
    backend = sum(p for t in host["io_threads"] for i, p in enumerate(times.get(t["name"], ()))
                  if i not in dedicated) / 100
    io = sum(u for i, u in enumerate(host["pcpu_util_pct"]) if i in dedicated) / 100
    everything = sum(host["pcpu_util_pct"]) / 100
    halt_poll = _residue(on_cpu - running)
    return {"cpu_host": everything, "cpu_vcpus": running, "cpu_halt_poll": halt_poll, "cpu_backend": backend,
            "cpu_io_cores": io, "cpu_other": _residue(everything - running - halt_poll - backend - io)}


#: Below this many cores a difference of sums is the floating point's rounding, not time (a
#: nanosecond in a millisecond's window is 1e-6 cores): written as 0, not as ``1.78e-15``.
RESIDUE = 1e-9


def _residue(x: float) -> float:
    return x if x > RESIDUE else 0.0
