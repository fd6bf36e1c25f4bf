"""Bad input gets one clear error and exit code 2 — never a traceback, never silent acceptance
(issue 9). The API raises InputError (a ValueError) with a one-line message."""

import copy
import json
import signal

import pytest

import eventpath
from conftest import ROOT
from eventpath import InputError

SC = {"name": "d", "profile": "es2", "duration_s": 0.005, "warmup_s": 0.001,
      "vm": [{"name": "v", "vcpus": 1, "workload": {"kind": "udp_stream", "message_bytes": 64}}]}


def one_line_error(fn, *args, **kw) -> str:
    with pytest.raises(InputError) as e:
        fn(*args, **kw)
    msg = str(e.value)
    assert "\n" not in msg and msg.strip() == msg, repr(msg)
    return msg


def assert_exit_2_one_line(r, *needles):
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("eventpath: error: ") and "internal error" not in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and "panicked" not in r.stderr
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


# --- Python API arguments (item 4) ---

@pytest.mark.parametrize("kw,needle", [
    ({"seed": "x"}, "seed: 'x'"),
    ({"seed": -1}, "seed: -1"),
    ({"seed": 2**70}, "0 ≤ seed < 2^64"),
    ({"seed": 1.5}, "seed: 1.5"),
    ({"seed": True}, "seed: True"),
    ({"duration": "x"}, "duration: 'x'"),
    ({"duration": 10**400}, "duration: "),
    ({"duration": 1e300}, "--duration: 1e300 is not allowed"),
    ({"duration": 4e-10}, "1e-6..=86400"),
    ({"duration": float("nan")}, "1e-6..=86400"),
    ({"duration": float("inf")}, "1e-6..=86400"),
    ({"duration": [1]}, "duration: [1]"),
    ({"progress": 3}, "progress: 3"),
])
def test_api_bad_arguments_raise_input_error(kw, needle):
    for scenario in (SC, ROOT / "examples/udp-send.toml"):
        assert needle in one_line_error(eventpath.run, scenario, **kw)


@pytest.mark.parametrize("scenario,needle", [
    (123, "int 123"),
    (None, "NoneType"),
    (["examples/udp-send.toml"], "list"),
    (b"\xff-no-such.toml", "not valid UTF-8"),
    ("/nonexistent/x.toml", "no such file"),
])
def test_api_bad_scenario_argument_raises_input_error(scenario, needle):
    assert needle in one_line_error(eventpath.run, scenario)


def mutated(fn):
    sc = copy.deepcopy(SC)
    fn(sc)
    return sc


@pytest.mark.parametrize("mutate,needles", [
    (lambda s: s["vm"][0]["workload"].update(message_bytes="x"), ["`message_bytes`", "invalid type"]),
    (lambda s: s["vm"][0]["workload"].update(kind="nope"), ["kind \"nope\"", "udp_stream"]),
    (lambda s: s["vm"][0]["workload"].pop("kind"), ["missing key `kind`"]),
    (lambda s: s["vm"][0]["workload"].update(rate_pps=None), ["rate_pps"]),
    (lambda s: s["vm"][0].update(vcpus=-1), ["vm[0].vcpus"]),
    (lambda s: s.update(duration_s=float("nan")), ["key `duration_s`", "nan"]),
    (lambda s: s["vm"][0]["workload"].update(rate_pps=float("inf")), ["vm[0].workload.rate_pps", "inf"]),
    (lambda s: s.update(vm={1, 2}), ["not JSON serializable"]),
    (lambda s: s.update(name="n" * 3000), ["key `name`", "at most 64"]),
    (lambda s: s.update(seed=2**70), ["seed"]),
])
def test_api_dict_errors_are_one_line(mutate, needles):
    m = one_line_error(eventpath.run, mutated(mutate))
    for n in needles:
        assert n in m, (n, m)
    assert " at line 1 column " not in m, m


