"""eventpath.comparison (issue 27): the one framework keeps each world's tolerance exactly as it
was. The rules before the framework are transcribed verbatim below and held against it on a
grid of values that includes every edge (0, negatives, the band's ends, the floors)."""

import itertools

import pytest

from eventpath import comparison as C


# --- the rules as they were (reproduce/__init__.py and kvm_compare.py before issue 27) -----------

def old_miss_ratio(sim, pub, unit):
    if sim is None or pub is None:
        return None
    if unit == "%":
        return (sim - pub) / 10.0
    if pub == 0:
        return 0.0 if sim == 0 else 2.0
    return (sim / pub - 1.0) / 0.25


def old_reproduce_verdict(sim, pub, unit):
    e = old_miss_ratio(sim, pub, unit)
    return None if e is None else ("ok" if abs(e) <= 1.0 else "miss")


OLD_FLOORS = {"kicks/req": 0.01, "%": 2.0}


def old_kvm_verdict(kind, unit, testbed, simulated):
    if testbed is None or simulated is None:
        return None
    floor = OLD_FLOORS.get(unit)
    if floor is not None and abs(testbed) < floor and abs(simulated) < floor:
        return "ok"
    if testbed <= 0 or simulated <= 0:
        return "miss"
    r = simulated / testbed
    if kind == "latency":
        return "ok" if 0.5 <= r <= 2.0 else "miss"
    return "ok" if abs(r - 1.0) <= 0.25 else "miss"


# --- the grid ---------------------------------------------------------------------------------

REFS = [None, -5.0, 0.0, 0.004, 0.009, 1.5, 1.99, 2.0, 3.0, 10.0, 27.7, 100.0, 73_310.0]
FACTORS = [0.0, 0.3, 0.4999, 0.5, 0.5001, 0.74, 0.75, 0.76, 0.9, 1.0, 1.1, 1.24, 1.25, 1.26, 1.9, 2.0, 2.01, 3.0, -1.0]
OFFSETS = [-20.0, -10.0, -9.99, -10.01, 0.0, 9.99, 10.0, 10.01, 0.005, -0.005]


def _pairs():
    for ref in REFS:
        sims = [None, 0.0, 0.001, 0.011, 1.9, 2.1] + ([ref * f for f in FACTORS] + [ref + o for o in OFFSETS]
                                                      if ref is not None else [5.0])
        for sim in sims:
            yield sim, ref


UNITS = ["%", "exits/s", "us", "x", "kicks/req", "requests/s"]


@pytest.mark.parametrize("unit", UNITS)
def test_reproduce_verdict_and_miss_are_the_old_rules(unit):
    for sim, pub in _pairs():
        row = C.PublishedRow("c", "m", unit, sim, pub)
        assert row.verdict() == old_reproduce_verdict(sim, pub, unit), (sim, pub, unit)
        assert C.published_miss(sim, pub, unit) == old_miss_ratio(sim, pub, unit), (sim, pub, unit)


@pytest.mark.parametrize("kind,unit", list(itertools.product(["rate", "cpu", "latency"], UNITS)))
def test_kvm_verdict_is_the_old_rule(kind, unit):
    from eventpath import kvm_compare

    for sim, tb in _pairs():
        want = old_kvm_verdict(kind, unit, tb, sim)
        assert C.TestbedRow("c", "m", unit, sim, tb, kind=kind).verdict() == want, (kind, unit, sim, tb)
        assert kvm_compare.verdict(kind, unit, tb, sim) == want


def test_rows_write_each_worlds_keys_in_each_worlds_order():
    p = C.PublishedRow("c", "share", "%", 35.0, 27.7, role="calibration").as_dict()
    assert list(p) == ["config", "metric", "unit", "simulated", "published", "verdict", "role"]
    assert p["verdict"] == "ok" and p["published"] == 27.7
    t = C.TestbedRow("c", "done_per_s", "requests/s", 120.0, 100.0, kind="rate", testbed_min=90.0,
                     testbed_max=110.0).as_dict()
    assert list(t) == ["config", "metric", "unit", "kind", "testbed", "testbed_min", "testbed_max", "simulated",
                       "ratio", "verdict"]
    assert t["ratio"] == pytest.approx(1.2) and t["verdict"] == "ok"
    assert C.TestbedRow("c", "m", "us", 3.0, 0.0, kind="latency").as_dict()["ratio"] is None


