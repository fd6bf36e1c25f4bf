//! The outlier rule on synthetic trial sets; what each trial set exports; the exported profile
//! loads with `Profile::load` and a simulator scenario runs on it. No KVM needed.
use super::*;
use crate::probe::export;
use crate::probe::report::*;
use crate::probe::stats::{judge, set_aside_allowed, MAX_SPREAD};
use eventpath_sim::run::{run_parsed, RunOptions};
use eventpath_sim::scenario::Scenario;
use eventpath_sim::summary::Latency;

fn some(v: &[f64]) -> Vec<Option<f64>> {
    v.iter().map(|&x| Some(x)).collect()
}

#[test]
fn rule_accepts_trials_that_agree_and_exports_their_median() {
    let j = judge(&some(&[31_000.0, 29_500.0, 33_000.0, 30_200.0, 45_000.0]), "ns");
    assert_eq!(j.refused, None);
    let s = j.stats.unwrap();
    assert_eq!(s.median, 31_000.0);
    assert_eq!((s.min, s.max), (29_500.0, 45_000.0));
    assert!((s.spread - 45.0 / 29.5).abs() < 1e-12);
    assert!(s.set_aside.is_empty(), "nothing to set aside when the spread is within {MAX_SPREAD}x");
    // even number of values: the mean of the middle two
    assert_eq!(judge(&some(&[10.0, 20.0, 12.0, 14.0]), "ns").stats.unwrap().median, 13.0);
}

#[test]
fn rule_sets_aside_one_wild_trial_of_five_but_not_two() {
    // the known bad value: one MSI injection trial at ~3 ms among ~45 µs ones
    let one = judge(&some(&[44_100.0, 46_900.0, 2_987_663.0, 45_200.0, 47_000.0]), "ns");
    assert_eq!(one.refused, None);
    let s = one.stats.unwrap();
    assert_eq!(s.set_aside, vec![2]);
    assert_eq!(s.median, 46_900.0);
    assert!(s.spread > 60.0 && s.kept_spread < 1.1);
    let two = judge(&some(&[44_100.0, 2_900_000.0, 2_987_663.0, 45_200.0, 47_000.0]), "ns");
    let why = two.refused.expect("two wild trials of five are refused");
    assert!(why.contains("trials disagree") && why.contains("after setting aside 1 of 5"), "{why}");
    assert!(why.contains("µs") && why.contains("ms"), "{why}");
}

#[test]
fn rule_with_three_trials_sets_nothing_aside() {
    assert_eq!(set_aside_allowed(3), 0);
    assert_eq!(set_aside_allowed(5), 1);
    assert_eq!(set_aside_allowed(10), 2);
    let j = judge(&some(&[45_000.0, 46_000.0, 2_987_663.0]), "ns");
    assert!(j.refused.unwrap().contains("max/min 66.4 > 3"));
    assert_eq!(judge(&some(&[45_000.0, 46_000.0, 130_000.0]), "ns").refused, None, "2.9x is agreement");
}

#[test]
fn rule_refuses_a_broad_spread_with_no_single_culprit() {
    // every trial within 3x of the median, but 20 .. 150 overall
    let j = judge(&some(&[20.0, 40.0, 60.0, 90.0, 150.0]), "ns");
    let s = j.stats.clone().unwrap();
    assert_eq!(s.set_aside.len(), 1, "one trial set aside, still 4.5x");
    assert!(j.refused.is_some());
}

#[test]
fn rule_counts_trials_without_a_value_against_the_same_allowance() {
    let j = judge(&[Some(30.0), None, Some(31.0), Some(29.0), Some(32.0)], "ns");
    assert_eq!(j.refused, None);
    assert_eq!(j.stats.as_ref().unwrap().set_aside, vec![1]);
    assert_eq!(j.stats.unwrap().median, 30.5);
    // non-finite and non-positive values are no value
    let j = judge(&[Some(30.0), Some(f64::NAN), Some(31.0), Some(0.0), Some(32.0)], "ns");
    assert!(j.refused.unwrap().starts_with("2 of 5 trials gave no value"));
    // a missing trial uses the allowance: a wild one then cannot be set aside too
    let j = judge(&[Some(30.0), None, Some(31.0), Some(3000.0), Some(32.0)], "ns");
    assert!(j.refused.unwrap().contains("trials disagree"));
    let none = judge(&[None, None, None], "ns");
    assert_eq!(none.stats, None);
    assert_eq!(none.refused.unwrap(), "none of 3 trials gave a value");
}

