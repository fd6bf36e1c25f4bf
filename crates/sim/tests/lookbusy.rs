//! lookbusy's CPU load (`[vm.lookbusy]`, hBalance §6.1): on an uncontended host the spinners
//! reach the utilization asked; where the host cannot give it (two VMs asking 6.4 pCPUs of 4)
//! they fall short; the CPU they take is the host's vCPU time; it runs beside a workload, which
//! still makes progress; bad values are refused naming the key.

mod common;

use common::{Sc, Vm};
use eventpath_sim::run::RunOutput;
use eventpath_sim::summary::LookbusySummary;

fn run(sc: &Sc) -> RunOutput {
    let (o, l) = sc.run_with_ledger();
    l.check().unwrap();
    assert!(o.summary.stalled_flows.is_empty(), "{:?}", o.summary.stalled_flows);
    o
}

fn lb(o: &RunOutput, vm: usize) -> LookbusySummary {
    o.summary.vms[vm].lookbusy.clone().expect("a VM with [vm.lookbusy] reports vms[].lookbusy")
}

/// `vms` VMs of 4 vCPUs, each running lookbusy at `util` % and nothing else, on 4 pCPUs.
fn idle_vms(vms: usize, util: f64) -> Sc {
    let mut sc = Sc::new("lb", "es2").duration(2.0).warmup(0.5).pcpus(4);
    for i in 0..vms {
        sc = sc.vm(Vm::new(&format!("vm{i}"), 4).lookbusy(&format!("util_pct = {util}")));
    }
    sc
}

#[test]
fn alone_the_spinners_reach_their_target_and_the_host_sees_it() {
    for util in [30.0, 80.0] {
        let o = run(&idle_vms(1, util));
        let l = lb(&o, 0);
        assert_eq!((l.target_pct, l.period_ms), (util, 100.0));
        let got = l.util_pct.unwrap();
        assert!((got - util).abs() < 2.0, "asked {util} %, got {got} %");
        // The CPU it takes is the vCPUs' time on the host's pCPUs (vCPU thread + exits).
        let host: f64 = o.summary.host.pcpu_util_pct.iter().sum::<f64>() / 4.0;
        assert!(host >= got - 0.5 && host < got + 3.0, "host pCPUs {host} % vs lookbusy {got} %");
        let vcpu = o.summary.vms[0].cpu_util_pct.unwrap();
        assert!(vcpu >= got && vcpu < got + 3.0, "vCPU busy {vcpu} % vs lookbusy {got} %");
    }
}

#[test]
fn under_contention_they_fall_short_of_the_target() {
    // 2 VMs x 4 vCPUs x 80 % = 6.4 pCPUs asked of 4: each VM gets about half.
    let o = run(&idle_vms(2, 80.0));
    for vm in 0..2 {
        let got = lb(&o, vm).util_pct.unwrap();
        assert!(got < 60.0 && got > 40.0, "vm{vm}: {got} %");
    }
    let host: f64 = o.summary.host.pcpu_util_pct.iter().sum::<f64>() / 4.0;
    assert!(host > 95.0, "the host is saturated: {host} %");
}

#[test]
fn it_runs_beside_a_workload_that_keeps_making_progress() {
    let sc = Sc::new("lbw", "es2").duration(0.5).warmup(0.1).pcpus(2).vm(
        Vm::new("vm0", 2).lookbusy("util_pct = 50").workload("kind = \"http\"\nconcurrency = 4\nfile_bytes = 4096"),
    );
    let o = run(&sc);
    let l = lb(&o, 0);
    assert!(l.util_pct.unwrap() > 10.0, "{l:?}");
    assert!(o.summary.vms[0].throughput.ops_per_s.unwrap() > 1000.0);
    // Deterministic.
    assert_eq!(lb(&run(&sc), 0).util_pct, l.util_pct);
    // Other VMs' summaries carry no such key.
    let plain = run(&Sc::new("p", "es2").duration(0.05).warmup(0.01).vm(Vm::new("vm0", 1)));
    assert!(plain.summary.vms[0].lookbusy.is_none());
}

#[test]
fn bad_values_are_refused_naming_the_key() {
    let base = || Sc::new("bad", "es2").duration(0.01).warmup(0.001);
    for (lines, want) in [("util_pct = 0", "lookbusy.util_pct"), ("util_pct = 101", "lookbusy.util_pct"), ("util_pct = 50\nperiod_ms = 0", "lookbusy.period_ms")] {
        let m = base().vm(Vm::new("vm0", 1).lookbusy(lines)).error();
        assert!(m.contains(want) && !m.contains('\n'), "{lines}: {m}");
    }
    let m = base().vm(Vm::new("vm0", 1).lookbusy("util_pct = 50").burn(true)).error();
    assert!(m.contains("lookbusy") && m.contains("guest_cpu_burn"), "{m}");
    let m = base().vm(Vm::new("vm0", 1).lookbusy("util_pct = 50\ncycle = 3")).error();
    assert!(m.contains("cycle"), "{m}");
}
