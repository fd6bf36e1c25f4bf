"""ES2 §6.3's multi-VM throughput experiments (seed 000_8734db7c67a9fb1f.txt, Fig. 7a and 8a).

The set-up of §6.3: four VMs of four vCPUs (1 GB) time-share four physical cores, "the four
sibling vCPUs of the same VM [pinned] to different physical cores"; the back-end I/O threads run
on a separate core; "lowest-priority CPU burn scripts in each VM" keep the vCPUs busy so the
hypervisor schedules them; 1 to 4 of the VMs are tested (the others only burn). The host is
§6.1's 8-core E5-4610 v2: vCPUs on pCPUs 0-3, the I/O core is pCPU 4, the rest idle.

Configurations: PI (stock vhost-net, one thread per device, all pinned to the I/O core, posted
interrupts), PI+H(P) and PI+H(O) (ES2 joint threads of ``combining_level`` 4 on the I/O core,
perceptive or optimistic switch), and each with "+R": ES2's intelligent interrupt redirection
(``interrupt_routing = "es2"``, ES2 §4.3: a device interrupt goes to an online vCPU of the VM).
"""

from __future__ import annotations

from eventpath.reproduce.experiment import Axis, Experiment, Measured, register
from eventpath.reproduce.simulate import simulate

#: (config, [host.io] table or None for stock vhost-net); a "+R" suffix adds ES2's redirection.
#: "PI+H(P) cl2" is PI+H(P) with combining_level 2 (ES2 §5.1: a module parameter), for Fig. 7b's
#: two I/O cores.
_IO = {
    "PI": None,
    "PI+H(P)": {"handling": "es2", "switch": "perceptive", "cores": [4]},
    "PI+H(O)": {"handling": "es2", "switch": "optimistic", "cores": [4]},
    "PI+H(P) cl2": {"handling": "es2", "switch": "perceptive", "cores": [4], "combining_level": 2},
}

_IO_CORE = 4

#: The run's warm-up unless an experiment sets its own (s).
_WARMUP = 0.05


def layout(config: str, tested: int, workload: dict, duration: float | None = None, seed: int = 1,
           io_cores: int = 1, warmup: float | None = None) -> dict:
    """§6.3's host with ``tested`` of its four VMs running ``workload`` under ``config``, its
    back-end threads on ``io_cores`` I/O cores (pCPU 4 on; ES2 gives TCP receive two)."""
    redirect = config.endswith("+R")
    io = _IO[config.removesuffix("+R")]
    if io is not None:
        io = {**io, "cores": list(range(_IO_CORE, _IO_CORE + io_cores))}
    vms = []
    for i in range(4):
        vm = {"name": f"vm{i}", "vcpus": 4, "vcpu_pins": [0, 1, 2, 3], "guest_cpu_burn": True,
              "interrupt_delivery": "posted", "net": {"queue_size": 256},
              "interrupt_routing": "es2" if redirect else "fixed"}
        if io is None:
            vm["net"]["vhost_pin"] = _IO_CORE + i % io_cores
        if i < tested:
            vm["workload"] = dict(workload)
        vms.append(vm)
    sc = {"name": f"es2-6.3-{config}-{tested}", "profile": "es2", "seed": seed,
          "duration_s": 0.3 if duration is None else duration, "warmup_s": _WARMUP if warmup is None else warmup,
          "host": {"pcpus": 8}, "vm": vms}
    if io is not None:
        sc["host"]["io"] = dict(io)
    return sc


def _run(config, tested, workload, duration, step, io_cores=1, warmup=None):
    r = simulate(layout(config, tested, workload, duration, io_cores=io_cores, warmup=warmup),
                 what=f"{config} with {tested} tested VMs")
    step(f"{config} {tested} VM")
    return r.summary


def _gain(x, base):
    return None if not base else 100.0 * (x / base - 1.0)


def _holds(cond):
    return None if cond is None else (1.0 if cond else 0.0)


