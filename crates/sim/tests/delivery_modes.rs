//! Interrupt delivery modes (`eventpath_policy::delivery`) and the SR-IOV VF device: each mode
//! removes the exits its seed says it removes and leaves the others (DID §5.2, §5.9; ELVIS §2.4;
//! ES2 §3.2), the VF path keeps the conservation ledgers, and bad combinations are refused.

mod common;

use common::{Sc, Vm};
use eventpath_sim::run::RunOutput;

/// One pinned vCPU (DID §5.1's VM) receiving `pps` 128-byte datagrams through `net`: each
/// argument holds lines of its table (`[[vm]]` for `delivery` and `extra_vm`).
fn scenario(delivery: &str, net: &str, extra_vm: &str, host: &str) -> Sc {
    Sc::new("modes", "did").duration(0.05).warmup(0.01).pcpus(2).host(host).vm(Vm::new("vm0", 1)
        .pins(&[0])
        .lines(delivery)
        .lines(extra_vm)
        .net(net)
        .workload("kind = \"udp_receive\"\nmessage_bytes = 128\nrate_pps = 100000"))
}

fn run(sc: &Sc) -> RunOutput {
    let (o, l) = sc.run_with_ledger();
    l.check().unwrap();
    assert!(o.summary.stalled_flows.is_empty(), "{:?}", o.summary.stalled_flows);
    o
}

fn vf(mode: &str, extra_vm: &str) -> RunOutput {
    run(&scenario(&format!("interrupt_delivery = \"{mode}\""), "kind = \"sriov_vf\"\nitr_us = 20", extra_vm, ""))
}

fn exits(o: &RunOutput, reason: &str) -> f64 {
    o.summary.vms[0].exits_per_s[reason].unwrap()
}

const IDLE_POLL: &str = "guest_idle = \"poll\"";

/// The did profile's host tick (CONFIG_HZ 1000): on a pCPU whose vCPU is in guest mode each
/// tick is an external-interrupt exit (`[housekeeping]`), except under DID, whose host timers
/// live on another core (DID §4.4).
const HOST_TICK_HZ: f64 = 1000.0;

/// Exits other than external interrupts.
fn other_exits(o: &RunOutput) -> f64 {
    o.summary.vms[0].exits_total_per_s.unwrap() - exits(o, "external_interrupt")
}

#[test]
fn emulated_vf_interrupts_cost_an_external_interrupt_and_an_eoi_exit_each() {
    let o = vf("emulated", IDLE_POLL);
    let v = &o.summary.vms[0];
    let irqs = v.interrupts_per_s.unwrap();
    assert!((45_000.0..=50_001.0).contains(&irqs), "a 20 µs EITR at 100 kpps: {irqs}");
    assert!((exits(&o, "external_interrupt") - irqs - HOST_TICK_HZ).abs() < 0.02 * irqs, "{:?}", v.exits_per_s);
    assert!((exits(&o, "eoi") - irqs).abs() < 0.02 * irqs, "{:?}", v.exits_per_s);
    assert_eq!(exits(&o, "io_instruction"), 0.0, "a VF's tail writes are MMIO to its BAR: no exit");
    assert_eq!(exits(&o, "hlt"), 0.0, "idle=poll");
    assert_eq!(v.throughput.pps.unwrap(), 100_000.0);
    assert_eq!(o.summary.host.io_threads[0].util_pct, Some(0.0), "no host thread on the VF path");
}

#[test]
fn apicv_removes_the_eoi_exit_and_leaves_the_external_interrupt() {
    let (e, a) = (vf("emulated", IDLE_POLL), vf("apicv", IDLE_POLL));
    assert_eq!(exits(&a, "eoi"), 0.0);
    assert!(exits(&a, "external_interrupt") > 0.9 * exits(&e, "external_interrupt"));
    assert!(a.summary.vms[0].tig_pct.unwrap() > e.summary.vms[0].tig_pct.unwrap());
}

#[test]
fn vt_d_posting_eli_and_did_deliver_vf_interrupts_without_exits() {
    for mode in ["posted", "eli", "did"] {
        let o = vf(mode, IDLE_POLL);
        let v = &o.summary.vms[0];
        assert_eq!(other_exits(&o), 0.0, "{mode}: {:?}", v.exits_per_s);
        // What is left: the host's ticks (none under DID) and the pCPU's kernel thread
        // preempting the vCPU (one wake-up in the 50 ms window: 20/s).
        let tick = if mode == "did" { 0.0 } else { HOST_TICK_HZ };
        let x = exits(&o, "external_interrupt");
        assert!((tick..=tick + 25.0).contains(&x), "{mode}: {:?}", v.exits_per_s);
        assert!(v.interrupts_per_s.unwrap() > 40_000.0, "{mode}");
        assert_eq!(v.throughput.pps.unwrap(), 100_000.0, "{mode}");
    }
}

