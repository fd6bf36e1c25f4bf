"""The CLI as a user meets it: outputs, contracts, determinism and bad input."""

import contextlib
import csv
import io
import json

import pytest

from conftest import ROOT

VM_KEYS = {"name", "exits_per_s", "exits_total_per_s", "eht_pct", "tig_pct", "interrupts_per_s",
           "interrupts_by_source_per_s", "kicks_per_s",
           "throughput", "latency_us", "loss_pct", "cpu_util_pct"}
REASONS = {"io_instruction", "interrupt_delivery", "eoi", "external_interrupt", "timer", "hlt", "ept_violation",
           "interrupt_window", "ipi", "other"}


def test_run_no_plots_writes_tables_but_no_figures(cli, tmp_path):
    r = cli("run", "examples/udp-send.toml", "--out", str(tmp_path), "--duration", "0.02", "--no-plots")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "summary.json").exists() and (tmp_path / "vms.csv").exists()
    assert not list(tmp_path.glob("*.png")) and not list(tmp_path.glob("*.svg"))
    assert "--no-plots" in r.stdout


def test_run_writes_summary_contract_and_tidy_tables(cli, tmp_path):
    r = cli("run", "examples/udp-send.toml", "--out", str(tmp_path), "--duration", "0.05")
    assert r.returncode == 0, r.stderr
    assert "exits/s" in r.stdout and "vm0 (udp_stream): 50,000 pkt/s" in r.stdout
    s = json.loads((tmp_path / "summary.json").read_text())
    assert {"scenario", "seed", "profile", "sim_seconds", "wall_seconds", "events", "vms", "host"} <= s.keys()
    vm = s["vms"][0]
    assert VM_KEYS <= vm.keys()
    assert set(vm["exits_per_s"]) == REASONS
    assert set(vm["throughput"]) == {"gbps", "pps", "ops_per_s"}
    assert set(vm["latency_us"]) == {"mean", "p50", "p90", "p95", "p99", "p999", "max"}
    assert vm["throughput"]["ops_per_s"] is None, "a metric that does not apply is null"
    assert {"pcpu_util_pct", "io_threads"} <= s["host"].keys()
    assert {"name", "util_pct", "empty_poll_pct"} <= s["host"]["io_threads"][0].keys()
    assert abs(s["sim_seconds"] - 0.05) < 1e-9
    with open(tmp_path / "exits.csv") as f:
        rows = list(csv.DictReader(f))
    assert {r["reason"] for r in rows} == REASONS
    for stem in ("vms", "exits", "pcpus", "io_threads", "latency_cdf"):
        # Every table starts with scenario and seed, so the tables of several runs concatenate.
        with open(tmp_path / f"{stem}.csv") as f:
            table = list(csv.DictReader(f))
        assert table and list(table[0])[:2] == ["scenario", "seed"], stem
        assert {(r["scenario"], r["seed"]) for r in table} == {(s["scenario"], str(s["seed"]))}, stem
    for fig in ("exits.png", "latency_cdf.png"):
        assert (tmp_path / fig).read_bytes()[:4] == b"\x89PNG"


def test_exit_reasons_are_the_rust_list_in_contract_order():
    import eventpath
    from eventpath import _eventpath

    order = ["io_instruction", "interrupt_delivery", "eoi", "external_interrupt", "timer", "hlt", "ept_violation",
             "interrupt_window", "ipi", "other"]
    assert _eventpath.exit_reasons() == order
    r = eventpath.run(str(ROOT / "examples/udp-send.toml"), duration=0.02)
    assert [row["reason"] for row in r.exit_rows()] == order


def test_tables_load_in_pandas(cli, tmp_path):
    pd = pytest.importorskip("pandas")
    assert cli("run", "examples/udp-send.toml", "--out", str(tmp_path), "--duration", "0.02").returncode == 0
    df = pd.read_csv(tmp_path / "vms.csv")
    assert len(df) == 1 and "throughput_gbps" in df.columns
    cdf = pd.read_csv(tmp_path / "latency_cdf.csv")
    assert cdf["cdf"].is_monotonic_increasing and cdf["cdf"].iloc[-1] == 1.0


def test_same_seed_gives_identical_summary_apart_from_wall_seconds(cli, tmp_path):
    outs = []
    for d in ("a", "b"):
        r = cli("run", "examples/udp-send.toml", "--out", str(tmp_path / d), "--seed", "42", "--duration", "0.05")
        assert r.returncode == 0, r.stderr
        s = json.loads((tmp_path / d / "summary.json").read_text())
        s.pop("wall_seconds")
        outs.append(s)
    assert outs[0] == outs[1]
    assert outs[0]["seed"] == 42


