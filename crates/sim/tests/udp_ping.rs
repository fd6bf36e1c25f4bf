//! A fixed-rate UDP ping from the guest: open-loop sends, echoes read by the guest, round trip
//! as the guest sees it.

mod common;

use common::{Sc, Vm};
use eventpath_sim::summary::VmSummary;

fn ping(interval_us: f64) -> String {
    format!("kind = \"udp_ping\"\nmessage_bytes = 64\ninterval_us = {interval_us}")
}

fn run(interval_us: f64, delivery: &str, burn: bool) -> VmSummary {
    let vm = Vm::new("vm0", 1).delivery(delivery).burn(burn).workload(&ping(interval_us));
    let (o, l) = Sc::new("ping", "es2").duration(0.2).warmup(0.02).vm(vm).run_with_ledger();
    assert_eq!(l.sent[0], l.delivered[0] + l.dropped[0] + l.in_flight[0]);
    assert_eq!(l.rx_arrived[0], l.rx_tap_dropped[0] + l.rx_queued[0] + l.rx_polled[0]);
    assert!(o.summary.stalled_flows.is_empty(), "{:?}", o.summary.stalled_flows);
    o.summary.vms[0].clone()
}

#[test]
fn every_ping_is_answered_at_the_set_rate() {
    let v = run(100.0, "emulated", false);
    // 10,000 pings/s open loop: each comes back (no loss at this rate), one echo per ping.
    let ops = v.throughput.ops_per_s.unwrap();
    assert!((9_800.0..=10_200.0).contains(&ops), "{ops}");
    assert_eq!(v.loss_pct, Some(0.0));
    // The round trip crosses the host twice and the guest's send and receive paths: tens of µs,
    // well under the interval.
    let rtt = v.latency_us.mean.unwrap();
    assert!((5.0..100.0).contains(&rtt), "{rtt}");
    // Each ping kicks (the vCPU halts between pings, so vhost has notifications on) and each
    // echo interrupts.
    assert!(v.kicks_per_s.unwrap() >= 0.9 * ops, "{:?}", v.kicks_per_s);
    assert!(v.interrupts_per_s.unwrap() >= 0.9 * ops, "{:?}", v.interrupts_per_s);
}

#[test]
fn posted_interrupts_take_the_eoi_and_delivery_exits_off_the_round_trip() {
    let e = run(100.0, "emulated", true);
    let p = run(100.0, "posted", true);
    let (re, rp) = (e.latency_us.mean.unwrap(), p.latency_us.mean.unwrap());
    assert!(rp < re, "posted {rp} µs vs emulated {re} µs");
    assert!(p.exits_per_s["eoi"].unwrap() < 0.1 * e.exits_per_s["eoi"].unwrap());
}

#[test]
fn a_bad_interval_is_one_clear_error() {
    let e = Sc::new("ping", "es2").vm(Vm::new("vm0", 1).workload(&ping(0.0))).error();
    assert!(e.contains("interval_us") && !e.contains('\n'), "{e}");
}
