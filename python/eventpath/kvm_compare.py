"""The simulator held against this machine (issue 15): each KVM testbed experiment
(``examples/kvm/exp*.toml``) beside its simulator twin, on the profile ``eventpath kvm probe``
measured here.

A *point* is one configuration of an experiment: the testbed scenario (the example with a few
keys substituted) and its twin, a simulator scenario of the same layout built from the
testbed's guest (``request_stream``: requests straight into the virtqueue; ``irq_source``: the
interrupt generator), back end (the testbed's ``[host.io]`` table copied: it is the simulator's
own type), routing and halt polling. Each testbed point runs ``repeats`` times (the machines are
shared: the spread is reported, never one lucky run); the twin runs once (it is deterministic).

``compare.json`` rows: ``{config, metric, unit, testbed, testbed_min, testbed_max, simulated,
ratio, verdict}`` — ``testbed`` is the median of the repeats, ``ratio`` simulated / testbed, the
verdict "ok" within ±25 % for rates and CPU, a factor 2 for latency medians (values both below
a floor — no kicks, an idle CPU — agree), else "miss"; null where either side has no value.
Rows, verdicts, the scorecard and the figure are ``eventpath.comparison``'s, shared with
``eventpath reproduce``; the twins run through ``eventpath.reproduce.simulate`` (a stalled flow
fails the comparison).
"""

from __future__ import annotations

import copy
import functools
import json
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from eventpath import comparison, kvm_noise, summary
from eventpath.comparison import FLOORS, TestbedRow  # noqa: F401  (FLOORS: the units' floors)
from eventpath.kvm_scenario import sub as _sub, with_backend as _with_backend

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "kvm"


@dataclass
class Metric:
    name: str
    unit: str
    #: "rate" (±25 %), "cpu" (±25 %), "latency" (factor 2).
    kind: str
    testbed: Callable[[dict], float | None]
    simulated: Callable[[dict], float | None]


@dataclass
class Point:
    config: str
    testbed: str
    twin: dict
    metrics: list[Metric]


def _twin(name: str, vms: list[dict], io: dict | None = None, pcpus: int = 2) -> dict:
    sc = {"name": name, "seed": 1, "duration_s": 0.5, "warmup_s": 0.1, "host": {"pcpus": pcpus}, "vm": vms}
    if io:
        sc["host"]["io"] = io
    return sc


# --- what each world reports (both summaries read through eventpath.summary) -----------------

def _tb_ops(d):
    return sum(summary.ops_per_s(v) or 0.0 for v in summary.vms(d))


def _tb_kpr(d):
    return max(summary.guest(v)["kicks_per_request"] or 0.0 for v in summary.vms(d))


def _p50(d):
    return summary.worst(summary.latency_us(v, "p50") for v in summary.vms(d))


def _migrations(d):
    """Thread moves to another CPU per second, all vCPU and back-end threads: the testbed's from
    the kernel's ``se.nr_migrations`` (``crates/kvm/src/measure/migrations.rs``), the twin's from
    its host scheduler (wake-up placements and balancing)."""
    return summary.migrations_per_s(d)


def _sim_kpr(d):
    return max((summary.kicks_per_s(v) or 0.0) / summary.ops_per_s(v) for v in summary.vms(d) if summary.ops_per_s(v))


def _sim_backend(d):
    if summary.io_threads(d):
        return summary.io_thread_util_pct(d)
    return summary.thread_pcpu_pct(d, "vhost-")


def _sim_vcpu_cpu(d):
    return summary.thread_pcpu_pct(d, "vcpu:")


def _interrupts(d):
    return summary.interrupts_per_s(summary.vm(d))


def _vcpu_cpu(d):
    return summary.cpu_util_pct(summary.vm(d))


def _stream_metrics():
    return [
        Metric("done_per_s", "requests/s", "rate", _tb_ops, _tb_ops),
        Metric("kicks_per_request", "kicks/req", "rate", _tb_kpr, _sim_kpr),
        Metric("backend_cpu", "%", "cpu", summary.io_thread_util_pct, _sim_backend),
        Metric("latency_p50", "us", "latency", _p50, _p50),
        Metric("migrations_per_s", "migrations/s", "rate", _migrations, _migrations),
    ]


# --- the experiments --------------------------------------------------------------------------

