//! `[profile_overrides]`: a scenario replaces profile parameters without a profile file.

use eventpath_sim::profile::Profile;
use eventpath_sim::run::{run_parsed, RunOptions, RunOutput};
use eventpath_sim::scenario::Scenario;

fn scenario(overrides: &str) -> String {
    format!(
        r#"
name = "o"
profile = "es2"
duration_s = 0.05
warmup_s = 0.01
[[vm]]
name = "vm0"
vcpus = 1
[vm.workload]
kind = "tcp_stream"
message_bytes = 512
{overrides}
"#
    )
}

fn run(overrides: &str) -> RunOutput {
    let text = scenario(overrides);
    run_parsed(Scenario::from_toml("o.toml", &text).unwrap(), "o.toml", &RunOptions::default()).unwrap()
}

#[test]
fn overriding_a_cost_with_its_own_value_changes_nothing() {
    let io = Profile::load("es2").unwrap().exit.io_instruction_ns.value;
    let same = run(&format!("[profile_overrides.exit]\nio_instruction_ns = {io}"));
    let base = run("");
    assert_eq!(same.summary.vms[0].exits_per_s, base.summary.vms[0].exits_per_s);
    assert_eq!(same.summary.events, base.summary.events);
}

#[test]
fn a_costlier_kick_exit_raises_eht_and_lowers_the_kick_rate() {
    let base = run("");
    let slow = run("[profile_overrides.exit]\nio_instruction_ns = 6000");
    let (b, s) = (&base.summary.vms[0], &slow.summary.vms[0]);
    assert!(s.eht_pct.unwrap() > b.eht_pct.unwrap() + 5.0, "EHT {:?} -> {:?}", b.eht_pct, s.eht_pct);
    assert!(s.kicks_per_s.unwrap() < b.kicks_per_s.unwrap(), "kicks {:?} -> {:?}", b.kicks_per_s, s.kicks_per_s);
}

#[test]
fn the_override_is_recorded_in_the_parameters_source() {
    let p = Profile::load("es2").unwrap().with_overrides(&[("exit.eoi_ns".into(), 1500.0)], "s.toml").unwrap();
    assert_eq!(p.exit.eoi_ns.value, 1500.0);
    assert!(p.exit.eoi_ns.source.contains("s.toml") && p.exit.eoi_ns.source.contains("1200"), "{}", p.exit.eoi_ns.source);
}

fn error_of(overrides: &str) -> String {
    let text = scenario(overrides);
    let r = Scenario::from_toml("o.toml", &text).and_then(|s| run_parsed(s, "o.toml", &RunOptions::default()));
    let m = r.expect_err("bad override must be rejected").to_string();
    assert!(!m.contains('\n'), "one line: {m}");
    m
}

#[test]
fn bad_overrides_name_the_key_and_what_is_allowed() {
    let m = error_of("[profile_overrides.exit]\neoi = 1500");
    assert!(m.contains("profile_overrides.exit.eoi") && m.contains("exit.eoi_ns"), "{m}");
    let m = error_of("[profile_overrides.exits]\neoi_ns = 1500");
    assert!(m.contains("profile_overrides.exits.eoi_ns") && m.contains("sections are"), "{m}");
    let m = error_of("[profile_overrides.exit]\neoi_ns = \"fast\"");
    assert!(m.contains("profile_overrides.exit.eoi_ns") && m.contains("number"), "{m}");
    let m = error_of("[profile_overrides.exit]\neoi_ns = -5");
    assert!(m.contains("profile_overrides.exit.eoi_ns") && m.contains("0..=1000000000 ns"), "{m}");
    let m = error_of("[profile_overrides.guest]\nnapi_weight = 0.5");
    assert!(m.contains("profile_overrides.guest.napi_weight") && m.contains("whole number"), "{m}");
}
