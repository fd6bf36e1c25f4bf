//! The webbench-like client (`kind = "webbench"`, CGR/AIR §5.3): clients whose requests are not
//! done within the time-out fail and stop; a server that keeps up fails none; the ledger balances
//! with abandoned requests; a VM whose every client failed is finished, not stalled.

mod common;

use common::{Sc, Vm};
use eventpath_sim::run::RunOutput;
use eventpath_sim::summary::WebSummary;

/// One VM of 2 vCPUs with a VF on the sriov testbed, serving `clients` webbench clients whose
/// requests time out after `timeout_ms`.
fn sc(clients: u32, timeout_ms: u32, duration: f64) -> Sc {
    Sc::new("wb", "sriov").duration(duration).warmup(0.05).pcpus(8).vm(Vm::new("vm0", 2)
        .net("kind = \"sriov_vf\"\nqueue_size = 512")
        .moderation("kind = \"fir\"\nitr = 8000")
        .workload(&format!("kind = \"webbench\"\nclients = {clients}\ntimeout_ms = {timeout_ms}\nworkers = 5")))
}

fn run(sc: &Sc) -> RunOutput {
    let (o, l) = sc.run_with_ledger();
    l.check().unwrap();
    assert!(o.summary.stalled_flows.is_empty(), "{:?}", o.summary.stalled_flows);
    o
}

fn web(o: &RunOutput) -> WebSummary {
    o.summary.vms[0].web.clone().expect("a webbench VM reports vms[].web")
}

#[test]
fn a_server_that_keeps_up_fails_no_client() {
    let o = run(&sc(50, 1000, 0.3));
    let w = web(&o);
    assert_eq!((w.clients, w.failed_clients), (50, 0));
    let per_min = w.requests_per_min.unwrap();
    let ops = o.summary.vms[0].throughput.ops_per_s.unwrap();
    assert!(per_min > 0.0 && (per_min - 60.0 * ops).abs() < 1e-6 * per_min, "{per_min} vs {ops}/s");
    // Other workloads' summaries have no such key.
    assert!(o.summary.vms[0].cpu_job.is_none());
}

#[test]
fn time_outs_fail_clients_when_the_server_is_overloaded() {
    // The same server and time-out (60 ms): 20 clients are all served within it (their slowest
    // request takes ~30 ms); 3,000 queue behind each other for longer (~90 ms).
    let light = web(&run(&sc(20, 60, 0.3)));
    let heavy = web(&run(&sc(3000, 60, 0.3)));
    assert_eq!(light.failed_clients, 0, "{light:?}");
    assert!(heavy.failed_clients > 0 && heavy.failed_clients <= 3000, "{heavy:?}");
    // Deterministic: the same scenario and seed fail the same clients.
    assert_eq!(web(&run(&sc(3000, 60, 0.3))).failed_clients, heavy.failed_clients);
}

#[test]
fn clients_that_all_failed_leave_a_finished_vm_not_a_stalled_flow() {
    // A time-out of 1 ms: nearly every request outlives it, and a failed client stops; the VM
    // finishes its run with its ledger closed and no stalled flow (`run`), the few clients left
    // still served (the sriov profile's server answers a few closed-loop clients in ~0.25 ms).
    let o = run(&sc(3000, 1, 0.3));
    let w = web(&o);
    assert!(w.failed_clients > 2900, "{w:?}");
    let live = web(&run(&sc(3000, 1000, 0.3)));
    assert_eq!(live.failed_clients, 0, "{live:?}");
    assert!(w.requests_per_min.unwrap() > 0.0 && w.requests_per_min.unwrap() <= live.requests_per_min.unwrap(), "{w:?} vs {live:?}");
}

#[test]
fn a_request_dropped_again_waits_twice_as_long_each_time() {
    // 8,000 clients on one vCPU that a host hog of nice -10 holds for most of each period: the
    // VF's 64-descriptor ring overflows while the vCPU waits, and resends meet a full ring again.
    let dur = 2.0;
    let sc = Sc::new("wb", "sriov").duration(dur).warmup(0.05).pcpus(1).vm(Vm::new("vm0", 1)
        .net("kind = \"sriov_vf\"\nqueue_size = 64")
        .moderation("kind = \"fir\"\nitr = 8000")
        .workload("kind = \"webbench\"\nclients = 8000\ntimeout_ms = 100000\nworkers = 5"))
        .hog_nice(&[], -10);
    let o = run(&sc);
    let t = o.summary.vms[0].tcp_rr.clone().expect("a TCP request/response VM reports vms[].tcp_rr");
    assert!(t.retransmits_per_s > 0.0, "{t:?}");
    // n timeouts in a row wait 200 ms x (2^n - 1) when each doubles the RTO (at a fixed 200 ms
    // they would wait 200 ms x n): in the 2.05 s run at most 3 fit, and a resend was dropped
    // at least once more.
    let most = ((0.05 + dur) / 0.2 + 1.0_f64).log2().floor() as u8;
    assert_eq!(most, 3);
    assert!((2..=most).contains(&t.rto_backoff_max), "{t:?}");
    // Other workloads have no such object.
    assert!(o.summary.vms[0].tcp_receive.is_none());
}
