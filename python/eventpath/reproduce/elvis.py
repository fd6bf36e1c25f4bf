"""ELVIS (seed 001_057b634fca7e35c3.txt) experiments."""

from __future__ import annotations

import functools
import json

from eventpath.reproduce.experiment import SCENARIOS, Axis, Experiment, Measured, register
from eventpath.reproduce.simulate import simulate

#: Notes every ELVIS experiment shares (issue 47's audit, /work/audit/elvis.md): what the
#: paper leaves unstated and what we chose, and what the model cannot represent.
_COMMON_NOTES = [
    "Kernels (ELVIS §4.1): 'The host ran Linux 3.1.0 and QEMU 0.14.0. The guests used only one VCPU and ran "
    "Linux 3.1.0.' No boot option is named (no idle=poll). The client ('a second identical server', §4.1) runs "
    "a kernel the paper does not state: assumed to be the host's, Linux 3.1.",
    "Virtio event index off on every virtio VM (vm.net.event_idx = false): QEMU 0.14 does not offer "
    "VIRTIO_RING_F_EVENT_IDX, so the 3.1 guest and vhost, which support it, do not negotiate it and suppress "
    "notifications by the rings' flags only. Source: qemu-kvm 0.14.1's hw/virtio.h (as imported in "
    "TritonDataCenter/illumos-kvm-cmd, commit 68396ea, 'Initial commit of d32e8d0b... from qemu-kvm', VERSION "
    "0.14.1) defines the transport bits VIRTIO_F_NOTIFY_ON_EMPTY (24) and VIRTIO_RING_F_INDIRECT_DESC (28) only, "
    "and DEFINE_VIRTIO_COMMON_FEATURES offers indirect_desc alone; the bit (29) came with QEMU's 'virtio: event "
    "index support' in mid-2011, after 0.14.0 (February 2011). The simulator has no profile-level default for "
    "it, so each layout and scenario sets it.",
    "Client: 16 cores (client.cores; §4.1 'a second identical server': 2 sockets x 8 cores), each VM's flow on "
    "its own core. How many ab or memslap processes ran on the client is unstated: one load generator per VM "
    "(our choice).",
    "Guest memory: its size is unstated and the 2 MB host huge pages (§4.1) are not modelled. Memory nodes "
    "(the profile's [numa], issue 48): §4.2's pinning of each VM's memory to its vCPU's socket is vm.memory_node "
    "in every configuration but Baseline, whose node 'was decided by the Linux kernel': the model's default, the "
    "node of the pCPU its vCPU is first placed on (first touch); a back end and a guest on different sockets pay "
    "the remote costs (model/io/queues.rs). The host scheduler still has no NUMA balancing level "
    "(sched/balance.rs). Baseline's N+1 (N+2) unpinned cores are pCPUs 0..N (N+1), i.e. socket 0 first, which "
    "the paper does not say (our choice).",
    "Run lengths are unstated in the paper (netperf's default is 10 s): the layouts run 0.5 s after a 0.1 s "
    "warm-up, the elvis-baseline-1vm scenarios 1.0 s; one seed (not measured for convergence here).",
    "structural: one 10 Gbit/s port at every VM count. §4.2 uses 'the second 10Gb port' above 7 VMs (Baseline "
    "'the two 10Gb ports'); the model has one host link and one client link, so rows above 7 VMs that the "
    "9.41 Gbit/s TCP goodput decides (netperf at 10 and 14 VMs) are left out of every published comparison.",
    "structural: the thread-based back end's per-packet host cost. The paper's numbers imply >= ~5 us of I/O-core "
    "time per 1448-byte segment under thread-based vhost (Baseline with affinity saturated after 2 VMs, §4.7) and "
    "<= ~1.2 us under ELVIS (one core at line rate): the difference is wake-ups, context switches among vhost "
    "threads, kick and irqfd signalling, a parameter that separates a baseline from the mechanism, to be sourced, "
    "not fitted (issue 47 item 5). Only the host path both share (tap_tx, dev_xmit, vhost.tx_packet_ns, NIC IRQ "
    "work) may be fitted, on the Baseline and Baseline-with-affinity rows.",
]


@functools.lru_cache(maxsize=None)
def _profile(profile: str) -> dict:
    from eventpath import _eventpath

    return json.loads(_eventpath.profile_json(profile))


def _cores_per_socket(profile: str = "elvis") -> int:
    """Cores per socket of ``profile`` (elvis: two sockets of 8-core Xeon E5-2660, ELVIS §4.1)."""
    return int(_profile(profile)["cpu"]["cores_per_socket"]["value"])


def _client_cores(profile: str = "elvis") -> int:
    """The client's cores: 'a second identical server' (ELVIS §4.1), the profile's host."""
    cpu = _profile(profile)["cpu"]
    return int(cpu["sockets"]["value"] * cpu["cores_per_socket"]["value"])


def _line_gbps(profile: str = "elvis") -> float:
    """TCP goodput at line rate of one port: a 1448-byte MSS (the MTU less 52 bytes of IP and TCP
    headers with timestamps, Linux's default) per frame of MTU + wire overhead."""
    nic = _profile(profile)["nic"]
    mtu, wire = nic["mtu_bytes"]["value"], nic["wire_overhead_bytes"]["value"]
    return nic["gbps"]["value"] * (mtu - 52.0) / (mtu + wire)


