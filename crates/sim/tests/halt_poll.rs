//! KVM halt polling (`[vm.halt_poll]`, `eventpath_policy::halt_poll` through the simulator's
//! adapter): a halted vCPU whose next interrupt comes within the poll window resumes without a
//! wake-up — lower latency for more host CPU.

use eventpath_sim::run::simulate_with_ledger;
use eventpath_sim::scenario::Scenario;
use eventpath_sim::summary::Summary;

fn run(halt_poll: &str) -> Summary {
    let text = format!(
        r#"
name = "halt-poll"
profile = "es2"
duration_s = 0.05
warmup_s = 0.01
[[vm]]
name = "vm0"
vcpus = 1
vcpu_pins = [0]
{halt_poll}
[vm.net]
vhost_pin = 1
[vm.workload]
kind = "udp_rr"
request_bytes = 64
response_bytes = 64
# The NICs' receive throttles off: with them one transaction in flight locks to their gap and
# the wake-up that polling saves would not show in the round trip.
[profile_overrides.host]
nic_rx_itr_ns = 0
[profile_overrides.client]
rx_itr_ns = 0
"#
    );
    let c = Scenario::from_toml("t", &text).unwrap().check("t").unwrap();
    let (o, l) = simulate_with_ledger(&c);
    l.check().unwrap();
    assert!(o.summary.stalled_flows.is_empty());
    o.summary
}

#[test]
fn halt_polling_trades_host_cpu_for_wake_up_latency() {
    let off = run("");
    let on = run("[vm.halt_poll]\nmax_halt_poll_ns = 200000");
    let p50 = |s: &Summary| s.vms[0].latency_us.p50.unwrap();
    let vcpu_cpu = |s: &Summary| s.host.threads[0].pcpu_pct.iter().sum::<f64>();
    // Polling saves at least the wake-up of the halted vCPU thread (es2: 1.5 ± 0.5 us, plus
    // the idle-state exit) per round trip.
    assert!(p50(&on) < p50(&off) - 1.0, "latency p50 {} vs {} us", p50(&on), p50(&off));
    assert!(vcpu_cpu(&on) > vcpu_cpu(&off) + 10.0, "vCPU thread CPU {} vs {} %", vcpu_cpu(&on), vcpu_cpu(&off));
    // The guest halts as often either way; only the host side changed.
    assert!(on.vms[0].exits_per_s["hlt"].unwrap() > 0.5 * off.vms[0].exits_per_s["hlt"].unwrap());
}

#[test]
fn a_bad_halt_poll_parameter_is_one_line() {
    let text = "name = \"h\"\nprofile = \"es2\"\n[[vm]]\nname = \"vm0\"\nvcpus = 1\n[vm.halt_poll]\ngrow_start = 0\n";
    let e = Scenario::from_toml("t", text).unwrap().check("t").unwrap_err().to_string();
    assert!(e.contains("halt_poll") && e.contains("grow_start") && !e.contains('\n'), "{e}");
}
