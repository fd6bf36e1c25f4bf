"""``eventpath advise SCENARIO`` (issue 50 items 1-2): on the user's own layout, which of the
switches a platform engineer has pays, by how much, at what host CPU, and how sure.

*Stock* is the scenario as written, resolved: every default its profile's kernel gives filled in
(KVM halt polling where that KVM polls, one server worker per vCPU, ...). Each *option* changes
one family's setting on every VM, one factor at a time from stock; a family brings what it needs
(IPIv brings posted delivery) and an option the profile's CPU lacks is not offered. What the
layout still cannot run, the simulator's checker refuses, and the refusal is listed.

Every option runs on stock's seeds, so each gain is a paired difference (one seed's option run
against the same seed's stock run). Seeds double, from ``seeds`` up to ``max_seeds``, for the
options not yet resolved on every VM, until each is or the wall budget is spent: an option is
*resolved* on a VM when the 95 % interval (Student's t over the paired seeds) of its throughput
gain or of its p99 change excludes zero, and says *within noise* otherwise. It *pays* where it is
resolved better on some VM and worse on none, *costs* the other way round, is *mixed* with both.

With ``robust``, each resolved line of an option that pays, costs or is mixed is run again at
the corners of the profile's ranges (:func:`corners`: its ranged parameters in groups, each group
at its minima and at its maxima) and called *robust* where its gain keeps its sign at every one.
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from eventpath._eventpath import InputError
from eventpath.stats import Interval, interval

#: KVM halt-polling ceilings a platform engineer tries (halt_poll_ns): off, 50 us, 200 us (x86
#: KVM_HALT_POLL_NS_DEFAULT, the modern profile's host.halt_poll_ns source), 400 us.
HALT_POLL_NS = (0, 50_000, 200_000, 400_000)
#: vhost-net busyloop_timeout settings tried (us).
BUSY_POLL_US = (10, 50)


@dataclass(frozen=True)
class Option:
    family: str
    label: str
    #: Applied to a copy of each VM's resolved table.
    edit: Callable[[dict], None]


def _set(**keys: Any) -> Callable[[dict], None]:
    """An edit setting keys on a VM table, a nested key's parts joined by ``__`` (``apic__ipiv``)."""
    def edit(vm: dict) -> None:
        for dotted, value in keys.items():
            *path, last = dotted.split("__")
            node = vm
            for p in path:
                node = node.setdefault(p, {})
            node[last] = copy.deepcopy(value)
    return edit


def _value(profile: dict, section: str, key: str) -> Any:
    p = (profile.get(section) or {}).get(key)
    return p.get("value") if isinstance(p, dict) else None


def stock_settings(sc: dict, profile: dict) -> dict[str, str]:
    """What stock is, per family, in words (the first VM's where VMs differ, marked)."""
    vms = sc["vm"]

    def one(values: list[str]) -> str:
        return values[0] if len(set(values)) == 1 else f"{values[0]} (VMs differ)"

    def halt_poll(vm: dict) -> str:
        hp = vm.get("halt_poll")
        ns = hp.get("max_halt_poll_ns") if isinstance(hp, dict) else None
        if ns is None:
            ns = _value(profile, "host", "halt_poll_ns") or 0
        return "off" if not ns else f"{ns / 1000:g} us"

    def apic(vm: dict) -> str:
        on = [k for k, v in (vm.get("apic") or {}).items() if v is True]
        return ", ".join(on) or "none"

    def moderation(vm: dict) -> str:
        net = vm.get("net") or {}
        kind = (net.get("moderation") or {}).get("kind", "none")
        if kind == "none" and net.get("kind") == "sriov_vf":
            itr = net.get("itr_us")
            return f"VF EITR {itr}" + (" us" if isinstance(itr, (int, float)) else "") if itr else "VF EITR (profile's)"
        return kind

    return {
        "delivery": one([vm.get("interrupt_delivery", "emulated") for vm in vms]),
        "KVM halt polling": one([halt_poll(vm) for vm in vms]),
        "guest haltpoll": one(["on" if vm.get("guest_halt_poll") is not None else "off" for vm in vms]),
        "vhost busy polling": one([f"{(vm.get('net') or {}).get('busyloop_timeout_us', 0)} us" for vm in vms]),
        "APIC features": one([apic(vm) for vm in vms]),
        "moderation": one([moderation(vm) for vm in vms]),
        "routing": one([vm.get("interrupt_routing", "fixed") for vm in vms]),
        "multi-queue": one([f"{(vm.get('net') or {}).get('queues', 1)} queue pair(s)" for vm in vms]),
    }


