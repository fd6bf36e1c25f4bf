"""DID (seed 002_d9bb5eb44ca8e2e6.txt) experiments."""

from __future__ import annotations

import tomllib

from eventpath import api
from eventpath.reproduce import SCENARIOS, Experiment, Row, register

#: DID §5.2, Fig. 4: packet rate -> (KVM exits/s, KVM TIG %).
_FIG4_KVM = {100_000: (28_000.0, 96.1), 250_000: (62_000.0, 87.48), 400_000: (90_000.0, 83.3), 600_000: (118_000.0, 80.42)}

#: The delivery modes compared: DID §5.2's two (vanilla KVM, DID) and, as further predictions
#: without published values, KVM with APICv only and with VT-d posting.
_MODES = {"KVM": "emulated", "DID": "did", "APICv": "apicv", "VT-d-PI": "posted"}


def _scenario(mode: str, rate: int) -> dict:
    with open(SCENARIOS / "did-fig4.toml", "rb") as f:
        sc = tomllib.load(f)
    sc["vm"][0]["interrupt_delivery"] = mode
    sc["vm"][0]["workload"]["rate_pps"] = rate
    return sc


def _fig4(duration, step):
    rows = []
    for label, mode in _MODES.items():
        for rate, (exits_pub, tig_pub) in _FIG4_KVM.items():
            r = api.run(_scenario(mode, rate), duration=duration)
            step(f"{label} {rate // 1000}K pps")
            vm = r.summary["vms"][0]
            ex = vm["exits_per_s"]
            cfg = f"{label}-{rate // 1000}K"
            kvm = label == "KVM"
            rows.append(Row(cfg, "exits_total", "exits/s", vm["exits_total_per_s"], exits_pub if kvm else None))
            # DID §5.3: DID's TIG at 600K pps is 99.8 % ("(99.8 - 80.42) = 19.38%").
            tig_published = tig_pub if kvm else (99.8 if label == "DID" and rate == 600_000 else None)
            rows.append(Row(cfg, "tig", "%", vm["tig_pct"], tig_published))
            for reason in ("external_interrupt", "eoi", "timer", "io_instruction"):
                rows.append(Row(cfg, f"exits_{reason}", "exits/s", ex[reason], None))
            # "writing to the EOI register accounts for more than 99% of MSR writes" (DID §5.2):
            # MSR writes are the EOI and TMICT exits (x2APIC).
            msr = (ex["eoi"] or 0) + (ex["timer"] or 0)
            rows.append(Row(cfg, "eoi_share_of_msr_writes", "%", 100.0 * (ex["eoi"] or 0) / msr if msr else None,
                            99.0 if kvm else None))
            rows.append(Row(cfg, "interrupts", "irq/s", vm["interrupts_per_s"], None))
            rows.append(Row(cfg, "received", "pps", vm["throughput"]["pps"], None))
    return rows


register(Experiment(
    id="did-fig4",
    title="VM exits and time in guest receiving 128-byte UDP through an SR-IOV VF, KVM vs DID",
    source="DID §5.2, Fig. 4; §5.3 (seed 002_d9bb5eb44ca8e2e6.txt)",
    profile="did",
    rows=_fig4,
    runs=len(_MODES) * len(_FIG4_KVM),
    notes=[
        "KVM rows (exits/s and TIG at 100K-600K pps) are the did profile's calibration targets; DID, APICv "
        "and VT-d-PI rows are predictions. DID §5.2 publishes DID's exits only as 'under 1K per second "
        "regardless of the UDP packet rate' (mostly I/O instructions), so its exits rows carry no number.",
        "The published 99 % EOI share of MSR writes is DID's 'more than 99%', a lower bound.",
        "The VF's interrupt throttle is fixed (sriov.vf_itr_ns); ixgbevf's adaptive ITR is not modelled, so the "
        "simulated interrupt rate is flat once the throttle binds, while DID's grows with the packet rate "
        "(docs/model.md, 'SR-IOV VFs').",
    ],
))


#: The configurations DID compares, as the one-VM scenario's delivery mode (bare metal: none).
_DELIVERY = {"KVM": "emulated", "DID": "did", "APICv": "apicv"}


def _configured(base: dict, cfg: str) -> dict:
    """A copy of a one-VM scenario ``base`` in configuration ``cfg`` ("bare-metal" or a key of
    ``_DELIVERY``)."""
    sc = {**base, "vm": [dict(base["vm"][0])], "host": dict(base["host"])}
    if cfg == "bare-metal":
        sc["host"]["virtualization"] = "bare_metal"
        del sc["vm"][0]["interrupt_delivery"]
    else:
        sc["vm"][0]["interrupt_delivery"] = _DELIVERY[cfg]
    return sc