def _holds(cond: bool | None) -> float | None:
    """A direction row's value: 1.0 where it holds, 0.0 where not, None where it cannot be computed."""
    return None if cond is None else float(bool(cond))


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
    source="ELVIS §4.2 (Baseline), §4.3 (exits per second), §4.6 (1.08 Gbit/s) (seed 001_057b634fca7e35c3.txt)",
    profile="elvis",
    baselines=(r".*",),
    rows=_baseline_1vm,
    runs=3,
    notes=[
        "Baseline: host limited to N+1 = 2 cores, vCPU and vhost threads placed by the host scheduler "
        "(nothing pinned), as ELVIS §4.2 states.",
        "Every row is a Baseline row, so every published value here is a calibration row: §4.3's 142K / 109K / 146K "
        "exits per second at one VM and §4.6's 1.08 Gbit/s ('As shown in Figure 4').",
        "Apache and memcached run as TCP request/response servers (docs/model.md): ab opens and "
        "closes a TCP connection per request (its default), memslap keeps 32 persistent ones; one "
        "server thread on the vCPU that takes the interrupt; application costs are first-principles "
        "estimates (profiles/elvis.toml [app]), not fitted.",
        "Changes after issue 47's audit: the exit counts' source is §4.3 (was §4.4); every virtio VM runs "
        "without the event index (QEMU 0.14.0) and the client has 16 cores (§4.1), in all three scenarios.",
        *_COMMON_NOTES,
    ],
))


# --- ELVIS §4.2's configurations at N VMs (issue 14): Figs. 4, 5 and 8 ---

#: The benchmarks (ELVIS §4.3–4.4): netperf TCP stream with 64-byte writes, Apache (ab, 4 KB
#: page, 2 concurrent), memcached (memslap, 32 concurrent, 90 % get), netperf UDP_RR (1 byte:
#: §4.4 states no size, so netperf's default request and response of 1 byte).
WORKLOADS = {
    "netperf": {"kind": "tcp_stream", "message_bytes": 64},
    "apache": {"kind": "http", "concurrency": 2, "file_bytes": 4096, "keepalive": False},
    "memcached": {"kind": "memcached", "concurrency": 32, "get_ratio": 0.9, "value_bytes": 1024, "key_bytes": 64},
    "udp_rr": {"kind": "udp_rr", "request_bytes": 1, "response_bytes": 1},
}

#: The ELVIS prototype's devices per I/O worker (SOURCES.md: abelg/virtual_io_acceleration's
#: vhost.c, devices_per_worker = 7; the simulator's default for host.io.devices_per_worker).
_PROTOTYPE_DEVICES_PER_WORKER = 7


def _sockets(n: int, socket: int) -> list[int]:
    """VMs per socket: up to ``socket - 1`` (a core each, beside the socket's I/O core) on the
    first; above that the first socket stays full and the rest go to the second (ELVIS §4.2: 'for
    N <= 7 ... only ... the first CPU socket'; above 7 'configured the second socket exactly in the
    same way'), 10 VMs as 7 + 3 and 14 as 7 + 7."""
    per = socket - 1
    return [n] if n <= per else [per, n - per]


def layout(config, n, workload, seed=1, duration=None, profile="elvis"):
    """ELVIS §4.2's configuration `config` at `n` VMs running `workload` (a WORKLOADS key), on
    ``profile``'s sockets (the elvis profile's: 8 cores each).

    * ``baseline``: N+1 cores (N+2 above 7 VMs), stock vhost-net, nothing pinned;
    * ``affinity``: a core per vCPU and one I/O core per socket running all its VMs' vhost threads;
    * ``elvis``: a core per vCPU, one ELVIS I/O thread per socket's I/O core, exitless requests
      and ELI-delivered replies;
    * ``fine``: ELVIS's fine-grained I/O scheduling only (no polling, injected interrupts);
    * ``nointerp``: No interposition: the same cores as ELVIS, each VM with an SR-IOV VF of the
      port (its ring at ixgbevf's default 512 RX descriptors) and ELI — exitless interrupts, no
      host I/O thread; the I/O core of each socket is left unused, as ELVIS §4.2 states.

    The first socket is filled first (7 VMs on the elvis profile), then the second. Every virtio
    VM runs without the event index (QEMU 0.14.0 does not offer it); the client has the host's
    cores (§4.1: 'a second identical server').
    """
    socket = _cores_per_socket(profile)
    groups = _sockets(n, socket)
    vms = []
    io_cores = []
    irq_cpus = []
    for s, count in enumerate(groups):
        base = s * socket
        io_core = base + socket - 1 if len(groups) > 1 else count
        io_cores.append(io_core)
        for j in range(count):
            vm = {"name": f"vm{len(vms)}", "vcpus": 1, "net": {"queue_size": 512}, "workload": dict(WORKLOADS[workload])}
            if config != "baseline":
                vm["vcpu_pins"] = [base + j]
            if config == "affinity":
                vm["net"]["vhost_pin"] = io_core
            if config == "nointerp":
                vm["net"]["kind"] = "sriov_vf"  # IXGBEVF_DEFAULT_RXD = 512; EITR at sriov.vf_itr_ns
            else:
                vm["net"]["event_idx"] = False  # QEMU 0.14.0: no VIRTIO_RING_F_EVENT_IDX
            vm["interrupt_delivery"] = "eli" if config in ("elvis", "nointerp") else "emulated"
            if config != "baseline":
                # §4.2: 'The memory of each virtual machine was pinned to the CPU socket running
                # the VCPU thread' (ELVIS, Baseline with affinity; the others' set-ups are theirs).
                # Baseline's node 'was decided by the Linux kernel': the default, first touch.
                vm["memory_node"] = s
            vms.append(vm)
            irq_cpus.append(io_core)
    pcpus = n + len(groups) if config == "baseline" else (2 * socket if len(groups) > 1 else n + 1)
    sc = {"name": f"elvis-{config}-{workload}-{n}vm", "profile": profile, "seed": seed, "duration_s": duration or 0.5,
          "warmup_s": 0.1, "host": {"pcpus": pcpus}, "client": {"cores": _client_cores(profile)}, "vm": vms}
    if config in ("affinity", "elvis", "fine"):
        # "We also set the IRQ affinity to deliver the NIC's interrupts only to the I/O core"
        # (§4.2, ELVIS and Baseline with Affinity; fine-grained only: ELVIS's set-up, our choice).
        # One entry per device (the model splits the queues over the list in order), so that each
        # socket's VMs' queues interrupt that socket's I/O core.
        sc["host"]["nic_irq_cpus"] = io_cores if len(groups) == 1 else irq_cpus
    if config in ("elvis", "fine"):
        sc["host"]["io"] = {"handling": "elvis", "cores": io_cores}
        # One I/O thread per socket serving that socket's VMs (§4.2): the prototype fills each
        # worker with devices_per_worker (7) devices in order, which is the elvis profile's split;
        # another profile's sockets get their first socket's share.
        if groups[0] != _PROTOTYPE_DEVICES_PER_WORKER and (len(groups) > 1 or n > _PROTOTYPE_DEVICES_PER_WORKER):
            sc["host"]["io"]["devices_per_worker"] = groups[0]
        if config == "fine":
            sc["host"]["io"]["exitless_requests"] = False
    return sc