def options(sc: dict, profile: dict) -> list[Option]:
    """The families' settings that differ from stock and that this profile's CPU has."""
    vms = sc["vm"]
    out: list[Option] = []
    deliveries = {vm.get("interrupt_delivery") for vm in vms}
    if deliveries != {"posted"}:
        out.append(Option("delivery", "posted interrupts", _set(interrupt_delivery="posted")))
    if _value(profile, "cpu", "ipiv") == 1 and not all((vm.get("apic") or {}).get("ipiv") for vm in vms):
        out.append(Option("delivery", "posted interrupts + IPIv", _set(interrupt_delivery="posted", apic__ipiv=True)))
    if _value(profile, "cpu", "avic") == 1 and not all((vm.get("apic") or {}).get("avic") for vm in vms):
        out.append(Option("delivery", "posted interrupts + AVIC", _set(interrupt_delivery="posted", apic__avic=True)))
    default_ns = _value(profile, "host", "halt_poll_ns") or 0
    stock_ns = {((vm.get("halt_poll") or {}).get("max_halt_poll_ns", default_ns)) for vm in vms}
    for ns in HALT_POLL_NS:
        if stock_ns != {ns}:
            label = "KVM halt polling off" if ns == 0 else f"KVM halt polling {ns // 1000} us"

            def edit(vm: dict, ns: int = ns) -> None:
                hp = dict(vm.get("halt_poll") or {})
                hp["max_halt_poll_ns"] = ns
                vm["halt_poll"] = hp
            out.append(Option("KVM halt polling", label, edit))
    if all(vm.get("guest_halt_poll") is None for vm in vms):
        def haltpoll(vm: dict) -> None:
            # The guest's driver turns KVM's polling off (MSR_KVM_POLL_CONTROL = 0), as on Linux.
            vm.pop("halt_poll", None)
            vm["guest_halt_poll"] = {}
        out.append(Option("guest haltpoll", "guest haltpoll (cpuidle-haltpoll, its defaults; KVM's polling off)", haltpoll))
    io = sc.get("host", {}).get("io") or {}
    nics = [vm for vm in vms if not _disk(vm)]
    if io.get("handling", "vhost") == "vhost" and nics and all((vm.get("net") or {}).get("kind", "virtio") == "virtio" for vm in nics):
        for us in BUSY_POLL_US:
            if {(vm.get("net") or {}).get("busyloop_timeout_us", 0) for vm in nics} != {us}:
                # (vhost-net's: a block VM's disk, served by QEMU, keeps stock.)
                out.append(Option("vhost busy polling", f"vhost busy polling {us} us",
                                  _only(lambda vm: not _disk(vm), _set(net__busyloop_timeout_us=us))))
    if any(vm.get("interrupt_delivery", "emulated") == "emulated" and not (vm.get("apic") or {}).get("pv_eoi") for vm in vms):
        def pv_eoi(vm: dict) -> None:
            if vm.get("interrupt_delivery", "emulated") == "emulated":  # elsewhere the EOI does not exit
                vm.setdefault("apic", {})["pv_eoi"] = True
        out.append(Option("PV features", "PV EOI (on the emulated-LAPIC VMs)", pv_eoi))
    for key, label in (("pv_ipi", "PV IPI"), ("pv_sched_yield", "PV sched yield")):
        if not all((vm.get("apic") or {}).get(key) for vm in vms):
            out.append(Option("PV features", label, _set(**{f"apic__{key}": True})))
    out += _moderation(vms) + _routing(vms) + _multi_queue(sc)
    return out


def _net(vm: dict) -> dict:
    return vm.get("net") or {}


#: The block workloads: their VM's device is a virtio-blk disk, which has none of a NIC's knobs.
BLOCK_WORKLOADS = ("fio", "filebench")


