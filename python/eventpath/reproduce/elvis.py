"""ELVIS (seed 001_057b634fca7e35c3.txt) experiments."""

from __future__ import annotations

from eventpath.reproduce.experiment import SCENARIOS, Axis, Experiment, Measured, register
from eventpath.reproduce.simulate import simulate


def _rows_of(config, vm):
    ex = vm["exits_per_s"]
    rows = [Measured(config, "exits_total", "exits/s", vm["exits_total_per_s"])]
    for reason in ("io_instruction", "interrupt_delivery", "eoi", "external_interrupt", "hlt"):
        rows.append(Measured(config, f"exits_{reason}", "exits/s", ex[reason]))
    rows.append(Measured(config, "eht", "%", vm["eht_pct"]))
    rows.append(Measured(config, "vcpu_util", "%", vm["cpu_util_pct"]))
    return rows


def _baseline_1vm(duration, step):
    r = simulate(SCENARIOS / "elvis-baseline-1vm-tcp64.toml", what="elvis-baseline-1vm netperf-tcp64",
                 duration=duration)
    step("netperf TCP 64 B")
    vm = r.summary["vms"][0]
    rows = _rows_of("netperf-tcp64", vm)
    rows.append(Measured("netperf-tcp64", "throughput", "Gbit/s", vm["throughput"]["gbps"]))
    # Apache: ab, 4 KB page, 2 concurrent; memcached: memslap, 32 concurrent, 90 % get (ELVIS §4.3).
    for config, scenario, label in (
        ("apache-4k-c2", "elvis-baseline-1vm-apache.toml", "Apache (ab 4 KB, 2 concurrent)"),
        ("memcached-c32", "elvis-baseline-1vm-memcached.toml", "memcached (memslap 32, 90 % get)"),
    ):
        r = simulate(SCENARIOS / scenario, what=f"elvis-baseline-1vm {config}", duration=duration)
        step(label)
        vm = r.summary["vms"][0]
        rows += _rows_of(config, vm)
        rows.append(Measured(config, "throughput", "ops/s", vm["throughput"]["ops_per_s"]))
        rows.append(Measured(config, "latency_mean", "us", vm["latency_us"]["mean"]))
    return rows


