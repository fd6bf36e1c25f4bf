"""CGR / AIR / MTVD (seed 003_9988edc85599e763.txt) experiments, and a head-to-head of interrupt
coalescing on SR-IOV VFs and virtio that no paper has.

Every scenario runs on the built-in ``sriov`` profile (CGR/AIR §5.1's testbed), whose
calibration targets are ``profiles/calibration/sriov.toml``.
"""

from __future__ import annotations

import copy

from eventpath.reproduce.experiment import SCENARIOS, Axis, Experiment, Measured, register
from eventpath.reproduce.simulate import REMOVE, load, simulate

#: The profile's name.
PROFILE = "sriov"
def layout(base: str, vms: int, changes: dict | None = None, duration: float | None = None) -> dict:
    """Scenario ``base`` (a file of ``reproduce/scenarios/``, one VM) with ``changes`` applied to
    it and its VM copied ``vms`` times (vm0 .. vmN-1, each with its own VF or virtio device),
    on the sriov profile."""
    if vms < 1:
        raise ValueError(f"layout: {vms} VMs; expected at least 1")
    sc = load(SCENARIOS / base, {"profile": PROFILE, **(changes or {})})
    one = sc["vm"][0]
    sc["vm"] = [{**copy.deepcopy(one), "name": f"vm{i}"} for i in range(vms)]
    if duration is not None:
        sc["duration_s"] = duration
    return sc


def _host_cpu(summary: dict) -> float:
    """The host's CPU in % of one core (CGR/AIR §5.2: 800 % is all 8 pCPUs)."""
    return sum(summary["host"]["pcpu_util_pct"])


def _guest_cpu(summary: dict, vcpus: int) -> float:
    """Time in guest mode of all VMs in % of one core (TIG is % of measured time x vCPUs)."""
    return sum(v["tig_pct"] * vcpus for v in summary["vms"])


def _gbps(summary: dict) -> float:
    """Aggregate receive throughput of all VMs (Gbit/s of TCP payload)."""
    return sum(v["throughput"]["gbps"] or 0.0 for v in summary["vms"])


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


# --- Fig. 4: throughput and CPU against a fixed interrupt rate ------------------------------

#: CGR/AIR §3.2: the interrupt rates Fig. 4 tests (interrupts/s).
_FIG4_RATES = (1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 48_000, 64_000, 80_000)


def _fig4(duration, step):
    rows = []
    best = (None, -1.0)
    for rate in _FIG4_RATES:
        cfg = f"ITR-{rate // 1000}K"
        r = simulate(layout("sriov-fig4.toml", 1, {"vm.0.net.itr_us": 1e6 / rate}), what=f"sriov-fig4 {cfg}",
                     duration=duration)
        step(cfg)
        s, vm = r.summary, r.summary["vms"][0]
        gbps = _gbps(s)
        rows.append(Measured(cfg, "throughput", "Gbit/s", gbps))
        rows.append(Measured(cfg, "cpu", "%", _host_cpu(s)))
        rows.append(Measured(cfg, "interrupts", "irq/s", vm["interrupts_per_s"]))
        rows.append(Measured(cfg, "exits_total", "exits/s", vm["exits_total_per_s"]))
        if gbps > best[1]:
            best = (rate, gbps)
    rows.append(Measured("peak", "itr_at_max_throughput", "irq/s", float(best[0])))
    return rows


