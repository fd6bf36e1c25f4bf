"""The mechanism matrix: one family per seam, each family's choices as the seam offers them
(:mod:`eventpath.compare.seams`), and their product as scenario variants.

A *choice* is a mechanism as the scenario selects it: a name and the keys it sets. Every
family's names come from the checker, with two exceptions that are switches on a number or a
table rather than a named choice, and so cannot be listed by asking for names: vhost-net busy
polling (``[vm.net] busyloop_timeout_us``, one of request handling's choices) and KVM halt
polling (``[vm.halt_poll]``, present or absent). A pair the layout cannot run (ELI without an
assigned device, routing on a one-vCPU VM) is not filtered here: the checker refuses it when
the cell runs, and its one-line reason is kept (:mod:`eventpath.compare.execute`).
"""

from __future__ import annotations

import copy
import itertools
from dataclasses import dataclass, field
from typing import Any

from eventpath import api
from eventpath._eventpath import InputError
from eventpath.compare import seams

class _Remove:
    """``value`` of a change that deletes the key (one instance, also after pickling)."""

    def __reduce__(self):
        return "REMOVE"

    def __repr__(self) -> str:
        return "REMOVE"


REMOVE = _Remove()

#: vhost-net busy polling's window when on: 50 µs spans the gaps of a busy stream, so the
#: thread polls instead of sleeping (examples/vhost-busy-poll.toml shows both sides of it).
BUSYLOOP_US = 50


@dataclass(frozen=True)
class Choice:
    """One mechanism of a family: its name and the scenario keys that select it."""

    family: str
    name: str
    changes: tuple[tuple[str, Any], ...] = field(default=(), compare=False)

    def apply(self, sc: dict) -> None:
        for path, value in self.changes:
            if value is REMOVE:
                _remove(sc, path)
            else:
                seams.set_key(sc, path, copy.deepcopy(value))


def _remove(sc: dict, path: str) -> None:
    parts = path.split(".")
    nodes = sc.get("vm", []) if parts[:2] == ["vm", "*"] else [sc]
    rest = parts[2:] if parts[:2] == ["vm", "*"] else parts
    for node in nodes:
        for p in rest[:-1]:
            node = node.get(p) if isinstance(node, dict) else None
        if isinstance(node, dict):
            node.pop(rest[-1], None)


def _named(family: str, path: str, base: dict) -> list[Choice]:
    return [Choice(family, n, ((path, n),)) for n in seams.choices(base, path)]


def _io_core(base: dict) -> int:
    """A pCPU no vCPU is pinned to, for back ends that need dedicated cores: the highest free."""
    host = base.get("host") or {}
    cpu = api.profile(base["profile"])["cpu"]
    pcpus = host.get("pcpus") or int(cpu["sockets"]["value"] * cpu["cores_per_socket"]["value"])
    pinned = {p for vm in base.get("vm", []) for p in (vm.get("vcpu_pins") or [])}
    free = [c for c in range(pcpus) if c not in pinned]
    return free[-1] if free else pcpus - 1


def handling(base: dict) -> list[Choice]:
    """Request handling: every ``[host.io] handling``, expanded by the named sub-choices only it
    reads (ES2's ``switch``, the PMD's ``idle``: found as the ``[host.io]`` keys whose names
    the checker lists and that it refuses under another handling), plus vhost busy polling.
    A back end the checker refuses without I/O cores gets one (:func:`_io_core`)."""
    io_keys = [k for k in seams.keys(base, "host.io") if k not in ("handling", "cores")]
    sub_enums = {}
    for k in io_keys:
        probe = copy.deepcopy(base)
        seams.set_key(probe, f"host.io.{k}", seams.PROBE)
        msg = seams.refusal(probe) or ""
        if "variant" in msg and seams.names(msg):
            sub_enums[k] = seams.names(msg)
    out = []
    for h in seams.choices(base, "host.io.handling"):
        io: dict[str, Any] = {"handling": h}
        if "host.io.cores" in (seams.refusal(_variant(base, io)) or ""):
            io["cores"] = [_io_core(base)]
        # A sub-choice of another mode is refused as "only for handling = ...".
        own = {k: v for k, v in sub_enums.items() if "only for" not in (seams.refusal(_variant(base, {**io, k: v[0]})) or "")}
        pins = () if h == "vhost" else (("vm.*.net.vhost_pin", REMOVE),)
        for combo in itertools.product(*own.values()):
            sub = dict(zip(own, combo))
            name = "/".join([h, *combo])
            out.append(Choice("handling", name, (("host.io", {**io, **sub}), ("vm.*.net.busyloop_timeout_us", 0), *pins)))
        if h == "vhost":
            out.append(Choice("handling", "vhost+busy_poll",
                              (("host.io", io), ("vm.*.net.busyloop_timeout_us", BUSYLOOP_US))))
    return out


def _variant(base: dict, io: dict) -> dict:
    sc = copy.deepcopy(base)
    sc.setdefault("host", {})["io"] = dict(io)
    return sc


def families(base: dict) -> dict[str, list[Choice]]:
    """Every family's choices for scenario ``base`` (its VMs get each VM-side choice), in table
    order: one family per seam of DESIGN §2 (the host scheduler and notification suppression are
    not varied: docs/compare.md)."""
    if not base.get("vm"):
        raise InputError("compare: the scenario has no VM; a comparison needs at least one")
    return {
        "delivery": _named("delivery", "vm.*.interrupt_delivery", base),
        "handling": handling(base),
        "moderation": [Choice("moderation", n, (("vm.*.net.moderation", {"kind": n}),))
                       for n in seams.choices(base, "vm.*.net.moderation.kind")],
        "routing": _named("routing", "vm.*.interrupt_routing", base),
        "halt_poll": [Choice("halt_poll", "off", (("vm.*.halt_poll", REMOVE),)),
                      Choice("halt_poll", "on", (("vm.*.halt_poll", {}),))],
    }


def restrict(fams: dict[str, list[Choice]], only: dict[str, list[str] | None]) -> dict[str, list[Choice]]:
    """Keep the families named in ``only`` (all when it is empty), each limited to the names
    given (None: all of them). An unknown family or name is an :class:`InputError`."""
    if not only:
        return fams
    out = {}
    for fam, want in only.items():
        if fam not in fams:
            raise InputError(f"--vary {fam}: unknown mechanism family; expected one of {', '.join(fams)}")
        have = {c.name: c for c in fams[fam]}
        if want is None:
            out[fam] = fams[fam]
            continue
        for n in want:
            if n not in have:
                raise InputError(f"--vary {fam}={n}: unknown mechanism; {fam} offers {', '.join(have)}")
        out[fam] = [have[n] for n in dict.fromkeys(want)]
    return out


Cell = tuple[Choice, ...]


def cells(fams: dict[str, list[Choice]]) -> list[Cell]:
    """The product of the families, in family order."""
    return list(itertools.product(*fams.values()))


def label(cell: Cell) -> str:
    return " · ".join(c.name for c in cell) if cell else "as given"


def variant(base: dict, cell: Cell) -> dict:
    sc = copy.deepcopy(base)
    for c in cell:
        c.apply(sc)
    return sc
