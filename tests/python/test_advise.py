"""`eventpath advise`: one switch at a time against the scenario's stock, paired seeds, intervals."""

import csv
import json
from pathlib import Path

import pytest

from eventpath import advise, api


def _resolved(path="examples/advise-cloud.toml"):
    r = api.resolve(path)
    return r["scenario"], r["profile"]


def test_the_options_are_what_the_profiles_cpu_and_kernel_leave_to_switch():
    sc, prof = _resolved()
    labels = [o.label for o in advise.options(sc, prof)]
    # modern's Sapphire Rapids has IPIv, not AVIC; its Linux 6.1 KVM runs posted interrupts with
    # IPIv and polls 200 us by default, so those are stock and not options (nor PV EOI: no
    # emulated LAPIC)
    assert "posted interrupts + IPIv" not in labels and "posted interrupts + AVIC" not in labels
    assert "posted interrupts" not in labels and "PV EOI (on the emulated-LAPIC VMs)" not in labels
    assert "KVM halt polling off" in labels and "KVM halt polling 200 us" not in labels
    assert "vhost busy polling 10 us" in labels
    stock = advise.stock_settings(sc, prof)
    assert stock["KVM halt polling"] == "200 us" and stock["delivery"] == "posted"
    assert stock["APIC features"] == "ipiv"
    # With kvm_intel enable_ipiv = 0 IPIv is an option again.
    sc_off, prof_off = _resolved(_no_stock_ipiv(sc))
    assert "posted interrupts + IPIv" in [o.label for o in advise.options(sc_off, prof_off)]
    # A host whose kernel has no APICv (modern's, as ES2's "w/o PI": enable_apicv = 0) keeps
    # the emulated LAPIC as stock.
    old = json.loads(json.dumps(sc))
    for vm in old["vm"]:
        del vm["interrupt_delivery"]
        vm.pop("apic", None)  # the resolved stock's IPIv, which needs posted interrupts
    old.setdefault("profile_overrides", {}).setdefault("host", {})["apicv"] = 0
    sc_did, prof_did = _resolved(old)
    labels = [o.label for o in advise.options(sc_did, prof_did)]
    assert {"posted interrupts", "PV EOI (on the emulated-LAPIC VMs)"} <= set(labels)


def _no_stock_ipiv(sc: dict) -> dict:
    """``sc`` on a modern host whose kernel leaves IPIv off (enable_ipiv = 0)."""
    off = json.loads(json.dumps(sc))
    for vm in off["vm"]:
        vm.pop("apic", None)
    off.setdefault("profile_overrides", {}).setdefault("host", {})["ipiv"] = 0
    return off


def test_an_option_brings_what_it_needs_and_leaves_stock_untouched():
    sc, prof = _resolved(_no_stock_ipiv(_resolved()[0]))
    by = {o.label: o for o in advise.options(sc, prof)}
    ipiv = advise.variant(sc, by["posted interrupts + IPIv"])
    assert all(vm["interrupt_delivery"] == "posted" and vm["apic"]["ipiv"] for vm in ipiv["vm"])
    hp = advise.variant(sc, by["guest haltpoll (cpuidle-haltpoll, its defaults; KVM's polling off)"])
    assert all("halt_poll" not in vm and vm["guest_halt_poll"] == {} for vm in hp["vm"])
    assert all(vm["interrupt_delivery"] == "posted" and not (vm.get("apic") or {}).get("ipiv") and "halt_poll" in vm
               for vm in sc["vm"]), "stock is a copy's base"


def test_intervals_are_students_t_over_the_paired_seeds():
    i = advise.interval([1.0, 2.0, 3.0])
    assert i.mean == 2.0 and i.half == pytest.approx(4.303 * 1.0 / 3 ** 0.5)
    assert not i.excludes_zero(), "2 ± 2.48"
    assert advise.interval([2.0, 3.0, 4.0]).excludes_zero() and not advise.interval([-1.0, 1.0]).excludes_zero()
    assert advise.interval([5.0]).half is None and not advise.interval([5.0]).excludes_zero()
    stock = {s: {"vms": [{"vm": "a", "kind": "tcp_rr", "unit": "ops/s", "throughput": 100.0, "p99_us": 10.0}],
                 "cpu": {"cpu_host": 1.0}} for s in (1, 2, 3)}
    runs = {s: {"vms": [{"vm": "a", "kind": "tcp_rr", "unit": "ops/s", "throughput": 102.0 + s, "p99_us": 10.0}],
                "cpu": {"cpu_host": 1.5}} for s in (1, 2, 3)}
    g = advise.gains(stock, runs)[0]
    assert g.throughput.mean == pytest.approx(4.0) and g.good() and not g.bad()
    assert g.cpu.mean == pytest.approx(0.5) and g.p99.mean == 0.0


