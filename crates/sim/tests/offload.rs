//! Segmentation offload (`[vm.net.offload]`, `guest/tso.rs`, `hw/gro.rs`). Send: with TSO negotiated, a TCP
//! sender whose back end drains its ring slowly sends fewer, larger skbs — fewer kicks,
//! descriptors and back-end requests per byte, and fewer model events per byte — and one whose
//! back end keeps up sends one MSS per skb either way, as Linux does (`tcp_mss_split_point`
//! sends whole segments as soon as they are written). Receive: the host's GRO with
//! `GUEST_TSO4` and the guest's GRO hand a TCP receiver 64 KB skbs instead of MSS frames, so a
//! receiver limited by its per-packet costs moves more bytes per vCPU second, per interrupt
//! and per model event; the host's GRO without `GUEST_TSO4` changes nothing (the host cuts the
//! skb back). Forbidden feature combinations are refused naming the key.

mod common;

use common::{Sc, Vm};

/// ES2 §6.3's host with one tested VM (4 vCPUs, 4 netperf threads of 512-byte writes) whose
/// device is served by an ES2 joint thread polling it (H(P)): the ring fills between polls.
fn joint_thread(offload: &str) -> Sc {
    let mut sc = Sc::new("tso", "es2").duration(0.1).warmup(0.02).pcpus(8).io("handling = \"es2\"\nswitch = \"perceptive\"\ncores = [4]");
    for i in 0..4 {
        let mut vm = Vm::new(&format!("vm{i}"), 4).pins(&[0, 1, 2, 3]).burn(true).delivery("posted").net(&format!("queue_size = 256\n{offload}"));
        if i == 0 {
            vm = vm.workload("kind = \"tcp_stream\"\nmessage_bytes = 512\nstreams = 4");
        }
        sc = sc.vm(vm);
    }
    sc
}

/// Bytes delivered per kick, per back-end request (TX ring descriptor taken) and per model
/// event, of VM 0.
fn per_byte(sc: &Sc) -> (f64, f64, f64, f64) {
    let out = sc.run();
    let s = &out.summary;
    let vm = &s.vms[0];
    let gbps = vm.throughput.gbps.expect("a TCP stream reports its throughput");
    let bytes_per_s = gbps * 1e9 / 8.0;
    let pps = vm.throughput.pps.expect("frames");
    let kicks = vm.kicks_per_s.expect("a virtio device reports kicks").max(1.0);
    (gbps, bytes_per_s / kicks, bytes_per_s / pps, bytes_per_s * s.sim_seconds / s.events.expect("events counted") as f64)
}

#[test]
fn tso_sends_fewer_larger_skbs_when_the_back_end_lags() {
    let (on_gbps, on_per_kick, on_per_frame, on_per_event) = per_byte(&joint_thread(""));
    let (off_gbps, off_per_kick, off_per_frame, off_per_event) = per_byte(&joint_thread("offload = { host_tso4 = false }"));
    // Frames on the wire are MSS-sized either way: the host's NIC cuts the TSO skbs.
    assert!((on_per_frame - off_per_frame).abs() < 10.0, "{on_per_frame} vs {off_per_frame} bytes per frame");
    // The joint thread polls the ring, so kicks are a residue either way (a kick per MB or
    // so, from the polls that found it empty): the skbs show in the model's events per byte.
    assert!(on_per_kick > 100_000.0 && off_per_kick > 100_000.0, "bytes per kick: TSO {on_per_kick}, without {off_per_kick}");
    assert!(on_per_event > 2.0 * off_per_event, "bytes per model event: TSO {on_per_event}, without {off_per_event}");
    assert!(on_gbps > off_gbps, "per-skb costs paid once per 64 KB: {on_gbps} vs {off_gbps} Gbit/s");
}

#[test]
fn a_sender_whose_back_end_keeps_up_sends_one_mss_per_skb_either_way() {
    let sc = |off: &str| {
        Sc::new("tso-fast", "es2")
            .duration(0.05)
            .warmup(0.01)
            .vm(Vm::new("vm0", 1).pins(&[0]).vhost_pin(1).net(off).workload("kind = \"tcp_stream\"\nmessage_bytes = 512"))
    };
    let on = sc("").run().summary;
    let off = sc("offload = { host_tso4 = false }").run().summary;
    assert_eq!(on.vms[0].kicks_per_s, off.vms[0].kicks_per_s);
    assert_eq!(on.vms[0].throughput.pps, off.vms[0].throughput.pps);
}

#[test]
fn checksum_offload_off_costs_the_guest_per_byte() {
    let sc = |off: &str| {
        Sc::new("csum", "es2")
            .duration(0.05)
            .warmup(0.01)
            .vm(Vm::new("vm0", 1).pins(&[0]).vhost_pin(1).net(off).workload("kind = \"tcp_stream\"\nmessage_bytes = 512"))
    };
    let with = sc("").run().summary.vms[0].throughput.gbps.unwrap();
    let without = sc("offload = { csum = false, host_tso4 = false }").run().summary.vms[0].throughput.gbps.unwrap();
    assert!(without < with, "a CPU-bound sender checksumming in software: {without} vs {with} Gbit/s");
}