def _disk(vm: dict) -> bool:
    return (vm.get("workload") or {}).get("kind") in BLOCK_WORKLOADS


def _only(pred: Callable[[dict], bool], edit: Callable[[dict], None]) -> Callable[[dict], None]:
    """``edit`` applied to the VMs ``pred`` accepts; the others keep stock."""
    def apply(vm: dict) -> None:
        if pred(vm):
            edit(vm)
    return apply


def _moderation(vms: list[dict]) -> list[Option]:
    """Interrupt moderation where stock has none: on a virtio queue the guest's (virtio-net's
    notification coalescing, set by hand or by net DIM), on an SR-IOV VF the host's controller
    driving its EITR (net DIM, the CGR/AIR paper's AIR)."""
    def unmoderated(kind: str) -> Callable[[dict], bool]:
        return lambda vm: (_net(vm).get("kind", "virtio") == kind and not _disk(vm)
                           and (_net(vm).get("moderation") or {}).get("kind", "none") == "none"
                           and (kind != "sriov_vf" or "itr_us" not in _net(vm)))
    out = []
    for kind, choices in (("virtio", (("guest_dim", "guest net DIM on virtio-net's notification coalescing"),
                                       ("notf_coal", "virtio-net notification coalescing (1000 us / 10 frames)"))),
                          ("sriov_vf", (("dim", "host net DIM driving the VF's EITR"),
                                        ("air", "AIR driving the VF's EITR (CGR/AIR paper §4.3)")))):
        pred = unmoderated(kind)
        if any(pred(vm) for vm in vms):
            for mod, label in choices:
                out.append(Option("moderation", label, _only(pred, _set(net__moderation={"kind": mod}))))
    return out


def _routing(vms: list[dict]) -> list[Option]:
    """Where a device interrupt goes on the multi-vCPU VMs that route it to a fixed vCPU."""
    def fixed(vm: dict) -> bool:
        return vm.get("vcpus", 1) > 1 and vm.get("interrupt_routing", "fixed") == "fixed"
    if not any(fixed(vm) for vm in vms):
        return []
    return [Option("routing", label, _only(fixed, _set(interrupt_routing=r)))
            for r, label in (("running_first", "interrupts to a running vCPU (running_first)"),
                             ("es2", "ES2 interrupt redirection (§4.3)"))]


#: The workloads the model spreads over several virtio-net queue pairs (the receivers, each flow
#: steered to its own vCPU's queue).
MULTI_QUEUE_WORKLOADS = ("tcp_receive", "udp_receive")


def _multi_queue(sc: dict) -> list[Option]:
    """One queue pair per vCPU (ethtool -L combined N, QEMU mq=on) on the vhost virtio VMs whose
    workload the model runs over several queues and that have one now."""
    if (sc.get("host", {}).get("io") or {}).get("handling", "vhost") != "vhost":
        return []

    def single(vm: dict) -> bool:
        return (vm.get("vcpus", 1) > 1 and _net(vm).get("kind", "virtio") == "virtio"
                and _net(vm).get("queues", 1) == 1
                and (vm.get("workload") or {}).get("kind") in MULTI_QUEUE_WORKLOADS)
    if not any(single(vm) for vm in sc["vm"]):
        return []

    def per_vcpu(vm: dict) -> None:
        vm.setdefault("net", {})["queues"] = vm["vcpus"]
    return [Option("multi-queue", "one virtio-net queue pair per vCPU", _only(single, per_vcpu))]


def variant(sc: dict, opt: Option | None) -> dict:
    """Stock (``opt`` None) or ``opt`` applied to every VM of a copy of the resolved scenario."""
    v = copy.deepcopy(sc)
    if opt is not None:
        for vm in v["vm"]:
            opt.edit(vm)
    return v


