//! `simulate_observed`: a run in chunks (progress, Ctrl-C) is the same run; stopped early, it
//! reports what was simulated.

mod common;

use common::{Sc, Vm};
use eventpath_sim::run::{simulate, simulate_observed};

/// A TCP stream of 20 ms after 5 ms of warm-up.
fn scenario() -> Sc {
    let vm = Vm::new("vm0", 1).workload("kind = \"tcp_stream\"\nmessage_bytes = 1024");
    Sc::new("t", "es2").duration(0.02).warmup(0.005).vm(vm)
}

fn without_wall(s: &eventpath_sim::summary::Summary) -> serde_json::Value {
    let mut v = serde_json::to_value(s).unwrap();
    v.as_object_mut().unwrap().remove("wall_seconds");
    v
}

#[test]
fn chunked_run_equals_one_run_and_sees_every_chunk() {
    let c = scenario().check();
    let whole = simulate(&c);
    for every in [10_007, 999_983, 1_000_000, 7_000_000] {
        let mut seen = Vec::new();
        let (out, completed) = simulate_observed(&c, every, &mut |now, end| {
            seen.push((now, end));
            true
        });
        assert!(completed);
        assert_eq!(without_wall(&out.summary), without_wall(&whole.summary), "chunks of {every} ns");
        assert_eq!(seen.last(), Some(&(25_000_000, 25_000_000)));
        assert!(seen.windows(2).all(|w| w[0].0 < w[1].0), "time advances chunk by chunk");
        assert_eq!(seen.len() as u64, 25_000_000u64.div_ceil(every));
    }
}

#[test]
fn stopping_early_keeps_the_simulated_part() {
    let c = scenario().check();
    let (out, completed) = simulate_observed(&c, 1_000_000, &mut |now, _| now < 15_000_000);
    assert!(!completed);
    // Stopped at 15 ms of 25: 10 ms of the measured window (warm-up 5 ms).
    assert!((out.summary.sim_seconds - 0.010).abs() < 1e-12, "{}", out.summary.sim_seconds);
    assert!(out.summary.vms[0].throughput.gbps.unwrap() > 0.0);
}
