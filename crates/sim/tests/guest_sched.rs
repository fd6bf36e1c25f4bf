//! The guest scheduler (`model/guest_sched.rs`) with netperf TCP_STREAM threads (`streams`):
//! threads on their own vCPUs add up, threads sharing a vCPU share it, the lowest-priority CPU
//! burn never takes a thread's time, and a thread whose ACK arrives on another vCPU is woken
//! there (a reschedule IPI) even while its own vCPU only burns.

use eventpath_sim::model::Conservation;
use eventpath_sim::run::{simulate_with_ledger, RunOutput};
use eventpath_sim::scenario::Scenario;

fn scenario(vcpus: u32, streams: u32, burn: bool) -> String {
    format!(
        r#"
name = "t"
profile = "es2"
duration_s = 0.06
warmup_s = 0.01
[host]
pcpus = {pcpus}
[[vm]]
name = "vm0"
vcpus = {vcpus}
vcpu_pins = {pins:?}
guest_cpu_burn = {burn}
interrupt_delivery = "posted"
[vm.net]
vhost_pin = {vcpus}
[vm.workload]
kind = "tcp_stream"
message_bytes = 512
streams = {streams}
"#,
        pcpus = vcpus + 1,
        pins = (0..vcpus).collect::<Vec<_>>(),
    )
}

fn run(text: &str) -> (RunOutput, Conservation) {
    let c = Scenario::from_toml("t", text).unwrap().check("t").unwrap();
    simulate_with_ledger(&c)
}

fn gbps(text: &str) -> f64 {
    let (out, c) = run(text);
    assert!(out.summary.stalled_flows.is_empty(), "{:?}", out.summary.stalled_flows);
    // Every segment the threads handed to the driver is delivered or in flight.
    assert_eq!(c.sent[0], c.delivered[0] + c.dropped[0] + c.in_flight[0]);
    out.summary.vms[0].throughput.gbps.unwrap()
}

#[test]
fn threads_on_their_own_vcpus_add_up() {
    let one = gbps(&scenario(1, 1, false));
    let four = gbps(&scenario(4, 4, false));
    assert!(four > 2.5 * one, "4 threads on 4 vCPUs {four} Gbit/s vs 1 on 1 {one}");
}

#[test]
fn threads_sharing_a_vcpu_share_its_time() {
    let one = gbps(&scenario(1, 1, false));
    let two = gbps(&scenario(1, 2, false));
    // One vCPU's worth of sending either way, less the switches between the two threads.
    assert!(two > 0.85 * one && two < 1.1 * one, "2 threads {two} vs 1 thread {one} on one vCPU");
}

#[test]
fn the_burn_takes_no_time_from_the_threads_and_remote_wakeups_reach_a_burning_vcpu() {
    for (vcpus, streams) in [(1, 1), (2, 2), (4, 4)] {
        let quiet = gbps(&scenario(vcpus, streams, false));
        let (out, _) = run(&scenario(vcpus, streams, true));
        let vm = &out.summary.vms[0];
        let busy = vm.throughput.gbps.unwrap();
        // ACK interrupts go to vCPU 0 (fixed routing): threads on the other vCPUs are woken
        // there by a reschedule IPI, so the burn cannot hold them for its 1 ms chunks.
        assert!(busy > 0.85 * quiet, "{vcpus} vCPUs: with burn {busy} Gbit/s vs {quiet} without");
        // CPU-bound threads never block: the burn gets (almost) nothing.
        assert!(vm.guest_burn_pct.unwrap() < 5.0, "burn {:?} %", vm.guest_burn_pct);
    }
}

#[test]
fn streams_outside_their_range_are_refused() {
    for bad in [0, 65] {
        let text = scenario(1, bad, false);
        let e = Scenario::from_toml("t", &text).unwrap().check("t").unwrap_err().to_string();
        assert!(e.contains("streams") && e.contains("1..=64"), "{e}");
    }
}