def run_one(sc: dict, seed: int, duration: float | None, kinds: list[str | None], io_cores: list[int]) -> dict:
    """One run's numbers (in a worker): per VM its own throughput and latency, the host's CPU;
    or the checker's refusal; or why the run is not a result (:mod:`eventpath.liveness`)."""
    from eventpath import api, liveness, summary

    try:
        s = api.run(sc, seed=seed, duration=duration).summary
    except InputError as e:
        msg = str(e)
        return {"refused": msg.split(": ", 1)[-1] if msg.startswith("scenario <") else msg}
    status, why = liveness.verdict(s)
    if status != liveness.OK:
        return {"unranked": f"seed {seed}: {why}"}
    vms = []
    for vm, kind in zip(summary.vms(s), kinds):
        thr, unit = summary.own_throughput(vm, kind)
        vms.append({"vm": summary.name(vm), "kind": kind, "throughput": thr, "unit": unit,
                    "p50_us": summary.latency_us(vm, "p50"), "p99_us": summary.latency_us(vm, "p99")})
    return {"vms": vms, "cpu": summary.cpu_split(s, io_cores)}


def _pct(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b <= 0 else 100.0 * (a / b - 1.0)


@dataclass
class VmGain:
    vm: str
    kind: str | None
    unit: str
    stock: float | None
    throughput: Interval | None  # % gain
    p99: Interval | None  # % change
    cpu: Interval | None  # cores, whole host (the same on every VM's line)
    #: With ``robust``: the resolved metric's mean gain at each corner of the profile's ranges
    #: (min, max over the corners), and whether its sign held at all of them.
    band: tuple[float, float] | None = None
    robust: bool | None = None

    def metric(self) -> str | None:
        """The metric this VM's verdict rests on: throughput where its interval excludes zero,
        else p99 where that one does."""
        if self.throughput and self.throughput.excludes_zero():
            return "throughput"
        if self.p99 and self.p99.excludes_zero():
            return "p99"
        return None

    def good(self) -> bool:
        return bool((self.throughput and self.throughput.excludes_zero() and self.throughput.mean > 0)
                    or (self.p99 and self.p99.excludes_zero() and self.p99.mean < 0))

    def bad(self) -> bool:
        return bool((self.throughput and self.throughput.excludes_zero() and self.throughput.mean < 0)
                    or (self.p99 and self.p99.excludes_zero() and self.p99.mean > 0))

    def resolved(self) -> bool:
        return self.good() or self.bad()


def gains(stock: dict[int, dict], runs: dict[int, dict]) -> list[VmGain]:
    """Each VM's paired gains of an option's runs over stock's (both by seed)."""
    seeds = sorted(s for s in runs if s in stock and "vms" in runs[s] and "vms" in stock[s])
    if not seeds:
        return []
    out = []
    for i, first in enumerate(stock[seeds[0]]["vms"]):
        thr = [_pct(runs[s]["vms"][i]["throughput"], stock[s]["vms"][i]["throughput"]) for s in seeds]
        p99 = [_pct(runs[s]["vms"][i]["p99_us"], stock[s]["vms"][i]["p99_us"]) for s in seeds]
        cpu = [runs[s]["cpu"]["cpu_host"] - stock[s]["cpu"]["cpu_host"] for s in seeds]
        st = [stock[s]["vms"][i]["throughput"] for s in seeds if stock[s]["vms"][i]["throughput"] is not None]
        out.append(VmGain(first["vm"], first["kind"], first["unit"], sum(st) / len(st) if st else None,
                          interval([x for x in thr if x is not None]), interval([x for x in p99 if x is not None]),
                          interval(cpu)))
    return out


@dataclass
class Verdict:
    option: Option
    refused: str | None = None
    unranked: str | None = None
    vms: list[VmGain] = field(default_factory=list)
    seeds: int = 0

    @property
    def category(self) -> str:
        if self.refused is not None:
            return "refused"
        if self.unranked is not None:
            return "not a result"
        good, bad = any(g.good() for g in self.vms), any(g.bad() for g in self.vms)
        return "mixed" if good and bad else "pays" if good else "costs" if bad else "within noise"

    def resolved(self) -> bool:
        """Every VM's interval excludes zero (one VM's alone would stop the seeds early on a
        chance result among many VMs)."""
        return bool(self.vms) and all(g.resolved() for g in self.vms)

    def score(self) -> float:
        """Ranking: the mean throughput gain over the VMs (then p99's fall)."""
        thr = [g.throughput.mean for g in self.vms if g.throughput]
        p99 = [g.p99.mean for g in self.vms if g.p99]
        return (sum(thr) / len(thr) if thr else 0.0) - 1e-3 * (sum(p99) / len(p99) if p99 else 0.0)


@dataclass
class Advice:
    scenario: str
    profile: str
    stock: dict[str, str]
    stock_runs: dict[int, dict]
    verdicts: list[Verdict]
    seeds: list[int]
    duration: float | None
    wall_s: float
    runs: int
    budget_spent: bool
    #: The profile as the scenario names it (a built-in name or a path), for the robustness screen.
    profile_ref: str = ""
    robust: bool = False


def advise(scenario: str, *, seeds: int = 4, max_seeds: int = 32, budget_s: float = 240.0,
           duration: float | None = None, robust: bool = False, ex=None,
           progress: Callable[[str], None] | None = None) -> Advice:
    """Run stock and every option on growing seeds (see the module's text) through executor
    ``ex`` (default: this process)."""
    from eventpath import api, summary
    from eventpath.executor import Executor

    if not (isinstance(seeds, int) and 2 <= seeds <= 1000):
        raise InputError(f"--seeds {seeds}: not allowed; expected 2..=1000 (an interval needs two pairs)")
    if not (isinstance(max_seeds, int) and seeds <= max_seeds <= 1000):
        raise InputError(f"--max-seeds {max_seeds}: not allowed; expected {seeds}..=1000 (at least --seeds)")
    if not (budget_s > 0 and math.isfinite(budget_s)):
        raise InputError(f"--budget {budget_s}: not allowed; expected seconds > 0")
    resolved = api.resolve(scenario, duration=duration)
    sc, profile = resolved["scenario"], resolved["profile"]
    kinds = [(vm.get("workload") or {}).get("kind") for vm in sc["vm"]]
    io_cores = summary.io_cores(sc)
    opts = options(sc, profile)
    ex = ex or Executor()
    t0 = time.monotonic()
    stock_runs: dict[int, dict] = {}
    runs: list[dict[int, dict]] = [{} for _ in opts]
    verdicts = [Verdict(o) for o in opts]
    done_seeds: list[int] = []
    n_runs = 0
    budget_spent = False
    while True:
        n_new = seeds if not done_seeds else len(done_seeds)
        new = list(range(len(done_seeds) + 1, min(len(done_seeds) + n_new, max_seeds) + 1))
        todo = [i for i, v in enumerate(verdicts) if v.refused is None and v.unranked is None and not v.resolved()]
        if not new or (done_seeds and not todo):
            break
        if done_seeds and time.monotonic() - t0 > budget_s:
            budget_spent = True
            break
        jobs = [(variant(sc, None), s, duration, kinds, io_cores) for s in new]
        owners: list[tuple[int | None, int]] = [(None, s) for s in new]
        for i in (todo if done_seeds else range(len(opts))):
            for s in new:
                jobs.append((variant(sc, opts[i]), s, duration, kinds, io_cores))
                owners.append((i, s))
        if progress:
            progress(f"seeds {new[0]}-{new[-1]}: {len(jobs)} runs ({len(jobs) // len(new) - 1} options and stock)")
        for k, r in ex.map(run_one, jobs):
            i, s = owners[k]
            n_runs += 1
            if i is None:
                if "vms" not in r:
                    raise InputError(f"{scenario}: stock does not run: {r.get('refused') or r.get('unranked')}")
                stock_runs[s] = r
            elif "refused" in r:
                verdicts[i].refused = r["refused"]
            elif "unranked" in r:
                verdicts[i].unranked = r["unranked"]
            else:
                runs[i][s] = r
        done_seeds += new
        for i, v in enumerate(verdicts):
            if v.refused is None and v.unranked is None:
                v.vms = gains(stock_runs, runs[i])
                v.seeds = len(runs[i])
    order = {"pays": 0, "mixed": 1, "costs": 2, "within noise": 3, "not a result": 4, "refused": 5}
    verdicts.sort(key=lambda v: (order[v.category], -v.score()))
    adv = Advice(str(scenario), profile.get("name", "?"), stock_settings(sc, profile), stock_runs, verdicts,
                 done_seeds, duration, 0.0, n_runs, budget_spent, profile_ref=sc["profile"], robust=robust)
    if robust:
        robustness(adv, sc, kinds, io_cores, duration, ex, progress)
    adv.wall_s = time.monotonic() - t0
    return adv


# --- robustness over the profile's ranges ------------------------------------------------------

#: Parameters moved together in one corner of the robustness screen (as ``sensitivity``'s groups).
ROBUST_GROUP = 8
#: Seeds per corner run (paired, stock and option alike).
ROBUST_SEEDS = 4


def corners(profile: str) -> list[tuple[str, dict[str, float]]]:
    """The robustness screen's profile points: the ranged parameters in groups of
    :data:`ROBUST_GROUP` (profile order), each group at all its ranges' minima and at all their
    maxima, the rest at the profile's values."""
    from eventpath.sensitivity import ranged_params

    params = ranged_params(profile)
    out = []
    for k in range(0, len(params), ROBUST_GROUP):
        group = params[k:k + ROBUST_GROUP]
        for end in ("lo", "hi"):
            out.append((f"{group[0]['key']}..{group[-1]['key']} at {'min' if end == 'lo' else 'max'}",
                        {p["key"]: p[end] for p in group}))
    return out


def _dotted(table: dict, prefix: str = "") -> list[str]:
    out = []
    for k, v in table.items():
        out += _dotted(v, f"{prefix}{k}.") if isinstance(v, dict) else [f"{prefix}{k}"]
    return out


def with_overrides(sc: dict, values: dict[str, float]) -> dict:
    """``sc`` with ``values`` (dotted profile keys) added to its ``[profile_overrides]``."""
    v = copy.deepcopy(sc)
    po = v.setdefault("profile_overrides", {})
    for dotted, x in values.items():
        *path, last = dotted.split(".")
        node = po
        for part in path:
            node = node.setdefault(part, {})
        node[last] = x
    return v


def robustness(a: "Advice", sc: dict, kinds, io_cores, duration, ex, progress=None) -> None:
    """Set ``band`` and ``robust`` on each resolved VM line of the options that pay, cost or are
    mixed: their resolved metric's paired mean gain at every corner of :func:`corners`; robust
    where its sign is the nominal one at all of them. A corner the profile refuses (a value above
    the one that bounds it) is skipped, as ``sensitivity`` skips it."""
    decisive = [v for v in a.verdicts if v.category in ("pays", "costs", "mixed")]
    if not decisive:
        return
    given = set(_dotted(sc.get("profile_overrides") or {}))  # the scenario's own what-ifs stay
    pts = [(name, {k: x for k, x in values.items() if k not in given}) for name, values in corners(a.profile_ref)]
    seeds = list(range(1, ROBUST_SEEDS + 1))
    jobs, owners = [], []
    for c, (_, values) in enumerate(pts):
        for opt in [None, *[v.option for v in decisive]]:
            for s in seeds:
                jobs.append((with_overrides(variant(sc, opt), values), s, duration, kinds, io_cores))
                owners.append((c, opt, s))
    if progress:
        progress(f"robustness: {len(pts)} corners of the profile's ranges x {len(decisive)} options and stock x "
                 f"{len(seeds)} seeds = {len(jobs)} runs")
    got: dict[tuple[int, Any], dict[int, dict]] = {}
    for k, r in ex.map(run_one, jobs):
        c, opt, s = owners[k]
        if "vms" in r:
            got.setdefault((c, None if opt is None else opt.label), {})[s] = r
    a.runs += len(jobs)
    for v in decisive:
        at = [gains(got.get((c, None), {}), got.get((c, v.option.label), {})) for c in range(len(pts))]
        for i, g in enumerate(v.vms):
            m = g.metric()
            if m is None:
                continue
            means = [getattr(x[i], m).mean for x in at if x and getattr(x[i], m) is not None]
            if not means:
                continue
            nominal = getattr(g, m).mean
            g.band = (min(means), max(means))
            g.robust = all((x > 0) == (nominal > 0) and x != 0 for x in means)


# --- the answer ---------------------------------------------------------------------------------

def _iv(i: Interval | None, unit: str = " %", nd: int = 1) -> str:
    if i is None:
        return "n/a"
    if i.half is None:
        return f"{i.mean:+.{nd}f}{unit}"
    return f"{i.mean:+.{nd}f}{unit} [{i.lo:+.{nd}f}, {i.hi:+.{nd}f}]"


def answer(a: Advice) -> list[str]:
    """The one-page answer: what stock is, what pays, what costs, what is within noise, what the
    layout refused."""
    lines = [f"advise: {a.scenario} on profile {a.profile}; stock is the scenario as written with the profile's "
             "kernel defaults:",
             "  " + "; ".join(f"{k} {v}" for k, v in a.stock.items()),
             f"  {len(a.verdicts)} options, each on every VM, one at a time; seeds 1-{a.seeds[-1]} (paired with stock), "
             f"{a.runs} runs in {a.wall_s:.0f} s wall"
             + (" — the budget ran out before every option resolved" if a.budget_spent else "")]
    pays = [v for v in a.verdicts if v.category == "pays"]
    if pays:
        best = pays[0]
        won = [f"{g.vm} {_iv(g.throughput)}" + (f" (p99 {_iv(g.p99)})" if g.p99 else "") for g in best.vms if g.good()]
        rest = [g.vm for g in best.vms if not g.good()]
        lines += ["", f"Answer: {best.option.label} pays: resolved on {', '.join(won)}"
                      + (f"; within noise on {', '.join(rest)}" if rest else "")
                      + f"; host CPU {_iv(best.vms[0].cpu, ' cores', 2)}"
                      + (f". {len(pays) - 1} more option{'s pay' if len(pays) > 2 else ' pays'} (below)" if len(pays) > 1 else "")]
    else:
        lines += ["", "Answer: no option resolved a gain on this scenario without a loss on some VM (see mixed, costs, "
                      "within noise below)"]
    heads = {"pays": "What pays (throughput gain over stock, 95 % interval over paired seeds; p99 change; host CPU):",
             "mixed": "Mixed (better on one VM or metric, worse on another):",
             "costs": "What costs:",
             "within noise": "Within noise (no interval excludes zero after the seeds run):",
             "not a result": "Not a result (a run stalled; see the full table):",
             "refused": "Refused by this layout:"}
    for cat, head in heads.items():
        vs = [v for v in a.verdicts if v.category == cat]
        if not vs:
            continue
        lines += ["", head]
        for v in vs:
            if v.refused is not None or v.unranked is not None:
                lines.append(f"  {v.option.label}: {v.refused or v.unranked}")
                continue
            n = v.vms[0].throughput.n if v.vms and v.vms[0].throughput else 0
            lines.append(f"  {v.option.label}: host CPU {_iv(v.vms[0].cpu if v.vms else None, ' cores', 2)}, {n} seeds")
            for g in v.vms:
                what = "resolved" if g.resolved() else "within noise"
                if g.band is not None:
                    what += (f", {'robust' if g.robust else 'NOT robust'}: {g.metric()} {g.band[0]:+.1f} to "
                             f"{g.band[1]:+.1f} % over the profile's ranges")
                lines.append(f"      {g.vm} ({g.kind}): {_iv(g.throughput)} {g.unit}, p99 {_iv(g.p99)}  {what}")
    return lines


def table(a: Advice) -> list[dict[str, Any]]:
    """advise.csv: one row per option and VM."""
    rows = []
    for v in a.verdicts:
        base = {"family": v.option.family, "option": v.option.label, "category": v.category}
        if not v.vms:
            rows.append({**base, "vm": None, "note": v.refused or v.unranked})
            continue
        for g in v.vms:
            row = {**base, "vm": g.vm, "workload": g.kind, "unit": g.unit, "stock_throughput": g.stock,
                   "seeds": g.throughput.n if g.throughput else 0, "resolved": g.resolved(),
                   "resolved_on": g.metric(), "robust": g.robust,
                   "band_lo_pct": g.band[0] if g.band else None, "band_hi_pct": g.band[1] if g.band else None}
            for name, i in (("throughput_gain_pct", g.throughput), ("p99_change_pct", g.p99), ("cpu_delta_cores", g.cpu)):
                row[name] = i.mean if i else None
                row[f"{name}_lo"] = i.lo if i else None
                row[f"{name}_hi"] = i.hi if i else None
            rows.append(row)
    return rows
