"""The production descendants of the seeds' mechanisms (issue 32), against their own published
numbers: today ``guest-haltpoll`` (the guest's cpuidle-haltpoll driver against KVM's halt
polling). Each runs on a built-in profile of the seeds' time; their patches' hosts are of the
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
