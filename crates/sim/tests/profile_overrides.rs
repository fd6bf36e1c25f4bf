//! `[profile_overrides]`: a scenario replaces profile parameters without a profile file.

mod common;

use common::{Sc, Vm};
use eventpath_sim::profile::Profile;

/// A TCP stream; a test adds its overrides.
fn scenario() -> Sc {
    let vm = Vm::new("vm0", 1).workload("kind = \"tcp_stream\"\nmessage_bytes = 512");
    Sc::new("o", "es2").duration(0.05).warmup(0.01).vm(vm)
}

#[test]
fn overriding_a_cost_with_its_own_value_changes_nothing() {
    let io = Profile::load("es2").unwrap().exit.io_instruction_ns.value;
    let same = scenario().profile_override("exit.io_instruction_ns", io).run();
    let base = scenario().run();
    assert_eq!(same.summary.vms[0].exits_per_s, base.summary.vms[0].exits_per_s);
    assert_eq!(same.summary.events, base.summary.events);
}

#[test]
fn a_costlier_kick_exit_raises_eht_and_lowers_the_kick_rate() {
    let base = scenario().run();
    let slow = scenario().profile_override("exit.io_instruction_ns", 6000).run();
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

/// The message that refuses the scenario with the override `key` = `value`.
fn error_of(key: &str, value: impl common::Lit) -> String {
    let m = scenario().profile_override(key, value).error();
    assert!(!m.contains('\n'), "one line: {m}");
    m
}

#[test]
fn bad_overrides_name_the_key_and_what_is_allowed() {
    let m = error_of("exit.eoi", 1500);
    assert!(m.contains("profile_overrides.exit.eoi") && m.contains("exit.eoi_ns"), "{m}");
    let m = error_of("exits.eoi_ns", 1500);
    assert!(m.contains("profile_overrides.exits.eoi_ns") && m.contains("sections are"), "{m}");
    let m = error_of("exit.eoi_ns", "fast");
    assert!(m.contains("profile_overrides.exit.eoi_ns") && m.contains("number"), "{m}");
    let m = error_of("exit.eoi_ns", -5);
    assert!(m.contains("profile_overrides.exit.eoi_ns") && m.contains("0..=1000000000 ns"), "{m}");
    let m = error_of("guest.napi_weight", 0.5);
    assert!(m.contains("profile_overrides.guest.napi_weight") && m.contains("whole number"), "{m}");
}

/// Built-in profiles are parsed once per process and copied after (issue 52 item 1): an
/// overridden run must not change what the next load of the same profile gives.
#[test]
fn an_override_never_reaches_the_next_load_of_its_builtin_profile() {
    let before = toml::to_string(&Profile::load("es2").unwrap()).unwrap();
    let mut p = Profile::load("es2").unwrap();
    p.exit.eoi_ns.value = 1.0;
    let _ = scenario().profile_override("exit.eoi_ns", 1500).run();
    let after = toml::to_string(&Profile::load("es2").unwrap()).unwrap();
    assert_eq!(before, after);
    assert_eq!(Profile::load("es2").unwrap().exit.eoi_ns.value, Profile::parse("es2", eventpath_sim::profile::BUILTIN[0].1).unwrap().exit.eoi_ns.value);
}