register(Experiment(
    id="sriov-fig4",
    title="Throughput and CPU of one VM receiving TCP through an SR-IOV VF against its fixed interrupt rate",
    source="CGR/AIR §3.2, Fig. 4; §3.3 (seed 003_9988edc85599e763.txt)",
    profile=PROFILE,
    baselines=(r"ITR-\d+K", r"peak",),
    rows=_fig4,
    runs=len(_FIG4_RATES),
    notes=[
        "Calibration: where the throughput peaks (48K), the throughput there and the CPU at 100 % from 48K up are the "
        "sriov profile's targets (profiles/calibration/sriov.toml); the other rows have no published number.",
        "CPU is the host's, in % of one core: the VM's two vCPU threads (the paper's 'CPU utilization is 100 percent' "
        "at and above 48K, §3.3's '100 percent (1 processor core)'); the VF driver's single NAPI context keeps it to "
        "one vCPU.",
        "The guest's receive buffer is Linux 2.6.32's default (tcp_rmem[1], 87380 bytes, netperf without -S), and "
        "netserver reads 87380 bytes a recv() (netperf's default receive size; the paper's 1,472 bytes is the sender's "
        "-m). Up to 8K the stream is window-bound (about one window per interrupt interval), so throughput and CPU "
        "rise with the rate as in the paper. The model has no receive-buffer autotuning (tcp_rcv_space_adjust), "
        "which would widen the window at low rates.",
        "From 8K up the throughput stays at ~5.6 Gbit/s (the window over the round trip, then the vCPU) while the CPU "
        "rises to 100 % at 32K and above; the fitted exit.indirect_per_direct (6.7: every exit's after-cost in the "
        "guest at 6.7x its direct cost, within SplitX's 'order of magnitude', SOURCES.md) makes each interrupt costly "
        "enough for that. The model's top is flat, not "
        "falling past 48K: the VF's interrupt rate stops following the throttle at ~20K/s because NAPI keeps the "
        "vector masked while it polls a CPU-bound stream, so a faster throttle adds no interrupts; the peak row is an "
        "argmax over a flat top and misses or not by noise (calibrate flags it fragile).",
    ],
    axis=Axis(r"(?P<series>ITR)-(?P<x>\d+)K", "VF interrupt throttle rate (thousands of interrupts/s)"),
))


# --- Fig. 5: one VM with 1-8 VFs -----------------------------------------------------------

#: Fig. 5's VF counts (the text discusses 1, 3-4 and 'greater than four').
_FIG5_VFS = (1, 2, 3, 4, 6, 8)


def _fig5(duration, step):
    rows = []
    for n in _FIG5_VFS:
        cfg = f"VF-{n}"
        s = simulate(layout("sriov-fig4.toml", 1, {"vm.0.net.vfs": n}), what=f"sriov-fig5 {cfg}", duration=duration).summary
        step(cfg)
        rows.append(Measured(cfg, "throughput", "Gbit/s", _gbps(s)))
        rows.append(Measured(cfg, "cpu", "%", _host_cpu(s)))
        rows.append(Measured(cfg, "interrupts_per_vf", "irq/s", s["vms"][0]["interrupts_per_s"] / n))
    return rows


register(Experiment(
    id="sriov-fig5",
    title="SR-IOV VF scalability: TCP_STREAM into one VM of 2 vCPUs through 1-8 of its VFs, at the driver's default ITR",
    source="CGR/AIR §3.3, Fig. 5 (seed 003_9988edc85599e763.txt)",
    profile=PROFILE,
    baselines=(r"VF-\d+",),
    rows=_fig5,
    runs=len(_FIG5_VFS),
    notes=[
        "One VM with N VFs ([vm.net] vfs = N): §3.3 'one VM can achieve line rate by assigning multiple (three or four "
        "in Fig. 5) VFs', and 'the VF driver can only use one VCPU' — each VF's vector goes to its own vCPU (VF i to "
        "vCPU i mod 2), so more VFs use more CPU. Each VF carries its own netperf stream (its own client), read by its "
        "own receiver in the guest; the VM is the Fig. 4 VM at the driver's default 8,000 interrupts/s (§3.2, §4.1). "
        "Throughput is the sum over the VFs, CPU the host's in % of one core.",
        "VF-1's throughput is a calibration target of the sriov profile (with Fig. 4's rows); the rest are "
        "predictions.",
        "Known gap: the model's single VF is window-bound at 8,000 interrupts/s (one 87380-byte window per interval, "
        "~5.6 Gbit/s) with its vCPU at ~40 %, where §3.3 has it CPU-bound at 100 % of one core; the paper's own Fig. 4 "
        "puts the CPU below 100 % at 8K too, so Fig. 5 may have run another ITR, which the paper does not say. With "
        "two VFs the model is near the link already (each stream is window-bound, not CPU-bound), and it reaches the "
        "line rate at four; three VFs put two streams on vCPU 0, which then bounds them. Past four VFs the model's "
        "CPU keeps rising, as the paper's does, but its throughput stays at the line rate where the paper's falls.",
    ],
    axis=Axis(r"(?P<series>VF)-(?P<x>\d+)", "VFs (in one VM of 2 vCPUs)"),
))


