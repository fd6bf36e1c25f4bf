"""ELVIS Baseline reproduction: contract, scheduler placement, Apache and memcached rows."""

import json

import pytest

reproduce = pytest.importorskip("eventpath.reproduce")


def test_elvis_baseline_1vm_writes_json_and_figure(tmp_path):
    doc = reproduce.run("elvis-baseline-1vm", tmp_path, duration=0.02)
    assert (tmp_path / "elvis-baseline-1vm.png").stat().st_size > 0
    on_disk = json.loads((tmp_path / "elvis-baseline-1vm.json").read_text())
    assert on_disk["rows"] == doc["rows"]
    rows = {(r["config"], r["metric"]): r for r in doc["rows"]}
    assert rows[("netperf-tcp64", "exits_total")]["published"] == 142_000.0
    assert rows[("netperf-tcp64", "exits_total")]["simulated"] > 0
    for cfg, pub in (("apache-4k-c2", 109_000.0), ("memcached-c32", 146_000.0)):
        assert rows[(cfg, "exits_total")]["published"] == pub
        assert rows[(cfg, "exits_total")]["simulated"] > 0
        assert rows[(cfg, "throughput")]["simulated"] > 0


def test_elvis_baseline_threads_are_placed_by_the_scheduler_on_two_cores():
    from eventpath import api

    s = api.run(reproduce.SCENARIOS / "elvis-baseline-1vm-tcp64.toml", duration=0.02).summary
    assert len(s["host"]["pcpu_util_pct"]) == 2
    names = [t["name"] for t in s["host"]["threads"]]
    assert names == ["vcpu:vm0/0", "vhost-vm0"]
