//! A TCP receiver's window (issue 49 item 1): without `window_bytes` the guest kernel autotunes
//! its buffer from `tcp_rmem[1]` towards `tcp_rmem[2]`; a fixed `SO_RCVBUF` stays fixed.

mod common;

use common::{Sc, Vm};
use eventpath_sim::summary::VmSummary;

/// One VM of 2 vCPUs receiving netperf TCP_STREAM through an SR-IOV VF at 8,000 interrupts/s
/// (the CGR/AIR testbed, Linux 2.6.32 guests), with `window` as its `[vm.workload]` extra.
fn run(profile: &str, window: &str) -> VmSummary {
    let workload = format!("kind = \"tcp_receive\"\nmessage_bytes = 87380\n{window}");
    let vm = Vm::new("vm0", 2).net("kind = \"sriov_vf\"\nitr_us = 125.0").workload(workload.trim_end());
    Sc::new("rcvbuf", profile).duration(0.1).warmup(0.05).pcpus(8).vm(vm).run_clean().summary.vms[0].clone()
}

#[test]
fn an_autotuned_window_grows_to_what_tcp_rmem_allows_and_the_stream_with_it() {
    let fixed = run("sriov", "window_bytes = 65536\n");
    let tuned = run("sriov", "");
    let (f, t) = (fixed.tcp_receive.clone().unwrap(), tuned.tcp_receive.clone().unwrap());
    assert!(!f.autotuned && t.autotuned);
    assert_eq!((f.window_initial_bytes, f.window_max_bytes, f.window_end_bytes), (65_536, 65_536, 65_536));
    // 2.6.32: 87,380 bytes advertise 65,535 (tcp_adv_win_scale = 2); the limit is 3/4 of
    // tcp_rmem[2] (2,011,136 bytes on a 512 MB guest).
    assert_eq!(t.window_initial_bytes, 65_535);
    assert!(t.window_max_bytes > 10 * t.window_initial_bytes, "{t:?}");
    assert!(t.window_max_bytes <= 2_011_136 * 3 / 4, "{t:?}");
    // A window per interrupt interval no longer bounds the stream.
    let gbps = |v: &VmSummary| v.throughput.gbps.unwrap();
    assert!(gbps(&tuned) > 1.5 * gbps(&fixed), "{} vs {}", gbps(&tuned), gbps(&fixed));
}
