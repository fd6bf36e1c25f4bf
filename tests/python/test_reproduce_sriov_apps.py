"""CGR/AIR application reproductions (§5.3 Fig. 10 WebBench, §5.6 Fig. 13 NPB FT) on the webbench
and cpu_job workloads: quick runs show the directions the model must give, and the published
data fit the rows the default runs make."""

import types

import pytest

reproduce = pytest.importorskip("eventpath.reproduce")
from eventpath.reproduce import published, sriov_apps  # noqa: E402

EXPERIMENTS = ("sriov-fig10", "sriov-fig13")


def _measured(rows):
    return {(m.config, m.metric): m.simulated for m in rows}


def _nothing(_label):
    return None


def test_the_application_experiments_are_registered_on_the_sriov_profile():
    for e in EXPERIMENTS:
        assert reproduce.EXPERIMENTS[e].profile == "sriov"
        assert reproduce.EXPERIMENTS[e].notes


def test_npb_ft_work_grows_with_the_class_from_npbs_own_operation_count():
    work = [sriov_apps.ft_work_ms(c) for c in "SWAB"]
    assert work == sorted(work) and work[0] > 0
    # Class B's grid is 4x class A's (§5.6) and it runs 20 iterations to A's 6: more than 4x the work.
    assert work[3] > 4 * work[2]


def _fake_simulate(scenario, changes=None, *, what, duration=None, seed=None):
    """A stand-in for the simulator: a summary of the right shape for each VM of ``scenario``."""
    vms = []
    for vm in scenario["vm"]:
        kind = vm.get("workload", {}).get("kind")
        v = {"name": vm["name"], "throughput": {"gbps": 1.0}}
        if kind == "webbench":
            v["web"] = {"clients": vm["workload"]["clients"], "requests_per_min": 60.0, "failed_clients": 0}
        if kind == "cpu_job":
            v["cpu_job"] = {"work_ms": vm["workload"]["work_ms"], "finished": True,
                            "completion_ms": vm["workload"]["work_ms"], "done_pct": 100.0}
        vms.append(v)
    return types.SimpleNamespace(summary={"vms": vms, "host": {"pcpu_util_pct": [0.0] * 8}})


def test_every_published_value_meets_a_row_of_the_default_runs(monkeypatch):
    monkeypatch.setattr(sriov_apps, "simulate", _fake_simulate)
    for e in EXPERIMENTS:
        values = published.load(e)
        assert values
        rows = {(r.config, r.metric): r for r in reproduce.EXPERIMENTS[e].compare(None, _nothing)}
        for v in values:
            for c in v.config if isinstance(v.config, list) else [v.config]:
                assert rows[(c, v.metric)].published == v.value


def test_fig10_serves_a_light_load_without_failed_clients_under_every_controller():
    rows = _measured(sriov_apps._fig10(0.3, _nothing, counts=(2,), clients=(100,)))
    for c in ("FIR", "CGR", "AIR"):
        assert rows[(f"{c}-100c-2", "failed_clients")] == 0
        assert rows[(f"{c}-100c-2", "requests_per_min")] > 0
    for c in ("CGR", "AIR"):
        gain = rows[(f"{c}/FIR-100c-2", "throughput_gain")]
        assert gain == pytest.approx(100 * (rows[(f"{c}-100c-2", "requests_per_min")]
                                            / rows[("FIR-100c-2", "requests_per_min")] - 1))
        assert rows[(f"{c}-vs-FIR-100c", "max_throughput_gain")] == pytest.approx(gain)


def test_fig13_job_finishes_no_faster_than_its_work_and_is_normalized_to_fir(monkeypatch):
    # A class small enough for a test: a 32^3 grid, 6 iterations (~21 ms of CPU).
    monkeypatch.setitem(sriov_apps._NPB_FT, "T", (32, 32, 32, 6))
    work = sriov_apps.ft_work_ms("T")
    rows = _measured(sriov_apps._fig13(None, _nothing, classes=("T",)))
    fir, mtvd = rows[("FIR-T", "completion_time")], rows[("MTVD+AIR-T", "completion_time")]
    assert fir is not None and mtvd is not None
    assert fir >= work and mtvd >= work
    assert rows[("MTVD+AIR/FIR-T", "normalized_time")] == pytest.approx(mtvd / fir)
    assert rows[("MTVD+AIR-vs-FIR", "max_added_time")] == pytest.approx(100 * (mtvd / fir - 1))
    # The co-hosted receivers ran.
    assert rows[("FIR-T", "netperf_gbps")] > 1.0


def test_fir_calibrates_and_the_mechanisms_and_orders_predict():
    fig10, fig13 = (reproduce.EXPERIMENTS[e] for e in EXPERIMENTS)
    assert all(fig10.is_baseline(c) for c in ("FIR-2000c-16", "FIR-100c-1", "FIR-1000c-8"))
    assert not any(fig10.is_baseline(c) for c in ("CGR-2000c-16", "AIR-1000c-8", "AIR>CGR>FIR-100c-1",
                                                  "AIR<CGR<FIR-2000c-16", "AIR-vs-FIR-2000c"))
    assert fig13.is_baseline("FIR-A") and not fig13.is_baseline("MTVD+AIR/FIR-A")
    # 'at most 6 percent additional time ... in all tested Classes': a bound on each class run.
    bound = {v.config: v for v in published.load("sriov-fig13")}
    assert {c for c in bound} == {f"MTVD+AIR/FIR-{c}" for c in sriov_apps._FIG13_CLASSES}
    assert all(v.kind == "at_most" and v.bounds == (None, 6.0) for v in bound.values())


def test_fig10_orders_hold_only_when_strict():
    assert sriov_apps._order([3.0, 2.0, 1.0]) == 1.0
    assert sriov_apps._order([3.0, 3.0, 1.0]) == 0.0
    assert sriov_apps._order([3.0, None, 1.0]) is None
