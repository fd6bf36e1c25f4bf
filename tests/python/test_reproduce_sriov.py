"""CGR/AIR reproductions (§3.2 Fig. 4, §3.3 Fig. 5, §5.2.1 Fig. 8a, §5.4 Fig. 11, §5.5 Fig. 12) and the
coalescing head-to-head: what the model must give by construction, the rows' roles (the baselines'
published rows calibrate, the mechanisms' predict), and the published data fit the rows."""

import tomllib

import pytest

reproduce = pytest.importorskip("eventpath.reproduce")
from eventpath.reproduce import published, sriov  # noqa: E402
from eventpath import _eventpath  # noqa: E402

EXPERIMENTS = ("sriov-fig4", "sriov-fig5", "sriov-fig8a", "sriov-fig11", "sriov-fig12", "coalescing-head-to-head")


def _rows(doc):
    return {(r["config"], r["metric"]): r for r in doc["rows"]}


def _measured(rows):
    return {(m.config, m.metric): m.simulated for m in rows}


def test_sriov_experiments_are_registered_on_the_sriov_profile():
    for e in EXPERIMENTS:
        assert reproduce.EXPERIMENTS[e].profile == "sriov"


def test_sriov_profile_states_the_testbed_and_a_source_for_every_value():
    doc = tomllib.loads(_eventpath.builtin_profile_text("sriov")[0])
    assert doc["cpu"]["sockets"]["value"] * doc["cpu"]["cores_per_socket"]["value"] == 8
    assert doc["cpu"]["ghz"]["value"] == 2.27
    # CGR/AIR §3.2, §4.1: the VF driver's default InterruptThrottleRate, 8,000/s.
    assert doc["sriov"]["vf_itr_ns"]["value"] == 125_000
    params = [(s, k, p) for s, t in doc.items() if isinstance(t, dict) for k, p in t.items()
              if isinstance(p, dict) and "value" in p]
    assert len(params) > 60
    for s, k, p in params:
        assert p.get("source", "").strip(), f"{s}.{k} has no source"
        if "free" in p:
            assert p["free"]["min"] <= p["value"] <= p["free"]["max"], f"{s}.{k} outside its free range"
    # The simulator has it built in.
    assert _eventpath.builtin_profile_text("sriov") is not None
    assert "sriov" in _eventpath.profile_json("sriov")


def test_sriov_fig4_with_the_window_autotuned_the_throttle_no_longer_bounds_one_vms_stream(tmp_path):
    doc = reproduce.run("sriov-fig4", tmp_path, duration=0.05, progress=False)
    assert (tmp_path / "sriov-fig4.png").stat().st_size > 0
    rows = _rows(doc)
    rates = (1, 2, 4, 8, 16, 32, 48, 64, 80)
    thr = [rows[(f"ITR-{r}K", "throughput")]["simulated"] for r in rates]
    # Issue 49: netperf sets no -S, so 2.6.32 autotunes the window past the link's
    # bandwidth-delay product; the polling vCPU keeps up with the link at every throttle (NAPI
    # never completes), where the fixed 65,536-byte stand-in gave one window per interrupt
    # (0.52 Gbit/s at 1K). The paper's rise below 48K is the structural miss its notes explain.
    # With the client's TSO bursts (issue 49 item 4) the vCPU at 1K can drain the ring, complete
    # NAPI and wait up to the throttle's 1 ms for the next interrupt: 8.27 Gbit/s over this 0.05 s
    # run, 9.22 over the reproduction's 0.3 s; from 2K up the interval is too short to matter.
    assert min(thr) > 7.5 and max(thr) <= 9.5, thr
    assert max(thr[1:]) - min(thr[1:]) < 0.02 * max(thr), thr
    assert thr[0] <= min(thr[1:]) * 1.001, thr
    # A fixed throttle still caps the interrupt rate.
    for c, rate in (("ITR-1K", 1000), ("ITR-8K", 8000)):
        assert rows[(c, "interrupts")]["simulated"] <= 1.02 * rate
    # One VM of 2 vCPUs: at most two cores, and the receive is one vCPU's (one NAPI context).
    assert all(rows[(f"ITR-{r}K", "cpu")]["simulated"] <= 100.0 + 1e-6 for r in rates)
    assert rows[("peak", "itr_at_max_throughput")]["role"] == "calibration"
    assert rows[("ITR-48K", "cpu")]["role"] == "calibration"
    assert rows[("ITR-8K", "throughput")]["published"] is None
    # §3.2 states no throughput for Fig. 4 (§3.3's 5.6 Gbit/s is Fig. 5's); its directions are
    # calibration rows of unit holds.
    assert rows[("ITR-48K", "throughput")]["published"] is None
    for key in (("ITR-1K..48K", "throughput_rises"), ("ITR-1K..48K", "cpu_rises"),
                ("ITR-64K vs 48K", "throughput_below"), ("ITR-80K vs 48K", "throughput_below")):
        assert rows[key]["role"] == "calibration" and rows[key]["simulated"] in (0.0, 1.0), key
    assert rows[("ITR-1K..48K", "throughput_rises")]["simulated"] == sriov._rises(thr[:7])


