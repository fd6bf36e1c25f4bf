"""CGR/AIR/MTVD (seed 003_9988edc85599e763.txt) application experiments: WebBench (§5.3, Fig. 10)
and NPB FT (§5.6, Fig. 13), on the ``webbench`` and ``cpu_job`` workloads (issue 30 item 5).

A module of its own beside ``sriov.py`` (whose layout helper and controllers it uses, read only),
registered the same way.
"""

from __future__ import annotations

import math

from eventpath.reproduce.experiment import SCENARIOS, Axis, Experiment, Measured, register
from eventpath.reproduce.simulate import REMOVE, load, simulate
from eventpath.reproduce.sriov import _CONTROLLERS, PROFILE, _host_cpu, layout

# --- Fig. 10: WebBench throughput and failed clients -------------------------------------------

#: §5.3's clients per VM.
_FIG10_CLIENTS = (100, 1_000, 2_000)
#: The VM counts run. Fig. 10's axis is the VM count up to 16 (§5.3 names 8 and 16; §5.2.1's
#: Fig. 8a runs 1, 4, 8, 12, 16); the default runs its ends and middle to stay within minutes.
_FIG10_VMS = (1, 8, 16)
#: Simulated seconds (after a 0.2 s warm-up): the 1 s time-out must be able to fire.
_FIG10_DURATION = 1.2


def _web_changes(controller: str, clients: int) -> dict:
    return {"vm.0.net.moderation": dict(_CONTROLLERS[controller]), "vm.0.workload.clients": clients}


def _fig10(duration, step, counts=_FIG10_VMS, clients=_FIG10_CLIENTS):
    rows = []
    for k in clients:
        best = {c: None for c in ("CGR", "AIR")}
        for n in counts:
            per_min, failed = {}, {}
            for c in _CONTROLLERS:
                cfg = f"{c}-{k}c-{n}"
                s = simulate(layout("sriov-fig10.toml", n, _web_changes(c, k), _FIG10_DURATION),
                             what=f"sriov-fig10 {cfg}", duration=duration).summary
                step(cfg)
                webs = [v["web"] for v in s["vms"]]
                rates = [w["requests_per_min"] for w in webs]
                per_min[c] = sum(rates) if all(r is not None for r in rates) else None
                failed[c] = float(sum(w["failed_clients"] for w in webs))
                rows.append(Measured(cfg, "requests_per_min", "req/min", per_min[c]))
                rows.append(Measured(cfg, "failed_clients", "clients", failed[c]))
                rows.append(Measured(cfg, "host_cpu", "%", _host_cpu(s)))
            for c in ("CGR", "AIR"):
                gain = 100.0 * (per_min[c] / per_min["FIR"] - 1.0) if per_min[c] and per_min["FIR"] else None
                rows.append(Measured(f"{c}/FIR-{k}c-{n}", "throughput_gain", "%", gain))
                if gain is not None and (best[c] is None or gain > best[c]):
                    best[c] = gain
            # §5.3: "the AIR always achieves the highest throughput, the CGR performs secondarily, and
            # the FIR has the lowest throughput" (every client count and VM count).
            rows.append(Measured(f"AIR>CGR>FIR-{k}c-{n}", "throughput_order", "holds",
                                 _order([per_min["AIR"], per_min["CGR"], per_min["FIR"]])))
            # §5.3: "the AIR and the CGR reduce the total failed clients of the co-hosted 16 VMs down
            # to 160 and 550, respectively, compared to 746 ... caused by the FIR".
            if k == 2_000 and n == 16:
                rows.append(Measured(f"AIR<CGR<FIR-{k}c-{n}", "failed_order", "holds",
                                     _order([failed["FIR"], failed["CGR"], failed["AIR"]])))
            # §5.3: "the FIR has failed clients when 8 VMs are hosted on the 8-core server" (read at
            # 1,000 clients: the experiment's notes).
            if k == 1_000 and n == 8:
                rows.append(Measured(f"FIR-{k}c-{n}", "has_failed_clients", "holds", float(failed["FIR"] > 0)))
        for c in ("CGR", "AIR"):
            # The text's 'improvement up to ...': the largest gain over the VM counts run.
            rows.append(Measured(f"{c}-vs-FIR-{k}c", "max_throughput_gain", "%", best[c]))
    return rows


