//! Xen's I/O paths (`[host] virtualization = "xen"`, profile `hbalance`): PV guests
//! (netfront/netback over event channels) and FV guests (QEMU's e1000 in dom0), dom0 on its
//! own pCPUs (6 and 7, the profile's), routing by `fixed` (vanilla Xen and the vIOAPIC's
//! physical mode: vCPU 0), `lowest_priority_rr` (FV logical mode), `v_balance` (PV, the guest
//! rebinds) and `h_balance` — hBalance §6.1.1's ping experiment, on a layout where the tested
//! VM's vCPUs do not all share their pCPUs alike (see `scenario`).

mod common;

use common::{exits, refused, Sc, Vm};
use eventpath_sim::model::Conservation;
use eventpath_sim::run::RunOutput;

/// ping from the client every 10 ms (hBalance §6.1.1 pings 1000 times; 2 s here: 200).
const PING: &str = "kind = \"ping\"\ninterval_us = 10000";

/// The tested 4-vCPU VM (device `kind`, router `routing`) pinned to pCPUs 0..3 and, with
/// `loaded`, burning CPU beside its ping (the paper's lookbusy load on the SMP-VM) with a
/// background VM of 3 vCPUs, also burning, pinned to pCPUs 0..2: vCPUs 0..2 share their pCPUs
/// slice by slice, vCPU 3 has its own. (A background VM of 4 vCPUs on all four pCPUs makes the
/// model's credit slices switch every pCPU at the same instants, so that no router can find a
/// running vCPU when vCPU 0 waits; see `docs/model.md`.)
fn scenario(kind: &str, routing: &str, loaded: bool) -> Sc {
    let net = format!("kind = \"{kind}\"");
    let mut sc = Sc::new("xen_paths", "hbalance")
        .duration(2.0)
        .warmup(0.1)
        .host("virtualization = \"xen\"\nscheduler = \"xen_credit\"")
        .vm(Vm::new("tested", 4).pins(&[0, 1, 2, 3]).routing(routing).burn(loaded).net(&net).workload(PING));
    if loaded {
        sc = sc.vm(Vm::new("background", 3).pins(&[0, 1, 2]).burn(true).net(&net));
    }
    sc
}

fn run(kind: &str, routing: &str, loaded: bool) -> (RunOutput, Conservation) {
    let (o, c) = scenario(kind, routing, loaded).run_with_ledger();
    c.check().unwrap();
    let v = &o.summary.vms[0];
    eprintln!(
        "{kind} {routing} loaded={loaded}: ping RTT p50 {:?} p99 {:?} max {:?} µs; exits/s {:?}",
        v.latency_us.p50, v.latency_us.p99, v.latency_us.max, v.exits_per_s
    );
    (o, c)
}

#[test]
fn pv_pings_faster_than_fv_and_event_channels_have_no_eoi_exit() {
    let (pv, _) = run("xen_pv", "fixed", false);
    let (fv, _) = run("xen_e1000", "fixed", false);
    let (lp, lf) = (&pv.summary.vms[0].latency_us, &fv.summary.vms[0].latency_us);
    assert!(lp.p50.unwrap() < lf.p50.unwrap(), "PV {lp:?} vs FV {lf:?}");
    // PV: no EOI (the guest clears the pending bit) and no MMIO: its notifies are hypercalls.
    assert_eq!(exits(&pv, "eoi"), 0.0);
    assert_eq!(exits(&pv, "io_instruction"), 0.0);
    assert!(exits(&pv, "other") > 0.0, "netfront's notifies are hypercalls");
    // FV: an EOI exit per interrupt, and per ping at least the TDT doorbell and the ISR's ICR
    // read, each an ioreq to QEMU.
    assert!(exits(&fv, "eoi") > 0.0);
    assert!(exits(&fv, "io_instruction") >= 2.0 * 100.0 * 0.95, "{}", exits(&fv, "io_instruction"));
    assert_eq!(fv.summary.vms[0].interrupt_delivery, Some("emulated"));
    assert_eq!(pv.summary.vms[0].interrupt_delivery, Some("evtchn"));
}