#[test]
fn the_timer_exits_under_eli_and_posting_but_not_under_did() {
    // A busy guest (CPU burn) keeps its tick: each tick is a host hrtimer interrupt.
    let burn = "guest_cpu_burn = true";
    let tick_hz = 1000.0;
    for mode in ["posted", "eli"] {
        let o = vf(mode, burn);
        // ... and the host's own tick another.
        let x = exits(&o, "external_interrupt") - HOST_TICK_HZ;
        assert!((0.9 * tick_hz..=1.1 * tick_hz).contains(&x), "{mode}: {:?}", o.summary.vms[0].exits_per_s);
        assert!(exits(&o, "timer") >= 0.9 * tick_hz, "{mode}: the tick's TMICT re-arm exits");
    }
    // ELI: the injected timer vector puts the vCPU in injection mode, so its EOI exits.
    let eli = vf("eli", burn);
    assert!(exits(&eli, "eoi") >= 0.9 * tick_hz, "{:?}", eli.summary.vms[0].exits_per_s);
    assert_eq!(exits(&vf("posted", burn), "eoi"), 0.0);
    let did = vf("did", burn);
    assert_eq!(other_exits(&did), 0.0, "{:?}", did.summary.vms[0].exits_per_s);
    assert!(exits(&did, "external_interrupt") <= 25.0, "only the kernel thread's preemption: {:?}", did.summary.vms[0].exits_per_s);
}

#[test]
fn did_sends_virtio_interrupts_as_ipis_but_kicks_still_exit() {
    let virtio = |mode: &str| run(&scenario(&format!("interrupt_delivery = \"{mode}\""), "", "", ""));
    let (e, d) = (virtio("emulated"), virtio("did"));
    assert!(exits(&e, "eoi") > 1000.0 && exits(&e, "interrupt_delivery") + exits(&e, "hlt") > 1000.0);
    assert_eq!(exits(&d, "eoi"), 0.0);
    assert_eq!(exits(&d, "interrupt_delivery"), 0.0);
    assert_eq!(exits(&d, "timer"), 0.0, "TMICT is passed through");
    assert_eq!(d.summary.vms[0].throughput.pps.unwrap(), 100_000.0);
}

#[test]
fn bare_metal_takes_the_same_traffic_with_no_exits() {
    let o = run(&scenario("", "kind = \"sriov_vf\"\nitr_us = 20", "", "virtualization = \"bare_metal\""));
    let v = &o.summary.vms[0];
    assert_eq!(v.exits_total_per_s, Some(0.0), "{:?}", v.exits_per_s);
    assert_eq!(v.throughput.pps.unwrap(), 100_000.0);
    assert!(v.interrupts_per_s.unwrap() > 0.0);
}

#[test]
fn a_full_vf_ring_drops_and_the_ledger_still_balances() {
    // 64 descriptors (the driver's smallest ring) and a 1 ms throttle at 100 kpps: the ring
    // fills between interrupts.
    let o = run(&scenario("", "kind = \"sriov_vf\"\nqueue_size = 64\nitr_us = 1000", IDLE_POLL, ""));
    assert!(o.summary.vms[0].loss_pct.unwrap() > 10.0, "{:?}", o.summary.vms[0].loss_pct);
}

#[test]
fn several_vms_share_the_port_each_with_its_vf() {
    let sc = scenario("interrupt_delivery = \"did\"", "kind = \"sriov_vf\"", IDLE_POLL, "").vm(Vm::new("vm1", 1)
        .pins(&[1])
        .net("kind = \"sriov_vf\"")
        .workload("kind = \"udp_receive\"\nmessage_bytes = 128\nrate_pps = 50000"));
    let o = run(&sc);
    // The profile's default throttle holds the window's last few datagrams past its end, and
    // what queued while the VM's vCPU thread had not yet started (its start falls in the
    // warm-up, `[housekeeping]`) drains at the window's start: within a few datagrams of the
    // offered rate.
    let pps = o.summary.vms[1].throughput.pps.unwrap();
    assert!((49_900.0..=50_100.0).contains(&pps), "{pps}");
    assert!(o.summary.vms[1].exits_per_s["eoi"].unwrap() > 0.0, "vm1 is emulated: its EOIs exit");
}

