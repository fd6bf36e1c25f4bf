//! The guest scheduler (`model/guest_sched.rs`) with netperf TCP_STREAM threads (`streams`):
//! threads on their own vCPUs add up, threads sharing a vCPU share it, the lowest-priority CPU
//! burn never takes a thread's time, and a thread whose ACK arrives on another vCPU is woken
//! there (a reschedule IPI) even while its own vCPU only burns.

mod common;

use common::{Conservation, Sc, Vm};
use eventpath_sim::run::RunOutput;

fn scenario(vcpus: u32, streams: u32, burn: bool) -> Sc {
    let pins: Vec<u32> = (0..vcpus).collect();
    Sc::new("t", "es2").duration(0.06).warmup(0.01).pcpus(vcpus + 1).vm(Vm::new("vm0", vcpus)
        .pins(&pins)
        .burn(burn)
        .delivery("posted")
        .vhost_pin(vcpus)
        .workload(&format!("kind = \"tcp_stream\"\nmessage_bytes = 512\nstreams = {streams}")))
}

fn run(sc: &Sc) -> (RunOutput, Conservation) {
    sc.run_with_ledger()
}

fn gbps(sc: &Sc) -> f64 {
    let (out, c) = run(sc);
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
        // The burners are nice-19 CFS threads: their weight's share (1.4 %), and up to a tick
        // each time a thread that slept briefly (window full), placed at min_vruntime less
        // half a latency, runs past the burner's vruntime.
        assert!(vm.guest_burn_pct.unwrap() < 10.0, "burn {:?} %", vm.guest_burn_pct);
    }
}

#[test]
fn streams_outside_their_range_are_refused() {
    for bad in [0, 65] {
        let e = scenario(1, bad, false).check_error();
        assert!(e.contains("streams") && e.contains("1..=64"), "{e}");
    }
}
