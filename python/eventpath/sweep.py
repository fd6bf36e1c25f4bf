"""Parameter sweeps: a grid of scenario variants run in local worker processes.

Each finished run is kept as one record, ``runs/<id>.json`` (its grid point and summary), and its
rows are appended to ``results.csv`` at once; a rerun with the same grid skips the runs that have
a record.

Why records, not the CSV, are the truth: a record is written to a temporary file and renamed into
place (``os.replace`` is atomic on POSIX), so after a kill at any instant a run either has a
complete record or none — never half of one. The temporary file's name is the writing process's
own (:func:`eventpath.tables.temp_beside`): two sweeps into one ``--out`` (one restarted while
another still runs) may write the same record at once, each renaming its own whole file.
``results.csv`` is derived from the records: appending
is not atomic (a kill can leave a truncated last line, or a record whose rows were never appended),
so every sweep first rebuilds it from the records (written to a temporary file and renamed) and
rewrites it once more, in grid order, when it ends. A resumed sweep's results.csv therefore equals
an uninterrupted sweep's, row for row. ``results.parquet`` (where pyarrow is installed) is
written from the same rows at the same two moments. Records of runs outside the grid (a
second sweep into the same directory with other values) are removed when it starts, so
``runs/`` never holds runs that ``results.csv`` does not show; ``provenance.json`` records
eventpath's version and commit, the command line, the base scenario, the grid and the seeds.

``results.csv`` has one row per VM per run: ``scenario`` and ``seed`` first (as in every CSV
eventpath writes, so that sweeps concatenate), ``run``, the grid point, the VM's columns, the
run's host CPU in cores (:func:`host_cpu`), then ``liveness`` and ``liveness_reason``: a run
with a stalled flow (a model bug) is marked there, never dropped or passed off as a result.
With more than one seed, ``intervals.csv`` has each grid point's and VM's mean over its seeds
with a 95 % interval (:func:`intervals`).

A run's ID (its record's name, the ``run`` column) hashes everything its result depends on
(:func:`identity`): the scenario with the grid point's values set, the seed, the duration, the
contents of its profile, and eventpath's build (version, commit, uncommitted changes, a digest
of the compiled simulator). A run whose ID has a record is not run again; change any of these
and it is. Runs go through :mod:`eventpath.executor`: local processes, or a Dask cluster
(``--scheduler``), with the same rows either way.
"""

from __future__ import annotations

import copy
import csv
import hashlib
import io
import itertools
import json
import math
import os
import sys
import tomllib
import types
from pathlib import Path
from dataclasses import dataclass
from typing import Any

from eventpath import tables
from eventpath._eventpath import InputError


def _split_values(vals: str) -> list[str]:
    """The comma-separated values of ``--param``, split only at top level: a comma inside a
    list, an inline table or a quoted string belongs to that value (``[14,15],[13]``)."""
    out, depth, quote, start = [], 0, None, 0
    for i, ch in enumerate(vals):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(vals[start:i])
            start = i + 1
    out.append(vals[start:])
    return out


def parse_param(spec: str) -> tuple[str, list[Any]]:
    """``vm.0.workload.rate_pps=1e4,2e4`` → (path, [10000.0, 20000.0]); values are TOML literals,
    lists and inline tables included (``host.io.cores=[14,15],[13]``); ``vm.*.KEY`` sets KEY
    on every VM."""
    if "=" not in spec:
        raise InputError(f"--param {spec!r}: expected KEY=V1,V2,... (e.g. vm.0.workload.rate_pps=10000,20000)")
    key, vals = spec.split("=", 1)
    key = key.strip()
    out = []
    for v in _split_values(vals):
        v = v.strip()
        if not v:
            raise InputError(f"--param {spec!r}: an empty value; expected KEY=V1,V2,...")
        try:
            value = tomllib.loads(f"v = {v}")["v"]
        except tomllib.TOMLDecodeError:
            value = v  # a bare word is a string
        if isinstance(value, float) and not math.isfinite(value):
            raise InputError(f"--param {key.strip()}={v}: {v} is not allowed; expected a finite number "
                             "(NaN and infinities are not values of any scenario key)")
        out.append(value)
    if not key or any(not p for p in key.split(".")):
        raise InputError(f"--param {spec!r}: empty key or key part; expected a dotted key such as vm.0.workload.rate_pps")
    return key, out


