"""DID (seed 002_d9bb5eb44ca8e2e6.txt) experiments.

The paper's baselines (issue 47) are bare metal, vanilla KVM (``emulated``), PV (virtio over
vhost on vanilla KVM) and SRIOV (a VF on vanilla KVM, NAPI-tuned or not): their published values
and stated regimes are calibration rows. DID, and APICv and VT-d posting (which DID's host could
not run: Linux 3.6's KVM has neither), are predictions.
"""

from __future__ import annotations

from eventpath import api
from eventpath.reproduce.experiment import SCENARIOS, Axis, Experiment, Measured, register
from eventpath.reproduce.simulate import REMOVE, load, runner, simulate

#: DID §5.2, Fig. 4's UDP packet rates (packets/s).
_FIG4_RATES = (100_000, 250_000, 400_000, 600_000)

#: Figs. 4 and 5's x-axis, the UDP packet rate ("DID-250K").
_RATE = Axis(r"(?P<series>.+)-(?P<x>\d+)K", "UDP packets/s (thousands)")

#: The delivery modes compared: DID §5.2's two (vanilla KVM, DID) and, as counterfactuals of
#: DID's host without published values, KVM with APICv only and with VT-d posting.
_MODES = {"KVM": "emulated", "DID": "did", "APICv": "apicv", "VT-d-PI": "posted"}

#: The model's exit reasons reported per row, beside DID §5.2's categories (:func:`_categories`).
_REASONS = ("external_interrupt", "interrupt_delivery", "eoi", "timer", "ipi", "interrupt_window",
            "io_instruction", "ept_violation")

#: What an APICv row is (did-fig4, did-fig6 notes).
_APICV_NOTE = ("APICv rows are counterfactual: DID's host (a Xeon E3, Linux 3.6.0-rc4 KVM) could not run APICv "
               "(KVM gained virtual-interrupt delivery in 3.9 and posted interrupts in 3.10); DID §5.9 measured "
               "APICv on another server (Xeon E5-2609 v2, 16 GB, Linux 3.14) and gives only count ratios, in "
               "words. They carry no published value; their holds rows read §5.9's statements qualitatively "
               "(another host, a count ratio). The model's `apicv` is EOI virtualization only (VF, timer and "
               "virtio interrupts exit); §5.9's APICv also posts virtio's interrupts without an exit, so no PV "
               "row runs it.")


def _get(d: dict, k: str) -> float:
    return d.get(k) or 0.0


def _categories(ex: dict) -> dict[str, float]:
    """DID §5.2's exit reasons from the model's: EXTINT (an external interrupt: the VF's MSI-X,
    the timer's, or the back end's IPI, which the model calls an ``interrupt_delivery`` exit),
    MSRWR (x2APIC MSR writes: EOI, TMICT — the model's ``timer`` exit — and the ICR),
    PENDVINT (``interrupt_window``) and IOINSR (``io_instruction``)."""
    return {"extint": _get(ex, "external_interrupt") + _get(ex, "interrupt_delivery"),
            "msrwr": _get(ex, "eoi") + _get(ex, "timer") + _get(ex, "ipi"),
            "pendvint": _get(ex, "interrupt_window"),
            "ioinsr": _get(ex, "io_instruction")}


def _exit_rows(cfg: str, ex: dict | None) -> list[Measured]:
    """A run's exits per second by the model's reason and by DID §5.2's category (None: no run)."""
    rows = [Measured(cfg, f"exits_{r}", "exits/s", ex[r] if ex else None) for r in _REASONS]
    cats = _categories(ex) if ex else {}
    rows += [Measured(cfg, f"exits_{c}", "exits/s", cats.get(c)) for c in ("extint", "msrwr", "pendvint", "ioinsr")]
    return rows


def _holds(cond: bool | None) -> float | None:
    """A direction row's value: 1.0 where it holds in the run, 0.0 where not, None where it
    cannot be computed."""
    return None if cond is None else float(cond)


def _main_reasons(ex: dict) -> list[str] | None:
    """The exit reasons of a run, largest first: DID §5.2's four categories and the model's
    other reasons (EPT violation, HLT, other); None without exits."""
    reasons = {**_categories(ex), "ept_violation": _get(ex, "ept_violation"), "hlt": _get(ex, "hlt"),
               "other": _get(ex, "other")}
    if not sum(reasons.values()):
        return None
    return sorted(reasons, key=lambda r: -reasons[r])


def _within(a: float | None, b: float | None, frac: float) -> bool | None:
    """``a`` within ± ``frac`` of ``b`` (None without both)."""
    return None if a is None or b is None or not b else abs(a / b - 1.0) <= frac


def _rising(values: list[float | None]) -> bool | None:
    """Each value above the one before (None if any is missing)."""
    if any(v is None for v in values):
        return None
    return all(b > a for a, b in zip(values, values[1:]))


# --- Fig. 4 ---------------------------------------------------------------------------------