def test_advise_answers_in_one_page_and_writes_its_table(cli, tmp_path):
    r = cli("advise", "examples/advise-cloud.toml", "--out", str(tmp_path), "--duration", "0.01", "--seeds", "2",
            "--max-seeds", "2", "--workers", "1")
    assert r.returncode == 0, r.stderr
    assert "stock is the scenario as written" in r.stdout and "Answer:" in r.stdout
    assert "KVM halt polling 200 us" in r.stdout.splitlines()[1] or "KVM halt polling 200 us" in r.stdout
    with open(tmp_path / "advise.csv") as f:
        rows = list(csv.DictReader(f))
    opts = {row["option"] for row in rows}
    assert "KVM halt polling off" in opts and "PV IPI" in opts
    # a refused option is a row with its reason; a run one is a row per VM
    pv_ipi = [row for row in rows if row["option"] == "PV IPI"]
    assert len(pv_ipi) == 1 and pv_ipi[0]["category"] == "refused" and "multi-destination" in pv_ipi[0]["note"]
    busy = [row for row in rows if row["option"] == "vhost busy polling 10 us"]
    assert [row["vm"] for row in busy] == ["mc0", "mc1", "web0", "web1"] and all(row["seeds"] == "2" for row in busy)
    d = json.loads((tmp_path / "advise.json").read_text())
    assert d["seeds"] == [1, 2] and d["answer"][0].startswith("advise: examples/advise-cloud.toml")
    # same scenario, same seeds: the same numbers
    r2 = cli("advise", "examples/advise-cloud.toml", "--out", str(tmp_path / "again"), "--duration", "0.01",
             "--seeds", "2", "--max-seeds", "2", "--workers", "1")
    assert r2.returncode == 0
    assert (tmp_path / "again" / "advise.csv").read_text() == (tmp_path / "advise.csv").read_text()


@pytest.mark.parametrize("args, says", [
    (("--seeds", "1"), "--seeds 1: not allowed; expected at least 2"),
    (("--seeds", "4", "--max-seeds", "3"), "--max-seeds 3: not allowed; expected 4..=1000"),
    (("--budget", "0"), "--budget 0.0: not allowed"),
])
def test_advise_refuses_in_one_line(cli, tmp_path, args, says):
    r = cli("advise", "examples/advise-cloud.toml", "--out", str(tmp_path), *args)
    assert r.returncode == 2 and says in r.stderr and r.stderr.count("\n") == 1, r.stderr


def test_the_robustness_screen_moves_groups_of_ranged_values_to_their_ends():
    pts = advise.corners("modern")
    assert len(pts) % 2 == 0 and len(pts) >= 4
    (name_lo, lo), (name_hi, hi) = pts[0], pts[1]
    assert name_lo.endswith("at min") and name_hi.endswith("at max") and lo.keys() == hi.keys()
    assert len(lo) == advise.ROBUST_GROUP and all(lo[k] <= hi[k] for k in lo)
    sc = advise.with_overrides({"profile_overrides": {"exit": {"eoi_ns": 5.0}}}, {"exit.hlt_ns": 7.0, "cpu.ghz": 2.5})
    assert sc["profile_overrides"] == {"exit": {"eoi_ns": 5.0, "hlt_ns": 7.0}, "cpu": {"ghz": 2.5}}