/// One trial's results with the values each exported parameter is read from (µs).
fn trial(kick_load_us: f64, msi_p50_us: f64, k2b: (f64, f64), hlt_us: f64, backend_cpu_us: f64, tight_us: f64) -> ProbeResults {
    let path = |us| NotificationPath { guest_cost_us_per_notification: Some(us), ..Default::default() };
    let lat = |p50, p90| Latency { p50: Some(p50), p90: Some(p90), ..Default::default() };
    let mut r = ProbeResults {
        notification_paths: [("pio_ioeventfd", path(tight_us)), ("mmio_ioeventfd", path(tight_us * 0.9))].into(),
        ..Default::default()
    };
    r.kick_under_load.guest_cost_us_per_kick = Some(kick_load_us);
    r.msi_injection_to_handler.latency_us = lat(msi_p50_us * 1.5, msi_p50_us * 3.0);
    r.msi_injection_to_handler.vcpu_running_latency_us = lat(msi_p50_us, msi_p50_us * 2.0);
    r.kick_to_backend_handler.pio_ioeventfd =
        KickSamples { latency_us: lat(k2b.0, k2b.1), backend_cpu_us_per_wakeup: Some(backend_cpu_us), backend_wakeups: 1000, ..Default::default() };
    r.timed_sleep = TimedSleep { asked_us: 10.0, wall_us_per_sleep: Some(35.0), cpu_us_per_sleep: Some(21.0), sleeps: 1000, note: "" };
    r.polled_ring_request.backend_ns_per_request = Some(120.0);
    r.polled_ring_request.guest_ns_per_request = Some(90.0);
    let polled = HltWakeup { latency_us: lat(40.0, 45.0), halt_exits: Some(1000), halt_successful_poll: Some(950), ..Default::default() };
    r.hlt_wakeup = [
        ("halt_poll_0_gap_1000us".to_string(), HltWakeup { latency_us: lat(hlt_us, hlt_us * 1.5), ..Default::default() }),
        ("halt_poll_2ms_gap_100us".to_string(), polled),
    ]
    .into();
    r
}

/// Five trials like this machine's, the third with an MSI injection outlier: `msi_wild` trials
/// at ~3 ms.
fn fake_probe(msi_wild: usize) -> ProbeReport {
    let msi = |i: usize| if i >= 2 && i < 2 + msi_wild { 2_987.663 } else { 44.0 + i as f64 };
    let results = (0..5).map(|i| trial(24.0 + i as f64, msi(i), (30.0 + i as f64, 40.0 + i as f64), 89.0 + i as f64, 20.0, 4.5)).collect();
    export::report("Test CPU @ 2.10GHz".into(), "2026-01-01".into(), 2_100_000_000, 2, false, results).unwrap()
}

