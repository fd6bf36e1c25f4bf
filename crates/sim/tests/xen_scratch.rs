mod common;
use common::{Sc, Vm};
const PING: &str = "kind = \"ping\"\ninterval_us = 10000";
fn show(tag: &str, sc: Sc) {
    let (o, c) = sc.run_with_ledger();
    let v = &o.summary.vms[0];
    let l = &v.latency_us;
    eprintln!("{tag}: p50 {:?} p90 {:?} p99 {:?} boosts {} tgt {:?}", l.p50, l.p90, l.p99, c.smp_boosts, v.device_interrupts_by_target_state_per_s);
}
#[test]
fn scratch() {
    for r in ["fixed", "h_balance"] {
        // KVM virtio under credit
        let sc = Sc::new("k", "es2").pcpus(6).duration(2.0).warmup(0.1).host("scheduler = \"xen_credit\"")
            .vm(Vm::new("t", 4).pins(&[0, 1, 2, 3]).routing(r).burn(true).delivery("posted").vhost_pin(4).workload(PING))
            .vm(Vm::new("b", 4).pins(&[0, 1, 2, 3]).burn(true).vhost_pin(5));
        show(&format!("kvm {r}"), sc);
        let sc = Sc::new("k", "hbalance").duration(2.0).warmup(0.1).host("virtualization = \"xen\"\nscheduler = \"xen_credit\"")
            .vm(Vm::new("t", 4).pins(&[0, 1, 2, 3]).routing(r).burn(true).net("kind = \"xen_pv\"").workload(PING))
            .hog(&[0]).hog(&[1]).hog(&[2]).hog(&[3]);
        show(&format!("pv hogs {r}"), sc);
        let sc = Sc::new("k", "hbalance").duration(2.0).warmup(0.1).host("virtualization = \"xen\"\nscheduler = \"xen_credit\"")
            .vm(Vm::new("t", 4).pins(&[0, 1, 2, 3]).routing(r).burn(true).net("kind = \"xen_pv\"").workload("kind = \"ping\"\ninterval_us = 3100"))
            .vm(Vm::new("b", 4).pins(&[0, 1, 2, 3]).burn(true).net("kind = \"xen_pv\""));
        show(&format!("pv 3.1ms {r}"), sc);
    }
}