#: DID §5.4, Fig. 6: mean interrupt invocation latency (µs) per configuration.
_FIG6 = {"bare-metal": 2.0, "KVM": 14.0, "DID": 2.9, "APICv": None}


def _fig6(duration, step):
    with open(SCENARIOS / "did-fig6.toml", "rb") as f:
        base = tomllib.load(f)
    rows = []
    for cfg, published in _FIG6.items():
        r = api.run(_configured(base, cfg), duration=duration)
        step(cfg)
        vm = r.summary["vms"][0]
        rows.append(Row(cfg, "latency_mean", "us", vm["latency_us"]["mean"], published))
        rows.append(Row(cfg, "latency_p99", "us", vm["latency_us"]["p99"], None))
        rows.append(Row(cfg, "exits_total", "exits/s", vm["exits_total_per_s"], None))
        for reason in ("external_interrupt", "eoi", "timer"):
            rows.append(Row(cfg, f"exits_{reason}", "exits/s", vm["exits_per_s"][reason], None))
    return rows


register(Experiment(
    id="did-fig6",
    title="cyclictest interrupt invocation latency, 1 ms interval: bare metal, KVM, KVM+APICv, DID",
    source="DID §5.4, Fig. 6 (seed 002_d9bb5eb44ca8e2e6.txt)",
    profile="did",
    rows=_fig6,
    runs=len(_FIG6),
    notes=[
        "Every row is a prediction (the did profile is calibrated on did-fig4 only).",
        "Latency is from the timer's expiry to the woken thread back in user space (guest.task_wakeup_ns after "
        "the handler). KVM's path: external-interrupt exit, injection, handler, EOI exit, TMICT re-arm exit. "
        "DID §5.4 attributes KVM's 14 us also to timer interrupts landing in long exits (I/O-instruction and "
        "EPT-violation exits of 8.65-24 us, Fig. 7) and to the guest's interrupt-disabled sections, which the "
        "model does not have: it predicts the exits' own cost only.",
    ],
))


#: DID §5.7, Fig. 11: configuration -> (peak RPS with p95 <= 10 ms, TIG %).
_FIG11 = {
    "PV": (47_300.0, 97.7),
    "PV-DID": (50_400.0, 99.7),
    "SRIOV": (45_800.0, 81.55),
    "SRIOV-DID": (151_500.0, 99.8),
    "bare-metal": (152_300.0, None),
    "SRIOV-NAPI-8": (48_300.0, None),
    "SRIOV-NAPI-4": (48_300.0, None),
    "SRIOV-dynamic-ITR": (None, None),
}
#: Offered rates the QoS search spans (req/s) and its bisection steps (~2 % resolution).
_FIG11_RANGE = (2_000.0, 400_000.0, 8)


def _fig11_scenario(cfg: str) -> dict:
    with open(SCENARIOS / "did-fig11.toml", "rb") as f:
        sc = tomllib.load(f)
    vm = sc["vm"][0]
    if cfg.startswith("PV"):
        del vm["net"]  # virtio-net over vhost, the default device
    if cfg.endswith("DID"):
        vm["interrupt_delivery"] = "did"
    if cfg == "bare-metal":
        sc["host"]["virtualization"] = "bare_metal"
        del vm["interrupt_delivery"]
    if cfg.startswith("SRIOV-NAPI-"):
        # DID §5.7 lowers the guest's NAPI weight from 64 to make the VF driver poll more.
        sc["profile_overrides"] = {"guest": {"napi_weight": float(cfg.rsplit("-", 1)[1])}}
    if cfg == "SRIOV-dynamic-ITR":
        vm["net"]["itr_us"] = "dynamic"
    return sc


def _fig11(duration, step):
    from eventpath import qos

    lo, hi, steps = _FIG11_RANGE
    rows = []
    for cfg, (rps_pub, tig_pub) in _FIG11.items():
        s = qos.search(_fig11_scenario(cfg), bound_ms=10.0, lo=lo, hi=hi, steps=steps, duration=duration)
        step(cfg)
        rows.append(Row(cfg, "peak_rps", "req/s", s.peak_rps, rps_pub))
        vm = s.at_peak.summary["vms"][0] if s.at_peak else None
        at = (lambda f: f(vm)) if vm else (lambda f: None)
        rows.append(Row(cfg, "tig", "%", at(lambda v: v["tig_pct"]), tig_pub))
        # The abstract: SRIOV's 97K exits/s fall below 1K with DID (at each one's peak).
        exits_pub = {"SRIOV": 97_000.0}.get(cfg)
        rows.append(Row(cfg, "exits_total", "exits/s", at(lambda v: v["exits_total_per_s"]), exits_pub))
        for reason in ("external_interrupt", "eoi", "io_instruction", "timer"):
            rows.append(Row(cfg, f"exits_{reason}", "exits/s", at(lambda v: v["exits_per_s"][reason]), None))
        rows.append(Row(cfg, "interrupts", "irq/s", at(lambda v: v["interrupts_per_s"]), None))
        rows.append(Row(cfg, "p95_at_peak", "us", at(lambda v: v["latency_us"]["p95"]), None))
    return rows


