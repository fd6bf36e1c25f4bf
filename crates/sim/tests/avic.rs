//! AMD AVIC (`[vm.apic] avic`, `eventpath_policy::delivery::features`): an IPI to a running
//! target (IsRunning) costs its sender no exit; one to a target not running costs the sender
//! an AVIC_INCOMPLETE_IPI exit (counted as `ipi`) and the target a wake-up; on a CPU with
//! erratum 1235 every ICR write exits. Device interrupts and EOIs go as in `posted` mode. The
//! built-in profiles are Intel: each run asks "what if" with `[profile_overrides.cpu] avic = 1`.

mod common;

use common::{exits, exit_kinds as kinds, Sc, Vm};
use eventpath_sim::run::RunOutput;

fn run(sc: &Sc) -> RunOutput {
    sc.run_clean()
}

fn amd(sc: Sc) -> Sc {
    sc.profile_override("cpu.avic", 1)
}

/// kvm-unit-tests' IPI round trip (as `tests/ipi_pingpong.rs`), vCPU 0 → vCPU 1.
/// `gap`: `interval_us` between round trips (None: back to back).
fn pingpong(halt_poll: bool, gap: Option<f64>, apic: &str) -> Sc {
    let w = match gap {
        Some(us) => format!("kind = \"ipi_pingpong\"\ninterval_us = {us:?}"),
        None => "kind = \"ipi_pingpong\"".to_string(),
    };
    let mut vm = Vm::new("vm0", 2).pins(&[0, 1]).vhost_pin(2).delivery("posted").workload(&w);
    // Without it, said: the es2 host's Linux 4.4 KVM polls by default.
    vm = vm.halt_poll(if halt_poll { "max_halt_poll_ns = 200000" } else { "max_halt_poll_ns = 0" });
    if !apic.is_empty() {
        vm = vm.lines(&format!("apic = {{ {apic} }}"));
    }
    amd(Sc::new("avic_pingpong", "es2").pcpus(3).duration(0.2).warmup(0.02).vm(vm))
}

/// nginx in a 2-vCPU VM with 4 workers (examples/nginx-workers.toml): device interrupts to
/// vCPU 0, reschedule IPIs from it to workers sleeping on vCPU 1.
fn workers(mode: &str, apic: &str) -> Sc {
    // KVM's halt polling off (the es2 host's 4.4 KVM polls by default): vCPU 1 blocks between
    // requests, so an IPI to it must find IsRunning clear.
    amd(common::nginx_workers("avic", "es2", mode, &format!("apic = {{ {apic} }}"))).profile_override("host.halt_poll_ns", 0)
}

#[test]
fn a_halt_polling_target_is_running_so_no_round_trip_exits_its_sender() {
    let base = run(&pingpong(true, None, ""));
    let avic = run(&pingpong(true, None, "avic = true"));
    let (b, a) = (&base.summary.vms[0], &avic.summary.vms[0]);
    eprintln!("posted, halt polling: {:?} {:?}\navic: {:?} {:?}", b.exits_per_s, b.latency_us, a.exits_per_s, a.latency_us);
    assert!(b.exits_per_s["ipi"].unwrap() > 1_000.0);
    // KVM polls before kvm_vcpu_block clears IsRunning: every IPI finds its target running.
    assert_eq!(a.exits_per_s["ipi"], Some(0.0), "{:?}", a.exits_per_s);
    assert!(a.latency_us.p50.unwrap() <= b.latency_us.p50.unwrap());
    // The target's side stays: its HLT exits per trip.
    let per_trip = |v: &eventpath_sim::summary::VmSummary| v.exits_per_s["hlt"].unwrap() / v.throughput.ops_per_s.unwrap();
    assert!((per_trip(b) - per_trip(a)).abs() < 0.05, "{} vs {}", per_trip(b), per_trip(a));
}