#: DID §5.2 "almost all" EXTINT and EOI exits eliminated, read as at most this share of vanilla
#: KVM's at the same rate (our reading: the text gives no number).
_ALMOST_ALL_LEFT = 0.05
#: "≈": APICv's EXTINT exits within this fraction of vanilla KVM's (reproduce's rate band).
_ABOUT = 0.25


def _fig4(duration, step):
    rows = []
    kvm = {}  # rate -> (exit reasons, total exits, packets received)
    for label, mode in _MODES.items():
        for rate in _FIG4_RATES:
            cfg = f"{label}-{rate // 1000}K"
            r = simulate(SCENARIOS / "did-fig4.toml",
                         {"vm.0.interrupt_delivery": mode, "vm.0.workload.rate_pps": rate},
                         what=f"did-fig4 {cfg}", duration=duration)
            step(f"{label} {rate // 1000}K pps")
            vm = r.summary["vms"][0]
            ex = vm["exits_per_s"]
            cats = _categories(ex)
            received = vm["throughput"]["pps"]
            rows.append(Measured(cfg, "exits_total", "exits/s", vm["exits_total_per_s"]))
            rows.append(Measured(cfg, "tig", "%", vm["tig_pct"]))
            rows += _exit_rows(cfg, ex)
            # DID §5.2's share of MSR writes that write the EOI register (x2APIC: EOI, TMICT, ICR).
            msr = cats["msrwr"]
            rows.append(Measured(cfg, "eoi_share_of_msr_writes", "%", 100.0 * _get(ex, "eoi") / msr if msr else None))
            rows.append(Measured(cfg, "interrupts", "irq/s", vm["interrupts_per_s"]))
            rows.append(Measured(cfg, "received", "pps", received))
            main = _main_reasons(ex)
            if label == "KVM":
                kvm[rate] = (ex, vm["exits_total_per_s"], received)
                # §5.2: "The two dominant reasons for VM exits are ... EXTINT and ... MSRWR".
                rows.append(Measured(cfg, "extint_msrwr_dominant", "holds",
                                     _holds(None if main is None else set(main[:2]) == {"extint", "msrwr"})))
                # §5.2: 28K exits at 100K packets/s "demonstrates that the NIC supports interrupt
                # coalescing": fewer interrupts than packets.
                irqs = vm["interrupts_per_s"]
                rows.append(Measured(cfg, "coalesced", "holds",
                                     _holds(None if irqs is None or received is None else irqs < received)))
            elif label == "DID":
                k = _categories(kvm[rate][0])
                # §5.2: "DID eliminates almost all VM exits due to external interrupts and EOI writes".
                left = cats["extint"] + _get(ex, "eoi")
                rows.append(Measured(cfg, "extint_eoi_removed", "holds",
                                     _holds(left <= _ALMOST_ALL_LEFT * (k["extint"] + _get(kvm[rate][0], "eoi")))))
                # §5.2: "With DID, the main reason for VM exits is the I/O instructions (IOINSR)";
                # undecidable (None) in a run without exits.
                rows.append(Measured(cfg, "mostly_ioinsr", "holds",
                                     _holds(None if main is None else main[0] == "ioinsr")))
            elif label == "APICv":
                k = _categories(kvm[rate][0])
                # §5.9 (another host, Iperf-SRIOV): EOI virtualization removes the EOI exits, the
                # VF's external interrupts still exit.
                rows.append(Measured(cfg, "eoi_removed", "holds", _holds(_get(ex, "eoi") == 0)))
                rows.append(Measured(cfg, "extint_kept", "holds", _holds(_within(cats["extint"], k["extint"], _ABOUT))))
    # §5.2: vanilla KVM's exits rise with the rate, "less than linearly": exits per packet fall.
    totals = [kvm[r][1] for r in _FIG4_RATES]
    per_packet = [t / kvm[r][2] if t is not None and kvm[r][2] else None for t, r in zip(totals, _FIG4_RATES)]
    rows.append(Measured("KVM", "exits_rise_with_rate", "holds", _holds(_rising(totals))))
    rows.append(Measured("KVM", "exits_per_packet_fall", "holds",
                         _holds(None if any(p is None for p in per_packet) else _rising([-p for p in per_packet]))))
    return rows


