"""A production host's own exit counts held against a scenario (issue 50 item 4).

Two texts a platform engineer already has are read here:

* ``perf kvm stat report`` (after ``perf kvm stat record -a sleep S``): its ``VM-EXIT`` table,
  one line per exit reason with ``Samples``, ``Samples%``, ``Time%``, ``Min Time``, ``Max Time``
  and ``Avg time``, as tools/perf/builtin-kvm.c's ``print_result`` writes it. The report does not
  say how long the recording ran, so the caller gives the seconds.
* ``kvm_stat -1`` (batch mode: one second), whose ``kvm_exit(REASON)`` lines carry the total
  and the last second's count (tools/kvm/kvm_stat's ``batch``).

The model's exit reasons are semantic (a kick, an interrupt delivered, an EOI); the hardware's
are architectural (VMX's ``MSR_WRITE`` is an EOI, a timer arm or an IPI alike under x2APIC).
So both sides are summed into :data:`GROUPS`, the finest grain at which a hardware reason says
what the model's reason says, and compared there. Reason names are VMX's (``vmx.h``'s
``VMX_EXIT_REASONS``, both spellings of the interrupt window) and SVM's (``svm.h``'s
``SVM_EXIT_REASONS``); a name in neither goes to ``other``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from eventpath._eventpath import InputError


@dataclass(frozen=True)
class Group:
    key: str
    label: str
    #: the model's exit reasons (summary.json's exits_per_s keys) summed into it
    model: tuple[str, ...]
    #: the hardware's reason names summed into it (VMX upper case, SVM lower case)
    hardware: tuple[str, ...]
    #: what a reader should know when the two differ
    caveat: str = ""


GROUPS: tuple[Group, ...] = (
    Group("io", "kicks (PIO / fast MMIO)", ("io_instruction",), ("IO_INSTRUCTION", "EPT_MISCONFIG", "io"),
          "a virtio-pci modern device's MMIO notify is EPT_MISCONFIG on VMX and npf on SVM"),
    Group("interrupt", "host interrupts and IPIs while the guest ran", ("interrupt_delivery", "external_interrupt"),
          ("EXTERNAL_INTERRUPT", "interrupt"),
          "includes the host's own timer and device interrupts on a vCPU's pCPU"),
    Group("apic", "APIC writes: EOI, timer, ICR", ("eoi", "timer", "ipi"),
          ("MSR_WRITE", "APIC_ACCESS", "APIC_WRITE", "EOI_INDUCED", "PREEMPTION_TIMER", "msr",
           "avic_incomplete_ipi", "avic_unaccelerated_access"),
          "MSR_WRITE also counts the guest's non-APIC MSR writes"),
    Group("hlt", "HLT", ("hlt",), ("HLT", "hlt")),
    Group("ept_violation", "EPT violations / nested page faults", ("ept_violation",), ("EPT_VIOLATION", "npf"),
          "on SVM, MMIO kicks are npf too"),
    Group("interrupt_window", "interrupt windows", ("interrupt_window",),
          ("INTERRUPT_WINDOW", "PENDING_INTERRUPT", "vintr")),
    Group("other", "everything else (CPUID, MSR reads, PAUSE, ...)", ("other",), ()),
)

_BY_HARDWARE = {name: g.key for g in GROUPS for name in g.hardware}


def group_of(reason: str) -> str:
    """The :data:`GROUPS` key of a hardware exit reason's name."""
    return _BY_HARDWARE.get(reason, "other")


@dataclass
class HostExits:
    """One host's exits per hardware reason: ``count`` over ``seconds``, with the handling
    time per exit where the source gives it (µs)."""

    source: str
    seconds: float
    count: dict[str, int]
    avg_us: dict[str, float]
    scope: str = "all VMs"

    def groups(self) -> dict[str, tuple[float, float | None]]:
        """``{group: (exits/s, mean µs per exit or None)}`` over every group."""
        out: dict[str, tuple[float, float | None]] = {}
        for g in GROUPS:
            names = [r for r in self.count if group_of(r) == g.key]
            n = sum(self.count[r] for r in names)
            timed = [r for r in names if r in self.avg_us]
            t = sum(self.avg_us[r] * self.count[r] for r in timed)
            nt = sum(self.count[r] for r in timed)
            out[g.key] = (n / self.seconds, t / nt if nt else None)
        return out


# A VM-EXIT row: the reason (SVM's have spaces: "DB excp"), Samples, Samples%, Time%, Min, Max, Avg.
_ROW = re.compile(r"^\s*(?P<reason>\S(?:.*?\S)?)\s+(?P<n>\d+)\s+[\d.]+%\s+[\d.]+%\s+[\d.]+us\s+[\d.]+us\s+"
                  r"(?P<avg>[\d.]+)us\b")
_SCOPE = re.compile(r"^\s*Analyze events for (?P<scope>.+?):?\s*$")
_TOTAL = re.compile(r"Total Samples:\s*(?P<n>\d+)")


def _check_seconds(seconds: float, what: str) -> float:
    if not (isinstance(seconds, (int, float)) and 0 < seconds < 1e9):
        raise InputError(f"{what}: {seconds!r} seconds is not allowed; expected the recording's length, > 0")
    return float(seconds)