# --- Fig. 8a: FIR, CGR, AIR on 1-16 VMs -----------------------------------------------------

#: The interrupt-rate controllers of §4 as the VF's moderation (host-side, driving its EITR).
_CONTROLLERS = {
    "FIR": {"kind": "fir", "itr": 8000},  # §4.1: the driver's default 8,000 interrupts/s
    "CGR": {"kind": "cgr"},              # §4.2: 4K / 8K / 20K / 100K by traffic class
    "AIR": {"kind": "air"},              # §4.3, Algorithm 1
}
#: Fig. 8a's VM counts (CGR/AIR §5.2.1: 1, 4, 8, 12, 16 VMs).
_FIG8_VMS = (1, 4, 8, 12, 16)
#: Simulated seconds and warm-up of a Fig. 8a run: AIR and CGR decide every 100 ms, so the
#: warm-up covers their first decision.
_FIG8_DURATION, _FIG8_WARMUP = 0.5, 0.2


def _vf(controller: str) -> dict:
    return {"vm.0.net.itr_us": REMOVE, "vm.0.net.moderation": dict(_CONTROLLERS[controller]),
            "warmup_s": _FIG8_WARMUP}


def _fig8a(duration, step, counts=_FIG8_VMS):
    rows = []
    for n in counts:
        gbps = {}
        for c in _CONTROLLERS:
            cfg = f"{c}-{n}"
            r = simulate(layout("sriov-fig4.toml", n, _vf(c), _FIG8_DURATION), what=f"sriov-fig8a {cfg}",
                         duration=duration)
            step(cfg)
            s = r.summary
            gbps[c] = _gbps(s)
            rows.append(Measured(cfg, "throughput", "Gbit/s", gbps[c]))
            rows.append(Measured(cfg, "host_cpu", "%", _host_cpu(s)))
            rows.append(Measured(cfg, "interrupts_per_vm", "irq/s", sum(v["interrupts_per_s"] for v in s["vms"]) / n))
        for c in ("CGR", "AIR"):
            rows.append(Measured(f"{c}/FIR-{n}", "throughput_ratio", "x", _ratio(gbps[c], gbps["FIR"])))
    return rows


register(Experiment(
    id="sriov-fig8a",
    title="TCP_STREAM (1,472 B) into 1-16 VMs of 2 vCPUs on 8 pCPUs, each with a VF: FIR vs CGR vs AIR",
    source="CGR/AIR §5.2.1, Fig. 8a (seed 003_9988edc85599e763.txt)",
    profile=PROFILE,
    baselines=(r"FIR-\d+",),
    rows=_fig8a,
    runs=len(_FIG8_VMS) * len(_CONTROLLERS),
    notes=[
        "Every row is a prediction (the sriov profile is calibrated on sriov-fig4 only). The paper gives Fig. 8a's "
        "gains only as ranges, CGR 1.22-2.26x and AIR 1.31-2.97x FIR, the highest at 16 VMs: the ranges' maxima are "
        "compared at 16 VMs; where their minima lie is not said. Its 'CPU under 600 percent' is a bound, not a row.",
        "Each VM is the Fig. 4 VM (2 vCPUs, the VF's 512-descriptor ring, a 87380-byte receive window), placed by the "
        "host's CFS on 8 pCPUs (32 vCPUs at 16 VMs). FIR is 8,000 interrupts/s (§4.1); CGR and AIR use the "
        "policies' defaults (CGR §4.2's classes over 100 ms; AIR's k = 512, the ring, and C_pkt and C_int taken from "
        "the profile's costs, as the paper 'obtains them from experiments'). The model has no MTVD (§4.4).",
        "Known gap: in the model 4 or more VMs fill the 10 Gbit/s link under every controller while the host uses "
        "1-2.3 of its 8 cores (the paper: up to 6), so nothing is CPU-starved at 16 VMs and the ratios stay ~1 where the "
        "paper has 2.26x and 2.97x. With one VM the model's stream is window-bound below ~16K interrupts/s, so CGR "
        "(4K for full-size frames) and AIR (B/(k S) + offset with k = 512, ~1-2K/s) lose throughput against FIR's 8K: "
        "AIR's Eq. 1 assumes up to k = 512 packets per interrupt, which a TCP window of 60 segments never delivers.",
    ],
    axis=Axis(r"(?P<series>.+)-(?P<x>\d+)", "VMs"),
))