#[test]
fn h_balance_cuts_the_ping_tail_for_pv_and_fv() {
    for kind in ["xen_pv", "xen_e1000"] {
        let (fixed, _) = run(kind, "fixed", true);
        let (hb, _) = run(kind, "h_balance", true);
        let (lf, lh) = (&fixed.summary.vms[0].latency_us, &hb.summary.vms[0].latency_us);
        // Fixed: a ping whose interrupt finds vCPU 0 waiting behind the background VM waits
        // for its turn (a 30 ms slice); hBalance sends it to vCPU 3, which runs.
        assert!(lf.p99.unwrap() > 10_000.0, "{kind}: {lf:?}");
        assert!(lh.p99.unwrap() * 10.0 < lf.p99.unwrap(), "{kind}: fixed {lf:?} vs h_balance {lh:?}");
    }
}

#[test]
fn v_balance_rebinds_with_hypercalls_and_round_robin_keeps_the_tail() {
    let (fixed, _) = run("xen_pv", "fixed", true);
    let (vb, _) = run("xen_pv", "v_balance", true);
    let (lf, lv) = (&fixed.summary.vms[0].latency_us, &vb.summary.vms[0].latency_us);
    assert!(lv.p99.unwrap() * 10.0 < lf.p99.unwrap(), "fixed {lf:?} vs v_balance {lv:?}");
    // Each move of the event channel is one EVTCHNOP_bind_vcpu: more hypercalls than vanilla.
    assert!(exits(&vb, "other") > exits(&fixed, "other"), "{} vs {}", exits(&vb, "other"), exits(&fixed, "other"));
    // The vIOAPIC's logical mode rotates through the vCPUs whatever runs: the tail stays.
    let (fv_fixed, _) = run("xen_e1000", "fixed", true);
    let (rr, _) = run("xen_e1000", "lowest_priority_rr", true);
    assert!(rr.summary.vms[0].latency_us.p99.unwrap() > 10_000.0, "{:?}", rr.summary.vms[0].latency_us);
    let _ = fv_fixed;
}

#[test]
fn dom0_runs_the_back_ends_and_the_same_seed_gives_the_same_run() {
    let sc = scenario("xen_pv", "h_balance", true);
    let a = sc.run();
    let b = sc.run();
    assert_eq!(serde_json::to_value(&a.summary.vms).unwrap(), serde_json::to_value(&b.summary.vms).unwrap());
    let names: Vec<&str> = a.summary.host.threads.iter().map(|t| t.name.as_str()).collect();
    assert!(names.iter().any(|n| n.starts_with("netback-")), "{names:?}");
    let fv = scenario("xen_e1000", "fixed", false).run();
    assert!(fv.summary.host.threads.iter().any(|t| t.name.starts_with("qemu-")));
}

fn xen_host(vm: Vm) -> Sc {
    Sc::new("bad", "hbalance").host("virtualization = \"xen\"\nscheduler = \"xen_credit\"").vm(vm)
}