register(Experiment(
    id="did-fig4",
    title="VM exits and time in guest receiving 128-byte UDP through an SR-IOV VF, KVM vs DID",
    source="DID §5.2, Fig. 4; §5.3 (seed 002_d9bb5eb44ca8e2e6.txt)",
    profile="did",
    baselines=(r"KVM-\d+K", r"KVM"),
    rows=_fig4,
    runs=len(_MODES) * len(_FIG4_RATES),
    notes=[
        "Roles (DID §5.2; issue 47): vanilla KVM (KVM-*) is the baseline: its exits/s and TIG at 100K-600K pps, "
        "its EOI share of MSR writes ('more than 99%': at_least 99, stated once, held at every rate) and its "
        "stated regime (holds rows: EXTINT and MSRWR the two dominant reasons; fewer interrupts than packets, "
        "'the NIC supports interrupt coalescing'; exits rising with the rate but 'less than linearly', exits per "
        "packet falling) are calibration rows. DID rows are predictions: exits 'under 1K per second regardless "
        "of the UDP packet rate' (at_most 1000 at every rate), TIG 99.8 % at 600K (§5.2) and 99.9 / 98.9 / "
        "99.9 % at 100K-400K (derived: §5.2's KVM TIG plus §5.3's 'reductions in TIGs' 3.8, 11.42, 16.6 "
        "points), and the directions 'DID eliminates almost all VM exits due to external interrupts and EOI "
        "writes' (our reading: at most 5 % of KVM's EXTINT+EOI left) and 'the main reason for VM exits is the "
        "I/O instructions (IOINSR)'.",
        "Exit categories (DID §5.2's definitions): EXTINT = the model's external_interrupt + interrupt_delivery "
        "(the back end's IPI to a running vCPU); MSRWR = eoi + timer + ipi (x2APIC MSR writes; the model's "
        "`timer` exit is the TMICT write, not a timer interrupt, which is an external_interrupt); PENDVINT = "
        "interrupt_window; IOINSR = io_instruction. The EOI share is EOI over MSRWR.",
        _APICV_NOTE + " Here: APICv-*'s EOI exits gone and its EXTINT ≈ KVM's (within ±25 %) are §5.9's "
        "Iperf-SRIOV statements held on UDP, an extrapolation. VT-d-PI-* (VT-d posting, KVM 4.3+) is a what-if "
        "of no DID configuration (Table 1's APICv takes external interrupts 'Indirect').",
        "Set-up (DID §5.1-5.2; declared choices): one VM, one vCPU pinned to pCPU 0 (§5.1: 'pinned to a "
        "specific core', which one unstated), a VF with ixgbevf's 512-descriptor ring, idle=poll (§5.1), NO_HZ "
        "in the guest; the paper's idle virtio device is omitted (no traffic on it). The host is 2 of the E3's "
        "4 cores / 8 threads ([host] pcpus = 2: the other pCPU takes nothing here). '128-byte UDP packets' is "
        "taken as the UDP payload (unstated). Runs are 0.5 s (the paper's run lengths for Fig. 4 are unstated).",
        "Structural: the VF's interrupt throttle is the profile's fixed, calibrated sriov.vf_itr_ns, so the "
        "simulated interrupt rate is flat once the throttle binds (model exits 46-48K/s at every rate against "
        "28K-118K), while DID's grows with the packet rate (~7 -> 10 packets per interrupt); the "
        "exits_rise_with_rate direction holds in the model by ~5 %, not the paper's 4.2x, which the calibration "
        "magnitudes show. ixgbevf's adaptive ITR is modelled ([vm.net] itr_us = \"dynamic\") but lowers the rate "
        "as traffic grows, the opposite of Fig. 4 (docs/model.md, 'SR-IOV VFs').",
        "Structural: the model has no background exits (DID §5.4: I/O-instruction and EPT-violation exits, "
        "'approximately 500 ... per second' in an idle VM, 75/s by its own counts), so DID's exits are 0 and "
        "'mostly IOINSR' cannot be decided (its row is None).",
        "Tolerance: TIG rows are held within ±10 points (reproduce's band for %), which cannot tell 87.5 % from "
        "93.4 %; read the magnitudes beside the band.",
        "Seeds: two seeds at the default 0.5 s runs give identical rows (spread 0), so the default ensemble is "
        "one seed.",
    ],
    axis=_RATE,
))


#: The configurations DID compares, as the one-VM scenario's delivery mode (bare metal: none).
_DELIVERY = {"KVM": "emulated", "DID": "did", "APICv": "apicv"}


def _configured(cfg: str) -> dict:
    """The changes that put a one-VM scenario in configuration ``cfg`` ("bare-metal" or a key
    of ``_DELIVERY``)."""
    if cfg == "bare-metal":
        return {"host.virtualization": "bare_metal", "vm.0.interrupt_delivery": REMOVE}
    return {"vm.0.interrupt_delivery": _DELIVERY[cfg]}


# --- Fig. 6 ---------------------------------------------------------------------------------

#: DID §5.4, Fig. 6's configurations.
_FIG6 = ("bare-metal", "KVM", "DID", "APICv")


