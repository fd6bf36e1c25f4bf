//! The client as a sender with a CPU and an offload (issue 49 item 4): a bulk sender's core pays
//! per `write()` (`client.send_call_ns`), per byte (`tx_byte_ns`) and per skb (`tx_skb_ns`);
//! with TSO an skb carries many segments. A stream into the guest with a small `send_bytes`
//! (netperf `-m`), and an unpaced UDP source, are bounded by that core.

mod common;

use common::{Sc, Vm};
use eventpath_sim::profile::Profile;

fn gbps(o: &eventpath_sim::run::RunOutput) -> f64 {
    o.summary.vms.iter().map(|v| v.throughput.gbps.unwrap()).sum()
}

/// netperf TCP_STREAM into one 2-vCPU VM on es2 with `extra` workload lines.
fn tcp(extra: &str) -> Sc {
    let w = format!("kind = \"tcp_receive\"\nmessage_bytes = 16384\n{extra}");
    // The emulated LAPIC these bounds were drawn for: under es2's stock posted interrupts the
    // receiver is faster and the stream without autocorking beats the one-to-two-MSS-per-skb
    // bound below (8.2 vs 7.1 Gbit/s: skbs then carry more), a regime this test does not cover.
    Sc::new("client-sender", "es2").duration(0.05).warmup(0.02).vm(Vm::new("vm0", 2).delivery("emulated").workload(w.trim_end()))
}

#[test]
fn small_writes_bound_a_stream_by_the_client_s_core() {
    let p = Profile::load("es2").unwrap();
    let c = &p.client;
    // 64-byte writes: a call per 64 bytes plus their copy, less than an skb per segment.
    let ns_per_byte = c.send_call_ns.value / 64.0 + c.tx_byte_ns.value;
    let bound = 8.0 / ns_per_byte;
    let small = gbps(&tcp("send_bytes = 64").run_clean());
    assert!(small <= bound * 1.001 && small > 0.9 * bound, "{small} Gbit/s vs the core's {bound}");
    // netperf's default 16 KB writes leave the guest as the bound, far above it.
    let default = gbps(&tcp("").run_clean());
    assert!(default > 4.0 * small, "{default} vs {small}");
}

#[test]
fn an_unpaced_udp_source_sends_as_fast_as_its_core() {
    let p = Profile::load("es2").unwrap();
    let c = &p.client;
    for bytes in [64u32, 60_000] {
        let frames = (bytes + 8).div_ceil(p.nic.mtu_bytes.value as u32 - 20);
        let cost = (c.send_call_ns.value + c.tx_byte_ns.value * f64::from(bytes) + c.tx_skb_ns.value * f64::from(frames)).round();
        let vm = Vm::new("vm0", 1).workload(&format!("kind = \"udp_receive\"\nmessage_bytes = {bytes}"));
        let sc = Sc::new("udp-unpaced", "es2").duration(0.02).warmup(0.005).vm(vm);
        let (_, l) = sc.run_with_ledger();
        let offered = l.udp_rx_sent[0] as f64 / 0.025;
        let bound = 1e9 / cost;
        assert!((offered - bound).abs() < 0.005 * bound, "{bytes} B: {offered} datagrams/s vs the core's {bound}");
    }
}

/// Four VMs whose streams share one client core: without TSO the core's per-segment work binds
/// them all; with it a 45-segment skb spreads one skb's cost over 45 frames.
#[test]
fn tso_lifts_a_shared_client_core_s_bound() {
    let p = Profile::load("es2").unwrap();
    let c = &p.client;
    let sc = |tso: bool| {
        let mut sc = Sc::new("tso", "es2").duration(0.05).warmup(0.02).client(&format!("cores = 1\ntso = {tso}"));
        for i in 0..4 {
            sc = sc.vm(Vm::new(&format!("vm{i}"), 2).workload("kind = \"tcp_receive\"\nmessage_bytes = 16384"));
        }
        sc
    };
    let mss = 1448.0;
    // The core's sending work per segment bounds the streams from above; with an ACK per two
    // segments received on the same core (at most: the guest ACKs a GRO skb once) from below.
    let send = c.tx_skb_ns.value + c.tx_byte_ns.value * mss + c.send_call_ns.value * mss / 16_384.0;
    let (upper, lower) = (8.0 * mss / send, 8.0 * mss / (send + c.rx_packet_ns.value / 2.0));
    let off = gbps(&sc(false).run_clean());
    let on = gbps(&sc(true).run_clean());
    assert!(off <= upper * 1.001, "{off} Gbit/s without TSO vs the core's {upper}");
    assert!(off > 0.9 * lower, "{off} vs {lower}: the core should be the bound");
    assert!(on > 1.2 * off, "{on} with TSO vs {off} without");
}

#[test]
fn a_scenario_s_tso_replaces_the_profile_s_and_says_so() {
    let sc = tcp("").client("tso = false");
    let c = sc.check();
    assert!(!c.profile.client.tso.value);
    assert!(c.profile.client.tso.source.contains("client.tso = false in scenario"), "{}", c.profile.client.tso.source);
    let e = tcp("send_bytes = 0").error();
    assert!(e.contains("send_bytes") && e.contains("1..=1048576"), "{e}");
}

/// A client kernel without autocorking (before Linux 3.14) pushes each `write()`'s whole
/// segments at once: a stream of 512-byte writes bound by the client's core pays an skb about
/// every MSS. With it (es2's Linux 4.4 client) the tail skb grows while earlier ones wait for
/// the NIC, and the skb's cost is spread over up to 45 segments.
#[test]
fn without_autocorking_each_write_pushes_its_segments() {
    let p = Profile::load("es2").unwrap();
    let c = &p.client;
    assert!(c.tcp_autocorking.value, "es2's client runs Linux 4.4");
    let mss = 1448.0;
    let per_byte = c.send_call_ns.value / 512.0 + c.tx_byte_ns.value;
    // Three 512-byte writes bring an MSS; the push sends it and keeps the 88-byte tail, so an
    // skb carries one MSS (two, now and then, as the tails add up). The ACKs it receives take
    // a little of the same core.
    let (upper, lower) = (8.0 / (per_byte + c.tx_skb_ns.value / (2.0 * mss)), 8.0 / (per_byte + c.tx_skb_ns.value / mss));
    let off = tcp("send_bytes = 512").client("tcp_autocorking = false");
    let checked = off.check();
    let src = &checked.profile.client.tcp_autocorking.source;
    assert!(src.contains("client.tcp_autocorking = false in scenario"), "{src}");
    let off = gbps(&off.run_clean());
    assert!(off <= upper * 1.001 && off > 0.95 * lower, "{off} Gbit/s without autocorking vs the core's {lower}..{upper}");
    let on = gbps(&tcp("send_bytes = 512").run_clean());
    assert!(on > 8.0 / (per_byte + c.tx_skb_ns.value / mss) * 1.1 && on <= 8.0 / per_byte * 1.001, "{on} Gbit/s with autocorking vs {off} without");
    // The pre-3.14 clients of the seeds' testbeds have none.
    for name in ["did", "elvis", "sriov", "hbalance"] {
        assert!(!Profile::load(name).unwrap().client.tcp_autocorking.value, "{name}");
    }
}
