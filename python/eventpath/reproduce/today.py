"""The production descendants of the seeds' mechanisms (issue 32), against their own published
numbers: ``guest-haltpoll`` (the guest's cpuidle-haltpoll driver against KVM's halt
polling), ``ipiv`` (kvm-unit-tests' IPI round trip with IPI virtualization) and ``busyloop-2018``
(vhost-net busy polling). Each runs on a built-in profile of the seeds' time; their patches' hosts are of the
same class (posted interrupts, Linux KVM)."""

from __future__ import annotations

from eventpath.reproduce.experiment import SCENARIOS, Axis, Experiment, Measured, register
from eventpath.reproduce.simulate import REMOVE, simulate

# --- guest-haltpoll: a ping-pong with guest polling, host polling, neither -------------------

#: The configurations: which of the two pollers runs (300 us each, as the patch measured).
_HALTPOLL = {
    "no-poll": {"vm.0.guest_halt_poll": REMOVE},
    "host-poll": {"vm.0.guest_halt_poll": REMOVE, "vm.0.halt_poll": {"max_halt_poll_ns": 300_000}},
    "guest-poll": {},
}


def _haltpoll(duration, step):
    rows, ops = [], {}
    for cfg, changes in _HALTPOLL.items():
        s = simulate(SCENARIOS / "haltpoll-ping-pong.toml", changes or None, what=f"guest-haltpoll {cfg}",
                     duration=duration).summary
        step(cfg)
        vm = s["vms"][0]
        ops[cfg] = vm["throughput"]["ops_per_s"]
        rows += [
            Measured(cfg, "transactions", "ops/s", ops[cfg]),
            Measured(cfg, "latency_mean", "µs", vm["latency_us"]["mean"]),
            Measured(cfg, "exits_hlt", "exits/s", vm["exits_per_s"]["hlt"]),
            Measured(cfg, "exits_total", "exits/s", vm["exits_total_per_s"]),
            Measured(cfg, "host_poll", "%", vm["halt_poll_pct"]),
            Measured(cfg, "guest_poll", "%", vm["guest_halt_poll_pct"]),
            Measured(cfg, "vcpu_pcpu", "%", s["host"]["pcpu_util_pct"][0]),
        ]
    for cfg in ("no-poll", "guest-poll"):
        rel = 100.0 * ops[cfg] / ops["host-poll"] if ops[cfg] and ops["host-poll"] else None
        rows.append(Measured(cfg, "vs_host_poll", "%", rel))
    return rows


register(Experiment(
    id="guest-haltpoll",
    title="Guest halt polling (cpuidle-haltpoll) against KVM halt polling: a 1-byte UDP ping-pong",
    source="cpuidle: add haltpoll governor (Linux 5.4, 2019; commit message)",
    profile="es2",
    rows=_haltpoll,
    runs=len(_HALTPOLL),
    notes=[
        "A 1-vCPU VM (posted interrupts, vhost on its own core) answers netperf UDP_RR with 1 byte each way. "
        "host-poll: KVM halt polling up to 300 us ([vm.halt_poll]); guest-poll: the guest's haltpoll governor up to "
        "300 us ([vm.guest_halt_poll]; its driver turns host polling off); no-poll: neither.",
        "The patch compares both against the bare host (93.8 % and 95.7 %); the model has no bare-metal virtio path, "
        "so the row is guest polling's transactions/s over host polling's (the patch's 102.0 %). A prediction: the "
        "es2 profile was not calibrated on it.",
        "Guest polling removes the HLT exit and its entry from each idle period that ends inside the poll; host "
        "polling keeps them and saves only the thread's wake-up. Both burn the vCPU's pCPU (host_poll is host time, "
        "guest_poll guest time). The remote client's round trip (its NIC's 50 us interrupt throttle included) is "
        "most of each transaction here, so the same saving is a smaller share than in the patch's ping-pong.",
    ],
    axis=None,
))


# --- ipiv: kvm-unit-tests' IPI round trip with and without IPI virtualization ------------------


