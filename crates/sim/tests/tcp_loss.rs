//! A TCP stream's losses in the summary (issue 49 item 5): segments dropped at a full VF ring
//! are resent and counted (`vms[].tcp_receive.retransmits_per_s`), never silently lost.

use eventpath_sim::run::{run_parsed, RunOptions};
use eventpath_sim::scenario::Scenario;
use eventpath_sim::summary::VmSummary;

/// One VM of one vCPU receiving netperf TCP_STREAM through a VF at 8,000 interrupts/s on the
/// CGR/AIR testbed; `host` is the `[host]` table's body.
fn run(host: &str) -> VmSummary {
    let text = format!(
        "name = \"loss\"\nprofile = \"sriov\"\nduration_s = 0.2\nwarmup_s = 0.05\n[host]\n{host}\n\
         [[vm]]\nname = \"vm0\"\nvcpus = 1\n[vm.net]\nkind = \"sriov_vf\"\nitr_us = 125.0\n\
         [vm.workload]\nkind = \"tcp_receive\"\nmessage_bytes = 87380\n"
    );
    let sc = Scenario::from_toml("loss.toml", &text).unwrap();
    run_parsed(sc, "loss.toml", &RunOptions::default()).unwrap().summary.vms[0].clone()
}

#[test]
fn a_vcpu_that_shares_its_pcpu_drops_at_its_ring_and_the_client_resends_what_it_dropped() {
    let alone = run("pcpus = 8");
    let shared = run("pcpus = 1\n[[host.cpu_hog]]\nnice = 0");
    let (a, s) = (alone.tcp_receive.clone().unwrap(), shared.tcp_receive.clone().unwrap());
    assert_eq!((a.retransmits_per_s, a.timeouts_per_s), (0.0, 0.0), "{a:?}");
    // The hog holds the pCPU for whole slices: the VF's 512-descriptor ring overflows under
    // the open window and the client resends at the next ACK (SACK) or the RTO.
    assert!(s.retransmits_per_s > 1000.0, "{s:?}");
    assert!(s.retransmits_per_s <= shared.throughput.pps.unwrap(), "no more resent than received: {s:?}");
    // Resent, never lost: the stream goes on and its loss stays 0.
    assert!(shared.throughput.gbps.unwrap() > 0.5, "{:?}", shared.throughput);
    assert_eq!(shared.loss_pct, Some(0.0));
    // Each ACK advertises at most the largest window.
    let mean = s.window_mean_bytes.unwrap();
    assert!(mean > 0.0 && mean <= s.window_max_bytes as f64, "{s:?}");
}
