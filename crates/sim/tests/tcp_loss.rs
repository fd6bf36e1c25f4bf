//! A TCP stream's losses (issue 49 items 2 and 5): segments dropped at a full VF ring are
//! resent and counted (`vms[].tcp_receive.retransmits_per_s`), never silently lost, and the
//! client's congestion window backs off (`cwnd_mean_segments`); a lossless stream keeps it.

mod common;

use common::{Sc, Vm};
use eventpath_sim::summary::VmSummary;

/// One VM of one vCPU receiving netperf TCP_STREAM through a VF at 8,000 interrupts/s on the
/// CGR/AIR testbed (`profile`: a built-in name or a path), on `pcpus`, beside a host hog if
/// `hog`; measured for 0.2 s after `warmup` s.
fn run(profile: &str, pcpus: u32, hog: bool, warmup: f64) -> VmSummary {
    let vm = Vm::new("vm0", 1).net("kind = \"sriov_vf\"\nitr_us = 125.0").workload("kind = \"tcp_receive\"\nmessage_bytes = 87380");
    let sc = Sc::new("loss", profile).duration(0.2).warmup(warmup).pcpus(pcpus).vm(vm);
    let sc = if hog { sc.hog_nice(&[], 0) } else { sc };
    sc.run_clean().summary.vms[0].clone()
}

#[test]
fn a_vcpu_that_shares_its_pcpu_drops_at_its_ring_and_the_client_backs_off_and_resends() {
    // A warm-up of 1 ms: the losses of the first slices, before the window has backed off,
    // fall in the measured window.
    let alone = run("sriov", 8, false, 0.001);
    let shared = run("sriov", 1, true, 0.001);
    let (a, s) = (alone.tcp_receive.clone().unwrap(), shared.tcp_receive.clone().unwrap());
    let mss = 1448.0;
    // Lossless: nothing resent, and the congestion window is never the bound (it stays above
    // what the receive window lets out).
    assert_eq!((a.retransmits_per_s, a.timeouts_per_s), (0.0, 0.0), "{a:?}");
    assert!(f64::from(a.cwnd_end_segments) * mss >= a.window_end_bytes as f64, "{a:?}");
    // The hog holds the pCPU for whole slices: the VF's 512-descriptor ring overflows, the
    // client resends what it dropped and its window backs off below the receive window.
    assert!(s.retransmits_per_s > 0.0, "{s:?}");
    assert!(s.retransmits_per_s <= shared.throughput.pps.unwrap(), "no more resent than received: {s:?}");
    assert!(s.cwnd_mean_segments.unwrap() * mss < 0.5 * s.window_mean_bytes.unwrap(), "{s:?}");
    // Resent, never lost: the stream goes on and its loss stays 0.
    assert!(shared.throughput.gbps.unwrap() > 0.5, "{:?}", shared.throughput);
    assert_eq!(shared.loss_pct, Some(0.0));
    let mean = s.window_mean_bytes.unwrap();
    assert!(mean > 0.0 && mean <= s.window_max_bytes as f64, "{s:?}");
}

/// The same losses under Reno (a profile whose client runs `tcp_congestion = reno`): its
/// window backs off as CUBIC's does.
#[test]
fn reno_backs_off_on_the_same_losses() {
    let sriov = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../profiles/sriov.toml")).unwrap();
    let reno = sriov.replace("tcp_congestion = { value = \"cubic\"", "tcp_congestion = { value = \"reno\"");
    assert_ne!(reno, sriov);
    let path = std::env::temp_dir().join(format!("eventpath-reno-{}.toml", std::process::id()));
    std::fs::write(&path, reno).unwrap();
    let r = run(path.to_str().unwrap(), 1, true, 0.05).tcp_receive.unwrap();
    std::fs::remove_file(&path).ok();
    // Its cut came in the warm-up (no resend need fall in the window); slow start alone would
    // have passed the receive window within a few round trips.
    assert!(r.cwnd_mean_segments.unwrap() * 1448.0 < 0.5 * r.window_mean_bytes.unwrap(), "{r:?}");
}
