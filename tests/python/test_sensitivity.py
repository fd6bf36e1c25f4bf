"""eventpath sensitivity (issue 47): the screen, the detail and each prediction miss's class."""

import json

from eventpath import sensitivity as S

S_CLASSES = ("parametric", "structural", "unclassified")


def test_ranged_parameters_are_the_profiles_free_and_ranged_values():
    ps = {p["key"]: p for p in S.ranged_params("es2")}
    assert "exit.indirect_per_direct" in ps and ps["exit.indirect_per_direct"]["free"]
    assert all(p["lo"] < p["hi"] for p in ps.values())


def test_every_builtin_value_has_a_range_or_says_why_it_is_exact():
    # Issue 47: ranges committed before any fit; a value without one is a fact and says so.
    from eventpath import _eventpath, profile_values

    for name in ("es2", "elvis", "did", "sriov", "hbalance", "modern"):
        for v in profile_values.values(json.loads(_eventpath.profile_json(name))):
            if isinstance(v.value, (int, float)) and not isinstance(v.value, bool) and v.unit:
                assert (v.free, v.range, v.exact).count(None) == 2, f"{name} {v.key}: free, range or exact"
                assert profile_values.range_note(v), f"{name} {v.key}"


def test_each_prediction_miss_is_classed_and_the_classes_reach_reproduces_doc(cli, tmp_path):
    r = cli("reproduce", "es2-fig4", "--out", str(tmp_path), "--duration", "0.02")
    assert r.returncode == 0, r.stderr
    r = cli("sensitivity", "es2-fig4", "--out", str(tmp_path), "--duration", "0.02", "--workers", "1")
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "es2-fig4.sensitivity.json").read_text())
    assert doc["parameters"] >= 4 and doc["method"].startswith("group screening")
    rows = doc["rows"]
    misses = [d for d in rows if d["verdict"] == "miss" and d["role"] == "prediction"]
    assert misses and all(d["miss_class"] in S_CLASSES and d["evidence"] for d in misses)
    # A calibration miss is classed too (what a refit could reach); a row within tolerance never.
    assert all(d["miss_class"] in S_CLASSES and d["evidence"] for d in rows if d["verdict"] == "miss")
    # A miss left unclassified is one the seeds' own noise could close, and says so.
    for d in rows:
        assert d["noise"] >= 0
        if d.get("miss_class") == "unclassified":
            assert abs(S.d_miss(d)) - 1.0 <= d["noise"] and "noise" in d["evidence"]
    assert not any("miss_class" in d for d in rows if d["verdict"] != "miss")
    # The detail: movers sorted by size, each with both ends.
    for d in rows:
        sizes = [m["size"] for m in d["movers"]]
        assert sizes == sorted(sizes, reverse=True) and len(sizes) <= S.TOP
        # A mover moved its row beyond the row's noise.
        assert all(x >= max(S.NEGLIGIBLE, d["noise"]) for x in sizes)
    assert (tmp_path / "es2-fig4.tornado.png").read_bytes()[:4] == b"\x89PNG"
    rep = json.loads((tmp_path / "es2-fig4.json").read_text())
    classed = {(x["config"], x["metric"]): x["miss_class"] for x in rep["rows"] if "miss_class" in x}
    assert classed == {(d["config"], d["metric"]): d["miss_class"] for d in rows if d["verdict"] == "miss"}
    assert "parametric" in r.stdout or "structural" in r.stdout


def test_a_focused_screen_details_only_the_groups_that_move_the_misses_most(cli, tmp_path):
    r = cli("sensitivity", "es2-fig4", "--out", str(tmp_path), "--duration", "0.02", "--workers", "1", "--focus", "1")
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "es2-fig4.sensitivity.json").read_text())
    misses = [d for d in doc["rows"] if d["verdict"] == "miss"]
    assert doc["focus"] == 1 and "focused" in doc["method"]
    # At most one group of GROUP values per miss is detailed, and every miss is still classed.
    assert doc["screened_alone"] <= S.GROUP * len(misses)
    assert misses and all(d["miss_class"] in S_CLASSES and d["evidence"] for d in misses)
    bad = cli("sensitivity", "es2-fig4", "--out", str(tmp_path), "--focus", "0")
    assert bad.returncode == 2 and "--focus 0: not allowed" in bad.stderr


def test_a_rows_noise_is_its_largest_move_to_another_seed_set():
    from eventpath.comparison import PublishedRow

    def rows(*vals):
        return [{"row": PublishedRow(config="c", metric=f"m{i}", unit="%", simulated=v, reference=50.0)}
                for i, v in enumerate(vals)]

    # A share's tolerance is 10 points: 55 is half a tolerance from 50, 40 a whole one.
    noise = S._noise(rows(50.0, 20.0, None), [rows(55.0, 20.0, None), rows(40.0, 20.0, 30.0)])
    assert noise == [1.0, 0.0, float("inf")]


def test_unknown_experiment_is_one_line_exit_2(cli, tmp_path):
    r = cli("sensitivity", "no-such", "--out", str(tmp_path))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "unknown experiment" in r.stderr


def test_kept_classes_apply_only_to_rows_that_still_miss_the_same_way(tmp_path):
    from eventpath.reproduce import classes

    def row(metric, sim, verdict="miss", cls=None):
        d = {"config": "PI+H(P)", "metric": metric, "role": "prediction", "unit": "/s", "simulated": sim,
             "published": 100.0, "published_bounds": None, "verdict": verdict, "movers": [], "noise": 0.0}
        if cls:
            d |= {"miss_class": cls, "evidence": "no value inside its range reaches it"}
        return d

    sens = {"id": "es2-fig4", "profile": "es2", "duration": None, "seeds": 1, "method": "group screening",
            "rows": [row("low", 10.0, cls="structural"), row("high", 300.0, cls="parametric"), row("ok", 100.0, "ok")]}
    path = classes.keep(sens, {"commit": "0123456789abcdef", "uncommitted_changes": False}, tmp_path)
    kept = classes.stored("es2-fig4", tmp_path)
    assert path.name == "es2-fig4.json" and [d["metric"] for d in kept["rows"]] == ["low", "high"]
    assert all(d["evidence"].startswith("stored by eventpath sensitivity at 0123456789ab") for d in kept["rows"])
    # "low" still misses low; "high" now misses low, the other way; "ok" is a new miss.
    doc = {"rows": [row("low", 20.0), row("high", 5.0), row("ok", 10.0)]}
    assert classes.apply_stored(doc, kept) == 1
    assert [d.get("miss_class") for d in doc["rows"]] == ["structural", None, None]
    # A row within tolerance now gains no class.
    doc = {"rows": [row("low", 100.0, "ok")]}
    assert classes.apply_stored(doc, kept) == 0 and "miss_class" not in doc["rows"][0]
    assert classes.stored("no-such", tmp_path) is None


def test_every_kept_class_file_names_an_experiment_and_classes_its_misses():
    from eventpath.reproduce import EXPERIMENTS, classes

    for path in sorted(classes.DIR.glob("*.json")):
        doc = json.loads(path.read_text())
        assert doc["id"] == path.stem and doc["id"] in EXPERIMENTS and doc["commit"]
        assert doc["profile"] == EXPERIMENTS[doc["id"]].profile
        assert doc["rows"] and all(d["miss_class"] in S_CLASSES and d["evidence"] for d in doc["rows"])
