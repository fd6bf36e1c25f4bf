//! The exported profile loads with `Profile::load` and a simulator scenario runs on it.
use super::*;
use crate::probe::report::*;
use eventpath_sim::run::{run_parsed, RunOptions};
use eventpath_sim::scenario::Scenario;
use eventpath_sim::summary::Latency;

fn fake_probe() -> ProbeReport {
    let path = |us| NotificationPath { guest_cost_us_per_notification: Some(us), ..Default::default() };
    let p50 = |us| Latency { p50: Some(us), ..Default::default() };
    let mut r = ProbeReport { date: "2026-01-01".into(), host_cpu: "Test CPU @ 2.10GHz".into(), tsc_hz: 2_100_000_000, ..Default::default() };
    r.results.notification_paths = [("pio_ioeventfd", path(7.9)), ("mmio_ioeventfd", path(8.1))].into();
    r.results.msi_injection_to_handler.latency_us = p50(10.0);
    r.results.hlt_wakeup = [("halt_poll_0_gap_1000us".to_string(), HltWakeup { latency_us: p50(24.0), ..Default::default() })].into();
    r
}

#[test]
fn exported_profile_loads_and_a_scenario_runs_on_it() {
    let text = profile_toml(&fake_probe()).unwrap();
    let dir = std::env::temp_dir().join(format!("ep-kvm-profile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("profile.toml");
    std::fs::write(&path, &text).unwrap();
    let prof = Profile::load(path.to_str().unwrap()).unwrap();
    assert_eq!(prof.exit.io_instruction_ns.value, 7900.0);
    assert!(prof.exit.io_instruction_ns.source.starts_with("measured by eventpath kvm probe on 2026-01-01, Test CPU"));
    assert_eq!(prof.host.thread_wakeup_ns.value, 24000.0);
    assert_eq!(prof.exit.interrupt_delivery_ns.value, 10000.0);
    assert_eq!(prof.cpu.model, "Test CPU @ 2.10GHz");
    assert_eq!(prof.cpu.ghz.value, 2.1);
    let es2 = Profile::load("es2").unwrap();
    assert_eq!(prof.exit.timer_ns.value, es2.exit.timer_ns.value);
    assert_eq!(prof.exit.timer_ns.source, format!("not measured here; from es2 profile: {}", es2.exit.timer_ns.source));
    // every parameter says where it comes from
    for (key, param, _) in prof.params() {
        assert!(param.source.starts_with("measured by") || param.source.starts_with("not measured here; from es2"), "{key}");
    }
    // every key in the documented inline form
    assert!(text.contains("\n[exit]\n") && text.contains("io_instruction_ns = { value = 7900.0, unit = \"ns\", source = "));

    // the project's own simulator example, pointed at the exported profile
    let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/udp-send.toml");
    let scen = std::fs::read_to_string(example).unwrap().replace("profile = \"es2\"", &format!("profile = {:?}", path.to_str().unwrap()));
    assert!(scen.contains("profile.toml"), "examples/udp-send.toml no longer names profile = \"es2\"");
    let sc = Scenario::from_toml("on-probe", &scen).unwrap();
    let opts = RunOptions { duration_s: Some(0.05), ..Default::default() };
    let out = run_parsed(sc, "on-probe", &opts).unwrap();
    assert!(!format!("{:?}", out.summary).is_empty());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn host_layout_is_at_least_one_core() {
    let (s, c) = host_layout();
    assert!(s >= 1 && c >= 1);
}

#[test]
fn probe_json_has_the_documented_keys() {
    let v = serde_json::to_value(fake_probe()).unwrap();
    let keys = |v: &serde_json::Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&v), ["date", "host_cpu", "host_cpus", "quick", "results", "tsc_hz"]);
    let r = &v["results"];
    let want = ["hlt_wakeup", "kick_to_backend_handler", "msi_injection_to_handler", "msi_reroute_us", "notification_paths", "polled_ring_request"];
    assert_eq!(keys(r), want);
    assert_eq!(keys(&r["kick_to_backend_handler"]), ["mmio_ioeventfd", "note", "pio_ioeventfd"]);
    assert_eq!(keys(&r["hlt_wakeup"]["halt_poll_0_gap_1000us"]).len(), 5);
    assert_eq!(r["notification_paths"]["pio_ioeventfd"]["guest_cost_us_per_notification"], 7.9);
    assert!(r["msi_injection_to_handler"]["samples"].is_null());
}
