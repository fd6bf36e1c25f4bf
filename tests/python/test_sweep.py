"""Sweeps: grid, append-as-you-go, resume, bad keys."""

import csv

from conftest import ROOT


def read_rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def test_sweep_runs_grid_and_resumes(cli, tmp_path):
    args = ["sweep", "examples/udp-send.toml", "--param", "vm.0.workload.rate_pps=10000,30000",
            "--seeds", "1,2", "--out", str(tmp_path), "--duration", "0.02", "--workers", "2"]
    r = cli(*args)
    assert r.returncode == 0, r.stderr
    rows = read_rows(tmp_path / "results.csv")
    assert len(rows) == 4
    by_rate = {}
    for row in rows:
        by_rate.setdefault(float(row["vm.0.workload.rate_pps"]), []).append(float(row["throughput_pps"]))
    assert min(by_rate[30000.0]) > 2 * max(by_rate[10000.0])
    # A rerun finds every run done and appends nothing.
    assert cli(*args).returncode == 0
    assert len(read_rows(tmp_path / "results.csv")) == 4


def test_sweep_bad_key_is_one_line(cli, tmp_path):
    r = cli("sweep", str(ROOT / "examples/udp-send.toml"), "--param", "vm.5.workload.rate_pps=1",
            "--out", str(tmp_path))
    assert r.returncode == 2 and "vm.5" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = cli("sweep", str(ROOT / "examples/udp-send.toml"), "--param", "vm.0.workload.rate_pps=-5",
            "--out", str(tmp_path), "--duration", "0.01")
    assert r.returncode == 2 and "rate_pps" in r.stderr, r.stderr
