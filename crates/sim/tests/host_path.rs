//! The host's network path as stages (issue 28 item 2): a kernel back end pays the transmit
//! path below it (`host.tap_tx_ns`, `host.dev_xmit_ns`) in its own context, and the host NIC's
//! interrupt work (`host.nic_irq_ns`, `nic_rx_frame_ns`, `nic_tx_clean_ns`) runs on the pCPU
//! its IRQ affinity names (`host.nic_irq_cpus`): a vCPU there takes external-interrupt exits
//! that last the work longer, an idle pCPU spends it alone (`host.pcpu_softirq_pct`).

mod common;

use common::{Sc, Vm};
use eventpath_sim::summary::Summary;

/// One 1-vCPU VM on pCPU 0 streaming TCP (its ACKs and TX completions are the host NIC's
/// work), its vhost thread on pCPU 1, a third pCPU idle; `host` lines added.
fn stream(host: &str) -> Sc {
    Sc::new("host-path", "elvis")
        .duration(0.05)
        .warmup(0.01)
        .pcpus(3)
        .host(host)
        .vm(Vm::new("vm0", 1).pins(&[0]).vhost_pin(1).workload("kind = \"tcp_stream\"\nmessage_bytes = 1448"))
}

fn ext_exits(s: &Summary) -> f64 {
    s.vms[0].exits_per_s.get("external_interrupt").copied().flatten().unwrap_or(0.0)
}

#[test]
fn the_nic_interrupt_work_runs_where_its_affinity_says() {
    let on_vcpu = stream("nic_irq_cpus = [0]").run().summary;
    let on_idle = stream("nic_irq_cpus = [2]").run().summary;
    let sirq = |s: &Summary| s.host.pcpu_softirq_pct.get().expect("the simulator measures it").clone();
    let (a, b) = (sirq(&on_vcpu), sirq(&on_idle));
    // (Beside it each busy pCPU's host tick, `[housekeeping]`: a few hundredths of a percent.)
    assert!(a[0] > 1.0 && a[1] < 0.05 && a[2] < 0.05, "all of it on pCPU 0: {a:?}");
    assert!(b[2] > 1.0 && b[0] < 0.05 && b[1] < 0.05, "all of it on pCPU 2: {b:?}");
    // On the vCPU's pCPU each piece of work is an external-interrupt exit of the vCPU.
    assert!(ext_exits(&on_vcpu) > 10.0 * ext_exits(&on_idle).max(100.0), "{} vs {} exits/s", ext_exits(&on_vcpu), ext_exits(&on_idle));
    // ... which takes guest time from the sender.
    let gbps = |s: &Summary| s.vms[0].throughput.gbps.unwrap();
    assert!(gbps(&on_vcpu) < gbps(&on_idle), "{} vs {} Gbit/s", gbps(&on_vcpu), gbps(&on_idle));
}

#[test]
fn the_work_follows_the_profile_costs_and_vanishes_without_them() {
    let with = stream("nic_irq_cpus = [2]").run().summary;
    let without = stream("nic_irq_cpus = [2]")
        .profile_override("host.nic_irq_ns", 0)
        .profile_override("host.nic_rx_frame_ns", 0)
        .profile_override("host.nic_rx_skb_ns", 0)
        .profile_override("host.nic_tx_clean_ns", 0)
        .run()
        .summary;
    let sirq = |s: &Summary| s.host.pcpu_softirq_pct.get().unwrap()[2];
    assert!(sirq(&with) > 1.0, "{}", sirq(&with));
    assert_eq!(sirq(&without), 0.0);
    assert!(sirq(&with) < 100.0);
}

#[test]
fn a_kernel_back_end_pays_the_transmit_path_below_it() {
    let busy = |sc: Sc| {
        let s = sc.run().summary;
        let t = &s.host.io_threads[0];
        (t.util_pct.expect("a vhost thread's busy share"), s.vms[0].throughput.pps.unwrap())
    };
    let (with, pps_with) = busy(stream("nic_irq_cpus = [2]"));
    let (without, pps_without) =
        busy(stream("nic_irq_cpus = [2]").profile_override("host.tap_tx_ns", 0).profile_override("host.dev_xmit_ns", 0));
    // CPU per packet of the vhost thread rises by the stages' cost.
    assert!(with / pps_with > 1.2 * without / pps_without, "{with}% at {pps_with} pps vs {without}% at {pps_without} pps");
}

#[test]
fn an_affinity_to_a_missing_pcpu_or_none_is_refused_naming_the_key() {
    for (host, want) in [("nic_irq_cpus = [3]", "pCPU 3 does not exist"), ("nic_irq_cpus = []", "[] is not allowed")] {
        let text = stream(host).toml();
        let e = eventpath_sim::scenario::Scenario::from_toml("t.toml", &text).and_then(|s| s.check("t.toml")).expect_err("refused").to_string();
        assert!(e.contains("host.nic_irq_cpus") && e.contains(want) && !e.contains('\n'), "{e}");
    }
}
