"""ES2 (seed 000_8734db7c67a9fb1f.txt) experiments."""

from __future__ import annotations

from eventpath.reproduce.experiment import SCENARIOS, Axis, Experiment, Measured, register
from eventpath.reproduce.simulate import simulate

#: ES2 Fig. 4a/4b: a group of bars per message kind, one bar per configuration ("tcp512-PI").
_SEND = Axis(r"(?P<x>tcp512|udp512)-(?P<series>.+)", "512-byte send")


def _fig4_udp(duration, step):
    r = simulate(SCENARIOS / "es2-udp-512.toml", what="es2-fig4-udp udp512-noPI", duration=duration)
    step("UDP 512 B, no PI")
    vm = r.summary["vms"][0]
    ex = vm["exits_per_s"]
    cfg = "udp512-noPI"
    return [
        Measured(cfg, "exits_io_instruction", "exits/s", ex["io_instruction"]),
        # "few" interrupt-related exits: the seed gives no number.
        Measured(cfg, "exits_interrupt_related", "exits/s", (ex["interrupt_delivery"] or 0) + (ex["eoi"] or 0)),
        Measured(cfg, "exits_total", "exits/s", vm["exits_total_per_s"]),
        Measured(cfg, "eht", "%", vm["eht_pct"]),
        Measured(cfg, "throughput", "Gbit/s", vm["throughput"]["gbps"]),
    ]


register(Experiment(
    id="es2-fig4-udp",
    title="1 VM / 1 vCPU sending 512-byte UDP without posted interrupts: exits and EHT",
    source="ES2 §6.2, Fig. 4b (seed 000_8734db7c67a9fb1f.txt)",
    profile="es2",
    baselines=(r"udp512-noPI",),
    rows=_fig4_udp,
    runs=1,
    notes=[
        "The same measurement as es2-fig4-base's udp512-noPI bar (ES2 §6.2, Fig. 4b): its one published value, "
        "'nearly 100K' I/O-instruction exits (approximate), is a copy of es2-fig4-base's, so its calibration row "
        "is that one counted again (the fit de-duplicates it; a scorecard counts both). Kept as the small example "
        "the CLI's tests run.",
        "The 29.63 % UDP EHT is now held against es2-fig4-base's udp512-PI bar (audit es2 item 8: 'reduces the "
        "EHT from 29.63% to 0.01%' is said of PI+H(P), which builds on PI), not against this w/o-PI run.",
        "Datagram cost: Fig. 4b's ~100K kicks/s at 29.63 % EHT leave ~7.0 us of guest time per datagram; the "
        "calibrated profile reaches it by raising exit.indirect_per_direct to 1.421 (range 0..1.5, prior 0.2); "
        "at the prior slowdown it would need guest.udp_tx_packet_ns ~6.4 us, above its 6.0 us maximum. "
        "Structural (candidate): the modelled guest send path is cheaper than ES2's within the ranges its "
        "sources allow (audit es2 §4, 'Fits near their bounds').",
    ],
    axis=_SEND,
))


# --- ES2 Table 1 and Fig. 4 (issue 3): TCP and UDP send, without and with posted interrupts ---

#: (config label, scenario file) of the four runs.
_RUNS = {
    "tcp512-noPI": "es2-tcp-512-emulated.toml",
    "tcp512-PI": "es2-tcp-512-posted.toml",
    "udp512-noPI": "es2-udp-512-emulated.toml",
    "udp512-PI": "es2-udp-512-posted.toml",
}

_REASONS = ("interrupt_delivery", "eoi", "io_instruction")


def _vm(cfg, duration, step, variant=None):
    """Run ``cfg``'s scenario; ``variant`` = (label, {dotted key: value}) changes it first."""
    label = cfg if variant is None else f"{cfg} {variant[0]}"
    r = simulate(SCENARIOS / _RUNS[cfg], variant[1] if variant else None, what=label, duration=duration)
    step(label)
    return r.summary["vms"][0]


def _share(vm, reason):
    tot = vm["exits_total_per_s"]
    return 100.0 * (vm["exits_per_s"][reason] or 0.0) / tot if tot else None


def _holds(cond: bool | None) -> float | None:
    """A direction row's value: 1 where it holds in the run, 0 where it fails, None where the
    run cannot tell."""
    return None if cond is None else (1.0 if cond else 0.0)


#: ES2 Table 1's two runs (ES2 §3.3): 512-byte TCP send, 1 vCPU, without and with PI.
_TABLE1 = ("tcp512-noPI", "tcp512-PI")


