//! Request/response (netperf UDP_RR, ping): closed and open loop, round-trip latency.

mod common;

use common::{Sc, Vm};
use eventpath_sim::summary::VmSummary;

/// A UDP_RR VM; `extra` holds more `[vm.workload]` lines, `overrides` profile parameters.
fn run(extra: &str, overrides: &[(&str, u32)], delivery: &str) -> VmSummary {
    run_on(Sc::new("rr", "es2"), extra, overrides, delivery)
}

/// [`run`] on a scenario `sc` (one that sets `[host]` or `[client]` keys).
fn run_on(sc: Sc, extra: &str, overrides: &[(&str, u32)], delivery: &str) -> VmSummary {
    let vm = Vm::new("vm0", 1).delivery(delivery).workload("kind = \"udp_rr\"\nrequest_bytes = 1\nresponse_bytes = 1").workload(extra);
    let sc = sc.duration(0.1).warmup(0.01).vm(vm);
    let (o, l) = overrides.iter().fold(sc, |sc, &(key, value)| sc.profile_override(key, value)).run_with_ledger();
    assert_eq!(l.sent[0], l.delivered[0] + l.in_flight[0]);
    assert_eq!(l.rx_arrived[0], l.rx_tap_dropped[0] + l.rx_queued[0] + l.rx_polled[0]);
    o.summary.vms[0].clone()
}

#[test]
fn closed_loop_one_transaction_in_flight() {
    let v = run("", &[], "emulated");
    let tps = v.throughput.ops_per_s.unwrap();
    let rtt_s = v.latency_us.mean.unwrap() * 1e-6;
    assert!(tps > 1000.0, "{tps}");
    // One transaction in flight: rate × round trip ≈ 1, less the client's own turnaround.
    let busy = tps * rtt_s;
    assert!((0.7..=1.0).contains(&busy), "{busy}");
    // The idle guest halts between requests.
    assert!(v.exits_per_s["hlt"].unwrap() > 0.5 * tps);
}

/// Both NICs' receive throttles off: with them, one transaction in flight locks to the ITR gap.
const NO_ITR: &[(&str, u32)] = &[("host.nic_rx_itr_ns", 0), ("client.rx_itr_ns", 0)];

#[test]
fn posted_interrupts_shorten_the_round_trip() {
    let e = run("", NO_ITR, "emulated");
    let p = run("", NO_ITR, "posted");
    assert_eq!(p.exits_per_s["eoi"], Some(0.0));
    assert!(p.latency_us.mean.unwrap() < e.latency_us.mean.unwrap());
    assert!(p.throughput.ops_per_s.unwrap() > e.throughput.ops_per_s.unwrap());
}

#[test]
fn a_nic_throttle_longer_than_the_round_trip_sets_its_pace() {
    // The client NIC interrupts at most every 100 µs (fixed: the driver's adaptive ITR off):
    // each response that comes sooner waits, so one transaction in flight completes once per
    // gap, whatever the guest's delivery mode.
    let itr = &[("host.nic_rx_itr_ns", 0), ("client.rx_itr_ns", 100000)];
    for delivery in ["emulated", "posted"] {
        let v = run_on(Sc::new("rr", "es2").client("nic_itr = \"fixed\""), "", itr, delivery);
        let tps = v.throughput.ops_per_s.unwrap();
        assert!((9_000.0..=10_050.0).contains(&tps), "{delivery}: {tps}");
        assert!(v.latency_us.p50.unwrap() >= 90.0, "{delivery}: {:?}", v.latency_us.p50);
    }
}

#[test]
fn ping_runs_at_its_interval() {
    let v = run("interval_us = 1000", &[], "posted");
    let tps = v.throughput.ops_per_s.unwrap();
    assert!((tps - 1000.0).abs() < 30.0, "{tps}");
    assert!(v.latency_us.p50.unwrap() < 1000.0);
}
