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
    # With two seeds: each grid point's mean over them with its 95 % interval.
    iv = {float(r["vm.0.workload.rate_pps"]): r for r in read_rows(tmp_path / "intervals.csv")}
    assert set(iv) == {10000.0, 30000.0} and "intervals.csv" in r.stdout
    for rate, vals in by_rate.items():
        row = iv[rate]
        assert row["seeds"] == "2" and float(row["throughput_pps"]) == pytest.approx(sum(vals) / 2)
        assert float(row["throughput_pps_lo"]) <= float(row["throughput_pps"]) <= float(row["throughput_pps_hi"])
    # A rerun finds every run done and appends nothing.
    assert cli(*args).returncode == 0
    assert len(read_rows(tmp_path / "results.csv")) == 4
    # One seed: no interval to give, and none left from the sweep before.
    assert cli(*args[:4], "--seeds", "1", *args[6:]).returncode == 0
    assert not (tmp_path / "intervals.csv").exists()


def test_sweep_bad_key_is_one_line(cli, tmp_path):
    r = cli("sweep", str(ROOT / "examples/udp-send.toml"), "--param", "vm.5.workload.rate_pps=1",
            "--out", str(tmp_path))
    assert r.returncode == 2 and "vm.5" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = cli("sweep", str(ROOT / "examples/udp-send.toml"), "--param", "vm.0.workload.rate_pps=-5",
            "--out", str(tmp_path), "--duration", "0.01")
    assert r.returncode == 2 and "rate_pps" in r.stderr, r.stderr


# --- Resume after a kill at any write point (issue 9, item 6) ---

import pytest  # noqa: E402

from eventpath import InputError, sweep  # noqa: E402

PARAMS = [("vm.0.workload.rate_pps", [10000, 30000])]  # as the CLI parses them
SEEDS = [1, 2]


class Killed(BaseException):
    """A kill -9 at this instant: nothing after it runs."""


def run_sweep(out, duration=0.002):
    return sweep.sweep(ROOT / "examples/udp-send.toml", PARAMS, SEEDS, out, workers=1, duration=duration)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    out = tmp_path_factory.mktemp("ref")
    return run_sweep(out).read_text()


