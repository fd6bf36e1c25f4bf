//! A TCP stream's losses (issue 49 items 2 and 5): segments dropped at a full VF ring are
//! resent and counted (`vms[].tcp_receive.retransmits_per_s`), never silently lost, and the
//! client's congestion window backs off (`cwnd_mean_segments`); a lossless stream keeps it.

use eventpath_sim::run::{run_parsed, RunOptions};
use eventpath_sim::scenario::Scenario;
use eventpath_sim::summary::VmSummary;

/// One VM of one vCPU receiving netperf TCP_STREAM through a VF at 8,000 interrupts/s on the
/// CGR/AIR testbed; `host` is the `[host]` table's body. A warm-up of 1 ms: the losses of the
/// first slices, before the window has backed off, fall in the measured window.
fn run(host: &str) -> VmSummary {
    let text = format!(
        "name = \"loss\"\nprofile = \"sriov\"\nduration_s = 0.2\nwarmup_s = 0.001\n[host]\n{host}\n\
         [[vm]]\nname = \"vm0\"\nvcpus = 1\n[vm.net]\nkind = \"sriov_vf\"\nitr_us = 125.0\n\
         [vm.workload]\nkind = \"tcp_receive\"\nmessage_bytes = 87380\n"
    );
    let sc = Scenario::from_toml("loss.toml", &text).unwrap();
    run_parsed(sc, "loss.toml", &RunOptions::default()).unwrap().summary.vms[0].clone()
}

#[test]
fn a_vcpu_that_shares_its_pcpu_drops_at_its_ring_and_the_client_backs_off_and_resends() {
    let alone = run("pcpus = 8");
    let shared = run("pcpus = 1\n[[host.cpu_hog]]\nnice = 0");
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
    let text = format!(
        "name = \"loss\"\nprofile = {:?}\nduration_s = 0.2\nwarmup_s = 0.05\n[host]\npcpus = 1\n[[host.cpu_hog]]\nnice = 0\n\
         [[vm]]\nname = \"vm0\"\nvcpus = 1\n[vm.net]\nkind = \"sriov_vf\"\nitr_us = 125.0\n\
         [vm.workload]\nkind = \"tcp_receive\"\nmessage_bytes = 87380\n",
        path.to_str().unwrap()
    );
    let sc = Scenario::from_toml("loss.toml", &text).unwrap();
    let r = run_parsed(sc, "loss.toml", &RunOptions::default()).unwrap().summary.vms[0].clone().tcp_receive.unwrap();
    std::fs::remove_file(&path).ok();
    // Its cut came in the warm-up (no resend need fall in the window); slow start alone would
    // have passed the receive window within a few round trips.
    assert!(r.cwnd_mean_segments.unwrap() * 1448.0 < 0.5 * r.window_mean_bytes.unwrap(), "{r:?}");
}
