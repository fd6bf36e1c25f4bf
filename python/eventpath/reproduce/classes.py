"""The classes of each reproduction's misses, kept with the code (issue 47: every miss
classified, and ``reproduce all``'s scorecard v2 counting the classes).

``eventpath sensitivity`` classes a miss parametric or structural in minutes per experiment, too
long to repeat on every ``reproduce``. ``eventpath sensitivity ID --keep`` therefore stores its
verdicts here, in ``classes/ID.json``: each miss's class, its evidence and its strongest movers,
with the commit and the settings they were found at. ``reproduce`` applies a stored class to a
row only while that row still misses **on the same side** of its published value (a row that now
misses the other way, or a new miss, stays unclassified until the next ``--keep``), and says the
class is stored, not measured by this run: the verdict is a diagnosis of the model at that
commit. A ``ID.sensitivity.json`` in ``reproduce``'s output directory (a fresh screen) wins over
the stored one.
"""

from __future__ import annotations

import json
from pathlib import Path

#: Where the kept classes live: one ``ID.json`` per experiment.
DIR = Path(__file__).resolve().parent / "classes"
#: Movers kept per miss (the tornado's strongest; the full screen is ``ID.sensitivity.json``).
MOVERS = 3


def trim(sens: dict, provenance: dict) -> dict:
    """What ``--keep`` stores of a sensitivity doc: its settings and provenance, and per classed
    row its config, metric, values, class, evidence and strongest movers."""
    rows = []
    for d in sens["rows"]:
        if "miss_class" not in d:
            continue
        rows.append({k: d.get(k) for k in ("config", "metric", "role", "unit", "simulated", "published",
                                           "published_bounds", "miss_class", "evidence")}
                    | {"movers": d["movers"][:MOVERS]})
    return {"id": sens["id"], "profile": sens["profile"], "commit": provenance.get("commit"),
            "uncommitted_changes": provenance.get("uncommitted_changes"), "duration": sens["duration"],
            "seeds": sens["seeds"], "method": sens["method"], "rows": rows}


def keep(sens: dict, provenance: dict, where: Path = DIR) -> Path:
    """Store ``sens``'s verdicts as ``where/ID.json``; return the path."""
    where.mkdir(parents=True, exist_ok=True)
    path = where / f"{sens['id']}.json"
    path.write_text(json.dumps(trim(sens, provenance), indent=2) + "\n")
    return path


def stored(exp_id: str, where: Path = DIR) -> dict | None:
    """The kept classes of ``exp_id`` as a sensitivity-like doc whose evidence names its
    commit, or None."""
    path = where / f"{exp_id}.json"
    if not path.exists():
        return None
    doc = json.loads(path.read_text())
    at = (doc.get("commit") or "an unknown commit")[:12]
    for d in doc["rows"]:
        d["evidence"] = f"stored by eventpath sensitivity at {at}: {d['evidence']}"
    return doc


def _side(d: dict) -> float:
    from eventpath.comparison import published_miss

    b = d.get("published_bounds")
    return published_miss(d["simulated"], d["published"], d["unit"], tuple(b) if b else None) or 0.0


def apply_stored(doc: dict, sens: dict) -> int:
    """Give each miss of reproduce doc ``doc`` the stored class of its row where it still misses
    on the side it missed when classed; return how many rows were classed."""
    by_row = {(d["config"], d["metric"]): d for d in sens["rows"]}
    n = 0
    for row in doc["rows"]:
        c = by_row.get((row["config"], row["metric"]))
        if c is None or row.get("verdict") != "miss" or row.get("simulated") is None or c.get("simulated") is None:
            continue
        if _side(row) * _side(c) > 0:
            row["miss_class"], row["miss_evidence"] = c["miss_class"], c["evidence"]
            n += 1
    return n