def _total(r, key):
    vals = [v["throughput"][key] for v in r.summary["vms"]]
    return sum(v for v in vals if v is not None)


def _mean_exits(r):
    """All exits per second of a VM, the mean over the VMs."""
    vals = [v["exits_total_per_s"] for v in r.summary["vms"] if v["exits_total_per_s"] is not None]
    return sum(vals) / len(vals) if vals else None


def _io_turns_with_work(r):
    """The largest share, over the ELVIS I/O threads, of their turns (a look at one queue) that found
    work: 100 - host.io_threads[].empty_poll_pct. A polling thread is busy 100 % of the time at
    every load (util_pct), so that cannot show saturation; a saturated one finds work on every
    turn (near 100 %), an idle one on few."""
    shares = [100.0 - t["empty_poll_pct"] for t in r.summary["host"]["io_threads"] if t["empty_poll_pct"] is not None]
    return max(shares) if shares else None


def _run(config, n, workload, duration, step):
    label = f"{config} {workload} {n} VMs"
    r = simulate(layout(config, n, workload, duration=duration), what=label, duration=duration)
    step(label)
    return r


def _ratio(a, b):
    return a / b if a is not None and b else None


_CONFIG_NAMES = {"baseline": "Baseline", "affinity": "Baseline with affinity", "elvis": "ELVIS",
                 "fine": "Fine-grained only", "nointerp": "No interposition"}

#: Figs. 5 and 8's x-axis, the VMs ("3vm ELVIS"); Fig. 4's also per benchmark ("apache 3vm ELVIS").
_VMS = Axis(r"(?P<x>\d+)vm (?P<series>.+)", "VMs")
_BENCH_VMS = Axis(r"(?P<facet>\w+) (?P<x>\d+)vm (?P<series>.+)", "VMs")

#: The configurations of ELVIS Fig. 8 (§4.7): No interposition is not among them.
_FIG8_CONFIGS = ("baseline", "affinity", "elvis", "fine")

#: "Similar" (§4.7 F2), "flat" and "rising" (§4.3, §4.7), "almost perfectly" (§4.3), "saturated"
#: (§4.3, §4.7), "approaching line rate" (§4.7): the thresholds are our choice (the paper gives none).
_SIMILAR = 0.10
_FLAT = 1.10
_LINEAR = 0.90
_SATURATED_PCT = 95.0


def _fig8(duration, step, counts=(1, 2, 3, 4, 5, 6, 7)):
    rows = []
    t = {c: {} for c in _FIG8_CONFIGS}
    for n in counts:
        runs = {c: _run(c, n, "netperf", duration, step) for c in _FIG8_CONFIGS}
        gbps = {c: _total(runs[c], "gbps") for c in _FIG8_CONFIGS}
        label = f"{n}vm"
        for c in _FIG8_CONFIGS:
            t[c][n] = gbps[c]
            rows.append(Measured(f"{label} {_CONFIG_NAMES[c]}", "throughput", "Gbit/s", gbps[c]))
        base = gbps["baseline"] or None
        rows.append(Measured(f"{label} Fine-grained only", "vs_baseline", "x", _ratio(gbps["fine"], base)))
        rows.append(Measured(f"{label} ELVIS", "vs_baseline", "x", _ratio(gbps["elvis"], base)))
        aff = gbps["affinity"] or None
        rows.append(Measured(f"{label} ELVIS", "vs_affinity", "%",
                             100.0 * (gbps["elvis"] / aff - 1.0) if aff else None))
        # Baseline with affinity's I/O core (pCPU n, every vhost thread pinned there): busy share.
        util = runs["affinity"].summary["host"]["pcpu_util_pct"]
        rows.append(Measured(f"{label} Baseline with affinity", "io_core_util", "%", util[n] if n < len(util) else None))
        # §4.7: Baseline below Baseline with affinity up to 3 VMs, above it from 4 (baselines' order).
        if n >= 2:
            metric = "below" if n <= 3 else "above"
            below = gbps["baseline"] < gbps["affinity"]
            rows.append(Measured(f"{label} Baseline vs Baseline with affinity", metric, "holds",
                                 _holds(below if n <= 3 else not below)))
        if n == 1:
            # §4.7: 'with a single VM, Baseline with Affinity performance was similar to finegrained
            # I/O scheduling' (within _SIMILAR of each other: our reading of 'similar').
            r = _ratio(gbps["fine"], aff)
            rows.append(Measured("1vm Fine-grained only vs Baseline with affinity", "similar", "holds",
                                 _holds(None if r is None else abs(r - 1.0) <= _SIMILAR)))
    multi = [n for n in counts if n >= 2]
    if multi:
        lo, hi = f"{multi[0]}-{multi[-1]}vm", multi
        fine = [_ratio(t["fine"][n], t["baseline"][n]) for n in hi]
        elvis = [_ratio(t["elvis"][n], t["baseline"][n]) for n in hi]
        ok = lambda xs: None not in xs and bool(xs)  # noqa: E731
        # §4.7: fine-grained scheduling's boost '1.4x-2.7x' over Baseline and ELVIS's '3x', 'when
        # running more than one VM': the range's ends and the maxima over 2-7 VMs.
        rows.append(Measured(f"{lo} Fine-grained only", "min_vs_baseline", "x", min(fine) if ok(fine) else None))
        rows.append(Measured(f"{lo} Fine-grained only", "max_vs_baseline", "x", max(fine) if ok(fine) else None))
        rows.append(Measured(f"{lo} ELVIS", "max_vs_baseline", "x", max(elvis) if ok(elvis) else None))
        # §4.7 (F5, F8): Baseline with affinity's I/O core 'became saturated after 2 VMs': its
        # throughput flat from 2 VMs (every later count within _FLAT of it).
        aff2 = t["affinity"].get(2)
        later = [t["affinity"][n] for n in hi if n > 2]
        rows.append(Measured(f"{multi[1] if len(multi) > 1 else 3}-{multi[-1]}vm Baseline with affinity",
                             "flat_from_2vm", "holds",
                             _holds(max(later) <= _FLAT * aff2 if aff2 and later else None)))
        # §4.7: 'Baseline was able to scale slowly up-to 7 VMs': rising at every step.
        b = [t["baseline"][n] for n in counts]
        rows.append(Measured(f"{counts[0]}-{counts[-1]}vm Baseline", "rising", "holds",
                             _holds(all(y > x for x, y in zip(b, b[1:])))))
        # §4.7: 'The improvement of ELVIS against fine-grained I/O scheduling started decreasing
        # after 5 VMs because ELVIS was approaching line rate': ELVIS/fine at 6 and 7 VMs below 5's.
        if {5, 6, 7} <= set(counts):
            r = {n: _ratio(t["elvis"][n], t["fine"][n]) for n in (5, 6, 7)}
            rows.append(Measured("5-7vm ELVIS vs Fine-grained only", "falls_after_5vm", "holds",
                                 _holds(None if None in r.values() else r[6] < r[5] and r[7] < r[5])))
        # §4.7 'approaching line rate' (§4.8: ELVIS NUMA-aligned 'achieved line rate with 6 VMs'):
        # ELVIS at 6 and 7 VMs at _LINEAR or more of one port's TCP goodput.
        line = _line_gbps()
        for n in (6, 7):
            if n in counts:
                rows.append(Measured(f"{n}vm ELVIS", "near_line_rate", "holds", _holds(t["elvis"][n] >= _LINEAR * line)))
    return rows