#: The experiments' back ends: testbed ``[host.io]`` tables, in the simulator's own keys (one
#: type in both worlds, issue 27). Threads on CPU 1: a vhost thread pinned with ``backend.pin``,
#: the others on ``host.io.cores``.
BACKENDS: dict[str, dict] = {
    "vhost": {"handling": "vhost"},
    "pmd busy": {"handling": "pmd", "idle": "busy", "cores": [1]},
    "es2 perceptive": {"handling": "es2", "switch": "perceptive", "cores": [1]},
    "es2 optimistic": {"handling": "es2", "switch": "optimistic", "cores": [1]},
    "elvis": {"handling": "elvis", "cores": [1]},
}


@functools.cache
def _simulator_builds_pmd() -> bool:
    """Does this build's simulator take ``handling = "pmd"``? It refuses it with one line until
    its back end lands (issue 27); any other refusal is a bug here and is raised."""
    from eventpath import _eventpath

    vm = {"name": "vm0", "vcpus": 1, "vcpu_pins": [0], "workload": {"kind": "request_stream", "rate": 1000}}
    sc = dict(_twin("pmd-check", [vm], BACKENDS["pmd busy"]), profile="es2")
    try:
        _eventpath.check_json(json.dumps(sc), "<pmd twin>")
    except _eventpath.InputError as e:
        if "not built in the simulator yet" in str(e):
            return False
        raise
    return True


def _twin_backend(io: dict) -> tuple[dict, dict]:
    """The twin's ``[vm.net]`` keys and ``[host.io]`` for the testbed's ``[host.io]`` ``io``: a copy
    of the table. The one testbed key that moves is the vhost thread's pin (``backend.pin`` ->
    each VM's ``[vm.net] vhost_pin``, where the simulator pins a vhost thread). While the
    simulator refuses ``pmd``, a busy PMD's twin is vhost-net busy polling with an endless
    window (the closest back end it has; it never sleeps and takes no kick either)."""
    io = copy.deepcopy(io)
    if io["handling"] == "vhost":
        return {"vhost_pin": 1}, io
    if io["handling"] == "pmd" and not _simulator_builds_pmd():
        assert io.get("idle", "busy") == "busy", "no stand-in for a sleeping or monitoring PMD"
        return {"vhost_pin": 1, "busyloop_timeout_us": 1_000_000}, {"handling": "vhost"}
    return {}, io


def exp1() -> list[Point]:
    """A stream at 20 k, 100 k, 1 M requests/s; the guest polls its used ring; one backend mode."""
    base = (EXAMPLES / "exp1_notify_vs_poll.toml").read_text()
    points = []
    for mode in ("vhost", "pmd busy", "es2 perceptive", "es2 optimistic"):
        for rate in (20_000, 100_000, 1_000_000):
            net, io = _twin_backend(BACKENDS[mode])
            vm = {"name": "vm0", "vcpus": 1, "vcpu_pins": [0], "net": net,
                  "workload": {"kind": "request_stream", "rate": rate}}
            text = _with_backend(_sub(base, rate=rate), BACKENDS[mode])
            points.append(Point(f"{mode} {rate // 1000}k/s", text,
                                _twin(f"exp1-{mode.replace(' ', '-')}-{rate}", [vm], io), _stream_metrics()))
    return points


def exp2() -> list[Point]:
    """Closed loops (window 4) of 1, 2, 4 single-vCPU VMs on CPU 0; backends on CPU 1."""
    one = (EXAMPLES / "exp2_shared_backend.toml").read_text()
    head, vm_text = one.split("\n[[vm]]\n")[0] + "\n", "[[vm]]\n" + one.split("\n[[vm]]\n")[1].rstrip("\n") + "\n"
    points = []
    # ELVIS takes no backend.threads: its prototype's devices_per_worker (7) puts these VMs on one.
    for label, mode, threads in (("vhost per_queue", "vhost", "per_queue"), ("elvis shared", "elvis", None)):
        for n in (1, 2, 4):
            text = _with_backend(head, BACKENDS[mode], threads) + "".join(
                vm_text.replace('"vm0"', f'"vm{i}"') for i in range(n))
            net, io = _twin_backend(BACKENDS[mode])
            vms = [{"name": f"vm{i}", "vcpus": 1, "vcpu_pins": [0], "net": dict(net),
                    "workload": {"kind": "request_stream", "window": 4}} for i in range(n)]
            points.append(Point(f"{label} {n}VM", text, _twin(f"exp2-{mode}-{n}", vms, io), _stream_metrics()))
    return points


