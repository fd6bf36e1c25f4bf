//! The multi-threaded VF driver (`[vm.net] mtvd`, `guest/mtvd.rs`; CGR/AIR/MTVD paper §4.4):
//! the VF's NAPI poll keeps only the driver's descriptor work and the hand-over, and the
//! other vCPU's kernel thread takes the packets up the stack — so the receive work moves off
//! the interrupted vCPU, every packet still reaches the application (the ledgers close with
//! packets between the dispatcher and a thread), and handing work to a halted vCPU costs a
//! reschedule IPI. MTVD on a 1-vCPU VM or a virtio device is refused naming the key.

mod common;

use common::{Sc, Vm};

/// A 2-vCPU VM on MTVD's own host (the sriov profile) receiving `workload` through a VF
/// (vCPUs pinned to pCPUs 0 and 1). Where a datagram's stack work is cheaper than the wake-up
/// it needs (the did profile's fitted 504 ns against ~2 reschedule IPIs per interrupt), the
/// dispatching vCPU does more with MTVD than without: the claim below is its host's.
fn vf_rx(mtvd: bool, workload: &str) -> Sc {
    let net = format!("kind = \"sriov_vf\"\nqueue_size = 512\nmtvd = {mtvd}");
    Sc::new("mtvd", "sriov").duration(0.05).warmup(0.01).pcpus(3).vm(Vm::new("vm0", 2).pins(&[0, 1]).net(&net).workload(workload))
}

/// pCPU 0's and pCPU 1's utilization (%), the run's IPI exits/s, and the ledger checked.
fn run(sc: &Sc) -> (f64, f64, f64) {
    let (out, ledger) = sc.run_with_ledger();
    ledger.check().unwrap_or_else(|e| panic!("{e}\n{sc}"));
    let s = &out.summary;
    let ipi = s.vms[0].exits_per_s.get("ipi").copied().flatten().unwrap_or(0.0);
    (s.host.pcpu_util_pct[0], s.host.pcpu_util_pct[1], ipi)
}

#[test]
fn mtvd_moves_the_receive_work_to_the_other_vcpu() {
    for w in ["kind = \"tcp_receive\"\nmessage_bytes = 16384", "kind = \"udp_receive\"\nmessage_bytes = 1472\nrate_pps = 200000"] {
        let (off0, off1, off_ipi) = run(&vf_rx(false, w));
        let (on0, on1, on_ipi) = run(&vf_rx(true, w));
        assert!(off1 < 5.0, "{w}: without MTVD the second vCPU idles ({off1} %)");
        assert!(on1 > 20.0, "{w}: with MTVD the second vCPU takes packets up the stack ({on1} %)");
        assert!(off0 > on0 - 1.0 || on0 >= 99.0, "{w}: the polling vCPU does no more than before ({off0} -> {on0} %)");
        assert_eq!(off_ipi, 0.0, "{w}");
        assert!(on_ipi > 0.0, "{w}: a thread asleep on a halted vCPU is woken with a reschedule IPI");
    }
}

#[test]
fn an_mtvd_udp_receiver_gets_every_datagram_the_link_brings() {
    let w = "kind = \"udp_receive\"\nmessage_bytes = 512\nrate_pps = 50000";
    let out = vf_rx(true, w).run();
    let pps = out.summary.vms[0].throughput.pps.expect("a receiver reports its rate");
    assert!((pps - 50_000.0).abs() < 2_500.0, "{pps} pps received of 50000 sent");
    assert_eq!(out.summary.vms[0].loss_pct, Some(0.0));
}

#[test]
fn mtvd_is_refused_where_it_cannot_apply() {
    let one = Sc::new("mtvd", "did").vm(Vm::new("vm0", 1).net("kind = \"sriov_vf\"\nmtvd = true").workload("kind = \"tcp_receive\"\nmessage_bytes = 1448"));
    let e = one.check_error();
    assert!(e.contains("vm[0].net.mtvd") && e.contains("one vCPU"), "{e}");
    let virtio = Sc::new("mtvd", "did").vm(Vm::new("vm0", 2).net("mtvd = true").workload("kind = \"tcp_receive\"\nmessage_bytes = 1448"));
    let e = virtio.check_error();
    assert!(e.contains("vm[0].net.mtvd") && e.contains("sriov_vf"), "{e}");
}
