"""CGR / AIR / MTVD (seed 003_9988edc85599e763.txt) experiments, and a head-to-head of interrupt
coalescing on SR-IOV VFs and virtio that no paper has.

Every scenario runs on the built-in ``sriov`` profile (CGR/AIR §5.1's testbed), whose free
parameters ``eventpath calibrate`` fits on the calibration rows: the published rows of the
baselines each experiment declares (FIR and the fixed-ITR sweep; issue 47).
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


def _device_irqs(vm: dict) -> float:
    """A VM's device interrupts per second (its VFs'; the guest's timer ticks and IPIs apart)."""
    return vm["interrupts_by_source_per_s"]["device"]


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


# --- stated directions as rows ------------------------------------------------------------------

#: The step a stated rise or fall must take between neighbouring points: more than 1 % of the
#: value before it (a flat run, within a run's noise, is neither). Our reading; the paper states
#: the directions without a size.
_STEP = 0.01


def _rises(values: list[float | None]) -> float | None:
    """1.0 where every value is above the one before it by more than :data:`_STEP`, 0.0 where
    not; None where one is missing (a direction row's value)."""
    if len(values) < 2 or any(v is None for v in values):
        return None
    return float(all(b > a * (1.0 + _STEP) for a, b in zip(values, values[1:])))


def _falls(values: list[float | None]) -> float | None:
    """1.0 where every value is below the one before it by more than :data:`_STEP`, else 0.0."""
    if len(values) < 2 or any(v is None for v in values):
        return None
    return float(all(b < a * (1.0 - _STEP) for a, b in zip(values, values[1:])))


def _above(a: float | None, others: list[float | None]) -> float | None:
    """1.0 where ``a`` is above every one of ``others``, 0.0 where not; None without them all."""
    if a is None or any(o is None for o in others):
        return None
    return float(all(a > o for o in others))


# --- Fig. 4: throughput and CPU against a fixed interrupt rate ------------------------------

#: CGR/AIR §3.2: the interrupt rates Fig. 4 tests (interrupts/s).
_FIG4_RATES = (1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 48_000, 64_000, 80_000)
#: §3.2's optimum, "approximately 48,000".
_FIG4_OPTIMUM = 48_000


def _fig4(duration, step):
    rows = []
    best = (None, -1.0)
    thr, cpu = {}, {}
    for rate in _FIG4_RATES:
        cfg = f"ITR-{rate // 1000}K"
        r = simulate(layout("sriov-fig4.toml", 1, {"vm.0.net.itr_us": 1e6 / rate}), what=f"sriov-fig4 {cfg}",
                     duration=duration)
        step(cfg)
        s, vm = r.summary, r.summary["vms"][0]
        thr[rate], cpu[rate] = _gbps(s), _host_cpu(s)
        rows.append(Measured(cfg, "throughput", "Gbit/s", thr[rate]))
        rows.append(Measured(cfg, "cpu", "%", cpu[rate]))
        rows.append(Measured(cfg, "interrupts", "irq/s", _device_irqs(vm)))
        rows.append(Measured(cfg, "exits_total", "exits/s", vm["exits_total_per_s"]))
        if thr[rate] > best[1]:
            best = (rate, thr[rate])
    rows.append(Measured("peak", "itr_at_max_throughput", "irq/s", float(best[0])))
    # §3.2: "when the interrupt rate is less than 48,000, the throughput and the CPU utilization are
    # increasing with increase in the rate. However, the throughput decreases when the interrupt
    # rate is over 48,000".
    below = [r for r in _FIG4_RATES if r <= _FIG4_OPTIMUM]
    rows.append(Measured("ITR-1K..48K", "throughput_rises", "holds", _rises([thr[r] for r in below])))
    rows.append(Measured("ITR-1K..48K", "cpu_rises", "holds", _rises([cpu[r] for r in below])))
    for r in (r for r in _FIG4_RATES if r > _FIG4_OPTIMUM):
        rows.append(Measured(f"ITR-{r // 1000}K vs 48K", "throughput_below", "holds",
                             _falls([thr[_FIG4_OPTIMUM], thr[r]])))
    return rows


