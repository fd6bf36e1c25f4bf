//! The physical NICs' receive interrupt throttles (`host.nic_rx_itr_ns`, `client.rx_itr_ns`:
//! frames inside the gap share one interrupt, and GRO on the client merges a batch's segments
//! into one ACK decision) and the kick's ioeventfd signal part-way into its exit
//! (`exit.io_signal_ns`). Each is switchable: 0 turns it off.

mod common;

use common::{Conservation, Sc, Vm};
use eventpath_sim::run::RunOutput;

/// One VM running `workload`, with the profile parameters `overrides` replaced and both
/// NICs' throttles fixed (their drivers' adaptive ITR off: `nic_itr_adaptive.rs` tests it).
fn run(workload: &str, delivery: &str, overrides: &[(&str, u32)]) -> (RunOutput, Conservation) {
    let sc = Sc::new("itr", "es2").duration(0.05).warmup(0.005).vm(Vm::new("vm0", 1).delivery(delivery).workload(workload));
    let sc = sc.host("nic_itr = \"fixed\"").client("nic_itr = \"fixed\"");
    let sc = overrides.iter().fold(sc, |sc, &(key, value)| sc.profile_override(key, value));
    let (o, l) = sc.run_with_ledger();
    l.check().unwrap();
    assert!(o.summary.stalled_flows.is_empty(), "{:?}", o.summary.stalled_flows);
    (o, l)
}

const TCP: &str = "kind = \"tcp_stream\"\nmessage_bytes = 512";

fn itrs(host_ns: u32, client_ns: u32) -> [(&'static str, u32); 2] {
    [("host.nic_rx_itr_ns", host_ns), ("client.rx_itr_ns", client_ns)]
}

/// ACKs that reached the host per segment delivered to the client (lifetime).
fn acks_per_segment(l: &Conservation) -> f64 {
    l.rx_arrived[0] as f64 / l.delivered[0] as f64
}

#[test]
fn client_gro_coalesces_acks_of_a_batch() {
    let (off_o, off) = run(TCP, "posted", &itrs(0, 0));
    let (on_o, on) = run(TCP, "posted", &itrs(0, 50_000));
    // Without batching the receiver ACKs every second segment (RFC 1122).
    let a_off = acks_per_segment(&off);
    assert!((0.45..=0.55).contains(&a_off), "off: {a_off}");
    // With a 50 µs ITR each NAPI poll GRO-merges several segments into one ACK.
    let a_on = acks_per_segment(&on);
    assert!(a_on < 0.7 * a_off, "on: {a_on} vs off {a_off}");
    // Fewer ACKs: fewer RX interrupts in the sending guest.
    let irq = |o: &RunOutput| o.summary.vms[0].interrupts_per_s.unwrap();
    assert!(irq(&on_o) < irq(&off_o), "{} vs {}", irq(&on_o), irq(&off_o));
    assert!(on_o.summary.vms[0].throughput.gbps.unwrap() > 0.3);
}

#[test]
fn host_itr_caps_the_guests_receive_interrupts() {
    let udp = "kind = \"udp_receive\"\nmessage_bytes = 64\nrate_pps = 100000";
    let (off, _) = run(udp, "posted", &itrs(0, 0));
    let (on, _) = run(udp, "posted", &itrs(100_000, 0));
    let irq = |o: &RunOutput| o.summary.vms[0].interrupts_per_s.unwrap();
    assert!(irq(&off) > 15_000.0, "off: {}", irq(&off));
    // One host NIC interrupt per 100 µs at most, so at most one vhost wake-up and one guest
    // interrupt per 100 µs (the guest's timer interrupts come on top).
    assert!(irq(&on) < 10_000.0 * 1.05 + 300.0, "on: {}", irq(&on));
    // Batched, not lost.
    let pps = |o: &RunOutput| o.summary.vms[0].throughput.pps.unwrap();
    assert!(pps(&on) > 0.95 * pps(&off), "{} vs {}", pps(&on), pps(&off));
}

#[test]
fn the_ioeventfd_signal_part_way_into_the_exit_delays_the_backend_by_its_offset() {
    // A sparse UDP stream: every datagram kicks a sleeping vhost thread; its latency to the
    // wire grows by the signal's offset into the exit.
    let udp = "kind = \"udp_stream\"\nmessage_bytes = 512\nrate_pps = 5000";
    let mean = |sig: u32| {
        let (o, _) = run(udp, "posted", &[("exit.io_signal_ns", sig)]);
        o.summary.vms[0].latency_us.mean.unwrap() * 1e3
    };
    let (at_start, late) = (mean(0), mean(2_000));
    let d = late - at_start;
    assert!((1_500.0..=2_500.0).contains(&d), "{late} - {at_start} = {d} ns");
    // Past the exit's end is refused (the signal is part of the exit), never clamped.
    let e = Sc::new("t", "es2").vm(Vm::new("vm0", 1)).profile_override("exit.io_signal_ns", 1000000).check_error();
    assert!(e.contains("key `profile_overrides.exit.io_signal_ns`: value 1000000 is not allowed; expected at most exit.io_instruction_ns"), "{e}");
}