def _sweep(configs, workload, metric, unit, key, duration, step, counts, io_cores=1, warmup=None,
           backend_cpu=False):
    """Every config at every tested-VM count: the tested VMs' total ``throughput[key]``, their
    mean I/O-instruction exits, and each config's gain over PI (``backend_cpu``: also the
    back-end threads' CPU, % of one core, summed). Returns (rows, gains): gains[config][n]."""
    rows = []
    gains: dict[str, dict[int, float | None]] = {c: {} for c in configs[1:]}
    for n in counts:
        got = {c: _run(c, n, workload, duration, step, io_cores, warmup) for c in configs}
        total = {c: sum(vm["throughput"][key] or 0.0 for vm in s["vms"][:n]) for c, s in got.items()}
        for c, s in got.items():
            io = sum(vm["exits_per_s"]["io_instruction"] or 0.0 for vm in s["vms"][:n]) / n
            rows.append(Measured(f"{c} {n}VM", metric, unit, total[c]))
            rows.append(Measured(f"{c} {n}VM", "io_exits_per_tested_vm", "exits/s", io))
            if backend_cpu:
                cpu = sum(t["util_pct"] or 0.0 for t in s["host"]["io_threads"])
                rows.append(Measured(f"{c} {n}VM", "backend_cpu", "%", cpu))
        for c in configs[1:]:
            g = gains[c][n] = _gain(total[c], total["PI"])
            rows.append(Measured(f"{c} vs PI {n}VM", "throughput_gain", "%", g))
    return rows, gains


def _all(gs, pred):
    """``pred`` holds for every value of ``gs`` (None if one is missing)."""
    vals = list(gs)
    return None if not vals or any(v is None for v in vals) else all(pred(v) for v in vals)


#: Fig. 7a and 8a's x-axis: the tested VMs ("PI+H(P) 2VM", "PI+H(P) vs PI 2VM").
_TESTED = Axis(r"(?P<series>.+?)(?: vs PI)? (?P<x>\d+)VM", "tested VMs")


# --- Fig. 7a: netperf TCP send, 512 B, 4 threads per tested VM ---

_NETPERF = {"kind": "tcp_stream", "message_bytes": 512, "streams": 4}

#: Fig. 7a's configurations (ES2 §6.3.1); the published gains are in published/es2-fig7a.toml.
_FIG7A = ("PI", "PI+H(P)", "PI+R", "PI+H(P)+R")

#: Run length and warm-up of the netperf experiments (s): at 1 VM the gains move by < 1 point
#: from 1 s to 2 s (measured, seeds 1-3); ES2 states no run length.
_NETPERF_RUN, _NETPERF_WARMUP = 1.0, 0.2

#: Declared thresholds of the stated directions (ours; ES2 gives words): "slight" is a gain
#: below 10 points, "gradually decreases" allows a step up of at most 2 points between counts.
_SLIGHT, _STEP_SLACK = 10.0, 2.0


def _fig7a(duration, step, counts=(1, 2, 3, 4)):
    rows, g = _sweep(_FIG7A, _NETPERF, "throughput", "Gbit/s", "gbps", duration or _NETPERF_RUN, step, counts,
                     warmup=_NETPERF_WARMUP)
    io = {r.config: r.simulated for r in rows if r.metric == "io_exits_per_tested_vm"}
    lo, hi = min(counts), max(counts)
    # ES2 §6.3.1: PI's kicks per tested VM "drops from 23,000 to 13,000 ... from 1 to 4" (a baseline's regime).
    a, b = io.get(f"PI {lo}VM"), io.get(f"PI {hi}VM")
    # On the 4-VM row: a baseline's row (PI \dVM), its kicks below the 1-VM row's.
    rows.append(Measured(f"PI {hi}VM", "io_exits_fall", "holds", _holds(None if a is None or b is None else b < a)))
    # "the throughput improvement brought by the hybrid I/O handling scheme gradually decreases from 42% to 25%".
    hp = [g["PI+H(P)"][n] for n in counts]
    dec = None if None in hp else hp[-1] < hp[0] and all(y <= x + _STEP_SLACK for x, y in zip(hp, hp[1:]))
    rows.append(Measured("PI+H(P) vs PI, 1 to 4 VMs", "gain_decreases", "holds", _holds(dec)))
    # "PI+R ... only provides a slight throughput increase" (one tested VM).
    r1 = g["PI+R"][lo]
    rows.append(Measured(f"PI+R vs PI {lo}VM", "slight_gain", "holds", _holds(None if r1 is None else 0 < r1 < _SLIGHT)))
    # "Finally, the full ES2 ... achieves a 47% throughput enhancement" over H(P)'s 42 %.
    f1, h1 = g["PI+H(P)+R"][lo], g["PI+H(P)"][lo]
    rows.append(Measured(f"PI+H(P)+R vs PI+H(P) {lo}VM", "throughput_higher", "holds",
                         _holds(None if f1 is None or h1 is None else f1 > h1)))
    return rows