register(Experiment(
    id="sriov-fig4",
    title="Throughput and CPU of one VM receiving TCP through an SR-IOV VF against its fixed interrupt rate",
    source="CGR/AIR §3.2, Fig. 4 (seed 003_9988edc85599e763.txt)",
    profile=PROFILE,
    baselines=(r"ITR-\d+K", r"peak", r"ITR-1K\.\.48K", r"ITR-\d+K vs 48K"),
    rows=_fig4,
    runs=len(_FIG4_RATES),
    notes=[
        "Roles (issue 47): every configuration is the stock VF driver at a fixed throttle, a baseline, so every row "
        "with a published value is a calibration row of the sriov profile. §3.2 gives no number for Fig. 4, only "
        "regimes and directions: the optimum 'approximately 48,000' (the argmax over the grid, peak), the CPU at "
        "'100 percent' at and over 48K ('the system resources are fully utilized' at the optimum), and as rows of "
        "unit holds: 'when the interrupt rate is less than 48,000, the throughput and the CPU utilization are "
        "increasing with increase in the rate' (ITR-1K..48K throughput_rises and cpu_rises, over 1K-48K) and 'the "
        "throughput decreases when the interrupt rate is over 48,000' (ITR-64K vs 48K, ITR-80K vs 48K "
        "throughput_below). A rise or fall is a step of more than 1 % between neighbouring points (our reading; the "
        "paper sizes none). The earlier row 'ITR-48K throughput = 5.6' was an inference from §3.3, whose rate is not "
        "stated, and is gone: §3.3's ~5.6 Gbit/s is sriov-fig5's VF-1 row.",
        "Which statement holds where (declared choice; CGR/AIR §3.2, §3.3, §4.4 and §5.5 cannot all hold at the "
        "driver's default 8,000/s): §3.2's rising CPU below 48K and its 100 % above are Fig. 4's, at the rates it "
        "names, 8K among them (below one core). §3.3's '~5.6 Gbps with 1 VF and the CPU utilization is 100 percent "
        "(1 processor core)' and §4.4's 'a single VF saturates the CPU it runs on at a throughput of about 6 Gbps' "
        "are taken at 48K, the one rate at which they and §3.2 agree (sriov-fig5 runs there). §5.5's 'a single "
        "thread soon becomes a bottleneck' under FIR (8K) conflicts with §3.2 and is no row (sriov-fig12).",
        "Set-up: one VM of 2 vCPUs and 512 MB (§5.1), unpinned on the 8 pCPUs (host CFS), one netperf TCP_STREAM from "
        "the client with 1,472-byte sends (§5.2's large size: Fig. 4 states none, our choice), 0.3 s runs after a "
        "0.05 s warm-up (no run length is stated). CPU is the host's, every pCPU's busy time in % of one core (§5.2 "
        "'a percentage of a single processor core'; where the paper measured it is not stated): with one VM, its two "
        "vCPU threads. The VF driver's one NAPI context keeps the receive work on one vCPU. The interrupts row "
        "counts the VF's interrupts (device interrupts; the guest's timer ticks and IPIs apart), as do Fig. 5's and "
        "Fig. 8a's.",
        "The guest's receive window is autotuned, as netperf leaves it (no -S): Linux 2.6.32 starts the buffer at "
        "tcp_rmem[1] = 87,380 bytes (65,535 advertised at tcp_adv_win_scale = 2) and tcp_rcv_space_adjust doubles "
        "it per receiver round trip (a jiffy at least) up to tcp_rmem[2], about 2 MB on a 512 MB guest "
        "(guest.tcp_rcvbuf_autotune = double, model/workload/rcvbuf.rs). The window reaches ~1.5 MB within the "
        "warm-up (vms[].tcp_receive), far above the link's bandwidth-delay product at any throttle. netserver reads "
        "87,380 bytes a recv() (netperf's default receive size). Until issue 49 a fixed 65,536-byte window stood in "
        "for autotuning and made the stream window-bound, one window per interrupt interval: 0.52 Gbit/s at 1K "
        "rising to 6.35 at 48K, CPU 3 % to 83 %, the peak at 48K and the four directions within tolerance, the "
        "CPU rows at 83-86 % short of 100 %.",
        "structural: per frame, the guest's receive is too cheap once GRO merges. With the window open, the vCPU "
        "that polls is busy 100 % at every throttle and the stream runs at the line rate, 9.41 Gbit/s, from 1K to "
        "80K: NAPI never completes (0 VF interrupts/s), so the throttle never acts, and the peak row and the four "
        "directions miss. A trace at 8K (eventpath trace, 0.5 ms): NAPI's receive 50 % of the vCPU, the ACKs 35 %, "
        "netserver's reads 14 %, in GRO runs of ~6 frames. The per-skb costs (guest.tcp_rx_segment_ns, the ACK's "
        "tcp_tx_segment_ns, tcp_read_ns) set the run's length, and the only cost per frame is GRO's append "
        "(guest.gro_segment_ns, 352 ns, virtio-net's), so the vCPU keeps up with the line's 1.23 us per frame "
        "whatever the per-skb costs: doubling any of them, or gro_segment_ns at its range's top (704 ns), leaves "
        "9.41 Gbit/s. §3.3's ~5.6 Gbit/s on one saturated core implies ~2.1 us per 1,448-byte frame. Not charged "
        "per frame: ixgbevf's per-descriptor receive (an skb allocated and a buffer mapped per descriptor before "
        "GRO frees it; gro_segment_ns is virtio-net's append). The copy to user space was folded into the "
        "per-segment cost, a fold GRO amortises away; since issue 49 it is charged once per byte in netserver's "
        "recv() (guest.tcp_rx_byte_ns, 0.25 ns: the E5607 has no DDIO, so the payload is read from DRAM; range "
        "0.125-0.5, free for calibrate). VF-1 (sriov-fig5, 48K, 0.3 s, seed 1) stays at the line up to 0.40 "
        "(9.41 Gbit/s) and falls off a cliff at 0.45 (5.08 Gbit/s: the reader falls behind, the socket fills and "
        "the advertised window drops from ~1.5 MB to ~35 KB, so each interrupt brings less and GRO merges less): "
        "§3.3's 5.6 lies inside the range but on that cliff. calibrate sriov (budget 30, seeds 1,2, 0.2 s) found "
        "its objective flat, 2.20-2.59 over 0.13-0.34 in no order, and never sampled the cliff; nothing applied. "
        "eventpath sensitivity sriov-fig5 classes VF-1 structural: tcp_rx_byte_ns is its one large mover (-3.2 "
        "Gbit/s at 0.5), but there the experiment's other calibration rows leave their tolerance. A trace of 0.5 "
        "ms at 0.45 against 0.40: the VF's interrupts and their exits take ~19 % of the vCPU (none at 0.40, where "
        "NAPI never completes) and the smaller GRO skbs double the ACKs (40 against 21), so the reader gets 32 % "
        "instead of 51 %: a regime switch, not a proportional slow-down (0.05 ns more a byte is ~6 % more work at "
        "the line rate). Whether Linux switches the same way (the socket backlog while the reader holds it, "
        "ksoftirqd) is not yet checked. "
        "With the client's TSO skbs (issue 49 item 4: 45 frames back to back where it sent one MSS per ~1 us) "
        "the frames come in bursts and the vCPU at 1K sometimes drains the ring, completes NAPI and waits up to "
        "the throttle's 1 ms for its next interrupt: ITR-1K 9.41 -> 9.22 Gbit/s, CPU 100 -> 97.9 %, 0 -> 27 VF "
        "interrupts/s (0.3 s, seed 1); 2K-80K unchanged at 9.41 and 100 %. The peak row's argmax among rates "
        "within 0.01 % of each other is seed noise (16K now).",
        "structural: Linux 2.6.32's KVM forwards an assigned device's interrupt through a work queue "
        "(kvm_assigned_dev_intr -> schedule_work -> kvm_set_irq; replaced by a threaded handler in commit 0645211c, "
        "after 2.6.32): a host thread wake-up and two context switches per VF interrupt that the model does not "
        "charge (no profile key holds it).",
        "exit.indirect_per_direct, the profile's one free value (range 0.1-2, prior 0.2), stays at its fit on the "
        "window-bound model, 1.482 (issue 48). Re-run on the autotuned stream (issue 49 item 6: calibrate sriov "
        "--budget 12 --seeds 1,2 --duration 0.2) the objective is flat across the whole range (2.24-2.77 over its "
        "12 points, in no order: seed noise) and the argmin, 1.309, moves the calibration rows 16 -> 17 of 27: a "
        "stream that polls without interrupts makes a few thousand exits a second, so the rows no longer identify "
        "the value. It was not applied: a value the rows cannot see is not a fit. Its first fits (6.7 with the "
        "range widened to 10; 2 at the bound) stood in for the CPU the window-bound stream lacked.",
    ],
    axis=Axis(r"(?P<series>ITR)-(?P<x>\d+)K", "VF interrupt throttle rate (thousands of interrupts/s)"),
))


