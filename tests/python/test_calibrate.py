"""eventpath calibrate (issue 12): the fit, its files, resuming, and bad input."""

import json

import pytest

calibrate = pytest.importorskip("eventpath.calibrate")

FAST = dict(budget=3, seeds=[1], duration=0.01, report_duration=0.02, workers=1)


def test_fit_writes_profile_report_and_figure_inside_the_ranges(tmp_path):
    rep = calibrate.calibrate("elvis", tmp_path, **FAST)
    (p,) = rep["parameters"]
    assert p["key"] == "guest.tcp_write_ns" and p["range"][0] <= p["fitted"] <= p["range"][1]
    # Every calibration row of the profile (issue 47): its experiments' baseline configurations.
    assert {t["experiment"] for t in rep["targets"]} == {"elvis-baseline-1vm", "elvis-fig4", "elvis-fig5", "elvis-fig8"}
    from eventpath.reproduce import EXPERIMENTS

    assert all(EXPERIMENTS[t["experiment"]].is_baseline(t["config"]) for t in rep["targets"])
    assert rep["objective_before"] > 0 and rep["objective_after"] >= 0 and rep["evaluations"] == 3
    assert (tmp_path / "report.png").read_bytes()[:4] == b"\x89PNG"
    assert json.loads((tmp_path / "report.json").read_text())["profile"] == "elvis"
    # The fitted profile loads, carries the fit with its provenance and keeps the prior.
    from eventpath.api import profile

    prof = profile(str(tmp_path / "elvis.toml"))
    w = prof["guest"]["tcp_write_ns"]
    assert w["value"] == pytest.approx(p["fitted"], rel=1e-3) and w["free"]["prior"] == p["prior"]
    assert w["source"].startswith("calibrated by eventpath calibrate")


def test_an_interrupted_calibration_resumes_to_the_same_fit(tmp_path):
    # One small experiment's rows (a --targets file): the resume is the point, not the rows.
    (tmp_path / "t.toml").write_text('profile = "elvis"\ntargets = [{ experiment = "elvis-baseline-1vm" }]\n')
    fast = dict(FAST, targets=str(tmp_path / "t.toml"))
    whole = calibrate.calibrate("elvis", tmp_path / "whole", **fast)
    cut = tmp_path / "cut"
    calibrate.calibrate("elvis", cut, **fast)
    log = cut / "evals.jsonl"
    lines = log.read_text().splitlines()
    log.write_text("\n".join(lines[:2]) + "\n" + lines[2][:10])  # one kept, one cut mid-line by a kill
    with pytest.raises(calibrate.InputError, match="--resume"):
        calibrate.calibrate("elvis", cut, **fast)
    again = calibrate.calibrate("elvis", cut, resume=True, **fast)
    assert again["parameters"] == whole["parameters"] and again["objective_after"] == whole["objective_after"]
    with pytest.raises(calibrate.InputError, match="another set-up"):
        calibrate.calibrate("elvis", cut, resume=True, **{**fast, "seeds": [2]})


@pytest.mark.parametrize("targets,needle", [
    ('profile = "es2"\ntargets = [{ experiment = "no-such" }]', "not a known experiment"),
    ('profile = "es2"\ntargets = [{ experiment = "elvis-baseline-1vm" }]', "runs on profile elvis"),
    ('profile = "es2"\ntargets = [{ experiment = "es2-fig4-udp", weight = 0 }]', "weight"),
    ('profile = "es2"\ntargets = [{ experiment = "es2-fig4-udp", rows = ["udp512-noPI/nope"] }]', "no such row"),
    # 4 free parameters need 12 targets; es2-fig4-udp has 2.
    ('profile = "es2"\ntargets = [{ experiment = "es2-fig4-udp" }]', "at least 12 calibration targets"),
    ('profile = "elvis"\ntargets = []', "key `profile`"),
])
def test_bad_targets_exit_2_with_one_line(cli, tmp_path, targets, needle):
    f = tmp_path / "t.toml"
    f.write_text(targets)
    r = cli("calibrate", "es2", "--out", str(tmp_path / "o"), "--targets", str(f), "--budget", "1",
            "--duration", "0.01", "--seeds", "1")
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert len(r.stderr.strip().splitlines()) == 1 and needle in r.stderr, r.stderr


def test_budget_zero_is_refused(cli, tmp_path):
    r = cli("calibrate", "es2", "--out", str(tmp_path), "--budget", "0")
    assert r.returncode == 2 and "--budget 0" in r.stderr


def test_reproduction_rows_say_their_role_and_all_ends_with_a_scorecard(cli, tmp_path):
    r = cli("reproduce", "all", "--out", str(tmp_path), "--duration", "0.01")
    assert r.returncode == 0, r.stderr
    assert "scorecard" in r.stdout
    t1 = json.loads((tmp_path / "es2-table1.json").read_text())
    assert {row["role"] for row in t1["rows"] if row["published"] is not None} == {"calibration"}
    sens = json.loads((tmp_path / "es2-table1-sensitivity.json").read_text())
    assert {row["role"] for row in sens["rows"]} == {"prediction"}
    # A row is calibration exactly where its configuration is one of its paper's baselines.
    f7 = json.loads((tmp_path / "es2-fig7a.json").read_text())
    assert all((row["role"] == "calibration") == (row["published"] is not None and row["config"].startswith("PI ")
                                                  and "vs" not in row["config"]) for row in f7["rows"])
    assert f7["paper"] == "ES2" and f7["baselines"] == [r"PI \dVM"]
    doc = json.loads((tmp_path / "scorecard.json").read_text())
    cards = doc["profiles"]
    assert {(c["profile"], c["role"]) for c in cards} >= {("es2", "calibration"), ("es2", "prediction"),
                                                          ("elvis", "calibration")}
    for c in cards:
        assert c["ok"] + len(c["misses"]) == c["rows"]
    papers = {c["paper"]: c for c in doc["papers"]}
    assert set(papers) == {"ES2", "ELVIS", "DID", "CGR/AIR", "hBalance", "other"}
    assert "scorecard v2" in r.stdout
    for c in papers.values():
        ok_pred = c["directions"][0] + c["magnitudes"][0]
        n_pred = c["directions"][1] + c["magnitudes"][1]
        assert n_pred - ok_pred == sum(c["misses"].values()) == len(c["missed"])
        assert c["calibration"][1] - c["calibration"][0] == sum(c["calibration_misses"].values())