#[test]
fn combinations_the_virtio_specification_forbids_are_refused_naming_the_key() {
    let sc = |off: &str| Sc::new("bad", "es2").vm(Vm::new("vm0", 1).net(off).workload("kind = \"tcp_stream\"\nmessage_bytes = 512"));
    let e = sc("offload = { csum = false }").error();
    assert!(e.contains("vm[0].net.offload.host_tso4") && e.contains("csum"), "{e}");
    let e = sc("offload = { guest_csum = false }").error();
    assert!(e.contains("vm[0].net.offload.guest_tso4") && e.contains("guest_csum"), "{e}");
    let e = sc("offload = { tso = true }").error();
    assert!(e.contains("tso"), "{e}");
    let e = Sc::new("vf", "did").vm(Vm::new("vm0", 1).net("kind = \"sriov_vf\"\noffload = { csum = true }").workload("kind = \"tcp_stream\"\nmessage_bytes = 512")).error();
    assert!(e.contains("net.offload"), "{e}");
}

/// netperf TCP_STREAM into a 1-vCPU es2 guest, its vhost thread on its own pCPU.
fn receiver(offload: &str) -> Sc {
    Sc::new("rx-offload", "es2")
        .duration(0.05)
        .warmup(0.01)
        .vm(Vm::new("vm0", 1).pins(&[0]).vhost_pin(1).net(offload).workload("kind = \"tcp_receive\"\nmessage_bytes = 16384"))
}

/// Throughput (Gbit/s), bytes per vCPU-busy µs, bytes per guest interrupt and per model event.
fn rx_per_byte(sc: &Sc) -> (f64, f64, f64, f64) {
    let s = sc.run().summary;
    let vm = &s.vms[0];
    let gbps = vm.throughput.gbps.expect("a TCP receiver reports its throughput");
    let bytes = gbps * 1e9 / 8.0 * s.sim_seconds;
    let busy_us = vm.cpu_util_pct.expect("vCPU utilisation") / 100.0 * s.sim_seconds * 1e6;
    let irqs = (vm.interrupts_per_s.expect("interrupts") * s.sim_seconds).max(1.0);
    (gbps, bytes / busy_us, bytes / irqs, bytes / s.events.expect("events counted") as f64)
}

#[test]
fn receive_offload_hands_the_guest_large_skbs_and_each_byte_costs_less() {
    let (on_gbps, on_per_us, _, on_per_event) = rx_per_byte(&receiver(""));
    let (off_gbps, off_per_us, _, off_per_event) = rx_per_byte(&receiver("offload = { guest_tso4 = false, gro = false }"));
    assert!(on_gbps > 2.0 * off_gbps, "a receiver bound by per-packet costs: {on_gbps} vs {off_gbps} Gbit/s");
    assert!(on_per_us > 2.0 * off_per_us, "bytes per vCPU µs: {on_per_us} vs {off_per_us}");
    assert!(on_per_event > 2.0 * off_per_event, "bytes per model event: {on_per_event} vs {off_per_event}");
}

#[test]
fn the_guests_gro_alone_merges_what_one_poll_finds() {
    let (gro_gbps, gro_per_us, _, _) = rx_per_byte(&receiver("offload = { guest_tso4 = false }"));
    let (off_gbps, off_per_us, _, _) = rx_per_byte(&receiver("offload = { guest_tso4 = false, gro = false }"));
    assert!(gro_gbps > off_gbps && gro_per_us > off_per_us, "{gro_gbps} vs {off_gbps} Gbit/s, {gro_per_us} vs {off_per_us} B/µs");
}

#[test]
fn the_hosts_gro_without_guest_tso4_or_without_gro_changes_nothing() {
    let base = receiver("offload = { guest_tso4 = false, gro = false }").run().summary;
    for off in ["offload = { guest_tso4 = false, gro = false, host_gro = true }", "offload = { host_gro = false, gro = false }"] {
        let s = receiver(off).run().summary;
        assert_eq!((s.events, s.vms[0].throughput.pps), (base.events, base.vms[0].throughput.pps), "{off}");
    }
}

/// Regression (found by `eventpath compare`'s tcp_receive matrix): with GRO every skb carries
/// two or more segments, so TCP's ACK follows every delivery from softirq; the reader's wake-up
/// on the other vCPU must still be raised (it used to be skipped whenever the softirq started
/// its ACK, and a reader asleep beside a full socket stalled the stream for good).
#[test]
fn a_reader_on_another_vcpu_is_woken_though_every_gro_skb_is_acked_from_softirq() {
    let sc = Sc::new("rx-wake", "es2")
        .duration(0.3)
        .warmup(0.01)
        .io("handling = \"pmd\"\ncores = [7]\nidle = \"monitor\"")
        .vm(Vm::new("vm0", 2).pins(&[0, 1]).delivery("apicv").routing("es2").halt_poll("max_halt_poll_ns = 200000").workload("kind = \"tcp_receive\"\nmessage_bytes = 16384"));
    let (out, ledger) = sc.run_with_ledger();
    ledger.check().expect("ledgers close");
    assert!(out.summary.stalled_flows.is_empty(), "{:?}", out.summary.stalled_flows);
    assert!(out.summary.vms[0].throughput.gbps.unwrap() > 5.0, "{:?}", out.summary.vms[0].throughput);
}
