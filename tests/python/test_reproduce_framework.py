"""The reproductions' common parts (issue 27): the run helper that fails loudly on a stalled
flow, used by every reproduction and every simulator twin; and the published values, data
beside each experiment with their sources."""

import json
import pickle
import tomllib

import pytest

from eventpath import comparison as C

from eventpath import _eventpath, api, kvm_compare, reproduce
from eventpath.reproduce import published
from eventpath.reproduce.simulate import REMOVE, SCENARIOS, StalledFlow, check, load, simulate

STALL = {"vm": "vm0", "stalled_from_s": 0.12, "detected_s": 0.17, "recovered_s": None,
         "state": "vcpu0 halted; tx ring 256/256 full; vhost idle"}


def _stalled(*_args, **_kwargs):
    """What api.run returns for a run whose watchdog saw a stall (nothing else is needed: the
    helper must stop before anyone reads a number)."""
    return api.Result(summary={"scenario": "s", "seed": 1, "stalled_flows": [STALL], "vms": []}, latency_cdf=[])


# --- the helper --------------------------------------------------------------------------------

def test_load_applies_changes_and_removals_to_a_copy():
    base = load(SCENARIOS / "did-fig6.toml")
    sc = load(base, {"host.virtualization": "bare_metal", "vm.0.interrupt_delivery": REMOVE,
                     "profile_overrides.guest.napi_weight": 8.0})
    assert sc["host"]["virtualization"] == "bare_metal" and "interrupt_delivery" not in sc["vm"][0]
    assert sc["profile_overrides"] == {"guest": {"napi_weight": 8.0}}
    assert base["vm"][0]["interrupt_delivery"] == "emulated" and "virtualization" not in base["host"]
    with pytest.raises(KeyError, match="no such key"):
        load(base, {"vm.0.no_such_key": REMOVE})


def test_a_stalled_flow_raises_with_the_flows_state():
    with pytest.raises(StalledFlow) as e:
        check(_stalled(), "did-fig6 KVM")
    msg = str(e.value)
    assert "did-fig6 KVM" in msg and "VM vm0" in msg and "0.1200 s" in msg and "never recovered" in msg
    assert STALL["state"] in msg and "model bug" in msg
    assert e.value.flows == [STALL]
    # It crosses the process pool of `reproduce all` intact.
    again = pickle.loads(pickle.dumps(e.value))
    assert isinstance(again, StalledFlow) and str(again) == msg and again.flows == [STALL]


def test_a_run_without_a_watchdog_verdict_is_no_result_either():
    """Issue 45: as compare, sweep and qos read it (eventpath.liveness): null stalled_flows."""
    r = api.Result(summary={"scenario": "s", "seed": 1, "stalled_flows": None, "vms": []}, latency_cdf=[])
    with pytest.raises(StalledFlow, match="did-fig6 KVM .*unjudged, not a result: no liveness verdict"):
        check(r, "did-fig6 KVM")


def test_a_healthy_run_comes_back_as_it_is():
    r = simulate(SCENARIOS / "did-fig6.toml", {"vm.0.interrupt_delivery": "did"}, what="x", duration=0.02)
    assert r.summary["stalled_flows"] == [] and r.summary["vms"][0]["exits_total_per_s"] == 0


@pytest.mark.parametrize("exp_id", list(reproduce.EXPERIMENTS))
def test_every_reproduction_fails_loudly_on_a_stalled_flow(monkeypatch, tmp_path, exp_id):
    monkeypatch.setattr(api, "run", _stalled)
    with pytest.raises(StalledFlow, match="VM vm0 made no progress"):
        reproduce.run(exp_id, tmp_path, duration=0.01, progress=False)
    assert not (tmp_path / f"{exp_id}.json").exists()


