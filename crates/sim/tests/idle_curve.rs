//! Idle states that depend on the idle length (issue 28): a nested host's probed idle curve
//! under the haltpoll governor (examples/idle/), switched by profile keys; and the refusal of
//! a bad idle-state table, one line naming the key.

mod common;

use common::{Sc, Vm};
use eventpath_sim::profile::{Profile, BUILTIN};
use eventpath_sim::run::RunOutput;

const PROFILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/idle/nested-host-profile.toml");

/// The testbed's request stream (examples/idle/idle-curve.toml) at `rate` requests/s on `profile`.
fn stream(profile: &str, rate: f64) -> RunOutput {
    let vm = Vm::new("vm0", 1).pins(&[0]).vhost_pin(1).workload(&format!("kind = \"request_stream\"\nrate = {rate}"));
    // The guest's kick exit as KVM-NOTES measured it on an idle machine (PIO + ioeventfd,
    // 7.8-8.0 µs), not the probe's loaded 62 µs: the request then waits for the back end's
    // wake-up, not for its own kick exit, and its latency shows the back end's kick-to-run.
    Sc::new("idle-curve", profile).pcpus(2).duration(0.4).warmup(0.05).vm(vm).profile_override("exit.io_instruction_ns", 8000).run()
}

/// (request latency p50 in µs, the back end's CPU per wake-up from idle in µs).
fn latency_and_cpu(o: &RunOutput) -> (f64, f64) {
    let s = &o.summary;
    let wakeups: f64 = s.host.idle_wakeups_by_cstate_per_s.values().sum();
    let util = s.host.io_threads[0].util_pct.unwrap() / 100.0;
    (s.vms[0].latency_us.p50.unwrap(), util / wakeups * 1e6)
}

#[test]
fn idle_curve_wake_up_latency_falls_with_the_rate() {
    let runs: Vec<_> = [200.0, 1_000.0, 10_000.0].iter().map(|&r| stream(PROFILE, r)).collect();
    let lat: Vec<f64> = runs.iter().map(|o| latency_and_cpu(o).0).collect();
    assert!(lat[0] > lat[1] + 20.0 && lat[1] > lat[2], "request latency p50 by rate: {lat:?} µs");
    // At 200/s the back end idles ~5 ms between kicks and wakes from a deep halt outcome; at
    // 1 k/s from a shallower one.
    let states = |o: &RunOutput| o.summary.host.idle_wakeups_by_cstate_per_s.clone();
    let (slow, fast) = (states(&runs[0]), states(&runs[1]));
    let deepest_used = |m: &std::collections::BTreeMap<String, f64>| m.iter().filter(|(_, &v)| v > 0.0).map(|(k, _)| k.clone()).collect::<Vec<_>>();
    assert_ne!(deepest_used(&slow), deepest_used(&fast), "200/s {slow:?}, 1 k/s {fast:?}");
    let (cpu_slow, cpu_fast) = (latency_and_cpu(&runs[0]).1, latency_and_cpu(&runs[1]).1);
    assert!(cpu_slow > cpu_fast + 10.0, "CPU per wake-up: {cpu_slow:.1} µs at 200/s, {cpu_fast:.1} µs at 1 k/s");
}

#[test]
fn without_the_curve_a_wake_up_costs_the_same_whatever_the_idle() {
    let text = std::fs::read_to_string(PROFILE).unwrap();
    // One state for every idle: what the profile keys give without a curve.
    let one = "cstates = { source = \"one state\", states = [{ name = \"any\", exit_latency_ns = 0, target_residency_ns = 0 }] }";
    let flat: String = text.lines().map(|l| if l.starts_with("cstates = ") { format!("{one}\n") } else { format!("{l}\n") }).collect();
    assert_ne!(flat, text, "the example profile has its idle curve on one `cstates = ` line");
    let path = std::env::temp_dir().join(format!("ep-idle-flat-{}.toml", std::process::id()));
    std::fs::write(&path, flat).unwrap();
    let p = path.to_str().unwrap();
    let (slow, fast) = (latency_and_cpu(&stream(p, 500.0)), latency_and_cpu(&stream(p, 5_000.0)));
    std::fs::remove_file(&path).ok();
    assert!((slow.0 - fast.0).abs() < 1.0, "latency p50 {} vs {} µs", slow.0, fast.0);
    assert!((slow.1 - fast.1).abs() < 1.0, "CPU per wake-up {} vs {} µs", slow.1, fast.1);
}

fn es2_text() -> &'static str {
    BUILTIN.iter().find(|(n, _)| *n == "es2").unwrap().1
}