def test_sriov_fig8a_air_takes_fewer_interrupts_and_no_less_throughput_at_16_vms():
    rows = _measured(sriov._fig8a(0.05, lambda _label: None, counts=(16,)))
    fir, air = rows[("FIR-16", "throughput")], rows[("AIR-16", "throughput")]
    # AIR's ~1,100 interrupts/s per VM do not bound an autotuned stream: 16 VMs near the link.
    assert air >= 0.9 * fir, (air, fir)
    assert rows[("AIR-16", "interrupts_per_vm")] < rows[("FIR-16", "interrupts_per_vm")]
    assert rows[("AIR-16", "host_cpu")] < rows[("FIR-16", "host_cpu")]
    assert rows[("AIR/FIR-16", "throughput_ratio")] == pytest.approx(air / fir)
    # 8 pCPUs: never more than 800 % of one core.
    assert all(rows[(f"{c}-16", "host_cpu")] <= 800.0 + 1e-6 for c in ("FIR", "CGR", "AIR"))


def test_every_published_sriov_value_meets_a_row_of_its_experiment():
    for e in ("sriov-fig4", "sriov-fig5", "sriov-fig8a", "sriov-fig11", "sriov-fig12"):
        values = published.load(e)
        assert values, e
        doc = reproduce.measure(e, duration=0.05)
        rows = _rows(doc)
        for v in values:
            assert (v.config, v.metric) in rows, f"{e}: {v.config}/{v.metric} has no row"
            assert rows[(v.config, v.metric)]["published"] == v.value
            assert rows[(v.config, v.metric)]["simulated"] is not None
    # §5.4 gives Fig. 11 in words only: its directions are rows of unit holds.
    assert all(v.kind == "holds" for v in published.load("sriov-fig11"))
    # Fig. 8a's gains are ranges over the VM counts, its CPU a bound.
    kinds = {(v.config, v.metric): v.kind for v in published.load("sriov-fig8a")}
    assert kinds[("AIR/FIR-16", "throughput_ratio")] == "range"
    assert kinds[("FIR-16", "host_cpu")] == "at_most"


def test_sriov_fig11_completion_time_grows_with_the_requests():
    rows = _measured(sriov._fig11(0.05, lambda _label: None))
    for c in ("FIR", "CGR", "AIR", "AIR+MTVD"):
        times = [rows[(f"{c}-{n}K", "completion_time")] for n in range(1, 11)]
        assert all(t is not None and t > 0 for t in times)
        assert times == sorted(times) and times[-1] == pytest.approx(10 * times[0])
        assert rows[(c, "requests_per_vm")] == pytest.approx(1000 / times[0])
    # By construction (n over a steady rate) FIR's time rises with the requests.
    assert rows[("FIR-1K..10K", "time_rises")] == 1.0
    fastest = max(("FIR", "CGR", "AIR"), key=lambda c: rows[(c, "requests_per_vm")])
    assert rows[("AIR+MTVD vs FIR,CGR,AIR", "pace_lowest")] == float(
        rows[("AIR+MTVD", "requests_per_vm")] > rows[(fastest, "requests_per_vm")])


def test_head_to_head_fixed_throttle_bounds_request_response_and_adaptive_ones_do_not():
    rows = _measured(sriov._h2h(0.05, lambda _label: None, counts=(1,),
                                configs=("VF-FIR", "VF-ixgbevf-dynamic", "virtio-event-idx")))
    # One transaction in flight: a fixed 8,000/s throttle allows at most one per interval.
    assert rows[("VF-FIR-1", "rr_transactions")] <= 8000 * 1.02
    assert rows[("VF-ixgbevf-dynamic-1", "rr_transactions")] > 2 * rows[("VF-FIR-1", "rr_transactions")]
    assert rows[("VF-ixgbevf-dynamic-1", "rr_p99")] < rows[("VF-FIR-1", "rr_p99")]
    # virtio's vhost thread runs on the host beside the vCPUs; a VF has none.
    v = "virtio-event-idx-1"
    assert rows[(v, "stream_host_cpu")] > rows[(v, "stream_guest_cpu")] + 5
    for c in ("VF-FIR-1", "VF-ixgbevf-dynamic-1", v):
        assert rows[(c, "stream_throughput")] > 0


def test_layout_copies_the_vm_and_refuses_no_vms():
    sc = sriov.layout("sriov-fig4.toml", 3, {"vm.0.net.itr_us": 50.0})
    assert [v["name"] for v in sc["vm"]] == ["vm0", "vm1", "vm2"]
    assert all(v["net"]["itr_us"] == 50.0 for v in sc["vm"])
    assert sc["profile"] == "sriov"
    with pytest.raises(ValueError, match="at least 1"):
        sriov.layout("sriov-fig4.toml", 0)


