//! The KVM testbed's guest and interrupt generator as simulator workloads (issue 15):
//! `request_stream` (requests straight into the virtqueue, event-index kicks, completions by
//! polling or interrupts) and `irq_source` (open-loop MSIs, latency by what was running).

mod common;

use common::{Sc, Vm};
use eventpath_sim::run::RunOutput;
use eventpath_sim::summary::VmSummary;

fn run(sc: &Sc) -> RunOutput {
    let (out, l) = sc.run_with_ledger();
    assert!(out.summary.stalled_flows.is_empty(), "{:?}", out.summary.stalled_flows);
    assert_eq!(l.sent[0], l.delivered[0] + l.dropped[0] + l.in_flight[0]);
    out
}

/// A `request_stream` VM on pCPU 0 of two; `load` holds its rate or window.
fn stream_vm(load: &str) -> Vm {
    Vm::new("vm0", 1).pins(&[0]).workload("kind = \"request_stream\"").workload(load)
}

/// The testbed's twin on es2's costs, less the host network path: the testbed's back end
/// answers its guest's requests itself (no tap, bridge or NIC below it; its probed profile
/// has these at 0 too).
fn stream_of(vm: Vm) -> Sc {
    let sc = Sc::new("t", "es2").duration(0.1).warmup(0.02).pcpus(2).vm(vm);
    ["host.tap_tx_ns", "host.dev_xmit_ns", "host.nic_irq_ns", "host.nic_rx_frame_ns", "host.nic_rx_skb_ns", "host.nic_tx_clean_ns"]
        .iter()
        .fold(sc, |sc, k| sc.profile_override(k, 0))
}

/// A request stream served by a vhost thread on pCPU 1; `net` holds more `[vm.net]` lines.
fn stream(load: &str, net: &str) -> Sc {
    stream_of(stream_vm(load).vhost_pin(1).net(net))
}

fn vm(out: &RunOutput) -> &VmSummary {
    &out.summary.vms[0]
}

fn kicks_per_request(v: &VmSummary) -> f64 {
    v.kicks_per_s.unwrap() / v.throughput.ops_per_s.unwrap()
}

#[test]
fn an_open_loop_stream_completes_what_it_offers_and_kicks_less_as_the_rate_rises() {
    let mut last = 1.0;
    for rate in [20_000.0, 100_000.0, 500_000.0] {
        let out = run(&stream(&format!("rate = {rate}"), ""));
        let v = vm(&out);
        let done = v.throughput.ops_per_s.unwrap();
        assert!((done / rate - 1.0).abs() < 0.02, "{rate}/s offered, {done}/s done");
        // vring_need_event: requests published while the back end has not caught up send no kick.
        let k = kicks_per_request(v);
        // While the back end finishes each request before the next arrives, every request
        // kicks; past that, fewer do.
        assert!(k <= last, "{rate}/s: {k} kicks per request (previous rate {last})");
        last = k;
        // The guest polls its used ring: the device never interrupts it (the guest's own
        // timer ticks, 250/s, are its only interrupts).
        assert!(v.interrupts_per_s.unwrap() <= 260.0, "{:?}", v.interrupts_per_s);
    }
    assert!(last < 0.9, "at 500,000/s the back end is still busy at most requests: {last} kicks per request");
}

#[test]
fn a_polling_back_end_takes_every_request_without_a_kick() {
    let out = run(&stream("rate = 100000", "busyloop_timeout_us = 1000000"));
    let v = vm(&out);
    assert!(kicks_per_request(v) < 0.001, "{}", kicks_per_request(v));
    assert!(v.latency_us.p50.unwrap() < 5.0, "{:?}", v.latency_us);
}

#[test]
fn interrupt_consumption_reaps_on_the_device_interrupt() {
    let poll = run(&stream("rate = 20000", ""));
    let irq = run(&stream("rate = 20000\nconsume = \"irq\"", ""));
    let (p, i) = (vm(&poll), vm(&irq));
    // About one interrupt per completion at this rate (each reaped before the next is due).
    assert!(i.interrupts_per_s.unwrap() > 0.8 * 20_000.0, "{:?}", i.interrupts_per_s);
    assert!(p.interrupts_per_s.unwrap() < 300.0, "{:?}", p.interrupts_per_s);
    // The handler and its exits lie between the completion and the reap.
    assert!(i.latency_us.p50.unwrap() > p.latency_us.p50.unwrap());
}

#[test]
fn a_closed_loop_keeps_its_window_busy() {
    let out = run(&stream("window = 4", ""));
    let v = vm(&out);
    assert!(v.throughput.ops_per_s.unwrap() > 10_000.0, "{:?}", v.throughput);
}

/// An interrupt source into a VM of `vcpus` vCPUs all pinned to pCPU 0; `vm` adds its idle
/// loop or halt polling.
fn irqs(routing: &str, vcpus: u32, vm: impl FnOnce(Vm) -> Vm) -> Sc {
    let pins = vec![0; vcpus as usize];
    let vm = vm(Vm::new("vm0", vcpus).pins(&pins).routing(routing));
    Sc::new("t", "es2").duration(0.5).warmup(0.05).pcpus(2).vm(vm.workload("kind = \"irq_source\"\ninterval_us = 1000"))
}

fn by_state(v: &VmSummary, k: &str) -> Option<f64> {
    v.latency_by_target_state_us.get().and_then(|m| m[k].p50)
}