def exp3() -> list[Point]:
    """A 100 k/s stream consumed on interrupts, exit backend, FIR moderation at three rates."""
    base = (EXAMPLES / "exp3_moderation.toml").read_text()
    points = []
    for itr in (2000, 8000, 32000):
        vm = {"name": "vm0", "vcpus": 1, "vcpu_pins": [0],
              "net": {"vhost_pin": 1, "moderation": {"kind": "fir", "itr": itr}},
              "workload": {"kind": "request_stream", "rate": 100_000, "consume": "irq"}}
        metrics = [
            Metric("done_per_s", "requests/s", "rate", _tb_ops, _tb_ops),
            Metric("interrupts_per_s", "irqs/s", "rate", _interrupts, _interrupts),
            Metric("latency_p50", "us", "latency", _p50, _p50),
        ]
        points.append(Point(f"fir {itr}/s", _sub(base, itr=itr), _twin(f"exp3-fir-{itr}", [vm]), metrics))
    return points


def _by_state(state):
    """p50 of the interrupts raised in run state ``state`` (the same summary key in both worlds)."""
    return lambda d: summary.latency_by_target_state_us(summary.vm(d), state, "p50")


def exp4() -> list[Point]:
    """Two busy vCPUs time-sharing CPU 0; MSIs every 1 ms ± 50 % to vCPU 0, fixed or to the running one."""
    base = (EXAMPLES / "exp4_routing.toml").read_text()
    points = []
    for routing in ("fixed", "running_first"):
        vm = {"name": "vm0", "vcpus": 2, "vcpu_pins": [0, 0], "guest_idle": "poll", "interrupt_routing": routing,
              "workload": {"kind": "irq_source", "interval_us": 1000, "vcpu": 0}}
        twin = _twin(f"exp4-{routing}", [vm])
        twin["duration_s"] = 1.0
        metrics = [Metric(f"latency_p50_{s}", "us", "latency", _by_state(s), _by_state(s))
                   for s in ("home_running", "other_running")]
        text = _sub(_sub(base, routing=f'"{routing}"'), duration_s=1.0)
        points.append(Point(routing, text, twin, metrics))
    return points


def exp5() -> list[Point]:
    """One vCPU halting when idle; MSIs at gaps of 20, 100, 1000 µs; halt polling off, default, 2 ms."""
    base = (EXAMPLES / "exp5_halt_poll.toml").read_text()
    points = []
    for label, tb_line, hp in (("halt_poll 0", "halt_poll_ns = 0", {"max_halt_poll_ns": 0}),
                               ("halt_poll default", "", {}),
                               ("halt_poll 2ms", "halt_poll_ns = 2000000", {"max_halt_poll_ns": 2_000_000})):
        for gap in (20, 100, 1000):
            vm = {"name": "vm0", "vcpus": 1, "vcpu_pins": [0],
                  "workload": {"kind": "irq_source", "interval_us": gap}}
            if hp.get("max_halt_poll_ns", 1) > 0:
                vm["halt_poll"] = dict(hp)
            metrics = [
                Metric("wakeup_p50", "us", "latency", _p50, _p50),
                Metric("vcpu_host_cpu", "%", "cpu", _vcpu_cpu, _sim_vcpu_cpu),
            ]
            text = _sub(base, gap_us=gap).replace("halt_poll_ns = 0", tb_line)
            points.append(Point(f"{label} gap {gap}us", text, _twin(f"exp5-{gap}", [vm]), metrics))
    return points


EXPERIMENTS: dict[str, Callable[[], list[Point]]] = {"exp1": exp1, "exp2": exp2, "exp3": exp3, "exp4": exp4, "exp5": exp5}


# --- running and judging ----------------------------------------------------------------------

def verdict(kind: str, unit: str, testbed: float | None, simulated: float | None) -> str | None:
    """A row's verdict (``eventpath.comparison.testbed_tolerance``)."""
    return comparison.testbed_tolerance(kind, unit).verdict(simulated, testbed)