register(Experiment(
    id="elvis-fig8",
    title="netperf TCP stream (64 B), 1-7 VMs: ELVIS, fine-grained I/O scheduling only, Baseline, Baseline with affinity",
    source="ELVIS §4.7, Fig. 8; configurations §4.2 (seed 001_057b634fca7e35c3.txt)",
    profile="elvis",
    baselines=(r"\d+vm (Baseline|Baseline with affinity)", r"\d+vm Baseline vs Baseline with affinity",
               r"\d+-\d+vm (Baseline|Baseline with affinity)"),
    rows=_fig8,
    runs=28,
    notes=[
        "Configurations as ELVIS §4.2 states them (eventpath.reproduce.elvis.layout); Fine-grained only is "
        "ELVIS with [host.io] exitless_requests = false and injected (emulated) interrupts, its NIC interrupts on "
        "the I/O core as ELVIS's (§4.7 does not say: our choice).",
        "Roles: Baseline and Baseline with affinity are the paper's baselines (unmodified KVM, §4.2): their values, "
        "their order and their regime are calibration rows; ELVIS and Fine-grained only are mechanisms (predictions).",
        "Calibration (baselines' order and regime, §4.7): Baseline below Baseline with affinity at 2 and 3 VMs "
        "('lower performance ... up-to 3 VMs'; at 1 VM the text puts them within about 1 %: 1.08 Gbit/s against "
        "1.45/1.33, so no row there), above it at 4-7 ('performed and scaled better ... when running more than 3 "
        "VMs'); Baseline with affinity flat from 2 VMs (every later count within 10 % of its 2-VM value: our "
        "threshold) and its I/O core busy at least 95 % from 3 VMs ('became saturated after 2 VMs'; io_core_util, "
        "the pinned core's pCPU utilisation); Baseline rising at every step to 7 VMs ('able to scale slowly').",
        "Predictions: 'Finegrained I/O scheduling and ELVIS improved Baseline throughput by 2.7x and 3x respectively "
        "when running more than one VM' and 'a performance boost of 1.4x-2.7x over Baseline' are the extremes of "
        "curves over 2-7 VMs, not a value at every count: min_vs_baseline (1.4) and max_vs_baseline (2.7) of "
        "fine-grained scheduling and max_vs_baseline (3.0) of ELVIS, each compared as a value at the bar (an "
        "at_most would pass a curve that never leaves 1x). ELVIS 33 % above Baseline with affinity at 1 VM; "
        "Fine-grained only similar to Baseline with affinity at 1 VM (within 10 %: our reading of 'similar'); "
        "ELVIS/fine at 6 and 7 VMs below its value at 5 ('started decreasing after 5 VMs'); ELVIS at 6 and 7 VMs "
        "at 90 % or more of one port's TCP goodput (9.41 Gbit/s: our threshold for 'approaching line rate', §4.8 "
        "'achieved line rate with 6 VMs').",
        "Inconsistency: §4.3 says Baseline with affinity 'didn't scale at all', while §4.7 has it above the rising "
        "Baseline up to 3 VMs and saturated only after 2; the flat row starts at 2 VMs.",
        "No interposition is not one of Fig. 8's configurations (§4.7 compares ELVIS, fine-grained I/O "
        "scheduling, Baseline and Baseline with affinity); it is in elvis-fig4 and elvis-fig5.",
        *_COMMON_NOTES,
    ],
    axis=_VMS,
))