def _table1_rows(label, vm, order=True):
    """Table 1's rows for one run: exits/s and share per cause, the total, the §3.3 share, and
    (``order``: a run without posted interrupts) the order of delivery and EOI exits."""
    rows = []
    for reason in _REASONS:
        rows.append(Measured(label, f"exits_{reason}", "exits/s", vm["exits_per_s"][reason]))
        rows.append(Measured(label, f"share_{reason}", "%", _share(vm, reason)))
    rows.append(Measured(label, "exits_total", "exits/s", vm["exits_total_per_s"]))
    t = vm["device_interrupts_by_target_state_per_s"]
    seen = sum(v or 0 for v in t.values())
    # ES2 §3.3's explanation, measured: share of device interrupts that found the vCPU in an exit.
    rows.append(Measured(label, "irq_found_vcpu_in_exit", "%", 100.0 * (t["exit"] or 0) / seen if seen else None))
    if order:
        # ES2 §3.3 / §6.2: "Interrupt Delivery incurs less VM exits than Interrupt Completion".
        ex = vm["exits_per_s"]
        rows.append(Measured(label, "delivery_below_eoi", "holds",
                             _holds((ex["interrupt_delivery"] or 0.0) < (ex["eoi"] or 0.0))))
    return rows


def _table1(duration, step):
    rows = []
    vms = {}
    for cfg in _TABLE1:
        vm = vms[cfg] = _vm(cfg, duration, step)
        rows += _table1_rows(cfg, vm, order=cfg == "tcp512-noPI")
        rows.append(Measured(cfg, "throughput", "Gbit/s", vm["throughput"]["gbps"]))
    no, pi = vms["tcp512-noPI"], vms["tcp512-PI"]
    io0 = no["exits_per_s"]["io_instruction"]
    io1 = pi["exits_per_s"]["io_instruction"]
    # ES2 §3.3's "a 15% increase" of I/O-instruction exits with PI.
    rows.append(Measured("PI vs noPI", "io_instruction_rise", "%", 100.0 * (io1 / io0 - 1.0) if io0 else None))
    # ES2 §3.3: "the elimination of interrupt-related VM exits brings a higher throughput".
    g0, g1 = no["throughput"]["gbps"], pi["throughput"]["gbps"]
    rows.append(Measured("PI vs noPI", "throughput_higher", "holds", _holds(None if g0 is None or g1 is None else g1 > g0)))
    return rows


register(Experiment(
    id="es2-table1",
    title="1 VM / 1 vCPU sending 512-byte TCP: exits by cause without and with posted interrupts",
    source="ES2 §3.3, Table 1 (seed 000_8734db7c67a9fb1f.txt)",
    profile="es2",
    baselines=(r"tcp512-(noPI|PI)", r"PI vs noPI",),
    rows=_table1,
    runs=2,
    notes=[
        "Roles (ES2 §6.1, 'we take PI enabled as the baseline configuration'; §6.2 adds w/o PI): both columns are "
        "baselines, so every published row here is a calibration row, the two directions included.",
        "Published shares: Table 1 prints them of the total incl. ~1.5K/s other exits (the w/o-PI column sums to "
        "98.7 %). Only w/ PI's I/O share (99.1 %, the one hint at its other exits: Table 1 prints no PI total) is "
        "held; w/o PI's three shares and PI's 0 % shares are the count rows' arithmetic, and holding them would "
        "count one miss (the EOI count) three times (audit es2 §2.1). The rows stay, without a published value.",
        "irq_found_vcpu_in_exit: the share of device interrupts raised while the vCPU was in the hypervisor (ES2 "
        "§3.3's reason for delivery << EOI exits). Published as derived, not printed: without PI every interrupt "
        "traps one EOI and only one that finds the vCPU in guest mode needs a delivery exit, so 1 - 5,575 / "
        "30,736 = 81.9 % found it out of guest mode. Under random arrival it would be about the EHT (~27 %): ES2's "
        "ACK interrupts must be phase-locked to its kick exits. Structural (candidate): the model's miss of the "
        "EOI count (the guest takes ~8K interrupts/s where ES2's took ~31K) and of this share is one miss, of the "
        "ACK path's phase (docs/model.md, 'Known gap').",
        "Directions (calibration, both columns baselines): delivery_below_eoi, ES2 §3.3 / §6.2's 'Interrupt "
        "Delivery incurs less VM exits than Interrupt Completion'; throughput_higher, §3.3's 'the elimination of "
        "interrupt-related VM exits brings a higher throughput to the guest'.",
        "w/o PI on Linux 4.4 is kvm_intel enable_apicv=0 (one switch for APIC-register virtualization, virtual-"
        "interrupt delivery and posted interrupts; enable_apicv = 1 by default, arch/x86/kvm/vmx.c): every EOI "
        "traps, interrupt_delivery = \"emulated\".",
        "Unstated, what the data imply: ES2 counts the EOIs as APIC-access exits at offset 00B0H (§6.2), i.e. the "
        "guest EOIs through the xAPIC MMIO page, and with 30.7K EOI exits/s it did not use KVM's PV-EOI. A stock "
        "Linux 4.4 KVM guest that sees x2APIC in CPUID turns it on (arch/x86/kernel/kvm.c) and EOIs by WRMSR, and "
        "uses PV-EOI where the host offers it; ES2 says neither. exit.eoi_ns takes the xAPIC decode's cost.",
        "Unstated, chosen here: where the vCPU and vhost threads ran (left unpinned: the host scheduler, the CFS "
        "model of Linux 4.4, places them; with 7 idle cores wake_affine declines the busy waker's core and "
        "select_idle_sibling keeps vhost on its idle previous core, so they never share a core); no other VMs; "
        "the client is the same hardware and kernel (§6.1). The 256-entry rings are qemu 2.0's fixed virtio-net "
        "queue size.",
        "Forcing vhost onto the vCPU's core (a diagnostic, not ES2's setup) removes delivery exits entirely but "
        "adds ~27K/s external-interrupt exits (wake-up preemption of the vCPU), which ES2 Table 1 does not show.",
        "es2-table1-sensitivity shows how settings the seed does not state move these numbers (a diagnostic).",
    ],
    axis=_SEND,
))


