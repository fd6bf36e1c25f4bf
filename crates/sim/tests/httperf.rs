//! The httperf-like open-loop client (`kind = "httperf"`, hBalance §6.1.3): the reply rate
//! equals the offered rate while the server keeps up and saturates below it when it cannot;
//! replies that time out are errors; the ledger balances; bad values are refused.

mod common;

use common::{Sc, Vm};
use eventpath_sim::run::RunOutput;
use eventpath_sim::summary::HttperfSummary;

/// One VM of 2 vCPUs with 4 Apache workers, offered `rate` connections/s of a 4 KB file.
fn sc(rate: f64, timeout_ms: u32) -> Sc {
    Sc::new("hp", "es2").duration(0.5).warmup(0.1).pcpus(4).vm(Vm::new("vm0", 2).routing("lowest_priority_rr").workload(&format!(
        "kind = \"httperf\"\nrate_rps = {rate}\nfile_bytes = 4096\ntimeout_ms = {timeout_ms}\nworkers = 4"
    )))
}

fn run(sc: &Sc) -> RunOutput {
    let (o, l) = sc.run_with_ledger();
    l.check().unwrap();
    assert!(o.summary.stalled_flows.is_empty(), "{:?}", o.summary.stalled_flows);
    o
}

fn hp(o: &RunOutput) -> HttperfSummary {
    o.summary.vms[0].httperf.clone().expect("an httperf VM reports vms[].httperf")
}

#[test]
fn the_reply_rate_follows_the_offered_rate_until_the_server_saturates() {
    for rate in [1000.0, 5000.0] {
        let h = hp(&run(&sc(rate, 1000)));
        let reply = h.reply_rate_per_s.unwrap();
        assert!((reply - rate).abs() <= 0.01 * rate, "offered {rate}/s, replies {reply}/s");
        assert_eq!(h.errors, 0, "{h:?}");
    }
    // Far past the server's capacity: the reply rate stays well below the offered rate, and
    // doubling the offer again does not raise it much.
    let a = hp(&run(&sc(40_000.0, 1000))).reply_rate_per_s.unwrap();
    let b = hp(&run(&sc(80_000.0, 1000))).reply_rate_per_s.unwrap();
    assert!(a < 0.8 * 40_000.0, "{a}");
    assert!(b < 1.3 * a, "saturated: {a} then {b}");
}

#[test]
fn replies_that_outlive_the_time_out_are_errors() {
    let h = hp(&run(&sc(80_000.0, 20)));
    assert!(h.errors > 0 && h.error_pct.unwrap() > 0.0, "{h:?}");
    // Deterministic.
    assert_eq!(hp(&run(&sc(80_000.0, 20))).errors, h.errors);
}

#[test]
fn bad_values_are_refused_naming_the_key() {
    let base = || Sc::new("bad", "es2").duration(0.01).warmup(0.001);
    for (lines, want) in [
        ("kind = \"httperf\"\nrate_rps = 0\nfile_bytes = 10", "rate_rps"),
        ("kind = \"httperf\"\nrate_rps = 100\nfile_bytes = 0", "file_bytes"),
        ("kind = \"httperf\"\nrate_rps = 100\nfile_bytes = 10\ntimeout_ms = 0", "timeout_ms"),
        ("kind = \"httperf\"\nfile_bytes = 10", "rate_rps"),
    ] {
        let m = base().vm(Vm::new("vm0", 1).workload(lines)).error();
        assert!(m.contains(want) && !m.contains('\n'), "{lines}: {m}");
    }
}