def _safe(f, d):
    try:
        v = f(d)
    except (KeyError, TypeError, ZeroDivisionError, ValueError):
        return None
    return None if v is None else float(v)


def _beside_competitors(twin: dict, noise: dict) -> dict:
    """An unshielded testbed's twin on a host as busy as the testbed's was: one always-running
    nice-0 host thread, unpinned, per CPU the competitors kept busy while nothing of ours ran
    (``kvm_noise.competing_threads``). A competitor's nice value cannot be read from
    ``/proc/stat``; 0 is an ordinary process's."""
    n = kvm_noise.competing_threads(noise["quiet_cpus"], twin["host"]["pcpus"])
    noise["twin_competitors"] = n
    if n:
        twin = copy.deepcopy(twin)
        twin["host"]["cpu_hog"] = [{"nice": 0} for _ in range(n)]
    return twin


def refused_in(profile: Path) -> list[str]:
    """The keys of a probe's profile.toml whose measurement the probe's outlier rule refused (they
    hold es2's value): the twins ran on a prior there, which a reader of compare.json must know."""
    import tomllib

    doc = tomllib.loads(profile.read_text())
    return sorted(f"{table}.{key}" for table, t in doc.items() if isinstance(t, dict)
                  for key, v in t.items()
                  if isinstance(v, dict) and str(v.get("source", "")).startswith("not measured here (the probe refused"))


def compare(exp_id: str, out: Path, profile: Path, repeats: int = 3,
            duration: float | None = None, progress: Callable[[str], None] = lambda s: None) -> dict:
    """Run experiment ``exp_id``'s points in both worlds; write ``out/compare.json`` and ``.png``."""
    from eventpath import _eventpath
    from eventpath.reproduce.simulate import simulate

    out.mkdir(parents=True, exist_ok=True)
    rows = []
    shield = kvm_noise.can_shield()
    for i, p in enumerate(EXPERIMENTS[exp_id]()):
        text = p.testbed if duration is None else _sub(p.testbed, duration_s=duration)
        quiet = kvm_noise.quiet_load()
        runs, noise = [], []
        for k in range(repeats):
            d = out / "testbed" / f"{i:02d}-{k}"
            d.mkdir(parents=True, exist_ok=True)
            (d / "scenario.toml").write_text(text)
            before = kvm_noise.sample()
            with kvm_noise.shielded():
                runs.append(json.loads(_eventpath.kvm_run(str(d / "scenario.toml"), str(d))))
            noise.append(kvm_noise.between(before, kvm_noise.sample()))
            progress(f"{exp_id} {p.config} testbed {k + 1}/{repeats}")
        point_noise = kvm_noise.of_point(noise, quiet)
        twin = dict(p.twin, profile=str(profile))
        point_noise["twin_competitors"] = 0
        if not shield:
            twin = _beside_competitors(twin, point_noise)
        if duration is not None:
            twin["duration_s"] = duration
        sim = simulate(twin, what=f"{exp_id} {p.config}: the twin").summary
        progress(f"{exp_id} {p.config} simulator")
        for m in p.metrics:
            vals = [v for v in (_safe(m.testbed, r) for r in runs) if v is not None]
            rows.append(TestbedRow(p.config, m.name, m.unit, _safe(m.simulated, sim),
                                   statistics.median(vals) if vals else None, kind=m.kind,
                                   testbed_min=min(vals) if vals else None,
                                   testbed_max=max(vals) if vals else None).as_dict() | {"noise": point_noise})
    ok, judged = comparison.tally(rows)
    doc = {"experiment": exp_id, "profile": str(profile), "profile_refused": refused_in(profile), "repeats": repeats,
           "within_tolerance": ok, "judged": judged,
           "shield": f"nice {kvm_noise.SHIELD_NICE}" if shield else "none (no CAP_SYS_NICE): twins beside competitors",
           "noise": kvm_noise.of_experiment(rows), "rows": rows}
    (out / "compare.json").write_text(json.dumps(doc, indent=2) + "\n")
    figure(doc, out / "compare.png")
    return doc


#: One bar per row: simulated / testbed on a log scale, the tolerance band shaded.
figure = comparison.testbed_figure
#: Rows within tolerance per experiment and in all, and the probe's refused keys.
scorecard = comparison.testbed_scorecard