#[test]
fn routing_to_the_running_vcpu_removes_the_wait_for_a_descheduled_one() {
    let fixed = run(&irqs("fixed", 2, |v| v.guest_idle("poll")));
    let rf = run(&irqs("running_first", 2, |v| v.guest_idle("poll")));
    let (f, r) = (vm(&fixed), vm(&rf));
    let (f_home, f_other) = (by_state(f, "home_running").unwrap(), by_state(f, "other_running").unwrap());
    // Fixed: an interrupt for the descheduled vCPU waits for its host slice (milliseconds).
    assert!(f_other > 20.0 * f_home, "home {f_home} us, other {f_other} us");
    // Running first: it goes to the sibling that runs.
    let r_other = by_state(r, "other_running").unwrap();
    assert!(r_other < 2.0 * f_home, "running_first other {r_other} us vs home {f_home} us");
    assert!(f.throughput.ops_per_s.unwrap() > 900.0);
}

#[test]
fn halt_polling_trades_cpu_for_wakeup_latency() {
    let none = run(&irqs("fixed", 1, |v| v));
    let poll = run(&irqs("fixed", 1, |v| v.halt_poll("max_halt_poll_ns = 2000000")));
    let (n, p) = (vm(&none), vm(&poll));
    assert!(p.latency_us.p50.unwrap() < n.latency_us.p50.unwrap(), "{:?} vs {:?}", p.latency_us, n.latency_us);
    // The vCPU thread's host CPU: polling keeps it on its pCPU between interrupts.
    let host_cpu = |o: &RunOutput| -> f64 { o.summary.host.threads.get().unwrap().iter().filter(|t| t.name.starts_with("vcpu:")).map(|t| t.pcpu_pct.iter().sum::<f64>()).sum() };
    assert!(host_cpu(&poll) > 10.0 * host_cpu(&none), "{} vs {}", host_cpu(&poll), host_cpu(&none));
    assert!(n.latency_by_target_state_us.get().unwrap()["none_running"].p50.is_some());
}

#[test]
fn bad_twin_keys_name_the_key() {
    for (w, want) in [
        ("kind = \"request_stream\"", "exactly one of `rate`"),
        ("kind = \"request_stream\"\nrate = 1000\nwindow = 4", "exactly one of `rate`"),
        ("kind = \"request_stream\"\nwindow = 0", "window"),
        ("kind = \"request_stream\"\nrate = 1000\nconsume = \"napi\"", "consume"),
        ("kind = \"irq_source\"\ninterval_us = 1000\nvcpu = 1", "vCPU 1 does not exist"),
        ("kind = \"irq_source\"\ninterval_us = 0", "interval_us"),
    ] {
        let e = Sc::new("t", "es2").vm(Vm::new("v", 1).workload(w)).error();
        assert!(e.contains(want) && !e.contains('\n'), "{w}: {e}");
    }
}

#[test]
fn a_request_stream_needs_a_virtio_queue() {
    let vm = Vm::new("v", 1).net("kind = \"sriov_vf\"").workload("kind = \"request_stream\"\nrate = 1000");
    let e = Sc::new("t", "did").vm(vm).check_error();
    assert!(e.contains("workload.kind") && e.contains("virtio"), "{e}");
}

/// A halt-polling vCPU that finds an interrupt resumes its guest `host.halt_poll_wake_ns` later
/// (0 in the seeds' profiles; a nested host's probe measures tens of µs).
#[test]
fn a_polled_wake_up_costs_the_profiles_halt_poll_wake() {
    let dir = std::env::temp_dir().join(format!("eventpath-hpw-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let es2 = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../profiles/es2.toml")).unwrap();
    // The es2 line with a nested host's 40 us and without es2's bare-metal range (0..=1 us).
    let line = es2.lines().find(|l| l.starts_with("halt_poll_wake_ns = {")).expect("es2 has halt_poll_wake_ns");
    let slow = es2.replacen(line, "halt_poll_wake_ns = { value = 40000, unit = \"ns\", source = \"a nested host's resume\" }", 1);
    assert_ne!(slow, es2);
    let path = dir.join("slow-resume.toml");
    std::fs::write(&path, slow).unwrap();
    let sc = irqs("fixed", 1, |v| v.halt_poll("max_halt_poll_ns = 2000000"));
    let (base, slow) = (run(&sc), run(&sc.clone().set("profile", path.to_str().unwrap())));
    let (b, s) = (vm(&base).latency_us.p50.unwrap(), vm(&slow).latency_us.p50.unwrap());
    assert!(b < 10.0 && (s - b - 40.0).abs() < 5.0, "es2 {b} us, with a 40 us resume {s} us");
    std::fs::remove_dir_all(&dir).ok();
}

/// ES2 optimistic on a request stream: each completion is Algorithm 2's "packet" (the guest
/// answers it with its next request), so the joint thread polls after it and the guest stops
/// kicking; perceptive, whose quota a 20 k/s stream never fills, kicks for most requests.
#[test]
fn es2_optimistic_polls_after_a_request_streams_completions() {
    let es2 = |switch: &str| {
        let sc = stream_of(stream_vm("rate = 20000")).io(&format!("handling = \"es2\"\nswitch = \"{switch}\"\ncores = [1]"));
        kicks_per_request(vm(&run(&sc)))
    };
    let (opt, perc) = (es2("optimistic"), es2("perceptive"));
    assert!(opt < 0.01 && perc > 0.3, "optimistic {opt} kicks/req, perceptive {perc}");
}