#[test]
fn bad_xen_layouts_are_refused_naming_the_key() {
    let pv = || Vm::new("vm0", 2).net("kind = \"xen_pv\"");
    let fv = || Vm::new("vm0", 2).net("kind = \"xen_e1000\"");
    // Xen devices without Xen; KVM's devices under Xen.
    refused(Sc::new("bad", "hbalance").vm(pv()), "vm[0].net.kind", &["xen_pv", "virtualization"]);
    refused(Sc::new("bad", "hbalance").vm(fv()), "vm[0].net.kind", &["xen_e1000"]);
    refused(xen_host(Vm::new("vm0", 2)), "vm[0].net.kind", &["\"virtio\"", "xen_pv"]);
    refused(xen_host(Vm::new("vm0", 2).net("kind = \"sriov_vf\"")), "vm[0].net.kind", &[]);
    // Delivery: evtchn only on a PV device, nothing else on one; FV has emulated only.
    refused(xen_host(fv().delivery("evtchn")), "vm[0].interrupt_delivery", &["evtchn", "xen_pv"]);
    refused(Sc::new("bad", "es2").vm(Vm::new("vm0", 2).delivery("evtchn")), "vm[0].interrupt_delivery", &["evtchn"]);
    refused(xen_host(pv().delivery("posted")), "vm[0].interrupt_delivery", &["posted", "xen_pv"]);
    refused(xen_host(fv().delivery("apicv")), "vm[0].interrupt_delivery", &["apicv", "xen_e1000"]);
    // v_balance is a PV guest's.
    refused(xen_host(fv().routing("v_balance")), "vm[0].interrupt_routing", &["v_balance"]);
    refused(Sc::new("bad", "es2").vm(Vm::new("vm0", 2).routing("v_balance")), "vm[0].interrupt_routing", &["v_balance"]);
    // dom0's pCPUs.
    refused(xen_host(pv()).host("dom0_cpus = [8]"), "host.dom0_cpus", &["pCPU 8 does not exist"]);
    refused(xen_host(pv()).host("dom0_cpus = []"), "host.dom0_cpus", &["[]"]);
    refused(xen_host(pv().pins(&[0, 7])), "vm[0].vcpu_pins[1]", &["dom0"]);
    refused(xen_host(pv().pins(&[0, 1])).host("dom0_cpus = [1]"), "vm[0].vcpu_pins[1]", &["dom0"]);
    refused(Sc::new("bad", "es2").host("dom0_cpus = [1]").vm(Vm::new("vm0", 1)), "host.dom0_cpus", &["xen"]);
    refused(xen_host(pv()).pcpus(2), "host.pcpus", &["dom0"]);
    // Xen on a KVM profile; Xen without its credit scheduler; a back end of KVM's.
    let on_es2 = Sc::new("bad", "es2").host("virtualization = \"xen\"\nscheduler = \"xen_credit\"").vm(pv());
    refused(on_es2, "host.virtualization", &["a Xen path on a KVM profile", "[xen]"]);
    refused(Sc::new("bad", "hbalance").host("virtualization = \"xen\"").vm(pv()), "host.scheduler", &["xen_credit"]);
    refused(xen_host(pv()).io("handling = \"es2\""), "host.io.handling", &["dom0"]);
    refused(xen_host(pv().vhost_pin(7)), "vm[0].net.vhost_pin", &["dom0"]);
    // And a good one passes, with dom0 where it was put.
    let ok = xen_host(pv().pins(&[0, 1]).routing("v_balance")).host("dom0_cpus = [5]").check();
    assert_eq!(eventpath_sim::scenario::xen::dom0_cpus(&ok.scenario, &ok.profile, ok.pcpus), vec![5]);
    let ok = xen_host(fv()).check();
    assert_eq!(eventpath_sim::scenario::xen::dom0_cpus(&ok.scenario, &ok.profile, ok.pcpus), vec![6, 7]);
}

#[test]
fn an_unpinned_vcpu_stays_off_dom0s_pcpus() {
    let sc = xen_host(Vm::new("vm0", 4).burn(true).net("kind = \"xen_pv\"").workload(PING)).duration(0.2);
    let o = sc.run();
    for t in o.summary.host.threads.iter().filter(|t| t.name.starts_with("vcpu:")) {
        assert!(t.pcpu_pct[6] == 0.0 && t.pcpu_pct[7] == 0.0, "{}: {:?}", t.name, t.pcpu_pct);
    }
    let nb = o.summary.host.threads.iter().find(|t| t.name == "netback-vm0").unwrap();
    assert!(nb.pcpu_pct[..6].iter().all(|&p| p == 0.0), "netback runs on dom0's pCPUs: {:?}", nb.pcpu_pct);
}
