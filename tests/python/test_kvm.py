"""KVM testbed tests: real VMs on /dev/kvm. Skipped, with the reason, where KVM is not usable.

Each run is short (0.2-0.4 s measured); shapes compare two measurements of the same session."""
import json
import pathlib
import textwrap

import pytest

from eventpath import _eventpath as E

OK, REASON = E.kvm_available()
pytestmark = pytest.mark.skipif(not OK, reason=f"KVM testbed unavailable: {REASON}")


def run(tmp_path, text, name="s.toml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    out = tmp_path / "out"
    d = json.loads(E.kvm_run(str(p), str(out)))
    assert json.loads((out / "summary.json").read_text()) == d
    return d


def stream(handling, rate=50000, consume="poll"):
    """One VM (vCPU on CPU 0) streaming to a back end on CPU 1: [host.io] ``handling`` ("vhost":
    its thread pinned with backend.pin; "pmd": busy polling on host.io.cores)."""
    table = "[backend]\npin = [1]" if handling == "vhost" else f'[host.io]\nhandling = "{handling}"\ncores = [1]'
    return (f'name = "t-{handling}"\nduration_s = 0.3\nwarmup_s = 0.05\n{table}\n'
            f'[[vm]]\nname = "vm0"\npin = [0]\n[[vm.load]]\npattern = "stream"\nrate = {rate}\nconsume = "{consume}"\n')


def test_summary_contract_keys(tmp_path):
    d = run(tmp_path, stream("vhost"))
    for k in ["scenario", "seed", "profile", "sim_seconds", "wall_seconds", "events", "vms", "host", "kvm_stats", "counters"]:
        assert k in d
    v = d["vms"][0]
    for k in ["io_instruction", "interrupt_delivery", "eoi", "external_interrupt", "timer", "hlt",
              "ept_violation", "interrupt_window", "other"]:
        assert k in v["exits_per_s"]
    assert v["exits_per_s"]["timer"] is None  # this host cannot tell: null, not 0
    assert set(v["latency_us"]) == {"mean", "p50", "p90", "p95", "p99", "p999", "max"}
    assert v["throughput"]["ops_per_s"] > 0
    assert d["kvm_stats"][0]["vcpus"][0]["exits"] > 0


def test_polling_makes_no_kicks_and_exit_mode_does(tmp_path):
    ex = run(tmp_path, stream("vhost", rate=20000), "e.toml")
    po = run(tmp_path, stream("pmd", rate=20000), "p.toml")
    # ≈0: a guest kicks a PMD's queue only when its index crosses the stale avail_event (2^16)
    assert po["vms"][0]["guest"]["kicks_per_request"] < 0.001
    assert po["vms"][0]["throughput"]["ops_per_s"] > 0
    assert ex["vms"][0]["kicks_per_s"] > 0
    assert ex["vms"][0]["guest"]["kicks_per_request"] > 0.2
    # The polling thread never sleeps: it checks the ring far more often than exit mode.
    assert po["counters"]["polls"] > 5 * ex["counters"]["polls"]


def test_interrupt_mode_counts_interrupts_and_eoi(tmp_path):
    d = run(tmp_path, stream("vhost", rate=20000, consume="irq"))
    v = d["vms"][0]
    assert v["interrupts_per_s"] > 0
    assert d["counters"]["interrupts_sent"] > 0
    assert v["latency_us"]["p50"] is not None


def test_fixed_moderation_caps_interrupt_rate(tmp_path):
    base = stream("pmd", rate=100000, consume="irq")
    free = run(tmp_path, base, "f.toml")
    capped = run(tmp_path, base + '\n[moderation]\nkind = "fir"\nitr = 2000\n', "c.toml")
    assert capped["counters"]["interrupts_sent"] / capped["sim_seconds"] < 2200
    assert capped["counters"]["completions_per_interrupt"] > free["counters"]["completions_per_interrupt"]


def test_adversarial_guest_every_error_counted_other_queue_served(tmp_path):
    d = run(tmp_path, """
    name = "adv"
    duration_s = 0.3
    warmup_s = 0.05
    [[vm]]
    name = "vm0"
    vcpus = 2
    [[vm.load]]
    pattern = "adversary"
    gap_us = 200
    [[vm.load]]
    pattern = "stream"
    rate = 20000
    """)
    errs = d["counters"]["guest_errors"]
    for kind in ["head_out_of_range", "addr_out_of_range", "huge_length", "chain_loop",
                 "next_out_of_range", "avail_idx_jump"]:
        assert errs[kind] > 0, kind
    assert d["counters"]["backend"]["bad_requests"] == sum(errs.values())
    # queue 1 kept being served while queue 0 sent garbage
    assert d["vms"][0]["guest"]["requests_completed"] > 1000


def test_routing_reroutes_msi_to_running_vcpu(tmp_path):
    scen = """
    name = "r"
    duration_s = 0.4
    warmup_s = 0.05
    routing = "{r}"
    [irqgen]
    gap_us = 500
    pin = 1
    [[vm]]
    name = "vm0"
    vcpus = 2
    pin = [0, 0]
    [[vm.load]]
    pattern = "irq_sink"
    [[vm.load]]
    pattern = "irq_sink"
    """
    fixed = run(tmp_path, scen.format(r="fixed"), "f.toml")
    running = run(tmp_path, scen.format(r="running_first"), "r.toml")
    assert fixed["counters"]["routing_changes"] == 0
    assert running["counters"]["routing_changes"] > 0
    assert fixed["counters"]["irqgen"]["samples"] > 50


def test_routing_to_running_vcpu_cuts_median_10x(tmp_path):
    """Experiment 4: injections on an open-loop schedule; compared over the injections made while
    the home vCPU was descheduled and its sibling was running (the only case where routing can
    change anything; the rest depends on what else this host runs), both runs of this session."""
    text = pathlib.Path(__file__).parents[2].joinpath("examples/kvm/exp4_routing.toml").read_text()
    text = text.replace("duration_s = 2.0", "duration_s = 0.6").replace("warmup_s = 0.2", "warmup_s = 0.1")
    fixed = run(tmp_path, text, "f.toml")
    running = run(tmp_path, text.replace('routing = "fixed"', 'routing = "running_first"'), "r.toml")
    f = fixed["counters"]["irqgen"]["by_run_state"]["other_running"]
    r = running["counters"]["irqgen"]["by_run_state"]["other_running"]
    assert f["samples"] >= 20 and r["samples"] >= 20, (f, r)
    assert f["latency_us"]["p50"] >= 10 * r["latency_us"]["p50"], (f, r)
    assert fixed["counters"]["routing_changes"] == 0 < running["counters"]["routing_changes"]


def test_halt_polling_is_attempted_per_halt_and_cuts_wakeup(tmp_path):
    """Experiment 5 at a 1 ms gap: halt_poll_ns = 0 vs 2 ms, same session."""
    scen = """
    name = "h"
    duration_s = 0.4
    warmup_s = 0.1
    [irqgen]
    gap_us = 1000
    pin = 1
    [[vm]]
    name = "vm0"
    pin = [0]
    halt_poll_ns = {hp}
    [[vm.load]]
    pattern = "irq_sink"
    halt_when_idle = true
    """
    off = run(tmp_path, scen.format(hp=0), "a.toml")
    big = run(tmp_path, scen.format(hp=2000000), "b.toml")
    assert off["vms"][0]["guest"]["halts"] > 0
    st = big["kvm_stats"][0]["vcpus"][0]
    assert st["halt_exits"] > 0 and st["halt_attempted_poll"] > 0
    assert off["kvm_stats"][0]["vcpus"][0]["halt_attempted_poll"] == 0
    if st["halt_successful_poll"] < 0.5 * st["halt_exits"]:
        per_halt = st["halt_poll_fail_ns"] / max(1, st["halt_attempted_poll"])
        pytest.skip(f"halt polling was attempted but ended after {per_halt:.0f} ns per halt: KVM polls only "
                    "while the vCPU's host CPU has no other runnable task (kvm_vcpu_can_poll -> "
                    "single_task_running), and CPU 0 was busy; the wake-up shape cannot show")
    assert big["vms"][0]["latency_us"]["p50"] <= 0.75 * off["vms"][0]["latency_us"]["p50"]
    # polling keeps the vCPU thread busy between interrupts
    assert big["vms"][0]["cpu_util_pct"] >= off["vms"][0]["cpu_util_pct"] + 20


def test_probe_measures_each_path_per_notification_and_exports_a_profile(tmp_path):
    out = tmp_path / "probe"
    d = json.loads(E.kvm_probe(str(out), True))
    assert json.loads((out / "probe.json").read_text()) == d
    assert d["trials"] == 3 and len(d["results"]) == 3  # --quick: 3 trials
    # An exit to userspace costs the guest more than an ioeventfd kick (KVM-NOTES: ~2x): held
    # on the trials' median, since one trial on a loaded machine came to 1.27x (80.6 against
    # 63.2 us, the Rust suite running beside it).
    cost = lambda t, p: t["notification_paths"][p]["guest_cost_us_per_notification"]  # noqa: E731
    for bus in ["pio", "mmio"]:
        ratios = sorted(cost(t, f"{bus}_exit_to_userspace") / cost(t, f"{bus}_ioeventfd") for t in d["results"])
        assert ratios[1] >= 1.3, (bus, ratios)
    for trial in d["results"]:
        paths = trial["notification_paths"]
        for name in ["pio_exit_to_userspace", "mmio_exit_to_userspace", "pio_ioeventfd", "mmio_ioeventfd"]:
            assert paths[name]["guest_cost_us_per_notification"] > 0, name
            assert paths[name]["notifications_per_s"] > 0, name
        assert trial["polled_ring_request"]["kicks_per_request"] == 0
        # guest kick -> backend handler (shared TSC): every sparse kick wakes the sleeping thread
        for bus in ["pio", "mmio"]:
            k = trial["kick_to_backend_handler"][f"{bus}_ioeventfd"]
            assert k["samples"] >= 0.5 * k["kicks"] > 10, (bus, k)
            assert 0 < k["latency_us"]["p50"] < 10000, (bus, k)
            assert k["backend_wakeups"] >= 0.5 * k["kicks"] and k["backend_cpu_us_per_wakeup"] > 0, (bus, k)
        # the idle curve: the same kick -> backend measurement at 4 idle lengths (issue 28)
        assert [p["gap_us"] for p in trial["idle_curve"]] == [20, 100, 500, 2000]
        for p in trial["idle_curve"]:
            assert 0 < p["kick"]["latency_us"]["p50"] and p["kick"]["backend_idle_us_per_wakeup"] > 0, p
        # a kick that wakes the backend costs the guest more than one in a loop that only kicks
        assert trial["kick_under_load"]["guest_cost_us_per_kick"] > paths["pio_ioeventfd"]["guest_cost_us_per_notification"]
    # every parameter is exported (median of the trials, which agree) or refused, never both
    profile_keys = {"exit.io_instruction_ns", "exit.interrupt_delivery_ns", "host.thread_wakeup_ns",
                    "host.thread_wakeup_spread_ns", "host.halt_wakeup_ns", "host.halt_poll_wake_ns",
                    "vhost.wakeup_ns", "vhost.tx_packet_ns", "guest.request_ns",
                    "host.timer_wakeup_ns", "vhost.timed_sleep_ns"}
    named = {"vcpu_hlt_wakeup_ns", "backend_cpu_per_wakeup_ns", "io_kick_tight_loop_ns"} | {
        f"idle_curve_{g}us_{q}_ns" for g in [20, 100, 500, 2000] for q in ["kick_to_run", "backend_cpu", "backend_idle"]}
    assert set(d["profile"]) | {k for k, r in d["refused"].items() if r["profile_key"]} == profile_keys
    assert set(d["not_in_profile"]) | {k for k, r in d["refused"].items() if not r["profile_key"]} == named
    assert not (set(d["profile"]) | set(d["not_in_profile"])) & set(d["refused"])
    for e in [*d["profile"].values(), *d["not_in_profile"].values()]:
        assert len(e["trials"]) == 3 and e["set_aside"] == []  # none of 3 may be set aside
        assert e["min"] <= e["median"] <= e["max"] <= 3 * e["min"], e
        assert abs(e["value"] - e["median"]) <= 0.5 or e["value"] < e["median"], e  # the spread: at most the wake-up
    text = (out / "profile.toml").read_text()
    assert "[exit]" in text and "measured by eventpath kvm probe on" in text
    for key, e in d["profile"].items():
        table, k = key.split(".")
        assert f"\n{k} = {{ value = {float(e['value'])}, unit = \"ns\", source = \"measured by" in text, key
    for key, r in d["refused"].items():
        assert f"#   {key}: " in text, key
    # the halted vCPU's wake-up is measured and named, not passed off as the backend's
    if "vcpu_hlt_wakeup_ns" in d["not_in_profile"]:
        assert "host.thread_wakeup_ns" in d["not_in_profile"]["vcpu_hlt_wakeup_ns"]["why_not_in_profile"]
    # the simulator runs its own example on the exported profile
    ex = pathlib.Path(__file__).parents[2].joinpath("examples/udp-send.toml").read_text()
    scen = tmp_path / "on-probe.toml"
    scen.write_text(ex.replace('profile = "es2"', f'profile = "{out / "profile.toml"}"'))
    res = json.loads(E.run_file(str(scen), None, 0.05))
    assert res["summary"]["vms"]


def _fake_probe(refused):
    def kvm_probe(out_dir, quick=False):
        d = {"trials": 3, "profile": {}, "not_in_profile": {}, "refused": refused, "results": [{}]}
        text = json.dumps(d)
        pathlib.Path(out_dir, "probe.json").write_text(text)
        return text
    return kvm_probe


def test_probe_command_exits_3_naming_a_refused_parameter_unless_allowed(tmp_path, monkeypatch, capsys):
    from eventpath import cli

    why = "trials disagree: 28.302 µs .. 3.395 ms (max/min 120.0 > 3) after setting aside 1 of 5 (at most 1)"
    monkeypatch.setattr(E, "kvm_probe", _fake_probe({"exit.interrupt_delivery_ns": {"reason": why, "profile_key": True}}))
    assert cli.main(["kvm", "probe", "--out", str(tmp_path / "a")]) == 3
    err = capsys.readouterr().err.splitlines()
    # The machine's noise beside the probe (issue 45), then the refusal.
    assert err[0].startswith("noise: other processes wanted ") and "probe threads nice" in err[0], err
    assert err[1:] == [f"warning: refused exit.interrupt_delivery_ns: {why} (profile.toml keeps es2's value; see probe.json refused)"]
    noise = json.loads((tmp_path / "a" / "noise.json").read_text())
    assert set(noise) == {"quiet_cpus", "other_cpus", "steal_pct", "loadavg_1m", "shield"}
    assert cli.main(["kvm", "probe", "--out", str(tmp_path / "b"), "--allow-outliers"]) == 0
    assert "warning: refused exit.interrupt_delivery_ns" in capsys.readouterr().err
    monkeypatch.setattr(E, "kvm_probe", _fake_probe({}))
    assert cli.main(["kvm", "probe", "--out", str(tmp_path / "c")]) == 0
    assert capsys.readouterr().err.startswith("noise: ")


@pytest.mark.parametrize("bad,needle", [
    ('rate = 20000\nbogus = 1', "unknown field `bogus`"),
    ('rate = -5', "rate = -5"),
    ('rate = "fast"', "rate"),
])
def test_bad_scenario_is_input_error(tmp_path, bad, needle):
    p = tmp_path / "bad.toml"
    p.write_text(textwrap.dedent(stream("vhost")).replace("rate = 50000", bad))
    with pytest.raises(E.InputError, match=needle):
        E.kvm_run(str(p), str(tmp_path / "o"))


def test_pin_to_missing_cpu_is_input_error(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text(textwrap.dedent(stream("vhost")).replace("pin = [0]", "pin = [4096]"))
    with pytest.raises(E.InputError, match="vm\\[0\\].pin = 4096"):
        E.kvm_run(str(p), str(tmp_path / "o"))


def test_missing_scenario_file_is_input_error(tmp_path):
    with pytest.raises(E.InputError, match="cannot read scenario"):
        E.kvm_run(str(tmp_path / "nope.toml"), str(tmp_path / "o"))
