//! Xen's I/O paths (`[host] virtualization = "xen"`, profile `hbalance`): PV guests
//! (netfront/netback over event channels) and FV guests (QEMU's e1000 in dom0), dom0 on its
//! own pCPUs, routing by `fixed` (vanilla: vCPU 0), `lowest_priority_rr` (FV logical mode),
//! `v_balance` (PV, in the guest) and `h_balance` (hBalance §6.1.1's ping experiment).

mod common;

use common::{Sc, Vm};
use eventpath_sim::model::Conservation;
use eventpath_sim::run::RunOutput;

/// ping from the client every 10 ms.
const PING: &str = "kind = \"ping\"\ninterval_us = 10000";

/// hBalance §6.1's layout: the tested 4-vCPU VM (`kind` device, `routing`) pinned to pCPUs
/// 0..3 with `others` background VMs of 4 vCPUs on the same pCPUs; every VM burns CPU (the
/// paper's lookbusy load: with `busy`, all of them), dom0 on pCPUs 6 and 7 (the profile's).
fn scenario(kind: &str, routing: &str, others: usize, busy: bool) -> Sc {
    let net = format!("kind = \"{kind}\"");
    let mut sc = Sc::new("xen_paths", "hbalance")
        .duration(2.0)
        .warmup(0.1)
        .host("virtualization = \"xen\"\nscheduler = \"xen_credit\"")
        .vm(Vm::new("tested", 4).pins(&[0, 1, 2, 3]).routing(routing).burn(busy).net(&net).workload(PING));
    for i in 0..others {
        sc = sc.vm(Vm::new(&format!("bg{i}"), 4).pins(&[0, 1, 2, 3]).burn(true).net(&net));
    }
    sc
}

fn run(kind: &str, routing: &str, others: usize, busy: bool) -> (RunOutput, Conservation) {
    let (o, c) = scenario(kind, routing, others, busy).run_with_ledger();
    c.check().unwrap();
    let v = &o.summary.vms[0];
    eprintln!("{kind} {routing} others={others} busy={busy}: p50 {:?} p99 {:?} max {:?} boosts {} by class {:?} target {:?}", v.latency_us.p50, v.latency_us.p99, v.latency_us.max, c.smp_boosts, v.latency_by_target_state_us, v.device_interrupts_by_target_state_per_s);
    (o, c)
}

#[test]
fn print_numbers() {
    for kind in ["xen_pv"] {
        for r in ["fixed", "h_balance"] {
            let (o, c) = scenario(kind, r, 1, true).edit_vm(0, |v| v.workload("kind = \"irq_source\"\ninterval_us = 2000")).run_with_ledger();
            let v = &o.summary.vms[0];
            eprintln!("IRQ {kind} {r}: p50 {:?} p99 {:?} boosts {} by class {:?}", v.latency_us.p50, v.latency_us.p99, c.smp_boosts, v.latency_by_target_state_us);
        }
    }
}