# --- Table 1's sensitivity to what ES2 §6.1 does not state ---

#: (label, scenario changes) of the sensitivity runs of the noPI case.
_VARIANTS = [
    ("default", {}),
    # Linux idle=poll: vhost's core never naps, so a kick wakes vhost without the C1 exit.
    ("idle=poll", {"host.idle": "poll"}),
] + [
    # The ACK's path from the host NIC to the tap (host.nic_rx_ns, 3 us first principles) sets
    # the ACK's round trip and so where in the guest's send cycle its interrupt is raised.
    (f"nic_rx={us}us", {"profile_overrides.host.nic_rx_ns": us * 1000.0}) for us in (1.5, 2.0, 2.5, 3.5, 4.0, 10.0)
] + [
    # The post-exit slowdown (exit.indirect_per_direct, 0.2 first principles) at ~1.0, the value
    # ES2 Fig. 4b's UDP rate and EHT would imply: a what-if, not the model's setting.
    ("slowdown=1.0x", {"profile_overrides.exit.indirect_per_direct": 1.0}),
]


def _table1_sensitivity(duration, step):
    rows = []
    for label, changes in _VARIANTS:
        vm = _vm("tcp512-noPI", duration, step, (label, changes) if changes else None)
        rows += _table1_rows(label, vm)
    return rows


register(Experiment(
    id="es2-table1-sensitivity",
    title="ES2 Table 1 without PI under settings the seed does not state: host idle loop, ACK path latency",
    # Names no seed file on purpose: a diagnostic of what-ifs, not a reproduction of ES2, so the
    # scorecard files it under "other" and none of its rows counts as a prediction of ES2.
    source="a diagnostic, not a reproduction: what-ifs on the set-up of ES2 §3.3 Table 1 (es2-table1's w/o-PI run) "
           "under settings §6.1 does not state",
    profile="es2",
    rows=_table1_sensitivity,
    runs=len(_VARIANTS),
    notes=[
        "Not a reproduction of a stated setup: each row set is the es2-table1 noPI scenario with one change, "
        "to show which unstated settings the published numbers are sensitive to. 'default' is es2-table1's run. "
        "Its source names no seed, so the scorecard counts its rows under 'other', not as predictions of ES2 "
        "(audit es2 §2.2: they were 63 of ES2's 109 prediction rows); Table 1's w/o-PI values stay beside each "
        "variant for reading.",
        "idle=poll: scenario host.idle = \"poll\" (Linux idle=poll, common on hosts tuned for latency).",
        "nic_rx=Nus: profile_overrides.host.nic_rx_ns, the host NIC interrupt + NAPI + bridge path an ACK takes "
        "to the tap (3 +- 1 us in the profile, first principles). It moves the ACK's arrival within the guest's "
        "~13 us send cycle: the share of interrupts raised while the vCPU is in an exit moves between ~0 % and "
        "~80 % over a few us of it, a phase effect. A real round trip varies by more than +- 1 us (NIC interrupt "
        "moderation, C-state exits on the client), so the real share would be an average over phases, not a "
        "lucky phase.",
        "slowdown=1.0x: profile_overrides.exit.indirect_per_direct = 1.0 instead of the first-principles 0.2. "
        "ES2 Fig. 4b (~100K kicks/s at 29.63 % EHT) leaves 7.04 us of guest time per UDP datagram, ~3 us more "
        "than the modelled send path, i.e. ~1.0 x the kick exit's cost if it were all post-exit slowdown. Shown "
        "as a what-if only: fitting the model to that figure would make it reproduce by construction.",
    ],
))


