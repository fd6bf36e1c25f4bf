"""The engine benchmark: our Rust engine vs a SimPy model of the same event path, measured in
the same run. The model (see crates/sim/src/bench.rs) loops many VMs through guest work →
kick exit → vhost service → interrupt + EOI, with exponential service times."""

from __future__ import annotations

import random
import time

from eventpath import _eventpath


def _simpy_events_per_s(sim_seconds: float, vms: int = 64, seed: int = 1) -> tuple[int, float]:
    import simpy

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


def run(sim_seconds: float = 1.0, simpy_seconds: float = 0.01) -> dict:
    """Measure both engines; returns the ``--json`` object."""
    events, wall = _eventpath.bench_engine(sim_seconds)
    s_events, s_wall = _simpy_events_per_s(simpy_seconds)
    ours = events / wall
    theirs = s_events / s_wall
    return {
        "engine_events_per_s": ours,
        "simpy_events_per_s": theirs,
        "ratio": ours / theirs,
        "engine_events": events,
        "engine_wall_s": wall,
        "simpy_events": s_events,
        "simpy_wall_s": s_wall,
    }


def print_result(r: dict) -> None:
    print(f"eventpath engine: {r['engine_events_per_s'] / 1e6:8.2f} M events/s "
          f"({r['engine_events']:,} events in {r['engine_wall_s']:.2f} s)")
    print(f"SimPy           : {r['simpy_events_per_s'] / 1e6:8.2f} M events/s "
          f"({r['simpy_events']:,} events in {r['simpy_wall_s']:.2f} s)")
    print(f"ratio           : {r['ratio']:8.1f} x")