def test_exit_rate_follows_message_rate(tmp_path):
    import tomllib

    from eventpath import run

    sc = tomllib.loads((ROOT / "examples/udp-send.toml").read_text())
    sc["duration_s"] = 0.05
    rates = []
    for pps in (10_000, 40_000):
        sc["vm"][0]["workload"]["rate_pps"] = pps
        rates.append(run(sc).summary["vms"][0]["exits_total_per_s"])
    assert rates[1] > 3 * rates[0]


BAD_SCENARIOS = {
    "unknown_key": ('vcpus = 1', 'vcpus = 1\nturbo = true', "unknown field `turbo`"),
    "wrong_type": ('vcpus = 1', 'vcpus = "two"', "invalid type"),
    "zero_duration": ('duration_s = 1.0', 'duration_s = 0', "duration_s"),
    "negative_duration": ('duration_s = 1.0', 'duration_s = -2', "duration_s"),
    "unknown_profile": ('profile = "es2"', 'profile = "pentium"', "unknown profile"),
    "pin_missing_core": ('vcpu_pins = [0]', 'vcpu_pins = [64]', "pCPU 64 does not exist"),
    "zero_vcpus": ('vcpus = 1\nvcpu_pins = [0]', 'vcpus = 0', "at least 1 vCPU"),
    "not_toml": ('name = "udp-send"', 'name = udp send', "line"),
}