def _fig5(duration, step, counts=(1, 2, 4, 7, 10, 14)):
    rows = []
    gains = {}
    for n in counts:
        lat = {}
        for c in ("baseline", "affinity", "elvis", "nointerp"):
            r = _run(c, n, "udp_rr", duration, step)
            means = [v["latency_us"]["mean"] for v in r.summary["vms"] if v["latency_us"]["mean"] is not None]
            lat[c] = sum(means) / len(means) if means else None
            rows.append(Measured(f"{n}vm {_CONFIG_NAMES[c]}", "latency_mean", "us", lat[c]))
        gain = lat["baseline"] - lat["elvis"] if None not in (lat["baseline"], lat["elvis"]) else None
        gains[n] = gain
        rows.append(Measured(f"{n}vm ELVIS", "latency_gain_vs_baseline", "us", gain))
        vs = 100.0 * (lat["elvis"] / lat["nointerp"] - 1.0) if lat["elvis"] and lat["nointerp"] else None
        rows.append(Measured(f"{n}vm ELVIS", "latency_vs_nointerp", "%", vs))
        if n < 6:
            # §4.4: 'when running less than 6 VMs, ELVIS again out-performs No Interposition'.
            rows.append(Measured(f"{n}vm ELVIS vs No interposition", "below", "holds",
                                 _holds(None if vs is None else vs < 0.0)))
    multi = [n for n in counts if n >= 2]
    g = [gains[n] for n in multi if gains[n] is not None]
    if multi:
        rows.append(Measured(f"{multi[0]}-{multi[-1]} VMs", "max_latency_gain_vs_baseline", "us", max(g) if g else None))
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
        "Roles: Baseline, Baseline with affinity and No interposition are baselines (calibration); ELVIS and every "
        "comparison involving it are predictions. No interposition (SR-IOV with ELI [16], the authors' prior work) "
        "is a reference whose absolute values are driver and NIC properties; every ELVIS-vs-No-interposition gap "
        "stays a prediction.",
        "Calibration: Baseline with affinity 'did not scale and latency increased to 400 usec because the I/O "
        "threads starved each other' (§4.4), read as its value at 7 and 14 VMs (7 VMs per I/O core at both).",
        "Predictions: ELVIS 8 us below Baseline at 1 VM; 'up to 28usec' with multiple VMs as the largest gain over "
        "2-14 VMs; 'keep latency 1% or less far from No Interposition' as latency_vs_nointerp within [-1, 1] % "
        "(the ±10-point bar beyond) at 7, 10 and 14 VMs, where ELVIS is not said to be faster; 'when running less "
        "than 6 VMs, ELVIS again out-performs No Interposition' as a direction at 1, 2 and 4 VMs.",
        "UDP_RR request and response of 1 byte (netperf's default; §4.4 states no size: our choice).",
        "VM counts 1, 2, 4, 7, 10, 14 of the paper's 1-14; above 7 VMs the second socket and a second I/O "
        "core are used (ELVIS §4.2), the first socket keeping its 7.",
        "No interposition (ELVIS §4.2): each VM on an SR-IOV VF of the x520 (82599) with ELI, the I/O cores "
        "left unused; the VF facts are the elvis profile's [sriov] section (driver defaults and first-principles "
        "priors, none fitted).",
        "structural: the VF's interrupt throttle. Linux 3.1's ixgbevf throttles dynamically (itr_setting = 1: "
        "100K / 20K / 8K interrupts/s classes, starting at 20K); the model's dynamic VF throttle has the later "
        "driver's 12K class, so the VF runs fixed at the 3.1 driver's start, 50 us, which puts No interposition "
        "at about 49 us at every count and reverses the published order (ELVIS about No interposition, below "
        "Baseline).",
        "structural: no starvation among vhost threads on one core. Baseline with affinity's 400 us comes from "
        "I/O threads starving each other (§4.4); the model's CFS shares the I/O core without the queueing that "
        "would produce it (an 8x miss).",
        "ELVIS §4.4 traces the VF's extra latency to the NIC (bare-metal UDP_RR 22 % slower on a VF than on "
        "the PF, base: the PF's latency, SR-IOV enabled): a testbed fact not reproduced here (no bare-metal PF/VF "
        "run); the model's VF path (sriov.dma_ns) is not set from that figure.",
        *_COMMON_NOTES,
    ],
    axis=_VMS,
))


#: VM counts at which ELVIS §4.3 says the I/O cores and the remote machine were not saturated,
#: among those the model can reproduce: netperf up to 7 (10 and 14 need the second 10 Gb port,
#: which the model lacks); Apache "stopped scaling after 10 VMs because our remote machine was
#: saturated"; memcached's one I/O core saturated at 3 VMs, and at 10 the first socket's core
#: still serves 7.
_UNSATURATED = {"netperf": (1, 2, 3, 4, 7), "apache": (1, 2, 3, 4, 7, 10), "memcached": (1, 2, 3)}