def test_workload_field_errors_are_one_line_for_dicts_and_files(tmp_path):
    """crates/py used to leave serde's multi-line text in every workload-field error of a dict."""
    for kind, fields in [("udp_stream", {"message_bytes": 64}), ("tcp_rr", {"request_bytes": 1, "response_bytes": 1}),
                         ("memcached", {"concurrency": 2}), ("http", {"concurrency": 2, "file_bytes": 10})]:
        for field in list(fields) + ["bogus"]:
            for bad in ["str", 1.5, [1], {"a": 1}, True, -1]:
                w = {"kind": kind, **fields, field: bad}
                sc = mutated(lambda s: s["vm"][0].update(workload=w))
                try:
                    eventpath.run(sc)
                except InputError as e:
                    assert "\n" not in str(e), repr(str(e))


# --- CLI arguments and output paths (item 5) ---

@pytest.mark.parametrize("args,needles", [
    (["sweep", "examples/udp-send.toml", "--seeds", "x"], ["--seeds x", "not an integer"]),
    (["sweep", "examples/udp-send.toml", "--seeds", ""], ["--seeds ''"]),
    (["sweep", "examples/udp-send.toml", "--seeds", "1,,2"], ["--seeds"]),
    (["sweep", "examples/udp-send.toml", "--seeds", "-3"], ["-3", "0 ≤ seed < 2^64"]),
    (["sweep", "examples/udp-send.toml", "--seeds", "1,1"], ["given twice"]),
    (["sweep", "examples/udp-send.toml", "--workers", "-1"], ["--workers -1", "1..=1024"]),
    (["sweep", "examples/udp-send.toml", "--workers", "0"], ["--workers 0"]),
    (["sweep", "examples/udp-send.toml", "--param", "name.x=1"], ["`name` is a value"]),
    (["sweep", "examples/udp-send.toml", "--param", "vm.0.name.x=1"], ["`vm.0.name` is a value"]),
    (["sweep", "examples/udp-send.toml", "--param", "vm.-1.vcpus=1"], ["vm.-1"]),
    (["sweep", "examples/udp-send.toml", "--param", "vm.0.vcpus="], ["empty value"]),
    (["sweep", "examples/udp-send.toml", "--param", "vm..vcpus=1"], ["empty key"]),
    (["sweep", "examples/udp-send.toml", "--param", "vm.0.workload.rate_pps=1e300"], ["rate_pps", "1..=2e8"]),
    (["sweep", "examples/udp-send.toml", "--param", "vm.0.vcpus=1,\"a\nb\""], ["vm[0].vcpus"]),
    (["sweep", "examples/udp-send.toml", "--duration", "1e300"], ["--duration: 1e300"]),
    (["sweep", "/nonexistent.toml"], ["no such file"]),
    (["sweep", "README.md"], ["README.md", "line"]),
    (["trace", "examples/udp-send.toml", "--limit", str(2**70)], ["--limit", "1..=100,000,000"]),
    (["trace", "examples/udp-send.toml", "--limit", "0"], ["--limit 0"]),
    (["trace", "examples/udp-send.toml", "--out", "{tmp}/file/t.json"], ["is a file, not a directory"]),
    (["trace", "examples/udp-send.toml", "--out", ""], ["--out ''"]),
    (["trace", "examples/udp-send.toml", "--out", "{tmp}"], ["is a directory"]),
    (["trace", "examples/udp-send.toml", "--from", "nan"], ["--from"]),
    (["run", "examples/udp-send.toml", "--out", "{tmp}/file/x"], ["is a file, not a directory"]),
    (["run", "examples/udp-send.toml", "--out", "{tmp}/file"], ["exists and is not a directory"]),
    (["run", "examples/udp-send.toml", "--out", "/proc"], ["--out /proc", "cannot write"]),
    (["run", "examples/udp-send.toml", "--out", "/proc/eventpath-x"], ["--out /proc/eventpath-x"]),
    (["run", "examples/udp-send.toml", "--out", ""], ["--out ''"]),
    (["run", "examples/udp-send.toml", "--duration", "1e300"], ["--duration: 1e300", "1e-6..=86400"]),
    (["run", "examples/udp-send.toml", "--duration", "1.85e10"], ["--duration: 18500000000"]),
    (["run", "examples/udp-send.toml", "--duration", "4e-10"], ["--duration: 4e-10"]),
    (["run", "examples/udp-send.toml", "--duration", "inf"], ["--duration: inf"]),
    (["run", "examples/udp-send.toml", "--duration", "x"], ["'x' is not a number"]),
    (["run", "examples/udp-send.toml", "--seed", str(2**64)], ["--seed"]),
    (["sweep", "examples/sriov-multi-vf.toml", "--param", "vm.0.net.vfs=0"], ["vm[0].net.vfs", "0 is not allowed"]),
    (["sweep", "examples/sriov-multi-vf.toml", "--param", "vm.0.net.vfs=64"], ["vm[0].net.vfs", "64 is not allowed", "1..=63"]),
    (["sweep", "examples/sriov-multi-vf.toml", "--param", "vm.0.net.kind=\"virtio\""], ["vm[0].net.vfs", "sriov_vf"]),
    (["bench", "--seconds", "1e300"], ["--seconds"]),
    (["bench", "--simpy-seconds", "100"], ["--simpy-seconds", "slower"]),
    (["reproduce", "es2-fig4-udp", "--out", "{tmp}/r", "--duration", "1e300"], ["--duration: 1e300"]),
    (["kvm", "run", "examples/udp-send.toml"], ["eventpath run", "line"]),
    (["kvm", "run", "README.md"], ["README.md", "line 3"]),
    (["kvm", "run", "/nonexistent.toml"], ["cannot read scenario /nonexistent.toml"]),
])
def test_bad_cli_input_exits_2_with_one_line(cli, tmp_path, args, needles):
    (tmp_path / "file").write_text("a file")
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    if "--out" not in args and args[0] in ("run", "sweep", "trace", "kvm"):
        args += ["--out", str(tmp_path / ("t.json" if args[0] == "trace" else "o"))]
    assert_exit_2_one_line(cli(*args), *needles)


