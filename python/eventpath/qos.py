"""QoS search: the peak offered request rate a VM sustains with its tail latency within a bound.

DID §5.7 reports memcached throughput as "the peak request rate that allows the server to
complete 95% of all requests within 10 msec". :func:`search` finds that rate in the simulator:
it sets the VM's memcached workload's ``rate_rps`` (a rate-paced client, latency counted from
when each request was due), runs the scenario, and bisects (in log space) between ``lo`` and
``hi``. A rate meets the bound when the run's 95th-percentile latency is within it *and* the
server completed at least 90 % of the offered rate — past saturation, requests still queued at
the window's end never reach the latency histogram, so the percentile alone would flatter an
overloaded server. A run with a stalled flow (a model bug) or no watchdog verdict never meets
it: its point is marked (``liveness``), and ``eventpath qos`` warns.
"""

from __future__ import annotations

import copy
import math
import os
from dataclasses import dataclass, field
from typing import Any, Callable

from eventpath import _eventpath, api, args, liveness, summary
from eventpath._eventpath import InputError

#: Fraction of the offered rate a run must complete to count as sustaining it.
MIN_COMPLETED = 0.9


@dataclass
class Point:
    """One run of the search. ``liveness`` is "ok", or "stalled" (a flow stalled: a model bug)
    or "unjudged" (no watchdog verdict) with ``liveness_reason`` (:mod:`eventpath.liveness`):
    such a run is no result, so it never meets the bound (the search goes on below it)."""

    offered_rps: float
    completed_rps: float | None
    p95_us: float | None
    meets: bool
    liveness: str = "ok"
    liveness_reason: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"offered_rps": self.offered_rps, "completed_rps": self.completed_rps, "p95_us": self.p95_us,
                "meets": self.meets, "liveness": self.liveness, "liveness_reason": self.liveness_reason}


@dataclass
class Search:
    """The outcome: ``peak_rps`` is None when even ``lo`` misses the bound; ``capped`` says that
    ``hi`` met it (the peak is at least ``hi``)."""

    bound_ms: float
    peak_rps: float | None
    capped: bool
    points: list[Point] = field(default_factory=list)
    #: The run at the peak (None without one).
    at_peak: api.Result | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"bound_ms": self.bound_ms, "percentile": 95, "peak_rps": self.peak_rps, "capped": self.capped,
                "points": [p.as_dict() for p in self.points]}


def _positive(v: Any, name: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
        raise InputError(f"{name}: {v!r} is not allowed; expected a positive number")
    return float(v)


def search(scenario: str | os.PathLike | dict, *, bound_ms: float = 10.0, vm: int = 0, lo: float = 1_000.0,
           hi: float = 1_000_000.0, steps: int = 8, duration: float | None = None, seed: int | None = None,
           step: Callable[[str], Any] | None = None,
           run: Callable[..., api.Result] | None = None) -> Search:
    """Find the peak ``rate_rps`` of VM ``vm``'s memcached workload whose 95th-percentile
    latency stays within ``bound_ms``: one run at ``lo``, one at ``hi``, then ``steps``
    bisections. ``step(label)`` is called after each run (progress). ``run(scenario,
    duration=, seed=)`` runs each point (default :func:`eventpath.api.run`; the reproductions
    pass one that fails on a stalled flow: ``eventpath.reproduce.simulate.runner``). Raises
    :class:`InputError` on a bound or range that is not positive, or a VM without memcached."""
    bound_ms = _positive(bound_ms, "QoS bound (ms)")
    lo, hi = _positive(lo, "lowest rate"), _positive(hi, "highest rate")
    if lo >= hi:
        raise InputError(f"rates: lowest {lo:g} must be below highest {hi:g}")
    if isinstance(steps, bool) or not isinstance(steps, int) or not 0 <= steps <= 30:
        raise InputError(f"steps: {steps!r} is not allowed; expected an integer in 0..=30")
    sc = copy.deepcopy(api.scenario_dict(scenario))
    seed, duration = api.check_seed(seed), api.check_duration(duration)
    # The simulator's check first: a malformed scenario gets its one line, not a KeyError below.
    origin = "<dict>" if isinstance(scenario, dict) else api._scenario_path(scenario)
    _eventpath.check_json(api._dict_text(sc), origin, seed, duration)
    vms = sc["vm"]
    vm = args.integer(vm, "qos.search", "vm", 0, len(vms) - 1, f"(the scenario's {len(vms)} VM(s))")
    if (vms[vm].get("workload") or {}).get("kind") != "memcached":
        raise InputError(f"vm[{vm}].workload: a QoS search needs kind = \"memcached\" (its rate_rps is what is searched)")
    out = Search(bound_ms=bound_ms, peak_rps=None, capped=False)

    def probe(rate: float) -> Point:
        vms[vm]["workload"]["rate_rps"] = rate
        r = (run or api.run)(sc, duration=duration, seed=seed)
        v = summary.vm(r.summary, vm)
        done, p95 = summary.ops_per_s(v), summary.latency_us(v, "p95")
        status, why = liveness.verdict(r.summary)
        meets = (status == liveness.OK and p95 is not None and p95 <= bound_ms * 1e3 and done is not None
                 and done >= MIN_COMPLETED * rate)
        p = Point(rate, done, p95, meets, status, why)
        out.points.append(p)
        if meets and (out.peak_rps is None or rate > out.peak_rps):
            out.peak_rps, out.at_peak = rate, r
        if step:
            verdict = "meets" if meets else "misses" if status == liveness.OK else f"{status.upper()}: {why}"
            step(f"{rate:,.0f} req/s: p95 {p95 if p95 is None else round(p95)} us, {verdict}")
        return p

    if not probe(lo).meets:
        return out
    if probe(hi).meets:
        out.capped = True
        return out
    good, bad = lo, hi
    for _ in range(steps):
        mid = math.sqrt(good * bad)
        if probe(mid).meets:
            good = mid
        else:
            bad = mid
    return out