#[test]
fn a_blocked_target_costs_the_sender_an_incomplete_ipi_exit_a_halting_one_does_not() {
    let per_trip = |v: &eventpath_sim::summary::VmSummary| v.exits_per_s["ipi"].unwrap() / v.throughput.ops_per_s.unwrap();
    // 50 µs apart without halt polling: the target has blocked (IsRunning clear) by the next IPI.
    let base = run(&pingpong(false, Some(50.0), ""));
    let avic = run(&pingpong(false, Some(50.0), "avic = true"));
    let (b, a) = (&base.summary.vms[0], &avic.summary.vms[0]);
    eprintln!("posted, blocked target: {:?} {:?}\navic: {:?} {:?}", b.exits_per_s, b.latency_us, a.exits_per_s, a.latency_us);
    assert!((per_trip(b) - 1.0).abs() < 0.02, "{}", per_trip(b));
    assert!((per_trip(a) - 1.0).abs() < 0.02, "every IPI to a blocked target exits its sender: {}", per_trip(a));
    assert_eq!(kinds(&base), kinds(&avic));
    // Back to back without halt polling: the IPI finds the target still in its HLT exit, loaded
    // on its pCPU (IsRunning set): no exit (IPIv's -43 % case, docs/model.md).
    let b2b = run(&pingpong(false, None, "avic = true"));
    let v = &b2b.summary.vms[0];
    eprintln!("avic, back to back, no halt polling: {:?} {:?}", v.exits_per_s, v.latency_us);
    assert!(per_trip(v) < 0.05, "{}", per_trip(v));
}

#[test]
fn erratum_1235_leaves_every_icr_write_exit() {
    let base = run(&pingpong(true, None, ""));
    let zen2 = run(&pingpong(true, None, "avic = true").profile_override("cpu.avic_erratum_1235", 1));
    let (b, z) = (&base.summary.vms[0], &zen2.summary.vms[0]);
    let per_trip = |v: &eventpath_sim::summary::VmSummary| v.exits_per_s["ipi"].unwrap() / v.throughput.ops_per_s.unwrap();
    eprintln!("erratum 1235: {:?}", z.exits_per_s);
    assert!((per_trip(z) - 1.0).abs() < 0.02 && (per_trip(b) - 1.0).abs() < 0.02, "{} {}", per_trip(z), per_trip(b));
}

#[test]
fn on_a_network_workload_avic_removes_the_ipis_to_running_workers_and_emulated_modes_exits() {
    let emulated = run(&workers("emulated", ""));
    let posted = run(&workers("posted", ""));
    let avic = run(&workers("posted", "avic = true"));
    let rps = |o: &RunOutput| o.summary.vms[0].throughput.ops_per_s.unwrap();
    for (n, o) in [("emulated", &emulated), ("posted", &posted), ("avic", &avic)] {
        let total: f64 = o.summary.vms[0].exits_per_s.values().map(|x| x.unwrap_or(0.0)).sum();
        eprintln!("{n}: {total:.0} exits/s {:?} {:.0} req/s", o.summary.vms[0].exits_per_s, rps(o));
    }
    let (p, a) = (exits(&posted, "ipi"), exits(&avic, "ipi"));
    assert!(p > 1_000.0, "{p}");
    // (The guest's CFS sends a reschedule IPI to a running vCPU only to preempt its thread.)
    assert!(a <= p, "IPIs to running workers exit no more: {a} of {p}");
    assert!(a > 0.0, "IPIs to a halted vCPU 1 still exit (AVIC_INCOMPLETE_IPI)");
    // Against the emulated LAPIC: no EOI, interrupt-delivery or interrupt-window exits.
    for r in ["eoi", "interrupt_delivery", "interrupt_window"] {
        assert!(exits(&emulated, r) > 0.0, "{r}");
        assert_eq!(exits(&avic, r), 0.0, "{r}");
    }
    // The other kinds stay as posted has them.
    assert_eq!(kinds(&avic), kinds(&posted));
    assert!(rps(&avic) >= 0.98 * rps(&posted), "{} vs {}", rps(&avic), rps(&posted));
}

#[test]
fn avic_is_refused_on_intel_without_posting_beside_ipiv_and_for_an_x2apic_guest_without_x2avic() {
    let one = |e: String, key: &str, says: &str| {
        assert!(e.contains(&format!("key `vm[0].apic.{key}`")) && e.contains(says), "{e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    };
    one(common::nginx_workers("avic", "es2", "posted", "apic = { avic = true }").error(), "avic", "cpu.avic");
    for mode in ["emulated", "apicv"] {
        one(workers(mode, "avic = true").error(), "avic", "\"posted\"");
    }
    one(workers("posted", "avic = true, ipiv = true").profile_override("cpu.ipiv", 1).error(), "avic", "ipiv");
    one(workers("posted", "avic = true, x2apic = true").error(), "x2apic", "x2AVIC");
    one(workers("posted", "x2apic = true").error(), "x2apic", "avic = true");
    // With x2AVIC (Zen 4) the x2APIC guest keeps AVIC.
    workers("posted", "avic = true, x2apic = true").profile_override("cpu.x2avic", 1).check();
}
