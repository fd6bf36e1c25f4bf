"""The one way an experiment runs the simulator: load a scenario, apply a variant, run it, and
fail loudly on a stalled flow.

Every reproduction (``es2``, ``es2_multi``, ``elvis``, ``did``: through :func:`simulate`, or
:func:`runner` for a QoS search) and every simulator twin of ``eventpath kvm compare`` runs
through here. The liveness watchdog's ``stalled_flows`` (docs/summary.md) name a flow that
stopped making progress although its threads ran: a model bug, never a result. A run with one
raises :class:`StalledFlow` with the flow's state instead of handing back numbers that would
read as a quiet "miss".

A *variant* is either a layout function's output (pass the dict it builds) or ``changes`` to a
scenario: ``{dotted key: value}`` (list indices as numbers: ``vm.0.interrupt_delivery``;
missing tables are created), :data:`REMOVE` as the value deletes the key.
"""

from __future__ import annotations

import copy
import os
import tomllib
from pathlib import Path
from typing import Any, Callable

from eventpath import api, liveness

#: Where the experiments' scenario files live.
SCENARIOS = Path(__file__).parent / "scenarios"


class _Remove:
    def __repr__(self) -> str:
        return "REMOVE"


#: A ``changes`` value that deletes its key from the scenario.
REMOVE: Any = _Remove()


class StalledFlow(RuntimeError):
    """A run's liveness watchdog reported a stalled flow (a model bug, never a result), or gave
    no verdict at all. The message names the run and, per flow, the VM, when it stopped, whether
    it recovered and its event path's state; ``flows`` holds the summary's entries."""

    def __init__(self, message: str, flows: list[dict] | None = None):
        super().__init__(message)
        self.flows = list(flows or [])

    def __reduce__(self):  # crosses process pools (eventpath reproduce all)
        return (StalledFlow, (self.args[0], self.flows))


def load(scenario: str | os.PathLike | dict, changes: dict[str, Any] | None = None) -> dict:
    """``scenario`` as a dict (a file is read; a dict is copied), with ``changes`` applied."""
    if isinstance(scenario, dict):
        sc = copy.deepcopy(scenario)
    else:
        with open(scenario, "rb") as f:
            sc = tomllib.load(f)
    for key, value in (changes or {}).items():
        _apply(sc, key, value)
    return sc


def _apply(sc: dict, key: str, value: Any) -> None:
    *parents, last = key.split(".")
    node: Any = sc
    for p in parents:
        node = node[int(p)] if isinstance(node, list) else node.setdefault(p, {})
    if value is REMOVE:
        if last not in node:
            raise KeyError(f"variant: cannot remove `{key}`: the scenario has no such key")
        del node[last]
    elif isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value


def check(result: api.Result, what: str) -> api.Result:
    """``result``, or :class:`StalledFlow` if its run had a stalled flow or its summary no
    liveness verdict (:mod:`eventpath.liveness`); ``what`` names the run."""
    status, why = liveness.verdict(result.summary)
    if status == liveness.OK:
        return result
    flows = result.summary.get("stalled_flows") or []
    if status != liveness.STALLED:
        raise StalledFlow(f"{what} (scenario {result.summary.get('scenario')!r}, seed {result.summary.get('seed')}): "
                          f"{status}, not a result: {why}", flows)
    lines = []
    for st in flows:
        rec = st.get("recovered_s")
        lines.append(f"VM {st['vm']} made no progress from {st['stalled_from_s']:.4f} s (seen at "
                     f"{st['detected_s']:.4f} s, " + ("never recovered" if rec is None else f"recovered at {rec:.4f} s")
                     + f"); state: {st.get('state', '?')}")
    raise StalledFlow(f"{what} (scenario {result.summary.get('scenario')!r}, seed {result.summary.get('seed')}): "
                      f"stalled flow, a model bug and not a result: " + "; ".join(lines), flows)


def simulate(scenario: str | os.PathLike | dict, changes: dict[str, Any] | None = None, *,
             what: str, duration: float | None = None, seed: int | None = None) -> api.Result:
    """Run ``scenario`` (a file, e.g. ``SCENARIOS / "did-fig4.toml"``, or a dict: a layout
    function's output) with ``changes`` applied, for ``duration`` (None: the scenario's) and
    ``seed``; raise :class:`StalledFlow` if a flow stalled. ``what`` names the run in that
    error. A file without changes runs as the file (its errors name it)."""
    if isinstance(scenario, dict) or changes:
        r = api.run(load(scenario, changes) if changes else scenario, duration=duration, seed=seed)
    else:
        r = api.run(scenario, duration=duration, seed=seed)
    return check(r, what)


def runner(what: str) -> Callable[..., api.Result]:
    """:func:`simulate` as a search's ``run(scenario, duration=, seed=)`` (``eventpath.qos``):
    each run of the search fails loudly on a stalled flow."""
    return lambda scenario, duration=None, seed=None: simulate(scenario, what=what, duration=duration, seed=seed)
