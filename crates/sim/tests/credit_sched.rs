//! Xen's credit scheduler (`[host] scheduler = "xen_credit"`) end to end: BOOST on wake-up,
//! time slices, fair shares by credit, stealing by an idle pCPU, determinism, bad keys.

mod common;

use common::{Conservation, Sc, Vm};
use eventpath_sim::run::RunOutput;
use eventpath_sim::scenario::Scenario;

fn credit(sc: Sc, tslice_ms: Option<u32>) -> Sc {
    let sc = sc.host("scheduler = \"xen_credit\"");
    match tslice_ms {
        Some(ms) => sc.host(&format!("tslice_ms = {ms}")),
        None => sc,
    }
}

fn thread<'a>(o: &'a RunOutput, name: &str) -> &'a eventpath_sim::summary::ThreadSummary {
    o.summary.host.threads.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("no thread {name}"))
}

fn pct(o: &RunOutput, name: &str) -> Vec<f64> {
    thread(o, name).pcpu_pct.clone()
}

fn assert_time_conserved(c: &Conservation) {
    for p in 0..c.pcpu_busy_ns.len() {
        assert!(c.pcpu_busy_ns[p] <= c.window_ns);
        assert_eq!(c.pcpu_busy_ns[p], c.pcpu_thread_ns[p], "pCPU {p}: {c:?}");
    }
}

/// Ping every 2 ms into a 1-vCPU VM on pCPU 0 (vhost on pCPU 1), a CPU hog pinned to pCPU 0
/// beside it (`hog`), under CFS or credit.
fn ping(hog: bool, xen: bool) -> Sc {
    let vm = Vm::new("vm0", 1).pins(&[0]).vhost_pin(1).delivery("posted").workload("kind = \"ping\"\ninterval_us = 2000");
    let mut sc = Sc::new("ping", "es2").pcpus(2).duration(0.5).warmup(0.05).vm(vm);
    if hog {
        sc = sc.hog(&[0]);
    }
    if xen {
        sc = credit(sc, None);
    }
    sc
}

#[test]
fn a_boosted_vcpu_preempts_a_hog_at_once() {
    let (alone, _) = ping(false, true).run_with_ledger();
    let (o, c) = ping(true, true).run_with_ledger();
    assert_time_conserved(&c);
    let (l0, l1) = (&alone.summary.vms[0].latency_us, &o.summary.vms[0].latency_us);
    // The vCPU, woken by each echo while UNDER, is BOOSTed and preempts the hog (which has run
    // far longer than the 1 ms rate limit): the round trip grows by a switch, not a slice.
    assert!(l1.p99.unwrap() < l0.p99.unwrap() + 50.0, "alone {l0:?} vs with a hog {l1:?}");
    assert!(l1.max.unwrap() < 1000.0, "{l1:?}");
    let hog: f64 = pct(&o, "hog0").iter().sum();
    assert!(hog > 90.0, "the hog keeps the rest of pCPU 0: {hog}%");
    // CFS: the woken vCPU's vruntime, placed half a latency behind the hog's (sleeper credit),
    // leads by more than the wake-up granularity, so CFS preempts at once too.
    let (cfs, _) = ping(true, false).run_with_ledger();
    assert!(cfs.summary.vms[0].latency_us.p99.unwrap() < l0.p99.unwrap() + 50.0, "{:?}", cfs.summary.vms[0].latency_us);
}

/// The VM's vCPU also burns CPU (it never halts, so it is never BOOSTed): it shares pCPU 0 with
/// the hog slice by slice, and a ping waits for the vCPU's turn.
#[test]
fn without_a_wake_up_there_is_no_boost_and_a_ping_waits_for_the_slice() {
    let sc = |xen: bool, ms| {
        let sc = ping(true, false).edit_vm(0, |vm| vm.burn(true)).duration(1.0);
        if xen { credit(sc, Some(ms)) } else { sc }
    };
    let o30 = sc(true, 30).run();
    let o1 = sc(true, 1).run();
    let (l30, l1) = (&o30.summary.vms[0].latency_us, &o1.summary.vms[0].latency_us);
    // Waits of up to a slice (the hog's 30 ms, or 1 ms).
    assert!(l30.max.unwrap() > 10_000.0 && l30.max.unwrap() < 32_000.0, "{l30:?}");
    assert!(l1.max.unwrap() < 2_100.0, "{l1:?}");
    assert!(l30.mean.unwrap() > 3.0 * l1.mean.unwrap(), "{l30:?} vs {l1:?}");
}

