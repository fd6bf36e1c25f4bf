//! Several SR-IOV VFs in one VM (`[vm.net] vfs`; CGR/AIR/MTVD paper §3.3, Fig. 5): each VF is
//! its own device — rings, MSI-X vector, EITR, client flow — and VF `i`'s vector has vCPU
//! `i mod vcpus` as its affinity, so the VF driver's work spreads over the vCPUs and one VM
//! reaches what one VF's single NAPI context cannot. `vfs = 1` is the VM without the key; the
//! ledgers close per device; 0, more than the port's VFs, `vfs` on virtio and several VFs
//! under a workload that would use one of them are refused naming the key.

mod common;

use common::{Sc, Vm};
use eventpath_sim::run::RunOutput;

/// CGR/AIR Fig. 4/5's VM (2 vCPUs, netperf TCP_STREAM towards it, 87380-byte window and reads,
/// the driver's 8,000 interrupts/s) on the sriov profile, with `net_extra` under `[vm.net]`.
fn fig5(net_extra: &str) -> Sc {
    let net = format!("kind = \"sriov_vf\"\nqueue_size = 512\nitr_us = 125.0\n{net_extra}");
    Sc::new("multi-vf", "sriov")
        .duration(0.08)
        .warmup(0.02)
        .pcpus(8)
        .vm(Vm::new("vm0", 2).net(&net).workload("kind = \"tcp_receive\"\nmessage_bytes = 87380\nwindow_bytes = 87380"))
}

fn strip(mut o: RunOutput) -> String {
    o.summary.wall_seconds = 0.0;
    format!("{:?}", o.summary)
}

#[test]
fn one_vf_is_the_vm_without_the_key() {
    assert_eq!(strip(fig5("").run()), strip(fig5("vfs = 1").run()));
}

#[test]
fn three_vfs_outrun_one_and_interrupt_both_vcpus() {
    let (one, l1) = fig5("").run_with_ledger();
    let (three, l3) = fig5("vfs = 3").run_with_ledger();
    l1.check().unwrap_or_else(|e| panic!("one VF: {e}"));
    l3.check().unwrap_or_else(|e| panic!("three VFs: {e}"));
    let g1 = one.summary.vms[0].throughput.gbps.expect("a receiver reports throughput");
    let g3 = three.summary.vms[0].throughput.gbps.expect("a receiver reports throughput");
    eprintln!("one VF {g1} Gbit/s, three VFs {g3} Gbit/s; irqs by vCPU {:?} / {:?}", l1.irq_raised, l3.irq_raised);
    assert!(g3 > 1.3 * g1, "three VFs {g3} Gbit/s vs one {g1}");
    assert!(g3 < 9.5, "the 10 GbE link bounds the VM: {g3} Gbit/s");
    // One VF's vector goes to vCPU 0 only; three VFs' to vCPUs 0, 1, 0.
    assert!(l1.irq_raised[1] * 20 < l1.irq_raised[0], "one VF: {:?}", l1.irq_raised);
    assert!(l3.irq_raised[1] * 4 > l3.irq_raised[0], "three VFs: {:?}", l3.irq_raised);
    // One ledger line per device's flow, each closing, each receiving.
    assert_eq!(l3.sent.len(), 3);
    for i in 0..3 {
        assert!(l3.tcp_rx_sent[i] > 1000, "VF {i}'s client sends: {:?}", l3.tcp_rx_sent);
        assert!(l3.rx_polled[i] > 1000, "VF {i}'s NAPI receives: {:?}", l3.rx_polled);
        assert_eq!(l3.rx_arrived[i], l3.rx_tap_dropped[i] + l3.rx_queued[i] + l3.rx_polled[i], "VF {i}");
        assert_eq!(l3.sent[i], l3.delivered[i] + l3.dropped[i] + l3.in_flight[i], "VF {i}");
    }
}

#[test]
fn a_udp_receiver_per_vf_gets_what_each_client_sends() {
    let sc = Sc::new("multi-vf", "sriov").duration(0.05).warmup(0.01).pcpus(4).vm(
        Vm::new("vm0", 2).net("kind = \"sriov_vf\"\nvfs = 4").workload("kind = \"udp_receive\"\nmessage_bytes = 512\nrate_pps = 20000"),
    );
    let (out, l) = sc.run_with_ledger();
    l.check().unwrap_or_else(|e| panic!("{e}"));
    let pps = out.summary.vms[0].throughput.pps.expect("a receiver reports its rate");
    assert!((pps - 80_000.0).abs() < 4_000.0, "{pps} pps received of 4 x 20000 sent");
    assert_eq!(out.summary.vms[0].loss_pct, Some(0.0));
    for i in 0..4 {
        assert!(l.udp_rx_received[i] > 500, "VF {i}: {:?}", l.udp_rx_received);
    }
}

#[test]
fn a_vm_after_a_multi_vf_vm_keeps_its_own_device() {
    // Devices are numbered VM after VM: the virtio VM after a 3-VF VM is device 3.
    let sc = fig5("vfs = 3").vm(Vm::new("vm1", 1).workload("kind = \"udp_stream\"\nmessage_bytes = 1024\nrate_pps = 10000"));
    let (out, l) = sc.run_with_ledger();
    l.check().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(l.sent.len(), 4);
    let pps = out.summary.vms[1].throughput.pps.expect("a sender reports its rate");
    assert!((pps - 10_000.0).abs() < 500.0, "{pps}");
}

#[test]
fn bad_vf_counts_are_refused_naming_the_key() {
    let e = fig5("vfs = 0").check_error();
    assert!(e.contains("vm[0].net.vfs") && e.contains("0 is not allowed") && !e.contains('\n'), "{e}");
    let e = fig5("vfs = 64").check_error();
    assert!(e.contains("vm[0].net.vfs") && e.contains("64 is not allowed") && e.contains("63"), "{e}");
    let virtio = Sc::new("multi-vf", "sriov").vm(Vm::new("vm0", 2).net("vfs = 2").workload("kind = \"tcp_receive\"\nmessage_bytes = 1448"));
    let e = virtio.check_error();
    assert!(e.contains("vm[0].net.vfs") && e.contains("sriov_vf"), "{e}");
    let sender = Sc::new("multi-vf", "sriov").vm(Vm::new("vm0", 2).net("kind = \"sriov_vf\"\nvfs = 2").workload("kind = \"tcp_stream\"\nmessage_bytes = 1448"));
    let e = sender.check_error();
    assert!(e.contains("vm[0].net.vfs") && e.contains("tcp_stream"), "{e}");
    let e = fig5("vfs = 2\nmtvd = true").check_error();
    assert!(e.contains("vm[0].net.vfs") && e.contains("MTVD"), "{e}");
    // More VFs in all than the port has: 2 VMs of 32.
    let many = fig5("vfs = 32").vm(Vm::new("vm1", 2).net("kind = \"sriov_vf\"\nvfs = 32").workload("kind = \"tcp_receive\"\nmessage_bytes = 1448"));
    let e = many.check_error();
    assert!(e.contains("vm.net.vfs") && e.contains("64 VFs") && e.contains("63"), "{e}");
}
