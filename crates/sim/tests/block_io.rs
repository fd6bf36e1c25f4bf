//! Block I/O on the event path (issue 51): fio and filebench on a VM's virtio-blk disk over a
//! host RAM disk. Each request is a kick (unless the device suppressed it), a back-end item
//! (its cost the profile's `[blk]`), a completion interrupt through the VM's delivery mode, and
//! guest work on both sides; fio's request timer adds two LAPIC timer writes.

mod common;

use common::{Sc, Vm};
use eventpath_sim::run::RunOutput;
use eventpath_sim::summary::VmSummary;

/// One 1-vCPU VM on `profile` running `workload` (a block kind's lines), with `vm_extra` lines.
fn disk(profile: &str, workload: &str, vm_extra: &str) -> Sc {
    Sc::new("block", profile).duration(0.05).warmup(0.01).pcpus(4).vm(Vm::new("vm0", 1).lines(vm_extra).workload(workload))
}

fn vm(o: &RunOutput) -> &VmSummary {
    &o.summary.vms[0]
}

fn exits(o: &RunOutput, reason: &str) -> f64 {
    vm(o).exits_per_s[reason].unwrap_or(0.0)
}

#[test]
fn a_sync_fio_job_on_a_ramdisk_completes_requests() {
    let (o, l) = disk("did", "kind = \"fio\"", "").run_with_ledger();
    l.check().unwrap_or_else(|e| panic!("{e}"));
    let v = vm(&o);
    eprintln!("{:#?}", v.exits_per_s);
    eprintln!("ops {:?} latency {:?}", v.throughput.ops_per_s, v.latency_us);
    assert!(v.throughput.ops_per_s.unwrap() > 1000.0);
    let _ = exits(&o, "timer");
}

#[test]
fn scratch_print() {
    for (p, w, extra) in [
        ("did", "kind = \"fio\"", "interrupt_delivery = \"did\""),
        ("did", "kind = \"fio\"", "interrupt_delivery = \"posted\""),
        ("es2", "kind = \"fio\"", ""),
        ("es2", "kind = \"fio\"\niodepth = 16", ""),
        ("elvis", "kind = \"filebench\"", ""),
        ("modern", "kind = \"fio\"", ""),
    ] {
        let (o, l) = disk(p, w, extra).run_with_ledger();
        l.check().unwrap_or_else(|e| panic!("{e}"));
        let v = vm(&o);
        let ex: Vec<_> = v.exits_per_s.iter().filter(|(_, n)| n.unwrap_or(0.0) > 0.0).map(|(k, n)| format!("{k}={:.0}", n.unwrap())).collect();
        eprintln!("{p} {w:?} {extra}: iops {:.0} lat {:.1} us exits {ex:?} io {:?}", v.throughput.ops_per_s.unwrap(), v.latency_us.mean.unwrap(), o.summary.host.io_threads.iter().map(|t| (&t.name, t.util_pct)).collect::<Vec<_>>());
    }
}

#[test]
fn scratch_fuzz() {
    let mut ran = 0;
    for case in 0..std::env::var("N").ok().and_then(|n| n.parse().ok()).unwrap_or(300) {
        if let Some(s) = eventpath_sim::fuzz::block_scenario(case) {
            match eventpath_sim::fuzz::check_scenario(&s) {
                Ok(eventpath_sim::fuzz::Outcome::Ok) => ran += 1,
                Ok(eventpath_sim::fuzz::Outcome::Rejected(m)) => panic!("case {case} refused: {m}\n{s}"),
                Err(f) => panic!("case {case}: {}\n{}", f.what, f.scenario),
            }
        }
    }
    eprintln!("ran {ran}");
}

#[test]
fn scratch_pmd() {
    for (io, w) in [("handling = \"pmd\"\ncores = [3]", "kind = \"fio\"\niodepth = 234"), ("handling = \"pmd\"\ncores = [3]", "kind = \"fio\"\niodepth = 1"), ("handling = \"elvis\"\ncores = [3]", "kind = \"fio\"\niodepth = 234")] {
        let o = disk("elvis", w, "").io(io).run();
        let v = vm(&o);
        eprintln!("{io:?} {w:?}: iops {:?} stalled {:?}", v.throughput.ops_per_s, o.summary.stalled_flows.first().map(|s| &s.state));
    }
}

#[test]
fn scratch_case0() {
    let s = eventpath_sim::fuzz::block_scenario(0).unwrap();
    std::fs::write("/tmp/blk/case0.toml", &s).unwrap();
    let text = std::fs::read_to_string("/tmp/blk/case0-edit.toml").unwrap_or(s);
    match eventpath_sim::fuzz::check_scenario(&text) {
        Ok(o) => eprintln!("ok {o:?}"),
        Err(f) => eprintln!("FAIL {}", &f.what[..f.what.len().min(900)]),
    }
}
