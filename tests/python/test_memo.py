"""api.memo (issue 52): inside the block a run of exactly what an earlier one ran is answered
from the memo, as a fresh copy; anything that changes what runs — seed, duration, a profile
override, the file's bytes — runs again; outside a block every run runs."""

import tomllib

from conftest import ROOT
from eventpath import _eventpath, api

SCENARIO = ROOT / "examples/udp-send.toml"


def counting(monkeypatch):
    calls = []
    for name in ("run_json", "run_file"):
        real = getattr(_eventpath, name)

        def wrapped(*a, _real=real, _name=name):
            calls.append(_name)
            return _real(*a)

        monkeypatch.setattr(_eventpath, name, wrapped)
    return calls


def test_a_repeated_run_is_simulated_once_and_answers_the_same(monkeypatch):
    calls = counting(monkeypatch)
    sc = tomllib.loads(SCENARIO.read_text())
    plain = api.run(sc, duration=0.01, seed=3).summary
    with api.memo():
        a = api.run(sc, duration=0.01, seed=3)
        a.summary["vms"][0]["name"] = "changed by the caller"
        b = api.run(sc, duration=0.01, seed=3)
        with api.memo():  # a nested block shares the outer memo
            c = api.run(sc, duration=0.01, seed=3)
    assert calls == ["run_json", "run_json"]
    assert b.summary == c.summary
    assert {k: v for k, v in b.summary.items() if k != "wall_seconds"} == \
        {k: v for k, v in plain.items() if k != "wall_seconds"}


def test_what_changes_a_run_runs_again(monkeypatch, tmp_path):
    calls = counting(monkeypatch)
    sc = tomllib.loads(SCENARIO.read_text())
    f = tmp_path / "s.toml"
    f.write_text(SCENARIO.read_text())
    with api.memo():
        api.run(sc, duration=0.01, seed=3)
        api.run(sc, duration=0.01, seed=4)
        api.run(sc, duration=0.02, seed=3)
        with api.overriding(sc["profile"], {"exit.eoi_ns": 1500.0}):
            api.run(sc, duration=0.01, seed=3)
        api.run(f, duration=0.01)
        api.run(f, duration=0.01)
        f.write_text(SCENARIO.read_text() + "\n# edited\n")
        api.run(f, duration=0.01)
        api.run(sc, duration=0.01, seed=3, progress=lambda *_: None)
    api.run(sc, duration=0.01, seed=3)
    assert calls == ["run_json"] * 4 + ["run_file"] * 2 + ["run_json"] * 2
