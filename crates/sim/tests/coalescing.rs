//! Interrupt moderation on every device that can have it (issue 30 item 1): the schemes of
//! `eventpath_policy::moderation` driving an SR-IOV VF's EITR as the CGR/AIR paper's host-side
//! controller (§4.2–4.3), and virtio notification coalescing (`VIRTIO_NET_F_NOTF_COAL`, the
//! device side) on virtio queues; bad combinations refused in one line.

mod common;

use common::{Sc, Vm};
use eventpath_sim::run::RunOutput;

fn run(sc: &Sc) -> RunOutput {
    let (o, l) = sc.run_with_ledger();
    l.check().unwrap();
    assert!(o.summary.stalled_flows.is_empty(), "{:?}", o.summary.stalled_flows);
    o
}

/// A DID-profile VM with a VF receiving `pps` 1472-byte datagrams, its EITR driven by
/// `moderation` (the lines of `[vm.net.moderation]`; "": the VF's own fixed EITR).
fn vf(pps: u32, moderation: &str) -> Sc {
    Sc::new("vf-moderation", "did").duration(0.3).warmup(0.1).pcpus(2).vm(Vm::new("vm0", 1)
        .pins(&[0])
        .net("kind = \"sriov_vf\"")
        .moderation(moderation)
        .workload(&format!("kind = \"udp_receive\"\nmessage_bytes = 1472\nrate_pps = {pps}")))
}

/// (interrupts/s, datagrams/s) of a run.
fn rates(o: &RunOutput) -> (f64, f64) {
    let v = &o.summary.vms[0];
    (v.interrupts_per_s.unwrap(), v.throughput.pps.unwrap())
}

/// AIR (k = 32, a 20 ms interval) on a VF: Algorithm 1's I = B / (k·S) + offset is pps/32 +
/// 1000 below Î, so the interrupt rate follows the load; FIR holds it wherever the load is.
#[test]
fn air_on_a_vf_makes_the_interrupt_rate_follow_the_load() {
    let air = "kind = \"air\"\nk = 32\ninterval_ns = 20000000";
    let (lo, lo_pps) = rates(&run(&vf(20_000, air)));
    let (hi, hi_pps) = rates(&run(&vf(200_000, air)));
    assert!((lo_pps - 20_000.0).abs() < 0.02 * 20_000.0, "{lo_pps}");
    assert!((hi_pps - 200_000.0).abs() < 0.02 * 200_000.0, "{hi_pps}");
    // Targets: 20k/32 + 1000 = 1625/s and 200k/32 + 1000 = 7250/s (the frame's bytes cancel).
    assert!((1_000.0..2_600.0).contains(&lo), "AIR at 20 kpps: {lo}/s");
    assert!((5_000.0..9_000.0).contains(&hi), "AIR at 200 kpps: {hi}/s");
    let fir = "kind = \"fir\"\nitr = 4000";
    let (f_lo, _) = rates(&run(&vf(20_000, fir)));
    let (f_hi, _) = rates(&run(&vf(200_000, fir)));
    assert!(f_lo < 4_400.0 && f_hi < 4_400.0 && f_hi > 3_500.0, "FIR 4000: {f_lo}/s, {f_hi}/s");
}

/// CGR on a VF: full-bulk frames (1472 B ≥ 1200) are class 1, 4000 interrupts/s (§4.2).
#[test]
fn cgr_on_a_vf_classifies_bulk_traffic() {
    let (irqs, _) = rates(&run(&vf(200_000, "kind = \"cgr\"\ntimeslice_ns = 20000000")));
    assert!((3_000.0..4_600.0).contains(&irqs), "CGR full bulk: {irqs}/s");
}

/// A virtio VM receiving 100 kpps of 64 B, its queues' `[vm.net.moderation]` lines.
fn virtio(moderation: &str) -> Sc {
    Sc::new("notf-coal", "es2").duration(0.05).warmup(0.01).host("nic_itr = \"fixed\"").vm(Vm::new("vm0", 1)
        .moderation(moderation)
        .workload("kind = \"udp_receive\"\nmessage_bytes = 64\nrate_pps = 100000"))
}