def _fig6(duration, step):
    interval_us = load(SCENARIOS / "did-fig6.toml")["vm"][0]["workload"]["interval_us"]
    ops_per_s = 1e6 / interval_us
    rows = []
    cats = {}
    for cfg in _FIG6:
        r = simulate(SCENARIOS / "did-fig6.toml", _configured(cfg), what=f"did-fig6 {cfg}", duration=duration)
        step(cfg)
        vm = r.summary["vms"][0]
        ex = vm["exits_per_s"]
        cats[cfg] = _categories(ex)
        rows.append(Measured(cfg, "latency_mean", "us", vm["latency_us"]["mean"]))
        rows.append(Measured(cfg, "latency_p99", "us", vm["latency_us"]["p99"]))
        rows.append(Measured(cfg, "exits_total", "exits/s", vm["exits_total_per_s"]))
        rows += _exit_rows(cfg, ex)
        if cfg == "KVM":
            # §5.4: "each timer operation ... takes at least three VM exits" (TMICT, the timer
            # interrupt, the EOI): exits per cyclictest period.
            total = vm["exits_total_per_s"]
            rows.append(Measured(cfg, "exits_per_timer_op", "exits/op", None if total is None else total / ops_per_s))
        elif cfg == "DID":
            # §5.4: DID "eliminates all VM exits due to TMICT register programming, timer interrupt
            # delivery, and EOI write" (and §5.9: MSRWR exits gone).
            gone = _get(ex, "timer") + _get(ex, "external_interrupt") + _get(ex, "eoi") + cats[cfg]["msrwr"]
            rows.append(Measured(cfg, "timer_exits_removed", "holds", _holds(gone == 0)))
        elif cfg == "APICv":
            # §5.9 (another host): "the number of MSR Write VM exits associated with APICv is half
            # of that of vanilla KVM", "APICv avoids the EOI exit".
            k = cats["KVM"]["msrwr"]
            rows.append(Measured(cfg, "msrwr_ratio_vs_kvm", "x", cats[cfg]["msrwr"] / k if k else None))
            rows.append(Measured(cfg, "eoi_removed", "holds", _holds(_get(ex, "eoi") == 0)))
    return rows


register(Experiment(
    id="did-fig6",
    title="cyclictest interrupt invocation latency, 1 ms interval: bare metal, KVM, KVM+APICv, DID",
    source="DID §5.4, Fig. 6; §5.9 (seed 002_d9bb5eb44ca8e2e6.txt)",
    profile="did",
    baselines=(r"bare-metal", r"KVM",),
    rows=_fig6,
    runs=len(_FIG6),
    notes=[
        "Roles (DID §5.4; issue 47): bare metal (2 us) and vanilla KVM (14 us, §1 and §5.4) are baselines: "
        "calibration rows, with KVM's stated regime 'each timer operation ... takes at least three VM exits' "
        "(exits_per_timer_op at_least 3). DID's 2.9 us and 'DID eliminates all VM exits due to TMICT register "
        "programming, timer interrupt delivery, and EOI write' (a holds row) are predictions.",
        _APICV_NOTE + " Here: §5.9's cyclictest statements, 'the number of MSR Write VM exits associated with "
        "APICv is half of that of vanilla KVM' (msrwr_ratio_vs_kvm 0.5, a count ratio held as a number) and "
        "'APICv avoids the EOI exit'. APICv's latency has no value on any host.",
        "Latency is from the timer's expiry to the woken thread back in user space (guest.task_wakeup_ns after "
        "the handler). KVM's path: external-interrupt exit, injection, handler, EOI exit, TMICT re-arm exit.",
        "Structural: KVM's 14 us (model ~6.3 us) also has DID §5.4's factors 1-3 (the hypervisor's and the "
        "guest's interrupt-disabled sections, the injection delay) and timer interrupts landing in long exits "
        "(I/O-instruction and EPT-violation exits of 8.65-24 us, Fig. 7), which the model lacks: it predicts "
        "the exits' own cost only.",
        "Structural: DID's 2.9 us against bare metal's 2 us is, by §5.4's own decomposition, the idle VM's "
        "background exits (I/O instructions and EPT violations: 991 + 6,550 in 100 s; 'approximately 500 VM "
        "exits per second' in the text) that timer interrupts land in; the model has no background exits, so "
        "DID equals bare metal.",
        "Structural: the model programs TMICT twice per period (the idle entry and the re-arm after the "
        "interrupt), 2,000 TMICT exits/s, so APICv's MSRWR ratio is 2/3 where §5.9 says half; whether DID's "
        "guest kernel (unstated; declared 3.6.0-rc4) re-arms once is to check against its NO_HZ code.",
        "Structural: on Linux 3.6 (no NO_HZ_FULL) the host's own tick on the vCPU's pCPU (HZ=1000) is an "
        "external-interrupt exit under vanilla KVM whether or not it preempts, ~1,000 exits/s the model does "
        "not count (docs/model.md: the host tick exits only when it preempts); DID moves host timers to a "
        "designated core (§4.4).",
        "Set-up (DID §5.1, §5.4; declared choices): one vCPU pinned to pCPU 0 of [host] pcpus = 2 (of the E3's "
        "4 cores / 8 threads), cyclictest at the highest priority, one timer per ms, idle=poll and NO_HZ in the "
        "guest. Bare metal runs on one CPU and idles by polling, as cyclictest's default latency trick "
        "(/dev/cpu_dma_latency = 0) makes it act. The run is 1 s (1,000 interrupts after a 10 ms warm-up) "
        "against the paper's 100 s (100,000): enough for a mean, not for Fig. 6's density. Two seeds at 1 s give "
        "identical rows (spread 0): one seed.",
    ],
))