#[test]
fn each_parameter_is_exported_as_the_quantity_the_simulator_applies_it_to() {
    let p = fake_probe(0);
    let keys = |m: &std::collections::BTreeMap<String, Exported>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(
        keys(&p.profile),
        [
            "exit.interrupt_delivery_ns",
            "exit.io_instruction_ns",
            "guest.request_ns",
            "host.halt_poll_wake_ns",
            "host.halt_wakeup_ns",
            "host.thread_wakeup_ns",
            "host.thread_wakeup_spread_ns",
            "host.timer_wakeup_ns",
            "vhost.timed_sleep_ns",
            "vhost.tx_packet_ns",
            "vhost.wakeup_ns"
        ]
    );
    assert_eq!(keys(&p.not_in_profile), ["backend_cpu_per_wakeup_ns", "io_kick_tight_loop_ns", "vcpu_hlt_wakeup_ns"]);
    assert!(p.refused.is_empty());
    // kick under load, not the tight loop
    assert_eq!(p.profile["exit.io_instruction_ns"].value, 26_000.0);
    assert_eq!(p.not_in_profile["io_kick_tight_loop_ns"].value, 4_500.0);
    // kick -> backend thread, less the part of the kick exit before the signal (es2's 700 ns)
    assert_eq!(p.profile["host.thread_wakeup_ns"].value, 32_000.0 - 700.0);
    assert_eq!(p.profile["host.thread_wakeup_spread_ns"].value, 12_500.0);
    // the vCPU's HLT wake-up is not the backend's: the simulator adds the difference after a
    // woken vCPU thread's switch-in (raw value kept beside it)
    assert_eq!(p.not_in_profile["vcpu_hlt_wakeup_ns"].value, 91_000.0);
    assert_eq!(p.profile["host.halt_wakeup_ns"].value, 91_000.0 - (32_000.0 - 700.0));
    // a halt-polling vCPU's wake-up, from the run whose halts nearly all ended in a poll
    assert_eq!(p.profile["host.halt_poll_wake_ns"].value, 40_000.0);
    // a timed sleep's overshoot beyond the per-wake-up CPU the simulator charges
    assert_eq!(p.profile["host.timer_wakeup_ns"].value, 35_000.0 - 10_000.0 - 21_000.0);
    assert_eq!(p.profile["vhost.timed_sleep_ns"].value, 21_000.0);
    // per-request costs of each side, from the polled stream
    assert_eq!((p.profile["vhost.tx_packet_ns"].value, p.profile["guest.request_ns"].value), (120.0, 90.0));
    // the backend's CPU per wake-up
    assert_eq!(p.not_in_profile["backend_cpu_per_wakeup_ns"].value, 20_000.0);
    assert_eq!(p.profile["vhost.wakeup_ns"].value, 20_000.0);
    let e = &p.profile["exit.interrupt_delivery_ns"];
    assert_eq!(e.stats.trials.len(), 5);
    assert_eq!((e.stats.min, e.stats.max, e.value), (44_000.0, 48_000.0, 46_000.0));
}

#[test]
fn the_spread_is_at_most_the_wake_up_and_goes_with_it() {
    let results: Vec<_> = (0..3).map(|_| trial(24.0, 44.0, (10.0, 30.0), 89.0, 20.0, 4.5)).collect();
    let (prof, _, refused) = export::evaluate(&results, 700.0);
    assert!(refused.is_empty());
    assert_eq!(prof["host.thread_wakeup_ns"].value, 9_300.0);
    assert_eq!(prof["host.thread_wakeup_spread_ns"].value, 9_300.0, "25 us clamped to the wake-up");
    let results: Vec<_> = [10.0, 100.0, 10.0].iter().map(|&p50| trial(24.0, 44.0, (p50, p50 + 16.0), 89.0, 20.0, 4.5)).collect();
    let (prof, _, refused) = export::evaluate(&results, 700.0);
    assert!(!prof.contains_key("host.thread_wakeup_ns") && !prof.contains_key("host.thread_wakeup_spread_ns"));
    assert!(refused["host.thread_wakeup_spread_ns"].reason.contains("host.thread_wakeup_ns"));
}

