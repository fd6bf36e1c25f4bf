"""ES2 reproductions (issue 3): run short, check the contract and the shapes, not the numbers."""

import json

import pytest

reproduce = pytest.importorskip("eventpath.reproduce")


#: A row's keys: always these, and the framework's optional ones (issue 47: how a published value
#: is given, a range's or bound's ends, an ensemble's spread, convergence).
ROW_KEYS = {"config", "metric", "unit", "simulated", "published", "verdict", "role"}
OPTIONAL_KEYS = {"published_kind", "published_bounds", "spread", "converged", "definition",
                 "miss_class", "miss_evidence"}  # a kept sensitivity class (reproduce/classes/)


@pytest.mark.parametrize("exp_id", ["es2-table1", "es2-fig4-base", "es2-fig4", "es2-table1-sensitivity", "es2-fig7a",
                                    "es2-fig7b", "es2-fig8a-h"])
def test_reproduction_writes_json_and_figure(tmp_path, exp_id):
    # A tested memcached VM shares its pCPUs with three burning VMs: in 20 ms one seed's VM may
    # get no pCPU at all (its gain is then undefined), so that experiment runs a full host
    # scheduling period (24 ms) and more.
    doc = reproduce.run(exp_id, tmp_path, duration=0.05 if exp_id == "es2-fig8a-h" else 0.02)
    assert (tmp_path / f"{exp_id}.png").stat().st_size > 0
    on_disk = json.loads((tmp_path / f"{exp_id}.json").read_text())
    assert on_disk["id"] == exp_id and on_disk["rows"] == doc["rows"]
    for r in doc["rows"]:
        assert ROW_KEYS <= set(r) <= ROW_KEYS | OPTIONAL_KEYS, r
        assert r["simulated"] is not None, r


def _rows(doc):
    return {(r["config"], r["metric"]): r for r in doc["rows"]}


def test_table1_shapes(tmp_path):
    rows = _rows(reproduce.run("es2-table1", tmp_path, duration=0.02))
    # Posted interrupts: no delivery and no EOI exits, and more I/O-request exits.
    assert rows[("tcp512-PI", "exits_interrupt_delivery")]["simulated"] == 0
    assert rows[("tcp512-PI", "exits_eoi")]["simulated"] == 0
    assert rows[("PI vs noPI", "io_instruction_rise")]["simulated"] > 0
    # Without PI, I/O-request exits dominate and every interrupt's EOI exits.
    no = {m: rows[("tcp512-noPI", f"exits_{m}")]["simulated"] for m in ("interrupt_delivery", "eoi", "io_instruction")}
    assert no["io_instruction"] > no["eoi"] >= no["interrupt_delivery"] > 0


def test_sensitivity_runs_change_what_they_say(tmp_path):
    rows = _rows(reproduce.run("es2-table1-sensitivity", tmp_path, duration=0.05))
    share = lambda cfg: rows[(cfg, "irq_found_vcpu_in_exit")]["simulated"]  # noqa: E731
    # idle=poll: vhost wakes sooner, which moves the interrupts within the send cycle.
    assert share("idle=poll") != share("default")
    # The ACK path latency moves the interrupt within the send cycle, but the NICs' receive
    # throttles (issue 12) batch ACKs on 50-125 us gaps, far longer than that path, so the share
    # no longer swings with it as it did without them (94 % to 0 % between 1.5 and 4 us).
    nic = [share(c) for c in {c for c, _ in rows} if c.startswith("nic_rx=")]
    assert len(nic) >= 5 and max(nic) - min(nic) < 25, nic


def test_verdict_applies_the_issue_bar():
    from eventpath.reproduce import Row

    assert Row("c", "share", "%", 35.0, 27.7).verdict() == "ok"  # within 10 points
    assert Row("c", "share", "%", 17.5, 5.0).verdict() == "miss"
    assert Row("c", "rate", "exits/s", 90_000, 73_310).verdict() == "ok"  # +23 %
    assert Row("c", "rate", "exits/s", 26_000, 5_575).verdict() == "miss"
    assert Row("c", "rate", "exits/s", 0.0, 0.0).verdict() == "ok"
    assert Row("c", "rate", "exits/s", 10.0, 0.0).verdict() == "miss"
    assert Row("c", "rate", "exits/s", 10.0, None).verdict() is None