# --- Fig. 11 --------------------------------------------------------------------------------

#: DID §5.7, Fig. 11's configurations (and a sensitivity row, SRIOV-dynamic-ITR).
_FIG11 = ("PV", "PV-DID", "SRIOV", "SRIOV-DID", "bare-metal", "SRIOV-NAPI-8", "SRIOV-NAPI-4", "SRIOV-dynamic-ITR")
#: Offered rates the QoS search spans (req/s) and its bisection steps (~2 % resolution).
_FIG11_RANGE = (2_000.0, 400_000.0, 8)
#: DID §5.7's SRIOV peak (req/s): the rate at which its 97K exits/s and 81.55 % TIG were measured.
#: The SRIOV configurations also run at this fixed rate, so that the exits and TIG are compared
#: where the paper measured them, apart from where the model's QoS search puts the peak.
_FIG11_SRIOV_PAPER_RPS = 45_800.0
#: The fixed-rate configurations: label -> the QoS configuration run at that rate.
_FIG11_AT_PAPER = {"SRIOV@45.8K": "SRIOV", "SRIOV-dynamic-ITR@45.8K": "SRIOV-dynamic-ITR"}


def _fig11_changes(cfg: str) -> dict:
    """The changes to did-fig11.toml (memcached on an SR-IOV VF, emulated delivery) for ``cfg``."""
    changes = {}
    if cfg.startswith("PV"):
        changes["vm.0.net"] = REMOVE  # virtio-net over vhost, the default device
    if cfg.endswith("DID"):
        changes["vm.0.interrupt_delivery"] = "did"
    if cfg == "bare-metal":
        changes.update(_configured("bare-metal"))
    if cfg.startswith("SRIOV-NAPI-"):
        # DID §5.7 lowers the guest's NAPI weight from 64 to make the VF driver poll more.
        changes["profile_overrides.guest.napi_weight"] = float(cfg.rsplit("-", 1)[1])
    if cfg == "SRIOV-dynamic-ITR":
        changes["vm.0.net.itr_us"] = "dynamic"
    return changes


def _req_per_irq(v: dict) -> float | None:
    """Requests completed per interrupt the VM took (all vectors: the VF's or virtio's, and the
    timer's)."""
    irqs, ops = v["interrupts_per_s"], v["throughput"]["ops_per_s"]
    return ops / irqs if irqs and ops is not None else None


def _fig11_vm_rows(cfg: str, vm: dict | None) -> list:
    """The rows of one run's VM (None: no run met the bound)."""
    at = (lambda f: f(vm)) if vm else (lambda f: None)
    rows = [Measured(cfg, "tig", "%", at(lambda v: v["tig_pct"])),
            # The abstract: SRIOV's exits/s fall below 1K with DID (at each one's peak).
            Measured(cfg, "exits_total", "exits/s", at(lambda v: v["exits_total_per_s"]))]
    rows += _exit_rows(cfg, vm["exits_per_s"] if vm else None)
    rows.append(Measured(cfg, "interrupts", "irq/s", at(lambda v: v["interrupts_per_s"])))
    # DID §5.7 blames SRIOV's few packets per interrupt: the model's batching, per request.
    rows.append(Measured(cfg, "req_per_irq", "req/irq", at(_req_per_irq)))
    return rows


def _above(a: float | None, b: float | None) -> float | None:
    """1.0 where ``a`` > ``b``, 0.0 where not; None without both (a direction row's value)."""
    return None if a is None or b is None else float(a > b)


def _fig11_directions(peak: dict, vms: dict) -> list[Measured]:
    """DID §5.7's stated orders, between the configurations' QoS peaks and the runs at them."""
    def extint_eoi(c):
        v = vms.get(c)
        return None if v is None else _categories(v["exits_per_s"])["extint"] + _get(v["exits_per_s"], "eoi")

    def ratio(a, b):
        return peak[a] / peak[b] if peak.get(a) and peak.get(b) else None

    rpi = {c: _req_per_irq(vms[c]) if vms.get(c) else None for c in ("PV", "SRIOV")}
    others = [peak.get(c) for c in ("PV", "PV-DID", "SRIOV")]
    rows = [
        # Baselines (calibration): "SRIOV comes in last ... SRIOV still performs worse than PV,
        # because it incurs a larger number of VM exits due to interrupt delivery and EOI writes
        # than PV"; "the number of packets delivered to a target VM per interrupt is noticeably
        # higher in the PV configuration"; NAPI 4 or 8 "rises to 48.3K, improving over the PV
        # configuration".
        Measured("PV vs SRIOV", "peak_above", "holds", _above(peak.get("PV"), peak.get("SRIOV"))),
        Measured("SRIOV vs PV", "more_extint_eoi", "holds", _above(extint_eoi("SRIOV"), extint_eoi("PV"))),
        Measured("PV vs SRIOV", "more_req_per_irq", "holds", _above(rpi["PV"], rpi["SRIOV"])),
        Measured("SRIOV-NAPI-4 vs PV", "peak_above", "holds", _above(peak.get("SRIOV-NAPI-4"), peak.get("PV"))),
        Measured("SRIOV-NAPI-8 vs PV", "peak_above", "holds", _above(peak.get("SRIOV-NAPI-8"), peak.get("PV"))),
        # Mechanisms (predictions): "SRIOV-DID outperforms all other configurations"; "The second
        # best setup is PV-DID"; "improved by 330%" (§1: 151.5K / 45.8K, the ratio); "about three
        # times higher than that of PV-DID"; bare metal "only 0.6% higher than SRIOV-DID".
        Measured("SRIOV-DID", "peak_highest", "holds",
                 None if peak.get("SRIOV-DID") is None or None in others else float(peak["SRIOV-DID"] > max(others))),
        Measured("PV-DID", "peak_second", "holds",
                 None if None in others or peak.get("SRIOV-DID") is None
                 else float(peak["SRIOV-DID"] > peak["PV-DID"] > max(peak["PV"], peak["SRIOV"]))),
        Measured("SRIOV-DID vs SRIOV", "peak_ratio", "x", ratio("SRIOV-DID", "SRIOV")),
        Measured("SRIOV-DID vs PV-DID", "peak_ratio", "x", ratio("SRIOV-DID", "PV-DID")),
    ]
    bm = ratio("bare-metal", "SRIOV-DID")
    rows.append(Measured("bare-metal vs SRIOV-DID", "peak_gain", "%", None if bm is None else 100.0 * (bm - 1.0)))
    return rows


