"""Reproductions of the seeds' experiments: simulated values beside the published ones.

Each experiment (``es2``, ``es2_multi``, ``elvis``, ``did``, ``sriov``, ``sriov_apps``, ``today``, ``routing``, ``hbalance``, ``seeds_today``) is a set of scenarios (files in
``reproduce/scenarios/`` or layout functions) run through one helper
(:func:`~eventpath.reproduce.simulate.simulate`: load, apply a variant, run, fail loudly on a
stalled flow); the published values it is compared with are data beside it
(``reproduce/published/ID.toml``, each with its source). ``ID.json`` follows the contract::

    {"id", "title", "source", "profile",
     "rows": [{"config", "metric", "unit", "simulated", "published", "verdict", "role"}]}

``published`` is the seed's value or null. Published values are comparison data only: nothing
here feeds them into a model. ``verdict`` applies the issue's bar to rows with a published
value (``eventpath.comparison``, shared with ``kvm compare``): a percentage (share, EHT, rise)
must be within ±10 points, a rate within ±25 %; it is "ok", "miss", or null where nothing is
published (or a published rate is 0 and only the simulated value's 0 can match). ``role`` is
"calibration" for a row its profile's fit targets (``profiles/calibration/PROFILE.toml``,
``eventpath calibrate``) and "prediction" otherwise: predictions are the test of the model.
"""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

if TYPE_CHECKING:
    import os

from eventpath import comparison, targets
from eventpath.comparison import PublishedRow as Row, published_miss as miss_ratio  # noqa: F401
from eventpath.reproduce import figure
from eventpath.reproduce.experiment import EXPERIMENTS, Axis, Experiment, Measured, register  # noqa: F401
from eventpath.reproduce.simulate import SCENARIOS, StalledFlow, simulate  # noqa: F401


def measure(exp_id: str, duration: float | None = None, step: Callable[[str], None] | None = None) -> dict:
    """Run experiment ``exp_id`` and return its doc (writes nothing: a cluster's worker runs this).
    ``step(label)`` is called after each of its runs."""
    e = EXPERIMENTS[exp_id]
    rows = e.compare(duration, step or (lambda _label: None))
    target = is_target(e.profile)
    for r in rows:
        if r.published is not None and target(e.id, r.config, r.metric):
            r.role = "calibration"
    doc = {"id": e.id, "title": e.title, "source": e.source, "profile": e.profile,
           "rows": [r.as_dict() for r in rows]}
    if e.notes:
        doc["notes"] = e.notes
    return doc


def write(doc: dict, out: Path) -> None:
    """Write ``out/ID.json`` and draw ``out/ID.png`` for an experiment's doc."""
    (out / f"{doc['id']}.json").write_text(json.dumps(doc, indent=2) + "\n")
    figure.draw(doc, out / f"{doc['id']}.png", EXPERIMENTS[doc["id"]].axis)


def run(exp_id: str, out: Path, duration: float | None = None, progress: bool = True) -> dict:
    """Run experiment ``exp_id``; write ``out/ID.json`` and ``out/ID.png``; return the doc."""
    from tqdm import tqdm

    with tqdm(total=EXPERIMENTS[exp_id].runs, desc=exp_id, unit="run", leave=False,
              disable=None if progress else True) as bar:
        def step(label: str) -> None:
            bar.set_postfix_str(label)
            bar.update(1)

        doc = measure(exp_id, duration, step)
    write(doc, out)
    return doc


def run_many(ids: list[str], out: Path, duration: float | None = None, workers: int | None = None,
             scheduler: str | None = None) -> Iterator[dict]:
    """Run the experiments ``ids``, up to ``workers`` at once in separate processes (default:
    every core) or on the Dask scheduler at ``scheduler``; write each one's files and yield its
    doc, in the order of ``ids``, as each becomes available. One progress display counts the
    runs of all of them (in this process, run by run; elsewhere, experiment by experiment)."""
    from eventpath import executor

    with executor.start(scheduler, workers, len(ids)) as ex, \
            executor.Progress(sum(EXPERIMENTS[i].runs for i in ids), "reproduce", "run") as bar:
        if ex.in_process:
            for i in ids:
                doc = measure(i, duration, lambda label, i=i: bar.update(1, f"{i}: {label}"))
                write(doc, out)
                yield doc
            return
        held: dict[int, dict] = {}
        nxt = 0
        for k, doc in ex.map(measure, [(i, duration) for i in ids]):
            bar.update(EXPERIMENTS[ids[k]].runs, ids[k])
            held[k] = doc
            while nxt in held:
                write(held[nxt], out)
                yield held.pop(nxt)
                nxt += 1


