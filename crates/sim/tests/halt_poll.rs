//! KVM halt polling (`[vm.halt_poll]`, `eventpath_policy::halt_poll` through the simulator's
//! adapter): a halted vCPU whose next interrupt comes within the poll window resumes without a
//! wake-up — lower latency for more host CPU.

mod common;

use common::{Sc, Vm};
use eventpath_sim::summary::Summary;

/// A UDP_RR VM whose `[vm.halt_poll]` is `halt_poll` (lines; "": no halt polling — the es2
/// host's Linux 4.4 KVM polls by default, so that is said).
fn run(halt_poll: &str) -> Summary {
    let sc = Sc::new("halt-poll", "es2").duration(0.05).warmup(0.01).vm(Vm::new("vm0", 1)
        .pins(&[0])
        .halt_poll(halt_poll)
        .vhost_pin(1)
        .workload("kind = \"udp_rr\"\nrequest_bytes = 64\nresponse_bytes = 64"))
        // The NICs' receive throttles off: with them one transaction in flight locks to their
        // gap and the wake-up that polling saves would not show in the round trip.
        .profile_override("host.nic_rx_itr_ns", 0)
        .profile_override("client.rx_itr_ns", 0);
    let (o, l) = sc.run_with_ledger();
    l.check().unwrap();
    assert!(o.summary.stalled_flows.is_empty());
    o.summary
}

#[test]
fn halt_polling_trades_host_cpu_for_wake_up_latency() {
    let off = run("max_halt_poll_ns = 0");
    let on = run("max_halt_poll_ns = 200000");
    let p50 = |s: &Summary| s.vms[0].latency_us.p50.unwrap();
    let vcpu_cpu = |s: &Summary| s.host.threads[0].pcpu_pct.iter().sum::<f64>();
    // Polling saves at least the wake-up of the halted vCPU thread (es2: 1.5 ± 0.5 us, plus
    // the idle-state exit) per round trip.
    assert!(p50(&on) < p50(&off) - 1.0, "latency p50 {} vs {} us", p50(&on), p50(&off));
    assert!(vcpu_cpu(&on) > vcpu_cpu(&off) + 10.0, "vCPU thread CPU {} vs {} %", vcpu_cpu(&on), vcpu_cpu(&off));
    // The guest halts as often either way; only the host side changed.
    assert!(on.vms[0].exits_per_s["hlt"].unwrap() > 0.5 * off.vms[0].exits_per_s["hlt"].unwrap());
}

#[test]
fn a_bad_halt_poll_parameter_is_one_line() {
    let e = Sc::new("h", "es2").vm(Vm::new("vm0", 1).halt_poll("grow_start = 0")).check_error();
    assert!(e.contains("halt_poll") && e.contains("grow_start") && !e.contains('\n'), "{e}");
}

/// Stock KVM polls where the profile's host kernel does by default (`host.halt_poll_ns`): a VM
/// that says nothing gets that `[vm.halt_poll]`, unless it never halts or its guest polls.
#[test]
fn a_vm_that_says_nothing_polls_where_its_kernel_does_by_default() {
    let vm = || Vm::new("vm0", 1).workload("kind = \"udp_rr\"\nrequest_bytes = 64\nresponse_bytes = 64");
    let polls = |sc: Sc| sc.check().scenario.vm[0].halt_poll.as_ref().map(|h| h.max_halt_poll_ns);
    // modern: Linux 6.1's KVM_HALT_POLL_NS_DEFAULT.
    assert_eq!(polls(Sc::new("hp", "modern").vm(vm())), Some(200_000));
    // es2: Linux 4.4's (the longterm 4.4.y, KVM_HALT_POLL_NS_DEFAULT 400000).
    assert_eq!(polls(Sc::new("hp", "es2").vm(vm())), Some(400_000));
    // A kernel without halt polling (did: Linux 3.6, before 4.0 brought it) does not poll unless asked.
    assert_eq!(polls(Sc::new("hp", "did").vm(vm())), None);
    // What the scenario says wins: off, or its own window.
    assert_eq!(polls(Sc::new("hp", "modern").vm(vm().halt_poll("max_halt_poll_ns = 0"))), Some(0));
    assert_eq!(polls(Sc::new("hp", "modern").vm(vm().halt_poll("max_halt_poll_ns = 50000"))), Some(50_000));
    // vCPUs that never halt, and a guest whose own polling turns KVM's off, get none.
    assert_eq!(polls(Sc::new("hp", "modern").vm(vm().burn(true))), None);
    assert_eq!(polls(Sc::new("hp", "modern").vm(vm().guest_idle("poll"))), None);
    assert_eq!(polls(Sc::new("hp", "modern").vm(vm().lines("guest_halt_poll = { guest_halt_poll_ns = 100000 }"))), None);
    // And the run polls: the vCPU thread is busy while its vCPU waits for the next request.
    let o = Sc::new("hp", "modern").duration(0.02).warmup(0.005).vm(vm()).run_clean();
    assert!(o.summary.vms[0].halt_poll_pct.unwrap() > 0.0, "{:?}", o.summary.vms[0].halt_poll_pct);
}
