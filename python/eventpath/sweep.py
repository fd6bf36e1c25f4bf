"""Parameter sweeps: a grid of scenario variants run in local worker processes.

Each finished run is appended to ``results.csv`` at once (a crash loses no finished run) and its
summary is kept under ``runs/``; a rerun with the same grid skips the runs already done.
"""

from __future__ import annotations

import copy
import csv
import hashlib
import itertools
import json
import os
import tomllib
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from eventpath._eventpath import InputError


def parse_param(spec: str) -> tuple[str, list[Any]]:
    """``vm.0.workload.rate_pps=1e4,2e4`` → (path, [10000.0, 20000.0]); values are TOML literals."""
    if "=" not in spec:
        raise InputError(f"--param {spec!r}: expected KEY=V1,V2,... (e.g. vm.0.workload.rate_pps=10000,20000)")
    key, vals = spec.split("=", 1)
    out = []
    for v in vals.split(","):
        try:
            out.append(tomllib.loads(f"v = {v.strip()}")["v"])
        except tomllib.TOMLDecodeError:
            out.append(v.strip())  # a bare word is a string
    if not key or not out:
        raise InputError(f"--param {spec!r}: empty key or value list")
    return key, out


def set_path(sc: dict, key: str, value: Any) -> None:
    """Set a dotted key (list indices as numbers) in a scenario dict."""
    parts = key.split(".")
    node: Any = sc
    for i, p in enumerate(parts[:-1]):
        try:
            node = node[int(p)] if isinstance(node, list) else node.setdefault(p, {})
        except (IndexError, ValueError):
            raise InputError(f"--param {key}: `{'.'.join(parts[:i + 1])}` does not exist in the scenario") from None
    last = parts[-1]
    if isinstance(node, list):
        raise InputError(f"--param {key}: cannot replace a whole list element; name a key inside it")
    node[last] = value


def grid(params: list[tuple[str, list[Any]]], seeds: list[int]) -> list[dict[str, Any]]:
    """Every combination of the parameter values and seeds, in a stable order."""
    keys = [k for k, _ in params]
    combos = itertools.product(*[v for _, v in params], seeds)
    return [dict(zip(keys + ["seed"], c)) for c in combos]


def run_id(point: dict[str, Any]) -> str:
    return hashlib.sha1(json.dumps(point, sort_keys=True).encode()).hexdigest()[:12]


def _one(base: dict, point: dict[str, Any], duration: float | None) -> tuple[dict, list[dict]] | str:
    """Run one variant in a worker; bad input comes back as its message (exceptions of the
    compiled module do not cross process boundaries)."""
    from eventpath import api

    sc = copy.deepcopy(base)
    for k, v in point.items():
        if k != "seed":
            set_path(sc, k, v)
    try:
        res = api.run(sc, seed=point["seed"], duration=duration)
    except InputError as e:
        return f"{', '.join(f'{k}={v}' for k, v in point.items())}: {e}"
    return res.summary, res.vm_rows()


def sweep(scenario: Path, params: list[tuple[str, list[Any]]], seeds: list[int], out: Path,
          workers: int | None = None, duration: float | None = None) -> Path:
    """Run the grid; returns the path of ``results.csv``."""
    from tqdm import tqdm

    base = tomllib.loads(scenario.read_text())
    points = grid(params, seeds)
    # Check every variant before starting any: a typo fails fast, not after an hour.
    for p in points:
        sc = copy.deepcopy(base)
        for k, v in p.items():
            if k != "seed":
                set_path(sc, k, v)
    runs = out / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    todo = [p for p in points if not (runs / f"{run_id(p)}.json").exists()]
    results = out / "results.csv"
    done = len(points) - len(todo)
    workers = workers or os.cpu_count() or 1
    with tqdm(total=len(points), initial=done, desc="sweep", unit="run", disable=None) as bar:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            futs = {pool.submit(_one, base, p, duration): p for p in todo}
            for f in as_completed(futs):
                p = futs[f]
                got = f.result()
                if isinstance(got, str):
                    raise InputError(got)
                summary, rows = got
                _append(results, [{"run": run_id(p), **p, **r} for r in rows])
                (runs / f"{run_id(p)}.json").write_text(json.dumps({"point": p, "summary": summary}) + "\n")
                bar.update(1)
    return results


def _append(path: Path, rows: list[dict]) -> None:
    new = not path.exists()
    cols = list(rows[0])
    if not new:
        with open(path) as f:
            cols = next(csv.reader(f))
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
        if new:
            w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in cols})