def _order(values: list[float | None]) -> float | None:
    """1.0 where ``values`` fall strictly from first to last, 0.0 where not; None where one is
    missing (a direction row's value)."""
    if any(v is None for v in values):
        return None
    return float(all(a > b for a, b in zip(values, values[1:])))


register(Experiment(
    id="sriov-fig10",
    title="WebBench (100 / 1,000 / 2,000 clients per VM) into 1-16 VMs of 2 vCPUs on 8 pCPUs: FIR vs CGR vs AIR",
    source="CGR/AIR §5.3, Fig. 10 (seed 003_9988edc85599e763.txt)",
    profile=PROFILE,
    baselines=(r"FIR-\d+c-\d+",),
    rows=_fig10,
    runs=len(_FIG10_VMS) * len(_FIG10_CLIENTS) * len(_CONTROLLERS),
    notes=[
        "Roles (issue 47): FIR's rows are the baseline's, so its published values are calibration rows: 746 "
        "failed at 16 VMs x 2,000 clients, none at 100 clients (every VM count), and failed clients at 8 VMs x "
        "1,000 clients (FIR-1000c-8 has_failed_clients, unit holds; see C5 below). CGR's and AIR's values (550 and "
        "160 failed; none at 100 clients; none at 8 VMs x 1,000), their largest gains at 2,000 clients (CGR "
        "+13.58 %, AIR +21.24 % over FIR's pages per minute, compared with the largest gain over the VM counts "
        "run: 1, 8, 16 only) and the orders are predictions: 'the AIR always achieves the highest throughput, the "
        "CGR performs secondarily, and the FIR has the lowest' (AIR>CGR>FIR-Kc-N throughput_order at every client "
        "and VM count) and the failed clients of 16 VMs x 2,000 in the order AIR < CGR < FIR (failed_order).",
        "Conflict C5, a declared reading: §5.3 says 'there are no failed clients when 100 concurrent clients send "
        "request to each VM', then 'Fig. 10a shows that the CGR and the AIR both can process all requests without "
        "failed clients. However, the FIR has failed clients when 8 VMs are hosted'; Fig. 10c is 2,000 clients, so "
        "10a is 100, where nothing fails. The second sentence is read at 1,000 clients: FIR fails at 8 VMs, CGR and "
        "AIR do not.",
        "The tool is webbench 1.5 (§5.3's 'evaluate the performance in WWW or proxy servers' is its README's line; "
        "its output is pages/min and failed). Its 'failed' counts failed requests (each connect, write or read "
        "error; the client carries on; no per-request time-out), and its pages/min counts failed ones too; the "
        "paper's 'total failed clients' is defined as 'the total requests that fail to be accomplished'. The "
        "model's webbench counts failed clients instead: a request not done 1 s after its SYN (the workload's "
        "declared default time-out) fails its client, which then stops; its pages per minute are the completed "
        "requests. structural: webbench's failed-request count (a client that goes on after an error, failures as "
        "socket errors) is model work. A dropped SYN is resent after 2.6.32's 3 s initial RTO (client.tcp_syn_rto_ns; "
        "the client's kernel is not stated, 2.6.32 is our choice), past the 1 s time-out: under real webbench, which "
        "has none, it would delay a request by 3 s rather than fail its client.",
        "Each VM (2 vCPUs, a VF with the 512-descriptor ring) runs Apache (not stated: §5.4 runs Apache) with 5 "
        "processes, Apache 2.2 prefork's StartServers, on one listening socket. Prefork would grow towards "
        "MaxClients (256) under 2,000 clients, spawning 1, 2, 4, ... processes a second (doubling up to "
        "MAX_SPAWN_RATE, 32) while fewer than MinSpareServers are idle, a few in the model's 1.4 s: the 5 are held "
        "fixed (a declared cap). It serves a 45-byte page (not stated: a stock index.html) to "
        "webbench-like clients: closed loops of HTTP/1.0 GETs, a TCP connection per request, no think time. "
        "Throughput is the pages all VMs completed per minute of the 1.2 s measured window after a 0.2 s warm-up "
        "(webbench's default run is 30 s, -t; the paper states none); failed clients count the whole run. FIR is "
        "8,000 interrupts/s; CGR and AIR are the policies' defaults (sriov-fig8a's notes). VM counts 1, 8, 16 (the "
        "axis's ends and the 8 the text names) keep the run within minutes. The clients start one fork apart "
        "(client.fork_ns, 100 us: webbench 1.5 forks them one by one), so a VM's 2,000 clients ramp up over 0.2 s, "
        "the warm-up. The vCPUs are unpinned (sriov-fig8a's notes).",
        "Known gaps: at 8 and 16 VMs (16-32 vCPUs on 8 busy pCPUs) each vCPU waits for its pCPU longer than any "
        "controller's throttle interval, so its VF's interrupt is always due when it runs and FIR, CGR and AIR "
        "give nearly identical runs (the orders fail, gains near 0, where the paper has up to +13.58 % and "
        "+21.24 %: the sriov-fig8a gap). With one VM the server's vCPUs are not contended and the throttle binds, "
        "but AIR's Eq. 1 (k = 512 packets per interrupt) sets ~1,200 interrupts/s, which a request/response load "
        "never fills, and AIR loses to FIR. A client fails when its SYN is dropped at its VF's full ring (its vCPU "
        "waiting for a pCPU) and TCP resends it after 1 s, which the 1 s time-out does not wait for: thousands of "
        "the 32,000 clients of 16 VMs x 2,000 fail, against the paper's 160-746 failed requests.",
    ],
    axis=Axis(r"(?P<series>[A-Z]+(?:/FIR)?-\d+c)-(?P<x>\d+)", "VMs"),
))


