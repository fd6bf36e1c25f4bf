"""Reproductions of the seeds' experiments: simulated values beside the published ones.

Each experiment is a set of scenario files (``reproduce/scenarios/``) plus the published
values it is compared with. ``ID.json`` follows the contract::

    {"id", "title", "source", "profile",
     "rows": [{"config", "metric", "unit", "simulated", "published", "verdict", "role"}]}

``published`` is the seed's value or null. Published values are comparison data only: nothing
here feeds them into a model. ``verdict`` applies the issue's bar to rows with a published
value: a percentage (share, EHT, rise) must be within ±10 points, a rate within ±25 %; it is
"ok", "miss", or null where nothing is published (or a published rate is 0 and only the
simulated value's 0 can match). ``role`` is "calibration" for a row its profile's fit targets
(``profiles/calibration/PROFILE.toml``, ``eventpath calibrate``) and "prediction" otherwise:
predictions are the test of the model.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

SCENARIOS = Path(__file__).parent / "scenarios"


@dataclass
class Row:
    """One compared value."""

    config: str
    metric: str
    unit: str
    simulated: float | None
    published: float | None

    #: "calibration" when the row is a target of its profile's fit, else "prediction".
    role: str = "prediction"

    def verdict(self) -> str | None:
        """The reproduction bar: percentages within ±10 points, rates within ±25 %."""
        e = miss_ratio(self.simulated, self.published, self.unit)
        return None if e is None else ("ok" if abs(e) <= 1.0 else "miss")

    def as_dict(self) -> dict:
        return {"config": self.config, "metric": self.metric, "unit": self.unit,
                "simulated": self.simulated, "published": self.published, "verdict": self.verdict(),
                "role": self.role}


def miss_ratio(sim: float | None, pub: float | None, unit: str) -> float | None:
    """How far ``sim`` is from ``pub`` in tolerances (signed; |x| <= 1 is within the bar):
    percentages against ±10 points, rates against ±25 %. A published 0 (a rate that posted
    interrupts remove) is met only by 0: 0 or ±2. None without both values."""
    if sim is None or pub is None:
        return None
    if unit == "%":
        return (sim - pub) / 10.0
    if pub == 0:
        return 0.0 if sim == 0 else 2.0
    return (sim / pub - 1.0) / 0.25


@dataclass
class Experiment:
    """A reproducible experiment of a seed."""

    id: str
    title: str
    source: str
    #: The built-in profile its scenarios use (its calibration targets decide the rows' roles).
    profile: str
    #: Runs the simulations; gets the duration override (or None) and a progress callback.
    rows: Callable[[float | None, Callable[[str], None]], list[Row]]
    notes: list[str] = field(default_factory=list)
    #: The runs it makes, for the progress bar.
    runs: int = 1


EXPERIMENTS: dict[str, Experiment] = {}


def register(e: Experiment) -> Experiment:
    EXPERIMENTS[e.id] = e
    return e


def run(exp_id: str, out: Path, duration: float | None = None, progress: bool = True) -> dict:
    """Run experiment ``exp_id``; write ``out/ID.json`` and ``out/ID.png``; return the doc."""
    from tqdm import tqdm

    e = EXPERIMENTS[exp_id]
    with tqdm(total=e.runs, desc=exp_id, unit="run", leave=False, disable=None if progress else True) as bar:
        def step(label: str) -> None:
            bar.set_postfix_str(label)
            bar.update(1)

        rows = e.rows(duration, step)
    target = is_target(e.profile)
    for r in rows:
        if r.published is not None and target(e.id, r.config, r.metric):
            r.role = "calibration"
    doc = {"id": e.id, "title": e.title, "source": e.source, "profile": e.profile,
           "rows": [r.as_dict() for r in rows]}
    if e.notes:
        doc["notes"] = e.notes
    (out / f"{e.id}.json").write_text(json.dumps(doc, indent=2) + "\n")
    from eventpath.plots import reproduction_figure

    reproduction_figure(doc, out / f"{e.id}.png")
    return doc


def _run_quiet(exp_id: str, out: Path, duration: float | None) -> dict:
    return run(exp_id, out, duration, progress=False)


def run_many(ids: list[str], out: Path, duration: float | None = None, workers: int | None = None) -> Iterator[dict]:
    """Run the experiments ``ids``, up to ``workers`` at once in separate processes (default:
    every core); yield their docs in the order of ``ids`` as each becomes available. One
    bar counts the runs of all of them."""
    import os
    from concurrent.futures import ProcessPoolExecutor
    from tqdm import tqdm

    workers = min(workers or os.cpu_count() or 1, len(ids))
    if workers <= 1:
        for i in ids:
            yield run(i, out, duration)
        return
    with tqdm(total=sum(EXPERIMENTS[i].runs for i in ids), desc="reproduce", unit="run", disable=None) as bar, \
            ProcessPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(_run_quiet, i, out, duration) for i in ids]
        for i, f in zip(ids, futures):
            doc = f.result()
            bar.update(EXPERIMENTS[i].runs)
            yield doc


def is_target(profile: str) -> Callable[[str, str, str], bool]:
    """A test of (experiment, config, metric) against built-in ``profile``'s calibration
    targets (``profiles/calibration/PROFILE.toml``; an entry without ``rows`` takes every row of
    its experiment). No targets: every row is a prediction."""
    from eventpath.calibrate import load_targets

    spec = load_targets(profile) if profile else []
    return lambda exp, config, metric: any(
        t.experiment == exp and (t.rows is None or f"{config}/{metric}" in t.rows) for t in spec)


def scorecard(docs: list[dict]) -> list[dict]:
    """Per profile and role: rows within tolerance of those with a published value, and the
    misses (config/metric of each experiment)."""
    cards: dict[tuple[str, str], dict] = {}
    for d in docs:
        for r in d["rows"]:
            if r["verdict"] is None:
                continue
            c = cards.setdefault((d.get("profile", "?"), r.get("role", "prediction")),
                                 {"profile": d.get("profile", "?"), "role": r.get("role", "prediction"),
                                  "ok": 0, "rows": 0, "misses": []})
            c["rows"] += 1
            if r["verdict"] == "ok":
                c["ok"] += 1
            else:
                c["misses"].append(f"{d['id']}:{r['config']}/{r['metric']}")
    return [cards[k] for k in sorted(cards)]


def print_scorecard(cards: list[dict]) -> None:
    print("scorecard (rows within tolerance / rows with a published value; predictions are the test "
          "of the model, calibration rows were fitted):")
    for c in cards:
        print(f"  {c['profile']:8s} {c['role']:12s} {c['ok']:3d} / {c['rows']:3d}"
              f"  ({100 * c['ok'] / c['rows']:5.1f} %)")
        for m in c["misses"]:
            print(f"      miss: {m}")


def print_table(doc: dict) -> None:
    """Print the rows as an aligned table with the simulated/published ratio and the verdict."""
    print(f"{doc['id']}: {doc['title']} [{doc['source']}]")
    print(f"  {'config':18s} {'metric':26s} {'simulated':>12s} {'published':>12s} {'sim/pub':>8s}  {'unit':8s} bar   role")
    for r in doc["rows"]:
        sim, pub = r["simulated"], r["published"]
        ratio = f"{sim / pub:8.2f}" if sim is not None and pub else f"{'':8s}"
        fs = lambda v: f"{v:12,.2f}" if v is not None else f"{'—':>12s}"  # noqa: E731
        role = "calib." if r.get("role") == "calibration" else ""
        print(f"  {r['config']:18s} {r['metric']:26s} {fs(sim)} {fs(pub)} {ratio}  {r['unit']:8s} {r.get('verdict') or '':5s} {role}")


# Register the experiments.
from eventpath.reproduce import es2  # noqa: E402,F401
from eventpath.reproduce import es2_multi  # noqa: E402,F401
from eventpath.reproduce import elvis  # noqa: E402,F401
from eventpath.reproduce import did  # noqa: E402,F401
