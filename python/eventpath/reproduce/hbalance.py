"""hBalance's experiments (seed 004_ee5e38d5cb394f30.txt, §6) on the profile of its testbed.

§6's host: two quad-core Xeon 5540 (8 pCPUs), Xen 4.2.2 with its credit scheduler (30 ms slice,
unchanged), dom0 on pCPUs of its own (the profile's ``dom0_cpus``), Linux 3.10 guests. The
SMP-VM under test has four vCPUs; 1-3 background VMs of four vCPUs share its pCPUs 0-3, vCPU
``j`` of every VM on pCPU ``j``, each VM at the same lookbusy CPU load (§6.1: "we use lookbusy to
keep the CPU load of each VM at a desired level"; the level is not stated).

Configurations (§6): FV guests on QEMU's emulated e1000 in dom0 with the vIOAPIC in physical
destination mode (``fixed``: vCPU 0), logical mode (``lowest_priority_rr``) or hBalance
(``h_balance``); PV guests on netfront/netback over event channels, vanilla (``fixed``: bound to
vCPU 0), vBalance (``v_balance``, the in-guest balancer of ref. [13]) or hBalance.
"""

from __future__ import annotations

from eventpath.reproduce.experiment import Axis, Experiment, Measured, register
from eventpath.reproduce.simulate import simulate

PROFILE = "hbalance"

#: Each configuration: (device kind, interrupt delivery, router).
CONFIGS = {
    "FV-physical": ("xen_e1000", "emulated", "fixed"),
    "FV-logical": ("xen_e1000", "emulated", "lowest_priority_rr"),
    "FV-hBalance": ("xen_e1000", "emulated", "h_balance"),
    "PV-vanilla": ("xen_pv", "evtchn", "fixed"),
    "PV-vBalance": ("xen_pv", "evtchn", "v_balance"),
    "PV-hBalance": ("xen_pv", "evtchn", "h_balance"),
}

#: Every VM's lookbusy load, % of each vCPU: §6 does not state it; our choice, half of each vCPU,
#: so that vCPUs both block (and are boosted when woken) and contend for their pCPUs.
LOAD_PCT = 25.0


def layout(config: str, background: int, workload: dict | None, tested_load: bool, duration: float,
           warmup: float = 0.1, seed: int = 1) -> dict:
    """§6's host: the SMP-VM under ``config`` running ``workload`` (and lookbusy if
    ``tested_load``) beside ``background`` VMs that run lookbusy only."""
    kind, delivery, router = CONFIGS[config]
    vms = []
    for i in range(1 + background):
        vm = {"name": "smp" if i == 0 else f"bg{i}", "vcpus": 4, "vcpu_pins": [0, 1, 2, 3],
              "interrupt_delivery": delivery, "net": {"kind": kind}}
        if i == 0:
            vm["interrupt_routing"] = router
            if workload is not None:
                vm["workload"] = dict(workload)
        if i > 0 or tested_load:
            vm["lookbusy"] = {"util_pct": LOAD_PCT}
        vms.append(vm)
    return {"name": f"hbalance-{config}-{background}bg", "profile": PROFILE, "seed": seed,
            "duration_s": duration, "warmup_s": warmup,
            "host": {"virtualization": "xen", "scheduler": "xen_credit"}, "vm": vms}


# --- Fig. 7: ping RTT ---------------------------------------------------------------------------

#: §6.1.1: "we ping the SMP-VM for 1000 times" (ping's own 56-byte payload). One request every
#: 2 ms instead of ping's second: 1,000 pings in 2 simulated s; each is answered in the guest's
#: softirq and costs ~no CPU, so the rate changes no vCPU's scheduling.
_PING = {"kind": "ping", "interval_us": 2000.0}
_FIG7_DURATION = 2.0
#: The background VMs (Fig. 7's densities: 2, 3 and 4 vCPUs per pCPU).
_BACKGROUND = (1, 2, 3)


