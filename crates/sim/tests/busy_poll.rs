//! vhost-net busy polling (`[vm.net] busyloop_timeout_us`, Linux `busyloop_timeout`): the
//! vhost thread polls an empty TX ring with kicks disabled, so a guest that sends more often
//! than the window stops kicking, at the price of the thread's CPU (`eventpath_policy::vhost`).

use eventpath_sim::run::simulate_with_ledger;
use eventpath_sim::scenario::Scenario;
use eventpath_sim::summary::Summary;

fn run(busyloop_us: u32, rate_pps: u32) -> Summary {
    let text = format!(
        r#"
name = "busy-poll"
profile = "es2"
duration_s = 0.1
warmup_s = 0.01
[host]
pcpus = 2
[[vm]]
name = "vm0"
vcpus = 1
vcpu_pins = [0]
[vm.net]
vhost_pin = 1
busyloop_timeout_us = {busyloop_us}
[vm.workload]
kind = "udp_stream"
message_bytes = 512
rate_pps = {rate_pps}
"#
    );
    let c = Scenario::from_toml("t", &text).unwrap().check("t").unwrap();
    let (o, l) = simulate_with_ledger(&c);
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
    let err = |text: &str| Scenario::from_toml("t", text).and_then(|s| s.check("t")).unwrap_err().to_string();
    let base = "name = \"t\"\nprofile = \"did\"\n[[vm]]\nname = \"vm0\"\nvcpus = 1\n[vm.net]\n";
    let m = err(&format!("{base}busyloop_timeout_us = 2000000\n"));
    assert!(m.contains("net.busyloop_timeout_us") && m.contains("1000000"), "{m}");
    let m = err(&format!("{base}kind = \"sriov_vf\"\nbusyloop_timeout_us = 50\n"));
    assert!(m.contains("net.busyloop_timeout_us") && m.contains("no vhost thread"), "{m}");
}
