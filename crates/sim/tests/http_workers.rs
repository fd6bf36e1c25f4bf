//! Web-server workers (`workers`, `worker_ports`): which vCPUs serve, the reschedule IPIs
//! that wake workers on other vCPUs, bad values, determinism.

mod common;

use common::{Conservation, Sc, Vm};
use eventpath_sim::run::{simulate_with_ledger, RunOutput};
use eventpath_sim::scenario::Scenario;

/// An nginx VM of `vcpus` (1 or 2) pinned vCPUs; `extra` holds more `[vm.workload]` lines.
fn scenario(vcpus: u32, delivery: &str, extra: &str) -> Sc {
    let pins: &[u32] = if vcpus == 2 { &[0, 1] } else { &[0] };
    // Both NICs' throttles fixed at 50 µs (the drivers' adaptive ITR changes how requests batch).
    Sc::new("workers", "elvis").duration(0.05).warmup(0.01).pcpus(3).host("nic_itr = \"fixed\"").client("nic_itr = \"fixed\"").vm(Vm::new("vm0", vcpus)
        .pins(pins)
        .delivery(delivery)
        .vhost_pin(2)
        .workload("kind = \"http\"\nserver = \"nginx\"\nconcurrency = 16\nfile_bytes = 1024\nkeepalive = true")
        .workload(extra))
}

fn run(text: &str) -> (RunOutput, Conservation) {
    let c = Scenario::from_toml("t", text).unwrap().check("t").unwrap();
    let (o, l) = simulate_with_ledger(&c);
    assert_eq!(l.rr_issued[0] + l.rr_next_pending[0], l.rr_completed[0] + l.rr_concurrency[0]);
    for v in 0..l.irq_raised.len() {
        assert_eq!(l.irq_raised[v], l.irq_handled[v] + l.irq_coalesced[v] + l.irq_pending[v], "vCPU {v}");
    }
    (o, l)
}

fn vcpu_pct(o: &RunOutput, j: u32) -> f64 {
    let t = o.summary.host.threads.iter().find(|t| t.name == format!("vcpu:vm0/{j}")).unwrap();
    t.pcpu_pct.iter().sum()
}

#[test]
fn workers_on_their_own_ports_serve_on_both_vcpus_woken_by_ipis() {
    for delivery in ["emulated", "posted"] {
        // Few connections, so that a worker sleeps between its requests.
        let sc = scenario(2, delivery, "workers = 2\nworker_ports = true").edit_vm(0, |v| v.workload("concurrency = 2"));
        let (o, l) = run(&sc.toml());
        let v = &o.summary.vms[0];
        let served = &l.rr_served_by_vcpu;
        eprintln!("{delivery}: served {served:?} ops/s {:?} exits/s {:?}", v.throughput.ops_per_s, v.exits_per_s);
        // Connections alternate between the two ports: each worker serves its share (worker 0
        // less: its vCPU also runs all of NAPI).
        assert!(served[0] > 100 && served[1] > 100, "{delivery}: {served:?}");
        assert!(vcpu_pct(&o, 0) > 15.0 && vcpu_pct(&o, 1) > 15.0, "{delivery}: {:?}", o.summary.host.threads);
        // All interrupts go to vCPU 0: worker 1 is woken from there with an IPI.
        let ipis = v.exits_per_s["ipi"].unwrap();
        let ops = v.throughput.ops_per_s.unwrap();
        assert!(ipis > 0.05 * ops && ipis <= ops, "{delivery}: ipi/s {ipis} ops/s {ops}");
    }
}

#[test]
fn one_worker_on_two_vcpus_serves_only_on_its_home() {
    let (o, l) = run(&scenario(2, "emulated", "workers = 1").toml());
    assert!(l.rr_served_by_vcpu[0] > 100 && l.rr_served_by_vcpu[1] == 0, "{:?}", l.rr_served_by_vcpu);
    // Its home takes the interrupts too: no IPI is ever needed.
    assert_eq!(o.summary.vms[0].exits_per_s["ipi"], Some(0.0));
}

#[test]
fn one_shared_worker_is_todays_single_vcpu_server() {
    let (a, _) = run(&scenario(1, "emulated", "").toml());
    let (b, _) = run(&scenario(1, "emulated", "workers = 1\nworker_ports = false").toml());
    let strip = |o: &RunOutput| {
        let mut s = o.summary.clone();
        s.wall_seconds = 0.0;
        serde_json::to_string(&s).unwrap()
    };
    assert_eq!(strip(&a), strip(&b));
}

#[test]
fn shared_socket_workers_are_deterministic() {
    let text = scenario(2, "emulated", "workers = 4").toml();
    let strip = |o: &RunOutput| {
        let mut s = o.summary.clone();
        s.wall_seconds = 0.0;
        serde_json::to_string(&s).unwrap()
    };
    let (a, la) = run(&text);
    let (b, _) = run(&text);
    assert_eq!(strip(&a), strip(&b));
    assert!(la.rr_served_by_vcpu.iter().all(|&n| n > 0), "{:?}", la.rr_served_by_vcpu);
}

#[test]
fn bad_worker_values_name_the_key() {
    for (extra, key) in [("workers = 0", "workers"), ("workers = 65", "workers"), ("worker_ports = \"yes\"", "worker_ports")] {
        let m = scenario(2, "emulated", extra).error();
        assert!(!m.contains('\n') && m.contains(key), "{extra}: {m}");
        if extra.starts_with("workers") {
            assert!(m.contains("1..=64"), "{m}");
        }
    }
}

#[test]
fn no_worker_starves_in_the_example() {
    // Closed loop: every connection keeps one request in flight, so rate × latency equals the
    // concurrency only if no worker's connections stall behind a busier worker on its vCPU.
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/nginx-workers.toml")).unwrap();
    for ports in ["true", "false"] {
        let text = text.replace("concurrency = 4", "concurrency = 16");
        let (o, l) = run(&text.replace("worker_ports = true", &format!("worker_ports = {ports}")));
        let v = &o.summary.vms[0];
        // (What rate × latency misses is each transaction's time at the client — its CPU and
        // the wire — not a stalled connection, which would take whole requests out.)
        let in_flight = v.throughput.ops_per_s.unwrap() * v.latency_us.mean.unwrap() * 1e-6;
        assert!(in_flight > 0.85 * 16.0, "worker_ports = {ports}: {in_flight:.1} of 16 in flight, {:?}", l.rr_served_by_vcpu);
    }
}