@pytest.mark.parametrize("case", sorted(BAD_SCENARIOS))
def test_bad_scenario_exits_2_with_one_line(cli, tmp_path, case):
    old, new, needle = BAD_SCENARIOS[case]
    text = (ROOT / "examples/udp-send.toml").read_text()
    assert old in text
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace(old, new, 1))
    r = cli("run", str(bad), "--out", str(tmp_path / "o"))
    assert r.returncode == 2, (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert needle in lines[0] and "Traceback" not in r.stderr and "panicked" not in r.stderr


def test_missing_scenario_file(cli, tmp_path):
    r = cli("run", str(tmp_path / "nope.toml"), "--out", str(tmp_path / "o"))
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "no such file" in r.stderr


@pytest.mark.parametrize("args,needle", [
    (["run", "examples/udp-send.toml", "--out", "{tmp}", "--duration", "0"], "expected seconds in 1e-6..=86400"),
    (["run", "examples/udp-send.toml", "--out", "{tmp}", "--seed", "-1"], "seed"),
    (["run", "examples/udp-send.toml"], "--out"),
    (["frobnicate"], "invalid choice"),
    (["reproduce", "no-such-id", "--out", "{tmp}"], "unknown experiment"),
    (["reproduce", "all", "--out", "{tmp}", "--workers", "0"], "--workers 0"),
])
def test_bad_arguments_exit_2_with_one_line(cli, tmp_path, args, needle):
    r = cli(*[a.replace("{tmp}", str(tmp_path)) for a in args])
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert len(r.stderr.strip().splitlines()) == 1 and needle in r.stderr, r.stderr


def test_profiles_lists_one_line_each(cli):
    r = cli("profiles")
    assert r.returncode == 0
    names = [line.split()[0] for line in r.stdout.splitlines()]
    assert {"es2", "elvis"} <= set(names)


def test_profiles_name_prints_every_value_with_unit_and_source(cli):
    """issue 29 item 5: one row per dotted key, value, unit, a free parameter's range, source."""
    from eventpath import api, profile_values

    r = cli("profiles", "es2")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["key", "value", "unit", "source"]
    keys = [line.split()[0] for line in lines[1:]]
    assert keys == [v.key for v in profile_values.values(api.profile("es2"))]
    row = next(line for line in lines if line.startswith("exit.io_instruction_ns "))
    assert row.split()[1:3] == ["3,000", "ns"] and "costs.md" in row
    row = next(line for line in lines if line.startswith("exit.indirect_per_direct "))
    assert "ratio" in row and "[free 0..1.5" in row


def test_profiles_name_cuts_sources_to_the_width_unless_full(capsys):
    from eventpath import api
    from eventpath.cli.show import print_profile

    p = api.profile("elvis")
    print_profile(p, width=100)
    cut = capsys.readouterr().out.splitlines()
    assert any(line.endswith("...") for line in cut)
    long_values = ("description", "host.cstates.states")  # a value is never cut: it pushes its row wider
    assert all(len(line) <= 100 for line in cut if not line.startswith(long_values))
    print_profile(p, full=True, width=100)
    full = capsys.readouterr().out
    assert len(full.splitlines()) > len(cut)
    assert all(len(line) <= 100 for line in full.splitlines() if not line.startswith(long_values))
    src = p["exit"]["io_instruction_ns"]["source"]
    assert " ".join(full.split()).count(" ".join(src.split())) == 1, "--full gives the whole source"


def test_profiles_unknown_name_is_one_line_exit_2_naming_the_built_ins(cli):
    r = cli("profiles", "no-such-profile")
    assert r.returncode == 2 and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1
    assert "no-such-profile" in r.stderr and all(n in r.stderr for n in ("es2", "elvis", "did")), r.stderr


def test_run_summary_shows_each_vms_metric_host_cpu_and_eht_tig(cli, tmp_path):
    r = cli("run", "examples/pmd.toml", "--out", str(tmp_path), "--duration", "0.02", "--no-plots")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "vm0 (tcp_stream): " in out and " Gbit/s" in out and "vm2 (memcached): " in out and " ops/s" in out
    cpu = next(line for line in out.splitlines() if line.startswith("host CPU "))
    assert "vCPUs" in cpu and "back-end threads" in cpu and "I/O cores 1.00" in cpu and "other" in cpu
    assert "EHT: exit handling time" in out and "TIG: time in guest mode" in out


def test_summary_metric_follows_the_workload(capsys):
    from eventpath.cli.run_summary import vm_metric

    vm = {"throughput": {"gbps": 0.2, "pps": 50000.0, "ops_per_s": None}}
    assert vm_metric(vm, "udp_stream") == "50,000 pkt/s"
    assert vm_metric(vm, "tcp_stream") == "0.200 Gbit/s"
    assert vm_metric({"throughput": {"gbps": 1e-4, "pps": 100.0, "ops_per_s": 100.0}}, "tcp_rr") == "100 ops/s"
    assert vm_metric({"throughput": {"gbps": None, "pps": None, "ops_per_s": None}}, None).startswith("no throughput")


def test_reproduce_list_and_run_write_contract_and_figure(cli, tmp_path):
    r = cli("reproduce", "--list")
    assert r.returncode == 0 and "es2-fig4-udp" in r.stdout
    r = cli("reproduce", "es2-fig4-udp", "--out", str(tmp_path), "--duration", "0.05")
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "es2-fig4-udp.json").read_text())
    assert {"id", "title", "source", "rows"} <= doc.keys()
    for row in doc["rows"]:
        # A row with a published value carries its metric's definition (published/ID.toml's [measures]).
        want = {"config", "metric", "unit", "simulated", "published", "verdict", "role"}
        assert set(row) == want | ({"definition"} if row["published"] is not None else set())
        assert row["published"] is None or row["definition"].strip()
    assert any(row["published"] is not None for row in doc["rows"])
    assert (tmp_path / "es2-fig4-udp.png").read_bytes()[:4] == b"\x89PNG"


