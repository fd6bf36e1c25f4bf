"""sweep, reproduce and trace from the Python API, with a scenario dict as well as a file
(issue 29 item 7); bad arguments raise InputError with one line."""

import json
import tomllib

import pytest

import eventpath
from eventpath import InputError

from conftest import ROOT

UDP = ROOT / "examples/udp-send.toml"


def _dict():
    return tomllib.loads(UDP.read_text())


def test_sweep_takes_a_dict_and_a_file_alike(tmp_path):
    a = eventpath.sweep(_dict(), {"vm.0.workload.rate_pps": [10000, 20000]}, out=tmp_path / "a", duration=0.01,
                        workers=1)
    b = eventpath.sweep(UDP, {"vm.0.workload.rate_pps": [10000, 20000]}, out=tmp_path / "b", duration=0.01,
                        workers=1)
    assert a.results == tmp_path / "a/results.csv" and a.results.exists()
    assert [r["vm.0.workload.rate_pps"] for r in a.rows] == [10000, 20000]
    strip = [{k: v for k, v in r.items()} for r in a.rows]
    assert strip == b.rows, "the same grid from a dict and from its file: the same rows"
    assert a.rows[1]["throughput_pps"] > 1.5 * a.rows[0]["throughput_pps"]


def test_trace_takes_a_dict_and_a_file_alike(tmp_path):
    t = eventpath.trace(_dict(), tmp_path / "d.json", from_s=0.1, to_s=0.101, duration=0.01)
    f = eventpath.trace(UDP, tmp_path / "f.json", from_s=0.1, to_s=0.101, duration=0.01)
    assert t.events == f.events > 0 and t.dropped == 0
    assert json.loads((tmp_path / "d.json").read_text()) == json.loads((tmp_path / "f.json").read_text())
    s1, s2 = dict(t.result.summary), dict(f.result.summary)
    s1.pop("wall_seconds"), s2.pop("wall_seconds")
    assert s1 == s2


def test_reproduce_by_id(tmp_path):
    docs = eventpath.reproduce("es2-table1", tmp_path, duration=0.01, workers=1)
    assert len(docs) == 1 and (tmp_path / "es2-table1.json").exists()


def test_resolve_fills_defaults_for_a_dict():
    r = eventpath.resolve(_dict(), seed=3)
    assert r["scenario"]["seed"] == 3 and r["scenario"]["vm"][0]["net"]["queue_size"] == 256
    assert tomllib.loads(r["toml"])["seed"] == 3 and r["profile"]["name"] == "es2"


@pytest.mark.parametrize("call, message", [
    (lambda p: eventpath.sweep(_dict(), [("a", [1])], out=p), "expected a dict"),
    (lambda p: eventpath.sweep(_dict(), {"vm.0.workload.rate_pps": []}, out=p), "non-empty list"),
    (lambda p: eventpath.sweep(_dict(), {"vm.9.workload.rate_pps": [1]}, out=p), "vm.9"),
    (lambda p: eventpath.sweep(_dict(), {}, out=p, seeds=[1, 1]), "given twice"),
    (lambda p: eventpath.sweep({"name": "x"}, {}, out=p), "profile"),
    (lambda p: eventpath.trace(_dict(), p, limit=0), "limit"),
    (lambda p: eventpath.trace(_dict(), p / "t.json", from_s=float("nan")), "from_s"),
    (lambda p: eventpath.trace({**_dict(), "bogus": 1}, p / "t.json"), "bogus"),
    (lambda p: eventpath.reproduce("nosuch", p), "unknown experiment"),
    (lambda p: eventpath.reproduce([], p), "expected an experiment ID"),
])
def test_bad_arguments_raise_one_line(tmp_path, call, message):
    with pytest.raises(InputError) as e:
        call(tmp_path)
    assert message in str(e.value) and "\n" not in str(e.value)