/// The message refusing es2.toml with `from` replaced by `to` (one line).
fn error(from: &str, to: &str) -> String {
    let text = es2_text();
    assert!(text.contains(from), "test bug: {from:?} not in es2.toml");
    let m = Profile::parse("p.toml", &text.replacen(from, to, 1)).expect_err("bad table must be refused").to_string();
    assert!(!m.contains('\n'), "one line only: {m:?}");
    m
}

const C1E: &str = "{ name = \"C1E\", exit_latency_ns = 10000, target_residency_ns = 80000";
const GOV: &str = "states = [";

#[test]
fn a_table_out_of_order_is_refused_naming_the_state() {
    let m = error(C1E, "{ name = \"C1E\", exit_latency_ns = 10000, target_residency_ns = 500");
    assert!(m.contains("key `host.cstates.states[1]`") && m.contains("shallowest first"), "{m}");
}

#[test]
fn negative_latencies_and_cpu_are_refused_naming_the_key() {
    let m = error(C1E, "{ name = \"C1E\", exit_latency_ns = -10000, target_residency_ns = 80000");
    assert!(m.contains("key `host.cstates.states[1].exit_latency_ns`: value -10000 is not allowed"), "{m}");
    let m = error("target_residency_ns = 80000, wake_cpu_ns = 0", "target_residency_ns = 80000, wake_cpu_ns = -1");
    assert!(m.contains("key `host.cstates.states[1].wake_cpu_ns`: value -1 is not allowed"), "{m}");
}

#[test]
fn governor_keys_are_checked() {
    let m = error(GOV, "governor = \"ladder\"\nstates = [");
    assert!(m.contains("governor") && m.contains("menu") && m.contains("haltpoll"), "{m}");
    let m = error(GOV, "haltpoll = { guest_halt_poll_ns = 0 }\nstates = [");
    assert!(m.contains("key `host.cstates.haltpoll`") && m.contains("governor = \"haltpoll\""), "{m}");
    let m = error(GOV, "governor = \"haltpoll\"\nhaltpoll = { grow_start_ns = 0 }\nstates = [");
    assert!(m.contains("key `host.cstates.haltpoll.grow_start_ns`: value 0 is not allowed"), "{m}");
    let m = error(GOV, "governor = \"haltpoll\"\nhaltpoll = { grow_start = 1 }\nstates = [");
    assert!(m.contains("key `host.cstates.haltpoll.grow_start`") && m.contains("unknown field"), "{m}");
    let text = es2_text();
    let start = text.find(GOV).unwrap();
    let end = start + text[start..].find("\n]\n").unwrap() + 3;
    let one = "governor = \"haltpoll\"\nstates = [{ name = \"C1\", exit_latency_ns = 1000, target_residency_ns = 1000 }]\n";
    let m = Profile::parse("p.toml", &format!("{}{one}{}", &text[..start], &text[end..])).unwrap_err().to_string();
    assert!(m.contains("key `host.cstates.states`") && m.contains("at least 2"), "{m}");
    // and a good haltpoll table loads
    let ok = es2_text().replacen(GOV, "governor = \"haltpoll\"\nhaltpoll = { guest_halt_poll_ns = 0 }\nstates = [", 1);
    let p = Profile::parse("p.toml", &ok).unwrap();
    assert_eq!(p.host.cstates.haltpoll.unwrap().guest_halt_poll_ns, 0);
}

#[test]
fn the_bare_metal_profiles_keep_menu_and_no_wake_up_cpu() {
    for (name, _) in BUILTIN {
        let p = Profile::load(name).unwrap();
        assert_eq!(p.host.cstates.governor, eventpath_policy::idle::GovernorKind::Menu, "{name}");
        assert!(p.host.cstates.states.iter().all(|s| s.wake_cpu_ns == 0.0), "{name}");
    }
}

#[test]
fn the_example_runs_on_its_profile() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../");
    let text = std::fs::read_to_string(format!("{root}examples/idle/idle-curve.toml")).unwrap();
    let rel = "profile = \"examples/idle/nested-host-profile.toml\"";
    assert!(text.contains(rel), "the example names its profile relative to the repository root");
    let sc = eventpath_sim::scenario::Scenario::from_toml("idle-curve", &text.replace(rel, &format!("profile = {PROFILE:?}"))).unwrap();
    let opts = eventpath_sim::run::RunOptions { duration_s: Some(0.05), ..Default::default() };
    let out = eventpath_sim::run::run_parsed(sc, "idle-curve", &opts).unwrap();
    assert!(out.summary.host.idle_wakeups_by_cstate_per_s.values().sum::<f64>() > 0.0);
}
