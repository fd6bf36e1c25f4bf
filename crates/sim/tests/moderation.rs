//! Interrupt moderation (`[vm.net.moderation]`, `eventpath_policy::moderation` through the
//! simulator's adapter): a fixed ITR caps a device's interrupt rate; none leaves it alone.

mod common;

use common::{Sc, Vm};

/// Interrupts/s and datagrams/s of a VM receiving 100 kpps, its `[vm.net.moderation]` lines
/// `moderation` ("": none).
fn run(moderation: &str) -> (f64, f64) {
    // The host NIC's throttle fixed at 50 µs: i40e's adaptive ITR would hold this small-packet
    // flood to its ultra class (8 K/s) before the device's moderation had a say.
    let sc = Sc::new("moderation", "es2").duration(0.05).warmup(0.01).host("nic_itr = \"fixed\"").vm(Vm::new("vm0", 1)
        .moderation(moderation)
        .workload("kind = \"udp_receive\"\nmessage_bytes = 64\nrate_pps = 100000"));
    let (o, l) = sc.run_with_ledger();
    l.check().unwrap();
    assert!(o.summary.stalled_flows.is_empty());
    let v = &o.summary.vms[0];
    (v.interrupts_per_s.unwrap(), v.throughput.pps.unwrap())
}

#[test]
fn a_fixed_itr_caps_the_interrupt_rate_and_keeps_the_stream() {
    let (free, pps_free) = run("");
    let (fir, pps_fir) = run("kind = \"fir\"\nitr = 8000");
    assert!(free > 15_000.0, "unmoderated: {free}/s");
    // Device interrupts at most 8000/s (the guest's own timer interrupts come on top).
    assert!(fir < 8_000.0 * 1.05 + 300.0, "FIR 8000: {fir}/s");
    assert!(fir < 0.6 * free);
    assert!((pps_fir - pps_free).abs() < 0.03 * pps_free, "{pps_fir} vs {pps_free}");
}

#[test]
fn a_bad_moderation_parameter_is_one_line() {
    let e = Sc::new("m", "es2").vm(Vm::new("vm0", 1).moderation("kind = \"fir\"\nitr = 0")).check_error();
    assert!(e.contains("moderation") && e.contains("itr") && !e.contains('\n'), "{e}");
}