def parse_perf_kvm_stat(text: str, seconds: float, source: str = "perf kvm stat report") -> HostExits:
    """The ``VM-EXIT`` table of ``perf kvm stat report``'s text, recorded over ``seconds``.
    Refused (:class:`InputError`, naming the line) when the text has no such table, a row
    does not read, or the rows do not add up to the report's ``Total Samples``."""
    seconds = _check_seconds(seconds, source)
    lines = text.splitlines()
    head = next((i for i, l in enumerate(lines) if l.split()[:2] == ["VM-EXIT", "Samples"]), None)
    if head is None:
        what = "an `IO Port Access` or `MMIO Access` table (perf kvm stat report --event=ioport/mmio)" \
            if any(l.split()[:1] in (["IO"], ["MMIO"]) and "Samples" in l for l in lines) else "no `VM-EXIT  Samples ...` header"
        raise InputError(f"{source}: {what}; expected the text of `perf kvm stat report` (its default "
                         "--event=vmexit table)")
    scope = next((m["scope"] for l in lines[:head] if (m := _SCOPE.match(l))), "all VMs")
    count: dict[str, int] = {}
    avg: dict[str, float] = {}
    total = None
    for no, line in enumerate(lines[head + 1:], start=head + 2):
        if not line.strip():
            continue
        if (m := _TOTAL.search(line)):
            total = int(m["n"])
            break
        m = _ROW.match(line)
        if m is None:
            raise InputError(f"{source}: line {no} {line.strip()[:60]!r} does not read as a VM-EXIT row "
                             "(reason, Samples, Samples%, Time%, Min Time, Max Time, Avg time)")
        reason = m["reason"]
        if reason in count:
            raise InputError(f"{source}: line {no}: reason {reason} appears twice; give one report's table")
        count[reason] = int(m["n"])
        avg[reason] = float(m["avg"])
    if not count:
        raise InputError(f"{source}: the VM-EXIT table has no rows; was anything recorded?")
    if total is not None and total != sum(count.values()):
        raise InputError(f"{source}: the rows add up to {sum(count.values())} samples but the report says "
                         f"Total Samples:{total}; give the whole table")
    return HostExits(source=source, seconds=seconds, count=count, avg_us=avg, scope=scope)


_KVM_STAT = re.compile(r"^\s*kvm_exit\((?P<reason>[^)]+)\)\s+(?P<total>\d+)\s+(?P<delta>\d+)\s*$")


def parse_kvm_stat(text: str, source: str = "kvm_stat -1") -> HostExits:
    """``kvm_stat -1``'s ``kvm_exit(REASON)  TOTAL  DELTA`` lines: DELTA is the count of its one
    second. No handling times (kvm_stat has none)."""
    count: dict[str, int] = {}
    for line in text.splitlines():
        if (m := _KVM_STAT.match(line)):
            count[m["reason"]] = count.get(m["reason"], 0) + int(m["delta"])
    if not count:
        raise InputError(f"{source}: no `kvm_exit(REASON)  TOTAL  DELTA` line; expected the text of `kvm_stat -1` "
                         "(batch mode, with the kvm_exit tracepoint's reasons)")
    return HostExits(source=source, seconds=1.0, count=count, avg_us={})


@dataclass
class Row:
    group: Group
    host_per_s: float
    model_per_s: float
    host_avg_us: float | None
    model_avg_us: float | None
    verdict: str


#: Below this share of the host's exits (and of the scenario's) a group is too small to judge.
SMALL_SHARE = 0.01


def compare(host: HostExits, model_per_s: dict[str, float], model_avg_us: dict[str, float | None]) -> list[Row]:
    """One :class:`Row` per group: the host's and the scenario's exits/s and µs per exit, and
    whether they agree (within `kvm compare`'s tolerance for a rate, ±25 %), differ, or are both
    too small to say."""
    from eventpath.comparison import testbed_tolerance

    tol = testbed_tolerance("rate", "exits/s")
    hg = host.groups()
    h_total = sum(v for v, _ in hg.values())
    m_total = sum(model_per_s.get(g.key, 0.0) for g in GROUPS)
    rows = []
    for g in GROUPS:
        h, h_us = hg[g.key]
        m = model_per_s.get(g.key, 0.0)
        if h <= SMALL_SHARE * h_total and m <= SMALL_SHARE * max(m_total, 1e-12):
            verdict = "both small"
        elif h == 0 or m == 0:
            verdict = "host has none" if h == 0 else "scenario has none"
        else:
            verdict = "agrees" if tol.verdict(m, h) == "ok" else f"differs: scenario {m / h:.2g}x host"
        rows.append(Row(g, h, m, h_us, model_avg_us.get(g.key), verdict))
    return rows


def model_groups(exits_per_s: dict[str, float], exit_stats: list[dict]) -> tuple[dict[str, float], dict[str, float | None]]:
    """The scenario's side: ``exits_per_s`` (reason -> rate, summed over the VMs compared) and its
    ``exit_stats`` rows (``reason``, ``count``, ``time_ns``) summed into groups."""
    per_s = {g.key: sum(exits_per_s.get(r, 0.0) for r in g.model) for g in GROUPS}
    avg: dict[str, float | None] = {}
    for g in GROUPS:
        n = sum(s["count"] for s in exit_stats if s["reason"] in g.model)
        t = sum(s["time_ns"] for s in exit_stats if s["reason"] in g.model)
        avg[g.key] = t / n / 1e3 if n else None
    return per_s, avg
