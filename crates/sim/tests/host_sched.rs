//! The host scheduler end to end: shared pCPUs, pinning, CPU hogs, wake-up preemption, and
//! per-pCPU time conservation (thread run time + idle = window).

mod common;

use common::{Conservation, Sc, Vm};
use eventpath_sim::run::{simulate_with_ledger, RunOutput};
use eventpath_sim::scenario::Scenario;

/// A TCP stream from one VM whose vCPU and vhost thread are pinned to `pins` (none: unpinned)
/// beside CPU hogs pinned to `hogs` (each `[]`: unpinned).
fn scenario(pins: Option<[u32; 2]>, hogs: &[&[u32]], delivery: &str) -> Sc {
    let mut vm = Vm::new("vm0", 1).delivery(delivery);
    if let Some([vcpu, vhost]) = pins {
        vm = vm.pins(&[vcpu]).vhost_pin(vhost);
    }
    let sc = hogs.iter().fold(Sc::new("t", "es2").duration(0.1).warmup(0.01), |sc, pins| sc.hog(pins));
    sc.vm(vm.workload("kind = \"tcp_stream\"\nmessage_bytes = 512"))
}

fn run(sc: &Sc) -> (RunOutput, Conservation) {
    sc.run_with_ledger()
}

fn assert_time_conserved(c: &Conservation) {
    for p in 0..c.pcpu_busy_ns.len() {
        assert!(c.pcpu_busy_ns[p] <= c.window_ns);
        assert_eq!(c.pcpu_busy_ns[p], c.pcpu_thread_ns[p], "pCPU {p}: {c:?}");
    }
}

fn thread_pct(o: &RunOutput, name: &str) -> Vec<f64> {
    o.summary.host.threads.iter().find(|t| t.name == name).unwrap().pcpu_pct.clone()
}

#[test]
fn vcpu_and_vhost_share_one_pcpu_and_interrupts_find_the_vcpu_out_of_guest_mode() {
    let (o, c) = run(&scenario(Some([0, 0]), &[], "emulated"));
    assert_time_conserved(&c);
    let v = &o.summary.vms[0];
    assert!(v.throughput.gbps.unwrap() > 0.1, "{v:?}");
    // vhost runs only while the vCPU thread is off the pCPU (preempted in an exit, or halted),
    // so no device interrupt can find the vCPU in guest mode.
    let st = &v.device_interrupts_by_target_state_per_s;
    assert_eq!(st["guest"], Some(0.0), "{st:?}");
    assert!(st["exit"].unwrap() > 0.0, "{st:?}");
    assert_eq!(v.exits_per_s["interrupt_delivery"], Some(0.0));
    let (vc, vh) = (thread_pct(&o, "vcpu:vm0/0"), thread_pct(&o, "vhost-vm0"));
    assert!(vc[0] + vh[0] > 99.0, "the shared pCPU is saturated: {vc:?} {vh:?}");
    assert!(o.summary.host.context_switches_per_s.unwrap() > 1000.0);
}

#[test]
fn pinned_threads_never_run_elsewhere() {
    let (o, c) = run(&scenario(Some([3, 5]), &[&[3, 5]], "emulated"));
    assert_time_conserved(&c);
    for (name, home) in [("vcpu:vm0/0", 3), ("vhost-vm0", 5)] {
        let pct = thread_pct(&o, name);
        for (p, x) in pct.iter().enumerate() {
            assert!(p == home || *x == 0.0, "{name} ran on pCPU {p}: {pct:?}");
        }
    }
    let hog = thread_pct(&o, "hog0");
    assert!(hog.iter().enumerate().all(|(p, x)| p == 3 || p == 5 || *x == 0.0), "{hog:?}");
}

#[test]
fn an_unpinned_hog_runs_on_an_idle_pcpu_and_leaves_the_sender_alone() {
    let (base, _) = run(&scenario(None, &[], "emulated"));
    let (o, c) = run(&scenario(None, &[&[], &[]], "emulated"));
    assert_time_conserved(&c);
    let (g0, g1) = (base.summary.vms[0].throughput.gbps.unwrap(), o.summary.vms[0].throughput.gbps.unwrap());
    assert!((g1 / g0 - 1.0).abs() < 0.05, "{g0} vs {g1}");
    for h in ["hog0", "hog1"] {
        assert!(thread_pct(&o, h).iter().sum::<f64>() > 99.0, "{h} runs all the time");
    }
}

#[test]
fn a_nice_19_hog_on_the_vcpu_pcpu_gets_little_and_wakeups_preempt_it() {
    let (o, c) = run(&scenario(Some([0, 1]), &[&[0, 1]], "emulated"));
    assert_time_conserved(&c);
    let hog: f64 = thread_pct(&o, "hog0").iter().sum();
    let vc = thread_pct(&o, "vcpu:vm0/0")[0];
    // Weights 1024 : 15 — the vCPU keeps nearly all of pCPU 0; the hog takes vhost's idle time.
    assert!(vc > 90.0, "vCPU {vc}%");
    assert!(hog > 50.0, "the hog fills pCPU 1's idle time: {hog}%");
    // The vhost thread, woken by every kick, preempts the hog at once instead of waiting for
    // the hog's slice to end: the stream keeps most of its throughput.
    let (base, _) = run(&scenario(Some([0, 1]), &[], "emulated"));
    let (g0, g1) = (base.summary.vms[0].throughput.gbps.unwrap(), o.summary.vms[0].throughput.gbps.unwrap());
    assert!(g1 > 0.8 * g0, "{g0} vs {g1}");
}

#[test]
fn same_scenario_same_summary() {
    let sc = scenario(None, &[&[], &[0]], "posted");
    let (a, _) = run(&sc);
    let (b, _) = run(&sc);
    let mut sa = serde_json::to_value(&a.summary).unwrap();
    let mut sb = serde_json::to_value(&b.summary).unwrap();
    sa["wall_seconds"] = 0.into();
    sb["wall_seconds"] = 0.into();
    assert_eq!(sa, sb);
}

/// Seven streaming VMs on N+1 = 8 unpinned pCPUs (ELVIS §4.2 Baseline): every vCPU thread
/// stays on one pCPU — cache-hot threads are not pulled and short idles do not idle-balance
/// (Linux `task_hot`, `idle_balance`'s `avg_idle` gate) — instead of being smeared over many.
#[test]
fn busy_vcpus_of_seven_vms_on_eight_pcpus_stay_put() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/elvis-7vm-baseline.toml");
    let mut sc = Scenario::from_file(path).unwrap();
    sc.duration_s = 0.1;
    let (o, c) = simulate_with_ledger(&sc.check(path).unwrap());
    assert_time_conserved(&c);
    assert!(o.summary.stalled_flows.is_empty());
    for t in o.summary.host.threads.iter().filter(|t| t.name.starts_with("vcpu")) {
        let max = t.pcpu_pct.iter().cloned().fold(0.0, f64::max);
        let all: f64 = t.pcpu_pct.iter().sum();
        // At most one move in the run (a nohz balance may pull a vCPU that waited behind its
        // vhost thread longer than the cache-hot time), never smeared over many pCPUs.
        let moves = t.migrations_per_s * 0.1;
        assert!(max > 0.9 * all || moves <= 1.0 + 1e-9, "{} smeared: {:?}", t.name, t.pcpu_pct);
        assert!(t.migrations_per_s < 50.0, "{}: {} migrations/s", t.name, t.migrations_per_s);
    }
    assert_eq!(o.summary.host.migrations_by_cause_per_s["idle_balance"], 0.0);
}
