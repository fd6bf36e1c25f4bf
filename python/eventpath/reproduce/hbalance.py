"""hBalance's experiments (seed 004_ee5e38d5cb394f30.txt, §6) on the profile of its testbed.

§6's host: two quad-core Xeon 5540 (8 pCPUs), Xen 4.2.2 with its credit scheduler (30 ms slice,
unchanged), dom0 on pCPUs of its own, Linux 3.10 guests. The SMP-VM under test has four vCPUs;
1-3 background VMs of four vCPUs run "on the same set of pCPUs" (§6.1) — four of them, as "four
vCPUs per pCPU on average" (§6.2) with four 4-vCPU VMs implies — and no vCPU is pinned: the paper
never pins, and blames hBalance's remaining tails on the credit scheduler's load balancing moving
vCPUs (§6.1.1). The host is therefore the profile's first six pCPUs, dom0 on the last two (4, 5):
unpinned vCPUs stay off dom0's pCPUs, so every guest vCPU runs on 0-3, where credit moves it
(our reading of the set-up; the paper names neither the set nor dom0's pCPUs). Every VM runs at
the same lookbusy CPU load (§6.1: "we use lookbusy to keep the CPU load of each VM at a desired
level"; the level is not stated: :data:`LOAD_PCT`).

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

#: Every VM's lookbusy load, % of each vCPU: §6 does not state it ("a desired level"); our choice,
#: a quarter of each vCPU, so that at three background VMs (four vCPUs per pCPU) the vCPUs'
#: demand just fills the pCPUs, and vCPUs both block (and are BOOSTed when woken) and contend.
#: 50 % overloads the host at that density (``eventpath sensitivity`` may screen both ends).
LOAD_PCT = 25.0

#: The host: the profile's first six pCPUs, dom0 on 4 and 5, the guests' unpinned vCPUs on 0-3.
_HOST = {"virtualization": "xen", "scheduler": "xen_credit", "pcpus": 6, "dom0_cpus": [4, 5]}


def layout(config: str, background: int, workload: dict | None, tested_load: bool, duration: float,
           warmup: float = 0.1, seed: int = 1) -> dict:
    """§6's host: the SMP-VM under ``config`` running ``workload`` (and lookbusy if
    ``tested_load``) beside ``background`` VMs that run lookbusy only."""
    kind, delivery, router = CONFIGS[config]
    vms = []
    for i in range(1 + background):
        vm = {"name": "smp" if i == 0 else f"bg{i}", "vcpus": 4,
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
            "host": dict(_HOST, dom0_cpus=list(_HOST["dom0_cpus"])), "vm": vms}


# --- Fig. 7: ping RTT ---------------------------------------------------------------------------

#: §6.1.1: "we ping the SMP-VM for 1000 times" (ping's own 56-byte payload). One request every
#: 2 ms instead of ping's second: 1,000 pings in 2 simulated s; each is answered in the guest's
#: softirq and costs ~no CPU, so the rate changes no vCPU's scheduling.
_PING = {"kind": "ping", "interval_us": 2000.0}
_FIG7_DURATION = 2.0
#: The warm-up: the profile's VM starts (``[housekeeping]``: each VM at its own offset over 0.6 s)
#: fit in its first half, so every VM has started, at its own phase, before the pings count.
_FIG7_WARMUP = 1.2
#: The background VMs (Fig. 7's densities: 2, 3 and 4 vCPUs per pCPU).
_BACKGROUND = (1, 2, 3)


def _fig7(duration, step, backgrounds=_BACKGROUND, configs=tuple(CONFIGS)):
    rows = []
    for n in backgrounds:
        p99, p50 = {}, {}
        for cfg in configs:
            sc = layout(cfg, n, _PING, True, duration or _FIG7_DURATION, warmup=_FIG7_WARMUP)
            s = simulate(sc, what=f"ping, {cfg}, {n} background VMs").summary
            vm = s["vms"][0]
            lat = vm["latency_us"]
            c = f"{cfg} {n}bg"
            rows.append(Measured(c, "rtt_p50", "us", lat["p50"]))
            rows.append(Measured(c, "rtt_p90", "us", lat["p90"]))
            rows.append(Measured(c, "rtt_p99", "us", lat["p99"]))
            rows.append(Measured(c, "rtt_max", "us", lat["max"]))
            p99[cfg], p50[cfg] = lat["p99"], lat["p50"]
            step(c)
        for path, base in (("FV", "FV-physical"), ("PV", "PV-vanilla")):
            hb, b = p99.get(f"{path}-hBalance"), p99.get(base)
            rows.append(Measured(f"{path}-hBalance vs {base} {n}bg", "p99_cut", "x", b / hb if hb and b else None))
        # §6.1.1's stated directions: the balancers cut the tail that physical/logical mode
        # (FV) and vanilla Xen (PV) leave; the FV path costs more than the PV path.
        for mech, bases in (("FV-hBalance", ("FV-physical", "FV-logical")), ("PV-hBalance", ("PV-vanilla",)),
                            ("PV-vBalance", ("PV-vanilla",))):
            for base in bases:
                if mech in p99 and base in p99:
                    rows.append(Measured(f"{mech} vs {base} {n}bg", "tail_below", "holds", _below(p99[mech], p99[base])))
        if "FV-physical" in p50 and "PV-vanilla" in p50:
            rows.append(Measured(f"FV-physical vs PV-vanilla {n}bg", "median_above", "holds",
                                 _below(p50["PV-vanilla"], p50["FV-physical"])))
    return rows


def _below(a: float | None, b: float | None) -> float | None:
    """1.0 where ``a`` < ``b``, 0.0 where not; None without both (a direction row's value)."""
    return None if a is None or b is None else float(a < b)


register(Experiment(
    id="hbalance-fig7",
    title="Ping RTT to a 4-vCPU SMP-VM beside 1-3 background VMs on 4 pCPUs under Xen credit: FV (physical, "
          "logical, hBalance) and PV (vanilla, vBalance, hBalance)",
    source="hBalance §6, §6.1.1, Fig. 7 (seed 004_ee5e38d5cb394f30.txt)",
    profile=PROFILE,
    baselines=(r"(FV-physical|FV-logical|PV-vanilla) \dbg", r"FV-physical vs PV-vanilla \dbg"),
    rows=_fig7,
    runs=len(CONFIGS) * len(_BACKGROUND),
    notes=[
        "Layout: eventpath.reproduce.hbalance.layout: the SMP-VM and every background VM at lookbusy 25 % of each "
        "vCPU (our choice: §6 does not state the level), no vCPU pinned (§6.1.1 blames the tails on credit moving "
        "vCPUs), every vCPU on the same four pCPUs 0-3 (§6.1 'the same set of pCPUs'; §6.2 'four vCPUs per pCPU'), "
        "dom0 on 4-5. Ping: 1,000 echo requests, one every 2 ms (ping sends one a second: our choice, so that the "
        "run is 2 s; each is answered in the guest's softirq and changes no vCPU's scheduling), after a 1.2 s "
        "warm-up that holds the VMs' starts (the profile's [housekeeping]: each VM at its own offset over 0.6 s, in "
        "the warm-up's first half).",
        "Fig. 7 is a CDF on a log axis; only the PV balancers' RTT has numbers in the text ('around 0.2 "
        "millisecond' as a median; 'not exceeding 0.5 millisecond' as a bound on the worst; FV hBalance 'mostly "
        "within 1 millisecond' as a bound on the median). The stated directions are rows (unit holds): each "
        "balancer's p99 below physical and logical mode's (FV) and vanilla Xen's (PV) at every density "
        "(predictions), and the FV path's median above the PV path's (a baselines' order: calibration). The "
        "densities (1-3 background VMs) are our reading of Fig. 7, which the text does not give.",
        "Load: lookbusy at 25 % of each vCPU (our choice; §6 does not state it), so that at three background VMs "
        "(four vCPUs per pCPU) the vCPUs' demand fills the pCPUs. At 50 % the host is overloaded at that density "
        "and the tails only grow. Each VM starts at its own offset (the hbalance profile's vm_boot_spread_ns, 0.6 s, "
        "each VM's draw from its own stream): under Xen a start is the toolstack's unpause, a BOOSTed wake-up of each "
        "of the VM's vCPUs (domain_unpause -> csched_vcpu_wake). A VM's vCPUs start together (vcpu_start_spread_ns "
        "0: domain_unpause wakes them in one loop, lookbusy forks its spinners in one), so lookbusy's spinners begin "
        "their 100 ms cycles together within a VM and at unrelated phases across VMs (until issue 48 item 4 every "
        "VM started at 0 and every spinner on the host was in step).",
        "What the model shows (8 seeds): hBalance cuts the median where the tested VM's vCPU 0 waits (3 background "
        "VMs: FV 1.05 -> 0.74 ms, PV 1.02 -> 0.60 ms) and sends almost no interrupt to a preempted vCPU "
        "(vms[].device_interrupts_by_run_state_per_s.runnable < 0.2/s), but the tail stays (p99 18-46 ms in every "
        "configuration; seed-to-seed sd 2-5 ms, so the direction rows flip between seeds). When the ping's default "
        "target is away it is halted, almost never preempted (default_target_away_by_run_state_per_s: 140-310/s "
        "blocked, under 13/s runnable). Traced before issue 48 item 4 (PV-hBalance, one background VM, the 22 ms "
        "waits): a VM's four lookbusy spinners wake together (lookbusy forks one per CPU) and, BOOSTed, take all "
        "four pCPUs for their 25 ms spin at once, so no vCPU of the tested VM runs; the ping's target is blocked, "
        "so Algorithm 1 leaves it there (it moves only a raise whose vCPU waits), and the woken target, BOOSTed "
        "too, cannot preempt a BOOSTed spinner; Xen 4.2's tick then drops the spinner's BOOST without "
        "rescheduling, so the target waits for the spin's end or the 30 ms slice. With each VM at its own phase "
        "that VM-wide spin remains (1 background VM: a VM's four vCPUs all on at once 7-15 % of the window, 0.4 % "
        "for independent vCPUs) and so does the tail. That is Xen 4.2's credit scheduler as modelled; whether "
        "the paper's lookbusy runs kept a VM's spinners in step the paper does not say, and it decides the "
        "lighter densities' tail: with the profile's vcpu_start_spread_ns at its range's top (100 ms: a VM's "
        "spinners out of step) the p99 at one background VM falls from 18-23 ms to 4-9 ms, at three it stays "
        "35-44 ms (8 seeds). The ~0.55-0.65 ms "
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
    done, util = {}, {}
    for cfg in configs:
        path = cfg.split("-")[0]
        wl = {"kind": "specweb", "sessions": _SESSIONS[path]}
        sc = layout(cfg, 3, wl, False, duration or _T2_DURATION, warmup=_T2_WARMUP)
        vm = simulate(sc, what=f"SPECweb, {cfg}").summary["vms"][0]
        web = vm["specweb"]
        done[cfg] = web["finished_requests"]
        util[cfg] = vm.get("cpu_util_pct")
        rows.append(Measured(cfg, "finished_requests", "requests", web["finished_requests"]))
        rows.append(Measured(cfg, "response_time", "s", (web["response_time_mean_ms"] or 0.0) / 1e3 or None))
        step(cfg)
    for hb, base in (("FV-hBalance", "FV-physical"), ("FV-hBalance", "FV-logical"),
                     ("PV-hBalance", "PV-vanilla"), ("PV-hBalance", "PV-vBalance"), ("FV-physical", "FV-logical")):
        if hb not in done or base not in done:
            continue
        gain = 100.0 * (done[hb] / done[base] - 1.0) if done.get(base) and done.get(hb) is not None else None
        rows.append(Measured(f"{hb} vs {base}", "requests_gain", "%", gain))
    if "PV-vanilla" in util:
        # §6.2: "400 simultaneous sessions in the PV tests to saturate the SMP-VM": a regime, read as
        # its vCPUs halted under a tenth of their time (cpu_util_pct: not halted, % of vCPU time).
        rows.append(Measured("PV-vanilla", "saturated", "holds", None if util["PV-vanilla"] is None
                             else float(util["PV-vanilla"] >= 90.0)))
    return rows


register(Experiment(
    id="hbalance-table2",
    title="SPECweb2009 Banking-like sessions on the SMP-VM at four vCPUs per pCPU under Xen credit: FV 200 "
          "sessions (physical, logical, hBalance), PV 400 (vanilla, vBalance, hBalance)",
    source="hBalance §6.2, Table 2 (seed 004_ee5e38d5cb394f30.txt)",
    profile=PROFILE,
    baselines=(r"FV-physical", r"FV-logical", r"PV-vanilla", r"FV-physical vs FV-logical"),
    rows=_table2,
    runs=len(CONFIGS),
    notes=[
        "Layout: eventpath.reproduce.hbalance.layout with three background VMs at lookbusy 25 % (four vCPUs per "
        "pCPU, §6.2: 'the same as that in the httperf tests'), unpinned on pCPUs 0-3; the SMP-VM runs only the "
        "web server. The think time (10 s) is SPECweb2005/2009 Banking's own (9.98 s between a session's "
        "operations in its design documents).",
        "Roles: FV-physical, FV-logical and PV-vanilla are the paper's baselines: their response times (3.053, "
        "3.443, 1.108 s) and their order (physical beats logical: 27,837 against 24,538 requests, +13.4 %) are "
        "calibration rows, as is §6.2's regime '400 sessions ... to saturate the SMP-VM' (PV); the gains of "
        "hBalance and vBalance are predictions. The paper's counts come from runs of 'more than 30 minutes' whose "
        "lengths it does not give and whose response times and counts fit one closed loop of fixed think time "
        "only with unequal lengths, so the gains are read as ratios of counts.",
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