def test_out_empty_writes_nothing_into_the_current_directory(cli, tmp_path):
    r = cli("run", str(ROOT / "examples/udp-send.toml"), "--out", "", "--duration", "0.001", cwd=tmp_path)
    assert_exit_2_one_line(r, "--out ''")
    assert list(tmp_path.iterdir()) == []


def test_huge_values_in_a_scenario_file_exit_2(cli, tmp_path):
    base = (ROOT / "examples/udp-send.toml").read_text()
    for old, new, needle in [
        ("warmup_s = 0.1", "warmup_s = 1e18", "key `warmup_s`: 1e18"),
        ("warmup_s = 0.1", "warmup_s = 1e6", "0..=3600"),
        ("duration_s = 1.0", "duration_s = 1.85e10", "key `duration_s`"),
        ("name = \"vm0\"", "name = \"" + "v" * 5000 + "\"", "at most 64"),
        ("warmup_s = 0.1", "warmup_s = 0.1\n[profile_overrides.sched]\ntick_hz = 4294967296", "sched.tick_hz"),
        ("warmup_s = 0.1", "warmup_s = 0.1\n[profile_overrides.guest]\ntick_hz = 1e18", "guest.tick_hz"),
        ("warmup_s = 0.1", "warmup_s = 0.1\n[profile_overrides.nic]\nmtu_bytes = 0", "68..=65535"),
        ("warmup_s = 0.1", "warmup_s = 0.1\n[profile_overrides.cpu]\nsockets = 4294967296", "cpu.sockets"),
    ]:
        assert old in base
        p = tmp_path / "bad.toml"
        p.write_text(base.replace(old, new, 1))
        assert_exit_2_one_line(cli("run", str(p), "--out", str(tmp_path / "o")), needle)