def _fig11(duration, step):
    from eventpath import qos

    lo, hi, steps = _FIG11_RANGE
    rows = []
    peak, vms = {}, {}
    for cfg in _FIG11:
        s = qos.search(load(SCENARIOS / "did-fig11.toml", _fig11_changes(cfg)), bound_ms=10.0, lo=lo, hi=hi,
                       steps=steps, duration=duration, run=runner(f"did-fig11 {cfg}"))
        step(cfg)
        peak[cfg] = s.peak_rps
        rows.append(Measured(cfg, "peak_rps", "req/s", s.peak_rps))
        vm = s.at_peak.summary["vms"][0] if s.at_peak else None
        vms[cfg] = vm
        rows += _fig11_vm_rows(cfg, vm)
        rows.append(Measured(cfg, "p95_at_peak", "us", vm["latency_us"]["p95"] if vm else None))
    for cfg, base in _FIG11_AT_PAPER.items():
        changes = {**_fig11_changes(base), "vm.0.workload.rate_rps": _FIG11_SRIOV_PAPER_RPS}
        vm = simulate(SCENARIOS / "did-fig11.toml", changes, what=f"did-fig11 {cfg}",
                      duration=duration).summary["vms"][0]
        step(cfg)
        rows.append(Measured(cfg, "completed", "req/s", vm["throughput"]["ops_per_s"]))
        rows += _fig11_vm_rows(cfg, vm)
        rows.append(Measured(cfg, "eht", "%", vm["eht_pct"]))
    return rows + _fig11_directions(peak, vms)