# --- Fig. 11: Apache Bench completion time ----------------------------------------------------

#: Fig. 11's request counts (1K-10K, §5.4).
_FIG11_REQUESTS = tuple(range(1_000, 10_001, 1_000))
#: The VMs Fig. 11 runs: not stated by the paper; §5.5's four co-hosted VMs are taken.
_FIG11_VMS = 4


def _fig11(duration, step):
    rows = []
    for c in _CONTROLLERS:
        changes = {"vm.0.net.moderation": dict(_CONTROLLERS[c])}
        s = simulate(layout("sriov-fig11.toml", _FIG11_VMS, changes), what=f"sriov-fig11 {c}",
                     duration=duration).summary
        step(c)
        per_vm = [v["throughput"]["ops_per_s"] for v in s["vms"]]
        rate = sum(per_vm) / len(per_vm) if all(x for x in per_vm) else None
        rows.append(Measured(c, "requests_per_vm", "req/s", rate))
        rows.append(Measured(c, "host_cpu", "%", _host_cpu(s)))
        for n in _FIG11_REQUESTS:
            # ab's 'time taken for tests' of n requests at the closed loop's steady rate.
            rows.append(Measured(f"{c}-{n // 1000}K", "completion_time", "s", n / rate if rate else None))
    return rows


register(Experiment(
    id="sriov-fig11",
    title="Apache Bench (concurrency 500) completion time of 1K-10K requests per VM: FIR vs CGR vs AIR",
    source="CGR/AIR §5.4, Fig. 11 (seed 003_9988edc85599e763.txt)",
    profile=PROFILE,
    baselines=(r"FIR(-\d+K)?",),
    rows=_fig11,
    runs=len(_CONTROLLERS),
    notes=[
        "Every row is a prediction, and none has a published number: §5.4 gives Fig. 11 only in words (FIR's time "
        "grows fastest, CGR and AIR 'slightly better', AIR+MTVD best). The model has no MTVD.",
        "Four VMs (§5.5's co-hosted four; Fig. 11's count is not stated), each serving a 45-byte page to an ab-like "
        "closed loop of 500 requests, a connection per request. Completion time of n requests is n over the VM's "
        "steady request rate: ab's start-up and its last, draining requests are not modelled.",
    ],
    axis=Axis(r"(?P<series>[A-Z]+)-(?P<x>\d+)K", "requests (thousands)"),
))


# --- Fig. 12: the multi-threaded VF driver -------------------------------------------------

#: CGR/AIR §5.5: four co-hosted VMs of 2 vCPUs.
_FIG12_VMS = 4
#: Fig. 12's two configurations: the VF driver as it is under FIR's 8,000/s, and MTVD (§4.4).
_FIG12 = {"FIR": {}, "MTVD": {"vm.0.net.mtvd": True}}