register(Experiment(
    id="elvis-baseline-1vm",
    title="ELVIS Baseline, one VM: exits per second (netperf TCP 64 B, Apache, memcached)",
    source="ELVIS §4.2 (Baseline), §4.4, §4.6 (seed 001_057b634fca7e35c3.txt)",
    profile="elvis",
    baselines=(r".*",),
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


# --- ELVIS §4.2's configurations at N VMs (issue 14): Figs. 4, 5 and 8 ---

#: The benchmarks (ELVIS §4.3–4.4): netperf TCP stream with 64-byte writes, Apache (ab, 4 KB
#: page, 2 concurrent), memcached (memslap, 32 concurrent, 90 % get), netperf UDP_RR (1 byte).
WORKLOADS = {
    "netperf": {"kind": "tcp_stream", "message_bytes": 64},
    "apache": {"kind": "http", "concurrency": 2, "file_bytes": 4096, "keepalive": False},
    "memcached": {"kind": "memcached", "concurrency": 32, "get_ratio": 0.9, "value_bytes": 1024, "key_bytes": 64},
    "udp_rr": {"kind": "udp_rr", "request_bytes": 1, "response_bytes": 1},
}

#: Cores per socket of the elvis profile (two sockets of 8-core Xeon E5-2660, ELVIS §4.1).
_SOCKET = 8


def _sockets(n):
    """VMs per socket: up to 7 on the first; above 7 split in two balanced halves (ELVIS §4.2)."""
    return [n] if n <= _SOCKET - 1 else [(n + 1) // 2, n // 2]


def layout(config, n, workload, seed=1, duration=None):
    """ELVIS §4.2's configuration `config` at `n` VMs running `workload` (a WORKLOADS key).

    * ``baseline``: N+1 cores (N+2 above 7 VMs), stock vhost-net, nothing pinned;
    * ``affinity``: a core per vCPU and one I/O core per socket running all its VMs' vhost threads;
    * ``elvis``: a core per vCPU, one ELVIS I/O thread per socket's I/O core, exitless requests
      and ELI-delivered replies;
    * ``fine``: ELVIS's fine-grained I/O scheduling only (no polling, injected interrupts);
    * ``nointerp``: No interposition: the same cores as ELVIS, each VM with an SR-IOV VF of the
      port (its ring at ixgbevf's default 512 RX descriptors) and ELI — exitless interrupts, no
      host I/O thread; the I/O core of each socket is left unused, as ELVIS §4.2 states.
    """
    groups = _sockets(n)
    vms = []
    io_cores = []
    for s, count in enumerate(groups):
        base = s * _SOCKET
        io_core = base + _SOCKET - 1 if len(groups) > 1 else count
        io_cores.append(io_core)
        for j in range(count):
            vm = {"name": f"vm{len(vms)}", "vcpus": 1, "net": {"queue_size": 512}, "workload": dict(WORKLOADS[workload])}
            if config != "baseline":
                vm["vcpu_pins"] = [base + j]
            if config == "affinity":
                vm["net"]["vhost_pin"] = io_core
            if config == "nointerp":
                vm["net"]["kind"] = "sriov_vf"  # IXGBEVF_DEFAULT_RXD = 512; EITR at sriov.vf_itr_ns
            vm["interrupt_delivery"] = "eli" if config in ("elvis", "nointerp") else "emulated"
            vms.append(vm)
    pcpus = n + len(groups) if config == "baseline" else (2 * _SOCKET if len(groups) > 1 else n + 1)
    sc = {"name": f"elvis-{config}-{workload}-{n}vm", "profile": "elvis", "seed": seed, "duration_s": duration or 0.5,
          "warmup_s": 0.1, "host": {"pcpus": pcpus}, "vm": vms}
    if config in ("affinity", "elvis", "fine"):
        # "We also set the IRQ affinity to deliver the NIC's interrupts only to the I/O core"
        # (§4.2, ELVIS and Baseline with Affinity; fine-grained only is ELVIS's set-up).
        sc["host"]["nic_irq_cpus"] = io_cores
    if config in ("elvis", "fine"):
        sc["host"]["io"] = {"handling": "elvis", "cores": io_cores}
        if len(groups) > 1:
            # One I/O thread per socket serving that socket's VMs (§4.2): the prototype's
            # devices_per_worker (default 7) set to the first socket's share, so that its
            # worker-filling rule splits the VMs as the sockets do.
            sc["host"]["io"]["devices_per_worker"] = groups[0]
        if config == "fine":
            sc["host"]["io"]["exitless_requests"] = False
    return sc


def _total(r, key):
    vals = [v["throughput"][key] for v in r.summary["vms"]]
    return sum(v for v in vals if v is not None)


def _run(config, n, workload, duration, step):
    label = f"{config} {workload} {n} VMs"
    r = simulate(layout(config, n, workload, duration=duration), what=label, duration=duration)
    step(label)
    return r


_CONFIG_NAMES = {"baseline": "Baseline", "affinity": "Baseline with affinity", "elvis": "ELVIS",
                 "fine": "Fine-grained only", "nointerp": "No interposition"}

#: Figs. 5 and 8's x-axis, the VMs ("3vm ELVIS"); Fig. 4's also per benchmark ("apache 3vm ELVIS").
_VMS = Axis(r"(?P<x>\d+)vm (?P<series>.+)", "VMs")
_BENCH_VMS = Axis(r"(?P<facet>\w+) (?P<x>\d+)vm (?P<series>.+)", "VMs")

#: The configurations of ELVIS Fig. 8 (§4.7): No interposition is not among them.
_FIG8_CONFIGS = ("baseline", "affinity", "elvis", "fine")


def _fig8(duration, step, counts=(1, 2, 3, 4, 5, 6, 7)):
    rows = []
    for n in counts:
        gbps = {c: _total(_run(c, n, "netperf", duration, step), "gbps") for c in _FIG8_CONFIGS}
        label = f"{n}vm"
        for c in _FIG8_CONFIGS:
            rows.append(Measured(f"{label} {_CONFIG_NAMES[c]}", "throughput", "Gbit/s", gbps[c]))
        base = gbps["baseline"] or None
        rows.append(Measured(f"{label} Fine-grained only", "vs_baseline", "x", gbps["fine"] / base if base else None))
        rows.append(Measured(f"{label} ELVIS", "vs_baseline", "x", gbps["elvis"] / base if base else None))
        aff = gbps["affinity"] or None
        rows.append(Measured(f"{label} ELVIS", "vs_affinity", "%",
                             100.0 * (gbps["elvis"] / aff - 1.0) if aff else None))
    return rows


register(Experiment(
    id="elvis-fig8",
    title="netperf TCP stream (64 B), 1-7 VMs: ELVIS, fine-grained I/O scheduling only, Baseline, Baseline with affinity",
    source="ELVIS §4.7, Fig. 8; configurations §4.2 (seed 001_057b634fca7e35c3.txt)",
    profile="elvis",
    baselines=(r"\d+vm (Baseline|Baseline with affinity)",),
    rows=_fig8,
    runs=28,
    notes=[
        "Configurations as ELVIS §4.2 states them (eventpath.reproduce.elvis.layout); Fine-grained only is "
        "ELVIS with [host.io] exitless_requests = false and injected (emulated) interrupts.",
        "The published 2.7x and 3x are read as holding at every VM count above one; the paper plots a curve.",
        "No interposition is not one of Fig. 8's configurations (§4.7 compares ELVIS, fine-grained I/O "
        "scheduling, Baseline and Baseline with affinity); it is in elvis-fig4 and elvis-fig5.",
    ],
    axis=_VMS,
))


def _fig5(duration, step, counts=(1, 2, 4, 7, 10, 14)):
    rows = []
    for n in counts:
        lat = {}
        for c in ("baseline", "affinity", "elvis", "nointerp"):
            r = _run(c, n, "udp_rr", duration, step)
            means = [v["latency_us"]["mean"] for v in r.summary["vms"] if v["latency_us"]["mean"] is not None]
            lat[c] = sum(means) / len(means) if means else None
            rows.append(Measured(f"{n}vm {_CONFIG_NAMES[c]}", "latency_mean", "us", lat[c]))
        gain = lat["baseline"] - lat["elvis"] if None not in (lat["baseline"], lat["elvis"]) else None
        rows.append(Measured(f"{n}vm ELVIS", "latency_gain_vs_baseline", "us", gain))
        vs = 100.0 * (lat["elvis"] / lat["nointerp"] - 1.0) if lat["elvis"] and lat["nointerp"] else None
        rows.append(Measured(f"{n}vm ELVIS", "latency_vs_nointerp", "%", vs))
    gains = [r.simulated for r in rows if r.metric == "latency_gain_vs_baseline" and r.simulated is not None]
    rows.append(Measured("1-14 VMs", "max_latency_gain_vs_baseline", "us", max(gains) if gains else None))
    return rows


register(Experiment(
    id="elvis-fig5",
    title="netperf UDP_RR average latency, 1-14 VMs: ELVIS vs Baseline and No interposition (and Baseline with affinity)",
    source="ELVIS §4.4, Fig. 5 (seed 001_057b634fca7e35c3.txt)",
    profile="elvis",
    baselines=(r"\d+vm (Baseline|Baseline with affinity|No interposition)",),
    rows=_fig5,
    runs=24,
    notes=[
        "Baseline with affinity 'increased to 400 usec' (ELVIS §4.4) is read as its value at 14 VMs.",
        "VM counts 1, 2, 4, 7, 10, 14 of the paper's 1-14; above 7 VMs the second socket and a second I/O "
        "core are used (ELVIS §4.2).",
        "No interposition (ELVIS §4.2): each VM on an SR-IOV VF of the x520 (82599) with ELI, the I/O cores "
        "left unused; the VF facts are the elvis profile's [sriov] section (driver defaults and first-principles "
        "priors, none fitted). latency_vs_nointerp is ELVIS's latency relative to it: §4.4 says ELVIS stays "
        "'1% or less far' from it and is faster below 6 VMs (published 1 at 7, 10 and 14 VMs, a bound compared "
        "with the ±10-point bar; below 6 VMs a negative value is the published direction, no number).",
        "Every configuration's latency stays within about one receive-throttle interval of the others (the "
        "NICs' adaptive ITR, ixgbe's classes, and the VF's EITR set it), so the published order (ELVIS about "
        "No interposition, below Baseline, far below Baseline with affinity's 400 us) is not reproduced: "
        "Baseline comes out fastest, and no configuration queues for long (docs/model.md, ELVIS No "
        "interposition).",
        "ELVIS §4.4 traces the VF's extra latency to the NIC (bare-metal UDP_RR 22 % slower on a VF than on "
        "the PF); the model's VF path (sriov.dma_ns) is not set from that figure.",
    ],
    axis=_VMS,
))


#: VM counts at which ELVIS §4.3 says the I/O cores and the remote machine were not saturated: all for
#: netperf; Apache "stopped scaling after 10 VMs because our remote machine was saturated"; memcached's
#: one I/O core saturated after 3 VMs, the second (above 7 VMs) kept it scaling "up to 11 VMs".
_UNSATURATED = {"netperf": (1, 2, 3, 4, 7, 10, 14), "apache": (1, 2, 3, 4, 7, 10), "memcached": (1, 2, 3, 10)}


def _counts_label(counts):
    runs, start = [], None
    for i, n in enumerate(counts):
        if start is None:
            start = n
        if i + 1 == len(counts) or counts[i + 1] != n + 1:
            runs.append(f"{start}-{n}" if n > start else f"{n}")
            start = None
    return ",".join(runs)


def _fig4(duration, step, counts=(1, 2, 3, 4, 7, 10, 14)):
    rows = []
    gains = []
    for wl, key, unit in (("netperf", "gbps", "Gbit/s"), ("apache", "ops_per_s", "req/s"),
                          ("memcached", "ops_per_s", "ops/s")):
        ratio_ni = {}
        for n in counts:
            tput = {}
            for c in ("baseline", "affinity", "elvis", "nointerp"):
                r = _run(c, n, wl, duration, step)
                tput[c] = _total(r, key)
                rows.append(Measured(f"{wl} {n}vm {_CONFIG_NAMES[c]}", "throughput", unit, tput[c]))
                if c in ("elvis", "nointerp"):
                    exits = max(v["exits_total_per_s"] for v in r.summary["vms"])
                    # "ELVIS ... less than 800 exits/s" per VM (ELVIS §4.3 text around Fig. 4).
                    rows.append(Measured(f"{wl} {n}vm {_CONFIG_NAMES[c]}", "max_exits_per_vm", "exits/s", exits))
                    irqs = sum(v["interrupts_per_s"] for v in r.summary["vms"]) / len(r.summary["vms"])
                    rows.append(Measured(f"{wl} {n}vm {_CONFIG_NAMES[c]}", "interrupts_per_vm", "irq/s", irqs))
                if c == "elvis":
                    util = [t["util_pct"] for t in r.summary["host"]["io_threads"]]
                    rows.append(Measured(f"{wl} {n}vm ELVIS", "io_core_util_max", "%", max(util)))
            base = tput["baseline"] or None
            rows.append(Measured(f"{wl} {n}vm ELVIS", "vs_baseline", "x", tput["elvis"] / base if base else None))
            # Fig. 4 (right): ELVIS as a fraction of No interposition (a curve; no numbers).
            ni = tput["nointerp"] or None
            ratio_ni[n] = tput["elvis"] / ni if ni else None
            rows.append(Measured(f"{wl} {n}vm ELVIS", "vs_nointerp", "x", ratio_ni[n]))
        # ELVIS §4.3's largest loss against No interposition where nothing was saturated.
        ok = [ratio_ni[n] for n in _UNSATURATED[wl] if n in ratio_ni and ratio_ni[n] is not None]
        rows.append(Measured(f"{wl} {_counts_label([n for n in _UNSATURATED[wl] if n in counts])}vm ELVIS",
                             "max_loss_vs_nointerp", "%", 100.0 * (1.0 - min(ok)) if ok else None))
        if wl in ("netperf", "apache"):
            gains += [v for v in ratio_ni.values() if v is not None]
    # ELVIS §4.3's "up to 15% better than No Interposition" for netperf and Apache.
    rows.append(Measured("netperf+apache ELVIS", "max_gain_vs_nointerp", "%",
                         100.0 * (max(gains) - 1.0) if gains else None))
    return rows


register(Experiment(
    id="elvis-fig4",
    title="Throughput of netperf TCP 64 B, Apache and memcached, 1-14 VMs: ELVIS, Baseline, Baseline with affinity, "
          "No interposition",
    source="ELVIS §4.3, §4.6, Fig. 4 (seed 001_057b634fca7e35c3.txt)",
    profile="elvis",
    baselines=(r"\S+ \d+vm (Baseline|Baseline with affinity|No interposition)",),
    rows=_fig4,
    runs=84,
    notes=[
        "Published: ELVIS 1.2-3x Baseline (a range over benchmarks and VM counts, not per point, so the ratio "
        "rows carry no published value); netperf at 1 VM 1.45 (ELVIS) and 1.08 (Baseline) Gbit/s (§4.6).",
        "ELVIS exits stay under 800/s per VM (§4.3): compare max_exits_per_vm.",
        "VM counts 1, 2, 3, 4, 7, 10, 14 of the paper's 1-14.",
        "Memcached: the paper adds a second I/O core at 3 VMs; this layout adds it above 7 VMs as §4.2 states "
        "for every benchmark; io_core_util_max shows when the first one saturates.",
        "No interposition (ELVIS §4.2): each VM on an SR-IOV VF of the x520 (82599) with ELI — exitless "
        "interrupts, no host I/O thread — on ELVIS's cores, the I/O core of each socket left unused. Its VF "
        "facts are the elvis profile's [sriov] section: Linux 3.1 ixgbevf's default throttle start (50 us, held "
        "fixed), the 82599's VF count and EITR range, first-principles DMA and handler costs; none fitted.",
        "vs_nointerp is Fig. 4's right-hand curve (ELVIS as a fraction of No interposition; no numbers "
        "published). max_loss_vs_nointerp: ELVIS's largest shortfall against No interposition over the VM "
        "counts §4.3 calls unsaturated (netperf all; Apache up to 10 VMs; memcached 1-3 and 10), against "
        "'less than 1%, 10% and 30%' — bounds, given as their values with the ±10-point bar (memcached's 30 % "
        "is also §4.3's 'up to 30% worse'). max_gain_vs_nointerp: 'up to 15% better' for netperf and Apache "
        "(every count). Apache's gap is two fixed 50 us receive throttles in series on ELVIS's path "
        "(docs/model.md, ELVIS No interposition).",
        "interrupts_per_vm (all interrupts a guest takes, timer included): §4.3's 'from 30K to 10K' for "
        "netperf TCP stream is read at 1 VM. The VF's throttle is fixed at 50 us (at most 20K/s): ixgbevf's "
        "dynamic throttle, which would move between 100K, 20K and 8K per second, is not what the model runs "
        "(sriov.vf_itr_ns).",
    ],
    axis=_BENCH_VMS,
))