def set_path(sc: dict, key: str, value: Any) -> None:
    """Set a dotted key (list indices as numbers; ``*`` for every element) in a scenario dict."""
    parts = key.split(".")
    node: Any = sc
    for i, p in enumerate(parts):
        here = ".".join(parts[:i + 1])
        last = i == len(parts) - 1
        if p == "*":
            if not isinstance(node, list) or not node:
                what = "an empty list" if isinstance(node, list) else "not a list"
                raise InputError(f"--param {key}: `{here}`: `*` names every element of a list, but "
                                 f"`{'.'.join(parts[:i])}` is {what}")
            if last:
                raise InputError(f"--param {key}: cannot replace whole list elements; name a key inside them")
            rest = ".".join(parts[i + 1:])
            for j in range(len(node)):
                set_path(node, f"{j}.{rest}", value)
            return
        if isinstance(node, list):
            if not p.isdigit() or int(p) >= len(node):
                raise InputError(f"--param {key}: `{here}` does not exist in the scenario "
                                 f"(a list of {len(node)}; indices 0..{len(node) - 1})")
            if last:
                raise InputError(f"--param {key}: cannot replace a whole list element; name a key inside it")
            node = node[int(p)]
        elif isinstance(node, dict):
            if last:
                node[p] = value
            else:
                node = node.setdefault(p, {})
        else:
            parent = ".".join(parts[:i])
            raise InputError(f"--param {key}: `{parent}` is a value ({node!r}), not a table; "
                             "name a key of a table or a list index")


def grid(params: list[tuple[str, list[Any]]], seeds: list[int]) -> list[dict[str, Any]]:
    """Every combination of the parameter values and seeds, in a stable order."""
    keys = [k for k, _ in params]
    combos = itertools.product(*[v for _, v in params], seeds)
    return [dict(zip(keys + ["seed"], c)) for c in combos]


def identity(scenario: dict, seed: int, duration: float | None, profile: dict | None, build: dict) -> dict:
    """Everything a run's result depends on: the scenario as run (the grid point's values set),
    its seed and duration, its profile's contents (``profile_overrides`` are in the scenario)
    and eventpath's build (:func:`eventpath.version.build`)."""
    return {"scenario": scenario, "seed": seed, "duration": duration, "profile": profile, "build": build}


def run_id(ident: dict) -> str:
    """A run's ID: a digest of its :func:`identity`."""
    return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:16]


def variant(base: dict, point: dict[str, Any]) -> dict:
    sc = copy.deepcopy(base)
    for k, v in point.items():
        if k != "seed":
            set_path(sc, k, v)
    return sc


def _label(point: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" if isinstance(v, str) else f"{k}={v}" for k, v in point.items())


def _one(base: dict, point: dict[str, Any], duration: float | None) -> dict | str:
    """Run one variant in a worker; returns its summary. Bad input comes back as its message
    (exceptions of the compiled module do not cross process boundaries)."""
    from eventpath import api

    try:
        return api.run(variant(base, point), seed=point["seed"], duration=duration).summary
    except InputError as e:
        return f"{_label(point)}: {e}"


def host_cpu(s: dict, io_cores: list[int]) -> dict[str, float]:
    """Run ``s``'s host CPU in cores (a pCPU busy the whole window is 1.0), by who burns it, in
    the parts ``eventpath run`` prints (:func:`eventpath.summary.cpu_split`), a little coarser:
    ``host_cpu_vcpus`` is the vCPUs' running time (guest and exits), ``host_cpu_halt_poll`` the
    rest of their threads' time (KVM halt polling), ``host_cpu_backend`` the back end's (I/O
    threads on shared pCPUs and dedicated I/O cores), ``host_cpu_other`` the rest; the four add
    up to ``host_cpu_cores``, the sum of ``host.pcpu_util_pct`` / 100."""
    from eventpath import summary

    c = summary.cpu_split(s, io_cores)
    return {"host_cpu_cores": c["cpu_host"], "host_cpu_vcpus": c["cpu_vcpus"], "host_cpu_halt_poll": c["cpu_halt_poll"],
            "host_cpu_backend": c["cpu_backend"] + c["cpu_io_cores"], "host_cpu_other": c["cpu_other"]}


def _rows(rid: str, point: dict[str, Any], s: dict, io_cores: list[int]) -> list[dict]:
    """One row per VM: ``scenario`` and ``seed`` first (so that sweeps concatenate), the run's
    ID, the grid point, the VM's metrics, the run's host CPU (the same on each VM's row), then
    whether the run is a result: ``liveness`` "ok", or "stalled" (a flow stalled: a model bug)
    or "unjudged" (no watchdog verdict) with ``liveness_reason`` (:mod:`eventpath.liveness`)."""
    from eventpath import liveness, summary
    from eventpath.api import Result

    cpu = host_cpu(s, io_cores)
    status, why = liveness.verdict(s)
    return [{"scenario": summary.scenario(s), "seed": summary.seed(s), "run": rid, **point, **r, **cpu,
             "liveness": status, "liveness_reason": why} for r in Result(s, []).vm_rows()]


# The write steps, as functions so that a test can kill a sweep between any two of them.

def _write_tmp(path: Path, text: str) -> Path:
    tmp = tables.temp_beside(path)  # a name of its own: sweeps into one --out never collide
    with open(tmp, "w", newline="") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    return tmp


def _replace(tmp: Path, path: Path) -> None:
    os.replace(tmp, path)


def _write_atomic(path: Path, text: str) -> None:
    _replace(_write_tmp(path, text), path)


def _csv_text(rows: list[dict], cols: list[str] | None = None, header: bool = True) -> str:
    if cols is None:
        cols = []
        for r in rows:
            cols.extend(k for k in r if k not in cols)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cols, extrasaction="ignore", lineterminator="\n")
    if header:
        w.writeheader()
    for r in rows:
        w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in cols})
    return buf.getvalue()


