//! Guest halt polling (`[vm.guest_halt_poll]`, the guest's cpuidle-haltpoll driver): the idle
//! guest polls in guest mode before HLT, so idle periods that end inside the poll cost no HLT
//! exit, and a waker on another vCPU that finds the POLL flag set sends no reschedule IPI; the
//! poll is guest time, reported apart from KVM's host-side polling; the keys it cannot go with
//! are refused with one line naming them.

mod common;

use common::{exits, Sc, Vm};
use eventpath_sim::run::RunOutput;

fn run(sc: &Sc) -> RunOutput {
    sc.run_clean()
}

/// A 1-byte UDP ping-pong into a 1-vCPU VM with posted interrupts (the guest-haltpoll
/// reproduction's layout); `lines`: the VM's polling table, as `[[vm]]` lines.
fn ping_pong(lines: &str) -> Sc {
    Sc::new("ghp", "es2").duration(0.1).warmup(0.02).pcpus(2).vm(Vm::new("vm0", 1)
        .pins(&[0])
        .delivery("posted")
        .lines(lines)
        .vhost_pin(1)
        .workload("kind = \"udp_rr\"\nrequest_bytes = 1\nresponse_bytes = 1"))
}

/// nginx with 4 workers on their own ports in a 2-vCPU VM: the device interrupts go to vCPU 0,
/// which wakes the workers homed on vCPU 1 (examples/nginx-workers.toml, es2 profile).
fn workers(lines: &str) -> Sc {
    common::nginx_workers("ghp-workers", "es2", "posted", lines)
}

#[test]
fn guest_polling_removes_hlt_exits_host_polling_keeps_them_and_each_reports_its_own_cpu() {
    // "none": neither poller (the es2 host's Linux 4.4 KVM polls by default: turned off).
    let none = run(&ping_pong("halt_poll = { max_halt_poll_ns = 0 }"));
    let host = run(&ping_pong("halt_poll = { max_halt_poll_ns = 300000 }"));
    let guest = run(&ping_pong("guest_halt_poll = { guest_halt_poll_ns = 300000 }"));
    let (vn, vh, vg) = (&none.summary.vms[0], &host.summary.vms[0], &guest.summary.vms[0]);
    eprintln!("none {:?} {:?}\nhost {:?} {:?} {:?}\nguest {:?} {:?} {:?}", vn.exits_per_s, vn.throughput,
        vh.exits_per_s, vh.throughput, vh.halt_poll_pct, vg.exits_per_s, vg.throughput, vg.guest_halt_poll_pct);
    let ops = |v: &eventpath_sim::summary::VmSummary| v.throughput.ops_per_s.unwrap();
    assert!(exits(&none, "hlt") > 0.8 * ops(vn), "every idle period halts");
    assert!(exits(&host, "hlt") > 0.8 * ops(vh), "KVM's polling starts after the HLT exit");
    assert!(exits(&guest, "hlt") < 0.5 * exits(&host, "hlt"), "{} vs {}", exits(&guest, "hlt"), exits(&host, "hlt"));
    // The CPU each poller burns, apart: host time for KVM's, guest time for the guest's.
    assert!(vh.halt_poll_pct.unwrap() > 20.0 && vh.guest_halt_poll_pct.is_none());
    assert!(vg.guest_halt_poll_pct.unwrap() > 20.0 && vg.halt_poll_pct.is_none());
    assert!(vn.halt_poll_pct.unwrap_or(0.0) == 0.0 && vn.guest_halt_poll_pct.is_none(), "{:?}", vn.halt_poll_pct);
    assert!(vg.tig_pct.unwrap() > vn.tig_pct.unwrap() + 20.0, "the guest's poll runs in guest mode");
    assert!(vg.tig_pct.unwrap() >= vg.guest_halt_poll_pct.unwrap());
    // Neither poller makes the ping-pong slower.
    assert!(ops(vg) >= 0.99 * ops(vn) && ops(vh) >= 0.99 * ops(vn));
}

#[test]
fn a_waker_finds_the_poll_flag_and_sends_no_ipi() {
    let base = run(&workers(""));
    let poll = run(&workers("guest_halt_poll = {}"));
    eprintln!("halt: {:?}\nguest poll: {:?}", base.summary.vms[0].exits_per_s, poll.summary.vms[0].exits_per_s);
    let ipis = |o: &RunOutput| o.summary.vms[0].interrupts_by_source_per_s["ipi"].unwrap();
    assert!(exits(&base, "ipi") > 1000.0, "workers on vCPU 1 are woken by reschedule IPIs");
    assert!(exits(&poll, "ipi") < 0.5 * exits(&base, "ipi"), "{} vs {}", exits(&poll, "ipi"), exits(&base, "ipi"));
    assert!(ipis(&poll) < 0.5 * ipis(&base), "the polling target gets no IPI: {} vs {}", ipis(&poll), ipis(&base));
    // The woken workers still serve: the requests go on.
    let ops = |o: &RunOutput| o.summary.vms[0].throughput.ops_per_s.unwrap();
    assert!(ops(&poll) > 0.9 * ops(&base), "{} vs {}", ops(&poll), ops(&base));
}

#[test]
fn same_seed_same_summary() {
    let a = run(&workers("guest_halt_poll = { guest_halt_poll_ns = 100000 }"));
    let b = run(&workers("guest_halt_poll = { guest_halt_poll_ns = 100000 }"));
    assert_eq!(serde_json::to_string(&a.summary.vms).unwrap(), serde_json::to_string(&b.summary.vms).unwrap());
}

#[test]
fn what_guest_polling_cannot_go_with_is_refused_naming_the_key() {
    let e = ping_pong("guest_halt_poll = {}\nhalt_poll = {}").check_error();
    assert!(e.contains("vm[0].guest_halt_poll") && e.contains("MSR_KVM_POLL_CONTROL"), "{e}");
    let e = ping_pong("guest_halt_poll = {}\nguest_cpu_burn = true").check_error();
    assert!(e.contains("vm[0].guest_halt_poll") && e.contains("never idle"), "{e}");
    let e = ping_pong("guest_halt_poll = {}\nguest_idle = \"poll\"").check_error();
    assert!(e.contains("vm[0].guest_halt_poll"), "{e}");
    let e = ping_pong("guest_halt_poll = { grow_start_ns = 0 }").error();
    assert!(e.contains("vm[0].guest_halt_poll.grow_start_ns") && !e.contains('\n'), "{e}");
    let e = ping_pong("guest_halt_poll = { guest_halt_poll_ns = 0 }").error();
    assert!(e.contains("vm[0].guest_halt_poll.guest_halt_poll_ns"), "{e}");
    let e = ping_pong("guest_halt_poll = { poll_ns = 5 }").error();
    assert!(e.contains("poll_ns"), "{e}");
    let bare = Sc::new("ghp", "did").pcpus(2).host("virtualization = \"bare_metal\"").vm(Vm::new("vm0", 1)
        .pins(&[0])
        .lines("guest_halt_poll = {}")
        .net("kind = \"sriov_vf\"")
        .workload("kind = \"udp_rr\"\nrequest_bytes = 1\nresponse_bytes = 1"));
    let e = bare.check_error();
    assert!(e.contains("KVM guest"), "{e}");
}
