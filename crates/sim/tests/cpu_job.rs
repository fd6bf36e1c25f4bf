//! The CPU job (`kind = "cpu_job"`, CGR/AIR §5.6's NPB FT): alone on a pCPU it takes its work;
//! what steals its pCPU (a host thread, another VM's vCPUs and their interrupts) stretches its
//! completion time; a run that ends first reports it unfinished, never a number.

mod common;

use common::{Sc, Vm};
use eventpath_sim::run::{run_parsed, RunOptions};
use eventpath_sim::scenario::Scenario;
use eventpath_sim::summary::CpuJobSummary;

const WORK_MS: f64 = 40.0;

fn job_vm() -> Vm {
    Vm::new("ft", 1).pins(&[0]).workload(&format!("kind = \"cpu_job\"\nwork_ms = {WORK_MS}"))
}

fn job(sc: &Sc) -> CpuJobSummary {
    let (o, l) = sc.run_with_ledger();
    l.check().unwrap();
    assert!(o.summary.stalled_flows.is_empty(), "{:?}", o.summary.stalled_flows);
    o.summary.vms[0].cpu_job.clone().expect("a cpu_job VM reports vms[].cpu_job")
}

fn base() -> Sc {
    Sc::new("job", "sriov").duration(0.2).warmup(0.0).pcpus(2)
}

fn done_ms(j: &CpuJobSummary) -> f64 {
    assert!(j.finished && j.done_pct == 100.0, "{j:?}");
    j.completion_ms.unwrap()
}

#[test]
fn alone_the_job_takes_its_work() {
    let t = done_ms(&job(&base().vm(job_vm())));
    assert!((WORK_MS..WORK_MS * 1.05).contains(&t), "{t} ms for {WORK_MS} ms of work");
}

#[test]
fn a_host_thread_on_its_pcpu_stretches_it() {
    let alone = done_ms(&job(&base().vm(job_vm())));
    // A nice-0 hog pinned to the job's pCPU (the default nice 19 would get ~1.5 % of it).
    let text = base().vm(job_vm()).toml() + "\n[[host.cpu_hog]]\nnice = 0\npins = [0]\n";
    let sc = Scenario::from_toml("t.toml", &text).unwrap();
    let out = run_parsed(sc, "t.toml", &RunOptions::default()).unwrap();
    let shared = done_ms(out.summary.vms[0].cpu_job.as_ref().unwrap());
    // CFS shares the pCPU about evenly between the vCPU and the hog.
    assert!(shared > 1.6 * alone, "{shared} vs {alone} ms");
}

#[test]
fn a_cohosted_vm_receiving_a_stream_on_its_pcpu_stretches_it() {
    let alone = done_ms(&job(&base().vm(job_vm())));
    let netperf = Vm::new("netperf", 1).pins(&[0])
        .net("kind = \"sriov_vf\"\nqueue_size = 512")
        .moderation("kind = \"fir\"\nitr = 8000")
        .workload("kind = \"tcp_receive\"\nmessage_bytes = 87380\nwindow_bytes = 87380");
    let beside = done_ms(&job(&base().vm(job_vm()).vm(netperf)));
    assert!(beside > 1.05 * alone, "{beside} vs {alone} ms");
}

#[test]
fn a_run_that_ends_first_reports_it_unfinished() {
    let j = job(&base().duration(0.02).vm(job_vm()));
    assert!(!j.finished && j.completion_ms.is_none(), "{j:?}");
    assert!(j.done_pct > 0.0 && j.done_pct < 100.0, "{j:?}");
    assert_eq!(j.work_ms, WORK_MS);
}