def profiles_of() -> dict[str, str]:
    """Every experiment's ID and its profile, in registration order (for calibration targets)."""
    return {i: e.profile for i, e in EXPERIMENTS.items()}


def is_target(profile: str) -> Callable[[str, str, str], bool]:
    """A test of (experiment, config, metric) against built-in ``profile``'s calibration
    targets (``profiles/calibration/PROFILE.toml``; an entry without ``rows`` takes every row of
    its experiment). No targets (no profile, or a profile without free parameters and so
    without a calibration file, as ``hbalance``): every row is a prediction."""
    from eventpath import _eventpath

    builtin = _eventpath.builtin_profile_text(profile) if profile else None
    if builtin is None or builtin[1] is None:
        return targets.is_target([])
    return targets.is_target(targets.load_targets(profile, profiles_of()))


#: Per profile and role: rows within tolerance of those with a published value, and the misses.
scorecard = comparison.published_scorecard
print_scorecard = comparison.print_published_scorecard
#: The rows as an aligned table with the simulated/published ratio and the verdict.
print_table = comparison.print_published_table


# Register the experiments.
from eventpath.reproduce import es2  # noqa: E402,F401
from eventpath.reproduce import es2_multi  # noqa: E402,F401
from eventpath.reproduce import elvis  # noqa: E402,F401
from eventpath.reproduce import did  # noqa: E402,F401
from eventpath.reproduce import sriov  # noqa: E402,F401
from eventpath.reproduce import sriov_apps  # noqa: E402,F401
from eventpath.reproduce import today  # noqa: E402,F401
from eventpath.reproduce import routing  # noqa: E402,F401
from eventpath.reproduce import hbalance  # noqa: E402,F401
from eventpath.reproduce import seeds_today  # noqa: E402,F401


def run_reproductions(experiments: str | list[str], out: str | os.PathLike, *, duration: float | None = None,
                      workers: int | None = None, scheduler: str | None = None) -> list[dict]:
    """``eventpath.reproduce(...)``: run reproductions by ID (``"es2-table1"``, a list of IDs,
    or ``"all"``; see ``eventpath reproduce --list``), writing ``ID.json`` and ``ID.png`` into
    ``out``, in ``workers`` local processes or on the Dask scheduler at ``scheduler``; returns
    each one's document (our values beside the published ones) in the order asked. Bad
    arguments raise :class:`eventpath.InputError` before anything runs."""
    from eventpath import _eventpath, args
    from eventpath._eventpath import InputError
    from eventpath.api import check_duration
    from eventpath.outdir import made

    ids = list(EXPERIMENTS) if experiments == "all" else [experiments] if isinstance(experiments, str) else experiments
    expected = "an experiment ID, a list of them or 'all'"
    if not isinstance(ids, (list, tuple)) or not ids:
        raise args.refuse("reproduce", "experiments", experiments, expected)
    for i in ids:
        if args.text(i, "reproduce", "experiment", expected) not in EXPERIMENTS:
            raise InputError(f"reproduce: unknown experiment {args.short(i)}; known: {', '.join(EXPERIMENTS)} (or 'all')")
    if workers is not None:
        workers = args.integer(workers, "reproduce", "workers", 1, 1024, "processes")
    duration = check_duration(duration)
    if duration is not None:
        _eventpath.check_duration("duration", duration)
    out = args.path(out, "reproduce", "out", "a directory")
    d = made(out, "reproduce: out")
    return list(run_many(list(ids), d, duration=duration, workers=workers, scheduler=scheduler))


class _CallableModule(types.ModuleType):
    """This module called is :func:`run_reproductions`: ``eventpath.reproduce(...)``."""

    def __call__(self, *args, **kwargs) -> list[dict]:
        return run_reproductions(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
