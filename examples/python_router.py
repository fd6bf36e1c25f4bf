"""An interrupt router written in Python, plugged into a run (docs/python-policy.md).

Two routers: ``RunningFirst``, a line-for-line copy of the built-in ``running_first``
(crates/policy/src/routing/mod.rs), which must give the identical summary; and ``Sticky``, a
new idea tried before it is written in Rust: keep a queue's interrupts on the vCPU that took
its last one while that vCPU runs (its cache is warm), else behave as ``running_first``.

    PYTHONPATH=python python examples/python_router.py [duration_s]

asserts the copy's summary equals the built-in one and prints the three runs side by side;
``--slowdown`` measures what the Python router costs (docs/python-policy.md).
"""

from __future__ import annotations

import sys
import time

import eventpath
from eventpath import summary


class RunningFirst:
    """The built-in ``running_first`` in Python: the programmed vCPU if it runs, else the first
    running vCPU after it (circularly), else the programmed one."""

    def __init__(self, n_vcpus: int):
        self.states = ["blocked"] * n_vcpus  # as VcpuStates::new

    def n_vcpus(self) -> int:
        return len(self.states)

    def on_run_state(self, vcpu: int, state: str) -> None:
        # state: "running" (in guest mode), "runnable" (preempted) or "blocked" (halted)
        if 0 <= vcpu < len(self.states):
            self.states[vcpu] = state

    def route(self, req) -> int:
        # req.irq: the source (a device queue); req.dest: the vCPU the guest programmed;
        # req.kind: "device" (the only kind the simulator routes), "timer" or "ipi"
        n = len(self.states)
        dest = req.dest % n
        if req.kind != "device":
            return dest
        for i in range(n):
            v = (dest + i) % n
            if self.states[v] == "running":
                return v
        return dest


class Sticky(RunningFirst):
    """A new idea: a source's interrupts stay on the vCPU that took its last one while that
    vCPU runs."""

    def __init__(self, n_vcpus: int):
        super().__init__(n_vcpus)
        self.last: dict[int, int] = {}

    def route(self, req) -> int:
        prev = self.last.get(req.irq)
        if req.kind == "device" and prev is not None and self.states[prev] == "running":
            return prev
        v = super().route(req)
        self.last[req.irq] = v
        return v


def scenario(routing: str | None = None) -> dict:
    """Two vCPUs time-sharing one pCPU receive 512-byte UDP datagrams; a third pCPU runs vhost."""
    vm = {
        "name": "vm0", "vcpus": 2, "vcpu_pins": [0, 0],
        "net": {"vhost_pin": 1},
        "workload": {"kind": "udp_receive", "message_bytes": 512, "rate_pps": 50000},
    }
    if routing:
        vm["interrupt_routing"] = routing
    return {"name": "python-router", "profile": "es2", "seed": 1, "duration_s": 0.2, "warmup_s": 0.02,
            "host": {"pcpus": 2}, "vm": [vm]}


def timed(sc: dict, duration: float, **kw) -> tuple[eventpath.Result, float]:
    t0 = time.perf_counter()
    res = eventpath.run(sc, duration=duration, **kw)
    return res, time.perf_counter() - t0


def main(duration: float = 0.2) -> dict[str, eventpath.Result]:
    builtin, t_builtin = timed(scenario("running_first"), duration)
    copy, t_copy = timed(scenario(), duration, routing={"vm0": RunningFirst})
    sticky, t_sticky = timed(scenario(), duration, routing={"vm0": Sticky})

    def same(r: eventpath.Result) -> dict:
        # (The summary names the policy: `external` for the Python copy, its own name for the
        # built-in one; everything else must match.)
        s = {k: v for k, v in r.summary.items() if k != "wall_seconds"}
        s["vms"] = [{k: v for k, v in vm.items() if k != "interrupt_routing"} for vm in summary.vms(s)]
        return s

    assert same(copy) == same(builtin), "the Python copy of running_first must give the built-in's summary"
    for name, r, wall in [("running_first (Rust)", builtin, t_builtin), ("RunningFirst (Python)", copy, t_copy),
                          ("Sticky (Python)", sticky, t_sticky)]:
        vm = summary.vm(r.summary)
        print(f"{name:22} {summary.pps(vm):>9.0f} pps  latency p99 {summary.latency_us(vm, 'p99'):>7.1f} µs"
              f"  wall {wall:.3f} s")
    return {"builtin": builtin, "copy": copy, "sticky": sticky}


def slowdown(duration: float = 0.5, repeat: int = 5) -> None:
    """Wall time of the built-in ``running_first`` and of its Python copy on the same runs
    (best of ``repeat``, alternated), and the Python calls the copy answers (counted in one
    more run): the cost per call is the difference over the calls. Two loads: the example's
    UDP receive, and memcached with 16 connections on 4 vCPUs (many halts and wake-ups)."""
    calls = [0]

    class Counted(RunningFirst):
        def on_run_state(self, vcpu, state):
            calls[0] += 1
            super().on_run_state(vcpu, state)

        def route(self, req):
            calls[0] += 1
            return super().route(req)

    memcached = scenario()
    memcached["host"]["pcpus"] = 5
    memcached["vm"][0].update(vcpus=4, vcpu_pins=[0, 1, 2, 3], net={"vhost_pin": 4},
                              workload={"kind": "memcached", "concurrency": 16})
    print(f"{'load':26} {'Rust s':>7} {'Python s':>9} {'slowdown':>9} {'calls/sim s':>12} {'µs/call':>8}")
    for name, base in [("udp_receive 50 kpps, 2 vCPU", scenario()), ("memcached 16 conns, 4 vCPU", memcached)]:
        builtin = dict(base, vm=[dict(base["vm"][0], interrupt_routing="running_first")])
        rust, py = [], []
        for _ in range(repeat):
            rust.append(timed(builtin, duration)[1])
            py.append(timed(base, duration, routing={"vm0": RunningFirst})[1])
        calls[0] = 0
        timed(base, duration, routing={"vm0": Counted})
        r, p = min(rust), min(py)
        per_sim_s = calls[0] / (duration + base["warmup_s"])
        print(f"{name:26} {r:7.3f} {p:9.3f} {p / r:8.2f}x {per_sim_s:12,.0f} {(p - r) / calls[0] * 1e6:8.2f}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--slowdown"]:
        slowdown(*(float(a) for a in sys.argv[2:3]))
    else:
        main(float(sys.argv[1]) if len(sys.argv) > 1 else 0.2)