#: The counts whose netperf rows a 10 Gbit/s port decides for every configuration (one port
#: modelled where the paper used two): left out of every comparison.
_ONE_PORT_CAPPED = {"netperf": (10, 14)}


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
    gains_ni = []
    vs_base = []
    line = _line_gbps()
    for wl, key, unit in (("netperf", "gbps", "Gbit/s"), ("apache", "ops_per_s", "req/s"),
                          ("memcached", "ops_per_s", "ops/s")):
        ratio_ni = {}
        t = {c: {} for c in ("baseline", "affinity", "elvis", "nointerp")}
        exits = {c: {} for c in ("baseline", "affinity")}
        ratio_b = {}
        turns = {}
        capped = _ONE_PORT_CAPPED.get(wl, ())
        for n in counts:
            for c in ("baseline", "affinity", "elvis", "nointerp"):
                r = _run(c, n, wl, duration, step)
                t[c][n] = _total(r, key)
                cfg = f"{wl} {n}vm {_CONFIG_NAMES[c]}"
                rows.append(Measured(cfg, "throughput", unit, t[c][n]))
                if c in ("baseline", "affinity"):
                    # §4.3: exits per second per VM (all exits, the mean over the VMs).
                    exits[c][n] = _mean_exits(r)
                    rows.append(Measured(cfg, "exits_total", "exits/s", exits[c][n]))
                if c in ("elvis", "nointerp"):
                    # "ELVIS ... less than 800 exits/second" per VM (§4.3): the largest VM's.
                    mx = max(v["exits_total_per_s"] for v in r.summary["vms"])
                    rows.append(Measured(cfg, "max_exits_per_vm", "exits/s", mx))
                    irqs = sum(v["interrupts_per_s"] for v in r.summary["vms"]) / len(r.summary["vms"])
                    rows.append(Measured(cfg, "interrupts_per_vm", "irq/s", irqs))
                if c == "elvis":
                    turns[n] = _io_turns_with_work(r)
                    rows.append(Measured(cfg, "io_turns_with_work", "%", turns[n]))
            ratio_b[n] = _ratio(t["elvis"][n], t["baseline"][n])
            rows.append(Measured(f"{wl} {n}vm ELVIS", "vs_baseline", "x", ratio_b[n]))
            if n not in capped and ratio_b[n] is not None:
                vs_base.append(ratio_b[n])
            # Fig. 4 (right): ELVIS as a fraction of No interposition (a curve; no numbers).
            ratio_ni[n] = _ratio(t["elvis"][n], t["nointerp"][n])
            rows.append(Measured(f"{wl} {n}vm ELVIS", "vs_nointerp", "x", ratio_ni[n]))
        # ELVIS §4.3's largest loss against No interposition where nothing was saturated.
        unsat = [n for n in _UNSATURATED[wl] if n in counts]
        ok = [ratio_ni[n] for n in unsat if ratio_ni[n] is not None]
        rows.append(Measured(f"{wl} {_counts_label(unsat)}vm ELVIS", "max_loss_vs_nointerp", "%",
                             100.0 * (1.0 - min(ok)) if ok else None))
        if wl in ("netperf", "apache"):
            gains_ni += [v for n, v in ratio_ni.items() if v is not None and n not in capped]
        usable = [n for n in counts if n not in capped]
        span = f"{wl} {_counts_label(usable)}vm"
        # §4.3 A2: 'ELVIS always scaled much faster than Baseline up to 14 VMs': ELVIS/Baseline at
        # every count above one above its value at one VM.
        if 1 in counts and len(usable) > 1:
            rows.append(Measured(f"{span} ELVIS", "gain_grows", "holds",
                                 _holds(None if None in [ratio_b[n] for n in usable] else
                                        all(ratio_b[n] > ratio_b[1] for n in usable if n > 1))))
        # §4.3 A3 (baselines' regime, calibration): 'Baseline with Affinity didn't scale at all'
        # (flat from 2 VMs: every later count within _FLAT of 2's), 'Baseline did better than
        # Baseline with Affinity' (above it at 7 and 14 VMs).
        later = [n for n in usable if 2 < n <= 7]
        if 2 in counts and later:
            # (Up to 7 VMs: above 7 a second socket's I/O core joins.)
            a2 = t["affinity"][2]
            rows.append(Measured(f"{wl} 2-{later[-1]}vm Baseline with affinity", "flat_from_2vm", "holds",
                                 _holds(max(t["affinity"][n] for n in later) <= _FLAT * a2 if a2 else None)))
        for n in (7, 14):
            if n in usable:
                rows.append(Measured(f"{wl} {n}vm Baseline vs Baseline with affinity", "above", "holds",
                                     _holds(t["baseline"][n] > t["affinity"][n])))
        # §4.3 A13 (calibration): 'The number of exits per VM for Baseline and Baseline with Affinity
        # decreased as the number of VMs increased': fewer per VM at 7 VMs than at 1.
        if 1 in counts and 7 in counts:
            for c in ("baseline", "affinity"):
                e1, e7 = exits[c][1], exits[c][7]
                rows.append(Measured(f"{wl} 1-7vm {_CONFIG_NAMES[c]}", "exits_per_vm_fall", "holds",
                                     _holds(None if e1 is None or e7 is None else e7 < e1)))
        # §4.3 A4: 'ELVIS managed to scale almost perfectly for Netperf and Apache' (each count at
        # _LINEAR or more of N times one VM's, netperf's capped at one port's goodput; netperf up to 7,
        # Apache up to 10: 'Apache stopped scaling after 10 VMs because our remote machine was
        # saturated', a client-bound regime seen only under ELVIS: a prediction, not a client fit).
        e1 = t["elvis"].get(1)
        if wl in ("netperf", "apache") and e1:
            top = 7 if wl == "netperf" else 10
            ns = [n for n in usable if 1 < n <= top]
            cap = line if wl == "netperf" else float("inf")
            rows.append(Measured(f"{wl} 1-{top}vm ELVIS", "near_linear", "holds",
                                 _holds(all(t["elvis"][n] >= _LINEAR * min(n * e1, cap) for n in ns))))
        if wl == "apache" and {10, 14} <= set(counts):
            rows.append(Measured("apache 10-14vm ELVIS", "stops_after_10vm", "holds",
                                 _holds(t["elvis"][14] <= 1.05 * t["elvis"][10])))
        # §4.3 A5: 'For Memcached, ELVIS scaled up to 3 VMs. At this point, the I/O core was saturated
        # ... With more than 7 VMs, ELVIS used an additional dedicated core and Memcached continued
        # scaling up to 11 VMs': saturated from 3 VMs (its I/O thread finds work on _SATURATED_PCT of
        # its turns), flat 3 -> 7, rising 7 -> 10.
        if wl == "memcached":
            for n in (3, 4, 7):
                if n in counts:
                    rows.append(Measured(f"memcached {n}vm ELVIS", "io_saturated", "holds",
                                         _holds(None if turns[n] is None else turns[n] >= _SATURATED_PCT)))
            if {3, 7} <= set(counts) and t["elvis"][3]:
                rows.append(Measured("memcached 3-7vm ELVIS", "flat", "holds",
                                     _holds(t["elvis"][7] <= _FLAT * t["elvis"][3])))
            if {7, 10} <= set(counts):
                rows.append(Measured("memcached 7-10vm ELVIS", "rising", "holds",
                                     _holds(t["elvis"][10] > _FLAT * t["elvis"][7])))
    # ELVIS §4.3's "up to 15% better than No Interposition" for netperf and Apache.
    rows.append(Measured("netperf+apache ELVIS", "max_gain_vs_nointerp", "%",
                         100.0 * (max(gains_ni) - 1.0) if gains_ni else None))
    # §4.3's 'ELVIS improved Baseline throughput by 6%-200%': the extremes of ELVIS/Baseline over
    # every benchmark and count the model can run (netperf at 10 and 14 VMs left out).
    rows.append(Measured("all benchmarks ELVIS", "min_vs_baseline", "x", min(vs_base) if vs_base else None))
    rows.append(Measured("all benchmarks ELVIS", "max_vs_baseline", "x", max(vs_base) if vs_base else None))
    return rows