#: Structural gaps the §6.3 experiments share (issue 48's input; not modelled here).
_LOCKSTEP = ("Lock-step (issue 48 items 1-2, measured): each VM boots at its own offset and its vCPU threads "
             "start one after another, so every pCPU's order of VMs differs; in this layout (4 VMs, 0.3 s, seeds "
             "1-4) a VM's four vCPUs run all at once 0.75 +- 3.0 % of its run time against the 0.39 +- 0.03 % "
             "that independent shares imply (within seed spread; one VM of one seed at 12 %), and ES2's router "
             "finds a running sibling in 100 % of the interrupts whose default target was not running (fixed "
             "routing: 98-99 %). The +R rows test the redirection.")

register(Experiment(
    id="es2-fig7a",
    title="1-4 tested VMs (4 vCPUs, 4 netperf threads) sending 512-byte TCP on 4 time-shared cores: PI, PI+H(P), PI+R, PI+H(P)+R",
    source="ES2 §6.3, §6.3.1, Fig. 7a (seed 000_8734db7c67a9fb1f.txt)",
    profile="es2",
    baselines=(r"PI \dVM",),
    rows=_fig7a,
    runs=16,
    seeds=4,
    notes=[
        "Layout (ES2 §6.3): eventpath.reproduce.es2_multi.layout — four VMs of four vCPUs (1 GB) time-share "
        "pCPUs 0-3, 'the four sibling vCPUs of the same VM' on different cores (vCPU j on pCPU j), "
        "'lowest-priority CPU burn scripts in each VM' (guest_cpu_burn), all back-end threads on one separate "
        "core (pCPU 4: which core is unstated). netperf (§6.3.1): tcp_stream, 512 B writes, streams = 4, "
        "'four concurrent Netperf threads ... to fully load its four vCPUs', one per vCPU. PI+H(P): one joint "
        "thread of combining_level 4 on pCPU 4, perceptive switch ('The perceptive mode switch algorithm was "
        "adopted'), quota 4.",
        "Roles (§6.1): PI is the baseline — its rows, PI's 23,000 / 13,000 kicks per tested VM and their fall "
        "from 1 to 4 VMs (io_exits_fall, on the 4-VM row), are calibration rows; every gain and direction "
        "involving H(P) or R is a prediction.",
        "Unstated, chosen here: the client (one core per tested VM; ES2 had one 8-core client); the metric is "
        "the tested VMs' summed Gbit/s (the figure's axis is not in the text; a gain is the same for a sum or a "
        "mean); vCPU j of every VM on pCPU j with all VMs started in the same order (see the structural note); "
        "run length 1 s after 0.2 s of warm-up, 4 seeds (ES2 states none).",
        "Seeds (measured): at 1 VM two seeds differ by < 1 point at 0.3-2 s; at 4 VMs by 10-12 points at every "
        "length (H(P) +17.5 / +7.5 / +19.3 % at 2 s, seeds 1-3), more than a tenth of the +-10-point bar, so "
        "the rows are a 4-seed mean and the 3-4 VM rows stay unconverged (their spread is in the rows).",
        "Directions (predictions; thresholds ours): gain_decreases, §6.3.1's 'gradually decreases from 42% to "
        "25%' (4 VMs below 1 VM, no step up by more than 2 points); slight_gain, 'PI+R ... only provides a "
        "slight throughput increase' (0 < gain < 10 points, one tested VM); throughput_higher, the full ES2's "
        "47 % above H(P)'s 42 % at one VM.",
        "Published gains at 2 and 3 VMs are only 'gradually decreases'; no numbers.",
        _LOCKSTEP,
        "Today's rows (1 s, 4 seeds; measured 2026-12-03, unchanged by issue 49's TCP, which is the client's): "
        "PI's kicks per tested VM are 36,904 ±19,491 / 23,142 / 21,505 / 15,498 per second at 1-4 VMs where ES2 "
        "measured 23,000 falling to 13,000: the fall holds (io_exits_fall), the 1-VM row is 1.6x and "
        "bimodal — seed 1 runs at 1.70 Gbit/s with 7,842 kicks and 13,473 interrupts/s, seeds 2-4 at "
        "1.23-1.30 Gbit/s with 44-49 K kicks and ~2,800 interrupts/s — a regime switch not traced yet (the "
        "lock-step note below is the likely seat). The earlier note's 827 kicks/s and its TSO hypothesis "
        "predate the hosts-as-they-run rework.",
        "Predictions today: PI+H(P) +42.6 ±10.7 / +15.5 / +9.3 / +3.9 % (published 42 -> 25: the 1-VM end "
        "within the bar, the 4-VM one not: the gain falls too far); gain_decreases fails on a per-seed "
        "majority; PI+R +1.0 % at one VM (slight_gain fails: not above 0 in a majority of seeds); the full "
        "ES2 +42.8 % at one VM against published 47 (throughput_higher holds).",
    ],
    axis=_TESTED,
))