def test_tally_and_scorecard_count_judged_rows_per_group():
    docs = [
        {"id": "a", "profile": "es2", "rows": [
            {"config": "x", "metric": "m", "verdict": "ok", "role": "calibration"},
            {"config": "y", "metric": "m", "verdict": "miss", "role": "prediction"},
            {"config": "z", "metric": "m", "verdict": None, "role": "prediction"}]},
        {"id": "b", "profile": "did", "rows": [{"config": "x", "metric": "n", "verdict": "miss", "role": "prediction"}]},
    ]
    assert C.tally(docs[0]["rows"]) == (1, 2)
    cards = C.published_scorecard(docs)
    assert cards == [
        {"profile": "did", "role": "prediction", "ok": 0, "rows": 1, "misses": ["b:x/n"]},
        {"profile": "es2", "role": "calibration", "ok": 1, "rows": 1, "misses": []},
        {"profile": "es2", "role": "prediction", "ok": 0, "rows": 1, "misses": ["a:y/m"]},
    ]
    text = C.testbed_scorecard([{"experiment": "exp1", "within_tolerance": 3, "judged": 4}])
    assert [line for line in text.splitlines() if line.startswith("all")][0].split()[:5] == ["all", "3", "4", "0", "(75"]


def test_a_testbed_row_whose_repeats_disagree_beyond_the_bar_is_unjudged():
    """Issue 45: the machine's noise, not the simulator, decides a row whose own repeats lie
    further apart than its tolerance; such a row says so and is not counted as a miss."""
    def row(lo, hi, kind="rate", unit="requests/s"):
        return C.TestbedRow("c", "m", unit, 300.0, (lo + hi) / 2, kind=kind, testbed_min=lo, testbed_max=hi)

    assert row(90.0, 110.0).verdict() == "miss" and not row(90.0, 110.0).noisy()
    noisy = row(60.0, 100.0)  # 100 / 60 is beyond +-25 %
    assert noisy.noisy() and noisy.verdict() is None and "noise" in noisy.as_dict()["unjudged"]
    assert not row(20.0, 39.0, "latency", "us").noisy() and row(20.0, 41.0, "latency", "us").noisy()
    assert C.tally([noisy.as_dict(), row(95.0, 105.0).as_dict()]) == (0, 1)


def test_both_figures_are_drawn(tmp_path):
    pub = {"id": "x", "title": "t", "source": "s", "rows": [
        C.PublishedRow("a", "eht", "%", 30.0, 29.63).as_dict(), C.PublishedRow("a", "rate", "exits/s", 1.0, None).as_dict()]}
    from eventpath.reproduce import figure

    figure.draw(pub, tmp_path / "p.png")
    rows = [C.TestbedRow("a", "m", "us", 3.0, 2.0, kind="latency").as_dict()]
    ok, judged = C.tally(rows)
    C.testbed_figure({"experiment": "exp4", "within_tolerance": ok, "judged": judged, "rows": rows}, tmp_path / "t.png")
    for f in ("p.png", "t.png"):
        assert (tmp_path / f).read_bytes()[:4] == b"\x89PNG"


def test_the_testbed_figure_shades_each_rows_own_tolerance():
    # Issue 50: an "ok" latency bar stood outside a band drawn at ±25 % for every row.
    from eventpath import comparison as C

    assert C.band("latency") == (0.5, 2.0) and C.band("rate") == pytest.approx((0.75, 1.25))
    row = C.TestbedRow(config="c", metric="latency_p50", unit="us", simulated=15.0, reference=10.0, kind="latency")
    assert row.as_dict()["kind"] == "latency" and row.verdict() == "ok"
    lo, hi = C.band(row.as_dict()["kind"])
    assert lo <= row.as_dict()["ratio"] <= hi