def _fig7(duration, step, backgrounds=_BACKGROUND, configs=tuple(CONFIGS)):
    rows = []
    for n in backgrounds:
        p99 = {}
        for cfg in configs:
            s = simulate(layout(cfg, n, _PING, True, duration or _FIG7_DURATION), what=f"ping, {cfg}, {n} background VMs").summary
            vm = s["vms"][0]
            lat = vm["latency_us"]
            c = f"{cfg} {n}bg"
            rows.append(Measured(c, "rtt_p50", "us", lat["p50"]))
            rows.append(Measured(c, "rtt_p90", "us", lat["p90"]))
            rows.append(Measured(c, "rtt_p99", "us", lat["p99"]))
            rows.append(Measured(c, "rtt_max", "us", lat["max"]))
            p99[cfg] = lat["p99"]
            step(c)
        for path, base in (("FV", "FV-physical"), ("PV", "PV-vanilla")):
            hb, b = p99.get(f"{path}-hBalance"), p99.get(base)
            rows.append(Measured(f"{path}-hBalance vs {base} {n}bg", "p99_cut", "x", b / hb if hb and b else None))
    return rows


register(Experiment(
    id="hbalance-fig7",
    title="Ping RTT to a 4-vCPU SMP-VM beside 1-3 background VMs on 4 pCPUs under Xen credit: FV (physical, "
          "logical, hBalance) and PV (vanilla, vBalance, hBalance)",
    source="hBalance §6, §6.1.1, Fig. 7 (seed 004_ee5e38d5cb394f30.txt)",
    profile=PROFILE,
    baselines=(r"(FV-physical|FV-logical|PV-vanilla) \dbg",),
    rows=_fig7,
    runs=len(CONFIGS) * len(_BACKGROUND),
    notes=[
        "Layout: eventpath.reproduce.hbalance.layout: the SMP-VM and every background VM at lookbusy 50 % of each "
        "vCPU (our choice: §6 does not state the level), all four VMs' vCPU j on pCPU j, dom0 on the profile's "
        "dom0_cpus. Ping: 1,000 echo requests, one every 2 ms.",
        "Fig. 7 is a CDF on a log axis; only the PV balancers' RTT has numbers in the text ('around 0.2 "
        "millisecond', 'not exceeding 0.5 millisecond'). The direction the issue's bar asks for is the p99_cut "
        "rows: hBalance's 99th percentile against physical mode (FV) and vanilla Xen (PV), at least 10x.",
        "Load: lookbusy at 25 % of each vCPU (our choice; §6 does not state it), so that at three background VMs "
        "(four vCPUs per pCPU) the vCPUs' demand fills the pCPUs. At 50 % the host is overloaded at that density "
        "and the tails only grow.",
        "What the model shows: hBalance cuts the median where the tested VM's vCPU 0 waits (3 background VMs: "
        "FV 1.45 -> 0.65 ms, PV 3.9 -> 0.62 ms) and sends almost no interrupt to a preempted vCPU "
        "(vms[].device_interrupts_by_run_state_per_s.runnable ~1/s), but the tail stays (p99 25-70 ms in every "
        "configuration). Traced (PV-hBalance, one background VM, the 22 ms waits): a background VM's four "
        "lookbusy spinners wake together (lookbusy forks one per CPU; their 100 ms cycles stay in step) and, "
        "BOOSTed, take all four pCPUs for their 25 ms spin at once, so no vCPU of the tested VM runs; the ping's "
        "target is blocked, so Algorithm 1 leaves it there (it moves only a raise whose vCPU waits), and the "
        "woken target, BOOSTed too, cannot preempt a BOOSTed spinner; Xen 4.2's tick then drops the spinner's "
        "BOOST without rescheduling, so the target waits for the spin's end or the 30 ms slice. That is Xen "
        "4.2's credit scheduler as modelled; whether the paper's lookbusy runs kept their spinners in step "
        "across pCPUs the paper does not say. The ~0.42-0.62 ms "
        "median floor against the paper's 0.2 ms is dom0's idle pCPUs waking from C6 for every packet "
        "(netback / QEMU threads) in the hbalance profile's priors.",
    ],
    axis=Axis(r"(?P<series>.+?) (?P<x>\d)bg", "background VMs"),
))