def test_multi_vm_memcached_directions(tmp_path):
    """ES2 §6.3.2's order: the optimistic switch removes the replies' kicks and beats the
    perceptive one, which helps a query-reply server little; more tested VMs, more total ops."""
    rows = _rows(reproduce.run("es2-fig8a-h", tmp_path, duration=0.1))
    for n in (1, 4):
        gain = lambda c: rows[(f"{c} vs PI {n}VM", "throughput_gain")]["simulated"]  # noqa: E731
        # (By more than a point: at 1 VM and 0.1 s, +4.6 against +2.7 % since issue 45's
        # client queues and metric windows; it was more than 2 points.)
        assert gain("PI+H(O)") > gain("PI+H(P)") + 1
        # (H(P)'s own gain is not bounded here: with issue 48's start order each seed is one
        # draw of the pCPUs' phases, and one 0.1 s seed moves a 1-VM gain by +-15 points;
        # the reproduction's 8-seed ensemble is what carries it.)
        io = lambda c: rows[(f"{c} {n}VM", "io_exits_per_tested_vm")]["simulated"]  # noqa: E731
        assert io("PI+H(O)") < 0.05 * io("PI")
        # Redirection's published gain ("more than 1.4x") is not asserted: memcached's threads
        # stay on their home vCPUs (the guest's load balancer is not modelled), so a request
        # waits for its thread's vCPU whichever vCPU took the interrupt (the experiment's note).
    assert rows[("PI 4VM", "ops_per_s")]["simulated"] > 3 * rows[("PI 1VM", "ops_per_s")]["simulated"]


def test_multi_vm_layout_is_es2_section_6_3():
    from eventpath.reproduce.es2_multi import layout

    sc = layout("PI+H(P)", 2, {"kind": "tcp_stream", "message_bytes": 512, "streams": 4})
    assert [vm["vcpu_pins"] for vm in sc["vm"]] == [[0, 1, 2, 3]] * 4
    assert all(vm["guest_cpu_burn"] for vm in sc["vm"])
    assert [("workload" in vm) for vm in sc["vm"]] == [True, True, False, False]
    assert sc["host"]["io"]["cores"] == [4] and sc["host"]["io"]["switch"] == "perceptive"
    assert layout("PI", 1, {"kind": "memcached"})["vm"][0]["net"]["vhost_pin"] == 4


def test_roles_kinds_and_diagnostics_follow_the_audit(tmp_path):
    """Issue 47's ES2 audit: the baselines' published rows and stated orders are calibration,
    ranges and bounds are held as given, the what-if experiment is not ES2's."""
    doc = reproduce.run("es2-table1", tmp_path, duration=0.02)
    rows = _rows(doc)
    assert {r["role"] for r in doc["rows"] if r["published"] is not None} == {"calibration"}
    assert rows[("PI vs noPI", "throughput_higher")]["published_kind"] == "holds"
    assert rows[("tcp512-noPI", "share_eoi")]["published"] is None  # the counts' arithmetic, not held again
    assert reproduce.run("es2-table1-sensitivity", tmp_path, duration=0.02)["paper"] == "other"
    fig8 = _rows(reproduce.run("es2-fig8a-h", tmp_path, duration=0.02, seeds=1))
    assert fig8[("PI+R vs PI 2VM", "throughput_gain")]["published_bounds"] == [40.0, None]
    assert fig8[("PI+H(O)+R vs PI 3VM", "throughput_gain")]["published_bounds"] == [75.0, 90.0]
    assert fig8[("PI 1VM", "backend_cpu")]["role"] == "calibration"
    assert fig8[("PI+H(O) 1VM", "backend_cpu")]["role"] == "prediction"
    fig7a = _rows(reproduce.run("es2-fig7a", tmp_path, duration=0.02, seeds=1))
    assert fig7a[("PI 4VM", "io_exits_fall")]["role"] == "calibration"
    assert fig7a[("PI+R vs PI 1VM", "slight_gain")]["role"] == "prediction"


def test_fig7b_reads_netperfs_default_size_and_has_the_combining_level_2_reading():
    from eventpath.reproduce import es2_multi

    assert es2_multi._NETPERF_RX == {"kind": "tcp_receive", "message_bytes": 87380}
    sc = es2_multi.layout("PI+H(P) cl2", 1, es2_multi._NETPERF_RX, io_cores=2)
    assert sc["host"]["io"]["combining_level"] == 2 and sc["host"]["io"]["cores"] == [4, 5]
    pi = es2_multi.layout("PI", 4, es2_multi._NETPERF_RX, io_cores=2)
    assert [vm["net"]["vhost_pin"] for vm in pi["vm"]] == [4, 5, 4, 5]


def test_seeds_today_compares_es2s_full_configurations():
    from eventpath.reproduce import seeds_today

    by = {h.name: h for h in seeds_today.HEADLINES}
    assert by["ES2 TCP send, 4 VMs"].mechanism == "PI+H(P)+R"  # §6.3.1: the perceptive switch
    assert by["ES2 memcached, 4 VMs"].mechanism == "PI+H(O)+R"
    assert "ES2 redirection, ping tail" not in by  # not ES2 §6.4's set-up