#[test]
fn bad_device_and_delivery_combinations_are_refused_with_the_key() {
    let m = scenario("", "kind = \"sriov_vf\"", "", "").set("profile", "es2").error();
    assert!(m.contains("net.kind") && m.contains("SR-IOV"), "{m}");
    for bad in ["0", "2000", "-1"] {
        let m = scenario("", &format!("kind = \"sriov_vf\"\nitr_us = {bad}"), "", "").error();
        assert!(m.contains("net.itr_us") && m.contains("1022"), "{m}");
    }
    for bad in ["8", "8192"] {
        let m = scenario("", &format!("kind = \"sriov_vf\"\nqueue_size = {bad}"), "", "").error();
        assert!(m.contains("net.queue_size") && m.contains("64..=4096"), "{m}");
    }
    let m = scenario("", "itr_us = 20", "", "").error();
    assert!(m.contains("net.itr_us") && m.contains("sriov_vf"), "{m}");
    let m = scenario("interrupt_delivery = \"did\"", "", "", "virtualization = \"bare_metal\"").error();
    assert!(m.contains("bare"), "{m}");
    let m = scenario("interrupt_delivery = \"native\"", "kind = \"sriov_vf\"", "", "").error();
    assert!(m.contains("interrupt_delivery") && m.contains("bare_metal"), "{m}");
    let mut many = scenario("", "kind = \"sriov_vf\"", "", "").pcpus(4);
    for i in 1..64 {
        many = many.vm(Vm::new(&format!("v{i}"), 1).net("kind = \"sriov_vf\""));
    }
    let m = many.error();
    assert!(m.contains("64 VMs") && m.contains("63 VFs"), "{m}");
}

fn cyclictest(delivery: &str, host: &str) -> Sc {
    Sc::new("cyc", "did").duration(0.05).warmup(0.002).pcpus(2).host(host).vm(Vm::new("vm0", 1)
        .pins(&[0])
        .lines(delivery)
        .guest_idle("poll")
        .workload("kind = \"cyclictest\"\ninterval_us = 1000"))
}

#[test]
fn a_timer_interrupt_costs_three_or_more_exits_in_kvm_and_none_under_did() {
    // DID §5.4: "at least three VM exits to set-up the LAPIC timer (TMICT), receive a timer
    // interrupt, and acknowledge the completion".
    let kvm = run(&cyclictest("interrupt_delivery = \"emulated\"", ""));
    let per_wakeup = kvm.summary.vms[0].exits_total_per_s.unwrap() / kvm.summary.vms[0].throughput.ops_per_s.unwrap();
    assert!(per_wakeup >= 3.0, "{per_wakeup}: {:?}", kvm.summary.vms[0].exits_per_s);
    let did = run(&cyclictest("interrupt_delivery = \"did\"", ""));
    assert_eq!(did.summary.vms[0].exits_total_per_s, Some(0.0));
    let bare = run(&cyclictest("", "virtualization = \"bare_metal\""));
    let lat = |o: &RunOutput| o.summary.vms[0].latency_us.mean.unwrap();
    assert!(lat(&did) < 1.2 * lat(&bare) && lat(&kvm) > 2.0 * lat(&did), "{} {} {}", lat(&bare), lat(&did), lat(&kvm));
}

#[test]
fn a_cyclictest_interval_of_zero_is_refused() {
    let m = cyclictest("", "").edit_vm(0, |v| v.workload("interval_us = 0")).error();
    assert!(m.contains("interval_us") && m.contains("not allowed"), "{m}");
}

#[test]
fn the_drivers_dynamic_throttle_follows_the_traffic() {
    // ixgbevf's adaptive ITR: 10 kpps of 128-byte datagrams (2 bytes/µs) sit in the lowest-latency
    // range, an interrupt per packet; 600 kpps (100 bytes/µs) in bulk, about 8 K interrupts/s
    // (Linux 3.6's IXGBE_8K_ITR; the integer smoothing stops just short of 125 µs), plus the busy
    // guest's 1 kHz tick.
    let dynamic = |pps: u32| {
        let sc = scenario("", "kind = \"sriov_vf\"\nitr_us = \"dynamic\"", IDLE_POLL, "")
            .edit_vm(0, |v| v.workload(&format!("rate_pps = {pps}")));
        run(&sc).summary.vms[0].interrupts_per_s.unwrap()
    };
    let (sparse, bulk) = (dynamic(10_000), dynamic(600_000));
    assert!(sparse > 9_000.0, "one interrupt per sparse packet: {sparse}");
    assert!((8_000.0..=10_000.0).contains(&bulk), "~122 µs apart in bulk (the smoothing approaches 125), and the tick: {bulk}");
    let m = scenario("", "kind = \"sriov_vf\"\nitr_us = \"adaptive\"", "", "").error();
    assert!(m.contains("itr_us") && m.contains("dynamic"), "{m}");
}