#: "few" interrupt-related exits beside ~100K I/O-instruction exits (ES2 §6.2, Fig. 4b): our
#: threshold, 5 % of them.
FEW_IRQ_EXITS = 5000.0


def _fig4(duration, step):
    rows = []
    for cfg in _RUNS:
        vm = _vm(cfg, duration, step)
        for reason in _REASONS:
            rows.append(Measured(cfg, f"exits_{reason}", "exits/s", vm["exits_per_s"][reason]))
        ex = vm["exits_per_s"]
        rows.append(Measured(cfg, "exits_interrupt_related", "exits/s", (ex["interrupt_delivery"] or 0) + (ex["eoi"] or 0)))
        rows.append(Measured(cfg, "exits_total", "exits/s", vm["exits_total_per_s"]))
        rows.append(Measured(cfg, "eht", "%", vm["eht_pct"]))
        rows.append(Measured(cfg, "throughput", "Gbit/s", vm["throughput"]["gbps"]))
    return rows


_FIG4_NOTES = [
    "Roles (ES2 §6.1): w/o PI and PI are baselines, their published rows calibration rows; PI+H(P) is ES2's "
    "mechanism, its rows predictions.",
    "Published rates are the text's approximations ('nearly 100K'). Fig. 4a's 'nearly 110K' total and 'About "
    "70K' I/O exits of w/o PI are not held: they are §6.2's rounding of the bars Table 1 prints (111,155 and "
    "73,310, es2-table1), the same measurement, which the fit's de-duplication misses because the numbers "
    "differ (audit es2 item 6). The 26.68 % EHT is held.",
    "UDP (Fig. 4b): 'nearly 100K I/O Instruction exits, with only few interrupt-related VM exits' is said of the "
    "UDP case, so the rate is held on w/o PI and on PI; 'few' is exits_interrupt_related at most 5,000/s (5 % "
    "of the ~100K: our threshold). The 29.63 % EHT ('reduces the EHT from 29.63% to 0.01%', said of PI+H(P), "
    "which builds on PI) is held on PI; the bar it starts from is not named, and w/o PI's differs little.",
    "Unstated, chosen here: as es2-table1 (threads unpinned, placed by the CFS model; 256-entry rings, qemu "
    "2.0's fixed virtio-net queue).",
]


register(Experiment(
    id="es2-fig4-base",
    title="1 VM / 1 vCPU sending 512-byte TCP and UDP, without PI and with PI: exits by reason and EHT",
    source="ES2 §6.2, Fig. 4a/4b (seed 000_8734db7c67a9fb1f.txt)",
    profile="es2",
    baselines=(r"(tcp|udp)512-(noPI|PI)",),
    rows=_fig4,
    runs=4,
    notes=_FIG4_NOTES + ["The PI+H(P) bars are es2-fig4's."],
    axis=_SEND,
))


# --- ES2 Fig. 4 complete (issue 14): the PI+H(P) bars, ES2's perceptive switch on a joint thread ---

#: PI+H(P): the PI scenario served by an ES2 joint thread, quota per ES2 §5.2 ("no more than 4 for
#: TCP streams and no more than 16 for UDP streams"); the joint thread is placed by the host
#: scheduler, as the vhost thread of the PI run is.
_HP = {"tcp512-PI+H(P)": ("tcp512-PI", 4), "udp512-PI+H(P)": ("udp512-PI", 16)}

#: The joint thread's sleep beside ES2's nominal 10 us (§5.2): how far the primitive's slack
#: could stretch it (Linux 4.4's default timer slack is 50 us). A diagnostic of the TCP bar.
_SLEEPS_US = (20, 40, 60)