# --- Fig. 7b: netperf TCP receive, 512 B sent, 4 threads per tested VM, two I/O cores ---

#: netperf TCP_STREAM towards the guest. ES2's "512-byte TCP streams" is the sender's message size
#: (-m 512, on the client); the guest's receive size (-M) is unstated, and netserver then reads
#: the size of its socket's receive buffer (nettest_bsd.c: recv_size = lsr_size when none is
#: given), SO_RCVBUF at the socket's creation: tcp_rmem[1] = 87380 bytes on Linux 4.4.
_NETPERF_RX = {"kind": "tcp_receive", "message_bytes": 87380}

#: Fig. 7b's configurations (ES2 §6.3.1); the published gains are in published/es2-fig7b.toml.
#: "PI+H(P) cl2": H(P) with combining_level 2, two joint threads on the two I/O cores.
_FIG7B = ("PI", "PI+H(P)", "PI+R", "PI+H(P)+R", "PI+H(P) cl2")

#: "does not show obvious effect": a gain within 10 points either way at every count (ours).
_NO_EFFECT = 10.0


def _fig7b(duration, step, counts=(1, 2, 3, 4)):
    rows, g = _sweep(_FIG7B, _NETPERF_RX, "throughput", "Gbit/s", "gbps", duration or _NETPERF_RUN, step, counts,
                     io_cores=2, warmup=_NETPERF_WARMUP)
    hp = [g["PI+H(P)"][n] for n in counts]
    rows.append(Measured("PI+H(P) vs PI, 1 to 4 VMs", "no_obvious_effect", "holds",
                         _holds(_all(hp, lambda x: abs(x) < _NO_EFFECT))))
    return rows