def _fig12(duration, step):
    rows = []
    got = {}
    for cfg, extra in _FIG12.items():
        changes = {"vm.0.net.itr_us": REMOVE, "vm.0.net.moderation": dict(_CONTROLLERS["FIR"]), **extra}
        s = simulate(layout("sriov-fig4.toml", _FIG12_VMS, changes), what=f"sriov-fig12 {cfg}",
                     duration=duration).summary
        step(cfg)
        got[cfg] = (_gbps(s), _host_cpu(s))
        rows.append(Measured(f"{cfg}-tcp", "throughput", "Gbit/s", got[cfg][0]))
        rows.append(Measured(f"{cfg}-tcp", "host_cpu", "%", got[cfg][1]))
        rows.append(Measured(f"{cfg}-tcp", "ipi_exits_per_vm", "exits/s",
                             sum(v["exits_per_s"]["ipi"] or 0.0 for v in s["vms"]) / _FIG12_VMS))
    (fg, fc), (mg, mc) = got["FIR"], got["MTVD"]
    rows.append(Measured("MTVD-vs-FIR-tcp", "throughput_gain", "%", 100.0 * (mg / fg - 1.0) if fg else None))
    rows.append(Measured("MTVD-vs-FIR-tcp", "cpu_added", "%", mc - fc))
    return rows


register(Experiment(
    id="sriov-fig12",
    title="The multi-threaded VF driver (MTVD) against the VF driver under FIR: TCP_STREAM into 4 VMs of 2 vCPUs",
    source="CGR/AIR §5.5, Fig. 12a; §4.4 (seed 003_9988edc85599e763.txt)",
    profile=PROFILE,
    baselines=(r"FIR-tcp",),
    rows=_fig12,
    runs=len(_FIG12),
    notes=[
        "Every row is a prediction. §5.5 states MTVD's gain for TCP_STREAM with medium and large packets as 'up to "
        "42.21 percent higher throughput with an additional 64.86 percent CPU utilization than the FIR'; the CPU is "
        "in points of one core (the UDP text equates 145.54 percent with 1.46 cores). Both are compared here.",
        "Four Fig. 4 VMs (2 vCPUs, a VF at FIR's 8,000 interrupts/s, the 87380-byte window) on the 8 pCPUs; MTVD's "
        "NAPI poll keeps the descriptor work and hands each packet to the kernel thread of the VM's other vCPU "
        "(guest/mtvd.rs), which takes it up the stack and wakes netserver on vCPU 0. The model's client sends full "
        "segments whatever netperf's -m, so 512 and 1,472 bytes are one configuration; Fig. 12's 50-byte rows "
        "(sender-bound) and its UDP rows (sender-bound at 367 Mbit/s) are not run.",
        "Known gap: four VMs under FIR already fill the 10 GbE link in the model (each VM's window-bound stream gets "
        "~5.6 Gbit/s alone), so MTVD has no throughput to add; and its CPU is mostly reschedule IPIs: netserver stays "
        "on vCPU 0 (the model has no wake_affine pull to the thread's vCPU), so the thread on vCPU 1 wakes it across "
        "vCPUs every few segments, each an ICR-write exit on the sender and a wake-up of a halted vCPU on the "
        "receiver (~60K/s per VM). The paper's +64.86 points is about one sixth of that.",
    ],
))


# --- coalescing head to head ------------------------------------------------------------------

#: Each configuration's device: an SR-IOV VF under a moderation scheme, or virtio-net.
_H2H = {
    "VF-FIR": {"vm.0.net.itr_us": REMOVE, "vm.0.net.moderation": dict(_CONTROLLERS["FIR"])},
    "VF-CGR": {"vm.0.net.itr_us": REMOVE, "vm.0.net.moderation": dict(_CONTROLLERS["CGR"])},
    "VF-AIR": {"vm.0.net.itr_us": REMOVE, "vm.0.net.moderation": dict(_CONTROLLERS["AIR"])},
    "VF-ixgbevf-dynamic": {"vm.0.net.itr_us": "dynamic"},
    "VF-DIM": {"vm.0.net.itr_us": REMOVE, "vm.0.net.moderation": {"kind": "dim"}},
    "virtio-event-idx": {"vm.0.net": {"kind": "virtio"}},
    "virtio-NOTF_COAL": {"vm.0.net": {"kind": "virtio", "moderation": {"kind": "notf_coal"}}},
    "virtio-guest-DIM": {"vm.0.net": {"kind": "virtio", "moderation": {"kind": "guest_dim"}}},
}
#: The VM counts of the head-to-head.
_H2H_VMS = (1, 4, 8, 16)
#: Its simulated seconds and warm-up (the controllers' first decisions inside the warm-up).
_H2H_DURATION, _H2H_WARMUP = 0.4, 0.15
#: The request/response load: netperf TCP_RR, 1-byte request and response, one in flight per VM.
_RR = {"kind": "tcp_rr", "request_bytes": 1, "response_bytes": 1, "concurrency": 1}