# --- Fig. 13: NPB FT execution time, MTVD+AIR against FIR ---------------------------------------

#: NPB 3.3 FT's problem classes: grid (nx, ny, nz) and iterations (NPB's npbparams / ft.f).
_NPB_FT = {"S": (64, 64, 64, 6), "W": (128, 128, 32, 6), "A": (256, 256, 128, 6), "B": (512, 256, 256, 20)}
#: The sustained rate of FT on one E5607 core (Gflop/s). Declared, not from a seed: the core's
#: double-precision peak is 2.27 GHz x 4 flop/cycle (SSE: a 2-wide add and a 2-wide multiply a
#: cycle) = 9.08 Gflop/s, and a 3-D FFT's transposes are memory-bound, taken at a tenth of peak.
#: It only sets each class's length: the normalized time does not depend on it to first order.
_FT_GFLOPS = 0.908
#: The classes run by default: S, W and A take 0.2, 0.4 and 7.9 s of CPU; B (101 s of CPU, over
#: 200 s simulated) would take far longer than the experiment's few minutes.
_FIG13_CLASSES = ("S", "W", "A")
#: The two configurations: every VF under FIR, or under AIR with the multi-threaded VF driver.
_FIG13 = {
    "FIR": {"vm.0.net.itr_us": REMOVE, "vm.0.net.moderation": dict(_CONTROLLERS["FIR"])},
    "MTVD+AIR": {"vm.0.net.itr_us": REMOVE, "vm.0.net.moderation": dict(_CONTROLLERS["AIR"]), "vm.0.net.mtvd": True},
}
#: The co-hosted netperf receivers: three, so that with the FT VM the host runs §5.5's layout,
#: the MTVD section's only one ("4 co-hosted VMs each of which is configured with 2 vCPUs"); §5.6
#: names none (the experiment's notes).
_FIG13_NETPERF_VMS = 3


def ft_flop(cls: str) -> float:
    """NPB FT's operation count of class ``cls``, by the formula NPB's ft.f reports Mop/s with:
    N (14.8157 + 7.19641 ln N + (5.23518 + 7.21113 ln N) niter), N = nx ny nz."""
    nx, ny, nz, niter = _NPB_FT[cls]
    n = nx * ny * nz
    return n * (14.8157 + 7.19641 * math.log(n) + (5.23518 + 7.21113 * math.log(n)) * niter)


def ft_work_ms(cls: str) -> float:
    """CPU ms of class ``cls`` at :data:`_FT_GFLOPS`."""
    return ft_flop(cls) / (_FT_GFLOPS * 1e9) * 1e3


def _fig13_scenario(cfg: str, cls: str) -> dict:
    work = ft_work_ms(cls)
    sc = layout("sriov-fig4.toml", _FIG13_NETPERF_VMS, _FIG13[cfg])
    ft = load(SCENARIOS / "sriov-fig13.toml", {"vm.0.workload.work_ms": round(work, 3)})
    sc["vm"] = ft["vm"] + sc["vm"]
    sc["name"] = "sriov-fig13"
    # Room for the job to be slowed down by half again and more; it counts from the start.
    sc["warmup_s"] = 0.0
    sc["duration_s"] = round(2.0 * work / 1e3 + 0.05, 3)
    return sc


