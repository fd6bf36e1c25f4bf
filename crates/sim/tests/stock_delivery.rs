//! A VM whose scenario names no `interrupt_delivery` gets its profile's stock host's
//! (`host.apicv`, `host.vtd_posting`; `scenario::layout::default_delivery`): posted interrupts
//! where the profile's kernel turns APICv on by default on its CPU (es2: Linux 4.4 on Ivy
//! Bridge-EP; modern: 6.1 on Sapphire Rapids), `apicv` for an assigned device where the IOMMU
//! cannot post (es2), the emulated LAPIC on the older kernels (elvis 3.1, did 3.6, sriov
//! 2.6.32), event channels on a Xen PV device.

mod common;

use common::{Sc, Vm};
use eventpath_sim::scenario::InterruptDelivery::{self, Apicv, Emulated, Evtchn, Posted};

const RR: &str = "kind = \"udp_rr\"\nrequest_bytes = 64\nresponse_bytes = 64";

fn stock(sc: Sc) -> InterruptDelivery {
    sc.check().scenario.vm[0].interrupt_delivery
}

fn rr(profile: &str) -> Sc {
    Sc::new("stock", profile).pcpus(2).vm(Vm::new("vm0", 1).workload(RR))
}

#[test]
fn each_profile_gets_its_kernels_default_delivery() {
    assert_eq!(stock(rr("es2")), Posted);
    assert_eq!(stock(rr("modern")), Posted);
    for old in ["elvis", "did", "sriov"] {
        assert_eq!(stock(rr(old)), Emulated, "{old}");
    }
    // An assigned device: modern's IOMMU posts it, es2's (Ivy Bridge-EP) does not.
    let vf = |p: &str| Sc::new("stock", p).pcpus(2).vm(Vm::new("vm0", 1).net("kind = \"sriov_vf\"").workload(RR));
    assert_eq!(stock(vf("modern")), Posted);
    assert_eq!(stock(vf("did")), Emulated);
    let nvme = |p: &str| Sc::new("stock", p).pcpus(2).vm(Vm::new("vm0", 1).disk("nvme").workload("kind = \"fio\""));
    assert_eq!(stock(nvme("es2")), Apicv);
    assert_eq!(stock(nvme("modern")), Posted);
    // Xen: a PV device's event channels.
    let xen = Sc::new("stock", "hbalance").pcpus(4).host("virtualization = \"xen\"\nscheduler = \"xen_credit\"")
        .vm(Vm::new("vm0", 1).net("kind = \"xen_pv\"").workload("kind = \"ping\""));
    assert_eq!(stock(xen), Evtchn);
}

#[test]
fn what_the_scenario_or_its_overrides_say_wins() {
    assert_eq!(stock(rr("es2").edit_vm(0, |v| v.delivery("emulated"))), Emulated);
    assert_eq!(stock(rr("modern").edit_vm(0, |v| v.delivery("apicv"))), Apicv);
    // ES2's "w/o PI" host as a profile: kvm_intel enable_apicv = 0.
    assert_eq!(stock(rr("es2").profile_override("host.apicv", 0)), Emulated);
    assert_eq!(stock(rr("modern").profile_override("host.vtd_posting", 0)), Posted, "a virtio device needs no IOMMU");
    // A feature of another mode, on a VM that named none, is refused saying the mode is stock's.
    let e = rr("es2").edit_vm(0, |v| v.lines("apic = { pv_eoi = true }")).error();
    assert!(e.contains("vm[0].apic.pv_eoi") && e.contains("stock \"posted\""), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
}

#[test]
fn the_stock_run_takes_no_eoi_exit_where_the_written_emulated_one_does() {
    let run = |sc: Sc| sc.duration(0.05).warmup(0.01).run_clean();
    let eoi = |o: &eventpath_sim::run::RunOutput| o.summary.vms[0].exits_per_s.get("eoi").copied().flatten().unwrap_or(0.0);
    let stock = run(rr("es2"));
    let emulated = run(rr("es2").edit_vm(0, |v| v.delivery("emulated")));
    assert_eq!(stock.summary.vms[0].interrupt_delivery, Some("posted"));
    assert_eq!(eoi(&stock), 0.0, "APICv virtualizes the EOI");
    assert!(eoi(&emulated) > 1000.0, "the emulated LAPIC's EOI exits: {}", eoi(&emulated));
}

fn ipiv(sc: Sc) -> bool {
    sc.check().scenario.vm[0].apic.ipiv
}

/// IPI virtualization is stock where the profile's kernel turns it on (`host.ipiv`: Linux 5.19+)
/// and its CPU has it (`cpu.ipiv`), on a VM whose delivery is posted: modern only.
#[test]
fn ipi_virtualization_is_stock_on_a_posted_vm_of_modern_only() {
    assert!(ipiv(rr("modern")));
    assert!(!ipiv(rr("es2")), "Linux 4.4 has no IPIv");
    assert!(!ipiv(rr("es2").profile_override("cpu.ipiv", 1)), "a CPU with IPIv under a kernel without it");
    assert!(ipiv(rr("es2").profile_override("cpu.ipiv", 1).profile_override("host.ipiv", 1)));
    assert!(!ipiv(rr("modern").profile_override("host.ipiv", 0)), "enable_ipiv = 0");
    assert!(!ipiv(rr("modern").edit_vm(0, |v| v.delivery("emulated"))), "IPIv needs posted interrupts");
    assert!(!ipiv(rr("modern").edit_vm(0, |v| v.delivery("apicv"))));
    assert!(!ipiv(rr("modern").edit_vm(0, |v| v.lines("apic = { ipiv = false }"))), "what the scenario writes wins");
    for old in ["elvis", "did", "sriov"] {
        assert!(!ipiv(rr(old)), "{old}");
    }
    // Written true where it cannot be is still refused.
    let e = rr("modern").edit_vm(0, |v| v.delivery("apicv").lines("apic = { ipiv = true }")).error();
    assert!(e.contains("vm[0].apic.ipiv"), "{e}");
}

#[test]
fn the_stock_modern_vm_sends_its_ipis_without_an_exit() {
    let pingpong = |apic: &str| {
        let vm = Vm::new("vm0", 2).pins(&[0, 1]).vhost_pin(2).workload("kind = \"ipi_pingpong\"");
        let vm = if apic.is_empty() { vm } else { vm.lines(apic) };
        Sc::new("stock-ipiv", "modern").pcpus(3).duration(0.05).warmup(0.01).vm(vm).run_clean()
    };
    let ipis = |o: &eventpath_sim::run::RunOutput| o.summary.vms[0].exits_per_s.get("ipi").copied().flatten().unwrap_or(0.0);
    let (stock, off) = (pingpong(""), pingpong("apic = { ipiv = false }"));
    assert_eq!(ipis(&stock), 0.0, "IPIv posts the ICR write");
    assert!(ipis(&off) > 1000.0, "without IPIv every round trip's ICR write exits: {}", ipis(&off));
}
