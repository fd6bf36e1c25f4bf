"""``eventpath calibrate``: fit a profile's free parameters to its calibration targets (issue 12).

The protocol, as gem5 and the network simulators validate: a parameter no seed states is a
first-principles prior; where the model's outcome hinges on it, the profile may declare it free
(``free = { min, max }``, a physically defensible range said in its ``source``). The fit sets
all free parameters of a profile at once on **all of its calibration rows** (issue 47: every
row of a baseline configuration — the paper's host without its mechanism, each experiment's
``baselines`` — with a published value or a stated regime, in every experiment on the profile)
— one value set per profile, used by every experiment on it, never per experiment — and every
other row stays a *prediction*: no mechanism's row is ever fitted. ``--targets FILE`` (the
format of ``profiles/calibration/es2.toml``) fits named rows instead, for a what-if. At most one
free parameter per three targets.

Optimizer: CMA-ES (the ``cma`` package, Hansen's reference implementation; one free parameter
is searched on a grid instead, as CMA-ES needs two dimensions). It is
derivative-free and tolerant of the noise of a stochastic simulator, keeps to box bounds,
evaluates a whole generation at once (so workers run in parallel), and is deterministic given
its seed — which makes ``--resume`` exact: the evaluation log answers the points already
evaluated and the search continues where it stopped.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from eventpath import _eventpath
from eventpath import targets as targets_mod
from eventpath._eventpath import InputError
from eventpath.comparison import published_miss
from eventpath.targets import TargetSpec

#: A move of each fitted value for the identifiability report (±10 %).
NUDGE = 0.10
#: A target moving less than this many tolerances under every nudge does not constrain it.
UNCONSTRAINED = 0.1


@dataclass(frozen=True)
class Free:
    """A free parameter of a profile."""

    key: str
    prior: float
    lo: float
    hi: float
    unit: str


def load_targets(profile: str, path: str | os.PathLike | None = None) -> list[TargetSpec]:
    """The calibration targets of ``profile``: without ``path``, every experiment on it that
    declares baseline configurations, all of its calibration rows (``rows=None``); with it, the
    file's entries, checked against the registered reproductions (``eventpath.targets``)."""
    from eventpath.reproduce import EXPERIMENTS, profiles_of

    if path is not None:
        return targets_mod.load_targets(profile, profiles_of(), path)
    spec = [TargetSpec(e.id, None, 1.0) for e in EXPERIMENTS.values() if e.profile == profile and e.baselines]
    if not spec:
        raise InputError(f"profile {profile}: no experiment on it declares baseline configurations, so it has no "
                         "calibration rows; give --targets FILE (format: profiles/calibration/es2.toml)")
    return spec


def free_params(profile: str) -> list[Free]:
    """The parameters ``profile`` declares free, in its order."""
    doc = json.loads(_eventpath.profile_json(profile))
    out = []
    for section, table in doc.items():
        if not isinstance(table, dict):
            continue
        for name, p in table.items():
            if isinstance(p, dict) and "free" in p:
                fr = p["free"]
                out.append(Free(f"{section}.{name}", fr.get("prior", p["value"]), fr["min"], fr["max"], p["unit"]))
    return out


# --- evaluation ----------------------------------------------------------------------------

def evaluate(profile: str, values: dict[str, float], experiments: list[str], seeds: list[int],
             duration: float | None) -> dict[str, dict]:
    """Run ``experiments`` at ``values`` for every seed; each row (``exp|config|metric``) with
    its seed-mean simulated value, published value and unit."""
    from eventpath import api
    from eventpath.reproduce import EXPERIMENTS

    acc: dict[str, dict] = {}
    for seed in seeds:
        with api.memo(), api.overriding(profile, values, seed):
            for e in experiments:
                exp = EXPERIMENTS[e]
                for r in exp.compare(duration, lambda _label: None):
                    a = acc.setdefault(f"{e}|{r.config}|{r.metric}",
                                       {"published": r.published, "unit": r.unit, "sims": [],
                                        "bounds": list(r.bounds) if r.bounds else None,
                                        "baseline": exp.is_baseline(r.config)})
                    a["sims"].append(r.simulated)
    for a in acc.values():
        sims = a.pop("sims")
        a["simulated"] = None if any(s is None for s in sims) else sum(sims) / len(sims)
    return acc