fn write(text: &str, tag: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("ep-kvm-profile-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("profile.toml");
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

#[test]
fn exported_profile_loads_and_a_scenario_runs_on_it() {
    let probe = fake_probe(0);
    let text = profile_toml(&probe).unwrap();
    let (dir, path) = write(&text, "ok");
    let prof = Profile::load(path.to_str().unwrap()).unwrap();
    assert_eq!(prof.exit.io_instruction_ns.value, 26_000.0);
    let src = &prof.exit.io_instruction_ns.source;
    assert!(src.starts_with("measured by eventpath kvm probe on 2026-01-01, Test CPU"), "{src}");
    assert!(src.contains("median of 5 trials, min 24.000 µs, max 28.000 µs, spread max/min 1.17"), "{src}");
    assert_eq!(prof.host.thread_wakeup_ns.value, 31_300.0);
    assert_eq!(prof.host.thread_wakeup_spread_ns.value, 12_500.0);
    assert_eq!(prof.exit.interrupt_delivery_ns.value, 46_000.0);
    assert!(prof.host.cstates.states.is_empty());
    assert_eq!(prof.cpu.model, "Test CPU @ 2.10GHz");
    assert_eq!(prof.cpu.ghz.value, 2.1);
    let es2 = Profile::load("es2").unwrap();
    // MMIO kicks are not EPT violations, which the simulator never raises: es2's value stays
    assert_eq!(prof.exit.ept_violation_ns.value, es2.exit.ept_violation_ns.value);
    assert_eq!(prof.exit.timer_ns.value, es2.exit.timer_ns.value);
    assert_eq!(prof.exit.timer_ns.source, format!("not measured here; from es2 profile: {}", es2.exit.timer_ns.source));
    // every parameter says where it comes from; the post-exit slowdown is none (end-to-end
    // measurements on a tiny guest), not es2's calibrated one
    assert_eq!(prof.exit.indirect_per_direct.value, 0.0);
    assert!(prof.exit.indirect_per_direct.free.is_none());
    // one back-end thread mapping every VM: no page-table change between their queues
    assert_eq!(prof.vhost.queue_switch_ns.value, 0.0);
    for (key, param, _) in prof.params() {
        let ok = param.source.starts_with("measured by") || param.source.starts_with("not measured here; from es2")
            || (matches!(key, "exit.indirect_per_direct" | "vhost.queue_switch_ns") && param.source.starts_with("first principles"))
            // the testbed's back end has no host network stack below it
            || (key.starts_with("host.") && param.value == 0.0 && param.source.contains("no host network stack"));
        assert!(ok, "{key}");
    }
    // every key in the documented inline form; the values without a key listed in the header
    assert!(text.contains("\n[exit]\n") && text.contains("io_instruction_ns = { value = 26000.0, unit = \"ns\", source = "));
    assert!(text.contains("#   vcpu_hlt_wakeup_ns = 91.000 µs (89.000 µs .. 93.000 µs over 5 trials)"), "{text}");
    assert!(!text.contains("REFUSED"));

    // the project's own simulator example, pointed at the exported profile (as a scenario names
    // a profile file: profile = "<path>")
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
fn a_refused_parameter_is_not_written_and_the_profile_still_loads() {
    let one = fake_probe(1);
    // one wild trial of five: set aside; the median of all five is the next value up
    assert_eq!(one.profile["exit.interrupt_delivery_ns"].value, 47_000.0);
    assert_eq!(one.profile["exit.interrupt_delivery_ns"].stats.set_aside, vec![2]);
    let text = profile_toml(&one).unwrap();
    assert!(text.contains("trial(s) [2] set aside"));

    let two = fake_probe(2);
    assert!(!two.profile.contains_key("exit.interrupt_delivery_ns"));
    let r = &two.refused["exit.interrupt_delivery_ns"];
    assert!(r.profile_key && r.reason.contains("trials disagree"), "{}", r.reason);
    assert_eq!(r.stats.as_ref().unwrap().trials[2], Some(2_987_663.0));
    let text = profile_toml(&two).unwrap();
    assert!(!text.contains("2987663"), "the outlier is not written");
    assert!(text.contains("# REFUSED by the outlier rule") && text.contains("#   exit.interrupt_delivery_ns: trials disagree"));
    let (dir, path) = write(&text, "refused");
    let prof = Profile::load(path.to_str().unwrap()).unwrap();
    let es2 = Profile::load("es2").unwrap();
    assert_eq!(prof.exit.interrupt_delivery_ns.value, es2.exit.interrupt_delivery_ns.value);
    let src = &prof.exit.interrupt_delivery_ns.source;
    assert!(src.starts_with("not measured here (the probe refused its measurement: trials disagree") && src.ends_with(&es2.exit.interrupt_delivery_ns.source), "{src}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn host_layout_is_at_least_one_core() {
    let (s, c) = host_layout();
    assert!(s >= 1 && c >= 1);
}

#[test]
fn probe_json_has_the_documented_keys() {
    let v = serde_json::to_value(fake_probe(2)).unwrap();
    let keys = |v: &serde_json::Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    let top = ["date", "host_cpu", "host_cpus", "host_idle", "not_in_profile", "outlier_rule", "profile", "quick", "refused", "results", "trials", "tsc_hz"];
    assert_eq!(keys(&v), top);
    assert_eq!(v["trials"], 5);
    let e = &v["profile"]["exit.io_instruction_ns"];
    assert_eq!(keys(e), ["kept_spread", "max", "measures", "median", "min", "set_aside", "spread", "trials", "unit", "value"]);
    assert_eq!(e["trials"].as_array().unwrap().len(), 5);
    assert!(v["not_in_profile"]["vcpu_hlt_wakeup_ns"]["why_not_in_profile"].is_string());
    assert_eq!(keys(&v["refused"]["exit.interrupt_delivery_ns"]), ["measures", "profile_key", "reason", "stats", "unit"]);
    let r = &v["results"][0];
    let want = ["hlt_wakeup", "idle_curve", "kick_to_backend_handler", "kick_under_load", "msi_injection_to_handler", "msi_reroute_us", "notification_paths", "polled_ring_request", "timed_sleep"];
    assert_eq!(keys(r), want);
    assert_eq!(keys(&r["kick_to_backend_handler"]), ["mmio_ioeventfd", "note", "pio_ioeventfd"]);
    assert_eq!(keys(&r["kick_to_backend_handler"]["pio_ioeventfd"]), ["backend_cpu_us_per_wakeup", "backend_idle_us_per_wakeup", "backend_wakeups", "guest_cost_us_per_kick", "kicks", "latency_us", "samples"]);
    assert_eq!(keys(&r["hlt_wakeup"]["halt_poll_0_gap_1000us"]).len(), 5);
    assert_eq!(r["notification_paths"]["pio_ioeventfd"]["guest_cost_us_per_notification"], 4.5);
    assert!(r["msi_injection_to_handler"]["samples"].is_null());
}

#[test]
fn a_polled_wake_up_counts_only_where_the_polls_succeeded() {
    let mut r = trial(24.0, 44.0, (30.0, 40.0), 89.0, 20.0, 4.5);
    let h = r.hlt_wakeup.get_mut("halt_poll_2ms_gap_100us").unwrap();
    h.halt_successful_poll = Some(500); // half the halts blocked: not the polled wake-up
    let results = vec![r.clone(), r.clone(), r];
    let p = export::report("Test CPU @ 2.10GHz".into(), "2026-01-01".into(), 2_100_000_000, 2, true, results).unwrap();
    assert!(!p.profile.contains_key("host.halt_poll_wake_ns"), "{:?}", p.profile.keys());
}

/// `trial` with an idle curve: at idles of 0.3, 1, 3 and 9 ms the kick -> run p50 is 25, 28,
/// 50, 80 µs and the backend's CPU per wake-up 21, 24, 45, 65 µs (a probe of this machine).
fn curve_trial(scale: f64) -> ProbeResults {
    let mut r = trial(24.0, 44.0, (30.0, 40.0), 89.0, 20.0, 4.5);
    let pts = [(300.0, 25.0, 21.0), (1_000.0, 28.0, 24.0), (3_000.0, 50.0, 45.0), (9_000.0, 80.0, 65.0)];
    r.idle_curve = IDLE_GAPS_US
        .iter()
        .zip(pts)
        .map(|(&g, (idle, lat, cpu))| IdleCurvePoint {
            gap_us: g,
            kick: KickSamples {
                latency_us: Latency { p50: Some(lat * scale), p90: Some(lat * scale + 4.0), ..Default::default() },
                backend_cpu_us_per_wakeup: Some(cpu),
                backend_idle_us_per_wakeup: Some(idle),
                backend_wakeups: 100,
                ..Default::default()
            },
        })
        .collect();
    r
}

fn curve_probe(governor: &str) -> ProbeReport {
    let results = [1.0, 1.02, 0.98].iter().map(|&k| curve_trial(k)).collect();
    let mut p = export::report("Test CPU @ 2.10GHz".into(), "2026-01-01".into(), 2_100_000_000, 2, true, results).unwrap();
    p.host_idle.governor = governor.into();
    p.host_idle.haltpoll = [("guest_halt_poll_ns", "0"), ("guest_halt_poll_grow_start", "50000"), ("guest_halt_poll_allow_shrink", "Y")]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    p
}

#[test]
fn the_idle_curve_is_exported_as_the_host_s_idle_states() {
    let p = curve_probe("haltpoll");
    assert!(p.refused.is_empty(), "{:?}", p.refused.keys());
    // the thread wake-up and the back end's CPU per wake-up are the shortest idle's
    assert_eq!(p.profile["host.thread_wakeup_ns"].value, 25_000.0 - 700.0);
    assert_eq!(p.profile["vhost.wakeup_ns"].value, 21_000.0);
    // a halted vCPU's extra is beyond a thread's wake-up after a like (~1 ms) idle: 28 µs
    assert_eq!(p.profile["host.halt_wakeup_ns"].value, 89_000.0 - (28_000.0 - 700.0));
    assert_eq!(p.not_in_profile["idle_curve_500us_kick_to_run_ns"].value, 50_000.0);
    let text = profile_toml(&p).unwrap();
    let (dir, path) = write(&text, "curve");
    let prof = Profile::load(path.to_str().unwrap()).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    let c = &prof.host.cstates;
    assert_eq!(c.governor, eventpath_policy::idle::GovernorKind::Haltpoll);
    let hp = c.haltpoll.unwrap();
    assert_eq!((hp.guest_halt_poll_ns, hp.grow_start_ns, hp.allow_shrink), (0, 50_000, true));
    let got: Vec<(String, f64, f64, f64)> =
        c.states.iter().map(|s| (s.name.clone(), s.exit_latency_ns, s.target_residency_ns.round(), s.wake_cpu_ns)).collect();
    let gm = |a: f64, b: f64| (a * 1e3 * b * 1e3).sqrt().round();
    assert_eq!(
        got,
        [
            ("poll".to_string(), 0.0, 0.0, 0.0),
            ("idle~300us".to_string(), 0.0, 0.0, 0.0),
            ("idle~1000us".to_string(), 3_000.0, gm(300.0, 1_000.0), 3_000.0),
            ("idle~3000us".to_string(), 25_000.0, gm(1_000.0, 3_000.0), 24_000.0),
            ("idle~9000us".to_string(), 55_000.0, gm(3_000.0, 9_000.0), 44_000.0),
        ]
    );
    assert!(c.source.starts_with("measured by eventpath kvm probe on 2026-01-01") && c.source.contains("haltpoll"), "{}", c.source);
    // elsewhere, menu over the points alone
    let prof = Profile::parse("p.toml", &profile_toml(&curve_probe("menu")).unwrap()).unwrap();
    assert_eq!(prof.host.cstates.governor, eventpath_policy::idle::GovernorKind::Menu);
    assert_eq!(prof.host.cstates.states.len(), 4);
    assert!(prof.host.cstates.haltpoll.is_none());
}

#[test]
fn no_curve_without_its_shortest_idle() {
    let mut results: Vec<_> = [1.0, 1.02, 0.98].iter().map(|&k| curve_trial(k)).collect();
    // the shortest idle's wake-up disagrees between trials: refused, and with it the table
    results[1].idle_curve[0].kick.latency_us.p50 = Some(250.0);
    let p = export::report("Test CPU".into(), "2026-01-01".into(), 2_100_000_000, 2, true, results).unwrap();
    assert!(p.refused.contains_key("idle_curve_20us_kick_to_run_ns"));
    let prof = Profile::parse("p.toml", &profile_toml(&p).unwrap()).unwrap();
    assert!(prof.host.cstates.states.is_empty());
}

#[test]
fn the_overlay_puts_only_the_measured_costs_on_modern() {
    let probe = fake_probe(0);
    let text = overlay_toml(&probe, "modern").unwrap();
    assert!(text.contains("base = \"modern\""), "{text}");
    let (_dir, path) = write(&text, "overlay");
    let prof = Profile::load(path.to_str().unwrap()).unwrap();
    let modern = Profile::load("modern").unwrap();
    // measured: the probe's value, its trials' spread as its range
    assert_eq!(prof.exit.io_instruction_ns.value, 26_000.0);
    let r = prof.exit.io_instruction_ns.range.as_ref().expect("a range from the trials");
    assert_eq!((r.min, r.max), (24_000.0, 28_000.0));
    assert!(prof.exit.io_instruction_ns.source.contains("measured by eventpath kvm probe on 2026-01-01"), "{}", prof.exit.io_instruction_ns.source);
    // not measured: modern's, hardware and layout included, and none of the testbed's zeros
    assert_eq!(prof.cpu.cores_per_socket.value, modern.cpu.cores_per_socket.value);
    assert_eq!(prof.exit.timer_ns.value, modern.exit.timer_ns.value);
    assert_eq!(prof.exit.indirect_per_direct.value, modern.exit.indirect_per_direct.value);
    assert_eq!(prof.host.nic_irq_ns.value, modern.host.nic_irq_ns.value);
    assert_eq!(prof.name, "modern+probe");
}