/// NOTF_COAL: with max_frames = 10 a notification covers ten packets (or 1 ms), so there are
/// far fewer interrupts per packet than without; the stream is kept.
#[test]
fn notf_coal_gives_fewer_interrupts_per_packet() {
    let (free, free_pps) = rates(&run(&virtio("")));
    let (coal, coal_pps) = rates(&run(&virtio("kind = \"notf_coal\"\nmax_usecs = 1000\nmax_frames = 10")));
    assert!((coal_pps - free_pps).abs() < 0.03 * free_pps, "{coal_pps} vs {free_pps}");
    // Without coalescing NAPI's batching gives about one interrupt per five packets here; with
    // max_frames = 10, one per ten.
    assert!(coal / coal_pps < 0.75 * free / free_pps, "per packet: {} coalesced vs {} free", coal / coal_pps, free / free_pps);
    // At most one device interrupt per ten packets (timer interrupts come on top).
    assert!(coal < 100_000.0 / 10.0 * 1.05 + 1_500.0, "{coal}/s");
}

/// NOTF_COAL's µs limit: with a frame limit never reached, at most one notification per
/// max_usecs.
#[test]
fn notf_coal_usecs_bound_the_rate() {
    let (coal, pps) = rates(&run(&virtio("kind = \"notf_coal\"\nmax_usecs = 200\nmax_frames = 4096")));
    assert!(pps > 95_000.0, "{pps}");
    assert!(coal < 5_000.0 * 1.05 + 1_500.0, "{coal}/s");
}

fn one_line(e: &str, needles: &[&str]) {
    assert!(!e.contains('\n'), "{e}");
    for n in needles {
        assert!(e.contains(n), "{n:?} not in {e}");
    }
}

#[test]
fn bad_coalescing_and_vf_schemes_are_one_line_naming_the_key() {
    let e = virtio("kind = \"notf_coal\"\nmax_usecs = 0\nmax_frames = 0").check_error();
    one_line(&e, &["vm[0].net.moderation", "max_usecs", "kind = \"none\""]);
    let e = virtio("kind = \"notf_coal\"\nmax_usecs = 50\nmax_frames = 0").check_error();
    one_line(&e, &["max_frames"]);
    let e = vf(1000, "kind = \"notf_coal\"").check_error();
    one_line(&e, &["net.moderation.kind", "virtqueue"]);
    let e = vf(1000, "kind = \"fir\"\nitr = 500").check_error();
    one_line(&e, &["net.moderation.itr", "979"]);
    let e = vf(1000, "kind = \"fir\"\nitr = 500000").check_error();
    one_line(&e, &["net.moderation.itr", "488281"]);
    let e = Sc::new("m", "did").pcpus(2).vm(Vm::new("vm0", 1).net("kind = \"sriov_vf\"\nitr_us = 20").moderation("kind = \"cgr\"")).check_error();
    one_line(&e, &["net.itr_us", "[vm.net.moderation]"]);
    let e = vf(1000, "kind = \"air\"\nc_int_cycles = -1.0").check_error();
    one_line(&e, &["c_int_cycles"]);
}

/// Virtio-net DIM in the guest runs on a virtio queue and keeps the stream (its profile walk is
/// unit-tested in `eventpath_policy::moderation::dim::guest`); refused on a VF and with a
/// profile index outside the table.
#[test]
fn guest_dim_drives_the_coalescing_and_keeps_the_stream() {
    let (irqs, pps) = rates(&run(&virtio("kind = \"guest_dim\"")));
    assert!(pps > 97_000.0, "{pps}");
    assert!(irqs > 0.0, "{irqs}");
    let e = vf(1000, "kind = \"guest_dim\"").check_error();
    one_line(&e, &["net.moderation.kind", "guest_dim", "virtqueue"]);
    let e = virtio("kind = \"guest_dim\"\nstart_ix = 7").check_error();
    one_line(&e, &["vm[0].net.moderation", "start_ix", "0..=4"]);
}