def target_rows(spec: list[TargetSpec], rows: dict[str, dict]) -> dict[str, float]:
    """The calibration rows (with their weights) that ``spec`` names among ``rows``; a named
    row that the experiment does not produce is an input error."""
    out: dict[str, float] = {}
    seen: set[tuple] = set()
    for t in spec:
        mine = {k: r for k, r in rows.items() if k.split("|")[0] == t.experiment}
        if t.rows is None:
            # Every calibration row: a baseline configuration's, with a published value — once:
            # an experiment that repeats another's baseline runs (es2-fig4 holds es2-fig4-base's)
            # would otherwise weigh the same published value twice.
            for k, r in mine.items():
                _, config, metric = k.split("|")
                same = (config, metric, r["published"])
                if r["published"] is not None and r.get("baseline", True) and same not in seen:
                    seen.add(same)
                    out[k] = t.weight
            continue
        for name in t.rows:
            k = f"{t.experiment}|{name.replace('/', '|', 1)}"
            if k not in mine or mine[k]["published"] is None:
                raise InputError(f"calibration target {t.experiment}:{name}: no such row with a published value")
            out[k] = t.weight
    return out


def _target_weights(profile: str, spec: list[TargetSpec], before: dict[str, dict], free: list[Free]) -> dict[str, float]:
    """The fit's target rows and weights, refused where they are too few for ``free``."""
    rows_w = target_rows(spec, before)
    if 3 * len(free) > len(rows_w):
        raise InputError(f"profile {profile}: {len(free)} free parameters need at least {3 * len(free)} "
                         f"calibration targets (one per three); {len(rows_w)} rows are targets")
    return rows_w


def objective(rows: dict[str, dict], targets: dict[str, float]) -> float:
    """Weighted mean of the squared misses in tolerances (1 = at the edge of the bar)."""
    total = wsum = 0.0
    for k, w in targets.items():
        r = rows[k]
        e = published_miss(r["simulated"], r["published"], r["unit"], _bounds(r))
        total += w * (min(e * e, 100.0) if e is not None else 100.0)
        wsum += w
    return total / wsum


def _bounds(r: dict):
    """A row's published range or bound, as ``published_miss`` takes it."""
    b = r.get("bounds")
    return tuple(b) if b else None


def _eval_task(args):
    profile, values, experiments, seeds, duration = args
    return evaluate(profile, values, experiments, seeds, duration)


# --- the fit -------------------------------------------------------------------------------

@dataclass
class Setup:
    profile: str
    free: list[Free]
    spec: list[TargetSpec]
    experiments: list[str]
    seeds: list[int]
    duration: float

    def values(self, x) -> dict[str, float]:
        return {f.key: f.lo + min(max(float(v), 0.0), 1.0) * (f.hi - f.lo) for f, v in zip(self.free, x)}

    def x_of(self, values: dict[str, float]) -> list[float]:
        return [(values[f.key] - f.lo) / (f.hi - f.lo) if f.hi > f.lo else 0.5 for f in self.free]

    def fingerprint(self) -> str:
        d = {"profile": self.profile, "free": [f.__dict__ for f in self.free], "seeds": self.seeds,
             "duration": self.duration, "spec": [t.__dict__ for t in self.spec]}
        return hashlib.sha256(json.dumps(d, sort_keys=True, default=list).encode()).hexdigest()[:16]


class _Grid:
    """One free parameter (CMA-ES needs two dimensions): ``budget`` evenly spaced points over
    its range, asked in one generation — exhaustive, deterministic and parallel."""

    def __init__(self, budget: int):
        self.points = [[i / max(budget - 1, 1)] for i in range(budget)]
        self.done = False

    def stop(self) -> bool:
        return self.done

    def ask(self):
        return self.points

    def tell(self, _xs, _fs) -> None:
        self.done = True


def _key(x) -> str:
    return ",".join(f"{float(v):.12f}" for v in x)


class EvalLog:
    """``evals.jsonl``: one line per finished evaluation, appended and flushed as it finishes,
    so an interrupted calibration loses none; the first line fingerprints the set-up. The file
    is created with the first evaluation: a start that fails before one leaves no calibration."""

    def __init__(self, path: Path, fingerprint: str, resume: bool):
        self.path, self.done, self.fingerprint = path, {}, fingerprint
        if path.exists():
            if not resume:
                raise InputError(f"{path.parent}: holds a calibration already; give --resume to continue it, "
                                 "or another --out")
            lines = path.read_text().splitlines()
            head = json.loads(lines[0]) if lines else {}
            if head.get("fingerprint") != fingerprint:
                raise InputError(f"{path.parent}: its calibration has another set-up (profile, free parameters, "
                                 "targets, seeds or duration); use another --out")
            for line in lines[1:]:
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError:  # a line cut by a kill: evaluated again
                    continue
                self.done[rec["x"]] = rec["objective"]

    def add(self, x, values, f) -> None:
        k = _key(x)
        self.done[k] = f
        if not self.path.exists():
            self.path.write_text(json.dumps({"fingerprint": self.fingerprint}) + "\n")
        with self.path.open("a") as fh:
            fh.write(json.dumps({"x": k, "values": values, "objective": f}) + "\n")
            fh.flush()
            os.fsync(fh.fileno())