def test_a_stalled_twin_fails_kvm_compare(monkeypatch, tmp_path):
    """The twin runs through the same helper (the testbed side is faked: no KVM needed)."""
    monkeypatch.setattr(_eventpath, "kvm_run", lambda scenario, out: json.dumps({"vms": [], "host": {}}))
    monkeypatch.setattr(api, "run", _stalled)
    with pytest.raises(StalledFlow, match="exp4 fixed: the twin"):
        kvm_compare.compare("exp4", tmp_path, kvm_compare.ROOT / "profiles" / "es2.toml", repeats=1)


# --- published values as data ------------------------------------------------------------------

def test_every_data_file_belongs_to_an_experiment_and_every_value_says_where_it_is_from():
    files = sorted(published.PUBLISHED.glob("*.toml"))
    assert {f.stem for f in files} <= set(reproduce.EXPERIMENTS)
    for f in files:
        values = published.load(f.stem)
        assert values, f
        for v in values:
            if v.paper.startswith("Linux patch: "):
                # A production descendant (issue 32): its patch's commit message.
                assert "commit" in v.source, v
            else:
                assert v.paper.startswith(("ES2 ", "ELVIS ", "DID ", "CGR/AIR/MTVD ", "hBalance ")) and "seed" in v.paper, v
                assert "§" in v.source or "abstract" in v.source, v
            assert v.read and v.unit


#: Experiments without a number to meet: the head-to-heads are in no paper. (CGR/AIR §5.4 gives
#: Fig. 11 in words only: its directions are published rows of unit holds.)
WITHOUT_NUMBERS = {"coalescing-head-to-head", "routing-head-to-head", "seeds-today"}


def test_every_experiment_with_a_published_value_has_its_data_file():
    """Each experiment with a number to meet has a file; their rows take those numbers."""
    have = {f.stem for f in published.PUBLISHED.glob("*.toml")}
    assert have == set(reproduce.EXPERIMENTS) - WITHOUT_NUMBERS
    assert WITHOUT_NUMBERS <= set(reproduce.EXPERIMENTS)
    rows = {(r.config, r.metric): r for r in reproduce.EXPERIMENTS["es2-table1"].compare(0.01, lambda _s: None)}
    assert rows[("tcp512-noPI", "exits_eoi")].published == 30736.0
    assert rows[("tcp512-PI", "exits_total")].published is None


def _attach_with(monkeypatch, tmp_path, text, measured):
    (tmp_path / "t.toml").write_text(text)
    monkeypatch.setattr(published, "PUBLISHED", tmp_path)
    published.load.cache_clear()
    try:
        return published.attach("t", measured)
    finally:
        published.load.cache_clear()


TOP = 'experiment = "t"\npaper = "P"\n'
HEAD = TOP + '[measures]\nm = "the m of the tested VM"\n'
VALUE = '[[value]]\nconfig = "{c}"\nmetric = "m"\nunit = "{u}"\nvalue = 3\nsource = "§1"\nread = "as printed"\n'


def test_attach_puts_the_value_beside_its_row_as_a_float(monkeypatch, tmp_path):
    m = reproduce.Measured
    rows = _attach_with(monkeypatch, tmp_path, HEAD + VALUE.format(c="*", u="x"), [m("a", "m", "x", 1.0), m("b", "n", "x", 2.0)])
    assert [(r.config, r.published) for r in rows] == [("a", 3.0), ("b", None)]
    assert isinstance(rows[0].published, float)
    assert [r.definition for r in rows] == ["the m of the tested VM", None]
    assert rows[0].as_dict()["definition"] == "the m of the tested VM"