def test_more_pcpus_than_the_model_supports_exit_2(cli, tmp_path):
    """512 pCPUs at most (issue 32 item 4): the profile's cores beyond it, or host.pcpus."""
    base = (ROOT / "examples/udp-send.toml").read_text().replace('profile = "es2"', 'profile = "modern"', 1)
    assert "\n[host]" not in base
    for extra, needles in [
        ("[profile_overrides.cpu]\ncores_per_socket = 512\n", ("key `host.pcpus`: absent", "1024 cores of profile modern", "1..=512")),
        ("[profile_overrides.cpu]\ncores_per_socket = 512\n[host]\npcpus = 600\n", ("key `host.pcpus`: 600 is not allowed", "1..=512")),
        ("[host]\npcpus = 113\n", ("key `host.pcpus`: 113 is not allowed", "1..=112")),
    ]:
        p = tmp_path / "big.toml"
        p.write_text(base + extra)
        assert_exit_2_one_line(cli("run", str(p), "--out", str(tmp_path / "o")), *needles)


def test_ten_thousand_vms_exit_2(cli, tmp_path):
    vms = "".join(f'[[vm]]\nname = "v{i}"\nvcpus = 1\n' for i in range(10_000))
    p = tmp_path / "many.toml"
    p.write_text(f'name = "many"\nprofile = "es2"\n{vms}')
    assert_exit_2_one_line(cli("run", str(p), "--out", str(tmp_path / "o")), "10000 VMs", "at most 1024")


def test_profile_with_huge_socket_count_exits_2(cli, tmp_path):
    prof = (ROOT / "profiles/es2.toml").read_text()
    assert "sockets = { value = 1," in prof
    (tmp_path / "p.toml").write_text(prof.replace("sockets = { value = 1,", "sockets = { value = 4294967296,"))
    text = (ROOT / "examples/udp-send.toml").read_text().replace('profile = "es2"', f'profile = "{tmp_path}/p.toml"')
    (tmp_path / "s.toml").write_text(text)
    assert_exit_2_one_line(cli("run", str(tmp_path / "s.toml"), "--out", str(tmp_path / "o")),
                           "cpu.sockets", "4294967296", "1..=16")


# --- Outputs of odd but valid runs ---

def test_run_too_short_to_complete_anything_plots_without_warnings(tmp_path):
    """pytest turns warnings into errors: matplotlib's empty-legend warning fails this test."""
    from eventpath.plots import run_figures

    sc = copy.deepcopy(SC)
    sc["vm"][0]["workload"] = {"kind": "tcp_rr", "request_bytes": 1, "response_bytes": 1}
    r = eventpath.run(sc, duration=1e-6)
    assert r.latency_cdf == []
    for p in run_figures(r, tmp_path):
        assert p.read_bytes()[:4] == b"\x89PNG"


def test_many_vms_plot_on_a_page(tmp_path):
    from PIL import Image

    from eventpath.plots import run_figures

    sc = copy.deepcopy(SC)
    w = {"kind": "udp_stream", "message_bytes": 64, "rate_pps": 1000}
    sc["vm"] = [{"name": f"vm-with-a-long-name-{i:04d}", "vcpus": 1, "workload": w} for i in range(300)]
    r = eventpath.run(sc, duration=0.002)
    for p in run_figures(r, tmp_path):
        with Image.open(p) as im:
            assert im.size[0] <= 16 * 120