register(Experiment(
    id="es2-fig7b",
    title="1-4 tested VMs (4 vCPUs) receiving 512-byte TCP on 4 time-shared cores, two I/O cores: PI, PI+H(P), PI+R, PI+H(P)+R",
    source="ES2 §6.3, §6.3.1, Fig. 7b (seed 000_8734db7c67a9fb1f.txt)",
    profile="es2",
    baselines=(r"PI \dVM",),
    rows=_fig7b,
    runs=20,
    seeds=4,
    notes=[
        "Layout: eventpath.reproduce.es2_multi.layout with io_cores = 2 (§6.3: 'two I/O cores were used' "
        "for TCP receiving 'to avoid the resource bottleneck'): stock vhost threads alternate between pCPUs 4 "
        "and 5. PI+H(P) (combining_level 4, §5.1's default) makes one joint thread of the four devices, on "
        "pCPU 4, and leaves pCPU 5 unused: §5.1's 'one CPU core is sufficient to run one joint thread' and "
        "§6.3's two cores cannot both bind unless ES2 set combining_level 2 for this figure (§5.1: a module "
        "parameter) or the bottleneck was PI's alone (audit es2 T2). 'PI+H(P) cl2' is that other reading: "
        "combining_level 2, two joint threads on pCPUs 4 and 5 (no published value).",
        "Set-up not reproduced (structural): ES2 ran 'four concurrent Netperf threads' per tested VM, one per "
        "vCPU (§6.3.1, 'send or receive'); the model's tcp_receive is one connection read by one receiver "
        "thread, on vCPU 0, and has no `streams` or `threads` key (eventpath keys). With one single-queue "
        "device NAPI runs where the interrupt lands (vCPU 0 under PI, any online vCPU under PI+R), but with one "
        "reader on vCPU 0 the throughput is vCPU 0's share of the cores whatever the router does. So the PI+R "
        "and PI+H(P)+R rows (published +63 / 'about 60' %) are set-up not reproduced, not prediction misses, "
        "until tcp_receive has several receivers; issue 48's lock-step gap (below) comes on top.",
        "The receive size (unstated): ES2's '512-byte TCP streams' is the sender's message size; netserver's "
        "receive size without -M is its socket's receive buffer (netperf nettest_bsd.c: recv_size = lsr_size), "
        "SO_RCVBUF at creation = tcp_rmem[1] = 87,380 B on Linux 4.4: message_bytes = 87380 (was 512, our "
        "choice then, which made the one receiver recv()-bound at ~190K reads/s).",
        "Roles (§6.1): PI's rows are baseline rows (no published value); every gain and direction involving "
        "H(P) or R is a prediction. no_obvious_effect: §6.3.1's 'the hybrid I/O handling scheme does not show "
        "obvious effect', read as |PI+H(P)'s gain| < 10 points at every count (our threshold).",
        "Unstated, chosen here: the client (one core per tested VM, netperf's 16 KB writes in TSO skbs of up to "
        "45 segments, issue 49 item 4; ES2 had one 8-core client); the guest's receive buffer autotuned as Linux 4.4 does it (from "
        "tcp_rmem[1] = 87,380 B up to tcp_rmem[2] = 6 MB, guest.tcp_rcvbuf_autotune = steps; a fixed 4 MiB until "
        "issue 49: PI 3.44 / 6.85 / 10.1 / 13.5 -> 3.26 / 6.49 / 9.66 / 12.8 Gbit/s, PI+R +7.3 / +7.0 / +5.6 / "
        "+5.1 -> +6.2 / +6.0 / +5.2 / +4.5 %, 4 seeds; with the client's congestion window, issue 49 item 2: PI "
        "3.22 / 6.40 / 9.54 / 12.7 Gbit/s, PI+R +2.7 / +1.7 / +1.8 / +1.8 %, spreads 0.7-1.7 points; why "
        "redirection lost its few points with it is not yet measured); run length 1 s after 0.2 s warm-up, 4 seeds (at 4 VMs two "
        "seeds differ by ~7 points in PI+R, measured). With the client's own CPU and TSO (issue 49 item 4; "
        "before it each MSS cost its core ~1 us, which bound every tested VM's stream): PI 3.22 / 6.40 / 9.54 / "
        "12.7 -> 4.50 / 8.93 / 13.3 / 17.8 Gbit/s, PI+R +2.7 / +1.7 / +1.8 / +1.8 -> +23.5 ±16.5 / +12.2 ±11.3 / "
        "+9.3 ±11.2 / +6.6 ±9.2 % (4 seeds, ± their sd), PI+H(P) +1.5 / +1.3 / +1.1 / +0.8 %: redirection's "
        "direction now shows, at 0.11-0.37 of the published gain, with the one-receiver set-up gap below.",
        "The rows at issue 47's audit, before issue 49's client (1 s, 4 seeds; the current ones are in the note "
        "above): PI 3.4 / 6.9 / 10.2 / 13.6 Gbit/s at 1-4 VMs (one receiver's "
        "share of vCPU 0 per VM); PI+H(P) -0.5 / -1.1 / +0.3 / 0.0 % (no_obvious_effect holds), and 'PI+H(P) "
        "cl2' the same within 0.5 point (the joint thread is not the bound here); PI+R +3.5 / +2.9 / -3.4 / "
        "-5.4 % against +63 / 'about 60' %, PI+H(P)+R +3.0 ... -10.2 %: set-up not reproduced (above), not "
        "prediction misses.",
        _LOCKSTEP,
    ],
    axis=_TESTED,
))


