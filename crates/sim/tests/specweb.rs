//! The SPECweb2009-Banking-like session mix (`kind = "specweb"`, hBalance §6.2): with a light
//! load the response time is about the service time; past saturation more sessions raise the
//! response time while the throughput flattens; think times come from a stream of their own
//! (same scenario and seed, same result); bad values are refused.

mod common;

use common::{Sc, Vm};
use eventpath_sim::run::RunOutput;
use eventpath_sim::summary::SpecwebSummary;

/// `sessions` sessions with 50 ms think times against a 4-vCPU Apache on 4 pCPUs.
fn sc(sessions: u32) -> Sc {
    Sc::new("sw", "es2").duration(2.0).warmup(0.5).pcpus(4).vm(
        Vm::new("vm0", 4).routing("lowest_priority_rr").workload(&format!("kind = \"specweb\"\nsessions = {sessions}\nthink_ms = 50")),
    )
}

fn run(sc: &Sc) -> RunOutput {
    let (o, l) = sc.run_with_ledger();
    l.check().unwrap();
    assert!(o.summary.stalled_flows.is_empty(), "{:?}", o.summary.stalled_flows);
    o
}

fn sw(o: &RunOutput) -> SpecwebSummary {
    o.summary.vms[0].specweb.clone().expect("a specweb VM reports vms[].specweb")
}

#[test]
fn a_light_load_is_served_in_about_its_service_time() {
    let s = sw(&run(&sc(2)));
    // Mean server CPU: 0.6 x 200 us + 0.4 x 2 ms = 0.92 ms; the rest is the network path.
    let mean = s.response_time_mean_ms.unwrap();
    assert!(mean > 0.9 && mean < 2.0, "{s:?}");
    assert_eq!(s.finished_by_class.values().sum::<u64>(), s.finished_requests);
    let heavy = s.finished_by_class["heavy"] as f64 / s.finished_requests as f64;
    assert!((heavy - 0.4).abs() < 0.1, "{s:?}");
}

#[test]
fn past_saturation_more_sessions_raise_the_response_time_not_the_throughput() {
    let a = sw(&run(&sc(200)));
    let b = sw(&run(&sc(400)));
    let (ra, rb) = (a.requests_per_s.unwrap(), b.requests_per_s.unwrap());
    let (ta, tb) = (a.response_time_mean_ms.unwrap(), b.response_time_mean_ms.unwrap());
    assert!(rb < 1.2 * ra, "throughput flattens: {ra} -> {rb}");
    assert!(tb > 3.0 * ta, "response time climbs: {ta} -> {tb} ms");
    assert!(b.response_time_p95_ms.unwrap() >= tb);
}

#[test]
fn think_times_come_from_a_seeded_stream_of_their_own() {
    let a = sw(&run(&sc(50)));
    assert_eq!(sw(&run(&sc(50))).finished_requests, a.finished_requests);
    let other = sw(&run(&sc(50).seed(7)));
    assert_ne!(other.finished_requests, a.finished_requests);
    // Sessions that all think are not a stalled flow: one session, 10 s think times.
    let o = run(&Sc::new("sw1", "es2").duration(3.0).warmup(0.1).vm(Vm::new("vm0", 1).workload("kind = \"specweb\"\nsessions = 1\nthink_ms = 10000")));
    assert!(o.summary.vms[0].specweb.is_some());
}

#[test]
fn bad_values_are_refused_naming_the_key() {
    let base = || Sc::new("bad", "es2").duration(0.01).warmup(0.001);
    for (lines, want) in [
        ("kind = \"specweb\"\nsessions = 0", "sessions"),
        ("kind = \"specweb\"\nsessions = 5000", "sessions"),
        ("kind = \"specweb\"\nsessions = 5\nthink_ms = -1", "think_ms"),
        ("kind = \"specweb\"\nsessions = 5\nheavy_pct = 101", "heavy_pct"),
        ("kind = \"specweb\"\nsessions = 5\nlight_cpu_us = 0", "light_cpu_us"),
        ("kind = \"specweb\"\nsessions = 5\nheavy_bytes = 0", "heavy_bytes"),
        ("kind = \"specweb\"\nsessions = 5\nworkers = 0", "workers"),
    ] {
        let m = base().vm(Vm::new("vm0", 1).workload(lines)).error();
        assert!(m.contains(want) && !m.contains('\n'), "{lines}: {m}");
    }
}
