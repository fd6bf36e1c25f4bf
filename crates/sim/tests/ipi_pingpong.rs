//! kvm-unit-tests' IPI round trip (`kind = "ipi_pingpong"`): vCPU 0 sends a call-function IPI
//! to vCPU 1 and spins until its handler ran. Each round trip costs the sender one ICR-write
//! exit, which IPI virtualization removes; the target's wake-up stays. The IPIs are counted by
//! kind (`vms[].ipis_by_kind_per_s`).

mod common;

use common::{Sc, Vm};
use eventpath_sim::run::RunOutput;

/// A 2-vCPU VM on pCPUs 0 and 1, vhost elsewhere; the target halts with KVM's default polling
/// (as kvm-unit-tests' secondary CPUs `hlt` under a stock host) or without it.
fn pingpong(delivery: &str, halt_poll: bool, ipiv: bool) -> Sc {
    let mut vm = Vm::new("vm0", 2).pins(&[0, 1]).vhost_pin(2).delivery(delivery).workload("kind = \"ipi_pingpong\"");
    if halt_poll {
        vm = vm.halt_poll("max_halt_poll_ns = 200000");
    }
    if ipiv {
        vm = vm.lines("apic = { ipiv = true }");
    }
    let sc = Sc::new("ipi_pingpong", "es2").pcpus(3).duration(0.2).warmup(0.02).vm(vm);
    if ipiv { sc.profile_override("cpu.ipiv", 1) } else { sc }
}

fn run(sc: &Sc) -> RunOutput {
    let (o, l) = sc.run_with_ledger();
    l.check().unwrap();
    assert!(o.summary.stalled_flows.is_empty(), "{:?}", o.summary.stalled_flows);
    o
}

#[test]
fn every_round_trip_is_one_call_function_ipi_and_one_icr_write_exit() {
    let o = run(&pingpong("posted", true, false));
    let v = &o.summary.vms[0];
    let trips = v.throughput.ops_per_s.unwrap();
    // Back to back: each trip is a few µs.
    assert!(trips > 50_000.0, "back to back: {trips}");
    let kinds = v.ipis_by_kind_per_s.get().unwrap();
    assert!((kinds["call_function"].unwrap() - trips).abs() <= 0.01 * trips + 10.0, "{kinds:?} vs {trips}");
    assert_eq!(kinds["reschedule"], Some(0.0));
    assert_eq!(v.interrupts_by_source_per_s.get().unwrap()["ipi"], kinds["call_function"]);
    assert!((v.exits_per_s["ipi"].unwrap() - trips).abs() <= 0.01 * trips + 10.0, "{:?}", v.exits_per_s);
    let l = &v.latency_us;
    eprintln!("posted, halt polling: {trips} trips/s, round trip {l:?}");
    assert!(l.p50.unwrap() > 0.5 && l.p50.unwrap() < 50.0, "{l:?}");
}

#[test]
fn ipi_virtualization_removes_the_senders_exit_and_shortens_the_round_trip() {
    for halt_poll in [true, false] {
        let base = run(&pingpong("posted", halt_poll, false));
        let ipiv = run(&pingpong("posted", halt_poll, true));
        let (b, i) = (&base.summary.vms[0], &ipiv.summary.vms[0]);
        assert!(b.exits_per_s["ipi"].unwrap() > 1_000.0);
        assert_eq!(i.exits_per_s["ipi"], Some(0.0));
        let (lb, li) = (b.latency_us.p50.unwrap(), i.latency_us.p50.unwrap());
        eprintln!("halt_poll {halt_poll}: round trip p50 {lb:.2} -> {li:.2} us with IPIv ({:+.1} %)", 100.0 * (li / lb - 1.0));
        assert!(li < lb, "{lb} -> {li}");
        // The target's side stays: its halts (HLT exits) are the same per trip.
        let per_trip = |v: &eventpath_sim::summary::VmSummary| v.exits_per_s["hlt"].unwrap() / v.throughput.ops_per_s.unwrap();
        assert!((per_trip(b) - per_trip(i)).abs() < 0.05, "{} vs {}", per_trip(b), per_trip(i));
    }
}