def test_kvm_summary_prints_without_events(capsys):
    """The testbed leaves events, seed and profile null (docs/summary.md); the CLI printed
    `{events:,}` and crashed after writing the results."""
    from eventpath.cli.run_summary import print_summary

    s = {"scenario": "t", "seed": None, "profile": None, "sim_seconds": 0.3, "wall_seconds": 0.4, "events": None,
         "vms": [{"name": "vm0", "exits_per_s": {"io_instruction": 10.0, "timer": None}, "exits_total_per_s": None,
                  "eht_pct": None, "tig_pct": None, "kicks_per_s": 1.0, "interrupts_per_s": None,
                  "throughput": {"gbps": None, "pps": None, "ops_per_s": 5.0},
                  "latency_us": {"p50": None, "p99": None}}]}
    print_summary(s)
    out = capsys.readouterr().out
    assert "t: 0.3 s measured in 0.40 s wall\n" in out and "events" not in out and "n/a" in out


# --- Ctrl-C and progress (item 7) ---

def test_api_progress_and_ctrl_c_keep_the_simulated_part():
    sc = copy.deepcopy(SC)
    sc["duration_s"], sc["warmup_s"] = 50.0, 0.001
    sc["vm"][0]["workload"] = {"kind": "tcp_stream", "message_bytes": 1024}
    seen = []

    def progress(now, end):
        seen.append((now, end))
        if now > 0.01:
            signal.raise_signal(signal.SIGINT)  # as Ctrl-C does: Python's handler raises KeyboardInterrupt

    with pytest.raises(eventpath.Interrupted) as e:
        eventpath.run(sc, progress=progress)
    assert isinstance(e.value, KeyboardInterrupt)
    s = e.value.result.summary
    assert s["interrupted"] is True and s["interrupted_at_s"] == seen[-1][0] < 50.001
    assert abs(s["sim_seconds"] - (s["interrupted_at_s"] - 0.001)) < 1e-9
    assert s["vms"][0]["throughput"]["gbps"] > 0
    assert all(end == pytest.approx(50.001) for _, end in seen)
    # A run that completes has no such key, and its progress ends at the end.
    seen.clear()
    done = eventpath.run(SC, progress=lambda now, end: seen.append((now, end)))
    assert "interrupted" not in done.summary and seen[-1] == (pytest.approx(0.006), pytest.approx(0.006))


def test_api_progress_errors_propagate():
    sc = copy.deepcopy(SC)
    sc["duration_s"] = 50.0

    def boom(now, end):
        raise RuntimeError("from the callback")

    with pytest.raises(RuntimeError, match="from the callback"):
        eventpath.run(sc, progress=boom)


def test_ctrl_c_in_the_warm_up_keeps_nothing():
    sc = copy.deepcopy(SC)
    sc["duration_s"], sc["warmup_s"] = 1.0, 50.0
    sc["vm"][0]["workload"] = {"kind": "tcp_stream", "message_bytes": 1024}
    with pytest.raises(KeyboardInterrupt) as e:
        eventpath.run(sc, progress=lambda now, end: signal.raise_signal(signal.SIGINT))
    assert not isinstance(e.value, eventpath.Interrupted)


def test_cli_ctrl_c_writes_the_simulated_part_and_exits_130(tmp_path):
    """On a terminal, `run` shows a progress bar; Ctrl-C stops the run within a chunk, writes
    every file of the part simulated, marked as interrupted, and exits 130."""
    import os
    import pty
    import re
    import select
    import subprocess
    import sys
    import time

    sc = tmp_path / "long.toml"
    sc.write_text('name = "long"\nprofile = "es2"\nduration_s = 500.0\nwarmup_s = 0.001\n[[vm]]\nname = "vm0"\n'
                  'vcpus = 1\n[vm.workload]\nkind = "tcp_stream"\nmessage_bytes = 1024\n')
    master, slave = pty.openpty()
    p = subprocess.Popen([sys.executable, "-m", "eventpath.cli", "run", str(sc), "--out", str(tmp_path / "o")],
                         stdout=subprocess.PIPE, stderr=slave, text=True, cwd=ROOT)
    os.close(slave)
    seen = b""

    def read_some() -> bool:
        nonlocal seen
        if select.select([master], [], [], 1.0)[0]:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the child closed the terminal
                return False
            seen += chunk
            return bool(chunk)
        return True

    deadline = time.monotonic() + 120  # a safety net, not an assertion on speed
    while time.monotonic() < deadline and p.poll() is None and read_some():
        m = re.findall(rb"simulated: +\d+%\|.*?\| ([0-9.e+-]+)/", seen)
        if m and float(m[-1]) > 0.01:  # the bar shows simulated seconds past the warm-up
            break
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=120)
    while read_some() and select.select([master], [], [], 0)[0]:
        pass
    os.close(master)
    assert p.returncode == 130, (out, seen.decode(errors="replace"))
    err = seen.decode(errors="replace")
    assert "simulated:" in err, "a progress bar on a terminal"
    assert "interrupted" in err and "Traceback" not in err
    s = json.loads((tmp_path / "o/summary.json").read_text())
    assert s["interrupted"] is True and 0 < s["sim_seconds"] < 500
    for f in ("vms.csv", "exits.csv", "exits.png", "latency_cdf.png"):
        assert (tmp_path / "o" / f).stat().st_size > 0