register(Experiment(
    id="elvis-fig4",
    title="Throughput of netperf TCP 64 B, Apache and memcached, 1-14 VMs: ELVIS, Baseline, Baseline with affinity, "
          "No interposition",
    source="ELVIS §4.3, §4.6, Fig. 4 (seed 001_057b634fca7e35c3.txt)",
    profile="elvis",
    baselines=(r"\S+ \d+vm (Baseline|Baseline with affinity|No interposition)",
               r"\S+ \d+vm Baseline vs Baseline with affinity", r"\S+ \d+-\d+vm (Baseline|Baseline with affinity)"),
    rows=_fig4,
    runs=84,
    notes=[
        "Roles: Baseline, Baseline with affinity and No interposition are baselines (calibration): their values, "
        "orders and stated regimes; ELVIS and every gain, ratio or direction involving it are predictions. No "
        "interposition's 30K interrupts/s per guest is a VF driver and NIC property (calibration); ELVIS's 10K is "
        "a prediction.",
        "Calibration: the one-VM Baseline values of elvis-baseline-1vm (142K / 109K / 146K exits/s, 1.08 Gbit/s) "
        "are included from that experiment, not repeated; Baseline's 53K / 39K / 60K exits/s per VM at 7 VMs "
        "(§4.3); exits per VM of Baseline and Baseline with affinity fewer at 7 VMs than at 1 ('decreased as the "
        "number of VMs increased'); Baseline with affinity flat from 2 VMs (within 10 %: our threshold) and below "
        "Baseline at 7 and 14 VMs ('didn't scale at all'; 'Baseline did better than Baseline with Affinity').",
        "Predictions: §4.3's 'ELVIS improved Baseline throughput by 6%-200%' as the extremes of ELVIS/Baseline over "
        "every benchmark and count (min 1.06, max 3.0; netperf at 10 and 14 VMs left out). The abstract, §4 and "
        "§6 say '1.2x-3x' and §1 'in the worst case ... by 1.4x', which conflict with §4.3's; §4.3's are the ones "
        "beside Fig. 4. ELVIS/Baseline above its one-VM value at every count ('always scaled much faster than "
        "Baseline up to 14 VMs'); ELVIS near-linear (90 % of N x one VM's or more, netperf's capped at one port's "
        "9.41 Gbit/s goodput) for netperf to 7 and Apache to 10 VMs ('scale almost perfectly'); Apache at 14 VMs "
        "within 5 % of 10 ('stopped scaling after 10 VMs because our remote machine was saturated': a client "
        "regime seen only under ELVIS, so a prediction; the summary reports no client CPU, so the client's "
        "saturation itself is not a row); memcached's I/O core saturated from 3 VMs, its throughput flat 3 -> 7 "
        "and rising 7 -> 10 VMs ('scaled up to 3 VMs ... With more than 7 VMs, ELVIS used an additional dedicated "
        "core and Memcached continued scaling up to 11 VMs'; the second core comes above 7 VMs, not at 3).",
        "ELVIS against No interposition (§4.3): max_loss_vs_nointerp, ELVIS's largest shortfall over the counts "
        "§4.3 calls unsaturated, against 'less than 1%, 10% and 30%' — at_most 1 % for netperf (1-7 VMs), at_most "
        "10 % for Apache (1-10), and memcached's 30 % as a value over 1-3 VMs ('up to 30% worse ... when we "
        "allocated sufficient cores'; at 10 VMs the first socket's core still serves 7). max_gain_vs_nointerp: "
        "'up to 15% better' for netperf and Apache. interrupts_per_vm (all interrupts a guest takes, timer "
        "included: the paper's scope is unstated): §4.3's 'from 30K to 10K' for netperf, read at 1 VM (the count "
        "is unstated). ELVIS's exits per VM at_most 800 at 1 and 7 VMs for every benchmark ('less than 800 "
        "exits/second'; 'With 7 VMs ELVIS continued handling less than 800'); §4.3's '500 of them are related to "
        "timer interrupts' is not a row (which exit reasons it counts is unstated).",
        "io_turns_with_work: the share of the ELVIS I/O thread's turns that found work (100 - "
        "host.io_threads[].empty_poll_pct; the largest over the I/O threads). It replaces io_core_util_max: a "
        "polling thread is 100 % busy at every load, so its utilisation cannot show saturation. 'Saturated' is "
        "read as 95 % or more of its turns finding work (our threshold).",
        "VM counts 1, 2, 3, 4, 7, 10, 14 of the paper's 1-14; above 7 VMs the first socket keeps its 7 VMs and the "
        "second socket takes the rest with its own I/O core (§4.2).",
        "No interposition (ELVIS §4.2): each VM on an SR-IOV VF of the x520 (82599) with ELI — exitless "
        "interrupts, no host I/O thread — on ELVIS's cores, the I/O core of each socket left unused. Its VF "
        "facts are the elvis profile's [sriov] section; none fitted.",
        "structural: the VF's interrupt throttle. Linux 3.1's ixgbevf is dynamic (100K / 20K / 8K interrupts/s, "
        "start 20K); the model's dynamic VF throttle has the later driver's 12K class, so the VF runs fixed at the "
        "3.1 driver's start (50 us, at most 20K interrupts/s): No interposition cannot reach §4.3's 30K, and "
        "Apache's gap to ELVIS is two fixed 50 us throttles in series (docs/model.md, ELVIS No interposition).",
        "Not reproduced (no experiment here): §4.5 Fig. 6 (filebench on a 1 GB ramdisk through virtio-blk; its "
        "Baseline values are calibration data for later: 18,715 ops/s and 0.4 ms at 1 VM, 8,862 ops/s per VM and "
        "0.8 ms at 14 VMs; Baseline with affinity's I/O core 'saturated immediately', latency rising to 3.0 s; "
        "ELVIS 21,613 ops/s per VM at 0.3 ms is a prediction); §4.6 Fig. 7 (7 VMs mixing TCP stream and UDP_RR; "
        "only its 1.45 / 1.08 Gbit/s sentence is used); §4.8 Fig. 9 is elvis-fig9; §4.4's bare-metal PF-against-VF UDP_RR "
        "(+22 %, base the PF's latency).",
        "structural: the ELVIS prototype's per-queue work limit. The model's max_work = 64 requests is our choice; "
        "the prototype's net.c has only VHOST_NET_WEIGHT (bytes) and no vhost_can_continue.",
        *_COMMON_NOTES,
    ],
    axis=_BENCH_VMS,
))


