//! Interrupt routing (`[vm] interrupt_routing`, `eventpath_policy::routing` through the
//! simulator's adapter): which vCPU takes a VM's device interrupts, and a flow that keeps going
//! whichever vCPU NAPI runs on.

mod common;

use common::{Sc, Vm};

fn run(routing: &str) -> (f64, Vec<u64>) {
    let vm = Vm::new("vm0", 2).routing(routing).workload("kind = \"udp_receive\"\nmessage_bytes = 512\nrate_pps = 20000");
    let (o, l) = Sc::new("routing", "es2").duration(0.05).warmup(0.01).vm(vm).run_with_ledger();
    l.check().unwrap();
    assert!(o.summary.stalled_flows.is_empty(), "{routing}: {:?}", o.summary.stalled_flows);
    (o.summary.vms[0].throughput.pps.unwrap(), l.irq_handled)
}

#[test]
fn fixed_routing_keeps_device_interrupts_on_vcpu_0_and_round_robin_spreads_them() {
    let (pps_fixed, fixed) = run("fixed");
    let (pps_rr, rr) = run("lowest_priority_rr");
    assert!(fixed[1] * 10 < fixed[0], "fixed: {fixed:?}");
    assert!(rr[1] * 3 > rr[0], "round robin: {rr:?}");
    // The application on vCPU 0 still gets every datagram: NAPI on vCPU 1 wakes it by IPI.
    assert!((pps_rr - pps_fixed).abs() < 0.02 * pps_fixed, "{pps_rr} vs {pps_fixed}");
}

#[test]
fn every_router_runs() {
    for r in ["running_first", "es2", "h_balance"] {
        let (pps, _) = run(r);
        assert!(pps > 15_000.0, "{r}: {pps}");
    }
}