# --- Issue 26: the reliability run's input findings (copies in tests/python/reliability/) ---

def test_api_table_given_as_a_list_is_input_error():
    """api-host-list.py: "host": [None] and [2] ran (serde read the list positionally)."""
    for host in ([None], [2]):
        sc = mutated(lambda s: s.update(host=host))
        m = one_line_error(eventpath.run, sc)
        assert "key `host`" in m and "expected a table" in m and "found an array" in m, m
    m = one_line_error(eventpath.run, mutated(lambda s: s["vm"][0].update(net=["virtio", 256])))
    assert "key `vm[0].net`" in m and "found an array" in m, m


def test_api_named_choice_given_a_number_lists_the_names():
    m = one_line_error(eventpath.run, mutated(lambda s: s["vm"][0].update(interrupt_delivery=5)))
    assert "key `vm[0].interrupt_delivery`: 5 is not allowed; expected one of `emulated`" in m, m


@pytest.mark.parametrize("name,call,needle", [
    ("profile(None)", lambda api: api.profile(None), "profile: None is not allowed"),
    ("profile(1)", lambda api: api.profile(1), "profile: 1 is not allowed"),
    ("profile(unknown)", lambda api: api.profile("nosuch"), "unknown profile"),
    ("progress arity", lambda api: api.run(SC, progress=lambda: None), "progress: <lambda>() is not allowed"),
    ("progress arity 3", lambda api: api.run(SC, progress=lambda a, b, c: None), "expected a callable(simulated_s, end_s)"),
    ("overriding key", lambda api: _ov(api, {"eoi_ns": 1}), "key 'eoi_ns' is not allowed"),
    ("overriding list", lambda api: _ov(api, [1]), "values [1] is not allowed"),
    ("overriding value", lambda api: _ov(api, {"exit.eoi_ns": "x"}), "exit.eoi_ns = 'x' is not allowed"),
    ("overriding nan", lambda api: _ov(api, {"exit.eoi_ns": float("nan")}), "expected a finite number"),
    ("overriding range", lambda api: _ov(api, {"exit.eoi_ns": -1.0}), "profile_overrides.exit.eoi_ns"),
    ("overriding profile", lambda api: _ov(api, {"exit.eoi_ns": 1}, profile=3), "profile 3 is not allowed"),
    ("overriding missing", lambda api: _ov(api, {"exit.eoi_ns": 1}, "/nonexistent.toml"), "no such file"),
    ("overriding directory", lambda api: _ov(api, {"exit.eoi_ns": 1}, str(ROOT)), "cannot read scenario"),
    ("overriding bad TOML", lambda api: _ov(api, {"exit.eoi_ns": 1}, str(ROOT / "README.md")), "README.md"),
])
def test_api_bad_arguments_of_every_entry_point_are_input_error(name, call, needle):
    """api-non-inputerror.py: each raised TypeError, ValueError, FileNotFoundError, ..."""
    from eventpath import api

    assert needle in one_line_error(call, api), name


