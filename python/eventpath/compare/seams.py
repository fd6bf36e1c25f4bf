"""What the seams offer, read from the simulator's own scenario checker.

The scenario parser refuses a name no enum has with the list of names it accepts
(``crates/sim/src/scenario/de.rs``: "unknown variant ``, expected one of `a`, `b`"), and an
unknown key with the list of keys of its table. Asking it with a name no seam can have
(``"\\x01"``) gives exactly the names a seam offers today — so a mechanism added to a seam
later appears in ``eventpath compare`` without a line changed here. Nothing in this module
knows a mechanism's name.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from eventpath import _eventpath
from eventpath._eventpath import InputError

#: A name no enum variant, table key or workload kind has.
PROBE = "\x01"

# The name list that ends a refusal: `a`, `b` or `c` (serde) or "a", "b" (the moderation
# table's own message).
_LIST = re.compile(r"expected (?:one of )?((?:[`\"][^`\"]*[`\"](?:, | or )?)+)")
_NAME = re.compile(r"[`\"]([^`\"]*)[`\"]")


class SeamChanged(RuntimeError):
    """The checker no longer answers a probe with a list of names: this module must follow it."""


def set_key(sc: dict, path: str, value: Any) -> None:
    """Set dotted ``path`` in ``sc``; ``vm.*.`` sets it in every VM, missing tables are made."""
    parts = path.split(".")
    if parts[:2] == ["vm", "*"]:
        for vm in sc.get("vm", []):
            _set(vm, parts[2:], value)
    else:
        _set(sc, parts, value)


def _set(node: dict, parts: list[str], value: Any) -> None:
    for p in parts[:-1]:
        node = node.setdefault(p, {})
    node[parts[-1]] = value


def refusal(sc: dict, seed: int | None = None, duration: float | None = None) -> str | None:
    """The checker's one-line refusal of scenario ``sc``, or None if it would run."""
    try:
        _eventpath.check_json(json.dumps(sc), "<compare>", seed, duration)
    except InputError as e:
        return str(e)
    return None


def names(message: str) -> list[str]:
    """The names a refusal lists as allowed, in its order (empty if it lists none)."""
    m = _LIST.search(message)
    return [n for n in _NAME.findall(m.group(1)) if n != PROBE] if m else []


def choices(base: dict, path: str) -> list[str]:
    """The names the key at ``path`` accepts in scenario ``base`` (e.g. ``vm.*.interrupt_delivery``)."""
    sc = copy.deepcopy(base)
    set_key(sc, path, PROBE)
    msg = refusal(sc)
    found = names(msg or "")
    if not found:
        raise SeamChanged(f"the scenario checker lists no names for `{path}` (it said: {msg!r})")
    return found


def keys(base: dict, table: str) -> list[str]:
    """The keys the table at dotted ``table`` accepts (e.g. ``host.io``)."""
    return choices(base, f"{table}.{PROBE}") if table else []


def workload_kinds(base: dict) -> list[str]:
    """Every workload kind the scenario schema knows."""
    return choices(base, "vm.*.workload.kind")