def _h2h(duration, step, counts=_H2H_VMS, configs=tuple(_H2H)):
    rows = []
    for cfg in configs:
        for n in counts:
            c = f"{cfg}-{n}"
            base = {**_H2H[cfg], "warmup_s": _H2H_WARMUP}
            s = simulate(layout("sriov-fig4.toml", n, base, _H2H_DURATION), what=f"head-to-head {c} stream",
                         duration=duration).summary
            rows.append(Measured(c, "stream_throughput", "Gbit/s", _gbps(s)))
            rows.append(Measured(c, "stream_host_cpu", "%", _host_cpu(s)))
            rows.append(Measured(c, "stream_guest_cpu", "%", _guest_cpu(s, 2)))
            rr = simulate(layout("sriov-fig4.toml", n, {**base, "vm.0.workload": dict(_RR)}, _H2H_DURATION),
                          what=f"head-to-head {c} tcp_rr", duration=duration).summary
            step(c)
            rows.append(Measured(c, "rr_transactions", "trans/s", sum(v["throughput"]["ops_per_s"] or 0.0
                                                                     for v in rr["vms"])))
            rows.append(Measured(c, "rr_p99", "us", max(v["latency_us"]["p99"] or 0.0 for v in rr["vms"]) or None))
            rows.append(Measured(c, "rr_host_cpu", "%", _host_cpu(rr)))
            rows.append(Measured(c, "rr_guest_cpu", "%", _guest_cpu(rr, 2)))
    return rows


register(Experiment(
    id="coalescing-head-to-head",
    title="Interrupt coalescing head to head on the CGR/AIR testbed: VF (FIR, CGR, AIR, ixgbevf adaptive, "
          "net DIM) and virtio (event index, NOTF_COAL, guest DIM), TCP stream and TCP_RR",
    source="no paper: the sriov profile (CGR/AIR §5.1 testbed) with the mechanisms of CGR/AIR §4, Linux ixgbevf, "
           "net DIM, virtio event index, virtio notification coalescing and virtio-net guest DIM",
    profile=PROFILE,
    rows=_h2h,
    runs=len(_H2H) * len(_H2H_VMS),
    notes=[
        "Every row is a prediction without a published value. Each configuration runs 1-16 VMs of 2 vCPUs on the 8 "
        "pCPUs twice: netperf TCP_STREAM into every VM (1,472-byte messages, Fig. 4's VM and window), then netperf "
        "TCP_RR (1 byte each way, one transaction in flight per VM). Throughput and transactions/s are aggregates; "
        "rr_p99 is the worst VM's 99th percentile; host CPU is every pCPU's busy time (vCPU threads, and the vhost "
        "threads of virtio), guest CPU the VMs' time in guest mode, both in % of one core.",
        "VF rows: FIR 8,000/s, CGR and AIR with the policies' defaults, ixgbevf's own adaptive ITR (itr_us = "
        "\"dynamic\"), net DIM driving the EITR. virtio rows: virtio-net over vhost-net with the event index only "
        "(no moderation), virtio notification coalescing (1,000 us / 10 frames), the guest's virtio-net DIM. "
        "Interrupts are delivered by emulation (the E5607 has neither APICv nor posted interrupts).",
    ],
    axis=Axis(r"(?P<series>.+)-(?P<x>\d+)", "VMs"),
))
