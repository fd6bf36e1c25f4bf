//! The co-scheduling gauge (`vms[].coscheduled_pct` beside `coscheduled_if_independent_pct`,
//! `hypervisor/cosched.rs`; issue 48): the share of the window all of a VM's vCPU threads were
//! on pCPUs at once, and what independent threads with the same shares would give.

mod common;

use common::{Sc, Vm};
use eventpath_sim::summary::VmSummary;

/// `vms` VMs of `vcpus` burning vCPUs, vCPU j of each pinned to pCPU j (ES2 §6.3's layout when
/// 4 × 4), on the es2 host.
fn siblings(vms: u32, vcpus: u32) -> Vec<VmSummary> {
    let pins: Vec<u32> = (0..vcpus).collect();
    let sc = (0..vms).fold(Sc::new("cosched", "es2").duration(0.1).warmup(0.02).pcpus(vcpus + 2), |sc, i| {
        sc.vm(Vm::new(&format!("vm{i}"), vcpus).pins(&pins).burn(true).delivery("posted"))
    });
    sc.run().summary.vms
}

#[test]
fn a_vm_alone_on_its_pcpus_has_all_its_vcpus_on_them_at_once() {
    let v = &siblings(1, 2)[0];
    let (all, indep) = (v.coscheduled_pct.unwrap(), v.coscheduled_if_independent_pct.unwrap());
    assert!(all > 99.0 && indep > 98.0, "{all} {indep}");
}

#[test]
fn a_one_vcpu_vm_has_no_gauge() {
    let v = &siblings(2, 1)[0];
    assert_eq!((v.coscheduled_pct, v.coscheduled_if_independent_pct), (None, None));
}

#[test]
fn sibling_vms_sharing_pcpus_show_each_vcpu_on_its_share() {
    // Four 4-vCPU VMs time-share four pCPUs: each vCPU is on its pCPU a quarter of the time,
    // so independent phases would give (1/4)^4 ≈ 0.4 %; a VM's vCPUs can be on their pCPUs
    // together at most a quarter of the time. (This test holds the gauge's bounds, not either
    // regime: `housekeeping.rs` holds that the pCPUs no longer run in lock-step.)
    for v in siblings(4, 4) {
        let (all, indep) = (v.coscheduled_pct.unwrap(), v.coscheduled_if_independent_pct.unwrap());
        assert!((0.2..=0.6).contains(&indep), "{}: independent {indep} %", v.name);
        assert!(all <= 26.0, "{}: all on at once {all} %, more than one vCPU's share", v.name);
        eprintln!("{}: all at once {all:.2} %, independent {indep:.2} %", v.name);
    }
}

#[test]
fn a_router_that_follows_running_vcpus_finds_one_where_one_runs() {
    // A 2-vCPU VM, both vCPUs burning: vCPU 1 has pCPU 1 to itself, vCPU 0 shares pCPU 0 with
    // another VM's two burning vCPUs (on it a third of the time). ES2's redirection takes a
    // running vCPU whenever one is (§4.3); `fixed` (vCPU 0, the guest's affinity) misses each
    // time vCPU 0 is off its pCPU. Those are few of its interrupts: vCPU 0's first datagram
    // after it leaves raises one, and the rest wait, unannounced, for its NAPI (the ring's
    // used event is not passed) — so most of its interrupts come while it runs.
    let run = |routing: &str| {
        let sc = Sc::new("found", "es2").duration(0.1).warmup(0.02).pcpus(4).vm(Vm::new("vm0", 2)
            .pins(&[0, 1])
            .burn(true)
            .delivery("posted")
            .set("interrupt_routing", routing)
            .workload("kind = \"udp_receive\"\nmessage_bytes = 512\nrate_pps = 2000"))
            .vm(Vm::new("vm1", 2).pins(&[0, 0]).burn(true).delivery("posted"));
        let v = sc.run().summary.vms.remove(0);
        let away = v.default_target_away_by_run_state_per_s.get().expect("simulated").clone();
        (v.running_target_found_pct.expect("interrupts routed while a vCPU ran"), away)
    };
    let ((fixed, fixed_away), (redirect, redirect_away)) = (run("fixed"), run("es2"));
    assert!(redirect > 99.0, "ES2 redirection: {redirect} %");
    assert!(fixed < 99.0 && fixed < redirect, "vCPU 0 always: {fixed} %");
    // Where vCPU 0 (the guest's affinity) was away: `fixed` still sent them there (a preempted
    // or halted vCPU 0), ES2's redirection to the running vCPU 1.
    let of = |m: &std::collections::BTreeMap<&str, Option<f64>>, k: &str| m[k].unwrap();
    assert_eq!(of(&fixed_away, "running"), 0.0, "{fixed_away:?}");
    assert!(of(&fixed_away, "runnable") + of(&fixed_away, "blocked") > 0.0, "{fixed_away:?}");
    assert!(of(&redirect_away, "running") > 0.0, "{redirect_away:?}");
    assert_eq!(of(&redirect_away, "runnable") + of(&redirect_away, "blocked"), 0.0, "{redirect_away:?}");
}
