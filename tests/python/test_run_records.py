"""An output directory a user can trust and re-run (issue 29 item 5): the resolved scenario, the
profile as run, provenance, perf-kvm-stat's exit table, and no file of an earlier run."""

import csv
import json
import tomllib

import pytest

from conftest import ROOT


def _summary(d):
    s = json.loads((d / "summary.json").read_text())
    s.pop("wall_seconds")
    return s


@pytest.mark.parametrize("example", ["examples/tcp-send.toml", "examples/es2-memcached-optimistic.toml",
                                     "examples/vf-did.toml"])
def test_rerunning_the_resolved_scenario_gives_the_same_summary(cli, tmp_path, example):
    first, again = tmp_path / "first", tmp_path / "again"
    r = cli("run", example, "--out", str(first), "--seed", "7", "--duration", "0.02", "--no-plots")
    assert r.returncode == 0, r.stderr
    resolved = first / "scenario.resolved.toml"
    sc = tomllib.loads(resolved.read_text())
    # Every default filled in, the command line's options included.
    assert sc["seed"] == 7 and sc["duration_s"] == 0.02 and "warmup_s" in sc
    assert sc["host"]["pcpus"] >= 1 and "nic_itr" in sc["host"] and "cores" in sc["client"]
    assert "queue_size" in sc["vm"][0]["net"] and "interrupt_delivery" in sc["vm"][0]
    # Re-run from elsewhere, with no option: the same summary, wall time aside.
    r = cli("run", str(resolved), "--out", str(again), "--no-plots", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert _summary(again) == _summary(first)
    assert (again / "scenario.resolved.toml").read_text() == resolved.read_text(), "resolving is a fixed point"


def test_the_records_say_what_ran_and_how(cli, tmp_path):
    r = cli("run", "examples/udp-send.toml", "--out", str(tmp_path), "--duration", "0.02", "--no-plots")
    assert r.returncode == 0, r.stderr
    prov = json.loads((tmp_path / "provenance.json").read_text())
    assert {"version", "commit", "uncommitted_changes", "command", "argv"} <= prov.keys()
    assert prov["command"].startswith("eventpath run examples/udp-send.toml") and "--duration 0.02" in prov["command"]
    prof = json.loads((tmp_path / "profile.json").read_text())
    assert prof["name"] == "es2"
    leaf = prof["exit"]["eoi_ns"]
    assert {"value", "unit", "source"} <= leaf.keys()
    assert "scenario.resolved.toml" in r.stdout


def test_profile_overrides_show_in_the_profile_as_run(cli, tmp_path):
    sc = (ROOT / "examples/udp-send.toml").read_text() + "\n[profile_overrides.exit]\neoi_ns = 4321\n"
    (tmp_path / "s.toml").write_text(sc)
    r = cli("run", str(tmp_path / "s.toml"), "--out", str(tmp_path / "o"), "--duration", "0.01", "--no-plots")
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "o/profile.json").read_text())["exit"]["eoi_ns"]["value"] == 4321


def test_a_profile_path_is_recorded_absolute_so_the_rerun_works_anywhere(cli, tmp_path):
    sc = (ROOT / "examples/udp-send.toml").read_text().replace('profile = "es2"', 'profile = "profiles/es2.toml"')
    assert 'profile = "profiles/es2.toml"' in sc
    (tmp_path / "s.toml").write_text(sc)
    r = cli("run", str(tmp_path / "s.toml"), "--out", str(tmp_path / "a"), "--duration", "0.01", "--no-plots")
    assert r.returncode == 0, r.stderr
    resolved = tomllib.loads((tmp_path / "a/scenario.resolved.toml").read_text())
    assert resolved["profile"] == str((ROOT / "profiles/es2.toml").resolve())
    r = cli("run", str(tmp_path / "a/scenario.resolved.toml"), "--out", str(tmp_path / "b"), "--no-plots",
            cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert _summary(tmp_path / "b") == _summary(tmp_path / "a")


def test_a_no_plots_run_over_an_old_run_leaves_no_png_and_new_records(cli, tmp_path):
    r = cli("run", "examples/udp-send.toml", "--out", str(tmp_path), "--duration", "0.01")
    assert r.returncode == 0, r.stderr
    assert list(tmp_path.glob("*.png"))
    (tmp_path / "old.png").write_bytes(b"")  # a user's own figure is not the run's: kept
    r = cli("run", "examples/tcp-send.toml", "--out", str(tmp_path), "--duration", "0.01", "--no-plots")
    assert r.returncode == 0, r.stderr
    assert [p.name for p in tmp_path.glob("*.png")] == ["old.png"]
    assert tomllib.loads((tmp_path / "scenario.resolved.toml").read_text())["name"] == "tcp-send"


def test_kvm_exit_table_splits_the_summary_by_vcpu_and_reason(cli, tmp_path):
    r = cli("run", "examples/es2-4vm-netperf-threads.toml", "--out", str(tmp_path), "--duration", "0.02",
            "--no-plots")
    assert r.returncode == 0, r.stderr
    s = json.loads((tmp_path / "summary.json").read_text())
    with open(tmp_path / "kvm_exits.csv") as f:
        rows = list(csv.DictReader(f))
    assert rows and {"scenario", "seed", "vm", "vcpu", "reason", "exits", "exits_per_s", "time_us", "time_pct",
                     "avg_us", "exits_pct", "vcpu_time_pct"} <= rows[0].keys()
    sc = tomllib.loads((ROOT / "examples/es2-4vm-netperf-threads.toml").read_text())
    for vm, spec in zip(s["vms"], sc["vm"]):
        mine = [r for r in rows if r["vm"] == vm["name"]]
        assert sum(float(r["exits_per_s"]) for r in mine) == pytest.approx(vm["exits_total_per_s"])
        for reason, rate in vm["exits_per_s"].items():
            assert sum(float(r["exits_per_s"]) for r in mine if r["reason"] == reason) == pytest.approx(rate)
        assert sum(float(r["vcpu_time_pct"]) for r in mine) / spec["vcpus"] == pytest.approx(vm["eht_pct"])
    assert "exit time by reason:" in r.stdout and "exits by vCPU: vCPU0" in r.stdout
    assert "perf kvm stat" in r.stdout


def test_a_second_sweep_into_the_same_directory_keeps_only_its_runs(cli, tmp_path):
    base = ["sweep", "examples/udp-send.toml", "--out", str(tmp_path), "--duration", "0.01", "--workers", "1"]
    assert cli(*base, "--param", "vm.0.workload.rate_pps=10000,20000,30000").returncode == 0
    assert len(list((tmp_path / "runs").glob("*.json"))) == 3
    r = cli(*base, "--param", "vm.0.workload.rate_pps=20000")
    assert r.returncode == 0, r.stderr
    with open(tmp_path / "results.csv") as f:
        rows = list(csv.DictReader(f))
    records = list((tmp_path / "runs").glob("*.json"))
    assert len(rows) == 1 and len(records) == 1
    assert records[0].stem == rows[0]["run"], "the record kept is the run results.csv shows (not run again)"
    prov = json.loads((tmp_path / "provenance.json").read_text())
    assert prov["params"] == [["vm.0.workload.rate_pps", [20000]]] and "sweep" in prov["command"]
