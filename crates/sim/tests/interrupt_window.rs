//! Vanilla KVM injection (issue 28 item 5; DID §2.2, §5.5; ES2 §2.2): an interrupt raised while
//! its vCPU handles an exit is injected at that exit's entry, with no exit of its own; one
//! raised while the guest has interrupts off (a handler in progress, until its `iret`) costs
//! an interrupt-window exit where software injects it (`emulated`), and none where the hardware
//! holds it (APICv's RVI, posted interrupts, DID's direct delivery).

mod common;

use common::{Sc, Vm};
use eventpath_sim::run::RunOutput;
use eventpath_sim::summary::VmSummary;

fn run(sc: &Sc) -> RunOutput {
    let (o, l) = sc.run_with_ledger();
    l.check().unwrap();
    assert!(o.summary.stalled_flows.is_empty(), "{:?}", o.summary.stalled_flows);
    o
}

fn ex(v: &VmSummary, reason: &str) -> f64 {
    v.exits_per_s[reason].unwrap()
}

/// DID §5.1's VM (one pinned vCPU, idle=poll) taking MSIs from a host source every
/// `interval_us` (± 50 %) and doing nothing else: each handler is short (`guest.timer_irq_ns`).
fn irq_source(mode: &str, interval_us: f64) -> VmSummary {
    let sc = Sc::new("window", "did").duration(0.05).warmup(0.01).pcpus(2).vm(Vm::new("vm0", 1)
        .pins(&[0])
        .delivery(mode)
        .guest_idle("poll")
        .workload(&format!("kind = \"irq_source\"\ninterval_us = {interval_us}")));
    run(&sc).summary.vms[0].clone()
}

#[test]
fn an_interrupt_raised_during_a_long_exit_is_injected_at_its_end_with_no_exit_of_its_own() {
    // ES2 §2.2's TCP sender with kicks made long (20 µs I/O-instruction exits): many ACK
    // interrupts arrive while the vCPU is in one.
    let sc = Sc::new("long-exit", "es2").duration(0.05).warmup(0.01)
        .vm(Vm::new("vm0", 1).pins(&[0]).vhost_pin(1).delivery("emulated")
            .net("queue_size = 256")
            .workload("kind = \"tcp_stream\"\nmessage_bytes = 512"))
        .profile_override("exit.io_instruction_ns", 20_000.0);
    let v = run(&sc).summary.vms[0].clone();
    let t = &v.device_interrupts_by_target_state_per_s;
    let (in_guest, in_exit) = (t["guest"].unwrap(), t["exit"].unwrap());
    // (About 15 % with i40e's adaptive ITR on both NICs: the ACK batches' phase against the
    // kicks sets the share; what is checked is what happens to those that land in an exit.)
    assert!(in_exit > 0.1 * (in_exit + in_guest), "long exits catch interrupts: {t:?}");
    // Only those that found the guest running cost a delivery exit (KVM kicks a vCPU in guest
    // mode only); the rest were injected at the entry that ended their exit.
    let delivery = ex(&v, "interrupt_delivery");
    assert!(delivery <= in_guest * 1.02 + 40.0, "delivery {delivery} vs raised in guest {in_guest} ({t:?})");
    let irqs = v.interrupts_per_s.unwrap();
    assert!(irqs > delivery + ex(&v, "interrupt_window") + 0.5 * in_exit,
        "injected without an exit for it: irqs {irqs}, {:?}", v.exits_per_s);
}

#[test]
fn a_vector_raised_while_a_handler_runs_waits_for_its_iret_and_an_interrupt_window_exit() {
    // Every 5 µs (± 50 %) against a ~3.5 µs injection path (delivery exit, handler, EOI exit):
    // often the next MSI comes while the last one's handler or EOI exit is in progress.
    let v = irq_source("emulated", 5.0);
    let (irqs, window) = (v.interrupts_per_s.unwrap(), ex(&v, "interrupt_window"));
    assert!(window > 0.05 * irqs, "window {window} of {irqs} interrupts: {:?}", v.exits_per_s);
    // Each window exit ends in an injection (it is taken only with a vector waiting).
    assert!(window <= irqs, "{window} > {irqs}");
    // The reason is a summary key and counts in the total.
    let sum: f64 = v.exits_per_s.values().map(|x| x.unwrap()).sum();
    assert!((sum - v.exits_total_per_s.unwrap()).abs() < 1e-6 * sum);
    // Far apart, the handler is over before the next MSI: no window to wait for.
    let sparse = irq_source("emulated", 200.0);
    assert!(ex(&sparse, "interrupt_window") < 0.01 * sparse.interrupts_per_s.unwrap(), "{:?}", sparse.exits_per_s);
}

#[test]
fn the_hardware_holds_a_vector_for_the_window_under_apicv_posting_and_did() {
    let emulated = irq_source("emulated", 5.0);
    for mode in ["apicv", "posted", "did"] {
        let v = irq_source(mode, 5.0);
        assert_eq!(ex(&v, "interrupt_window"), 0.0, "{mode}: {:?}", v.exits_per_s);
        // The same MSIs handled, none lost to the window.
        let ops = v.throughput.ops_per_s.unwrap();
        assert!((ops - emulated.throughput.ops_per_s.unwrap()).abs() < 0.01 * ops, "{mode}: {ops}");
    }
}

#[test]
fn did_5_5s_per_interrupt_exit_cost_is_what_a_sparse_emulated_interrupt_pays() {
    // DID §5.5: with the emulated LAPIC each VF interrupt costs an external-interrupt exit
    // (1.97 µs) and an EOI exit (0.85 µs); the did profile takes both as priors (cited there).
    // Sparse MSIs (from a back end: an interrupt-delivery exit at the same 1.97 µs) pay both
    // and nothing else: exit time per interrupt ≈ 2.82 µs.
    // The host's own tick is an external-interrupt exit too (`[housekeeping]`: did.toml's
    // tick_ns 735 ns beside the exit's 1.97 µs); its time is not the interrupts'.
    let v = irq_source("emulated", 200.0);
    let irqs = v.interrupts_per_s.unwrap();
    let host_ticks = v.exits_per_s["external_interrupt"].unwrap();
    let per_irq_us = (v.eht_pct.unwrap() / 100.0 - host_ticks * (1.970 + 0.735) * 1e-6) / irqs * 1e6;
    assert!((2.75..3.0).contains(&per_irq_us), "{per_irq_us} µs of exits per interrupt ({:?})", v.exits_per_s);
}