def _ipiv_layout(ipiv: bool, halt_poll: bool, duration: float | None) -> dict:
    """A 2-vCPU VM on pCPUs 0-1 running kvm-unit-tests' `ipi` loop (vCPU 0 -> vCPU 1, back to
    back); es2's CPU with IPI virtualization switched on by a profile override (no built-in
    profile's CPU has it)."""
    vm = {"name": "vm0", "vcpus": 2, "vcpu_pins": [0, 1], "interrupt_delivery": "posted",
          "net": {"vhost_pin": 2}, "workload": {"kind": "ipi_pingpong"}}
    if halt_poll:
        vm["halt_poll"] = {"max_halt_poll_ns": 200_000}
    if ipiv:
        vm["apic"] = {"ipiv": True}
    sc = {"name": f"ipiv-{'on' if ipiv else 'off'}", "profile": "es2", "seed": 1,
          "duration_s": 0.1 if duration is None else duration, "warmup_s": 0.01,
          "host": {"pcpus": 3}, "vm": [vm]}
    if ipiv:
        sc["profile_overrides"] = {"cpu": {"ipiv": 1}}
    return sc


def _ipiv(duration, step):
    rows = []
    for halt_poll, tag in ((True, ""), (False, " no-halt-poll")):
        rt = {}
        for ipiv in (False, True):
            cfg = ("IPIv" if ipiv else "no-IPIv") + tag
            vm = simulate(_ipiv_layout(ipiv, halt_poll, duration), what=f"ipiv {cfg}").summary["vms"][0]
            step(cfg)
            rt[ipiv] = vm["latency_us"]["p50"]
            rows += [
                Measured(cfg, "round_trip_p50", "µs", rt[ipiv]),
                Measured(cfg, "exits_ipi", "exits/s", vm["exits_per_s"]["ipi"]),
                Measured(cfg, "exits_hlt", "exits/s", vm["exits_per_s"]["hlt"]),
                Measured(cfg, "round_trips", "ops/s", vm["throughput"]["ops_per_s"]),
            ]
        change = 100.0 * (rt[True] / rt[False] - 1.0) if rt[True] and rt[False] else None
        rows.append(Measured("IPIv vs no-IPIv" + tag, "round_trip_change", "%", change))
    return rows


register(Experiment(
    id="ipiv",
    title="IPI virtualization: kvm-unit-tests' IPI round trip (vCPU 0 -> halted vCPU 1) with and without IPIv",
    source="KVM: VMX: enable IPI virtualization (Linux 5.19, 2022; the series' commit message)",
    profile="es2",
    rows=_ipiv,
    runs=4,
    notes=[
        "kind = \"ipi_pingpong\": vCPU 0 writes the ICR to send a call-function IPI to vCPU 1, which idles in "
        "`hlt` as kvm-unit-tests' secondary CPUs do, and spins until the handler ran (x86/vmexit.c's `ipi`). Without "
        "IPIv the ICR write exits (exit.ipi_ns, the IPI leaving exit.ipi_send_ns into it); with IPIv it does not. "
        "KVM's default halt polling (200 us) runs on the target; the no-halt-poll rows turn it off.",
        "A what-if on es2's Ivy Bridge-EP costs with cpu.ipiv overridden to 1: es2 is not of IPIv's hardware (Sapphire Rapids; "
        "the modern profile is), so the row is a prediction of the mechanism, not of that host. The model's "
        "ICR exit is es2's xAPIC APIC-access exit, so it is compared with the patch's xAPIC figure.",
        "Why the model's saving is small with halt polling: the target's own HLT exit (exit.hlt_ns) and its "
        "poll wake-up run while the sender is still in its ICR exit, so most of the exit is hidden; the round "
        "trip is the target's path. Without halt polling the sender's exit decides whether the IPI finds the "
        "target still in its HLT exit (no wake-up) or blocked (a thread wake-up), so IPIv saves far more.",
    ],
    axis=None,
))


# --- busyloop-2018: vhost-net busy polling, the two 2018 patches' own measurements ------------

#: netperf's TCP_STREAM send size on a Linux host (its default: the socket's initial SO_SNDBUF,
#: 16 KiB); the later patch's MEAN_LATENCY is the time per send() of it.
_SEND_BYTES = 16384


def _busyloop_layout(kind: str, busyloop_us: int, duration: float | None) -> dict:
    """One 1-vCPU VM on pCPU 0, its vhost thread on pCPU 1, posted interrupts; the guest sends
    1,472-byte UDP datagrams as fast as it can (``udp``) or receives a TCP stream (``tcp``)."""
    if kind == "udp":
        wl = {"kind": "udp_stream", "message_bytes": 1472}
    else:
        wl = {"kind": "tcp_receive", "message_bytes": _SEND_BYTES}
    return {"name": f"busyloop-{kind}-{busyloop_us}us", "profile": "es2", "seed": 1,
            "duration_s": 0.2 if duration is None else duration, "warmup_s": 0.02,
            "host": {"pcpus": 2},
            "vm": [{"name": "vm0", "vcpus": 1, "vcpu_pins": [0], "interrupt_delivery": "posted",
                    "net": {"vhost_pin": 1, "busyloop_timeout_us": busyloop_us}, "workload": wl}]}