def test_ranges_bounds_and_directions_are_held_as_the_paper_gives_them(monkeypatch, tmp_path):
    """Issue 47: "1.4x-2.7x" is a range, "below 10 %" a bound, "X beats Y" a direction — none a
    point at every x. Inside a range or bound misses by 0; outside, from the nearer end."""
    m = reproduce.Measured
    text = HEAD + "".join([
        VALUE.format(c="r", u="x").replace("value = 3", "range = [1.4, 2.7]"),
        VALUE.format(c="b", u="%").replace("value = 3", "at_most = 10"),
        VALUE.format(c="d", u="holds").replace("value = 3", "holds = true"),
    ])
    rows = _attach_with(monkeypatch, tmp_path, text, [m("r", "m", "x", 1.5), m("b", "m", "%", 19.0),
                                                        m("d", "m", "holds", 0.0)])
    r, b, d = rows
    assert (r.kind, r.bounds, r.published, r.verdict(), r.miss()) == ("range", (1.4, 2.7), pytest.approx(2.05), "ok", 0.0)
    assert (b.bounds, b.verdict(), b.miss()) == ((None, 10.0), "ok", pytest.approx(0.9))
    assert (d.published, d.verdict()) == (1.0, "miss")
    assert r.as_dict()["published_bounds"] == [1.4, 2.7] and d.as_dict()["published_kind"] == "holds"
    assert C.published_miss(3.375, 2.05, "x", (1.4, 2.7)) == pytest.approx(1.0)  # 25 % above 2.7


@pytest.mark.parametrize("text,measured,needle", [
    (HEAD + VALUE.format(c="a", u="%"), [("a", "m", "x", 1.0)], "is in '%'; the row is in 'x'"),
    (HEAD + VALUE.format(c="b", u="x"), [("a", "m", "x", 1.0)], "b/m matches no row"),
    (HEAD + VALUE.format(c="a", u="x") + VALUE.format(c="*", u="x"), [("a", "m", "x", 1.0)], "matches 2 published"),
    (HEAD + VALUE.format(c="a", u="x") + VALUE.format(c="a", u="x"), [("a", "m", "x", 1.0)], "given twice"),
    (HEAD + VALUE.format(c="a", u="x").replace('read = "as printed"\n', ""), [("a", "m", "x", 1.0)], "expected the keys"),
    (HEAD + VALUE.format(c="a", u="x").replace("value = 3", "value = 3\nat_most = 4"), [("a", "m", "x", 1.0)], "exactly one of"),
    (HEAD + VALUE.format(c="a", u="x").replace("value = 3", "range = [4, 3]"), [("a", "m", "x", 1.0)], "4.0 > 3.0"),
    (HEAD + VALUE.format(c="a", u="x").replace("value = 3", "holds = true"), [("a", "m", "x", 1.0)], "unit must be"),
    (TOP + "colour = 1\n", [], "`colour` is not allowed"),
    (TOP + VALUE.format(c="a", u="x"), [("a", "m", "x", 1.0)], "metric 'm' has no definition"),
    (HEAD + 'n = "unused"\n' + VALUE.format(c="a", u="x"), [("a", "m", "x", 1.0)], "'n' names no metric"),
    (HEAD + 'n = ""\n' + VALUE.format(c="a", u="x"), [("a", "m", "x", 1.0)], "expected a non-empty string"),
    ('experiment = "u"\npaper = "P"\n', [], "expected 't'"),
])
def test_attach_refuses_data_that_does_not_fit(monkeypatch, tmp_path, text, measured, needle):
    with pytest.raises(published.PublishedDataError, match=needle.replace("(", r"\(").replace("'", ".")):
        _attach_with(monkeypatch, tmp_path, text, [reproduce.Measured(*m) for m in measured])


def test_data_files_are_toml_with_only_measures_value_and_include_tables():
    for f in published.PUBLISHED.glob("*.toml"):
        doc = tomllib.loads(f.read_text())
        assert set(doc) <= {"experiment", "paper", "measures", "include", "value"}, f


def test_a_shortened_reproduction_says_so_in_its_doc_and_across_its_figure(tmp_path):
    # Issue 50 (outputs): a --quick report's figures carried no mark that they are not results.
    from eventpath import reproduce
    from eventpath.reproduce import figure

    doc = reproduce.run("es2-fig4-udp", tmp_path, duration=0.01, progress=False)
    assert doc["duration"] == 0.01
    assert "0.01 s" in figure.stamp(doc) and "not the experiment's result" in figure.stamp(doc)
    assert figure.stamp(doc | {"duration": None}) is None
    assert (tmp_path / "es2-fig4-udp.png").read_bytes()[:4] == b"\x89PNG"
