//! The layout fuzzer in the test suite (issue 9; `crates/sim/src/fuzz.rs`): random valid
//! multi-VM layouts run to their end with balanced ledgers and no stalled flow, and every
//! layout it once broke (`tests/fuzz-regressions/`) stays fixed.
//!
//! A bounded number of cases here (`EVENTPATH_FUZZ_CASES`, default 24, in a debug build that
//! also checks every vCPU and vhost thread's state after each event); the long run is
//! `cargo run --release -p eventpath-sim --example fuzz_layouts -- 10000`.

use eventpath_sim::fuzz::{check_scenario, run_case, Outcome};

#[test]
fn random_layouts_run_to_their_end_with_balanced_ledgers_and_no_stall() {
    let n: u64 = std::env::var("EVENTPATH_FUZZ_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(24);
    let mut ran = 0;
    for case in 0..n {
        match run_case(case) {
            Ok(Outcome::Ok) => ran += 1,
            Ok(Outcome::Rejected(_)) => {}
            Err(f) => panic!("case {case}: {}\n{}", f.what, f.scenario),
        }
    }
    assert!(ran * 4 >= n * 3, "most generated layouts must be valid: {ran} of {n} ran");
}

#[test]
fn layouts_the_fuzzer_once_broke_stay_fixed() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fuzz-regressions");
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "toml") {
            continue; // README.md
        }
        let text = std::fs::read_to_string(&p).unwrap();
        match check_scenario(&text) {
            Ok(Outcome::Ok) => n += 1,
            other => panic!("{}: {other:?}", p.display()),
        }
    }
    assert!(n >= 9);
}

#[test]
fn the_apic_draws_reach_both_features_and_ipiv_only_on_a_cpu_given_it() {
    let (mut ipiv, mut pv_eoi) = (0, 0);
    for case in 0..200 {
        let s = eventpath_sim::fuzz::scenario(case);
        if s.contains("apic = { ipiv = true }") {
            ipiv += 1;
            assert!(s.contains("[profile_overrides.cpu]\nipiv = 1"), "case {case}: IPIv drawn on a CPU without it\n{s}");
        }
        pv_eoi += usize::from(s.contains("apic = { pv_eoi = true }"));
    }
    assert!(ipiv >= 5 && pv_eoi >= 5, "ipiv in {ipiv} cases, pv_eoi in {pv_eoi} of 200");
}

#[test]
fn the_numa_draws_reach_both_nodes_and_the_second_socket_and_are_never_refused_for_them() {
    let (mut node1, mut wide, mut ran) = (0, 0, 0);
    for case in 0..400 {
        let s = eventpath_sim::fuzz::scenario(case);
        if !s.contains("memory_node = ") {
            continue;
        }
        assert!(s.contains("profile = \"elvis\""), "case {case}: a memory node on a one-node profile\n{s}");
        node1 += usize::from(s.contains("memory_node = 1"));
        let pcpus: u32 = s.split("pcpus = ").nth(1).and_then(|t| t.split('\n').next()).and_then(|n| n.parse().ok()).unwrap();
        wide += usize::from(pcpus > 8);
        let sc = eventpath_sim::scenario::Scenario::from_toml("fuzz", &s).unwrap();
        if let Err(e) = sc.check("fuzz") {
            assert!(!e.to_string().contains("memory_node"), "case {case}: {e}\n{s}");
        } else if ran < 3 {
            match check_scenario(&s) {
                Ok(Outcome::Ok) => ran += 1,
                other => panic!("case {case}: {other:?}\n{s}"),
            }
        }
    }
    assert!(node1 >= 10 && wide >= 3 && ran >= 1, "node 1 in {node1}, past socket 0 in {wide}, run clean {ran}");
}

#[test]
fn the_avic_draws_reach_avic_x2apic_and_the_erratum_only_on_an_amd_cpu() {
    let (mut avic, mut x2apic, mut erratum) = (0, 0, 0);
    for case in 0..300 {
        let s = eventpath_sim::fuzz::scenario(case);
        if s.contains("avic = true") {
            avic += 1;
            assert!(s.contains("\navic = 1\n"), "case {case}: AVIC drawn on a CPU without it\n{s}");
            assert!(!s.contains("ipiv = true"), "case {case}\n{s}");
            erratum += usize::from(s.contains("avic_erratum_1235 = 1"));
        }
        if s.contains("x2apic = true") {
            x2apic += 1;
            assert!(s.contains("x2avic = 1"), "case {case}: an x2APIC guest drawn without x2AVIC\n{s}");
        }
    }
    assert!(avic >= 5 && x2apic >= 2 && erratum >= 1, "avic in {avic}, x2apic in {x2apic}, erratum in {erratum} of 300");
}