def test_sriov_fig12_mtvd_spends_more_cpu_for_the_same_link():
    rows = _measured(sriov._fig12(0.05, lambda _label: None))
    # The other vCPU's threads and their wake-ups cost CPU the single-threaded driver does not.
    assert rows[("MTVD-tcp", "host_cpu")] > rows[("FIR-tcp", "host_cpu")]
    assert rows[("MTVD-vs-FIR-tcp", "cpu_added")] == pytest.approx(rows[("MTVD-tcp", "host_cpu")] - rows[("FIR-tcp", "host_cpu")])
    assert rows[("FIR-tcp", "ipi_exits_per_vm")] == 0 < rows[("MTVD-tcp", "ipi_exits_per_vm")]
    # Four VMs at FIR already fill the 10 GbE link in the model: no throughput to gain.
    assert rows[("FIR-tcp", "throughput")] <= 9.5


def test_sriov_fig5_more_vfs_in_one_vm_fill_the_link_and_its_rows_are_calibration_rows(tmp_path):
    doc = reproduce.run("sriov-fig5", tmp_path, duration=0.05, progress=False)
    rows = _rows(doc)
    thr = [rows[(f"VF-{n}", "throughput")]["simulated"] for n in (1, 2, 3, 4)]
    # §3.3: one VM 'can achieve line rate by assigning multiple (three or four in Fig. 5) VFs'.
    # At 48K (the experiment's declared rate) one autotuned VF already reaches the link (the
    # per-frame gap of sriov-fig4's notes: the paper's one VF gets ~5.6 Gbit/s); more VFs keep it.
    assert all(t >= 0.95 * thr[0] for t in thr), thr
    assert thr[3] > 8.0, thr
    assert all(t <= 9.5 for t in thr), "never above the 10 GbE link's TCP payload rate"
    # One VF's driver work is one vCPU's; four VFs' is both vCPUs'.
    cpu = [rows[(f"VF-{n}", "cpu")]["simulated"] for n in (1, 4)]
    assert cpu[0] <= 100.0 + 1e-6 and cpu[1] > cpu[0], cpu
    # All of Fig. 5 is the stock driver: every published row calibrates (issue 47).
    for key in (("VF-1", "throughput"), ("VF-1", "cpu"), ("VF-4", "throughput"), ("VF-4..8", "throughput_falls"),
                ("VF-4..8", "cpu_rises")):
        assert rows[key]["role"] == "calibration", key
    # One VF's interrupts stay within its fixed 48,000/s throttle.
    assert rows[("VF-1", "interrupts_per_vf")]["simulated"] <= 48000 * 1.02


def test_stated_directions_need_a_step_of_more_than_a_percent():
    assert sriov._rises([1.0, 2.0, 3.0]) == 1.0
    # A flat run (within a run's noise) is neither a rise nor a fall.
    assert sriov._rises([1.0, 1.005, 2.0]) == 0.0 and sriov._falls([2.0, 1.995]) == 0.0
    assert sriov._falls([3.0, 2.0, 1.0]) == 1.0
    assert sriov._rises([1.0, None]) is None and sriov._rises([1.0]) is None
    assert sriov._above(2.0, [1.0, 1.5]) == 1.0 and sriov._above(1.2, [1.0, 1.5]) == 0.0
    assert sriov._above(None, [1.0]) is None
    # AIR 'stays stable' past its own peak: at least 90 % of it at every later count.
    assert sriov._stays_stable([1.0, 5.0, 4.6, 4.9]) == 1.0
    assert sriov._stays_stable([1.0, 5.0, 4.0]) == 0.0
    assert sriov._stays_stable([1.0, 2.0, 3.0]) == 1.0


def test_baselines_calibrate_and_the_mechanisms_predict():
    fig4, fig5, fig8a, fig11, fig12 = (reproduce.EXPERIMENTS[e] for e in
                                       ("sriov-fig4", "sriov-fig5", "sriov-fig8a", "sriov-fig11", "sriov-fig12"))
    assert all(fig4.is_baseline(c) for c in ("ITR-8K", "peak", "ITR-1K..48K", "ITR-64K vs 48K"))
    assert all(fig5.is_baseline(c) for c in ("VF-1", "VF-4", "VF-4..8"))
    assert all(fig8a.is_baseline(c) for c in ("FIR-1", "FIR-16", "FIR-1..8", "FIR-8..16"))
    assert not any(fig8a.is_baseline(c) for c in ("CGR-16", "AIR-1", "CGR/FIR-16", "AIR/FIR", "CGR-1..8",
                                                  "AIR-peak..16", "AIR vs CGR,FIR-8"))
    assert fig11.is_baseline("FIR-1K..10K") and fig11.is_baseline("FIR-3K")
    assert not any(fig11.is_baseline(c) for c in ("CGR vs FIR", "AIR+MTVD", "AIR+MTVD vs FIR,CGR,AIR"))
    assert fig12.is_baseline("FIR-tcp") and not fig12.is_baseline("MTVD-vs-FIR-tcp")