def _fig13(duration, step, classes=_FIG13_CLASSES):
    rows = []
    worst = None
    for cls in classes:
        t = {}
        for cfg in _FIG13:
            s = simulate(_fig13_scenario(cfg, cls), what=f"sriov-fig13 {cfg}-{cls}", duration=duration).summary
            step(f"{cfg}-{cls}")
            job = s["vms"][0]["cpu_job"]
            # Not finished: no number that looks like a completion time.
            t[cfg] = job["completion_ms"] if job["finished"] else None
            rows.append(Measured(f"{cfg}-{cls}", "completion_time", "ms", t[cfg]))
            rows.append(Measured(f"{cfg}-{cls}", "netperf_gbps", "Gbit/s",
                                 sum(v["throughput"]["gbps"] or 0.0 for v in s["vms"][1:])))
            rows.append(Measured(f"{cfg}-{cls}", "host_cpu", "%", _host_cpu(s)))
        norm = t["MTVD+AIR"] / t["FIR"] if t["MTVD+AIR"] and t["FIR"] else None
        rows.append(Measured(f"MTVD+AIR/FIR-{cls}", "normalized_time", "x", norm))
        added = 100.0 * (norm - 1.0) if norm is not None else None
        rows.append(Measured(f"MTVD+AIR/FIR-{cls}", "added_time", "%", added))
        if added is not None:
            worst = max(worst or -math.inf, added)
    rows.append(Measured("MTVD+AIR-vs-FIR", "max_added_time", "%", worst))
    return rows


register(Experiment(
    id="sriov-fig13",
    title="NPB FT (single-threaded) beside 3 TCP_STREAM VMs on 8 pCPUs: execution time under MTVD+AIR normalized to FIR",
    source="CGR/AIR §5.6, Fig. 13 (seed 003_9988edc85599e763.txt)",
    profile=PROFILE,
    baselines=(r"FIR-[SWAB]",),
    rows=_fig13,
    runs=len(_FIG13_CLASSES) * len(_FIG13),
    notes=[
        "Every published row is a prediction: 'the AIR+MTVD costs at most 6 percent additional time compared with "
        "the FIR in all tested Classes' is a bound on each class's added time (base: FIR's time of that class; "
        "MTVD+AIR/FIR-S, -W and -A added_time at most 6 %). The largest over the classes run (max_added_time) is a "
        "summary without a value of its own.",
        "Layout, our choice from the text: §5.6 compares 'a baseline VM with FIR and a VM with MTVD+AIR' and says "
        "nothing of what ran beside it ('under more realistic environment where some VMs are CPU-intensive' "
        "names no count). The MTVD section's only layout is §5.5's '4 co-hosted VMs each of which is configured "
        "with 2 vCPUs', taken here: the FT VM (2 vCPUs, 512 MB, the job on vCPU 0, no device traffic) and three "
        "netperf TCP_STREAM receivers (the Fig. 4 VM), their VFs all under FIR (8,000 interrupts/s) or all under "
        "AIR with MTVD, unpinned on the 8 pCPUs. The job slows by what the receivers' vCPUs, interrupts and MTVD "
        "threads take of the pCPUs; a VF without traffic costs the FT VM nothing in the model. (Fifteen receivers ran "
        "beside it before, the paper's largest layout, with §5.5's four leaving the job untouched as the reason "
        "given: a reason from a result, not from the text.)",
        "The job's work per class is NPB FT's own operation count (ft.f's Mop/s formula) at a declared 0.908 "
        "Gflop/s, a tenth of the E5607 core's double-precision peak: S 195 ms, W 410 ms, A 7.9 s, B 101 s of CPU. "
        "S, W and A are run; class B is not (over 200 s simulated: far past the experiment's few minutes). The "
        "completion time counts from the run's start; a job the run did not finish has none (null). §5.7's 'IS of "
        "the NPB benchmark' is read as §5.6's FT (a typo).",
    ],
    axis=Axis(r"(?P<series>FIR|MTVD\+AIR(?:/FIR)?)-(?P<x>[SWAB])", "NPB class"),
))