# --- Fig. 5: one VM with 1-8 VFs -----------------------------------------------------------

#: Fig. 5's VF counts (the text discusses 1, 3-4 and 'greater than four').
_FIG5_VFS = (1, 2, 3, 4, 6, 8)
#: Fig. 5's interrupt rate: not stated; taken at §3.2's optimum, the one rate at which §3.2 and
#: §3.3 both hold (see the notes).
_FIG5_RATE = _FIG4_OPTIMUM


def _fig5(duration, step):
    rows = []
    thr, cpu = {}, {}
    for n in _FIG5_VFS:
        cfg = f"VF-{n}"
        s = simulate(layout("sriov-fig4.toml", 1, {"vm.0.net.vfs": n, "vm.0.net.itr_us": 1e6 / _FIG5_RATE}),
                     what=f"sriov-fig5 {cfg}", duration=duration).summary
        step(cfg)
        thr[n], cpu[n] = _gbps(s), _host_cpu(s)
        rows.append(Measured(cfg, "throughput", "Gbit/s", thr[n]))
        rows.append(Measured(cfg, "cpu", "%", cpu[n]))
        rows.append(Measured(cfg, "interrupts_per_vf", "irq/s", _device_irqs(s["vms"][0]) / n))
    # §3.3: "When the VF number is greater than four, the throughput starts to decrease but the CPU
    # utilization keeps increasing."
    past4 = [n for n in _FIG5_VFS if n >= 4]
    rows.append(Measured("VF-4..8", "throughput_falls", "holds", _falls([thr[n] for n in past4])))
    rows.append(Measured("VF-4..8", "cpu_rises", "holds", _rises([cpu[n] for n in past4])))
    return rows


