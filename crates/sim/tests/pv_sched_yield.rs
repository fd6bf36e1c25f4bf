//! KVM PV sched yield (`[vm.apic] pv_sched_yield`, `KVM_HC_SCHED_YIELD`, issue 32): after a
//! call-function IPI to several vCPUs the guest yields to the first destination that is
//! preempted, and the host's CFS gives that vCPU's thread the pCPU if it is fair to
//! (`sched/yield_to.rs`). It removes no exit — it adds a hypercall (`other`) — and changes only
//! who runs: nothing where no destination is preempted; where one is, one hypercall per round
//! trip that finds it so, and a switch to the target when CFS's fairness test lets it run.

mod common;

use common::{exits, Sc, Vm};
use eventpath_sim::run::RunOutput;

/// kvm-unit-tests' IPI round trip from vCPU 0 to vCPUs 1–3 at once, every vCPU busy (the guest
/// CPU burn: they never halt, so a waiting one is preempted, not blocked), each on its own
/// pCPU; `hogs`: a host CPU hog of that nice value beside each target.
fn trips(hogs: Option<i32>, sched_yield: bool) -> Sc {
    trips_to(3, hogs, sched_yield)
}

/// [`trips`] to `targets` vCPUs.
fn trips_to(targets: u32, hogs: Option<i32>, sched_yield: bool) -> Sc {
    let vm = Vm::new("smp", 4)
        .pins(&[0, 1, 2, 3])
        .vhost_pin(4)
        .delivery("posted")
        .burn(true)
        .lines(&format!("apic = {{ pv_sched_yield = {sched_yield} }}"))
        .workload(&format!("kind = \"ipi_pingpong\"\ntargets = {targets}"));
    let mut sc = Sc::new("pv_sched_yield", "es2").pcpus(5).duration(0.3).warmup(0.03).vm(vm);
    if let Some(nice) = hogs {
        for c in 1..4 {
            sc = sc.hog_nice(&[c], nice);
        }
    }
    sc
}

fn round_trips(o: &RunOutput) -> f64 {
    o.summary.vms[0].throughput.ops_per_s.unwrap()
}

fn show(what: &str, o: &RunOutput) {
    let v = &o.summary.vms[0];
    eprintln!(
        "{what}: {:.0} round trips/s, mean {:.1} µs, p99 {:.1} µs; ipi {} other {} exits/s; {} context switches/s",
        round_trips(o),
        v.latency_us.mean.unwrap_or(0.0),
        v.latency_us.p99.unwrap_or(0.0),
        exits(o, "ipi"),
        exits(o, "other"),
        o.summary.host.context_switches_per_s.unwrap_or(0.0)
    );
}

#[test]
fn with_no_destination_preempted_nothing_changes() {
    // No pCPU kernel thread (`[housekeeping]`), whose rare wake-ups would preempt a vCPU now
    // and then: then no destination is ever preempted.
    let quiet = |y| trips(None, y).profile_override("housekeeping.kthread_interval_ns", 0);
    let (off, on) = (quiet(false).run_clean(), quiet(true).run_clean());
    show("alone, no yield", &off);
    assert_eq!(exits(&on, "other"), 0.0, "no destination preempted: no hypercall");
    assert_eq!(on.summary.vms[0].exits_per_s, off.summary.vms[0].exits_per_s);
    assert_eq!(round_trips(&on), round_trips(&off));
}

#[test]
fn a_send_that_finds_a_destination_preempted_costs_one_hypercall_and_the_icr_writes_stay() {
    for nice in [0, 19] {
        let (off, on) = (trips(Some(nice), false).run_clean(), trips(Some(nice), true).run_clean());
        show(&format!("hogs of nice {nice}, no yield"), &off);
        show(&format!("hogs of nice {nice}, PV sched yield"), &on);
        assert_eq!(exits(&off, "other"), 0.0);
        let yields = exits(&on, "other");
        assert!(yields > 0.0, "nice {nice}: the hogs preempt the targets");
        assert!(yields <= round_trips(&on), "nice {nice}: at most one yield per round trip: {yields}");
        for o in [&off, &on] {
            // Three ICR writes per round trip, with or without the yield (no PV IPI here).
            let per_trip = exits(o, "ipi") / round_trips(o);
            assert!((per_trip - 3.0).abs() < 0.01, "nice {nice}: {per_trip} ICR-write exits per round trip");
        }
    }
}

/// Beside a nice-19 hog (weight 15) CFS's fairness test always passes (the wake-up granularity
/// scales by the leftmost's weight: ~70 times longer), so every yield switches the hog out for
/// the target at once; the hog gets its pCPU back at the next tick.
#[test]
fn a_fair_yield_switches_the_targets_pcpu_to_it() {
    let (off, on) = (trips(Some(19), false).run_clean(), trips(Some(19), true).run_clean());
    let switches = |o: &RunOutput| o.summary.host.context_switches_per_s.unwrap();
    let yields = exits(&on, "other");
    assert!(
        switches(&on) >= switches(&off) + yields,
        "{} switches/s with {yields} yields/s against {} without",
        switches(&on),
        switches(&off)
    );
}

#[test]
fn pv_sched_yield_is_refused_without_a_multi_destination_send_and_under_xen() {
    let e = trips_to(1, None, true).error();
    assert!(e.contains("key `vm[0].apic.pv_sched_yield`") && e.contains("single-destination"), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
    let xen = Sc::new("pv_sched_yield_xen", "hbalance")
        .host("virtualization = \"xen\"\nscheduler = \"xen_credit\"")
        .vm(Vm::new("smp", 4)
            .net("kind = \"xen_pv\"")
            .lines("apic = { pv_sched_yield = true }")
            .workload("kind = \"ipi_pingpong\"\ntargets = 3"));
    let e = xen.error();
    assert!(e.contains("key `vm[0].apic.pv_sched_yield`") && e.contains("Xen"), "{e}");
}