def killing(fn_name, k):
    """A replacement of sweep.<fn_name> that dies on its k-th call: a write dies half-way (a
    truncated temporary file, a truncated appended line), a rename before it happens."""
    real = getattr(sweep, fn_name)
    calls = [0]

    def fn(*args):
        calls[0] += 1
        if calls[0] == k:
            if fn_name == "_write_tmp":
                path, text = args
                path.with_name(f".{path.name}.tmp").write_text(text[: len(text) // 2])
            elif fn_name == "_append":
                path, rows, cols = args
                with open(path, "a") as f:
                    f.write(sweep._csv_text(rows, cols, header=False)[:7])
            raise Killed(f"{fn_name} call {k}")
        return real(*args)

    return fn


@pytest.mark.parametrize("fn_name", ["_write_tmp", "_replace", "_append"])
def test_kill_at_every_write_point_then_resume_equals_an_uninterrupted_sweep(tmp_path, monkeypatch, reference,
                                                                          fn_name):
    killed_at = 0
    for k in range(1, 50):
        out = tmp_path / f"k{k}"
        with monkeypatch.context() as m:
            m.setattr(sweep, fn_name, killing(fn_name, k))
            try:
                run_sweep(out)
            except Killed:
                killed_at += 1
            else:
                break  # the sweep made fewer than k such calls: every point has been tried
        res = run_sweep(out)  # resume, nothing patched
        assert res.read_text() == reference, f"kill at {fn_name} call {k}"
        assert len(list((out / "runs").glob("*.json"))) == 4
        # A second resume runs nothing and changes nothing.
        assert run_sweep(out).read_text() == reference
    assert killed_at >= (3 if fn_name == "_append" else 6)


@pytest.mark.parametrize("damage", ["empty", "truncated_last_line", "duplicated_row", "missing", "no_newline"])
def test_resume_repairs_a_damaged_results_file(tmp_path, reference, damage):
    res = run_sweep(tmp_path)
    text = res.read_text()
    lines = text.splitlines(keepends=True)
    res.write_text({"empty": "", "truncated_last_line": "".join(lines[:-1]) + lines[-1][:10],
                    "duplicated_row": text + lines[-1], "missing": "", "no_newline": text.rstrip("\n")}[damage])
    if damage == "missing":
        res.unlink()
    assert run_sweep(tmp_path).read_text() == reference


def test_resume_ignores_a_half_written_temporary_record(tmp_path, reference):
    run_sweep(tmp_path)
    rec = sorted((tmp_path / "runs").glob("*.json"))[0]
    rec.unlink()
    rec.with_name(f".{rec.name}.tmp").write_text('{"point": {"vm.0.wor')
    assert run_sweep(tmp_path).read_text() == reference


def test_resume_with_another_duration_is_refused(tmp_path):
    run_sweep(tmp_path)
    with pytest.raises(InputError, match="different sweep"):
        run_sweep(tmp_path, duration=0.003)


def test_sweep_on_one_worker_matches_the_pool(cli, tmp_path, reference):
    args = ["sweep", "examples/udp-send.toml", "--param", "vm.0.workload.rate_pps=10000,30000", "--seeds", "1,2",
            "--duration", "0.002", "--workers", "2", "--out", str(tmp_path)]
    r = cli(*args)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "results.csv").read_text() == reference


def test_list_values_keep_their_commas_and_star_sets_every_vm():
    from eventpath import sweep as sw

    assert sw.parse_param("host.io.cores=[14,15],[13]") == ("host.io.cores", [[14, 15], [13]])
    assert sw.parse_param('vm.*.net.moderation={kind = "fir", itr = 8000},{kind = "dim"}')[1] == [
        {"kind": "fir", "itr": 8000}, {"kind": "dim"}]
    sc = {"vm": [{"name": "a"}, {"name": "b", "net": {"queue_size": 256}}]}
    sw.set_path(sc, "vm.*.net.queue_size", 512)
    assert [v["net"]["queue_size"] for v in sc["vm"]] == [512, 512]
    for bad in ({"vm": []}, {"vm": {"name": "a"}}):
        with pytest.raises(InputError, match=r"`\*` names every element of a list"):
            sw.set_path(bad, "vm.*.net.queue_size", 1)
    with pytest.raises(InputError, match="whole list elements"):
        sw.set_path({"vm": [{}]}, "vm.*", 1)


# --- Columns: scenario and seed first, host CPU by who burns it (issue 29, item 5) ---

def test_results_start_with_scenario_and_seed_and_carry_host_cpu(tmp_path):
    path = sweep.sweep(ROOT / "examples/udp-send.toml", [("vm.0.workload.rate_pps", [10000])], [1, 2], tmp_path,
                       workers=1, duration=0.002)
    rows = read_rows(path)
    assert len(rows) == 2
    assert list(rows[0])[:3] == ["scenario", "seed", "run"]
    assert {r["scenario"] for r in rows} == {"udp-send"} and [r["seed"] for r in rows] == ["1", "2"]
    for r in rows:
        cores = float(r["host_cpu_cores"])
        parts = [float(r[k]) for k in ("host_cpu_vcpus", "host_cpu_halt_poll", "host_cpu_backend", "host_cpu_other")]
        assert cores > 0 and parts[0] > 0 and parts[1] > 0, r
        assert sum(parts) == pytest.approx(cores, abs=1e-6)


def test_host_cpu_counts_dedicated_io_cores_as_back_end():
    summary = {"vms": [{"name": "a", "cpu_util_pct": 50.0}],
               "host": {"pcpu_util_pct": [60.0, 100.0, 10.0],
                        "threads": [{"name": "vcpu:a/0", "pcpu_pct": [60.0, 0.0, 0.0]},
                                    {"name": "io", "pcpu_pct": [0.0, 100.0, 0.0]}],
                        "io_threads": [{"name": "io"}]}}
    cpu = sweep.host_cpu(summary, [1])
    assert cpu == pytest.approx({"host_cpu_cores": 1.7, "host_cpu_vcpus": 0.5, "host_cpu_halt_poll": 0.1,
                                 "host_cpu_backend": 1.0, "host_cpu_other": 0.1})


def test_host_cpu_parts_that_are_rounding_are_written_as_zero():
    # 0.1 + 0.2 - 0.3 is 5.6e-17 in floating point, not time.
    summary = {"vms": [{"name": "a", "cpu_util_pct": 30.0}],
               "host": {"pcpu_util_pct": [10.0, 20.0],
                        "threads": [{"name": "vcpu:a/0", "pcpu_pct": [10.0, 20.0]}], "io_threads": []}}
    cpu = sweep.host_cpu(summary, [])
    assert cpu["host_cpu_other"] == 0.0 and cpu["host_cpu_halt_poll"] == 0.0


# --- Sweeps into one --out at once (issue 45: sweep-concurrent-same-out.sh) ---

def test_writers_of_one_record_at_once_never_collide(tmp_path):
    """Two sweeps into one --out (one restarted while the other still runs) write the same run
    records at once. Each writer renames a temporary file of its own: never an error, and the
    record is always one writer's whole text."""
    import threading

    rec = tmp_path / "runs" / "0123456789abcdef.json"
    rec.parent.mkdir()
    n, writes = 8, 200
    start, errors = threading.Barrier(n), []

    def writer(k):
        start.wait()
        try:
            for i in range(writes):
                sweep._write_atomic(rec, f'{{"writer": {k}, "write": {i}}}\n')
        except Exception as e:  # noqa: BLE001 - any failure is the finding
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    import json

    assert set(json.loads(rec.read_text())) == {"writer", "write"}
    assert [p.name for p in rec.parent.iterdir()] == [rec.name], "no temporary file is left behind"


def test_two_sweep_processes_into_one_out_both_finish(tmp_path):
    """Two `eventpath sweep` processes on the same grid into one --out: both exit 0 (neither an
    internal error) and the results are the whole grid."""
    import subprocess
    import sys

    args = [sys.executable, "-m", "eventpath", "sweep", str(ROOT / "examples/udp-send.toml"), "--param",
            "vm.0.workload.rate_pps=10000,20000,30000", "--seeds", "1,2,3", "--duration", "0.002", "--workers", "1",
            "--out", str(tmp_path)]
    procs = [subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    for p in procs:
        _, err = p.communicate()
        assert p.returncode == 0 and "internal error" not in err, err
    assert len(read_rows(tmp_path / "results.csv")) == 9
    assert len(list((tmp_path / "runs").glob("*.json"))) == 9


# --- A run that is not a result is marked (issue 45: compare-ranks-stalled-cell.sh) ---

def test_a_stalled_run_is_marked_in_its_rows_and_warned_about(tmp_path, monkeypatch, capsys):
    from eventpath import api

    real = api.run
    stall = {"vm": "vm0", "stalled_from_s": 0.001, "detected_s": 0.002, "recovered_s": None, "state": "forced"}

    def run(sc, seed=None, duration=None, **kw):
        r = real(sc, seed=seed, duration=duration, **kw)
        if sc["vm"][0]["workload"]["rate_pps"] == 30000 and seed == 2:
            r.summary["stalled_flows"] = [stall]
        return r

    monkeypatch.setattr(api, "run", run)
    rows = read_rows(run_sweep(tmp_path))
    marked = {(r["vm.0.workload.rate_pps"], r["seed"]): (r["liveness"], r["liveness_reason"]) for r in rows}
    assert marked.pop(("30000", "2"))[0] == "stalled"
    assert set(marked.values()) == {("ok", "")}
    assert "1 run(s) stalled" in capsys.readouterr().err