#: (configuration, workload, busyloop_timeout_us).
_BUSYLOOP = [("udp kicks", "udp", 0), ("udp busyloop 10us", "udp", 10),
             ("tcp-rx no poll", "tcp", 0), ("tcp-rx busyloop 100us", "tcp", 100)]


def _busyloop(duration, step):
    rows = []
    for cfg, kind, us in _BUSYLOOP:
        s = simulate(_busyloop_layout(kind, us, duration), what=f"busyloop-2018 {cfg}").summary
        step(cfg)
        vm = s["vms"][0]
        gbps = vm["throughput"]["gbps"]
        rows += [
            Measured(cfg, "throughput", "Mbit/s", 1000.0 * gbps if gbps is not None else None),
            Measured(cfg, "kicks", "kicks/s", vm["kicks_per_s"]),
            Measured(cfg, "vhost_thread", "%", s["host"]["io_threads"][0]["util_pct"]),
            Measured(cfg, "exits_total", "exits/s", vm["exits_total_per_s"]),
        ]
        if kind == "tcp":
            lat = _SEND_BYTES * 8 / (gbps * 1e3) if gbps else None
            rows.append(Measured(cfg, "mean_latency", "µs", lat))
    # The later patch's "before" is busy polling without RX polled in the TX path, which the
    # model does not have (its TX busy poll always stops for socket data): emitted as None.
    for metric, unit in (("throughput", "Mbit/s"), ("mean_latency", "µs"), ("vhost_thread", "%")):
        rows.append(Measured("tcp-rx busyloop 100us, rx not polled in tx", metric, unit, None))
    return rows


register(Experiment(
    id="busyloop-2018",
    title="vhost-net busy polling: guest UDP send with kicks suppressed (10 us) and guest TCP receive at 100 us",
    source="vhost_net: avoid tx vring kicks during busyloop (Linux 4.18, 2018) and net: vhost: add rx busy "
           "polling in tx path (Linux 4.19, 2018); their commit messages",
    profile="es2",
    rows=_busyloop,
    runs=len(_BUSYLOOP),
    notes=[
        "Layout (ours; neither patch states its host): es2's XL710/i40e host, one 1-vCPU VM on pCPU 0 with "
        "posted interrupts, its vhost-net thread pinned to pCPU 1, `[vm.net] busyloop_timeout_us` as named.",
        "UDP (the 4.18 patch): netperf UDP_STREAM, 1,472-byte datagrams as fast as the guest sends, out of the "
        "host's NIC. The patch measured busy polling at 10 us before its fix (3,645 Mbit/s, 247,758 kicks/s: "
        "0.8 kick per datagram, notifications not suppressed under load) and after (6,958 Mbit/s, 27 kicks/s). "
        "The model has only the fixed loop; its `udp kicks` run (no polling: a kick per datagram) stands in for "
        "the broken one, a proxy stated as such. The patch's guest also ran without checksum offload and TSO "
        "(for its host's XDP redirect), which UDP_STREAM at 1,472 bytes does not use.",
        "TCP (the 4.19 patch): netperf TCP_STREAM into the guest, 100 us busy polling, the vhost thread at "
        "100 %. Its MEAN_LATENCY is the time per 16 KiB send(): ours is that size over the throughput. The "
        "model's TX busy poll already stops for data on the socket (the patched loop), so the patch's 'before' "
        "row is not computable and stays empty. The model's sender is a remote client through the host NIC, "
        "whose one receive queue (host.nic_rx_frame_ns and the stages after it) bounds the stream near 1 M "
        "frames/s; the patch's sender was on the host itself, through a bridge to the tap, with no NIC.",
        "All rows are predictions: es2's calibration targets are ES2's own figures.",
    ],
    axis=None,
))


# --- pv-ipi: the PV IPI patch's broadcast IPI benchmark on an 80-vCPU VM ------------------------

#: The patch's VM: 80 vCPUs (its host: 2 x 20-core Skylake, 80 threads).
_PV_IPI_VCPUS = 80


