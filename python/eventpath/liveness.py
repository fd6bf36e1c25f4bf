"""Whether a run's numbers are a result: the liveness watchdog's verdict, read from its summary.

The simulator's watchdog (DESIGN §6, docs/summary.md) lists in ``stalled_flows`` every flow
that made no progress while its threads got to run: a model bug, never a result. A summary
whose ``stalled_flows`` is null or absent carries no verdict at all (the KVM testbed has no
watchdog), so its numbers cannot be told from a stall's either. Every command that turns runs
into results asks here, so that they agree: ``compare`` ranks no cell with such a run on any
seed, ``sweep`` and ``qos`` mark the run (``liveness``), and the reproductions fail loudly
(:func:`eventpath.reproduce.simulate.check`).
"""

from __future__ import annotations

from typing import Any

from eventpath import summary

#: The run is a result.
OK = "ok"
#: A flow stalled: a model bug.
STALLED = "stalled"
#: The summary has no watchdog verdict.
UNJUDGED = "unjudged"


def verdict(s: dict[str, Any]) -> tuple[str, str | None]:
    """Run ``s``'s verdict (its summary): (:data:`OK`, None), or (:data:`STALLED` or
    :data:`UNJUDGED`, a one-line reason)."""
    flows = summary.stalled_flows(s)
    if flows is None:
        return UNJUDGED, "no liveness verdict (stalled_flows is null): a stalled flow could not be told apart"
    if not flows:
        return OK, None
    return STALLED, "; ".join(_flow(st) for st in flows) + " (a model bug, not a result)"


def _flow(st: dict[str, Any]) -> str:
    rec = st.get("recovered_s")
    return (f"the flow of VM {st.get('vm')} stalled from {st.get('stalled_from_s', float('nan')):.4f} s, "
            + ("never recovered" if rec is None else f"recovered at {rec:.4f} s"))
