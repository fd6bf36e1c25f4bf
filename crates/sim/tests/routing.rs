//! Interrupt routing (`[vm] interrupt_routing`, `eventpath_policy::routing` through the
//! simulator's adapter): which vCPU takes a VM's device interrupts, and a flow that keeps going
//! whichever vCPU NAPI runs on.

use eventpath_sim::run::simulate_with_ledger;
use eventpath_sim::scenario::Scenario;

fn run(routing: &str) -> (f64, Vec<u64>) {
    let text = format!(
        r#"
name = "routing"
profile = "es2"
duration_s = 0.05
warmup_s = 0.01
[[vm]]
name = "vm0"
vcpus = 2
interrupt_routing = "{routing}"
[vm.workload]
kind = "udp_receive"
message_bytes = 512
rate_pps = 20000
"#
    );
    let c = Scenario::from_toml("t", &text).unwrap().check("t").unwrap();
    let (o, l) = simulate_with_ledger(&c);
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
