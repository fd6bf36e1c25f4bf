"""The benchmarks, measured in one run: our Rust engine vs a SimPy model of the same event path
(the model, crates/sim/src/bench.rs, loops many VMs through guest work → kick exit → vhost
service → interrupt + EOI, with exponential service times), and the full model on a busy host
(14 VMs streaming TCP with 1448-byte writes on elvis's 16 pCPUs) beside the engine's rate."""

from __future__ import annotations

import random
import time

from eventpath import _eventpath


def _simpy_events_per_s(sim_seconds: float, vms: int = 64, seed: int = 1) -> tuple[int, float]:
    from eventpath.extras import need

    simpy = need("simpy", "bench", "eventpath bench's SimPy model")

    guest_ns, kick_ns, vhost_ns, irq_ns = _eventpath.bench_params()
    rng = random.Random(seed)
    env = simpy.Environment()
    count = [0]

    def vm_loop():
        # One timeout per step, as the Rust model schedules one event per step.
        yield env.timeout(round(rng.expovariate(1 / guest_ns)))
        count[0] += 1
        while True:
            yield env.timeout(int(kick_ns))
            count[0] += 1
            yield env.timeout(round(rng.expovariate(1 / vhost_ns)))
            count[0] += 1
            yield env.timeout(int(irq_ns))
            count[0] += 1
            yield env.timeout(round(rng.expovariate(1 / guest_ns)))
            count[0] += 1

    for _ in range(vms):
        env.process(vm_loop())
    t0 = time.perf_counter()
    env.run(until=int(sim_seconds * 1e9))
    return count[0], time.perf_counter() - t0


def run(sim_seconds: float = 1.0, simpy_seconds: float = 0.01, model_seconds: float = 0.2,
        by_kind: bool = False) -> dict:
    """Measure both engines and (unless ``model_seconds`` is 0) the full model; returns the
    ``--json`` object. ``by_kind`` runs the full model once more, counting its events by kind,
    and adds ``model_events_per_packet`` (kind -> events per delivered packet)."""
    events, wall = _eventpath.bench_engine(sim_seconds)
    s_events, s_wall = _simpy_events_per_s(simpy_seconds)
    ours = events / wall
    theirs = s_events / s_wall
    r = {
        "build": _eventpath.build_kind(),
        "engine_events_per_s": ours,
        "simpy_events_per_s": theirs,
        "ratio": ours / theirs,
        "engine_events": events,
        "engine_wall_s": wall,
        "simpy_events": s_events,
        "simpy_wall_s": s_wall,
    }
    if model_seconds > 0:
        m_events, m_wall = _eventpath.bench_model(model_seconds)
        r.update({
            "model_events_per_s": m_events / m_wall,
            "model_to_engine": m_events / m_wall / ours,
            "model_wall_s_per_sim_s": m_wall / model_seconds,
            "model_events": m_events,
            "model_wall_s": m_wall,
        })
        if by_kind:
            kinds, packets = _eventpath.bench_model_census(model_seconds)
            r["model_packets"] = packets
            r["model_events_per_packet"] = {k: n / packets if packets else None for k, n in kinds if n}
    return r


#: The README's four-workload comparison (`eventpath compare --profile es2 --workloads
#: tcp_stream,tcp_receive,memcached,tcp_rr`): what a user waits for (issue 52 item 4).
MATRIX_PROFILE = "es2"
MATRIX_WORKLOADS = ("tcp_stream", "tcp_receive", "memcached", "tcp_rr")


def matrix(workloads: tuple[str, ...] = MATRIX_WORKLOADS, seeds: list[int] | None = None,
           vary: dict | None = None, workers: int | None = None) -> dict:
    """Time the README's comparison (every family, its default seeds and run length, no
    figure) on this machine: ``matrix_wall_s``, ``matrix_cells``, ``matrix_runs`` (runs made:
    cells proven identical to another are not rerun). ``workloads``, ``seeds`` and ``vary``
    shrink it (tests)."""
    import tempfile
    from pathlib import Path

    from eventpath import compare
    from eventpath.compare import workloads as named

    inputs = named.named(MATRIX_PROFILE, list(workloads), compare.DURATION_S, compare.WARMUP_S)
    with tempfile.TemporaryDirectory(prefix="eventpath-bench-") as d:
        out = compare.OUT.check(str(Path(d) / "cmp"))
        t0 = time.perf_counter()
        m = compare.compare(inputs, out, seeds=list(seeds or compare.SEEDS), vary=vary, plots=False,
                            workers=workers, say=lambda _s: None)
        wall = time.perf_counter() - t0
    return {"matrix_wall_s": wall, "matrix_cells": m["cells"], "matrix_runs": m["runs"],
            "matrix_workloads": list(workloads)}


def print_result(r: dict) -> None:
    print(f"build           : release, {r['build']}" + ("" if r["build"] == "profile-guided" else
          " (make install builds profile-guided where this rustc reads pgo/eventpath.profdata.gz)"))
    print(f"eventpath engine: {r['engine_events_per_s'] / 1e6:8.2f} M events/s "
          f"({r['engine_events']:,} events in {r['engine_wall_s']:.2f} s)")
    print(f"SimPy           : {r['simpy_events_per_s'] / 1e6:8.2f} M events/s "
          f"({r['simpy_events']:,} events in {r['simpy_wall_s']:.2f} s)")
    print(f"ratio           : {r['ratio']:8.1f} x")
    if "model_events_per_s" in r:
        print(f"full model      : {r['model_events_per_s'] / 1e6:8.2f} M events/s = {r['model_to_engine']:.2f} x the engine, "
              f"{r['model_wall_s_per_sim_s']:.2f} s wall per simulated s "
              f"(14 VMs x TCP 1448 B on elvis, 16 pCPUs; {r['model_events']:,} events in {r['model_wall_s']:.2f} s)")
    if "matrix_wall_s" in r:
        print(f"matrix          : {r['matrix_wall_s']:8.1f} s wall for the README's comparison "
              f"(compare --profile {MATRIX_PROFILE} --workloads {','.join(r['matrix_workloads'])}: "
              f"{r['matrix_cells']:,} cells, {r['matrix_runs']:,} runs)")
    per = r.get("model_events_per_packet")
    if per:
        total = sum(v for v in per.values() if v)
        print(f"full model events per delivered packet ({r['model_packets']:,.0f} packets): {total:.2f}")
        for k, v in sorted(per.items(), key=lambda kv: -(kv[1] or 0)):
            print(f"  {k:12s} {v:6.2f}  {100 * v / total:5.1f} %")
