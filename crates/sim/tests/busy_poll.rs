//! vhost-net busy polling (`[vm.net] busyloop_timeout_us`, Linux `busyloop_timeout`): the
//! vhost thread polls an empty TX ring with kicks disabled, so a guest that sends more often
//! than the window stops kicking, at the price of the thread's CPU (`eventpath_policy::vhost`).

mod common;

use common::{Sc, Vm};
use eventpath_sim::summary::Summary;

fn run(busyloop_us: u32, rate_pps: u32) -> Summary {
    let sc = Sc::new("busy-poll", "es2").duration(0.1).warmup(0.01).pcpus(2).vm(Vm::new("vm0", 1)
        .pins(&[0])
        .vhost_pin(1)
        .net(&format!("busyloop_timeout_us = {busyloop_us}"))
        .workload(&format!("kind = \"udp_stream\"\nmessage_bytes = 512\nrate_pps = {rate_pps}")));
    let (o, l) = sc.run_with_ledger();
    l.check().unwrap();
    assert!(o.summary.stalled_flows.is_empty(), "{:?}", o.summary.stalled_flows);
    o.summary
}

#[test]
fn polling_longer_than_the_send_gap_removes_the_kicks_and_costs_the_vhost_core() {
    let (off, on) = (run(0, 50_000), run(50, 50_000));
    let kicks = |s: &Summary| s.vms[0].kicks_per_s.unwrap();
    let vhost = |s: &Summary| s.host.io_threads[0].util_pct.unwrap();
    assert!(kicks(&off) > 45_000.0, "every 20 µs send kicks a sleeping thread: {}", kicks(&off));
    assert!(kicks(&on) < 500.0, "{}", kicks(&on));
    assert_eq!(on.vms[0].throughput.pps, off.vms[0].throughput.pps);
    assert!(vhost(&on) > 90.0 && vhost(&off) < 20.0, "{} {}", vhost(&on), vhost(&off));
    // Sends further apart than the window: the thread sleeps between them and is kicked again.
    let sparse = run(50, 5_000);
    assert!(kicks(&sparse) > 4_500.0, "{}", kicks(&sparse));
    assert!(vhost(&sparse) < 50.0, "{}", vhost(&sparse));
}

#[test]
fn busy_polling_is_refused_out_of_range_and_on_a_vf() {
    let err = |net: &str| Sc::new("t", "did").vm(Vm::new("vm0", 1).net(net)).error();
    let m = err("busyloop_timeout_us = 2000000");
    assert!(m.contains("net.busyloop_timeout_us") && m.contains("1000000"), "{m}");
    let m = err("kind = \"sriov_vf\"\nbusyloop_timeout_us = 50");
    assert!(m.contains("net.busyloop_timeout_us") && m.contains("no vhost thread"), "{m}");
}