def test_reproduce_all_in_parallel_writes_what_one_worker_writes(cli, tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    for out, w in ((one, "1"), (two, "2")):
        r = cli("reproduce", "all", "--out", str(out), "--duration", "0.01", "--workers", w)
        assert r.returncode == 0, r.stderr
    docs = sorted(p.name for p in one.glob("*.json"))
    assert len(docs) >= 5 and docs == sorted(p.name for p in two.glob("*.json"))
    for name in docs:
        assert (one / name).read_text() == (two / name).read_text(), name
    # The tables print in the order of --list whatever finishes first.
    assert r.stdout.index("es2-fig4-udp:") < r.stdout.index("elvis-baseline-1vm:")


def test_bench_json_reports_both_engines(cli):
    r = cli("bench", "--json", "--seconds", "0.05", "--simpy-seconds", "0.001")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert {"engine_events_per_s", "simpy_events_per_s", "ratio"} <= d.keys()
    assert d["build"] in ("profile-guided", "plain")  # how the numbers were made
    assert d["engine_events_per_s"] > 0 and d["simpy_events_per_s"] > 0
    assert abs(d["ratio"] - d["engine_events_per_s"] / d["simpy_events_per_s"]) < 1e-6 * d["ratio"]


def test_bench_by_kind_counts_every_event_of_the_model_run(cli):
    r = cli("bench", "--json", "--seconds", "0.01", "--simpy-seconds", "0.001", "--model-seconds", "0.02", "--by-kind")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    per, packets = d["model_events_per_packet"], d["model_packets"]
    assert packets > 0 and {"GuestDone", "ExitDone", "IoStep", "WireDone"} <= per.keys()
    # The census is a second run of the same deterministic model: its kinds add up to its events.
    assert abs(sum(per.values()) * packets - d["model_events"]) < 1e-6 * d["model_events"]


def test_api_dict_scenario_and_input_error():
    from eventpath import InputError, run

    sc = {"name": "d", "profile": "es2", "duration_s": 0.01,
          "vm": [{"name": "v", "vcpus": 1, "workload": {"kind": "udp_stream", "message_bytes": 64}}]}
    res = run(sc)
    assert res.summary["vms"][0]["throughput"]["pps"] > 0
    sc["vm"][0]["vcpus"] = 0
    with pytest.raises(InputError, match="at least 1 vCPU"):
        run(sc)


def test_demo_prints_comparison_and_writes_figure(cli, tmp_path):
    r = cli("demo", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "emulated" in r.stdout and "posted" in r.stdout
    rows = json.loads((tmp_path / "demo.json").read_text())
    posted = [x for x in rows if x["delivery"] == "posted"]
    assert posted and all(x["eoi"] == 0 and x["interrupt_delivery"] == 0 for x in posted)
    assert (tmp_path / "demo-exits.png").read_bytes()[:4] == b"\x89PNG"


def test_trace_writes_perfetto_json(cli, tmp_path):
    out = tmp_path / "t.json"
    r = cli("trace", "examples/tcp-send.toml", "--out", str(out), "--from", "0.05", "--to", "0.051",
            "--duration", "0.01")
    assert r.returncode == 0, r.stderr
    assert "perfetto" in r.stdout
    j = json.loads(out.read_text())
    ev = j["traceEvents"]
    names = {e["name"] for e in ev}
    assert "exit: io_instruction (kick)" in names and "tx tcp-send" in names
    # A process per VM and one for the host's pCPUs; the pCPU tracks show the vCPU thread.
    procs = {e["pid"]: e["args"]["name"] for e in ev if e["name"] == "process_name"}
    assert sorted(procs.values()) == ["VM tcp-send", "host: tcp-send"]
    tracks = {e["tid"]: (procs[e["pid"]], e["args"]["name"]) for e in ev if e["name"] == "thread_name"}
    spans = [e for e in ev if e["ph"] == "X"]
    assert any(tracks[e["tid"]][1] == "pCPU 0" and e["name"] == "vcpu:tcp-send/0" for e in spans)
    assert any(tracks[e["tid"]][1] == "vhost-tcp-send" and e["name"] == "rx tcp-send" for e in spans)
    # Flow arrows: a kick's exit starts one that the vhost item takes in.
    flows = {}
    for e in spans:
        if "bind_id" in e:
            flows.setdefault(e["bind_id"], []).append(e)
    assert any([p["name"] for p in sorted(f, key=lambda e: e["ts"])] == ["exit: io_instruction (kick)", "tx tcp-send"]
               for f in flows.values())
    r = cli("trace", "examples/tcp-send.toml", "--out", str(out), "--from", "0.2", "--to", "0.1")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "--from" in r.stderr


def test_trace_with_the_largest_limit_streams_a_valid_file(cli, tmp_path):
    """Issue 26: --limit 100000000 used to buffer every event and abort (SIGABRT, a Rust
    backtrace) when memory ran out; events now go to the file as they come. A short window
    gives a complete trace; a file that cannot be written is one line, exit 2, and no file."""
    import resource
    import signal
    import subprocess
    import sys

    out = tmp_path / "t.json"
    args = ["trace", "examples/tcp-send.toml", "--out", str(out), "--from", "0", "--to", "1",
            "--duration", "0.02", "--limit", "100000000"]
    r = cli(*args)
    assert r.returncode == 0, r.stderr
    j = json.loads(out.read_text())
    n = sum(1 for e in j["traceEvents"] if e["ph"] != "M")
    assert n > 1000 and j["otherData"] == {"dropped_events": 0, "limit": 100_000_000}
    assert f"{n:,} events" in r.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.json"]

    def small_files():  # writes past 64 kB fail with EFBIG instead of killing the process
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))

    out.unlink()
    r = subprocess.run([sys.executable, "-m", "eventpath.cli", *args], capture_output=True, text=True,
                       cwd=ROOT, timeout=600, preexec_fn=small_files)
    assert r.returncode == 2, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "--out" in r.stderr and "cannot write the trace" in r.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_stalled_flow_is_reported_as_a_model_bug(capsys):
    from eventpath.cli.run_summary import print_summary

    vm = {"name": "vm0", "exits_per_s": {}, "exits_total_per_s": 0.0, "eht_pct": None, "tig_pct": None,
          "kicks_per_s": None, "interrupts_per_s": None, "throughput": {"gbps": None, "pps": None},
          "latency_us": {"p50": None, "p99": None}}
    s = {"scenario": "x", "sim_seconds": 0.1, "profile": "es2", "seed": 1, "wall_seconds": 0.0, "events": 1,
         "vms": [vm], "stalled_flows": [{"vm": "vm0", "stalled_from_s": 0.01, "detected_s": 0.06,
                                          "recovered_s": None, "state": "vcpus [Halted]"}]}
    print_summary(s)
    err = capsys.readouterr().err
    assert "MODEL BUG" in err and "vm0" in err and "never recovered" in err and "vcpus [Halted]" in err
    s["stalled_flows"] = []
    print_summary(s)
    assert capsys.readouterr().err == ""


