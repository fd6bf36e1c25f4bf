//! APIC features of today's hosts (`[vm.apic]`, `eventpath_policy::delivery::features`): IPI
//! virtualization removes the reschedule IPI's ICR-write exit of the sender and nothing else;
//! PV EOI removes the emulated LAPIC's EOI exit where nothing else is pending and leaves it
//! where something is; the features a VM cannot have are refused with one line naming the key.

mod common;

use common::{exits, exit_kinds as kinds, Sc};
use eventpath_sim::run::RunOutput;

fn run(sc: &Sc) -> RunOutput {
    sc.run_clean()
}

/// nginx in a 2-vCPU VM with 4 workers on their own ports (examples/nginx-workers.toml): the
/// device interrupts go to vCPU 0, so a request for a sleeping worker on vCPU 1 wakes it with a
/// reschedule IPI. `apic`: the `[vm.apic]` keys as an inline table's body.
fn workers(profile: &str, mode: &str, apic: &str) -> Sc {
    common::nginx_workers("apic", profile, mode, &format!("apic = {{ {apic} }}"))
}

/// es2's Ivy Bridge-EP has posted interrupts; the override asks "what if it had IPIv".
fn with_ipiv(sc: Sc) -> Sc {
    sc.profile_override("cpu.ipiv", 1)
}

#[test]
fn ipiv_removes_the_senders_icr_exit_and_leaves_every_other_kind() {
    let base = run(&with_ipiv(workers("es2", "posted", "")));
    let ipiv = run(&with_ipiv(workers("es2", "posted", "ipiv = true")));
    let ipi = exits(&base, "ipi");
    eprintln!("posted: {:?} {:?}\nposted + ipiv: {:?} {:?}", base.summary.vms[0].exits_per_s, base.summary.vms[0].throughput, ipiv.summary.vms[0].exits_per_s, ipiv.summary.vms[0].throughput);
    assert!(ipi > 1000.0, "workers on vCPU 1 are woken by reschedule IPIs: {:?}", base.summary.vms[0].exits_per_s);
    assert_eq!(exits(&ipiv, "ipi"), 0.0, "{:?}", ipiv.summary.vms[0].exits_per_s);
    let mut left = kinds(&base);
    left.retain(|k| k != "ipi");
    assert_eq!(kinds(&ipiv), left, "the other exits stay, in kind");
    // The targets still get their IPIs: posted to a running vCPU, a halted one woken.
    let resched = |o: &RunOutput| o.summary.vms[0].interrupts_by_source_per_s["ipi"].unwrap();
    assert!(resched(&ipiv) > 0.5 * resched(&base), "{} vs {}", resched(&ipiv), resched(&base));
    let rps = |o: &RunOutput| o.summary.vms[0].throughput.ops_per_s.unwrap();
    assert!(rps(&ipiv) >= 0.98 * rps(&base), "no exit, no slower: {} vs {}", rps(&ipiv), rps(&base));
}

#[test]
fn ipiv_is_refused_on_a_cpu_without_it_and_without_posted_interrupts() {
    let e = workers("es2", "posted", "ipiv = true").error();
    assert!(e.contains("key `vm[0].apic.ipiv`") && e.contains("cpu.ipiv"), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
    for profile in ["elvis", "did", "sriov"] {
        let e = workers(profile, "posted", "ipiv = true").error();
        assert!(e.contains("key `vm[0].apic.ipiv`"), "{profile}: {e}");
    }
    for mode in ["emulated", "apicv"] {
        let e = with_ipiv(workers("es2", mode, "ipiv = true")).error();
        assert!(e.contains("key `vm[0].apic.ipiv`") && e.contains("\"posted\""), "{mode}: {e}");
    }
}

#[test]
fn pv_eoi_removes_most_eoi_exits_but_not_those_with_another_vector_pending() {
    // Busy vCPUs (16 connections, 8 workers): a device interrupt and a reschedule IPI often
    // meet inside one handler.
    let busy = |apic: &str| workers("elvis", "emulated", apic).edit_vm(0, |vm| vm.workload("concurrency = 16\nworkers = 8"));
    let base = run(&busy(""));
    let pv = run(&busy("pv_eoi = true"));
    let (b, p) = (exits(&base, "eoi"), exits(&pv, "eoi"));
    eprintln!("emulated: {:?}\nemulated + pv_eoi: {:?}", base.summary.vms[0].exits_per_s, pv.summary.vms[0].exits_per_s);
    assert!(b > 10_000.0, "{:?}", base.summary.vms[0].exits_per_s);
    assert!(p < 0.5 * b, "PV EOI spares the lone vector's EOI: {p} of {b}");
    assert!(p > 0.0, "an interrupt raised inside a handler waits in the IRR: that EOI still exits");
    assert_eq!(exits(&pv, "ipi") > 0.0, exits(&base, "ipi") > 0.0, "IPIs unchanged in kind");
    assert_eq!(exits(&pv, "interrupt_delivery") > 0.0, exits(&base, "interrupt_delivery") > 0.0, "injection's kicks unchanged in kind");
}

#[test]
fn pv_eoi_is_refused_where_the_eoi_does_not_exit_as_an_emulated_lapics() {
    for mode in ["apicv", "posted"] {
        let e = workers("es2", mode, "pv_eoi = true").error();
        assert!(e.contains("key `vm[0].apic.pv_eoi`") && e.contains("\"emulated\""), "{mode}: {e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
}

#[test]
fn pv_ipi_and_pv_sched_yield_are_refused_saying_they_would_change_nothing() {
    for key in ["pv_ipi", "pv_sched_yield"] {
        let e = workers("es2", "posted", &format!("{key} = true")).error();
        assert!(e.contains(&format!("key `vm[0].apic.{key}`")) && e.contains("single-destination"), "{e}");
    }
}

#[test]
fn an_unknown_apic_key_is_refused_naming_it() {
    let e = workers("es2", "posted", "ipvi = true").error();
    assert!(e.contains("ipvi"), "{e}");
}

#[test]
fn the_features_off_are_the_default() {
    let a = run(&workers("elvis", "emulated", ""));
    let b = run(&workers("elvis", "emulated", "ipiv = false, pv_eoi = false"));
    assert_eq!(a.summary.vms[0].exits_per_s, b.summary.vms[0].exits_per_s);
}