# --- Table 2: SPECweb2009 Banking ------------------------------------------------------------

#: §6.2: "FV tests: 200 sessions; PV tests: 400 sessions".
_SESSIONS = {"FV": 200, "PV": 400}
#: Simulated seconds (the paper's runs: 'more than 30 minutes') and warm-up (sessions start).
_T2_DURATION, _T2_WARMUP = 30.0, 5.0


def _table2(duration, step, configs=tuple(CONFIGS)):
    rows = []
    done = {}
    for cfg in configs:
        path = cfg.split("-")[0]
        wl = {"kind": "specweb", "sessions": _SESSIONS[path]}
        sc = layout(cfg, 3, wl, False, duration or _T2_DURATION, warmup=_T2_WARMUP)
        vm = simulate(sc, what=f"SPECweb, {cfg}").summary["vms"][0]
        web = vm["specweb"]
        done[cfg] = web["finished_requests"]
        rows.append(Measured(cfg, "finished_requests", "requests", web["finished_requests"]))
        rows.append(Measured(cfg, "response_time", "s", (web["response_time_mean_ms"] or 0.0) / 1e3 or None))
        step(cfg)
    for hb, base in (("FV-hBalance", "FV-physical"), ("FV-hBalance", "FV-logical"),
                     ("PV-hBalance", "PV-vanilla"), ("PV-hBalance", "PV-vBalance")):
        gain = 100.0 * (done[hb] / done[base] - 1.0) if done.get(base) and done.get(hb) is not None else None
        rows.append(Measured(f"{hb} vs {base}", "requests_gain", "%", gain))
    return rows


register(Experiment(
    id="hbalance-table2",
    title="SPECweb2009 Banking-like sessions on the SMP-VM at four vCPUs per pCPU under Xen credit: FV 200 "
          "sessions (physical, logical, hBalance), PV 400 (vanilla, vBalance, hBalance)",
    source="hBalance §6.2, Table 2 (seed 004_ee5e38d5cb394f30.txt)",
    profile=PROFILE,
    baselines=(r"FV-physical", r"FV-logical", r"PV-vanilla",),
    rows=_table2,
    runs=len(CONFIGS),
    notes=[
        "Layout: eventpath.reproduce.hbalance.layout with three background VMs at lookbusy 50 % (four vCPUs per "
        "pCPU, §6.2: 'the same as that in the httperf tests'); the SMP-VM runs only the web server.",
        "The paper's runs last more than 30 minutes, ours 30 simulated seconds after a 5 s warm-up, so finished "
        "requests are compared as the table's own improvements; response times are compared as printed.",
        "Every row misses but the 1.1 % one, for one reason: the specweb workload's declared priors (10 s think, "
        "0.2 / 2 ms of server CPU per light / heavy request) leave the SMP-VM nearly idle (~20 and ~40 requests/s, "
        "~6 ms responses), so every session's cycle is its think time and no router changes throughput. The "
        "paper's server is saturated: 27,837 requests in >30 min at 200 sessions is ~15 requests/s with 3 s "
        "responses, i.e. tens of ms of the VM's CPU per request (TLS handshakes, PHP, BeSim round trips and a "
        "page's embedded images, none modelled). Raising the priors to saturate it would fit this table by hand; "
        "a sourced per-operation cost is what is missing.",
    ],
    axis=Axis(r"(?P<series>FV|PV)-(?P<x>[A-Za-z]+)(?: vs .+)?", "configuration"),
))