def calibrate(profile: str, out: Path, budget: int = 60, workers: int | None = None, resume: bool = False,
              seeds: list[int] | None = None, duration: float = 0.3, targets: str | None = None,
              command: str = "", report_duration: float | None = None, scheduler: str | None = None) -> dict:
    """Fit ``profile``'s free parameters; write ``out/PROFILE.toml``, ``out/report.json`` and
    ``out/report.png``; return the report. The fit runs ``duration`` simulated seconds per run;
    the report's before/after and ±10 % moves run ``report_duration`` (default: each
    experiment's own, as ``eventpath reproduce`` runs it). Evaluations run in ``workers`` local
    processes, or on the Dask scheduler at ``scheduler``."""
    from eventpath import executor
    from eventpath.extras import need

    cma = need("cma", "calibrate", "eventpath calibrate")

    if budget < 1:
        raise InputError(f"--budget {budget}: not allowed; expected at least 1 evaluation")
    from eventpath.api import check_duration

    for d in (duration, report_duration):
        if check_duration(d, "--duration") is not None:
            _eventpath.check_duration("--duration", float(d))
    seeds = seeds or [1, 2]
    free = free_params(profile)
    if not free:
        raise InputError(f"profile {profile}: declares no free parameter (free = {{ min, max }})")
    spec = load_targets(profile, targets)
    experiments = list(dict.fromkeys(t.experiment for t in spec))
    setup = Setup(profile, free, spec, experiments, seeds, duration)
    with executor.start(scheduler, workers) as ex:
        out.mkdir(parents=True, exist_ok=True)

        def run_many(points: list[dict[str, float]], dur: float | None) -> list[dict]:
            return list(ex.ordered(_eval_task, [((profile, v, experiments, seeds, dur),) for v in points]))

        prior = {f.key: f.prior for f in free}
        log = EvalLog(out / "evals.jsonl", setup.fingerprint(), resume)
        search = _Grid(budget) if len(free) == 1 else cma.CMAEvolutionStrategy(
            setup.x_of(prior), 0.3, {"bounds": [0, 1], "seed": 1, "maxfevals": budget, "verbose": -9})
        # The report's run at the prior (which names the target rows) goes out beside the first
        # generation, and the run at the fitted values beside its ±10 % moves: each needs only
        # its own point, so no worker waits for one alone.
        before = rows_w = None
        # CMA-ES evaluates whole generations: the last one may carry the count past the budget.
        gen = getattr(search, "popsize", budget)
        total = -(-budget // gen) * gen
        with executor.Progress(total, f"calibrate {profile}", "eval", initial=min(len(log.done), total)) as bar:
            evaluated = 0
            while not search.stop() and evaluated < budget:
                xs = search.ask()
                todo = [x for x in xs if _key(x) not in log.done]
                # Logged in the order asked (ties of the objective then resolve alike on a resume).
                jobs = [((profile, setup.values(x), experiments, seeds, duration),) for x in todo]
                if before is None:
                    jobs.insert(0, ((profile, prior, experiments, seeds, report_duration),))
                results = ex.ordered(_eval_task, jobs)
                if before is None:
                    before = next(results)
                    rows_w = _target_weights(profile, spec, before, free)
                for x, rows in zip(todo, results):
                    f = objective(rows, rows_w)
                    log.add(x, setup.values(x), f)
                    bar.update(1, f"objective {f:.3g}")
                search.tell(xs, [log.done[_key(x)] for x in xs])
                evaluated += len(xs)
        if before is None:  # a resume whose budget was spent already
            before = run_many([prior], report_duration)[0]
            rows_w = _target_weights(profile, spec, before, free)
        best_key = min(log.done, key=log.done.get)
        best_x = [float(v) for v in best_key.split(",")]
        fitted = setup.values(best_x)
        # Identifiability: each fitted value moved ±10 % (inside its range).
        moves = []
        for f in free:
            for sign in (-1, 1):
                v = dict(fitted)
                v[f.key] = min(max(fitted[f.key] * (1 + sign * NUDGE), f.lo), f.hi)
                moves.append((f.key, sign, v))
        after, *nudged = run_many([fitted] + [m[2] for m in moves], report_duration)

    report = _report(setup, rows_w, before, after, prior, fitted, moves, nudged, log, budget, command)
    (out / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    (out / f"{profile}.toml").write_text(fitted_profile_text(profile, fitted, report, command))
    from eventpath.plots import calibration_figure

    calibration_figure(report, out / "report.png")
    return report


def _report(setup, rows_w, before, after, prior, fitted, moves, nudged, log, budget, command) -> dict:
    def row(k, rows):
        r = rows[k]
        e = published_miss(r["simulated"], r["published"], r["unit"], _bounds(r))
        return {"simulated": r["simulated"], "miss": e, "ok": e is not None and abs(e) <= 1.0}

    targets = []
    for k, w in rows_w.items():
        exp, config, metric = k.split("|")
        r = after[k]
        t = {"experiment": exp, "config": config, "metric": metric, "unit": r["unit"], "published": r["published"],
             "weight": w, "before": row(k, before), "after": row(k, after), "fragile": False, "moved_by": {}}
        for (key, sign, _), rows in zip(moves, nudged):
            n = row(k, rows)
            tol_move = (n["miss"] - t["after"]["miss"]) if n["miss"] is not None and t["after"]["miss"] is not None else None
            t["moved_by"][f"{key}{'+' if sign > 0 else '-'}10%"] = tol_move
            if t["after"]["ok"] and not n["ok"]:
                t["fragile"] = True
        targets.append(t)
    params = []
    for f in setup.free:
        moved = [abs(t["moved_by"].get(f"{f.key}{s}10%") or 0.0) for t in targets for s in "+-"]
        params.append({"key": f.key, "unit": f.unit, "prior": prior[f.key], "fitted": fitted[f.key],
                       "range": [f.lo, f.hi], "at_bound": fitted[f.key] in (f.lo, f.hi),
                       "max_target_move": max(moved, default=0.0),
                       "constrained": max(moved, default=0.0) >= UNCONSTRAINED})
    ok_b = sum(t["before"]["ok"] for t in targets)
    ok_a = sum(t["after"]["ok"] for t in targets)
    return {"profile": setup.profile, "command": command, "optimizer": "CMA-ES (cma), sigma0 0.3 of each range, seed 1",
            "budget": budget, "evaluations": len(log.done), "seeds": setup.seeds,
            "fit_duration_s": setup.duration, "objective_before": objective(before, rows_w),
            "objective_after": objective(after, rows_w), "targets_ok_before": ok_b, "targets_ok_after": ok_a,
            "targets": targets, "parameters": params,
            "objective": "weighted mean of squared misses in tolerances (rates ±25 %, percentages ±10 points)"}


# --- the fitted profile --------------------------------------------------------------------

def fitted_profile_text(profile: str, fitted: dict[str, float], report: dict, command: str) -> str:
    """The built-in profile's text with each free parameter's value replaced by its fitted one
    and its source saying so (the prior kept); a header line names the command."""
    text = _eventpath.builtin_profile_text(profile)[0]
    lines = text.splitlines()
    n_rows = len(report["targets"])
    for key, v in fitted.items():
        section, name = key.split(".", 1)
        inside = False
        for i, line in enumerate(lines):
            if line.startswith("["):
                inside = line.strip() == f"[{section}]"
                continue
            if inside and line.startswith(f"{name} = {{"):
                prior = _num(report_prior(report, key))
                line = re.sub(r"value = [^,]+,", f"value = {_num(v)},", line, count=1)
                line = re.sub(r"free = \{ min = ([^,]+), max = ([^,}]+?)(, prior = [^}]+)? \}",
                              lambda m: f"free = {{ min = {m.group(1)}, max = {m.group(2)}, prior = {prior} }}", line, count=1)
                line = re.sub(r'source = "calibrated by eventpath calibrate [^:]*: ', 'source = "', line, count=1)
                line = re.sub(r'source = "((?:[^"\\]|\\.)*)"', lambda m: (
                    f'source = "calibrated by eventpath calibrate on the {profile} profile\'s calibration rows '
                    f'({n_rows} rows of its experiments\' baseline configurations), objective {report["objective_before"]:.3g} -> '
                    f'{report["objective_after"]:.3g}; prior {prior}: {m.group(1)}"'), line, count=1)
                lines[i] = line
                break
        else:
            raise AssertionError(f"free parameter {key} not found in the profile text")
    head = (f"# Calibrated: `{command}` ({report['evaluations']} evaluations, seeds "
            f"{','.join(map(str, report['seeds']))}); the free parameters' sources say so.")
    body = [ln for ln in lines if not ln.startswith("# Calibrated:")]
    return head + "\n" + "\n".join(body) + "\n"


def report_prior(report: dict, key: str) -> float:
    return next(p["prior"] for p in report["parameters"] if p["key"] == key)


def _num(v: float) -> str:
    return str(int(round(v))) if abs(v) >= 100 else f"{v:.4g}"


def apply(profile: str, out: Path) -> Path:
    """Copy ``out/PROFILE.toml`` over the source tree's built-in profile."""
    dest = Path(__file__).resolve().parents[2] / "profiles" / f"{profile}.toml"
    if not dest.exists():
        raise InputError(f"--apply: {dest} not found; it needs a source checkout (pip install -e .)")
    dest.write_text((out / f"{profile}.toml").read_text())
    return dest