#[test]
fn a_bad_target_or_guest_halt_polling_is_refused_naming_the_key() {
    let e = Sc::new("ipi_bad", "es2").pcpus(2).vm(Vm::new("vm0", 2).workload("kind = \"ipi_pingpong\"\nto_vcpu = 0")).error();
    assert!(e.contains("vm[0].workload.to_vcpu") || e.contains("workload.to_vcpu"), "{e}");
    let e = Sc::new("ipi_bad", "es2").pcpus(2).vm(Vm::new("vm0", 1).workload("kind = \"ipi_pingpong\"")).error();
    assert!(e.contains("to_vcpu"), "{e}");
    let e = Sc::new("ipi_bad", "es2")
        .pcpus(2)
        .vm(Vm::new("vm0", 2).lines("guest_halt_poll = {}").workload("kind = \"ipi_pingpong\""))
        .error();
    assert!(e.contains("guest_halt_poll"), "{e}");
}

/// One call-function IPI from vCPU 0 to vCPUs 1..=3 of a 4-vCPU VM (`targets = 3`,
/// `smp_call_function_many`), each vCPU on its own pCPU; `apic`: `[vm.apic]` keys.
fn many(apic: &str, ipiv_cpu: bool) -> Sc {
    let mut vm = Vm::new("vm0", 4).pins(&[0, 1, 2, 3]).vhost_pin(4).delivery("posted").halt_poll("max_halt_poll_ns = 200000");
    vm = vm.workload("kind = \"ipi_pingpong\"\ntargets = 3");
    if !apic.is_empty() {
        vm = vm.lines(&format!("apic = {{ {apic} }}"));
    }
    let sc = Sc::new("ipi_many", "es2").pcpus(5).duration(0.2).warmup(0.02).vm(vm);
    if ipiv_cpu { sc.profile_override("cpu.ipiv", 1) } else { sc }
}

#[test]
fn pv_ipi_makes_a_three_destination_send_one_exit_and_leaves_the_targets_side() {
    let per_trip = |o: &RunOutput, r: &str| o.summary.vms[0].exits_per_s[r].unwrap() / o.summary.vms[0].throughput.ops_per_s.unwrap();
    let base = run(&many("", false));
    let pv = run(&many("pv_ipi = true", false));
    let ipiv = run(&many("ipiv = true", true));
    let both = run(&many("ipiv = true, pv_ipi = true", true));
    for (n, o) in [("posted", &base), ("pv_ipi", &pv), ("ipiv", &ipiv), ("ipiv + pv_ipi", &both)] {
        let v = &o.summary.vms[0];
        eprintln!("{n}: {:.0} trips/s, {:?}, round trip {:?}", v.throughput.ops_per_s.unwrap(), v.exits_per_s, v.latency_us.p50);
    }
    // send_IPI_mask writes the ICR once per destination: three exits a trip; the hypercall one.
    assert!((per_trip(&base, "ipi") - 3.0).abs() < 0.05, "{}", per_trip(&base, "ipi"));
    assert!((per_trip(&pv, "ipi") - 1.0).abs() < 0.05, "{}", per_trip(&pv, "ipi"));
    // Every target still takes its IPI and halts again.
    for o in [&base, &pv] {
        let v = &o.summary.vms[0];
        let cf = v.ipis_by_kind_per_s.get().unwrap()["call_function"].unwrap() / v.throughput.ops_per_s.unwrap();
        assert!((cf - 3.0).abs() < 0.05, "{cf}");
    }
    assert!((per_trip(&base, "hlt") - per_trip(&pv, "hlt")).abs() < 0.1, "{} vs {}", per_trip(&base, "hlt"), per_trip(&pv, "hlt"));
    // IPIv virtualizes each write; with PV IPI the guest takes the hypercall anyway (CPUID).
    assert_eq!(per_trip(&ipiv, "ipi"), 0.0);
    assert!((per_trip(&both, "ipi") - 1.0).abs() < 0.05, "{}", per_trip(&both, "ipi"));
}

#[test]
fn pv_ipi_is_refused_beside_a_single_target_and_targets_past_the_vm_are_refused() {
    let e = Sc::new("ipi_bad", "es2").pcpus(3).vm(Vm::new("vm0", 2).delivery("posted").workload("kind = \"ipi_pingpong\"").lines("apic = { pv_ipi = true }")).error();
    assert!(e.contains("key `vm[0].apic.pv_ipi`") && e.contains("targets"), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
    for n in [0, 4] {
        let e = Sc::new("ipi_bad", "es2").pcpus(5).vm(Vm::new("vm0", 4).workload(&format!("kind = \"ipi_pingpong\"\ntargets = {n}"))).error();
        assert!(e.contains("workload.targets") && e.contains("1..=3"), "{e}");
    }
}