register(Experiment(
    id="did-fig11",
    title="memcached peak requests/s with 95 % within 10 ms: PV, PV-DID, SRIOV, SRIOV-DID, bare metal",
    source="DID §5.7, Fig. 11, §1 and abstract (seed 002_d9bb5eb44ca8e2e6.txt)",
    profile="did",
    baselines=(r"PV", r"SRIOV", r"bare-metal", r"SRIOV-NAPI-\d+", r"SRIOV@45\.8K",
               r"PV vs SRIOV", r"SRIOV vs PV", r"SRIOV-NAPI-\d+ vs PV"),
    rows=_fig11,
    runs=len(_FIG11) + len(_FIG11_AT_PAPER),
    notes=[
        "Roles (DID §5.7, §1; issue 47): PV, SRIOV (and SRIOV with NAPI weight 4 or 8, a tuned baseline) and bare "
        "metal are baselines: their peaks (47.3K, 45.8K, 48.3K, 152.3K), PV's and SRIOV's TIG (97.7, 81.55 %), "
        "SRIOV's 97K exits/s (§1, abstract; at its peak, also run at the paper's 45.8K as SRIOV@45.8K) and the "
        "orders between them (holds rows: SRIOV below PV; SRIOV more EXTINT+EOI exits than PV; PV more requests "
        "per interrupt; NAPI-4/8 above PV) are calibration rows. PV-DID and SRIOV-DID are predictions: their "
        "peaks and TIGs, SRIOV-DID's exits 'less than 1K per second' (at_most 1000, §1 and abstract), SRIOV-DID "
        "highest and PV-DID second (holds), SRIOV-DID / SRIOV = 3.31 ('improved by 330%', §1: 151.5 / 45.8, read "
        "as the ratio; the abstract's 'by a factor of 3'), SRIOV-DID / PV-DID = 3.0 ('about three times "
        "higher'), bare metal 0.6 % above SRIOV-DID (base SRIOV-DID; 0.53 % by the printed peaks).",
        "Not encoded: NAPI 4/8's 'increase in CPU utilization by 3% and 6%' (base unstated; the vCPU never idles "
        "with idle=poll, so the model has no CPU-utilization row to hold it against); 'the PV and PV-DID "
        "configurations also increase the request latency due to request batching' (no rate is given to compare "
        "latencies at).",
        "Each configuration's peak is a QoS search (eventpath.qos: bisection of the paced client's offered rate, "
        "p95 <= 10 ms and at least 90 % of the offered rate completed, the latter our criterion); TIG, exits and "
        "interrupts are those of the run at the peak. Exit categories as did-fig4's notes (EXTINT includes the "
        "PV back end's IPIs, the model's interrupt_delivery exits, as §5.2 counts them).",
        "Set-up (DID §5.7, §5.1; declared choices): a 'dual-threaded' memcached (threads = 2) in one VM with one "
        "vCPU pinned to pCPU 0 of [host] pcpus = 2 (of the E3's 4 cores / 8 threads), idle=poll; the remote "
        "client has 200 connections, get/set 4:1, TCP_NODELAY (memcached sets it); its 8 threads and how it "
        "paces requests are not modelled (a Poisson-paced open loop). PV's vhost thread is unpinned (CFS places "
        "it; pCPU 1 is free), and the host NIC's receive path is charged to no modelled pCPU (host.nic_rx_ns). "
        "Bare metal runs on one CPU (unstated). Object sizes are not in the paper (a 'twitter dataset'); the "
        "scenario takes Twitter's median cache object, 230 bytes (Yang et al., OSDI 2020). SRIOV-dynamic-ITR "
        "(no published value) runs ixgbevf's adaptive throttle instead of the profile's fixed VF throttle, as a "
        "sensitivity row.",
        "SRIOV@45.8K and SRIOV-dynamic-ITR@45.8K run at DID's SRIOV peak, a fixed 45.8K req/s, where the paper "
        "measured SRIOV's 97K exits/s and 81.55 % TIG: the exit model is compared there, apart from the QoS peak. "
        "req_per_irq is requests completed per interrupt taken (DID §5.7's 'packets delivered per interrupt').",
        "Structural: SRIOV's miss is the QoS peak, not the exit costs (docs/model.md, 'Known gap: DID Fig. 11'): "
        "the paper's own SRIOV point (81.55 % TIG at 45.8K req/s, a request costing at most 1/152.3K s = 6.6 us "
        "of guest work on bare metal) leaves at least half the vCPU unused, so exits cannot be what caps it by "
        "CPU time.",
        "Structural (a cost, the profile's): PV and PV-DID TIG come out near 46 % against 97.7 / 99.7 % because "
        "every virtio kick is charged exit.io_instruction_ns = 8.65 us, DID §5.4's mean of background "
        "I/O-instruction exits in an idle VM, not a vhost ioeventfd kick (the audit's change 13: a "
        "first-principles kick prior with a range is the profile's change to make).",
        "Tolerance: bare metal's 0.6 % gain is held within ±10 points (reproduce's band for %).",
        "Seeds: two seeds at the default 0.3 s runs differ by at most one bisection step of a peak (~2 %, under a "
        "tenth of the ±25 % band) and 0.1 point of TIG: one seed.",
    ],
))


# --- Fig. 5 ---------------------------------------------------------------------------------

#: DID §5.3, Fig. 5's UDP packet rates (packets/s).
_FIG5_RATES = (100_000, 250_000, 400_000, 600_000)
#: WhileLoop's work: 2^34 iterations of one dependent integer addition, one per cycle (first
#: principles: the loop-carried add is a one-cycle dependency chain), at the did profile's clock.
_WHILELOOP_CYCLES = 2.0 ** 34
#: DID §5.3 "nearly identical to that of the bare metal configuration", read as DID's elapsed
#: time within this fraction of bare metal's (our reading: the text gives no number).
_NEARLY_IDENTICAL = 0.02


def _gain(kvm: float | None, did: float | None) -> float | None:
    """WhileLoop's gain under DID over vanilla KVM, in % of vanilla KVM's elapsed time:
    100 (T_KVM - T_DID) / T_KVM (DID §5.3 states no base; see the experiment's notes)."""
    return 100.0 * (kvm - did) / kvm if kvm and did else None