def _append(path: Path, rows: list[dict], cols: list[str]) -> None:
    """Append whole lines (columns as in the header the last rebuild wrote)."""
    with open(path, "a", newline="") as f:
        f.write(_csv_text(rows, cols, header=False))


def _read_record(path: Path, point: dict[str, Any] | None, fingerprint: str) -> dict | None:
    """A run's summary from its record, or None when it has none (or an unreadable one, which
    only a hand-edited or foreign file can be: records are renamed into place whole). A record
    of another sweep (base scenario or duration) is refused. ``point`` None: only that check."""
    try:
        rec = json.loads(path.read_text())
        summary = rec["summary"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if point is not None and rec.get("point") != point:
        return None
    if rec.get("sweep", fingerprint) != fingerprint:
        raise InputError(f"--out {path.parent.parent}: holds runs of a different sweep (another base scenario or "
                         "--duration); give a new --out directory or remove it")
    return summary


def out_dir(p: str | os.PathLike) -> Path:
    """``p`` as a sweep's output directory, created; a file or an unwritable place is an
    :class:`InputError`."""
    from eventpath.outdir import made

    return made(p)


def sweep(scenario: Path | dict, params: list[tuple[str, list[Any]]], seeds: list[int] | None, out: Path,
          workers: int | None = None, duration: float | None = None, scheduler: str | None = None,
          command: str | None = None, rows_out: list[dict] | None = None) -> Path:
    """Run the grid; returns the path of ``results.csv``. ``scenario``: a TOML file or a scenario
    dict. ``seeds`` None: the scenario's seed. ``scheduler``: a Dask scheduler's address to run
    on instead of ``workers`` local processes. ``command``: the command line, recorded in
    ``provenance.json``. ``rows_out``, if given, receives results.csv's rows.

    Records in ``runs/`` of runs not in this grid (other grid values, an earlier build) are
    removed, so that ``runs/`` holds exactly the runs results.csv shows; records of another
    sweep (another base scenario or duration) are refused."""
    from eventpath import _eventpath, api, executor, version
    from eventpath.summary import io_cores

    if isinstance(scenario, dict):
        base = copy.deepcopy(scenario)
        scenario = Path("<dict>")
    else:
        base = api.scenario_dict(scenario)
    duration = api.check_duration(duration, "--duration")
    if seeds is None:
        seeds = [base.get("seed", 1)]
    points = grid(params, seeds)
    build = version.build()
    profiles: dict[str, dict] = {}
    ids: list[str] = []
    cores: dict[str, list[int]] = {}  # run ID -> its dedicated I/O pCPUs, for host_cpu_backend
    # Check every variant before starting any: a typo or a bad value fails fast, not after an hour.
    for p in points:
        sc = variant(base, p)
        bad = api._non_finite(sc, "")
        if bad:
            raise InputError(f"{_label(p)}: scenario {scenario}: key `{bad[0]}`: {bad[1]} is not allowed; "
                             "expected a finite number")
        try:
            _eventpath.check_json(json.dumps(sc), "<sweep>", api.check_seed(p["seed"], "seed"), duration)
        except InputError as e:
            raise InputError(f"{_label(p)}: {e}") from None
        name = sc.get("profile")
        if isinstance(name, str) and name not in profiles:
            profiles[name] = api.profile(name)
        ids.append(run_id(identity(sc, p["seed"], duration, profiles.get(name) if isinstance(name, str) else None,
                                   build)))
        cores[ids[-1]] = io_cores(sc)
    fingerprint = hashlib.sha1(json.dumps([base, duration], sort_keys=True).encode()).hexdigest()[:12]
    runs = out / "runs"
    done: dict[str, dict] = {}
    for rid, p in zip(ids, points):
        s = _read_record(runs / f"{rid}.json", p, fingerprint)
        if s is not None:
            done[rid] = s
    # The other records: another sweep's are refused (no directory mixes two); this sweep's
    # under another build or of grid values not asked for now are stale, removed below once the
    # executor is up (a refused start leaves --out as it was).
    mine = set(ids)
    stale = []
    for f in sorted(runs.glob("*.json")) if runs.is_dir() else []:
        if f.stem not in mine:
            _read_record(f, None, fingerprint)
            stale.append(f)
    results = out / "results.csv"

    def rebuild() -> list[str]:
        rows = [r for rid, p in zip(ids, points) if rid in done for r in _rows(rid, p, done[rid], cores[rid])]
        text = _csv_text(rows)
        _write_atomic(results, text)
        cols = next(csv.reader([text.splitlines()[0]])) if rows else []
        tables.write_parquet(out / "results.parquet", rows, cols)
        return cols

    todo = [(rid, p) for rid, p in zip(ids, points) if rid not in done]
    # Connected before anything is written: a scheduler that does not answer leaves --out as it was.
    with executor.start(scheduler, workers, len(todo)) as ex:
        runs.mkdir(parents=True, exist_ok=True)
        for f in stale:
            f.unlink(missing_ok=True)
        _write_atomic(out / "provenance.json", json.dumps({
            **version.provenance(), "command": command, "scenario": base, "params": [[k, v] for k, v in params],
            "seeds": seeds, "duration": duration}, indent=2) + "\n")
        cols = rebuild()

        def finish(rid: str, p: dict[str, Any], got: dict | str) -> None:
            nonlocal cols
            if isinstance(got, str):
                raise InputError(got)
            rows = _rows(rid, p, got, cores[rid])
            _write_atomic(runs / f"{rid}.json", json.dumps({"point": p, "sweep": fingerprint, "build": build,
                                                            "summary": got}) + "\n")
            done[rid] = got
            if not cols:
                cols = rebuild()
            else:
                _append(results, rows, cols)

        # Bad input or Ctrl-C stops the sweep and the runs not started; the finished ones are kept.
        with executor.Progress(len(points), "sweep", "run", initial=len(done)) as bar:
            for k, got in ex.map(_one, [(base, p, duration) for _, p in todo]):
                finish(*todo[k], got)
                bar.update(1, _label(todo[k][1]))
    rebuild()  # grid order, whatever order the runs finished in
    if len(seeds or []) > 1:
        rows = [r for rid, p in zip(ids, points) if rid in done for r in _rows(rid, p, done[rid], cores[rid])]
        _write_atomic(out / "intervals.csv", _csv_text(intervals(rows, [k for k, _ in params])))
    else:
        (out / "intervals.csv").unlink(missing_ok=True)
    _warn_not_results(done)
    if rows_out is not None:
        rows_out.extend(r for rid, p in zip(ids, points) if rid in done for r in _rows(rid, p, done[rid], cores[rid]))
    return results


#: intervals.csv's columns: each a results.csv column averaged over a grid point's seeds.
INTERVAL_COLUMNS = ("throughput_gbps", "throughput_pps", "throughput_ops_per_s", "latency_us_p50", "latency_us_p99",
                    "exits_total_per_s", "host_cpu_cores")


def intervals(rows: list[dict], params: list[str]) -> list[dict]:
    """intervals.csv: per grid point (``params``' values) and VM, each :data:`INTERVAL_COLUMNS`
    value's mean over the point's seeds with its 95 % interval (:mod:`eventpath.stats`; ``_lo``
    and ``_hi`` empty with one seed), counting only the runs that are results (liveness "ok")."""
    from eventpath.stats import interval

    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        if r.get("liveness") == "ok":
            groups.setdefault((tuple(r.get(k) for k in params), r["vm"]), []).append(r)
    out = []
    for (point, vm), rs in groups.items():
        row: dict[str, Any] = {"scenario": rs[0]["scenario"], **dict(zip(params, point)), "vm": vm,
                               "seeds": len(rs)}
        for c in INTERVAL_COLUMNS:
            iv = interval([r[c] for r in rs if isinstance(r.get(c), (int, float))])
            row[c] = iv.mean if iv else None
            row[f"{c}_lo"] = iv.lo if iv else None
            row[f"{c}_hi"] = iv.hi if iv else None
        out.append(row)
    return out


def _warn_not_results(done: dict[str, dict]) -> None:
    """One line on stderr when some runs are not results: their rows are marked, not dropped,
    and an average over the column would otherwise take them in unseen."""
    from eventpath import liveness

    bad = {}
    for summary in done.values():
        status, _ = liveness.verdict(summary)
        if status != liveness.OK:
            bad[status] = bad.get(status, 0) + 1
    if bad:
        print(f"sweep: warning: {', '.join(f'{n} run(s) {st}' for st, n in bad.items())}: not results (a stalled flow is "
              "a model bug); results.csv marks their rows (liveness, liveness_reason)", file=sys.stderr)


@dataclass
class Sweep:
    """What :func:`run_sweep` wrote: ``results.csv`` and its rows (one per VM per run, as dicts:
    ``scenario``, ``seed``, ``run``, the grid point, the VM's metrics, the host CPU)."""

    results: Path
    rows: list[dict[str, Any]]


def run_sweep(scenario: str | os.PathLike | dict, params: dict[str, list] | None = None, *,
              out: str | os.PathLike, seeds: list[int] | None = None, duration: float | None = None,
              workers: int | None = None, scheduler: str | None = None) -> Sweep:
    """``eventpath.sweep(...)``: run every combination of ``params`` (dotted key → list of
    values, ``vm.*.KEY`` for every VM, as ``eventpath sweep --param``) and ``seeds`` (default:
    the scenario's) on a scenario (a path or a dict), in ``workers`` local processes or on the
    Dask scheduler at ``scheduler``; resumable in ``out`` as the command is. Bad arguments raise
    :class:`InputError` before anything runs."""
    from eventpath import api, args
    from eventpath.api import check_seed

    params = {} if params is None else params
    if not isinstance(params, dict):
        raise args.refuse("sweep", "params", params, "a dict of {'dotted.key': [value, ...]}")
    grid = []
    for k, vals in params.items():
        if not isinstance(k, str) or not k or any(not p for p in k.split(".")):
            raise args.refuse("sweep", "key", k, "a dotted key such as vm.0.workload.rate_pps")
        if not isinstance(vals, (list, tuple)) or not vals:
            raise args.refuse("sweep", f"{k} =", vals, "a non-empty list of values")
        grid.append((k, [args.toml_value(v, "sweep", f"{k} value") for v in vals]))
    if seeds is not None:
        if not isinstance(seeds, (list, tuple)) or not seeds:
            raise args.refuse("sweep", "seeds", seeds, "a non-empty list of integers")
        seeds = [check_seed(x, "seeds") for x in seeds]
        if len(set(seeds)) != len(seeds):
            raise InputError(f"sweep: seeds {args.short(seeds)}: a seed is given twice; each run of the grid must differ")
    if workers is not None:
        workers = args.integer(workers, "sweep", "workers", 1, 1024, "processes")
    if workers is not None and scheduler is not None:
        raise InputError("sweep: give workers or scheduler, not both")
    out = args.path(out, "sweep", "out", "a directory")
    if isinstance(scenario, dict):
        base: Any = scenario
        api._dict_text(scenario)  # values JSON cannot carry: one line now
    else:
        base = Path(api._scenario_path(scenario))
    rows: list[dict[str, Any]] = []
    path = sweep(base, grid, seeds, out_dir(out), workers=workers, duration=duration, scheduler=scheduler,
                 rows_out=rows)
    return Sweep(results=path, rows=rows)


class _CallableModule(types.ModuleType):
    """This module called is :func:`run_sweep`: ``eventpath.sweep(...)``."""

    def __call__(self, *args, **kwargs) -> Sweep:
        return run_sweep(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
