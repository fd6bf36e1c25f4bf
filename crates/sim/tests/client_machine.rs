//! The remote client machine (`[client]`, DESIGN §3.2): its cores serve every VM's peer, so
//! more VMs than it can serve saturate it (ELVIS §4: the client saturated at about 10 VMs).

mod common;

use common::{Conservation, Sc, Vm};
use eventpath_sim::run::RunOutput;

/// `n` memcached VMs served by a client with `[client]` `client` (lines; "": the default).
fn scenario(n: usize, client: &str) -> Sc {
    let sc = Sc::new("t", "elvis").duration(0.03).warmup(0.005).client(client);
    (0..n).fold(sc, |sc, i| {
        sc.vm(Vm::new(&format!("vm{i}"), 1).workload("kind = \"memcached\"\nconcurrency = 8\nget_ratio = 0.9"))
    })
}

fn run(sc: &Sc) -> (RunOutput, Conservation) {
    sc.run_with_ledger()
}

fn ops(o: &RunOutput) -> f64 {
    o.summary.vms.iter().map(|v| v.throughput.ops_per_s.unwrap()).sum()
}

/// What one client core can serve: each memcached transaction costs the client
/// `request_ns` (build and send the request) + `rx_packet_ns` (receive the one-segment
/// response) on the elvis profile: 2000 + 1000 ns.
const ONE_CORE_OPS: f64 = 1e9 / 3000.0;

fn assert_rr_conserved(c: &Conservation) {
    for i in 0..c.sent.len() {
        assert_eq!(c.sent[i], c.delivered[i] + c.dropped[i] + c.in_flight[i], "vm{i}");
        assert_eq!(c.rr_issued[i] + c.rr_next_pending[i], c.rr_completed[i] + c.rr_concurrency[i], "vm{i}");
    }
}

#[test]
fn more_vms_than_the_client_serves_saturate_it() {
    let (o8, c8) = run(&scenario(10, "cores = 1"));
    let (o14, c14) = run(&scenario(14, "cores = 1"));
    assert_rr_conserved(&c8);
    assert_rr_conserved(&c14);
    let (s8, s14) = (ops(&o8), ops(&o14));
    // Saturated: at the core's capacity, and more VMs add nothing.
    assert!(s14 <= ONE_CORE_OPS * 1.001 && s14 > 0.98 * ONE_CORE_OPS, "14 VMs {s14}");
    assert!((s14 / s8 - 1.0).abs() < 0.02, "10 VMs {s8}, 14 VMs {s14}");
    // The same VMs with a core per VM (the default) are not client-bound: the host's 16
    // pCPUs, not the client, limit them, at well over one client core's capacity (~1.75x:
    // each VM's four memcached threads share its vCPU).
    let (free, cf) = run(&scenario(14, ""));
    assert_rr_conserved(&cf);
    assert!(ops(&free) > 1.6 * s14, "default {} vs one core {s14}", ops(&free));
}

#[test]
fn default_is_one_client_core_per_vm() {
    let strip = |mut o: RunOutput| {
        o.summary.wall_seconds = 0.0;
        format!("{:?}", o.summary)
    };
    assert_eq!(strip(run(&scenario(3, "")).0), strip(run(&scenario(3, "cores = 3")).0));
}

#[test]
#[ignore]
fn print_ops() {
    for n in [1, 2, 4, 8, 14] {
        let d = ops(&run(&scenario(n, "")).0);
        let one = ops(&run(&scenario(n, "cores = 1")).0);
        let four = ops(&run(&scenario(n, "cores = 4")).0);
        println!("{n} VMs: default {d:.0} ops/s, 1 core {one:.0}, 4 cores {four:.0}");
    }
}
