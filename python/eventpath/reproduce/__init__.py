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

from eventpath import api, comparison, targets
from eventpath.comparison import PublishedRow as Row, published_miss as miss_ratio  # noqa: F401
from eventpath.reproduce import classes, ensemble, figure
from eventpath.reproduce.experiment import EXPERIMENTS, Axis, Experiment, Measured, register  # noqa: F401
from eventpath.reproduce.simulate import SCENARIOS, StalledFlow, simulate  # noqa: F401


def measure(exp_id: str, duration: float | None = None, step: Callable[[str], None] | None = None,
            seeds: int | None = None, converge: bool = False) -> dict:
    """Run experiment ``exp_id`` over an ensemble of ``seeds`` (default: the experiment's own)
    and return its doc (writes nothing: a cluster's worker runs this); with ``converge`` also
    at twice the seeds and at twice each run's length, to mark each row converged or not
    (``reproduce.ensemble``). ``step(label)`` is called after each of its runs."""
    e = EXPERIMENTS[exp_id]
    step = step or (lambda _label: None)
    n = seeds or e.seeds
    # A run the experiment repeats (a baseline two of its panels share) is simulated once.
    with api.memo():
        members = ensemble.run_members(e.compare, range(n), duration, step)
        rows = ensemble.combine(members)
        if converge:
            more = members + ensemble.run_members(e.compare, range(n, 2 * n), duration, step)
            longer = ensemble.run_members(e.compare, range(n), duration, step, duration_scale=2.0)
            ensemble.mark_converged(rows, ensemble.combine(more), ensemble.combine(longer))
    for r in rows:
        if r.published is not None and e.is_baseline(r.config):
            r.role = "calibration"
    doc = {"id": e.id, "title": e.title, "source": e.source, "profile": e.profile, "paper": paper_of(e),
           "seeds": n, "duration": duration, "baselines": list(e.baselines), "rows": [r.as_dict() for r in rows]}
    if e.notes:
        doc["notes"] = e.notes
    return doc


#: The seeds' files and the papers they are.
PAPERS = {"000_8734db7c67a9fb1f": "ES2", "001_057b634fca7e35c3": "ELVIS", "002_d9bb5eb44ca8e2e6": "DID",
          "003_9988edc85599e763": "CGR/AIR", "004_ee5e38d5cb394f30": "hBalance"}


def paper_of(e: Experiment) -> str:
    """The seed paper an experiment reproduces ("other" for today's patches and head-to-heads
    that name none, or name several)."""
    named = {p for f, p in PAPERS.items() if f in e.source}
    return named.pop() if len(named) == 1 and "head to head" not in e.title.lower() else "other"


def write(doc: dict, out: Path) -> None:
    """Write ``out/ID.json`` and draw ``out/ID.png`` for an experiment's doc; an
    ``eventpath sensitivity`` result beside it (``ID.sensitivity.json``) classes its misses, else
    the classes kept with the code (``reproduce.classes``) do, where they still apply."""
    sens = out / f"{doc['id']}.sensitivity.json"
    if sens.exists():
        comparison.classes_into(doc, json.loads(sens.read_text()))
    elif (kept := classes.stored(doc["id"])) is not None:
        classes.apply_stored(doc, kept)
    (out / f"{doc['id']}.json").write_text(json.dumps(doc, indent=2) + "\n")
    figure.draw(doc, out / f"{doc['id']}.png", EXPERIMENTS[doc["id"]].axis)


def runs_of(exp_id: str, seeds: int | None = None, converge: bool = False) -> int:
    """The runs experiment ``exp_id`` makes: its runs per member x its members (x 4 to converge:
    twice the members, and the members again at twice the length)."""
    e = EXPERIMENTS[exp_id]
    return e.runs * (seeds or e.seeds) * (4 if converge else 1)


def run(exp_id: str, out: Path, duration: float | None = None, progress: bool = True,
        seeds: int | None = None, converge: bool = False) -> dict:
    """Run experiment ``exp_id``; write ``out/ID.json`` and ``out/ID.png``; return the doc."""
    from tqdm import tqdm

    with tqdm(total=runs_of(exp_id, seeds, converge), desc=exp_id, unit="run", leave=False,
              disable=None if progress else True) as bar:
        def step(label: str) -> None:
            bar.set_postfix_str(label)
            bar.update(1)

        doc = measure(exp_id, duration, step, seeds, converge)
    write(doc, out)
    return doc


def run_many(ids: list[str], out: Path, duration: float | None = None, workers: int | None = None,
             scheduler: str | None = None, seeds: int | None = None, converge: bool = False) -> Iterator[dict]:
    """Run the experiments ``ids``, up to ``workers`` at once in separate processes (default:
    every core) or on the Dask scheduler at ``scheduler``; write each one's files and yield its
    doc, in the order of ``ids``, as each becomes available. One progress display counts the
    runs of all of them (in this process, run by run; elsewhere, experiment by experiment)."""
    from eventpath import executor

    with executor.start(scheduler, workers, len(ids)) as ex, \
            executor.Progress(sum(runs_of(i, seeds, converge) for i in ids), "reproduce", "run") as bar:
        if ex.in_process:
            for i in ids:
                doc = measure(i, duration, lambda label, i=i: bar.update(1, f"{i}: {label}"), seeds, converge)
                write(doc, out)
                yield doc
            return
        held: dict[int, dict] = {}
        nxt = 0
        for k, doc in ex.map(measure, [(i, duration, None, seeds, converge) for i in ids]):
            bar.update(runs_of(ids[k], seeds, converge), ids[k])
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
#: Per paper (issue 47): calibration, directions, magnitudes, misses by class, not converged.
scorecard_v2 = comparison.scorecard_v2
MISS_CLASSES = comparison.MISS_CLASSES
print_scorecard_v2 = comparison.print_scorecard_v2


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
                      workers: int | None = None, scheduler: str | None = None, seeds: int | None = None,
                      converge: bool = False) -> list[dict]:
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
    if seeds is not None:
        seeds = args.integer(seeds, "reproduce", "seeds", 1, 64, "seeds per row")
    if not isinstance(converge, bool):
        raise args.refuse("reproduce", "converge", converge, "True or False")
    duration = check_duration(duration)
    if duration is not None:
        _eventpath.check_duration("duration", duration)
    out = args.path(out, "reproduce", "out", "a directory")
    d = made(out, "reproduce: out")
    return list(run_many(list(ids), d, duration=duration, workers=workers, scheduler=scheduler, seeds=seeds,
                         converge=converge))


class _CallableModule(types.ModuleType):
    """This module called is :func:`run_reproductions`: ``eventpath.reproduce(...)``."""

    def __call__(self, *args, **kwargs) -> list[dict]:
        return run_reproductions(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