def _pv_ipi_layout(pv_ipi: bool, duration: float | None) -> dict:
    """An 80-vCPU VM, one vCPU per pCPU, whose vCPU 0 sends one call-function IPI to all the others
    and waits for every handler (the benchmark's `smp_call_function(..., wait = 1)`), back to back;
    the others idle in `hlt` with KVM's default halt polling (200 us)."""
    vm = {"name": "vm0", "vcpus": _PV_IPI_VCPUS, "vcpu_pins": list(range(_PV_IPI_VCPUS)),
          "interrupt_delivery": "posted", "net": {"vhost_pin": _PV_IPI_VCPUS},
          "halt_poll": {"max_halt_poll_ns": 200_000},
          "workload": {"kind": "ipi_pingpong", "targets": _PV_IPI_VCPUS - 1}}
    # Skylake has no IPI virtualization: written off, or modern's stock IPIv would post every
    # one of the baseline's ICR writes.
    vm["apic"] = {"ipiv": False, "pv_ipi": pv_ipi}
    return {"name": f"pv-ipi-{'on' if pv_ipi else 'off'}", "profile": "modern", "seed": 1,
            "duration_s": 0.05 if duration is None else duration, "warmup_s": 0.005,
            "host": {"pcpus": _PV_IPI_VCPUS + 1}, "vm": [vm]}


def _pv_ipi(duration, step):
    rows, rt = [], {}
    for pv_ipi in (False, True):
        cfg = "pv-ipi" if pv_ipi else "x2apic physical"
        vm = simulate(_pv_ipi_layout(pv_ipi, duration), what=f"pv-ipi {cfg}").summary["vms"][0]
        step(cfg)
        trips = vm["throughput"]["ops_per_s"]
        rt[pv_ipi] = vm["latency_us"]["mean"]
        rows += [
            Measured(cfg, "broadcast_mean", "µs", rt[pv_ipi]),
            Measured(cfg, "exits_ipi_per_broadcast", "exits", vm["exits_per_s"]["ipi"] / trips if trips else None),
            Measured(cfg, "broadcasts", "ops/s", trips),
        ]
    gain = 100.0 * (rt[False] / rt[True] - 1.0) if rt[True] and rt[False] else None
    rows.append(Measured("pv-ipi vs x2apic physical", "broadcast_gain", "%", gain))
    # x2APIC cluster mode (one ICR write per cluster of 16) is not modelled: the row stays empty.
    rows.append(Measured("pv-ipi vs x2apic cluster", "broadcast_gain", "%", None))
    return rows


register(Experiment(
    id="pv-ipi",
    title="PV IPI: a broadcast call-function IPI from one vCPU of an 80-vCPU VM, ICR writes vs one hypercall",
    source="KVM: X86: Implement \"send IPI\" hypercall (Wanpeng Li, Linux 4.19, 2018; its commit message)",
    profile="modern",
    rows=_pv_ipi,
    runs=2,
    notes=[
        "The patch ran Yury Norov's IPI microbenchmark (lkml 2017/12/19) in an 80-vCPU VM on a 2-socket, "
        "40-core Skylake host: its 'Broadcast IPI' is smp_call_function to every other CPU, waiting for all "
        "the handlers. Ours: kind = \"ipi_pingpong\" with targets = 79, vCPU 0 sending back to back, every "
        "vCPU on its own pCPU, the targets halting in between with KVM's default 200 us halt polling, on the "
        "modern profile (the closest built-in host of that size), with its stock IPIv written off (`[vm.apic] ipiv = false`), as on Skylake.",
        "Without PV IPI the guest's x2APIC physical-mode send_IPI_mask writes the ICR once per destination, "
        "each an exit (exit.ipi_ns); with it one KVM_HC_SEND_IPI hypercall exit sends all 79 (one hypercall "
        "carries up to 128). The gain is the ratio of the mean broadcast times, as the patch's 'performance "
        "boost' is of its total times.",
        "The model charges the hypercall one exit, as an ICR write's: the per-destination work inside it "
        "(kvm_pv_send_ipi -> kvm_apic_set_irq for each of the 79, a posted-interrupt or a wake-up each) is "
        "not priced, so the model's hypercall sends all 79 at once and its gain is an upper bound.",
        "The patch's x2APIC cluster-mode result (+22 %: one ICR write per cluster of 16 CPUs) has no row of "
        "ours: the model's guests use physical mode only. Its ebizzy figure (MSR-write exits -70 % for a "
        "64-vCPU VM) is of a workload the model does not have.",
        "All rows are predictions: the modern profile has no free parameter.",
    ],
    axis=None,
))