def _ov(api, values, scenario=str(ROOT / "examples/udp-send.toml"), profile="es2"):
    with api.overriding(profile, values):
        api.run(scenario, duration=0.001)


def test_api_toml_text_for_a_path_is_one_line():
    """api-non-inputerror.py: eventpath.run(TOML text) raised a 55-line InputError."""
    text = (ROOT / "examples/udp-send.toml").read_text()
    m = one_line_error(eventpath.run, text)
    assert "is not a file path" in m and "tomllib.loads(text)" in m and len(m) < 200, m
    import tomllib

    assert eventpath.run(tomllib.loads(text), duration=0.001).summary["scenario"] == "udp-send"


def _raise_input_error_in_a_worker():
    eventpath.run({"name": "w", "profile": "es2", "vm": []})


def test_input_error_crosses_a_process_pool():
    """calibrate-bad-duration-internal-error.sh: `_eventpath.InputError` could not be pickled
    ("import of module '_eventpath' failed"), so a bad input in a worker became exit 1."""
    import pickle
    from concurrent.futures import ProcessPoolExecutor

    e = pickle.loads(pickle.dumps(InputError("x")))
    assert type(e) is InputError and str(e) == "x"
    with ProcessPoolExecutor(max_workers=1) as pool:
        with pytest.raises(InputError, match="no VM defined"):
            pool.submit(_raise_input_error_in_a_worker).result()


@pytest.mark.parametrize("duration", ["0", "-1", "nan", "1e30", "1e-7", "-inf"])
def test_calibrate_bad_duration_exits_2_and_leaves_no_calibration(cli, tmp_path, duration):
    out = tmp_path / "cal"
    r = cli("calibrate", "elvis", "--out", str(out), "--duration", duration, "--budget", "1", "--workers", "1")
    assert_exit_2_one_line(r, "--duration: ", "1e-6..=86400")
    assert not (out / "evals.jsonl").exists()
    # The same --out then says what is wrong with the new value, not "holds a calibration".
    r = cli("calibrate", "elvis", "--out", str(out), "--duration", "-1", "--budget", "1", "--workers", "1")
    assert_exit_2_one_line(r, "--duration: -1 is not allowed")


def test_calibrate_log_is_written_with_the_first_evaluation(tmp_path):
    from eventpath.calibrate import EvalLog

    log = EvalLog(tmp_path / "evals.jsonl", "f", resume=False)
    assert not log.path.exists()
    log.add([0.5], {"a": 1.0}, 2.0)
    again = EvalLog(tmp_path / "evals.jsonl", "f", resume=True)
    assert again.done == {"0.500000000000": 2.0}


@pytest.mark.parametrize("args,needles", [
    (["sweep", "examples/udp-send.toml", "--param", "vm.0.workload.rate_pps=nan", "--workers", "1"],
     ["vm.0.workload.rate_pps=nan", "expected a finite number", "NaN"]),
    (["sweep", "examples/udp-send.toml", "--param", "vm.0.workload.rate_pps=-inf"], ["-inf is not allowed"]),
    (["run", "examples/udp-send.toml", "--duration", "-inf"], ["--duration: -inf is not allowed", "1e-6..=86400"]),
    (["run", "examples/udp-send.toml", "--duration", "-1e5"], ["--duration: -100000 is not allowed"]),
    (["reproduce", "es2-fig4-udp", "--out", "{tmp}/r", "--duration", "-nan"], ["--duration: NaN is not allowed"]),
    (["reproduce", "--list", "nope"], ["reproduce --list nope: unknown experiment", "es2-table1"]),
])
def test_negative_and_non_finite_numbers_reach_their_check(cli, tmp_path, args, needles):
    """msg-sweep-nan.sh: a NaN said "expected value"; `--duration -inf` was read as an option."""
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    if "--out" not in args and args[0] in ("run", "sweep"):
        args += ["--out", str(tmp_path / "o")]
    assert_exit_2_one_line(cli(*args), *needles)


