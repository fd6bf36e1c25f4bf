//! Interrupt moderation (`[vm.net.moderation]`, `eventpath_policy::moderation` through the
//! simulator's adapter): a fixed ITR caps a device's interrupt rate; none leaves it alone.

use eventpath_sim::run::simulate_with_ledger;
use eventpath_sim::scenario::Scenario;

fn run(moderation: &str) -> (f64, f64) {
    let text = format!(
        r#"
name = "moderation"
profile = "es2"
duration_s = 0.05
warmup_s = 0.01
[[vm]]
name = "vm0"
vcpus = 1
[vm.net]
{moderation}
[vm.workload]
kind = "udp_receive"
message_bytes = 64
rate_pps = 100000
"#
    );
    let c = Scenario::from_toml("t", &text).unwrap().check("t").unwrap();
    let (o, l) = simulate_with_ledger(&c);
    l.check().unwrap();
    assert!(o.summary.stalled_flows.is_empty());
    let v = &o.summary.vms[0];
    (v.interrupts_per_s.unwrap(), v.throughput.pps.unwrap())
}

#[test]
fn a_fixed_itr_caps_the_interrupt_rate_and_keeps_the_stream() {
    let (free, pps_free) = run("");
    let (fir, pps_fir) = run("[vm.net.moderation]\nkind = \"fir\"\nitr = 8000");
    assert!(free > 15_000.0, "unmoderated: {free}/s");
    // Device interrupts at most 8000/s (the guest's own timer interrupts come on top).
    assert!(fir < 8_000.0 * 1.05 + 300.0, "FIR 8000: {fir}/s");
    assert!(fir < 0.6 * free);
    assert!((pps_fir - pps_free).abs() < 0.03 * pps_free, "{pps_fir} vs {pps_free}");
}

#[test]
fn a_bad_moderation_parameter_is_one_line() {
    let text = "name = \"m\"\nprofile = \"es2\"\n[[vm]]\nname = \"vm0\"\nvcpus = 1\n[vm.net.moderation]\nkind = \"fir\"\nitr = 0\n";
    let e = Scenario::from_toml("t", text).unwrap().check("t").unwrap_err().to_string();
    assert!(e.contains("moderation") && e.contains("itr") && !e.contains('\n'), "{e}");
}