/// Two hogs pinned to pCPU 0 of a 2-pCPU host whose idle VM sits on pCPU 1.
fn two_hogs(tslice_ms: u32) -> Sc {
    let vm = Vm::new("vm0", 1).pins(&[1]).vhost_pin(1);
    credit(Sc::new("hogs", "es2").pcpus(2).duration(1.0).warmup(0.1).hog(&[0]).hog(&[0]).vm(vm), Some(tslice_ms))
}

#[test]
fn two_hogs_alternate_in_time_slices_and_share_the_pcpu_evenly() {
    for ms in [30, 10, 1] {
        let (o, c) = two_hogs(ms).run_with_ledger();
        assert_time_conserved(&c);
        let per_s = o.summary.host.context_switches_per_s.unwrap();
        let expect = 1000.0 / ms as f64;
        assert!((per_s / expect - 1.0).abs() < 0.1, "tslice {ms} ms: {per_s} switches/s, expected about {expect}");
        let (a, b) = (pct(&o, "hog0")[0], pct(&o, "hog1")[0]);
        assert!((a - 50.0).abs() < 3.0 && (b - 50.0).abs() < 3.0, "tslice {ms} ms: {a}% / {b}%");
    }
}

#[test]
fn a_shorter_slice_switches_more() {
    let s1 = two_hogs(1).run().summary.host.context_switches_per_s.unwrap();
    let s30 = two_hogs(30).run().summary.host.context_switches_per_s.unwrap();
    assert!(s1 > 10.0 * s30, "{s1} vs {s30}");
}

/// Three hogs on a 2-pCPU host (its VM idle): two start on one pCPU, one alone on the other.
/// The lone one burns a pCPU's credits while it earns two thirds of one, goes OVER and steals
/// an UNDER hog at its slice's end: credits rotate them, each gets two thirds of a pCPU over a
/// long run, not one a whole pCPU and two halves. (Credits are the pCPUs' time: on a host
/// with an idle third pCPU the three hogs would never go OVER, and would keep 1 : ½ : ½.)
#[test]
fn credits_give_equal_hogs_a_fair_share() {
    let vm = Vm::new("vm0", 1).pins(&[1]).vhost_pin(1);
    let sc = credit(Sc::new("fair", "es2").pcpus(2).duration(3.0).warmup(0.1).hog(&[]).hog(&[]).hog(&[]).vm(vm), None);
    let (o, c) = sc.run_with_ledger();
    assert_time_conserved(&c);
    for h in ["hog0", "hog1", "hog2"] {
        let all: f64 = pct(&o, h).iter().sum();
        assert!((all - 66.7).abs() < 5.0, "{h}: {all}% ({:?})", pct(&o, h));
    }
    assert!(o.summary.host.migrations_by_cause_per_s["periodic_balance"] > 0.0, "{:?}", o.summary.host.migrations_by_cause_per_s);
}

/// A vCPU woken on its busy pCPU (the hog's) is stolen by the idle pCPU its wake-up tickled.
#[test]
fn an_idle_pcpu_steals_a_queued_vcpu() {
    let vm = Vm::new("vm0", 1).vhost_pin(2).delivery("posted").workload("kind = \"ping\"\ninterval_us = 2000");
    let sc = credit(Sc::new("steal", "es2").pcpus(3).duration(0.2).warmup(0.0).hog(&[0]).vm(vm), None);
    let (o, c) = sc.run_with_ledger();
    assert_time_conserved(&c);
    let v = pct(&o, "vcpu:vm0/0");
    assert!(v[0] < 0.5 && v[1] > 0.0, "the vCPU left the hog's pCPU: {v:?}");
    assert!(o.summary.host.migrations_by_cause_per_s["nohz_balance"] > 0.0, "{:?}", o.summary.host.migrations_by_cause_per_s);
    assert_eq!(o.summary.host.migrations_by_cause_per_s["wakeup"], 0.0);
}