# --- Issue 45: the hostile-user run's API misuse (copy in tests/python/reliability/) ---

#: Per call of api-misuse-non-inputerror.py, what its one line must say: the argument and what
#: is allowed (each once raised TypeError, ValueError, KeyError, AttributeError, OverflowError or
#: UnicodeDecodeError).
MISUSE = {
    "sweep(out=None)": ("sweep: out None", "expected the path of a directory"),
    "sweep(out=5)": ("sweep: out 5", "expected the path of a directory"),
    "sweep(out='a\\0b')": ("sweep: out '", "no NUL character"),
    "sweep(value {1})": ("sweep: vm.0.workload.rate_pps value {1}", "expected a scenario value"),
    "sweep(value object())": ("sweep: vm.0.workload.rate_pps value <object", "expected a scenario value"),
    "reproduce([['es2-table1']])": ("reproduce: experiment ['es2-table1']", "expected an experiment ID"),
    "reproduce([{'a': 1}])": ("reproduce: experiment {'a': 1}", "expected an experiment ID"),
    "qos.search(None)": ("scenario: NoneType None", "expected a path to a TOML file or a dict"),
    "qos.search(non-UTF-8 file)": ("bad.toml", "UTF-8"),
    "qos.search(vm={'a': 1})": ("key `vm`", "expected an array of tables"),
    "qos.search(vm=['x'])": ("key `vm[0]`", "expected a table"),
    "overriding + profile_overrides=5": ("key `profile_overrides`", "expected a table"),
    "overriding + profile_overrides.exit=5": ("key `profile_overrides.exit`", "expected a table"),
    "RouteRequest('a', None, 5)": ("RouteRequest: irq 'a'", "expected an interrupt source"),
    "RouteRequest(irq=2**100)": ("RouteRequest: irq 1267650600228229401496703205376", "0..=4294967295"),
    "RouteRequest(irq=-1)": ("RouteRequest: irq -1", "0..=4294967295"),
}


def test_every_api_misuse_call_of_the_hostile_run_raises_one_line_input_error(tmp_path):
    """reliability/api-misuse-non-inputerror.py, run whole as its header says (a script of its
    own: it prints one line per call)."""
    import subprocess
    import sys

    script = ROOT / "tests/python/reliability/api-misuse-non-inputerror.py"
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == len(MISUSE) == 16
    for line in lines:
        name, _, message = (part.strip() for part in line.partition(" InputError (ok): "))
        assert message, line  # "FINDING TypeError: ..." or "no exception" otherwise
        for needle in MISUSE[name]:
            assert needle in message, (name, needle, message)


@pytest.mark.parametrize("kw, needle", [
    ({"irq": 0, "dest": None}, "RouteRequest: dest None is not allowed; expected a vCPU index"),
    ({"irq": 0, "dest": -2}, "RouteRequest: dest -2 is not allowed"),
    ({"irq": 1.0, "dest": 0}, "RouteRequest: irq 1.0 is not allowed"),
    ({"irq": True, "dest": 0}, "RouteRequest: irq True is not allowed"),
    ({"irq": 0, "dest": 0, "kind": 5}, "RouteRequest: kind 5 is not allowed; expected \"device\" (the default)"),
    ({"irq": 0, "dest": 0, "kind": "nmi"}, "RouteRequest: kind 'nmi' is not allowed"),
])
def test_route_request_arguments_are_checked_one_by_one(kw, needle):
    assert needle in one_line_error(eventpath.RouteRequest, **kw)
    ok = eventpath.RouteRequest(irq=2**32 - 1, dest=3, kind="ipi")
    assert (ok.irq, ok.dest, ok.kind) == (2**32 - 1, 3, "ipi") and eventpath.RouteRequest(0, 0).kind == "device"