def _fig5(duration, step):
    ghz = api.profile("did")["cpu"]["ghz"]["value"]
    alone_s = _WHILELOOP_CYCLES / (ghz * 1e9)
    rows = []
    kvm_elapsed, gains = [], []
    for rate in _FIG5_RATES:
        elapsed = {}
        for cfg in ("bare-metal", "KVM", "DID"):
            c = f"{cfg}-{rate // 1000}K"
            vm = simulate(SCENARIOS / "did-fig5.toml", {**_configured(cfg), "vm.0.workload.rate_pps": rate},
                          what=f"did-fig5 {c}", duration=duration).summary["vms"][0]
            step(f"{cfg} {rate // 1000}K pps")
            share = vm["guest_burn_pct"]
            elapsed[cfg] = alone_s / (share / 100.0) if share else None
            rows.append(Measured(c, "whileloop_elapsed", "s", elapsed[cfg]))
            rows.append(Measured(c, "whileloop_cpu_share", "%", share))
            rows.append(Measured(c, "tig", "%", vm["tig_pct"]))
        kvm, did, bm = elapsed["KVM"], elapsed["DID"], elapsed["bare-metal"]
        kvm_elapsed.append(kvm)
        gains.append(_gain(kvm, did))
        rows.append(Measured(f"DID-{rate // 1000}K", "gain_over_kvm", "%", gains[-1]))
        # §5.3: "the total elapsed time of WhileLoop in the KVM+DID configuration is nearly
        # identical to that of the bare metal configuration".
        rows.append(Measured(f"DID-{rate // 1000}K", "near_bare_metal", "holds",
                             _holds(_within(did, bm, _NEARLY_IDENTICAL))))
    # §5.3: "the elapsed time of WhileLoop in the vanilla KVM configuration increases with the UDP
    # packet rate" (a baseline's regime); the gains grow with the rate (3.4 ... 18.47 %).
    rows.append(Measured("KVM", "elapsed_rises_with_rate", "holds", _holds(_rising(kvm_elapsed))))
    rows.append(Measured("DID", "gain_rises_with_rate", "holds", _holds(_rising(gains))))
    return rows


register(Experiment(
    id="did-fig5",
    title="WhileLoop's elapsed time beside a background UDP receiver through a VF: bare metal, KVM, DID",
    source="DID §5.3, Fig. 5 (seed 002_d9bb5eb44ca8e2e6.txt)",
    profile="did",
    baselines=(r"(bare-metal|KVM)-\d+K", r"KVM"),
    rows=_fig5,
    runs=3 * len(_FIG5_RATES),
    notes=[
        "Roles (DID §5.3; issue 47): bare metal and vanilla KVM are baselines; Fig. 5's elapsed times are bars "
        "without numbers in the text, so their one calibration row is the stated regime 'the elapsed time of "
        "WhileLoop in the vanilla KVM configuration increases with the UDP packet rate' (a holds row). DID's "
        "gains over vanilla KVM (3.4, 9.6, 13.4, 18.47 %), 'nearly identical to that of the bare metal "
        "configuration' (our reading: within 2 % of bare metal's elapsed time) and the gains rising with the "
        "rate are predictions.",
        "Gain base (DID §5.3 states none; our choice, unconfirmed): gain_over_kvm = 100 (T_KVM - T_DID) / T_KVM, "
        "the share of vanilla KVM's elapsed time DID saves. It is the reading closer to §5.3's own analogy: the "
        "gains are 'closely correlated with the reductions in TIGs ... 3.8%, 11.42%, 16.6%, and 19.38%', and "
        "with WhileLoop's share proportional to TIG that base gives 3.8, 11.6, 16.6, 19.4 %, where T_KVM/T_DID - 1 "
        "(the former definition, base DID's time) gives 4.0, 13.1, 19.9, 24.1 %.",
        "WhileLoop is the guest CPU burn (2^34 one-cycle additions at the profile's 3.4 GHz, 5.05 s alone; turbo "
        "unstated, none taken); its elapsed time is that over the share of the vCPU it got (guest_burn_pct).",
        "Reproduction difference (DID §5.1: PacketGen's 'sender and receiver programs run at the lowest priority "
        "level'): in the paper the UDP receiver is the lowest-priority task and WhileLoop an ordinary one, so the "
        "receiver starves, the socket drops datagrams, and WhileLoop loses only the softirq receive path and the "
        "exits — which is why its gains track the TIG reductions. The model's burn has the lowest guest priority "
        "and the receiver and NAPI always run first, so as the packet rate grows the receive path takes most of "
        "the vCPU in every configuration and the KVM/DID ratio grows far past DID's gains at 400K-600K pps. "
        "Structural: the model has no guest task priorities to set between an application and the burn (no "
        "scenario key): the missing piece is a guest scheduler that runs WhileLoop above the receiver.",
        "Set-up (DID §5.1, §5.3; declared choices): one VM, one vCPU pinned to pCPU 0 of [host] pcpus = 2 (of the "
        "E3's 4 cores / 8 threads), a VF. §5.1's idle=poll is not set: the model refuses guest_idle beside the "
        "burn, which runs wherever the guest would idle, so the guest never halts either way. Bare metal "
        "runs WhileLoop and the receiver on one CPU (unstated: on 8 threads they could have run apart). "
        "'128-byte UDP packets' is taken as the UDP payload (unstated). Runs are 0.5 s.",
        "Tolerance: the gains are held within ±10 points (reproduce's band for %), which cannot tell 3.4 % from "
        "13.4 %: read the magnitudes beside the band.",
        "Seeds: two seeds at the default 0.5 s runs give identical rows (spread 0): one seed.",
    ],
    axis=_RATE,
))
