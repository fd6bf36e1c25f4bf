//! A CPU burn at the lowest guest priority (`guest_cpu_burn`): the vCPU never halts, the I/O
//! workload still runs first, and interrupts now find the vCPU in guest mode.

mod common;

use common::{Sc, Vm};
use eventpath_sim::run::{run_parsed, RunOptions};
use eventpath_sim::scenario::Scenario;
use eventpath_sim::summary::VmSummary;

fn run(path: &str, burn: bool, edit: impl Fn(String) -> String) -> VmSummary {
    let file = format!("{}/../../examples/{path}", env!("CARGO_MANIFEST_DIR"));
    let mut text = edit(std::fs::read_to_string(&file).unwrap());
    if burn {
        text = text.replacen("vcpus = 1\n", "vcpus = 1\nguest_cpu_burn = true\n", 1);
    }
    let sc = Scenario::from_toml(path, &text).unwrap();
    let opts = RunOptions { duration_s: Some(0.1), ..Default::default() };
    run_parsed(sc, path, &opts).unwrap().summary.vms[0].clone()
}

#[test]
fn burn_keeps_the_vcpu_busy_and_the_workload_first() {
    let idle = run("udp-rr.toml", false, |t| t);
    let busy = run("udp-rr.toml", true, |t| t);
    assert!(idle.exits_per_s["hlt"].unwrap() > 1000.0, "the request/response guest halts between requests");
    assert_eq!(busy.exits_per_s["hlt"], Some(0.0), "a burning vCPU never halts");
    assert!(busy.cpu_util_pct.unwrap() > 99.0);
    // The workload preempts the burn: it keeps most of its transaction rate.
    let (a, b) = (idle.throughput.ops_per_s.unwrap(), busy.throughput.ops_per_s.unwrap());
    assert!(b > 0.5 * a, "burn starved the workload: {b} vs {a} transactions/s");
    // Interrupts now find the vCPU running guest code: emulated delivery needs an IPI exit.
    let d = |v: &VmSummary| v.exits_per_s["interrupt_delivery"].unwrap();
    assert!(d(&busy) > 10.0 * d(&idle).max(1.0), "{} vs {}", d(&busy), d(&idle));
}

#[test]
fn timed_workload_still_runs_on_time_beside_a_burn() {
    let busy = run("udp-send.toml", true, |t| t.replace("rate_pps = 50000", "rate_pps = 20000"));
    let pps = busy.throughput.pps.unwrap();
    assert!((pps - 20_000.0).abs() < 600.0, "{pps}");
    assert_eq!(busy.exits_per_s["hlt"], Some(0.0));
}

/// A VM with no `[vm.workload]` (ES2 §6.3's background VMs): with a burn its vCPUs stay busy,
/// without one they halt; either way it has no throughput (null) and no flow to stall.
#[test]
fn a_vm_without_a_workload_burns_or_idles() {
    let sc = Sc::new("bg", "es2").duration(0.05).warmup(0.01).pcpus(2);
    let s = sc.vm(Vm::new("burn-only", 2).burn(true)).vm(Vm::new("idle", 1)).run().summary;
    let (burn, idle) = (&s.vms[0], &s.vms[1]);
    assert!(burn.tig_pct.unwrap() > 40.0, "two burning vCPUs share two pCPUs: {:?}", burn.tig_pct);
    assert_eq!(burn.exits_per_s["hlt"], Some(0.0));
    // (Its thread, started in the warm-up behind a burning vCPU's slice, may first run and
    // halt just inside the window.)
    assert!(idle.cpu_util_pct.unwrap() < 0.01, "an idle VM's vCPU halts: {:?}", idle.cpu_util_pct);
    assert!(idle.exits_per_s["hlt"].unwrap() <= 20.0, "{:?}", idle.exits_per_s);
    for v in [burn, idle] {
        assert_eq!((v.throughput.gbps, v.throughput.pps, v.latency_us.p50, v.loss_pct), (None, None, None, None));
    }
    assert!(s.stalled_flows.is_empty());
}

#[test]
fn the_burns_work_is_the_vcpu_time_left_by_the_workload_and_the_exits() {
    let idle = run("udp-rr.toml", false, |t| t);
    assert_eq!(idle.guest_burn_pct, None, "no burn, no burn share");
    let busy = run("udp-rr.toml", true, |t| t);
    let share = busy.guest_burn_pct.unwrap();
    // Less than the guest time (the workload, interrupts, refills after exits take their part).
    assert!(share > 10.0 && share < busy.tig_pct.unwrap(), "{share} vs tig {}", busy.tig_pct.unwrap());
    // More traffic leaves the burn less.
    let faster = run("udp-send.toml", true, |t| t.replace("rate_pps = 50000", "rate_pps = 5000"));
    let slower = run("udp-send.toml", true, |t| t);
    assert!(faster.guest_burn_pct.unwrap() > slower.guest_burn_pct.unwrap());
}
