"""`eventpath keys`: every scenario key with type, unit, default and meaning (the list is the
simulator's, checked against its parser by crates/sim/src/scenario/keys.rs's tests)."""

import json

import eventpath


def test_keys_lists_the_keys_no_other_list_had(cli):
    r = cli("keys")
    assert r.returncode == 0, r.stderr
    for key in ("host.io.handling", "host.io.poll_start_per_jiffy", "host.io.empty_polls", "vm.net.moderation.c_int_cycles",
                "vm.workload.streams", "vm.halt_poll.grow_start", "profile_overrides"):
        assert f"\n{key}" in "\n" + r.stdout, key
    assert 'vm.workload.streams  [kind = "tcp_stream"]  integer, threads; default: 1' in r.stdout
    # AIR's costs default to the profile's, saying which values.
    assert "c_int_cycles  [kind = \"air\"]  float, cycles; default: the profile's" in r.stdout


def test_keys_of_a_section_or_kind(cli):
    r = cli("keys", "host.io")
    assert r.returncode == 0, r.stderr
    heads = [ln.split()[0] for ln in r.stdout.splitlines() if not ln.startswith(" ")]
    assert heads and all(h.startswith("host.io.") for h in heads)
    r = cli("keys", "memcached", "--json")
    got = json.loads(r.stdout)
    assert {k["key"] for k in got} == {f"vm.workload.{k}" for k in
                                        ("concurrency", "get_ratio", "value_bytes", "key_bytes", "rate_rps", "threads")}
    assert all({"key", "kind", "type", "unit", "default", "meaning"} == k.keys() for k in got)


def test_an_unknown_key_is_one_line_and_exit_2(cli):
    r = cli("keys", "vm.nosuch")
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "keys 'vm.nosuch': no scenario key" in r.stderr and "host" in r.stderr


def test_the_api_gives_the_same_list():
    ks = eventpath.keys()
    assert len(ks) > 100 and len({(k["key"], k["kind"]) for k in ks}) == len(ks)


def test_issue_31_keys_are_listed(cli):
    r = cli("keys", "vm.lookbusy")
    assert r.returncode == 0, r.stderr
    heads = {ln.split()[0] for ln in r.stdout.splitlines() if ln and not ln.startswith(" ")}
    assert heads == {"vm.lookbusy.util_pct", "vm.lookbusy.period_ms"}
    got = {k["key"] for k in json.loads(cli("keys", "specweb", "--json").stdout)}
    assert got == {f"vm.workload.{k}" for k in ("sessions", "think_ms", "heavy_pct", "light_cpu_us", "heavy_cpu_us",
                                                "light_bytes", "heavy_bytes", "workers")}
    got = {k["key"] for k in json.loads(cli("keys", "httperf", "--json").stdout)}
    assert got == {f"vm.workload.{k}" for k in ("rate_rps", "file_bytes", "timeout_ms", "server", "workers")}