# --- Fig. 8a: memcached, memaslap 256 concurrent requests (16 threads), get/set 9:1 ---

_MEMCACHED = {"kind": "memcached", "concurrency": 256, "get_ratio": 0.9}

#: Fig. 8a's configurations (ES2 §6.3.2); the published gains are in published/es2-fig8a-h.toml.
_FIG8A = ("PI", "PI+H(P)", "PI+H(O)", "PI+R", "PI+H(O)+R")

#: Run length, warm-up (s) and seeds of the memcached experiment (measured, see its notes).
_MEMCACHED_RUN, _MEMCACHED_WARMUP = 4.0, 0.2

#: Declared thresholds (ours): "stable" gains span at most 10 points over the counts; "very
#: slight" is a gain between 0 and 5 points.
_STABLE, _VERY_SLIGHT = 10.0, 5.0


def _fig8a(duration, step, counts=(1, 2, 3, 4)):
    rows, g = _sweep(_FIG8A, _MEMCACHED, "ops_per_s", "ops/s", "ops_per_s", duration or _MEMCACHED_RUN, step,
                     counts, warmup=_MEMCACHED_WARMUP, backend_cpu=True)
    lo, hi = min(counts), max(counts)
    r = [g["PI+R"][n] for n in counts]
    # "a stable more than 1.4x ... when the number of tested VMs increases from one to four".
    rows.append(Measured("PI+R vs PI, 1 to 4 VMs", "stable", "holds",
                         _holds(None if None in r else max(r) - min(r) <= _STABLE)))
    # "the optimistic mode switch algorithm ... behaves obviously better than the perceptive".
    pairs = [(g["PI+H(O)"][n], g["PI+H(P)"][n]) for n in counts]
    rows.append(Measured("PI+H(O) vs PI+H(P), 1 to 4 VMs", "higher_at_every_count", "holds",
                         _holds(None if any(None in p for p in pairs) else all(o > q for o, q in pairs))))
    # "the increase in the number of tested VMs leads to a drop of the throughput improvement
    # brought by these two mode switch algorithms".
    ends = [(g[c][lo], g[c][hi]) for c in ("PI+H(P)", "PI+H(O)")]
    rows.append(Measured("PI+H(P) and PI+H(O) vs PI, 1 to 4 VMs", "gains_drop", "holds",
                         _holds(None if any(None in e for e in ends) else all(b < a for a, b in ends))))
    # "When the number of tested VMs becomes four, the PI+H(P) configuration only shows a very slight throughput increase".
    h4 = g["PI+H(P)"][hi]
    rows.append(Measured(f"PI+H(P) vs PI {hi}VM", "very_slight_gain", "holds",
                         _holds(None if h4 is None else 0 < h4 < _VERY_SLIGHT)))
    return rows