def numa_layout(placement, n, seed=1, duration=None, profile="elvis"):
    """ELVIS §4.8's Fig. 9 configurations at ``n`` VMs of netperf TCP stream, one ELVIS I/O core:
    ``aligned`` is ELVIS's layout (the guests and the I/O core on the first socket, §4.2);
    ``unaligned`` keeps the guests and their memory on the first socket and moves the I/O core (and
    the NIC's interrupts with it) to the first core of the second: 'we ran all the guests in the one
    socket but handled I/O in the other socket'. Both on the host's every core."""
    sc = layout("elvis", n, "netperf", seed=seed, duration=duration, profile=profile)
    socket = _cores_per_socket(profile)
    sc["name"] = f"elvis-numa-{placement}-{n}vm"
    sc["host"]["pcpus"] = 2 * socket
    if placement == "unaligned":
        sc["host"]["io"]["cores"] = [socket]
        sc["host"]["nic_irq_cpus"] = [socket]
    return sc


def _fig9(duration, step, counts=(1, 2, 3, 4, 5, 6, 7)):
    rows = []
    t = {p: {} for p in ("aligned", "unaligned")}
    names = {"aligned": "NUMA aligned", "unaligned": "NUMA unaligned"}
    for n in counts:
        for p in t:
            label = f"{names[p]} {n} VMs"
            r = simulate(numa_layout(p, n, duration=duration), what=label, duration=duration)
            step(label)
            t[p][n] = _total(r, "gbps")
            rows.append(Measured(f"{n}vm {names[p]}", "throughput", "Gbit/s", t[p][n]))
            io = r.summary["host"]["io_threads"]
            rows.append(Measured(f"{n}vm {names[p]}", "io_remote_busy", "%", io[0]["remote_busy_pct"] if io else None))
    if 1 in counts:
        a, u = t["aligned"][1], t["unaligned"][1]
        rows.append(Measured("1vm NUMA aligned", "vs_unaligned", "%", 100.0 * (a / u - 1.0) if a and u else None))
    if 7 in counts:
        rows.append(Measured("7vm NUMA unaligned", "vs_aligned", "x", _ratio(t["unaligned"][7], t["aligned"][7])))
    if 6 in counts:
        rows.append(Measured("6vm NUMA aligned", "near_line_rate", "holds", _holds(t["aligned"][6] >= _LINEAR * _line_gbps())))
    if {5, 6, 7} <= set(counts):
        u5 = t["unaligned"][5]
        rows.append(Measured("6-7vm NUMA unaligned", "flat_from_5vm", "holds",
                             _holds(max(t["unaligned"][6], t["unaligned"][7]) <= _FLAT * u5 if u5 else None)))
    return rows


register(Experiment(
    id="elvis-fig9",
    title="netperf TCP stream (64 B), 1-7 VMs on one ELVIS I/O core: NUMA aligned against unaligned",
    source="ELVIS §4.8, Fig. 9; configurations §4.2 (seed 001_057b634fca7e35c3.txt)",
    profile="elvis",
    baselines=(),
    rows=_fig9,
    runs=14,
    notes=[
        "Configurations (eventpath.reproduce.elvis.numa_layout): NUMA aligned is ELVIS's layout of elvis-fig8 (a "
        "core per vCPU on the first socket, its I/O core after them, each VM's memory on the first socket); NUMA "
        "unaligned moves the I/O core, and the NIC's interrupts with it, to the second socket's first core (§4.8: "
        "'ran all the guests in the one socket but handled I/O in the other socket'); both on all 16 cores.",
        "Roles: both configurations are ELVIS (a mechanism), so every row is a prediction: 'even for a single VM, "
        "NUMA aligned performed 26% better than NUMA unaligned' (base: unaligned's throughput), 'NUMA unaligned ... "
        "achieved only 70% of NUMA aligned performance with 7 VMs' (base: aligned's), 'NUMA aligned ... achieved "
        "line rate with 6 VMs' (90 % or more of one port's 9.41 Gbit/s TCP goodput: our threshold) and 'NUMA "
        "unaligned was saturated after 5 VMs' (its throughput at 6 and 7 VMs at most 10 % above its 5-VM value: "
        "our threshold for flat).",
        "The remote costs are the elvis profile's [numa] priors (a QPI hop's latency from Intel's Memory Latency "
        "Checker readings, the virtqueue's lines from vhost.c, a copy's bandwidth from the line-fill buffers), "
        "never fitted to this figure: each packet a back end serves from another node pays its ring lines and "
        "its payload's lines, and each packet a guest handles on a ring whose back end runs on another socket "
        "pays the same for the lines the back end last touched (model/io/queues.rs, model/backend.rs). "
        "io_remote_busy: the share of the I/O thread's busy time that was that cost.",
        "Not modelled: the NIC's DMA into a remote node (DDIO places it in the local socket's cache only) and the "
        "host skb's node; remote work of a vCPU whose own memory is on another node (no configuration here has it).",
        *_COMMON_NOTES,
    ],
    axis=_VMS,
))