def test_reproduce_list_with_an_id_shows_that_entry(cli):
    """reproduce-list-ignores-id.sh: the ID was ignored and the whole list printed."""
    r = cli("reproduce", "--list", "es2-table1")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("es2-table1 "), r.stdout
    assert len(cli("reproduce", "--list").stdout.strip().splitlines()) > 5


def test_a_run_into_the_same_out_leaves_no_file_of_the_last_run(cli, tmp_path):
    """stale-figures-kept.sh: a --no-plots run left the previous run's figures beside its summary."""
    from eventpath.cli import RUN_FIGURES, RUN_FILES

    r = cli("run", "examples/udp-send.toml", "--out", str(tmp_path), "--duration", "0.02")
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(RUN_FILES)
    assert all((tmp_path / f).exists() for f in RUN_FIGURES)
    (tmp_path / "mine.txt").write_text("not the run's")
    r = cli("run", "examples/tcp-send.toml", "--out", str(tmp_path), "--duration", "0.02", "--no-plots")
    assert r.returncode == 0, r.stderr
    assert not any((tmp_path / f).exists() for f in RUN_FIGURES)
    assert (tmp_path / "mine.txt").exists(), "only the files a run owns are removed"
    assert json.loads((tmp_path / "summary.json").read_text())["scenario"] == "tcp-send"
    # A bad scenario leaves the last run's results as they were.
    assert cli("run", "/nonexistent.toml", "--out", str(tmp_path)).returncode == 2
    assert (tmp_path / "summary.json").exists()


def test_run_figures_are_the_files_the_cli_owns(tmp_path):
    import eventpath
    from eventpath.cli import RUN_FIGURES, RUN_TABLES
    from eventpath.plots import run_figures

    r = eventpath.run(str(ROOT / "examples/udp-send.toml"), duration=0.01)
    assert tuple(p.name for p in run_figures(r, tmp_path)) == RUN_FIGURES
    assert tuple(r.tables()) == RUN_TABLES


def test_version_names_the_package_version_and_its_commit(capsys):
    import eventpath
    from importlib import metadata

    from eventpath import cli

    assert eventpath.__version__ == metadata.version("eventpath")
    with pytest.raises(SystemExit) as e:
        cli.main(["--version"])
    assert e.value.code == 0
    out = capsys.readouterr().out.strip()
    assert out.startswith(f"eventpath {eventpath.__version__} (") and "\n" not in out, out
    assert "commit " in out or "not a git checkout" in out, out


def test_bench_matrix_times_a_comparison_and_counts_its_runs():
    """`bench --matrix` (issue 52 item 4) times the README's comparison; here a small one."""
    from eventpath import bench

    r = bench.matrix(("tcp_rr",), seeds=[1], vary={"delivery": None}, workers=1)
    assert r["matrix_wall_s"] > 0 and r["matrix_workloads"] == ["tcp_rr"]
    assert 1 <= r["matrix_runs"] <= r["matrix_cells"] and r["matrix_cells"] > 3, r
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        bench.print_result({"build": "plain", "engine_events_per_s": 1e7, "engine_events": 1, "engine_wall_s": 1.0, "simpy_events_per_s": 1e5,
                            "simpy_events": 1, "simpy_wall_s": 1.0, "ratio": 100.0, **r})
    assert "matrix" in text.getvalue() and "tcp_rr" in text.getvalue()
