//! Hosts beyond 64 pCPUs (issue 32 item 4): the bar's layout, a 256-pCPU host with 512
//! single-vCPU VMs, runs on the `modern` profile (two Sapphire Rapids sockets, here overridden to
//! 128 cores each), every VM makes progress and the ledgers close. The measured wall time and
//! memory of the same layout in release are in docs/model.md ("A big host").

mod common;

use common::{Sc, Vm};

/// pCPUs of the big host: 2 sockets x 128 cores (`[profile_overrides.cpu] cores_per_socket`).
const PCPUS: u32 = 256;
/// Single-vCPU VMs on it: two vCPU threads and two vhost threads a pCPU.
const VMS: u32 = 512;

/// The bar's layout: VM `i`'s vCPU on pCPU `i mod 256` and its vhost thread on the pCPU half the
/// host away, every VM answering a ping each `interval_us` with posted interrupts.
pub fn big_host(duration_s: f64, interval_us: u32) -> Sc {
    let mut sc = Sc::new("big-host", "modern").duration(duration_s).warmup(duration_s / 5.0).profile_override("cpu.cores_per_socket", 128);
    for i in 0..VMS {
        let vm = Vm::new(&format!("vm{i}"), 1)
            .pins(&[i % PCPUS])
            .vhost_pin((i + PCPUS / 2) % PCPUS)
            .delivery("posted")
            .workload(&format!("kind = \"ping\"\ninterval_us = {interval_us}"));
        sc = sc.vm(vm);
    }
    sc
}

#[test]
fn a_256_pcpu_host_runs_512_single_vcpu_vms() {
    let sc = big_host(0.02, 1000);
    let checked = sc.check();
    assert_eq!(checked.pcpus, PCPUS);
    let (o, l) = sc.run_with_ledger();
    l.check().unwrap();
    assert_eq!(o.summary.vms.len(), VMS as usize);
    for (i, v) in o.summary.vms.iter().enumerate() {
        let ops = v.throughput.ops_per_s.unwrap();
        // 1000 pings/s each over the 16 ms measured: every VM answers every one.
        assert!((ops - 1000.0).abs() < 150.0, "vm{i}: {ops} pings/s");
    }
    // The last pCPUs run too (the CPU mask's upper words): VM 511's vCPU is on pCPU 255.
    assert!(l.irq_handled[VMS as usize - 1] > 0, "{:?}", &l.irq_handled[VMS as usize - 4..]);
}

#[test]
fn more_pcpus_than_the_model_supports_are_refused_naming_the_key() {
    // 2 x 512 cores: the profile allows it, the model (512 pCPUs) does not.
    let sc = Sc::new("big", "modern").profile_override("cpu.cores_per_socket", 512).vm(Vm::new("vm0", 1));
    let m = sc.check_error();
    assert!(m.contains("key `host.pcpus`") && m.contains("1..=512"), "{m}");
    assert_eq!(m.lines().count(), 1, "{m}");
}
