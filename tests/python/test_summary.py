"""``eventpath.summary``, the summary.json accessors (issue 46): each reads a key docs/summary.md
names, reads it as the raw path does on a real run, and keeps the contract's null a None."""

import inspect
import re

import pytest

from conftest import ROOT
from eventpath import api, summary


@pytest.fixture(scope="module")
def run():
    return api.run(str(ROOT / "examples/pmd.toml"), duration=0.01).summary


def _accessors():
    return [(n, f) for n, f in inspect.getmembers(summary, inspect.isfunction)
            if f.__module__ == summary.__name__ and not n.startswith("_")]


def test_every_accessor_says_which_documented_key_it_reads():
    doc = (ROOT / "docs/summary.md").read_text()
    computed = {"vms", "vm", "total", "worst", "io_cores", "cpu_split", "io_thread_util_pct", "thread_pcpu_pct",
                "own_throughput"}
    for name, f in _accessors():
        if name in computed:
            continue
        key = re.match(r"``([^`]+)``", f.__doc__).group(1)
        parts = key.split(".")
        # The documented row is the key itself or the object it is a field of (vms[].throughput).
        rows = [".".join(parts[:i]) for i in range(len(parts), 0, -1)]
        assert any(f"`{r}`" in doc for r in rows if "<" not in r and r not in ("vms[]", "host")), (name, key)


def test_each_accessor_reads_what_the_raw_path_reads(run):
    vm = run["vms"][0]
    assert summary.vm(run) is vm and summary.vms(run) is run["vms"]
    assert (summary.scenario(run), summary.seed(run), summary.profile(run)) == (run["scenario"], 1, run["profile"])
    assert summary.sim_seconds(run) == run["sim_seconds"] and summary.events(run) == run["events"]
    assert summary.stalled_flows(run) == [] and summary.name(vm) == "vm0"
    assert (summary.gbps(vm), summary.pps(vm), summary.ops_per_s(vm)) == tuple(
        vm["throughput"][k] for k in ("gbps", "pps", "ops_per_s")) == tuple(
        summary.throughput(vm, k) for k in ("gbps", "pps", "ops_per_s"))
    assert summary.latency_us(vm, "p99") == vm["latency_us"]["p99"] and summary.latency_us(vm) == vm["latency_us"]["p50"]
    assert summary.exits_by_reason(vm) == vm["exits_per_s"] and summary.exits_per_s(vm, "eoi") == vm["exits_per_s"]["eoi"]
    for key in ("exits_total_per_s", "eht_pct", "tig_pct", "cpu_util_pct", "kicks_per_s", "interrupts_per_s"):
        assert getattr(summary, key)(vm) == vm[key], key
    host = run["host"]
    assert summary.pcpu_util_pct(run) == host["pcpu_util_pct"] and summary.io_threads(run) == host["io_threads"]
    assert summary.threads(run) == host["threads"] and summary.migrations_per_s(run) == host["migrations_per_s"]
    assert summary.io_thread_util_pct(run) == sum(t["util_pct"] or 0.0 for t in host["io_threads"])
    assert summary.thread_pcpu_pct(run, "vcpu:") == sum(sum(t["pcpu_pct"]) for t in host["threads"]
                                                        if t["name"].startswith("vcpu:"))
    # Blocks of other workloads and of the testbed are absent here, and read as None.
    assert all(getattr(summary, k)(vm) is None for k in ("web", "httperf", "specweb", "cpu_job", "lookbusy", "guest"))
    assert summary.counters(run) is None and summary.latency_by_target_state_us(vm, "home_running") is None


def test_null_and_missing_keys_read_as_none_and_aggregates_skip_them():
    vm = {"throughput": {"gbps": None}, "latency_us": None}
    assert summary.gbps(vm) is None and summary.ops_per_s(vm) is None and summary.latency_us(vm, "p99") is None
    assert summary.eht_pct({}) is None and summary.vms({}) == [] and summary.io_threads({"host": None}) is None
    assert summary.total([None, 1.0, 2.0]) == 3.0 and summary.total([None]) is None
    assert summary.worst([None, 5.0, 2.0]) == 5.0 and summary.worst([]) is None


def test_cpu_split_parts_add_up_and_a_testbed_summary_gets_none_made_up(run):
    c = summary.cpu_split(run, [3])
    assert sum(c[k] for k in summary.CPU_PARTS) == pytest.approx(c["cpu_host"], abs=1e-9)
    testbed = dict(run, host=dict(run["host"], threads=None))  # the testbed leaves host.threads null
    with pytest.raises(TypeError):
        summary.cpu_split(testbed, [])
    with pytest.raises(TypeError):
        summary.thread_pcpu_pct(testbed, "vcpu:")