def test_a_resolved_gain_is_robust_where_its_sign_holds_at_every_corner(monkeypatch):
    sc, prof = _resolved()
    opt = next(o for o in advise.options(sc, prof) if o.label == "KVM halt polling off")
    # Two corners only (exit costs at their ends), so the test runs in seconds.
    monkeypatch.setattr(advise, "corners", lambda profile: [("exit at min", {"exit.hlt_ns": 575.0}),
                                                            ("exit at max", {"exit.hlt_ns": 2300.0})])
    monkeypatch.setattr(advise, "ROBUST_SEEDS", 2)
    kinds = [vm["workload"]["kind"] for vm in sc["vm"]]
    one = lambda o, s: advise.run_one(advise.variant(sc, o), s, 0.02, kinds, [])
    stock, off = {s: one(None, s) for s in (1, 2)}, {s: one(opt, s) for s in (1, 2)}
    v = advise.Verdict(opt, vms=advise.gains(stock, off), seeds=2)
    # Host CPU falls without halt polling: make the verdict rest on a metric we know resolves.
    g = v.vms[0]
    g.throughput = advise.Interval(-5.0, 1.0, 2)
    adv = advise.Advice("s", "modern", {}, stock, [v], [1, 2], 0.02, 0.0, 4, False, profile_ref="modern", robust=True)
    from eventpath.executor import Executor
    advise.robustness(adv, sc, kinds, [], 0.02, Executor())
    assert adv.runs == 4 + 2 * 2 * 2, "2 corners x (stock + 1 option) x 2 seeds"
    assert g.band is not None and g.band[0] <= g.band[1] and isinstance(g.robust, bool)
    assert g.robust == (g.band[1] < 0), "robust: every corner's gain keeps the nominal (negative) sign"


def test_moderation_routing_and_multi_queue_are_families_where_the_layout_has_them(tmp_path):
    sc, prof = _resolved()
    by = {o.label: o for o in advise.options(sc, prof)}
    assert {o.family for o in by.values()} >= {"moderation", "routing"}
    dim = advise.variant(sc, by["guest net DIM on virtio-net's notification coalescing"])
    assert all(vm["net"]["moderation"] == {"kind": "guest_dim"} for vm in dim["vm"])
    rf = advise.variant(sc, by["interrupts to a running vCPU (running_first)"])
    assert all(vm["interrupt_routing"] == "running_first" for vm in rf["vm"])
    assert "one virtio-net queue pair per vCPU" not in by, "memcached and nginx run on one queue pair in the model"
    stock = advise.stock_settings(sc, prof)
    assert stock["moderation"] == "none" and stock["routing"] == "fixed" and stock["multi-queue"] == "1 queue pair(s)"

    # A receiver VM beside a memcached VM: multi-queue goes to the receiver only, and runs.
    text = Path("examples/virtio-multiqueue.toml").read_text().replace("queues = 4\n", "")
    text += '\n[[vm]]\nname = "mc"\nvcpus = 2\n[vm.workload]\nkind = "memcached"\nconcurrency = 8\n'
    path = tmp_path / "mq.toml"
    path.write_text(text)
    r = api.resolve(str(path))
    sc, prof = r["scenario"], r["profile"]
    mq = next(o for o in advise.options(sc, prof) if o.family == "multi-queue")
    v = advise.variant(sc, mq)
    assert v["vm"][0]["net"]["queues"] == 4 and "queues" not in v["vm"][1].get("net", {})
    kinds = [vm["workload"]["kind"] for vm in sc["vm"]]
    one, four = (advise.run_one(x, 1, 0.02, kinds, []) for x in (sc, v))
    assert "vms" in one and "vms" in four, (one, four)
    assert four["vms"][0]["throughput"] > 1.5 * one["vms"][0]["throughput"], "four streams on four queue pairs"


def test_a_disk_vm_gets_no_nic_family_and_its_options_run():
    """A fio VM's device is a virtio-blk disk (issue 51): busy polling and moderation, a NIC's
    knobs, are not offered to it; the options it is offered run (or are refused for the
    layout's idle=poll guest, never for its disk)."""
    r = api.resolve("examples/fio-ramdisk.toml")
    sc, prof = r["scenario"], r["profile"]
    opts = advise.options(sc, prof)
    assert not {o.family for o in opts} & {"vhost busy polling", "moderation", "multi-queue"}, [o.label for o in opts]
    kinds = [vm["workload"]["kind"] for vm in sc["vm"]]
    for o in opts:
        got = advise.run_one(advise.variant(sc, o), 1, 0.01, kinds, [])
        assert "vms" in got or "virtio-blk" not in got["refused"], (o.label, got)
    ran = [o for o in opts if "vms" in advise.run_one(advise.variant(sc, o), 1, 0.01, kinds, [])]
    assert {o.label for o in ran} >= {"posted interrupts"}, [o.label for o in ran]