register(Experiment(
    id="es2-fig8a-h",
    title="1-4 tested memcached VMs (memaslap 256 concurrent, get/set 9:1) on 4 time-shared cores: PI, PI+H(P), PI+H(O), +R",
    source="ES2 §6.3, §6.3.2, Fig. 8a; §7 (seed 000_8734db7c67a9fb1f.txt)",
    profile="es2",
    baselines=(r"PI \dVM",),
    rows=_fig8a,
    runs=20,
    seeds=8,
    notes=[
        "Layout: eventpath.reproduce.es2_multi.layout (§6.3, as es2-fig7a); memcached with its default four "
        "worker threads, starting one on each vCPU and placed by the guest's CFS, connection c served by thread c % 4 (unstated; memcached's "
        "-t default); memaslap's '256 concurrent requests from 16 threads with a get/set ratio of 9:1', 'one "
        "Memaslap process' per tested VM, is one closed-loop client of 256 connections per tested VM on one "
        "client core (ES2: one 8-core client).",
        "Unstated, chosen here: key and value sizes 64 / 1024 B (memaslap's defaults, the model's); H(P)'s "
        "quota 4 (the TCP value of §5.2; ES2 gives none for memcached); H(O)'s poll_count 1000 and the 10 us "
        "sleep (§5.3).",
        "Run length and seeds (measured, issue 47's convergence item): at 1 VM the gains still drift with the "
        "run (PI+H(O)+R +5.5 / +8.8 / +7.8 / +11.7 / +12.6 % at 0.3 / 1 / 2 / 4 / 8 s, warm-up 0.05-0.5 s no "
        "help) and two seeds differ by ~1-2 points; at 2-4 VMs the seeds fall into different regimes (at 4 s, "
        "seeds 1-8, 2 VMs: PI+H(O)+R from +12 to +64 %; 4 VMs: PI+H(P) from -9 to +17 %), an sd of 8-20 "
        "points that no length removes. So: 4 s after 0.2 s warm-up and 8 seeds (~20 s of wall time a seed on "
        "this machine); the 2-4 VM rows are an 8-seed mean with their spread and stay unconverged (their "
        "standard error is 3-7 points, the bar's tenth is 1).",
        "Roles (§6.1): PI's rows are baseline rows — §7's back-end thread CPU of PI at one VM (13.58 %) is a "
        "calibration row; every gain, direction and PI+H(O)'s 18.6 % are predictions. backend_cpu: the "
        "back-end threads' CPU, % of one core, summed over them (PI: the VMs' vhost threads; H(P)/H(O): the "
        "joint thread); with one tested VM only its threads work.",
        "Encodings: PI+R's 'a stable more than 1.4x' is a bound (at_least +40 %) at every count plus a "
        "direction ('stable': the four gains within 10 points, ours); PI+H(O)+R's 'finally improves the "
        "throughput by 75%-90%' is a range at every count (that 90 is 1 VM and 75 is 4 VMs is an inference "
        "from the abstract's 1.9x, not encoded); higher_at_every_count: H(O) 'behaves obviously better than' "
        "H(P); gains_drop: both switches' gains lower at 4 VMs than at 1; very_slight_gain: H(P) at 4 VMs "
        "between 0 and 5 points (ours).",
        "Today's rows (issue 48 item 3, 4 s, 8 seeds, the guest's CFS; docs/reproductions-issue48.md has them "
        "with their spread beside the rows before it): calibration — PI's back-end CPU at one VM 11.2 % against "
        "§7's 13.58 % (within). Predictions — PI+H(P) -10.4 / -9.0 / -6.6 / -2.1 % (12 % at 1 VM: misses); "
        "PI+H(O) +33.8 / +37.8 / +36.8 / +47.1 % (35 % at 1 VM within, 25 % at 4 VMs misses); PI+R +23.8 / "
        "+24.4 / +17.7 / +26.7 % (>= 40 %: misses, sd 10-22 points); PI+H(O)+R +79.5 / +86.4 / +72.8 / +81.4 % "
        "(75-90 %: within at every count). Before item 3 (issue 48 items 1-2): PI+R +30.0 / +22.6 / +23.3 / "
        "+31.1 %, PI+H(O)+R +61.4 / +67.2 / +64.0 / +61.1 %. A direction is judged per seed and the ensemble "
        "keeps the majority: higher_at_every_count holds; gains_drop fails on H(O) (its gain grows with the "
        "VMs); very_slight_gain fails (H(P) below 0 at 4 VMs); stable fails on PI+R.",
        _LOCKSTEP,
        "PI+R with the guest's CFS (issue 48 item 3): memcached's four workers are always runnable under 256 "
        "connections, so they are rarely woken and rarely move (wake-up and periodic migrations a few per "
        "second); each serves beside its vCPU's nice-19 burner, and a request waits for its worker's vCPU "
        "whatever vCPU took the interrupt. The redirection's gain is what a running sibling's softirq saves."
    ],
    axis=_TESTED,
))