def _hp_rows(cfg, vm):
    rows = [Measured(cfg, "exits_io_instruction", "exits/s", vm["exits_per_s"]["io_instruction"])]
    for reason in ("interrupt_delivery", "eoi"):
        rows.append(Measured(cfg, f"exits_{reason}", "exits/s", vm["exits_per_s"][reason]))
    rows.append(Measured(cfg, "exits_total", "exits/s", vm["exits_total_per_s"]))
    rows.append(Measured(cfg, "eht", "%", vm["eht_pct"]))
    rows.append(Measured(cfg, "throughput", "Gbit/s", vm["throughput"]["gbps"]))
    return rows


def _fig4_full(duration, step):
    rows = _fig4(duration, step)
    for cfg, (base, quota) in _HP.items():
        io = {"handling": "es2", "switch": "perceptive", "quota": quota}
        rows += _hp_rows(cfg, _vm(base, duration, step, (f"H(P) quota {quota}", {"host.io": io})))
    for us in _SLEEPS_US:
        io = {"handling": "es2", "switch": "perceptive", "quota": 4, "sleep_us": us}
        vm = _vm("tcp512-PI", duration, step, (f"H(P) quota 4 sleep {us}us", {"host.io": io}))
        rows += _hp_rows(f"tcp512-PI+H(P) sleep {us}us", vm)
    return rows


register(Experiment(
    id="es2-fig4",
    title="1 VM / 1 vCPU sending 512-byte TCP and UDP: w/o PI, PI and PI+H(P), exits by reason and EHT",
    source="ES2 §6.2, Fig. 4a/4b; §5.2 quota (seed 000_8734db7c67a9fb1f.txt)",
    profile="es2",
    baselines=(r"(tcp|udp)512-(noPI|PI)",),
    rows=_fig4_full,
    runs=6 + len(_SLEEPS_US),
    notes=_FIG4_NOTES + [
        "The first four configurations are es2-fig4-base's runs (calibration rows); PI+H(P) is a prediction.",
        "PI+H(P): [host.io] handling = \"es2\", perceptive switch, quota 4 (TCP) / 16 (UDP) as ES2 §5.2 "
        "recommends ('no more than 4 for TCP ... 16 for UDP'; §6.2: 'The perceptive mode switch algorithm was "
        "adopted here'); one device, so the joint thread holds one TX and one RX handler. Where the joint thread "
        "ran is unstated: the host scheduler places it, as the PI run's vhost thread.",
        "UDP PI+H(P) 'under 100 per second' is a bound (at_most 100). The 0.04 % / 0.01 % EHTs are values whose "
        "+-10-point bar passes any EHT under ~10 %: read them as 'near zero', not as a check. PI+H(P)'s zero "
        "delivery/EOI exits are inferred (the text says it of PI).",
        "The published TCP pair cannot both hold as exact (audit es2 T1): Fig. 4b's 100K kicks at 29.63 % EHT "
        "are ~3 us a kick, so 'a remaining number of 1K' kicks alone are ~0.3 % EHT, not 0.04 %. One of them is "
        "loose.",
        "The joint thread's sleep: ES2 §5.2 and §5.3 give '10us (an empirical value)', nominal; the primitive and "
        "its slack are unstated (in Linux 4.4 an hrtimer sleep takes the thread's timer_slack_ns, 50 us by "
        "default, include/linux/init_task.h; usleep_range its max - min; a jiffy sleep 4 ms). A mechanism "
        "parameter: never fitted. The 'sleep 20/40/60us' bars are tcp512-PI+H(P) with host.io.sleep_us so "
        "stretched: a diagnostic with no published value. Measured (0.1 s runs): at 20 us the kicks stay (~80K/s), "
        "at 40 and 60 us the switch holds polling (no kicks, EHT ~0.1 %): the bar's other basin.",
        "Why the TCP bar misses (issue 28): the perceptive switch stays in polling only while each turn finds "
        "`quota` requests; a handler alone on its joint thread sleeps 10 us between turns (§5.2), so the cycle is "
        "10 us + ~2.5 us wake-up + quota x ~0.75 us, while the 1-vCPU guest queues a TCP segment every ~5 us "
        "once it stops exiting: no turn fills the quota and every TX turn takes one request. The switch is "
        "bistable on (guest cost per request) / (sleep + back-end cost per request): within the declared ranges "
        "the verdict flips with guest.tcp_tx_segment_ns near its 1.5 us floor or a longer effective sleep. "
        "Report both basins; nothing is chosen from this mechanism row (docs/model.md, known gap).",
    ],
    axis=_SEND,
))