register(Experiment(
    id="did-fig11",
    title="memcached peak requests/s with 95 % within 10 ms: PV, PV-DID, SRIOV, SRIOV-DID, bare metal",
    source="DID §5.7, Fig. 11 and abstract (seed 002_d9bb5eb44ca8e2e6.txt)",
    profile="did",
    rows=_fig11,
    runs=len(_FIG11),
    notes=[
        "Every row is a prediction (the did profile is calibrated on did-fig4 only). Each configuration's peak "
        "is a QoS search (eventpath.qos: bisection of the paced client's offered rate, p95 <= 10 ms and at least "
        "90 % of the offered rate completed); TIG, exits and interrupts are those of the run at the peak.",
        "Object sizes are not in the paper (a 'twitter dataset'); the scenario takes Twitter's median cache object, "
        "230 bytes (Yang et al., OSDI 2020). SRIOV-dynamic-ITR (no published value) runs ixgbevf's adaptive "
        "throttle instead of the profile's fixed VF throttle, as a sensitivity row.",
    ],
))


#: DID §5.3, Fig. 5: packet rate -> DID's WhileLoop gain over vanilla KVM (%).
_FIG5_GAIN = {100_000: 3.4, 250_000: 9.6, 400_000: 13.4, 600_000: 18.47}
#: WhileLoop's work: 2^34 iterations of one dependent integer addition, one per cycle (first
#: principles: the loop-carried add is a one-cycle dependency chain), at the did profile's clock.
_WHILELOOP_CYCLES = 2.0 ** 34


def _fig5(duration, step):
    with open(SCENARIOS / "did-fig5.toml", "rb") as f:
        base = tomllib.load(f)
    ghz = api.profile("did")["cpu"]["ghz"]["value"]
    alone_s = _WHILELOOP_CYCLES / (ghz * 1e9)
    rows = []
    for rate, gain_pub in _FIG5_GAIN.items():
        elapsed = {}
        for cfg in ("bare-metal", "KVM", "DID"):
            sc = _configured(base, cfg)
            sc["vm"][0]["workload"] = {**base["vm"][0]["workload"], "rate_pps": rate}
            vm = api.run(sc, duration=duration).summary["vms"][0]
            step(f"{cfg} {rate // 1000}K pps")
            share = vm["guest_burn_pct"]
            elapsed[cfg] = alone_s / (share / 100.0) if share else None
            c = f"{cfg}-{rate // 1000}K"
            rows.append(Row(c, "whileloop_elapsed", "s", elapsed[cfg], None))
            rows.append(Row(c, "whileloop_cpu_share", "%", share, None))
            rows.append(Row(c, "tig", "%", vm["tig_pct"], None))
        kvm, did = elapsed["KVM"], elapsed["DID"]
        gain = 100.0 * (kvm / did - 1.0) if kvm and did else None
        rows.append(Row(f"DID-{rate // 1000}K", "gain_over_kvm", "%", gain, gain_pub))
    return rows


register(Experiment(
    id="did-fig5",
    title="WhileLoop's elapsed time beside a background UDP receiver through a VF: bare metal, KVM, DID",
    source="DID §5.3, Fig. 5 (seed 002_d9bb5eb44ca8e2e6.txt)",
    profile="did",
    rows=_fig5,
    runs=3 * len(_FIG5_GAIN),
    notes=[
        "Every row is a prediction. WhileLoop is the guest CPU burn (2^34 one-cycle additions at the profile's "
        "clock, 5.05 s alone); its elapsed time is that over the share of the vCPU it got (guest_burn_pct).",
        "The model's burn has the lowest guest priority: the receiver and NAPI always run first, so as the packet "
        "rate grows the receive path takes most of the vCPU in every configuration and the KVM/DID ratio grows "
        "far past DID's gains at 400K-600K pps. Linux's CFS would share the vCPU between WhileLoop and the "
        "receiving program (dropping datagrams at the socket instead); the guest scheduler of the request-"
        "handling issue is the missing piece.",
    ],
))
