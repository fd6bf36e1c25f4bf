//! Memory nodes (profile `[numa]`, issue 48 item 5): a back end that serves a VM whose memory
//! is on the other socket pays, per packet, its ring accesses and its payload's lines across the
//! interconnect; a guest whose back end runs on the other socket pays the same for the lines the
//! back end last touched; a one-distance profile has neither, and says so.

mod common;

use common::{refused, Sc, Vm};
use eventpath_sim::summary::IoThreadSummary;

/// One 1-vCPU VM streaming TCP (64-byte writes) on the elvis host (two sockets of 8 cores), its
/// vCPU on pCPU `vcpu`, its vhost thread on `vhost`, its memory on `node` (None: the default).
fn stream(vcpu: u32, vhost: u32, node: Option<u32>) -> Sc {
    let mut vm = Vm::new("vm0", 1).pins(&[vcpu]).vhost_pin(vhost).workload("kind = \"tcp_stream\"\nmessage_bytes = 64");
    if let Some(n) = node {
        vm = vm.set("memory_node", n as i64);
    }
    Sc::new("numa", "elvis").duration(0.3).warmup(0.05).vm(vm)
}

fn vhost(sc: &Sc) -> (IoThreadSummary, f64) {
    let o = sc.run_clean();
    let gbps = o.summary.vms[0].throughput.gbps.unwrap();
    (o.summary.host.io_threads[0].clone(), gbps)
}

#[test]
fn a_back_end_on_the_other_socket_pays_for_every_packet_it_serves() {
    // vCPU and memory on socket 0; vhost on socket 0 (pCPU 1) or socket 1 (pCPU 8).
    let (near, near_gbps) = vhost(&stream(0, 1, Some(0)));
    let (far, far_gbps) = vhost(&stream(0, 8, Some(0)));
    eprintln!("near {near:?} {near_gbps}\nfar {far:?} {far_gbps}");
    assert_eq!(near.remote_items_pct, Some(0.0));
    assert_eq!(near.remote_busy_pct, Some(0.0));
    assert_eq!(far.remote_items_pct, Some(100.0), "every packet is of the remote VM");
    let share = far.remote_busy_pct.unwrap();
    assert!(share > 1.0 && share < 60.0, "remote share of the back end's busy time: {share} %");
    // The remote cost is busy time the near thread does not spend (per Gbit/s carried).
    let per = |t: &IoThreadSummary, g: f64| t.util_pct.unwrap() / g;
    assert!(per(&far, far_gbps) > per(&near, near_gbps), "busy per Gbit/s: far {} near {}", per(&far, far_gbps), per(&near, near_gbps));
    // ... and the guest pays for the lines the far back end touched: it carries less.
    assert!(far_gbps < near_gbps, "far {far_gbps} vs near {near_gbps} Gbit/s");
}

#[test]
fn memory_beside_the_back_end_moves_the_cost_to_the_guest() {
    // Back end and memory on socket 1, the vCPU on socket 0: the back end reads local memory
    // (nothing remote), but every line it writes crosses to the guest.
    let (t, gbps) = vhost(&stream(0, 8, Some(1)));
    let (_, aligned) = vhost(&stream(0, 1, Some(0)));
    assert_eq!(t.remote_items_pct, Some(0.0));
    assert!(gbps < aligned, "{gbps} vs aligned {aligned} Gbit/s");
}

#[test]
fn memory_follows_the_vcpu_by_default() {
    // First touch: a VM pinned to socket 1 has its memory there; its back end there pays nothing.
    let (t, _) = vhost(&stream(9, 10, None));
    assert_eq!(t.remote_items_pct, Some(0.0));
    let (t, _) = vhost(&stream(9, 1, None));
    assert_eq!(t.remote_items_pct, Some(100.0), "a back end on socket 0 serves socket 1's memory");
}

#[test]
fn a_profile_of_one_memory_distance_has_no_remote_work_and_refuses_other_nodes() {
    let es2 = Sc::new("numa", "es2").duration(0.05).vm(Vm::new("vm0", 1).pins(&[0]).vhost_pin(1).workload("kind = \"tcp_stream\"\nmessage_bytes = 64"));
    let o = es2.run_clean();
    assert_eq!(o.summary.host.io_threads[0].remote_items_pct, None);
    assert_eq!(o.summary.host.io_threads[0].remote_busy_pct, None);
    refused(es2.edit_vm(0, |v| v.set("memory_node", 1i64)), "vm[0].memory_node", &["node 1 does not exist", "one memory node"]);
    // hbalance's host has two sockets but declares no remote costs.
    let hb = Sc::new("numa", "hbalance").vm(Vm::new("vm0", 1).set("memory_node", 1i64));
    refused(hb, "vm[0].memory_node", &["no [numa]"]);
    refused(stream(0, 1, Some(2)), "vm[0].memory_node", &["node 2 does not exist", "nodes 0..=1"]);
}