register(Experiment(
    id="sriov-fig5",
    title="SR-IOV VF scalability: TCP_STREAM into one VM of 2 vCPUs through 1-8 of its VFs, at 48,000 interrupts/s",
    source="CGR/AIR §3.3, Fig. 5; §4.4 (seed 003_9988edc85599e763.txt)",
    profile=PROFILE,
    baselines=(r"VF-\d+", r"VF-4\.\.8"),
    rows=_fig5,
    runs=len(_FIG5_VFS),
    notes=[
        "Roles (issue 47): all of Fig. 5 is the stock VF driver, a baseline, so every row with a published value is "
        "a calibration row: one VF's '~5.6 Gbps' and 'CPU utilization is 100 percent (1 processor core)' (§3.3; "
        "§4.4's 'a single VF saturates the CPU it runs on at a throughput of about 6 Gbps' is the same "
        "configuration, held through these two rows), the line rate 'with three and four VFs' (9.41 Gbit/s of TCP "
        "payload), and, as rows of unit holds over 4, 6 and 8 VFs, 'when the VF number is greater than four, the "
        "throughput starts to decrease but the CPU utilization keeps increasing' (VF-4..8 throughput_falls and "
        "cpu_rises: each step more than 1 %, our reading).",
        "The interrupt rate is 48,000/s, a declared choice: the paper does not state Fig. 5's. At the driver's default "
        "8,000/s, §3.3's one VF at 100 % of a core contradicts §3.2 (at 8K the CPU is still rising with the rate), and "
        "three or four VFs of one VM at the line rate contradict §5.5 (MTVD's +42.21 % over FIR's four VMs needs FIR "
        "at 4 VMs at most 9.41 / 1.42 = 6.6 Gbit/s). At 48K §3.2 ('fully utilized') and §3.3 both hold; §5.5's "
        "single-thread bottleneck at 8K is the statement that gives way (sriov-fig12).",
        "One VM with N VFs ([vm.net] vfs = N; the VF counts 1, 2, 3, 4, 6, 8: the axis is not given): §3.3 'one VM "
        "can achieve line rate by assigning multiple (three or four in Fig. 5) VFs'. Its 'each VM is configured with "
        "two virtual CPUs' and 'the CPU utilization can never exceed 100 percent for one VM' could instead read as N "
        "VMs of one VF each; the latter is taken as one VF driver's limit and is no row. VF i's vector goes to vCPU "
        "i mod 2 ('the VF driver can only use one VCPU'); each VF carries its own netperf stream (its own client "
        "flow) read by its own receiver in the guest. The VM is the Fig. 4 VM, its window autotuned: one VF alone "
        "then reaches the line rate with its vCPU at 100 % (9.41 Gbit/s against ~5.6; with the fixed 65,536-byte "
        "window before issue 49, 6.35 at 83 %), the per-frame gap of sriov-fig4's notes. Throughput is the sum over the VFs, CPU the host's in % of one "
        "core.",
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
#: The VM count where §5.2.1 has FIR and CGR at their best ("improved throughput when with 1 VM
#: to 8 VM but both degrade significantly when with more than 8 VM"; §5.7's "zenith").
_FIG8_ZENITH = 8
#: AIR "stays stable" past its peak: at every count after it, at least this share of the peak
#: (our reading; the paper sizes none).
_STABLE = 0.9


def _vf(controller: str) -> dict:
    return {"vm.0.net.itr_us": REMOVE, "vm.0.net.moderation": dict(_CONTROLLERS[controller]),
            "warmup_s": _FIG8_WARMUP}


def _stays_stable(series: list[float | None]) -> float | None:
    """1.0 where every value after the largest is at least :data:`_STABLE` of it, else 0.0."""
    if not series or any(v is None for v in series):
        return None
    top = max(range(len(series)), key=lambda i: series[i])
    return float(all(v >= _STABLE * series[top] for v in series[top + 1:]))


def _fig8a(duration, step, counts=_FIG8_VMS):
    rows = []
    thr = {c: {} for c in _CONTROLLERS}
    cpu = {c: {} for c in _CONTROLLERS}
    ratios = {c: [] for c in ("CGR", "AIR")}
    for n in counts:
        for c in _CONTROLLERS:
            cfg = f"{c}-{n}"
            r = simulate(layout("sriov-fig4.toml", n, _vf(c), _FIG8_DURATION), what=f"sriov-fig8a {cfg}",
                         duration=duration)
            step(cfg)
            s = r.summary
            thr[c][n], cpu[c][n] = _gbps(s), _host_cpu(s)
            rows.append(Measured(cfg, "throughput", "Gbit/s", thr[c][n]))
            rows.append(Measured(cfg, "host_cpu", "%", cpu[c][n]))
            rows.append(Measured(cfg, "interrupts_per_vm", "irq/s", sum(_device_irqs(v) for v in s["vms"]) / n))
        for c in ("CGR", "AIR"):
            ratio = _ratio(thr[c][n], thr["FIR"][n])
            ratios[c].append(ratio)
            rows.append(Measured(f"{c}/FIR-{n}", "throughput_ratio", "x", ratio))
        # §5.2.1 "Overhead": "the AIR consumes more CPU computation resources when VM number is small
        # such as 1 and 4 VM ... However, the AIR outperforms the CGR and the FIR with higher
        # throughput when the VM number is more than 4".
        if n <= 4:
            rows.append(Measured(f"AIR vs CGR,FIR-{n}", "cpu_above", "holds",
                                 _above(cpu["AIR"][n], [cpu["CGR"][n], cpu["FIR"][n]])))
        else:
            rows.append(Measured(f"AIR vs CGR,FIR-{n}", "throughput_above", "holds",
                                 _above(thr["AIR"][n], [thr["CGR"][n], thr["FIR"][n]])))
    # The ranges' ends: the smallest and the largest ratio over the VM counts run.
    for c in ("CGR", "AIR"):
        got = [x for x in ratios[c] if x is not None]
        rows.append(Measured(f"{c}/FIR", "min_throughput_ratio", "x", min(got) if got else None))
        rows.append(Measured(f"{c}/FIR", "max_throughput_ratio", "x", max(got) if got else None))
    # §5.2.1: "both FIR and CGR obtain improved throughput when with 1 VM to 8 VM but both degrade
    # significantly when with more than 8 VM"; "the AIR ... achieves the peak throughput and stays
    # stable with the increasing number of VMs".
    up = [n for n in counts if n <= _FIG8_ZENITH]
    down = [n for n in counts if n >= _FIG8_ZENITH]
    for c in ("FIR", "CGR"):
        if len(up) > 1:
            rows.append(Measured(f"{c}-1..8", "throughput_rises", "holds", _rises([thr[c][n] for n in up])))
        if len(down) > 1:
            rows.append(Measured(f"{c}-8..16", "throughput_falls", "holds", _falls([thr[c][n] for n in down])))
    if len(counts) > 1:
        rows.append(Measured("AIR-peak..16", "stays_stable", "holds", _stays_stable([thr["AIR"][n] for n in counts])))
    return rows


register(Experiment(
    id="sriov-fig8a",
    title="TCP_STREAM (1,472 B) into 1-16 VMs of 2 vCPUs on 8 pCPUs, each with a VF: FIR vs CGR vs AIR",
    source="CGR/AIR §5.2.1, Fig. 8a (seed 003_9988edc85599e763.txt)",
    profile=PROFILE,
    baselines=(r"FIR-\d+", r"FIR-1\.\.8", r"FIR-8\.\.16"),
    rows=_fig8a,
    runs=len(_FIG8_VMS) * len(_CONTROLLERS),
    notes=[
        "Roles (issue 47): FIR, the driver's fixed 8,000 interrupts/s (§4.1: 'this fixed interrupt rate is "
        "considered as the baseline'), is the baseline; its rows with a published value are calibration rows: the "
        "host's CPU 'under 600 ... percent' for Fig. 8a (§5.2.1; an at_most bound at every configuration, CGR's and "
        "AIR's predictions) and §5.2.1's 'both FIR and CGR obtain improved throughput when with 1 VM to 8 VM but both "
        "degrade significantly when with more than 8 VM' as rows of unit holds (FIR-1..8 throughput_rises over 1, 4 "
        "and 8 VMs, FIR-8..16 throughput_falls over 8, 12 and 16: each step more than 1 %; 'significantly' is not "
        "sized and not held). §5.7's 'zenith of throughput is approximated at 8VMs' is what the two say together. "
        "Every CGR and AIR value, ratio and direction is a prediction.",
        "The gains are ranges over the VM counts: 'CGR and AIR achieve 1.22x~2.26x and 1.31x~2.97x higher throughput "
        "than the FIR' (base: FIR's throughput at the same count). Each count's ratio is held within its range, and "
        "the smallest and largest over the counts run (CGR/FIR and AIR/FIR min_ and max_throughput_ratio) against "
        "the range's ends; 'the highest performance improvements appear ... such as with 16 VMs' is soft and no row. "
        "Conflict C3: at 1 VM CGR sets 4,000/s for full-size frames (§4.2), below FIR's 8,000/s, where §3.2 has "
        "the throughput still rising with the rate, so CGR/FIR >= 1.22 at 1 VM cannot hold with §3.2 and §4.2 "
        "(the 1-VM range row is kept and marked so here).",
        "Directions (predictions, unit holds): CGR-1..8 throughput_rises and CGR-8..16 throughput_falls (the same "
        "sentence as FIR's); AIR 'achieves the peak throughput and stays stable with the increasing number of VMs' "
        "(AIR-peak..16 stays_stable: at every count past AIR's own peak, at least 90 % of it, our reading of "
        "'stable'); 'the AIR consumes more CPU computation resources when VM number is small such as 1 and 4 VM' "
        "(AIR vs CGR,FIR-1 and -4 cpu_above: AIR's host CPU above both); 'the AIR outperforms the CGR and the FIR "
        "with higher throughput when the VM number is more than 4' (AIR vs CGR,FIR-8, -12 and -16 "
        "throughput_above).",
        "Set-up: VM counts 1, 4, 8, 12, 16 (the text names each; the axis is not given). Each VM is the Fig. 4 VM "
        "(2 vCPUs, the VF's 512-descriptor ring, the autotuned window, one netperf "
        "stream of 1,472-byte sends); runs of 0.5 s after a 0.2 s warm-up (AIR and CGR decide every 100 ms; no run "
        "length is stated). The vCPUs are placed by the host's CFS on the 8 pCPUs, unpinned (our choice): §3.3 has "
        "'each VCPU can run on any physical CPU', while §5.2.2's 'the testbed server has 8 cores and each VM is "
        "allocated one physical exclusively' (at 8 VMs) may mean pinning, which the paper does not state. CPU is the "
        "host's, every pCPU's busy time in % of one core (800 % = 8 cores, §5.2; Fig. 8's CPU 'denotes the consumed "
        "computation resources of the Netperf', where measured not stated).",
        "Controllers: FIR 8,000/s. CGR (§4.2) sets 4K / 8K / 20K / 100K by the average packet size over its 100 ms "
        "timeslice; the 'latency critical' cut at 20K packets/s is ours (policy cgr.rs). AIR (§4.3, Algorithm 1): "
        "k = 512, the VF's receive ring, after §4.3.1's 'k is the size of the VF receiving ring and is also a "
        "constant' (Table 1's 'number of packets received on each interrupt' would make k a measured quantity; the "
        "model follows §4.3.1's definition). C is one core's cycles (§4.3.3); C_pkt (guest.tcp_rx_segment_ns) and "
        "C_int (exit.interrupt_delivery_ns + exit.eoi_ns + guest.virtio_irq_ns + guest.napi_poll_ns, in cycles) are "
        "the profile's costs, as §4.3.2's constants are 'obtained from experiments'; they leave out the indirect "
        "cost the model charges after each exit. Not given by the paper (our choices, policy air.rs): offset "
        "1,000/s, threshold 500/s, interval 100 ms, I_min 956/s (ixgbe's IXGBE_MIN_INT_RATE), initial rate 8,000/s. "
        "With k = 512 AIR's Eq. 5 ceiling C / (C_pkt k + C_int) is ~1,064/s, so AIR runs at ~1-2K/s; the paper's Î "
        "'conforms' Fig. 4's ~48K, which with k = 512 would need C_pkt below ~90 cycles (conflict C4). Not done: "
        "taking C_pkt and C_int from a fit of the simulated FIR sweep (Fig. 4): the model's sweep is flat (NAPI "
        "polls without completing at every throttle), so such a fit has nothing to separate them by.",
        "structural: with the window autotuned a VM's stream is bound by its vCPU, not by its throttle: NAPI never "
        "completes, so FIR, CGR and AIR give one VM the line rate alike (every throughput ratio 1.00; with the "
        "fixed 65,536-byte window before issue 49 they were 0.50 and 0.13 at 1 VM, the window per interrupt "
        "deciding), and the per-frame gap of sriov-fig4's notes keeps even one VM's vCPU below its limit. "
        "structural: the baseline's regime past 4 VMs: in the "
        "model FIR fills the 10 GbE link from 4 VMs up with the host's CPU far below 600 %, where the paper's FIR "
        "degrades past 8 VMs (AIR/FIR = 2.97 with AIR at or below the line rate puts FIR at 16 VMs at or below "
        "3.2 Gbit/s); the ratios then stay near 1. No work-queue cost of 2.6.32's assigned-device interrupts (see "
        "sriov-fig4).",
        "Not reproduced: Fig. 8b (512 B: CGR 1.13-1.98x, AIR 1.11-2.78x, CPU under 646 %), Fig. 8c (50 B: CGR and "
        "AIR as FIR in throughput; 'the FIR has almost exhausted all CPU resources', a baseline regime; CGR and AIR "
        "'save up to 1.23 and 1.44 cores' at 12 VMs; CPU under 758 %) and Fig. 9 (UDP_STREAM: FIR's PLR 'reaches up "
        "to 21.13 percent' at 16 VMs, a baseline value; PLR 'very low when the VMs are less than 8'; AIR 'never "
        "exceeds 8 percent'; AIR 2 % against CGR 13 % and FIR 21 % at 16 VMs; best at 8 VMs). The model's client "
        "sends full segments whatever netperf's -m (structural for the 50-byte sender-bound case), so 8b and 8c "
        "would repeat 8a, and the UDP loss runs are not made. Their baseline statements (FIR's 21.13 % PLR at 16 "
        "VMs, FIR's exhausted CPU at 50 B) are calibration data not yet used.",
    ],
    axis=Axis(r"(?P<series>.+)-(?P<x>\d+)", "VMs"),
))


# --- Fig. 11: Apache Bench completion time ----------------------------------------------------

#: Fig. 11's request counts (1K-10K, §5.4).
_FIG11_REQUESTS = tuple(range(1_000, 10_001, 1_000))
#: The VMs Fig. 11 runs: not stated by the paper; §5.5's four co-hosted VMs are taken.
_FIG11_VMS = 4
#: Fig. 11's configurations: the three controllers, and AIR with the multi-threaded VF driver
#: (§5.4: "the AIR+MTVD shows a slowest pace of increase").
_FIG11 = {c: {"vm.0.net.moderation": dict(m)} for c, m in _CONTROLLERS.items()}
_FIG11["AIR+MTVD"] = {"vm.0.net.moderation": dict(_CONTROLLERS["AIR"]), "vm.0.net.mtvd": True}


def _fig11(duration, step, configs=tuple(_FIG11)):
    rows = []
    rates = {}
    for c in configs:
        s = simulate(layout("sriov-fig11.toml", _FIG11_VMS, _FIG11[c]), what=f"sriov-fig11 {c}",
                     duration=duration).summary
        step(c)
        per_vm = [v["throughput"]["ops_per_s"] for v in s["vms"]]
        rate = sum(per_vm) / len(per_vm) if all(x for x in per_vm) else None
        rates[c] = rate
        rows.append(Measured(c, "requests_per_vm", "req/s", rate))
        rows.append(Measured(c, "host_cpu", "%", _host_cpu(s)))
        for n in _FIG11_REQUESTS:
            # ab's 'time taken for tests' of n requests at the closed loop's steady rate.
            rows.append(Measured(f"{c}-{n // 1000}K", "completion_time", "s", n / rate if rate else None))

    def time(c: str, n: int) -> float | None:
        return n / rates[c] if rates.get(c) else None

    last = _FIG11_REQUESTS[-1]
    # §5.4: "the time taken for accomplishing the request by the FIR quickly increases with the
    # increasing number of requests, while CGR and AIR both perform slightly better than the FIR
    # and the AIR+MTVD shows a slowest pace of increase".
    if "FIR" in rates:
        rows.append(Measured("FIR-1K..10K", "time_rises", "holds", _rises([time("FIR", n) for n in _FIG11_REQUESTS])))
    for c in ("CGR", "AIR"):
        if c in rates and "FIR" in rates:
            # Below FIR's by more than a step (a fall from FIR's time to this one's).
            rows.append(Measured(f"{c} vs FIR", "time_below", "holds", _falls([time("FIR", last), time(c, last)])))
    if "AIR+MTVD" in rates and all(c in rates for c in _CONTROLLERS):
        # The pace of increase, the time one more request adds, is 1 / the steady rate: the
        # slowest pace is the highest rate.
        rows.append(Measured("AIR+MTVD vs FIR,CGR,AIR", "pace_lowest", "holds",
                             _above(rates["AIR+MTVD"], [rates[c] for c in _CONTROLLERS])))
    return rows


register(Experiment(
    id="sriov-fig11",
    title="Apache Bench (concurrency 500) completion time of 1K-10K requests per VM: FIR vs CGR vs AIR vs AIR+MTVD",
    source="CGR/AIR §5.4, Fig. 11 (seed 003_9988edc85599e763.txt)",
    profile=PROFILE,
    baselines=(r"FIR(-\d+K)?", r"FIR-1K\.\.10K"),
    rows=_fig11,
    runs=len(_FIG11),
    notes=[
        "§5.4 gives Fig. 11 in words only; its statements are rows of unit holds. FIR's time 'quickly increases with "
        "the increasing number of requests' (FIR-1K..10K time_rises: a baseline's, so a calibration row; it holds by "
        "construction, the model's time being n over a steady rate). 'CGR and AIR both perform slightly better than "
        "the FIR' (CGR vs FIR and AIR vs FIR time_below: the time of 10K requests more than 1 % below FIR's; "
        "'slightly' is not sized) and 'the AIR+MTVD shows a slowest pace of increase' (AIR+MTVD vs FIR,CGR,AIR "
        "pace_lowest: its time per added request, 1 over its steady rate, below the other three's) are predictions.",
        "Four VMs (§5.5's co-hosted four; Fig. 11's count is not stated), each serving a 45-byte page (not stated: "
        "a stock Apache 2.2 index.html) to an ab-like closed loop of 500 requests, a connection per request (ab "
        "without -k). FIR is 8,000 interrupts/s, CGR and AIR the policies' defaults (sriov-fig8a's notes), AIR+MTVD "
        "AIR with the multi-threaded VF driver (§4.4; the model's MTVD as in sriov-fig12's notes). Completion time of "
        "n requests is n over the VM's steady request rate: ab's start-up and its last, draining requests are not "
        "modelled (our choice), so the time is linear in n.",
    ],
    axis=Axis(r"(?P<series>[A-Z+]+)-(?P<x>\d+)K", "requests (thousands)"),
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
        "Every published row is a prediction. §5.5 gives MTVD's gain for TCP_STREAM with medium and large packets as "
        "'up to 42.21 percent higher throughput with an additional 64.86 percent CPU utilization than the FIR' (the "
        "larger of the 512- and 1,472-byte gains; base: FIR's throughput). The CPU is in points of one core (the UDP "
        "text equates 145.54 percent with 1.46 cores), here the host's pCPUs summed (whether the paper's is per VM or "
        "over the four is not stated: our reading).",
        "Four Fig. 4 VMs (§5.5: '4 co-hosted VMs each of which is configured with 2 vCPUs'; a VF at FIR's 8,000 "
        "interrupts/s, the autotuned window), unpinned on the 8 pCPUs. MTVD's dispatch, our choice: §4.4's 'thread "
        "pool consists of several kernel threads with each thread bound to a CPU ... packet with index i is "
        "dispatched to thread i mod N'; the model's NAPI poll keeps the descriptor work on the polling vCPU and hands "
        "every packet to the kernel thread of the VM's other vCPU (guest/mtvd.rs: one thread, the polling vCPU's own "
        "excluded), which takes it up the stack and wakes netserver on vCPU 0. The model's client sends full "
        "segments whatever netperf's -m, so 512 and 1,472 bytes are one configuration.",
        "The baseline's regime: §5.5's 'the MTVD is suitable for the situation where a single VM can hardly process "
        "more incoming packets so that a single thread soon becomes a bottleneck' has FIR at 4 VMs single-thread-bound "
        "(+42.21 % at or below the line rate puts FIR at most at 9.41 / 1.42 = 6.6 Gbit/s). It conflicts with §3.2 "
        "(at FIR's 8K one VF is still below a core; sriov-fig4's notes) and is no calibration row; it is what the "
        "model misses (structural: the baseline's regime): four VMs under FIR fill the 10 GbE link (one VM's "
        "stream alone reaches it, sriov-fig4's per-frame gap; ~4 Gbit/s each with the fixed window before issue "
        "49), so MTVD has no throughput to add.",
        "MTVD's CPU in the model is mostly reschedule IPIs: netserver stays on vCPU 0 (the model has no wake_affine "
        "pull to the thread's vCPU), so the thread on vCPU 1 wakes it across vCPUs every few segments, each an "
        "ICR-write exit on the sender and a wake-up of a halted vCPU on the receiver.",
        "Not reproduced: the 50-byte TCP rows ('the sending side achieves the bottleneck', a baseline regime) and "
        "Fig. 12b's UDP_STREAM (1,472 B: +28.89 % for +8.76 points; 512 B: +102.93 % for +145.54 points, the "
        "abstract's '2.03x performance with additional 1.46 cores'; 'the UDP throughput merely reaches 367.1 Mbps "
        "... the network bottleneck is on the sending side', a baseline regime): the client sends full segments "
        "whatever -m, and no UDP run is made.",
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
        "pCPUs twice: netperf TCP_STREAM into every VM (1,472-byte messages, Fig. 4's VM, its window autotuned), then netperf "
        "TCP_RR (1 byte each way, one transaction in flight per VM). Throughput and transactions/s are aggregates; "
        "rr_p99 is the worst VM's 99th percentile; host CPU is every pCPU's busy time (vCPU threads, and the vhost "
        "threads of virtio), guest CPU the VMs' time in guest mode, both in % of one core.",
        "VF rows: FIR 8,000/s, CGR and AIR with the policies' defaults, ixgbevf's own adaptive ITR (itr_us = "
        "\"dynamic\"), net DIM driving the EITR. virtio rows: virtio-net over vhost-net with the event index only "
        "(no moderation), virtio notification coalescing (1,000 us / 10 frames), the guest's virtio-net DIM. "
        "Interrupts are delivered by emulation (the E5607 has neither APICv nor posted interrupts).",
        "Anachronistic what-ifs: the sriov profile is the paper's Linux 2.6.32 testbed, and most of these "
        "mechanisms came later — in-tree ixgbevf and its adaptive ITR (2.6.34), vhost-net (2.6.33), the virtio "
        "event index (about 2.6.39/3.0), net DIM (4.16), virtio notification coalescing and virtio-net guest DIM "
        "(6.x); the vhost weights are today's (VHOST_NET_PKT_WEIGHT, 2018). Each runs with 2.6.32's costs and "
        "scheduler: a comparison of mechanisms on an old host, not of that host's kernels.",
    ],
    axis=Axis(r"(?P<series>.+)-(?P<x>\d+)", "VMs"),
))
