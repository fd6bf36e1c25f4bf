"""Reproductions of the seeds' experiments: simulated values beside the published ones.

Each experiment is a set of scenario files (``reproduce/scenarios/``) plus the published
values it is compared with. ``ID.json`` follows the contract::

    {"id", "title", "source", "rows": [{"config", "metric", "unit", "simulated", "published", "verdict"}]}

``published`` is the seed's value or null. Published values are comparison data only: nothing
here feeds them into a model. ``verdict`` applies the issue's bar to rows with a published
value: a percentage (share, EHT, rise) must be within ±10 points, a rate within ±25 %; it is
"ok", "miss", or null where nothing is published (or a published rate is 0 and only the
simulated value's 0 can match).
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

    def verdict(self) -> str | None:
        """The reproduction bar: percentages within ±10 points, rates within ±25 %."""
        sim, pub = self.simulated, self.published
        if sim is None or pub is None:
            return None
        if self.unit == "%":
            ok = abs(sim - pub) <= 10.0
        elif pub == 0:
            ok = sim == 0
        else:
            ok = abs(sim / pub - 1.0) <= 0.25
        return "ok" if ok else "miss"

    def as_dict(self) -> dict:
        return {"config": self.config, "metric": self.metric, "unit": self.unit,
                "simulated": self.simulated, "published": self.published, "verdict": self.verdict()}


@dataclass
class Experiment:
    """A reproducible experiment of a seed."""

    id: str
    title: str
    source: str
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
    doc = {"id": e.id, "title": e.title, "source": e.source, "rows": [r.as_dict() for r in rows]}
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


def print_table(doc: dict) -> None:
    """Print the rows as an aligned table with the simulated/published ratio and the verdict."""
    print(f"{doc['id']}: {doc['title']} [{doc['source']}]")
    print(f"  {'config':18s} {'metric':26s} {'simulated':>12s} {'published':>12s} {'sim/pub':>8s}  {'unit':8s} bar")
    for r in doc["rows"]:
        sim, pub = r["simulated"], r["published"]
        ratio = f"{sim / pub:8.2f}" if sim is not None and pub else f"{'':8s}"
        fs = lambda v: f"{v:12,.2f}" if v is not None else f"{'—':>12s}"  # noqa: E731
        print(f"  {r['config']:18s} {r['metric']:26s} {fs(sim)} {fs(pub)} {ratio}  {r['unit']:8s} {r.get('verdict') or ''}")


# Register the experiments.
from eventpath.reproduce import es2  # noqa: E402,F401
from eventpath.reproduce import elvis  # noqa: E402,F401
