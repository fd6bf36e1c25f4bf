"""Issue 26 at scale (release build): layouts too large for the Rust debug tests; issue 32's
host of 256 pCPUs.

The largest layout the model allows — 1,000 one-vCPU TCP VMs on 64 pCPUs — runs with no
stalled flow and shares the port; 256 TCP VMs with 4 MB windows on one 10 GbE port (the
FIFO port once left flows 60+ ms without a delivered frame) share it evenly.
"""

import eventpath
from conftest import ROOT


def _scale(n: int, duration: float, warmup: float = 0.01, pcpus: int = 64) -> dict:
    vms = [{"name": f"vm{i}", "vcpus": 1, "workload": {"kind": "tcp_stream", "message_bytes": 1448}} for i in range(n)]
    return {"name": f"scale{n}", "profile": "es2", "duration_s": duration, "warmup_s": warmup,
            "host": {"pcpus": pcpus}, "profile_overrides": {"cpu": {"cores_per_socket": pcpus}}, "vm": vms}


def _held_to_invariants(s: dict) -> list[float]:
    assert s["stalled_flows"] == []
    gbps = [vm["throughput"]["gbps"] for vm in s["vms"]]
    for vm in s["vms"]:
        assert 0.0 <= (vm["loss_pct"] or 0.0) <= 100.0
        assert 0.0 <= vm["cpu_util_pct"] <= 100.0
    return gbps


def test_a_thousand_tcp_vms_on_64_pcpus_run_with_no_stalled_flow():
    # The start-up (1,000 first connections, the NICs' adaptive ITR and the idle states settling)
    # takes tens of ms: measure after 0.1 s.
    s = eventpath.run(_scale(1000, 0.3, warmup=0.1)).summary
    gbps = _held_to_invariants(s)
    assert len(gbps) == 1000 and min(gbps) > 0.0
    # es2's 40 GbE port is the bottleneck: nearly all of it, each VM a share of it.
    assert 30.0 < sum(gbps) <= 40.0
    # No VM starves. (Not an even share: with the VMs' starts spread over the warm-up
    # ([housekeeping]) some pCPUs take many back-end threads while the others' vCPUs have not
    # yet started, and CFS balances PELT load, which those light threads hardly carry: their
    # vCPUs get ~0.4 of the mean, measured 2026-12-02; was 0.5+ with every VM starting at 0.)
    assert min(gbps) > 0.25 * sum(gbps) / len(gbps)


def test_512_tcp_vms_on_a_256_pcpu_host_run_with_no_stalled_flow():
    """Issue 32: hosts past 64 pCPUs (pCPU masks of 512 bits). 0.3 simulated s took 4.7 s and
    95 MB on the 2-core development machine; this shorter run checks it runs and shares."""
    s = eventpath.run(_scale(512, 0.1, warmup=0.05, pcpus=256)).summary
    gbps = _held_to_invariants(s)
    assert len(gbps) == 512 and min(gbps) > 0.0
    assert len(s["host"]["pcpu_util_pct"]) == 256
    assert 30.0 < sum(gbps) <= 40.0


def test_256_tcp_vms_share_one_port_evenly():
    path = ROOT / "crates/sim/tests/reliability/slow-flows-256-vms-64-pcpus.toml"
    s = eventpath.run(str(path)).summary
    gbps = _held_to_invariants(s)
    assert 9.0 < sum(gbps) <= 10.0
    assert min(gbps) > 0.9 * max(gbps)
