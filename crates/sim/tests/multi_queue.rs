//! Multi-queue virtio-net (`[vm.net] queues`): each queue pair is its own device — TX and RX
//! rings, a vhost-net worker, an MSI-X vector per queue with affinity vCPU `i mod vcpus`, a
//! client flow — so one VM's receive work and its back end's copies spread over vCPUs and
//! host threads that one queue pair keeps on one of each. `queues = 1` is the VM without the
//! key; the ledgers close per queue pair; 0, more than the vCPUs, another NIC kind, another
//! handling and several queues under a workload that would use one of them are refused
//! naming the key.

mod common;

use common::{Sc, Vm};
use eventpath_sim::run::RunOutput;

/// A 4-vCPU VM on the `modern` host receiving netperf TCP_STREAM (one stream per queue pair)
/// through virtio-net/vhost, with `net_extra` under `[vm.net]`.
fn stream(net_extra: &str) -> Sc {
    Sc::new("multi-queue", "modern")
        .duration(0.06)
        .warmup(0.02)
        .pcpus(8)
        .vm(Vm::new("vm0", 4).net(net_extra).workload("kind = \"tcp_receive\"\nmessage_bytes = 65536"))
}

fn strip(mut o: RunOutput) -> String {
    o.summary.wall_seconds = 0.0;
    format!("{:?}", o.summary)
}

#[test]
fn one_queue_pair_is_the_vm_without_the_key() {
    assert_eq!(strip(stream("").run()), strip(stream("queues = 1").run()));
}

#[test]
fn four_queue_pairs_spread_interrupts_and_vhost_work() {
    let (one, l1) = stream("").run_with_ledger();
    let (four, l4) = stream("queues = 4").run_with_ledger();
    l1.check().unwrap_or_else(|e| panic!("one queue pair: {e}"));
    l4.check().unwrap_or_else(|e| panic!("four queue pairs: {e}"));
    let g1 = one.summary.vms[0].throughput.gbps.expect("a receiver reports throughput");
    let g4 = four.summary.vms[0].throughput.gbps.expect("a receiver reports throughput");
    eprintln!("one queue pair {g1} Gbit/s, four {g4} Gbit/s; irqs by vCPU {:?} / {:?}", l1.irq_raised, l4.irq_raised);
    assert!(g4 > 1.3 * g1, "four queue pairs {g4} Gbit/s vs one {g1}");
    // One queue pair's vectors go to vCPU 0 only; four's to each vCPU.
    assert!(l1.irq_raised[1..].iter().all(|&n| n * 20 < l1.irq_raised[0]), "one queue pair: {:?}", l1.irq_raised);
    let max = *l4.irq_raised.iter().max().unwrap();
    assert!(l4.irq_raised.iter().all(|&n| n * 4 > max), "four queue pairs: {:?}", l4.irq_raised);
    // A vhost worker per queue pair, each of them busy.
    let io = &four.summary.host.io_threads;
    let vhost: Vec<_> = io.iter().filter(|t| t.name.starts_with("vhost-vm0")).collect();
    assert_eq!(vhost.len(), 4, "{:?}", io.iter().map(|t| &t.name).collect::<Vec<_>>());
    for t in &vhost {
        assert!(t.util_pct.unwrap_or(0.0) > 1.0, "{} busy {:?} %", t.name, t.util_pct);
    }
    // One ledger line per queue pair's flow, each closing, each receiving.
    assert_eq!(l4.sent.len(), 4);
    for i in 0..4 {
        assert!(l4.tcp_rx_sent[i] > 1000, "queue {i}'s client sends: {:?}", l4.tcp_rx_sent);
        assert!(l4.rx_polled[i] > 100, "queue {i}'s NAPI receives: {:?}", l4.rx_polled);
        assert_eq!(l4.rx_arrived[i], l4.rx_tap_dropped[i] + l4.rx_queued[i] + l4.rx_polled[i], "queue {i}");
        assert_eq!(l4.sent[i], l4.delivered[i] + l4.dropped[i] + l4.in_flight[i], "queue {i}");
    }
}

#[test]
fn a_udp_receiver_per_queue_pair_gets_what_each_client_sends() {
    let sc = Sc::new("multi-queue", "modern").duration(0.05).warmup(0.01).pcpus(4).vm(
        Vm::new("vm0", 2).net("queues = 2").workload("kind = \"udp_receive\"\nmessage_bytes = 512\nrate_pps = 20000"),
    );
    let (out, l) = sc.run_with_ledger();
    l.check().unwrap_or_else(|e| panic!("{e}"));
    let pps = out.summary.vms[0].throughput.pps.expect("a receiver reports its rate");
    assert!((pps - 40_000.0).abs() < 2_000.0, "{pps} pps received of 2 x 20000 sent");
    assert_eq!(out.summary.vms[0].loss_pct, Some(0.0));
    for i in 0..2 {
        assert!(l.udp_rx_received[i] > 500, "queue {i}: {:?}", l.udp_rx_received);
    }
}

#[test]
fn a_vm_after_a_multi_queue_vm_keeps_its_own_device_and_worker() {
    // Devices and vhost workers are numbered VM after VM: the VM after a 4-queue VM is device 4.
    let sc = stream("queues = 4").vm(Vm::new("vm1", 1).workload("kind = \"udp_stream\"\nmessage_bytes = 1024\nrate_pps = 10000"));
    let (out, l) = sc.run_with_ledger();
    l.check().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(l.sent.len(), 5);
    let pps = out.summary.vms[1].throughput.pps.expect("a sender reports its rate");
    assert!((pps - 10_000.0).abs() < 500.0, "{pps}");
    let io = &out.summary.host.io_threads;
    assert!(io.iter().any(|t| t.name == "vhost-vm1" && t.util_pct.unwrap_or(0.0) > 0.1), "vm1's worker serves it: {io:?}");
}

#[test]
fn bad_queue_counts_are_refused_naming_the_key() {
    let e = stream("queues = 0").check_error();
    assert!(e.contains("vm[0].net.queues") && e.contains("0 is not allowed") && !e.contains('\n'), "{e}");
    let e = stream("queues = 5").check_error();
    assert!(e.contains("vm[0].net.queues") && e.contains("5 is not allowed") && e.contains("1..=4"), "{e}");
    let sender = Sc::new("multi-queue", "modern").vm(Vm::new("vm0", 2).net("queues = 2").workload("kind = \"tcp_stream\"\nmessage_bytes = 1448"));
    let e = sender.check_error();
    assert!(e.contains("vm[0].net.queues") && e.contains("tcp_stream"), "{e}");
    let vf = Sc::new("multi-queue", "sriov").vm(Vm::new("vm0", 2).net("kind = \"sriov_vf\"\nqueues = 2").workload("kind = \"tcp_receive\"\nmessage_bytes = 1448"));
    let e = vf.check_error();
    assert!(e.contains("vm[0].net.queues") && e.contains("vfs"), "{e}");
    let elvis = stream("queues = 2").host("[host.io]\nhandling = \"elvis\"\ncores = [7]");
    let e = elvis.check_error();
    assert!(e.contains("vm[0].net.queues") && e.contains("elvis"), "{e}");
}
