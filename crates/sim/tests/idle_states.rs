//! Idle states end to end: the C-state a woken thread's pCPU left follows the workload's idle
//! periods, and its exit latency shows in the latency a client sees.

mod common;

use common::{Sc, Vm};
use eventpath_sim::run::RunOutput;

fn run(profile: &str, idle: &str, workload: &str) -> RunOutput {
    let vm = Vm::new("vm0", 1).pins(&[0]).delivery("posted").vhost_pin(1).workload(workload);
    Sc::new("idle", profile).duration(0.2).warmup(0.02).idle(idle).vm(vm).run()
}

const PING: &str = "kind = \"udp_rr\"\nrequest_bytes = 64\nresponse_bytes = 64\ninterval_us = 10000";
const STREAM: &str = "kind = \"tcp_stream\"\nmessage_bytes = 512";

#[test]
fn sparse_requests_wake_from_the_deepest_state_a_stream_from_c1() {
    let ping = run("es2", "menu", PING).summary.host.idle_wakeups_by_cstate_per_s;
    assert!(ping["C6"] > 250.0, "a 10 ms gap sinks both cores to C6: {ping:?}");
    assert_eq!(ping["C1"], 0.0, "{ping:?}");
    let stream = run("es2", "menu", STREAM).summary.host.idle_wakeups_by_cstate_per_s;
    assert!(stream["C1"] > 10_000.0, "vhost idles µs at a time: {stream:?}");
    // (What leaves C6 is a pCPU's kernel thread waking an otherwise idle core: a few per second.)
    assert!(stream["C6"] < 1e-3 * stream["C1"], "{stream:?}");
}

#[test]
fn deep_idle_lengthens_a_ping_by_the_exit_latencies() {
    let lat = |o: RunOutput| o.summary.vms[0].latency_us.p50.unwrap();
    let deep = lat(run("es2", "menu", PING));
    let polled = run("es2", "poll", PING);
    assert!(polled.summary.host.idle_wakeups_by_cstate_per_s.is_empty(), "idle=poll enters no C-state");
    let none = lat(polled);
    // The request wakes vhost and then the vCPU, the reply vhost again: three C6 exits of 82 µs.
    let diff = deep - none;
    assert!((200.0..300.0).contains(&diff), "deep {deep} µs, with idle=poll {none} µs");
}

#[test]
fn polling_idle_makes_a_streams_vhost_wake_faster() {
    // vhost's core naps in C1 (1 µs exit) between kicks; with idle=poll the kick's wake-up
    // skips that exit, so each packet leaves about 1 µs sooner after its kick.
    let p50 = |idle: &str| {
        let o = run("es2", idle, "kind = \"udp_stream\"\nmessage_bytes = 512");
        o.summary.vms[0].latency_us.p50.unwrap()
    };
    let (menu, poll) = (p50("menu"), p50("poll"));
    assert!(poll < menu - 0.5, "send-to-client latency p50: menu {menu:.2} µs, poll {poll:.2} µs");
}