#[test]
fn the_pv_ipi_draws_reach_several_targets_and_are_never_refused_for_the_new_keys() {
    let (mut many, mut pv) = (0, 0);
    for case in 0..2000 {
        let s = eventpath_sim::fuzz::scenario(case);
        let has_many = s.contains("\ntargets = ");
        let has_pv = s.contains("pv_ipi = true");
        many += usize::from(has_many);
        pv += usize::from(has_pv);
        if has_many || has_pv || s.contains("avic = true") {
            // The new keys are drawn only where they are valid: no refusal names them.
            let sc = eventpath_sim::scenario::Scenario::from_toml("fuzz", &s).unwrap();
            if let Err(e) = sc.check("fuzz") {
                let why = e.to_string();
                for k in ["targets", "pv_ipi", "avic", "x2apic"] {
                    assert!(!why.contains(&format!(".{k}`")), "case {case}: {why}\n{s}");
                }
            }
        }
    }
    assert!(many >= 5 && pv >= 2, "targets in {many}, pv_ipi in {pv} of 2000");
}

#[test]
fn the_draws_reach_hosts_past_64_pcpus_and_guest_halt_polling_and_such_cases_run() {
    let (mut big, mut gpoll) = (vec![], vec![]);
    for case in 0..400 {
        let s = eventpath_sim::fuzz::scenario(case);
        if s.contains("cores_per_socket = ") {
            big.push(case);
        }
        for vm in s.split("[[vm]]").filter(|vm| vm.contains("guest_halt_poll = {")) {
            assert!(!vm.contains("[vm.halt_poll]"), "case {case}: both pollers drawn for one VM\n{s}");
            gpoll.push(case);
        }
    }
    assert!(big.len() >= 3 && gpoll.len() >= 20, "big hosts in {big:?}, guest polling in {} of 400", gpoll.len());
    for &case in big.iter().take(3).chain(gpoll.iter().take(5)) {
        match run_case(case) {
            Ok(Outcome::Ok | Outcome::Rejected(_)) => {}
            other => panic!("case {case}: {other:?}\n{}", eventpath_sim::fuzz::scenario(case)),
        }
    }
    // A big host is not refused for its size: at least one of its cases runs.
    assert!(big.iter().any(|&c| matches!(run_case(c), Ok(Outcome::Ok))), "{big:?}");
}

#[test]
fn the_xen_draws_reach_pv_and_fv_hosts_and_leave_every_first_layout_as_it_was() {
    let (mut pv, mut fv) = (0, 0);
    for case in 0..40 {
        if let Some(x) = eventpath_sim::fuzz::xen_scenario(case) {
            pv += x.contains("\"xen_pv\"") as u32;
            fv += x.contains("\"xen_e1000\"") as u32;
        }
        // The first layout never draws a Xen key (its streams are untouched).
        assert!(!eventpath_sim::fuzz::scenario(case).contains("virtualization = \"xen\""), "case {case}");
    }
    assert!(pv > 0 && fv > 0, "pv {pv} fv {fv}");
}

#[test]
fn the_draws_reach_multi_queue_receivers_and_such_cases_run() {
    let mut mq = vec![];
    for case in 0..600 {
        let s = eventpath_sim::fuzz::scenario(case);
        for vm in s.split("[[vm]]") {
            let many = vm.lines().any(|l| l.strip_prefix("queues = ").is_some_and(|n| n != "1"));
            if many {
                assert!(vm.contains("\"tcp_receive\"") || vm.contains("\"udp_receive\""), "case {case}: queues on a non-receiver\n{s}");
                mq.push(case);
            }
        }
    }
    assert!(mq.len() >= 5, "several queue pairs in {mq:?} of 600");
    for &case in mq.iter().take(5) {
        match run_case(case) {
            Ok(Outcome::Ok) => {}
            other => panic!("case {case}: {other:?}\n{}", eventpath_sim::fuzz::scenario(case)),
        }
    }
}
