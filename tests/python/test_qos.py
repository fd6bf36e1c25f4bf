"""The QoS search (eventpath.qos, `eventpath qos`): DID §5.7's peak rate with p95 within a bound."""

import json
import re

import pytest

from conftest import ROOT

qos = pytest.importorskip("eventpath.qos")
from eventpath._eventpath import InputError  # noqa: E402

SCENARIO = ROOT / "python/eventpath/reproduce/scenarios/did-fig11.toml"


def test_the_peak_meets_the_bound_and_a_rate_above_it_does_not():
    s = qos.search(SCENARIO, bound_ms=10.0, lo=2_000, hi=400_000, steps=5, duration=0.05)
    assert s.peak_rps is not None and not s.capped
    met = [p.offered_rps for p in s.points if p.meets]
    missed = [p.offered_rps for p in s.points if not p.meets]
    assert max(met) == s.peak_rps and min(missed) > s.peak_rps, "meeting the bound is monotone in the rate"
    assert s.at_peak.summary["vms"][0]["latency_us"]["p95"] <= 10_000
    # A tighter bound cannot allow a higher rate.
    tight = qos.search(SCENARIO, bound_ms=0.2, lo=2_000, hi=400_000, steps=5, duration=0.05)
    assert tight.peak_rps is None or tight.peak_rps <= s.peak_rps


@pytest.mark.parametrize("kw, what", [({"bound_ms": 0}, "QoS bound"), ({"bound_ms": float("nan")}, "QoS bound"),
                                      ({"lo": 5, "hi": 5}, "below"), ({"vm": 3}, "vm"), ({"steps": -1}, "steps")])
def test_bad_search_arguments_are_one_line_errors(kw, what):
    with pytest.raises(InputError, match=what):
        qos.search(SCENARIO, **kw)


def test_cli_writes_json_and_figure_and_refuses_a_zero_bound(cli, tmp_path):
    r = cli("qos", str(SCENARIO), "--out", str(tmp_path), "--duration", "0.03", "--steps", "2", "--hi", "300000")
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "qos.json").read_text())
    assert doc["bound_ms"] == 10.0 and doc["percentile"] == 95 and len(doc["points"]) == 4
    assert (tmp_path / "qos.png").stat().st_size > 0
    r = cli("qos", str(SCENARIO), "--out", str(tmp_path), "--p95-ms", "0")
    assert r.returncode == 2 and "QoS bound" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = cli("qos", "examples/vf-did.toml", "--out", str(tmp_path))
    assert r.returncode == 2 and "memcached" in r.stderr


def test_a_run_that_is_no_result_never_meets_the_bound_and_is_marked():
    """Issue 45: a stalled run (a model bug) or one without a watchdog verdict is marked, and
    the peak is never such a run. The runs are stand-ins: every rate meets, but some are no result."""
    from eventpath import api

    flows = {4_000.0: [{"vm": "vm0", "stalled_from_s": 0.01, "detected_s": 0.06, "recovered_s": None}],
             16_000.0: None}

    def run(sc, duration=None, seed=None):
        rate = sc["vm"][0]["workload"]["rate_rps"]
        return api.Result(summary={"vms": [{"throughput": {"ops_per_s": rate}, "latency_us": {"p95": 100.0}}],
                                   "stalled_flows": flows.get(rate, [])}, latency_cdf=[])

    s = qos.search(SCENARIO, lo=1_000, hi=16_000, steps=1, run=run)  # bisects at sqrt(lo * hi) = 4,000
    by_rate = {p.offered_rps: p for p in s.points}
    assert [(by_rate[r].liveness, by_rate[r].meets) for r in (1_000.0, 16_000.0, 4_000.0)] == [
        ("ok", True), ("unjudged", False), ("stalled", False)]
    assert "VM vm0 stalled from 0.0100 s" in by_rate[4_000.0].liveness_reason
    assert s.peak_rps == 1_000.0 and not s.capped
    assert s.as_dict()["points"][1]["liveness"] == "unjudged"


@pytest.mark.parametrize("call, needle", [
    (lambda: qos.search(None), "scenario: NoneType None"),
    (lambda: qos.search(SCENARIO, vm=True), "qos.search: vm True is not allowed"),
    (lambda: qos.search({"name": "q", "profile": "es2", "vm": {"a": 1}}), "key `vm`"),
])
def test_bad_scenarios_and_vms_are_one_line_errors(call, needle):
    with pytest.raises(InputError, match=re.escape(needle)):
        call()
