"""The machine's own noise while the testbed runs (issue 45): how much CPU *other* processes
took, the hypervisor's steal, the load average — read from ``/proc`` around each testbed run.

A user's host is rarely idle. ``kvm compare`` held its testbed, run beside whatever else ran,
against twins of an idle host (on one machine: 103 of 121 rows idle, 65 beside one ``yes``).
Now the testbed and the probe run *shielded* — their threads at nice -20 (:func:`shielded`), so
an ordinary competitor takes about 1 % of a CPU it shares with them instead of half, and both
measure KVM's costs rather than CFS's sharing with strangers — and each point first reads the
competitors' own demand while nothing of ours runs (:func:`quiet_load`). Where the shield is
not permitted (no CAP_SYS_NICE), the twin gets that demand as always-running nice-0 host
threads (``[[host.cpu_hog]]``, unpinned, placed by the twin's CFS as Linux places them). The
noise is reported beside the scorecard.

Units: ``/proc/stat`` counts USER_HZ ticks (100 a second on Linux, ``os.sysconf("SC_CLK_TCK")``);
a process's own CPU time (every thread, guest mode included: KVM charges a vCPU thread's guest
time to its user time) is ``os.times()``'s user + system.
"""

from __future__ import annotations

import contextlib
import os
import statistics
import time
from dataclasses import dataclass

_HZ = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Sample:
    """One reading of the machine."""

    wall: float  # monotonic seconds
    busy: int  # ticks every CPU spent in user, nice, system, irq, softirq (guest time is in user)
    steal: int  # ticks the hypervisor below took from every CPU
    total: int  # all ticks of every CPU
    own: float  # this process's CPU seconds, every thread
    loadavg_1m: float


def sample() -> Sample:
    """Read ``/proc/stat``'s ``cpu`` line, ``/proc/loadavg`` and this process's CPU time."""
    busy = steal = total = 0
    try:
        with open("/proc/stat") as f:
            for line in f:
                if line.startswith("cpu "):
                    v = [int(x) for x in line.split()[1:]]
                    v += [0] * (8 - len(v))
                    # user nice system idle iowait irq softirq steal [guest guest_nice]: guest time
                    # is already counted in user, so the first eight are the whole.
                    busy, steal, total = v[0] + v[1] + v[2] + v[5] + v[6], v[7], sum(v[:8])
                    break
        with open("/proc/loadavg") as f:
            load = float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        load = float("nan")
    t = os.times()
    return Sample(time.monotonic(), busy, steal, total, t.user + t.system, load)


def between(a: Sample, b: Sample) -> dict:
    """What the machine did between two samples: ``other_cpus`` (CPUs kept busy by other
    processes, on average), ``steal_pct`` (of all CPU time) and the load average at the end."""
    wall = b.wall - a.wall
    if wall <= 0 or b.total <= a.total:
        return {"other_cpus": None, "steal_pct": None, "loadavg_1m": b.loadavg_1m}
    busy_s = (b.busy - a.busy) / _HZ
    other = max(0.0, (busy_s - (b.own - a.own)) / wall)
    return {"other_cpus": round(other, 3), "steal_pct": round(100.0 * (b.steal - a.steal) / (b.total - a.total), 2),
            "loadavg_1m": b.loadavg_1m}


def competing_threads(other_cpus: float | None, cpus: int) -> int:
    """Always-running threads that keep ``other_cpus`` CPUs busy, rounded, at most ``cpus``: the
    twin's stand-in for the competitors (a fraction below one half is left out, and said so in
    the row's noise)."""
    if other_cpus is None:
        return 0
    return max(0, min(cpus, int(other_cpus + 0.5)))


#: The nice value the testbed's threads run at beside other processes: CFS's heaviest weight
#: (88,761 against a nice-0 process's 1,024, ``sched_prio_to_weight``), so an ordinary
#: competitor takes about 1 % of a CPU it shares with a testbed thread instead of half.
SHIELD_NICE = -20


@contextlib.contextmanager
def shielded(nice: int = SHIELD_NICE):
    """Run the body with the calling thread at ``nice`` (Linux's nice is per thread, and the
    testbed's vCPU and back-end threads, created from this one, inherit it); restored after.
    Without the privilege (CAP_SYS_NICE) the body runs at the thread's own nice."""
    tid = 0  # PRIO_PROCESS with who = 0: the calling thread on Linux
    old = os.getpriority(os.PRIO_PROCESS, tid)
    try:
        os.setpriority(os.PRIO_PROCESS, tid, nice)
    except OSError:
        yield False
        return
    try:
        yield True
    finally:
        os.setpriority(os.PRIO_PROCESS, tid, old)


def can_shield() -> bool:
    """Whether this process may run threads at :data:`SHIELD_NICE`."""
    with shielded() as ok:
        return ok


def quiet_load(seconds: float = 0.2) -> dict:
    """Other processes' demand while nothing of ours runs: :func:`between` over ``seconds`` of
    sleep (a competitor that never sleeps shows as a whole CPU here, where beside the testbed
    it shows only the share CFS left it)."""
    a = sample()
    time.sleep(seconds)
    return between(a, sample())


def of_point(per_run: list[dict], quiet: dict) -> dict:
    """A point's noise: other processes' demand just before it (``quiet_cpus``, CPUs), what
    they took beside its repeats (median and largest), the median steal, the load average."""
    other = [n["other_cpus"] for n in per_run if n["other_cpus"] is not None]
    steal = [n["steal_pct"] for n in per_run if n["steal_pct"] is not None]
    return {"quiet_cpus": quiet["other_cpus"],
            "other_cpus": statistics.median(other) if other else None,
            "other_cpus_max": max(other) if other else None,
            "steal_pct": statistics.median(steal) if steal else None,
            "loadavg_1m": per_run[-1]["loadavg_1m"] if per_run else quiet["loadavg_1m"]}


def of_experiment(rows: list[dict]) -> dict:
    """An experiment's noise from its rows (each carrying its point's :func:`of_point` as
    ``noise``): the largest competing load of its points, the median steal, and the median
    relative spread of the testbed's repeats ((max - min) / median)."""
    pts = {id(r["noise"]): r["noise"] for r in rows}.values()
    quiet = [n["quiet_cpus"] for n in pts if n["quiet_cpus"] is not None]
    other = [n["other_cpus_max"] for n in pts if n["other_cpus_max"] is not None]
    steal = [n["steal_pct"] for n in pts if n["steal_pct"] is not None]
    spread = [(r["testbed_max"] - r["testbed_min"]) / r["testbed"] for r in rows
              if r["testbed"] and r["testbed_min"] is not None]
    return {"quiet_cpus_median": statistics.median(quiet) if quiet else None,
            "other_cpus_max": max(other) if other else None,
            "steal_pct": statistics.median(steal) if steal else None,
            "spread_median": round(statistics.median(spread), 3) if spread else None,
            "twins_with_competitors": sum(n["twin_competitors"] > 0 for n in pts),
            "unjudged": sum("unjudged" in r for r in rows)}