#[test]
fn same_scenario_same_summary() {
    let vm = Vm::new("vm0", 2).delivery("posted").workload("kind = \"tcp_stream\"\nmessage_bytes = 512");
    let sc = credit(Sc::new("det", "es2").pcpus(3).duration(0.1).warmup(0.01).hog(&[]).hog(&[0]).vm(vm), Some(10));
    let (a, ca) = sc.run_with_ledger();
    let (b, _) = sc.run_with_ledger();
    assert_time_conserved(&ca);
    let mut sa = serde_json::to_value(&a.summary).unwrap();
    let mut sb = serde_json::to_value(&b.summary).unwrap();
    sa["wall_seconds"] = 0.into();
    sb["wall_seconds"] = 0.into();
    assert_eq!(sa, sb);
    assert!(a.summary.vms[0].throughput.gbps.unwrap() > 0.1);
}

#[test]
fn bad_keys_are_refused_naming_the_key() {
    let base = || ping(false, false);
    let m = base().host("tslice_ms = 10").error();
    assert!(m.contains("key `host.tslice_ms`") && m.contains("cfs") && m.lines().count() == 1, "{m}");
    for bad in [0, 1001] {
        let m = credit(base(), Some(bad)).error();
        assert!(m.contains("key `host.tslice_ms`") && m.contains(&bad.to_string()) && m.contains("1..=1000"), "{m}");
    }
    let m = base().host("scheduler = \"bvt\"").error();
    assert!(m.contains("host.scheduler") && m.contains("xen_credit"), "{m}");
    let text = credit(base(), None).toml() + "\n[[host.cpu_hog]]\nnice = 0\n";
    let m = Scenario::from_toml("t", &text).and_then(|s| s.check("t")).map(|_| ()).unwrap_err().to_string();
    assert!(m.contains("key `host.cpu_hog[0].nice`") && m.contains("xen_credit"), "{m}");
    let m = credit(base(), None).host("virtualization = \"bare_metal\"").error();
    assert!(m.contains("host.scheduler") || m.contains("host.virtualization"), "{m}");
    // Accepted: every slice in range, and a hog without nice.
    credit(ping(true, false), Some(1000)).check();
}

/// UDP_RR into a vCPU sharing pCPU 0 with a busy VM: each request comes well within 1 ms of
/// the busy VM's switch-in (after the previous response), so `sched_ratelimit_us` keeps it
/// there for 1 ms though the woken vCPU is BOOSTed: about one transaction per ms, where CFS
/// preempts at once.
#[test]
fn the_rate_limit_holds_a_boosted_request_for_a_millisecond() {
    let rr = Vm::new("rr", 1).pins(&[0]).vhost_pin(1).delivery("posted").workload("kind = \"udp_rr\"\nrequest_bytes = 1\nresponse_bytes = 1");
    let busy = Vm::new("busy", 1).pins(&[0]).vhost_pin(1).burn(true);
    let sc = Sc::new("rl", "es2").pcpus(2).duration(0.3).warmup(0.05).vm(rr).vm(busy);
    let cfs = sc.clone().run();
    let (o, c) = credit(sc, None).run_with_ledger();
    assert_time_conserved(&c);
    let (l, tps) = (&o.summary.vms[0].latency_us, o.summary.vms[0].throughput.pps.unwrap());
    assert!(l.p50.unwrap() > 1000.0 && l.p50.unwrap() < 1100.0, "{l:?}");
    assert!(tps > 900.0 && tps < 1000.0, "{tps} transactions/s");
    assert!(cfs.summary.vms[0].throughput.pps.unwrap() > 5.0 * tps, "CFS {:?}", cfs.summary.vms[0].throughput);
}
