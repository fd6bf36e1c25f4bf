"""`eventpath kvm compare` (issue 15): the verdict rules, every simulator twin runs (no KVM
needed), and, where /dev/kvm works, one experiment end to end through the CLI."""

import json
import pathlib
import pytest

from eventpath import _eventpath as E
from eventpath import api, kvm_compare as K

ROOT = pathlib.Path(__file__).resolve().parents[2]
KVM_OK, KVM_REASON = E.kvm_available()


def test_verdict_rules():
    assert K.verdict("rate", "requests/s", 100.0, 124.0) == "ok"
    assert K.verdict("rate", "requests/s", 100.0, 126.0) == "miss"
    assert K.verdict("cpu", "%", 40.0, 31.0) == "ok"
    assert K.verdict("latency", "us", 30.0, 59.0) == "ok"
    assert K.verdict("latency", "us", 30.0, 14.0) == "miss"
    # no kicks on either side, an idle thread on either side: they agree
    assert K.verdict("rate", "kicks/req", 0.0, 0.004) == "ok"
    assert K.verdict("cpu", "%", 0.5, 1.5) == "ok"
    assert K.verdict("rate", "kicks/req", 0.0, 0.5) == "miss"
    assert K.verdict("latency", "us", None, 3.0) is None


@pytest.mark.parametrize("exp", sorted(K.EXPERIMENTS))
def test_every_twin_runs_to_its_end(exp):
    for p in K.EXPERIMENTS[exp]():
        sc = dict(p.twin, profile="es2", duration_s=0.03, warmup_s=0.01)
        s = api.run(sc).summary
        assert not s["stalled_flows"], (exp, p.config)
        for m in p.metrics:
            K._safe(m.simulated, s)  # every metric reads from the summary without an error


def test_a_refused_probe_parameter_is_named_in_compare_json(tmp_path):
    es2 = (ROOT / "profiles/es2.toml").read_text()
    assert K.refused_in(ROOT / "profiles/es2.toml") == []
    line = next(l for l in es2.splitlines() if l.startswith("tx_packet_ns ="))
    refused = line.replace('source = "', 'source = "not measured here (the probe refused its measurement: trials disagree); ', 1)
    (tmp_path / "p.toml").write_text(es2.replace(line, refused))
    assert K.refused_in(tmp_path / "p.toml") == ["vhost.tx_packet_ns"]
    card = K.scorecard([{"experiment": "exp1", "within_tolerance": 1, "judged": 2, "profile_refused": ["vhost.tx_packet_ns"]}])
    assert "refused vhost.tx_packet_ns" in card


def test_every_testbed_point_names_its_keys():
    for exp, points in ((e, f()) for e, f in K.EXPERIMENTS.items()):
        for p in points:
            assert p.testbed.startswith("#") or "name =" in p.testbed, (exp, p.config)
            assert "[[vm]]" in p.testbed


def test_unknown_experiment_is_one_line_exit_2(cli, tmp_path):
    r = cli("kvm", "compare", "exp9", "--out", str(tmp_path))
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "exp1" in r.stderr or "/dev/kvm" in r.stderr


@pytest.mark.skipif(not KVM_OK, reason=f"KVM testbed unavailable: {KVM_REASON}")
def test_compare_routing_end_to_end(cli, tmp_path):
    """exp4 once, short, on the es2 profile (the probe is tested elsewhere): rows and figure."""
    r = cli("kvm", "compare", "exp4", "--out", str(tmp_path), "--profile", str(ROOT / "profiles/es2.toml"),
            "--repeats", "1", "--duration", "0.3")
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "compare.json").read_text())
    assert (tmp_path / "compare.png").stat().st_size > 0
    keys = {"config", "metric", "unit", "kind", "testbed", "testbed_min", "testbed_max", "simulated", "ratio", "verdict",
            "noise"}
    assert doc["rows"] and all(set(r) - {"unjudged"} == keys for r in doc["rows"])
    assert doc["shield"] and set(doc["noise"]) >= {"quiet_cpus_median", "steal_pct", "spread_median", "unjudged"}
    assert doc["profile_refused"] == []
    rows = {(r["config"], r["metric"]): r for r in doc["rows"]}
    # Both worlds: the descheduled home vCPU's interrupts wait far longer under fixed routing
    # than under routing to the running vCPU.
    for world in ("testbed", "simulated"):
        fixed = rows[("fixed", "latency_p50_other_running")][world]
        rf = rows[("running_first", "latency_p50_other_running")][world]
        assert fixed > 5 * rf, (world, fixed, rf)


def test_noise_is_what_other_processes_took():
    """kvm_noise: CPU busy in /proc/stat less this process's own, per second of wall time."""
    from eventpath import kvm_noise as N

    hz = N._HZ
    a = N.Sample(wall=10.0, busy=0, steal=0, total=0, own=1.0, loadavg_1m=0.5)
    b = N.Sample(wall=12.0, busy=3 * hz, steal=hz // 10, total=4 * hz, own=2.0, loadavg_1m=1.5)
    n = N.between(a, b)
    assert n["other_cpus"] == pytest.approx(1.0)  # 3 CPU-seconds busy, 1 of them ours, over 2 s
    assert n["steal_pct"] == pytest.approx(2.5, abs=0.1) and n["loadavg_1m"] == 1.5
    assert N.between(b, b)["other_cpus"] is None
    assert [N.competing_threads(x, 2) for x in (None, 0.2, 0.6, 1.4, 5.0)] == [0, 0, 1, 1, 2]
    real = N.quiet_load(0.05)
    assert real["other_cpus"] is None or real["other_cpus"] >= 0.0


def test_a_shielded_block_runs_at_nice_minus_20_and_restores_the_thread():
    import os

    from eventpath import kvm_noise as N

    before = os.getpriority(os.PRIO_PROCESS, 0)
    with N.shielded() as ok:
        assert os.getpriority(os.PRIO_PROCESS, 0) == (N.SHIELD_NICE if ok else before)
    assert os.getpriority(os.PRIO_PROCESS, 0) == before


def test_an_unshielded_twin_runs_beside_the_competitors_measured():
    """Without the shield the twin gets one nice-0 host thread per CPU others wanted; it runs
    to its end and its back end then gets less CPU than alone."""
    p = K.exp1()[0]
    noise = {"quiet_cpus": 1.1}
    twin = K._beside_competitors(dict(p.twin, profile="es2", duration_s=0.05, warmup_s=0.01), noise)
    assert noise["twin_competitors"] == 1 and twin["host"]["cpu_hog"] == [{"nice": 0}]
    assert "cpu_hog" not in p.twin["host"]
    s = api.run(twin).summary
    assert not s["stalled_flows"]
