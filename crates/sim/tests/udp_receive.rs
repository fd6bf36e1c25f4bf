//! UDP_STREAM towards the guest: NAPI batching, no kicks, loss when overloaded, conservation.

mod common;

use common::{Conservation, Sc, Vm};

fn run(rate: u32, delivery: &str) -> (eventpath_sim::summary::VmSummary, Conservation) {
    let vm = Vm::new("vm0", 1).delivery(delivery).workload(&format!("kind = \"udp_receive\"\nmessage_bytes = 512\nrate_pps = {rate}"));
    let (o, l) = Sc::new("rx", "es2").duration(0.05).warmup(0.005).vm(vm).run_with_ledger();
    (o.summary.vms[0].clone(), l)
}

#[test]
fn light_load_is_received_without_loss_and_without_kicks() {
    let (v, _) = run(20_000, "emulated");
    let pps = v.throughput.pps.unwrap();
    assert!((pps - 20_000.0).abs() < 600.0, "{pps}");
    assert_eq!(v.loss_pct, Some(0.0));
    // ES2 §6.2 Fig. 5b: receiving UDP causes almost no I/O-instruction exits.
    assert!(v.exits_per_s["io_instruction"].unwrap() < 0.01 * pps);
    // Idle between datagrams: the vCPU halts and every datagram takes an interrupt.
    assert!(v.exits_per_s["hlt"].unwrap() > 0.0);
    assert!(v.interrupts_per_s.unwrap() > 0.5 * pps);
}

#[test]
fn overload_batches_in_napi_and_drops_with_conservation() {
    let (v, c) = run(2_000_000, "posted");
    let pps = v.throughput.pps.unwrap();
    assert!(pps > 100_000.0, "{pps}");
    assert!(v.loss_pct.unwrap() > 10.0, "{:?}", v.loss_pct);
    // NAPI polls many packets per interrupt under load.
    assert!(v.interrupts_per_s.unwrap() < 0.2 * pps, "{:?} vs {pps}", v.interrupts_per_s);
    assert_eq!(v.exits_per_s["eoi"], Some(0.0));
    assert_eq!(c.udp_rx_sent[0], c.udp_rx_received[0] + c.udp_rx_sock_dropped[0] + c.udp_rx_in_socket[0]
        + c.rx_tap_dropped[0] + c.rx_queued[0] + c.rx_on_link[0]);
    assert_eq!(c.rx_arrived[0], c.rx_tap_dropped[0] + c.rx_queued[0] + c.rx_polled[0]);
}
