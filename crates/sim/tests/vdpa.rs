//! vDPA (`[vm.net] kind = "vdpa"`, issue 32 item 3): the guest's virtio-net driver on the
//! queues of a VF of the host's NIC. Against virtio-net over vhost on the same layout it removes
//! the kick exits (each doorbell write goes to a page mapped into the guest) and the back-end
//! thread; with posted interrupts (vhost-vdpa's IRQ bypass) it leaves no interrupt exit, with
//! emulated delivery KVM still injects each interrupt. Keys it would not read are refused.

mod common;

use common::{exits, refused, Sc, Vm};
use eventpath_sim::run::RunOutput;

fn run(sc: &Sc) -> RunOutput {
    sc.run_clean()
}

/// A 1-vCPU VM on the did profile's host (82599, SR-IOV) answering a 1-byte UDP_RR, its device
/// of kind `kind` under `mode`; a vhost thread (virtio only) on pCPU 1.
fn rr(kind: &str, mode: &str) -> Sc {
    let mut vm = Vm::new("vm0", 1).pins(&[0]).delivery(mode).net(&format!("kind = \"{kind}\""));
    if kind == "virtio" {
        vm = vm.vhost_pin(1);
    }
    Sc::new("vdpa", "did")
        .pcpus(2)
        .duration(0.1)
        .warmup(0.01)
        .vm(vm.workload("kind = \"udp_rr\"\nrequest_bytes = 1\nresponse_bytes = 1"))
}

#[test]
fn vdpa_kicks_without_exits_and_has_no_back_end_thread() {
    let virtio = run(&rr("virtio", "posted"));
    let vdpa = run(&rr("vdpa", "posted"));
    let (v, d) = (&virtio.summary.vms[0], &vdpa.summary.vms[0]);
    eprintln!("virtio: {:?} kicks {:?}\nvdpa: {:?} kicks {:?}", v.exits_per_s, v.kicks_per_s, d.exits_per_s, d.kicks_per_s);
    // virtio-net: a kick is an I/O-instruction exit that wakes the vhost thread.
    assert!(exits(&virtio, "io_instruction") > 1000.0);
    assert!(virtio.summary.host.io_threads.iter().any(|t| t.util_pct.unwrap_or(0.0) > 1.0));
    // vDPA: as many doorbell writes or more (the device asks for each), none exits, no thread works.
    let ops = |o: &RunOutput| o.summary.vms[0].throughput.ops_per_s.unwrap();
    assert!(d.kicks_per_s.unwrap() >= ops(&vdpa), "a TX doorbell per request at least: {:?}", d.kicks_per_s);
    assert_eq!(exits(&vdpa, "io_instruction"), 0.0);
    assert!(vdpa.summary.host.io_threads.iter().all(|t| t.util_pct.unwrap_or(0.0) == 0.0), "{:?}", vdpa.summary.host.io_threads);
    // Posted through IRQ bypass: no interrupt exits; the guest still halts between requests.
    for r in ["external_interrupt", "interrupt_delivery", "eoi", "interrupt_window"] {
        assert_eq!(exits(&vdpa, r), 0.0, "{r}: {:?}", d.exits_per_s);
    }
    assert!(exits(&vdpa, "hlt") > 0.0, "the HLT exits stay");
    assert!(d.interrupts_per_s.unwrap() > 0.0);
    assert!(ops(&vdpa) > ops(&virtio), "fewer exits, a shorter round trip: {} vs {}", ops(&vdpa), ops(&virtio));
}

#[test]
fn vdpa_under_emulated_delivery_keeps_the_injection_exits() {
    let o = run(&rr("vdpa", "emulated"));
    let vm = &o.summary.vms[0];
    assert_eq!(exits(&o, "io_instruction"), 0.0, "the doorbell stays exitless");
    // The device's MSI-X reaches KVM as a host interrupt (irqfd) and is injected: an EOI exit per
    // interrupt the guest acknowledges.
    let irqs = vm.interrupts_per_s.unwrap();
    assert!(exits(&o, "eoi") > 0.5 * irqs, "{:?} at {irqs} interrupts/s", vm.exits_per_s);
}

#[test]
fn keys_a_vdpa_device_does_not_read_are_refused() {
    let vm = || Vm::new("vm0", 1).workload("kind = \"udp_rr\"\nrequest_bytes = 1\nresponse_bytes = 1");
    let sc = |vm: Vm| Sc::new("bad", "did").pcpus(2).vm(vm);
    refused(Sc::new("bad", "es2").pcpus(2).vm(vm().net("kind = \"vdpa\"")), "vm[0].net.kind", &["vdpa", "[sriov]"]);
    refused(sc(vm().net("kind = \"vdpa\"\nvhost_pin = 1")), "vm[0].net.vhost_pin", &["vhost thread"]);
    refused(sc(vm().net("kind = \"vdpa\"\nbusyloop_timeout_us = 10")), "vm[0].net.busyloop_timeout_us", &["vhost thread"]);
    refused(sc(vm().net("kind = \"vdpa\"\nitr_us = 10")), "vm[0].net.itr_us", &["throttle"]);
    refused(sc(vm().net("kind = \"vdpa\"\nevent_idx = false")), "vm[0].net.event_idx", &["doorbell"]);
    refused(sc(vm().net("kind = \"vdpa\"").moderation("kind = \"fir\"\nitr = 8000")), "vm[0].net.moderation", &["not moderated"]);
    refused(sc(vm().net("kind = \"vdpa\"\nvfs = 2")), "vm[0].net.vfs", &["SR-IOV"]);
    refused(sc(vm().net("kind = \"vdpa\"\nmtvd = true")), "vm[0].net.mtvd", &["sriov_vf"]);
}
