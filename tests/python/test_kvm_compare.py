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
    keys = {"config", "metric", "unit", "testbed", "testbed_min", "testbed_max", "simulated", "ratio", "verdict"}
    assert doc["rows"] and all(set(r) == keys for r in doc["rows"])
    assert doc["profile_refused"] == []
    rows = {(r["config"], r["metric"]): r for r in doc["rows"]}
    # Both worlds: the descheduled home vCPU's interrupts wait far longer under fixed routing
    # than under routing to the running vCPU.
    for world in ("testbed", "simulated"):
        fixed = rows[("fixed", "latency_p50_other_running")][world]
        rf = rows[("running_first", "latency_p50_other_running")][world]
        assert fixed > 5 * rf, (world, fixed, rf)
