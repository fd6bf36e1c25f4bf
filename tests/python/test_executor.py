"""Sweeps that outgrow one machine (issue 29, item 4): the same runs in local processes and on a
Dask cluster (a LocalCluster started here) give the same rows; a run's ID hashes what changes
its result; results.parquet equals results.csv; a scheduler that does not answer is one line
and exit code 2 within the timeout; a missing extra is named."""

import csv
import importlib
import os
import sys
import threading
import time

import pytest

from conftest import ROOT
from eventpath import InputError, api, cli, executor, sweep, tables

SCENARIO = ROOT / "examples/udp-send.toml"
PARAMS = [("vm.0.workload.rate_pps", [10000, 30000])]
SEEDS = [1, 2]
DURATION = 0.02  # four runs of 20 ms simulated


def run_sweep(out, **kw):
    return sweep.sweep(SCENARIO, PARAMS, SEEDS, out, duration=DURATION, **kw)


@pytest.fixture(scope="module")
def cluster():
    """Two single-threaded worker processes; they import eventpath from this test's sys.path."""
    distributed = pytest.importorskip("distributed")
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    try:
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                      silence_logs=50) as c:
            yield c.scheduler_address
    finally:
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old


def test_a_sweep_on_a_dask_cluster_gives_the_rows_of_local_processes(cluster, tmp_path):
    local = run_sweep(tmp_path / "local", workers=2)
    remote = run_sweep(tmp_path / "dask", scheduler=cluster)
    assert remote.read_text() == local.read_text()
    assert len(list(csv.DictReader(local.read_text().splitlines()))) == 4
    # Resumable across executors: a run's ID does not depend on where it ran. One record gone,
    # the cluster runs that one alone and the results are whole again.
    records = sorted((tmp_path / "local" / "runs").glob("*.json"))
    stamps = {r.name: r.stat().st_mtime_ns for r in records[1:]}
    records[0].unlink()
    assert run_sweep(tmp_path / "local", scheduler=cluster).read_text() == local.read_text()
    assert records[0].exists() and {r.name: r.stat().st_mtime_ns for r in records[1:]} == stamps


def test_compare_on_a_dask_cluster_ranks_as_local_processes_do(cluster, tmp_path):
    from eventpath import compare
    from eventpath.compare import workloads

    inputs = workloads.named("es2", ["tcp_rr"], 0.004, 0.002)
    kw = dict(seeds=[1, 2], vary={"halt_poll": None}, plots=False, say=lambda s: None)
    compare.compare(inputs, tmp_path / "local", workers=2, **kw)
    compare.compare(inputs, tmp_path / "dask", scheduler=cluster, **kw)
    for f in ("ranked.csv", "cells.csv"):
        assert (tmp_path / "dask" / f).read_text() == (tmp_path / "local" / f).read_text(), f


def test_a_scheduler_that_does_not_answer_is_one_line_within_the_timeout(monkeypatch, tmp_path, capsys):
    pytest.importorskip("distributed")
    t = time.monotonic()
    with pytest.raises(InputError, match=r"--scheduler tcp://127\.0\.0\.1:1: no Dask scheduler answered within 0\.5 s"):
        executor.dask("tcp://127.0.0.1:1", timeout=0.5)
    assert time.monotonic() - t < 10
    # From the command line: exit code 2, one line, and --out holds no sweep.
    monkeypatch.setattr(executor, "CONNECT_TIMEOUT_S", 0.5)
    out = tmp_path / "sw"
    assert cli.main(["sweep", str(SCENARIO), "--param", "vm.0.workload.rate_pps=10000", "--out", str(out),
                     "--duration", "0.002", "--scheduler", "tcp://127.0.0.1:1"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "no Dask scheduler answered" in err, err
    assert list(out.iterdir()) == []


def test_workers_and_a_scheduler_together_are_refused(capsys, tmp_path):
    assert cli.main(["sweep", str(SCENARIO), "--out", str(tmp_path), "--workers", "2",
                     "--scheduler", "tcp://127.0.0.1:1"]) == 2
    assert "give one" in capsys.readouterr().err


def test_without_the_cluster_extra_scheduler_names_it(monkeypatch):
    real = importlib.import_module

    def without_distributed(name, *a, **k):
        if name == "distributed":
            raise ImportError(name)
        return real(name, *a, **k)

    monkeypatch.setattr(importlib, "import_module", without_distributed)
    with pytest.raises(InputError) as e:
        executor.dask("tcp://127.0.0.1:8786")
    assert "pip install 'eventpath[cluster]'" in str(e.value) and "\n" not in str(e.value)


def test_results_parquet_equals_results_csv(tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    res = run_sweep(tmp_path, workers=1)
    pq = pd.read_parquet(tmp_path / "results.parquet")
    pd.testing.assert_frame_equal(pq, pd.read_csv(res), check_dtype=False)
    assert list(pq["vm.0.workload.rate_pps"]) == [10000, 10000, 30000, 30000]


def test_a_value_csv_writes_as_text_is_that_text_in_parquet(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    rows = [{"cores": [14, 15], "x": 1, "y": "a", "z": None}, {"cores": [13], "x": 2.5, "y": 3, "z": None}]
    assert tables.write_parquet(tmp_path / "t.parquet", rows)
    got = pq.read_table(tmp_path / "t.parquet").to_pydict()
    assert got == {"cores": ["[14, 15]", "[13]"], "x": [1.0, 2.5], "y": ["a", "3"], "z": [None, None]}


def test_without_pyarrow_no_parquet_is_written(tmp_path, monkeypatch):
    monkeypatch.setattr(tables, "parquet_available", lambda: False)
    run_sweep(tmp_path, workers=1)
    assert not (tmp_path / "results.parquet").exists()


def test_a_runs_id_changes_with_everything_that_changes_its_result():
    from eventpath.version import build

    sc, prof, b = {"profile": "es2", "vm": [{"x": 1}]}, api.profile("es2"), build()
    base = sweep.run_id(sweep.identity(sc, 1, 0.02, prof, b))
    assert sweep.run_id(sweep.identity({"profile": "es2", "vm": [{"x": 1}]}, 1, 0.02, prof, b)) == base
    moved = dict(prof, nudged=True)
    for other in (sweep.identity({"profile": "es2", "vm": [{"x": 2}]}, 1, 0.02, prof, b),
                  sweep.identity(sc, 2, 0.02, prof, b), sweep.identity(sc, 1, 0.03, prof, b),
                  sweep.identity(sc, 1, 0.02, moved, b), sweep.identity(sc, 1, 0.02, prof, dict(b, commit="0" * 40)),
                  sweep.identity(sc, 1, 0.02, prof, dict(b, engine="another build"))):
        assert sweep.run_id(other) != base
    assert {"version", "commit", "uncommitted_changes", "engine"} <= set(b)


def test_off_a_terminal_progress_is_a_line_per_finished_run(tmp_path, capsys):
    run_sweep(tmp_path, workers=1)
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines[0] == "sweep: 1/4 runs (vm.0.workload.rate_pps=10000, seed=1)" and lines[-1].startswith("sweep: 4/4")
    assert len(lines) == 4


def test_profile_overrides_are_per_thread():
    """A threaded Dask worker runs calibrate's evaluations side by side: each sees its own."""
    inside, release, seen = threading.Event(), threading.Event(), []

    def holder():
        with api.overriding("es2", {"exit.eoi_ns": 1500.0}):
            inside.set()
            release.wait(10)

    t = threading.Thread(target=holder)
    t.start()
    inside.wait(10)
    seen.append(api._OVERRIDE.get())
    release.set()
    t.join()
    assert seen == [None]
