//! A VM's keys against its layout (the host mode, its device, its guest): each key the layout
//! cannot use is refused with one line that says why — a scenario never carries a key that is
//! accepted and ignored — and the values a layout needs from the profile are filled in.

use super::{DiskKind, Handling, HostLayout, InterruptDelivery, NetKind, VfItr, Virtualization, Vm, Workload};
use crate::profile::Profile;
use eventpath_policy::moderation::ModerationConfig;

/// AIR's costs from the profile, where the scenario leaves them unset (CGR/AIR paper §4.3,
/// Eq. 1-5, which gives no values): `C` is one core's clock (§4.3.3: "the available CPU
/// cycles of one processor core", the VF driver being single-threaded), `C_pkt` the guest's
/// receive of one packet of the VM's workload (a TCP segment, `guest.tcp_rx_segment_ns`, for a
/// TCP workload, else a datagram, `guest.udp_rx_packet_ns`), `C_int` an interrupt with an
/// emulated LAPIC, the paper's KVM setting (`exit.interrupt_delivery_ns` + `exit.eoi_ns` +
/// `guest.virtio_irq_ns` + `guest.napi_poll_ns`), each in cycles at `cpu.ghz`.
pub(super) fn fill_from_profile(vm: &mut Vm, profile: &Profile) {
    let tcp = vm.workload.as_ref().is_some_and(Workload::is_tcp);
    if let ModerationConfig::Air(a) = &mut vm.net.moderation {
        let ghz = profile.cpu.ghz.value;
        let (x, g) = (&profile.exit, &profile.guest);
        let int_ns = x.interrupt_delivery_ns.value + x.eoi_ns.value + g.virtio_irq_ns.value + g.napi_poll_ns.value;
        let pkt_ns = if tcp { g.tcp_rx_segment_ns.value } else { g.udp_rx_packet_ns.value };
        *a = a.clone().with_costs(ghz * 1e9, pkt_ns * ghz, int_ns * ghz);
    }
}

/// Stock KVM polls on halt where the profile's host kernel does by default (`host.halt_poll_ns`,
/// Linux 4.0 and later): a VM that says nothing of it, on a KVM host, whose vCPUs halt (no
/// burn, no `idle=poll`) and whose guest does not poll itself (`[vm.guest_halt_poll]`, whose
/// driver turns KVM's off), gets that `[vm.halt_poll]`.
pub(super) fn default_halt_poll(vm: &mut Vm, profile: &Profile, v: Virtualization) {
    let halts = !vm.guest_cpu_burn && vm.guest_idle != super::GuestIdle::Poll && vm.guest_halt_poll.is_none();
    if vm.halt_poll.is_none() && v == Virtualization::Kvm && halts {
        vm.halt_poll = profile.default_halt_poll();
    }
}

/// The interrupt delivery of a VM whose scenario names none: what the profile's stock host
/// does. A `xen_pv` device has event channels only; otherwise, under KVM, posted interrupts
/// where the profile's kernel turns APICv on by default on its CPU (`host.apicv`), except that
/// without VT-d posting (`host.vtd_posting`) an assigned device's interrupts (an SR-IOV VF's,
/// a vDPA device's, an NVMe disk's) still exit the vCPU they hit, which is `apicv`; the emulated
/// LAPIC where APICv is off, on Xen and on bare metal (where the mode becomes `native`).
pub(super) fn default_delivery(vm: &Vm, profile: &Profile, v: Virtualization) -> InterruptDelivery {
    if vm.net.kind == NetKind::XenPv {
        return InterruptDelivery::Evtchn;
    }
    let (apicv, vtd_posting) = profile.stock_posting();
    let assigned = vm.net.kind.in_vf() || vm.disk.kind == DiskKind::Nvme;
    match (v, apicv, assigned && !vtd_posting) {
        (Virtualization::Kvm, true, false) => InterruptDelivery::Posted,
        (Virtualization::Kvm, true, true) => InterruptDelivery::Apicv,
        _ => InterruptDelivery::Emulated,
    }
}

/// Does stock KVM give VM `vm` IPI virtualization? Where the profile's kernel turns it on and
/// its CPU has it (`Profile::stock_ipiv`), for a KVM VM whose delivery (as resolved) is
/// `posted`: vmx.c enables IPIv only with APICv and posted interrupts.
pub(super) fn stock_ipiv(vm: &Vm, profile: &Profile, v: Virtualization) -> bool {
    v == Virtualization::Kvm && vm.interrupt_delivery == InterruptDelivery::Posted && profile.stock_ipiv()
}

/// Keys VM `vm` sets that its layout would ignore: each refused, saying why.
pub(super) fn check_used(vm: &Vm, key: &dyn Fn(&str) -> String, host: &HostLayout) -> Result<(), String> {
    let bare = host.virtualization == Virtualization::BareMetal;
    if vm.net.kind == NetKind::SriovVf {
        // The host's controller writes the VF's EITR (CGR/AIR paper §4.2–4.3): one throttle
        // setting, so a scheme and a fixed or driver-run interval are one too many.
        if vm.net.moderation != ModerationConfig::None {
            if vm.net.itr_us.is_some() {
                return Err(format!(
                    "key `{}`: [vm.net.moderation] already drives this VF's EITR; remove {} or [vm.net.moderation]",
                    key("net.itr_us"),
                    key("net.itr_us")
                ));
            }
            if let ModerationConfig::NotfCoal(_) | ModerationConfig::GuestDim(_) = vm.net.moderation {
                let kind = if matches!(vm.net.moderation, ModerationConfig::NotfCoal(_)) { "notf_coal" } else { "guest_dim" };
                return Err(format!(
                    "key `{}`: \"{kind}\" is virtio's notification coalescing (VIRTIO_NET_F_NOTF_COAL); a VF has no virtqueue; choose fir, cgr, air or dim, or set {} = \"virtio\"",
                    key("net.moderation.kind"),
                    key("net.kind")
                ));
            }
        }
        if vm.net.event_idx.is_some() {
            return Err(format!("key `{}`: an SR-IOV VF has no virtqueue (event indices are virtio's); remove the key", key("net.event_idx")));
        }
        if vm.net.offload.is_some() {
            return Err(format!("key `{}`: an SR-IOV VF's offloads are its NIC's (ixgbevf turns TSO and checksum offload on); the table is virtio-net's feature negotiation; remove it", key("net.offload")));
        }
    }
    if vm.net.kind == NetKind::Vdpa {
        // The model's vDPA device raises its MSI-X for every used buffer while the driver's
        // callbacks are on, asks for every doorbell, and offloads as its NIC does: none of
        // these virtio-net tables would change it.
        let unread = if vm.net.moderation != ModerationConfig::None {
            Some(("net.moderation", "a vDPA device's interrupts are not moderated in the model (no EITR, no notification coalescing)"))
        } else if vm.net.event_idx.is_some() {
            Some(("net.event_idx", "the model's vDPA device always asks for the doorbell (a mapped doorbell write costs no exit)"))
        } else if vm.net.offload.is_some() {
            Some(("net.offload", "a vDPA device's offloads are its NIC's, not the host's GRO or a tap's"))
        } else {
            None
        };
        if let Some((k, why)) = unread {
            return Err(format!("key `{}`: {why}; remove it", key(k)));
        }
    }
    if let Some((k, needs)) = vm.net.offload.and_then(|o| o.forbidden()) {
        return Err(format!(
            "key `{}`: the virtio specification (§5.1.3.1) requires `{needs}` for `{k}`; set {} = true or {k} = false",
            key(&format!("net.offload.{k}")),
            key(&format!("net.offload.{needs}"))
        ));
    }
    if vm.halt_poll.is_some() {
        let why = if bare {
            Some("a bare-metal host has no hypervisor, so no halt polling".to_string())
        } else if vm.guest_cpu_burn {
            Some(format!("with {} = true the vCPUs never halt", key("guest_cpu_burn")))
        } else if vm.guest_idle == super::GuestIdle::Poll {
            Some(format!("with {} = \"poll\" the guest's idle loop spins and never halts", key("guest_idle")))
        } else {
            None
        };
        if let Some(why) = why {
            return Err(format!("key `{}`: {why}; remove [vm.halt_poll]", key("halt_poll")));
        }
    }
    if vm.guest_halt_poll.is_some() {
        let why = if bare {
            Some("cpuidle-haltpoll loads only in a KVM guest (kvm_para_available), and a bare-metal host has none".to_string())
        } else if vm.guest_cpu_burn {
            Some(format!("with {} = true the vCPUs never idle", key("guest_cpu_burn")))
        } else if vm.guest_idle == super::GuestIdle::Poll {
            Some(format!("with {} = \"poll\" the guest's idle loop spins and never halts", key("guest_idle")))
        } else if vm.halt_poll.is_some() {
            Some(format!("the guest's driver turns KVM's halt polling off (MSR_KVM_POLL_CONTROL = 0), so {} would never poll; keep one of the two", key("halt_poll")))
        } else {
            None
        };
        if let Some(why) = why {
            return Err(format!("key `{}`: {why}; remove [vm.guest_halt_poll]", key("guest_halt_poll")));
        }
    }
    if vm.guest_cpu_burn && vm.guest_idle == super::GuestIdle::Poll {
        return Err(format!(
            "key `{}`: with {} = true the burn runs whenever the guest would idle, so its idle loop never runs; remove one of the two keys",
            key("guest_idle"),
            key("guest_cpu_burn")
        ));
    }
    if let Some(lb) = vm.lookbusy {
        if !(lb.util_pct.is_finite() && lb.util_pct > 0.0 && lb.util_pct <= 100.0) {
            return Err(format!("key `{}`: {} is not allowed; expected a percentage in (0, 100]", key("lookbusy.util_pct"), crate::error::num(lb.util_pct)));
        }
        if !(lb.period_ms.is_finite() && (1.0..=10_000.0).contains(&lb.period_ms)) {
            return Err(format!("key `{}`: {} is not allowed; expected ms in [1, 10000] (lookbusy's own is 100)", key("lookbusy.period_ms"), crate::error::num(lb.period_ms)));
        }
        if vm.guest_cpu_burn {
            return Err(format!(
                "key `{}`: with {} = true the burn fills every moment the spinners sleep, and lookbusy (which steers by the whole guest's utilization) would see 100 %; remove one of the two",
                key("lookbusy"),
                key("guest_cpu_burn")
            ));
        }
    }
    Ok(())
}

/// A block workload's VM (fio, filebench): its device is a virtio-blk disk over a host RAM
/// disk, served by the host's back end (QEMU's event loop under vhost handling, ELVIS's I/O
/// cores, an SPDK-like poll-mode target); its `[vm.net]` keys, a NIC's, do not apply.
fn check_disk(vm: &Vm, key: &dyn Fn(&str) -> String, profile: &Profile, virt: Virtualization, io: Handling) -> Result<(), String> {
    let kind = vm.workload.as_ref().map_or_else(String::new, Workload::kind_name);
    if profile.blk.is_none() {
        return Err(format!(
            "key `{}`: profile {} has no [blk] section (the guest's block-layer costs and the virtio-blk disk's); use a built-in profile or give it one",
            key("workload.kind"),
            profile.name
        ));
    }
    let nvme = vm.disk.kind == DiskKind::Nvme;
    if nvme && profile.nvme.is_none() {
        return Err(format!(
            "key `{}`: profile {} has no [nvme] section (the NVMe-like device's service times); use a built-in profile or give it one",
            key("disk.kind"),
            profile.name
        ));
    }
    if virt != Virtualization::Kvm {
        return Err(format!("key `{}`: \"{kind}\" runs on a KVM guest's disk; set [host] virtualization = \"kvm\"", key("workload.kind")));
    }
    if io == Handling::Es2 && !nvme {
        return Err(format!(
            "key `{}`: ES2's joint threads serve virtio-net (ES2 §4); a virtio-blk disk is served under host.io.handling = \"vhost\" (QEMU), \"elvis\" (ELVIS §4.5) or \"pmd\" (SPDK-like)",
            key("workload.kind")
        ));
    }
    if nvme && vm.net.vhost_pin.is_some() {
        return Err(format!(
            "key `{}`: an assigned NVMe disk has no back-end thread to pin (its controller serves its queues); remove the key",
            key("net.vhost_pin")
        ));
    }
    let d = super::Net::default();
    let n = &vm.net;
    let nic_keys = [
        ("net.kind", n.kind != d.kind),
        ("net.itr_us", n.itr_us.is_some()),
        ("net.queue_size", n.queue_size != d.queue_size),
        ("net.busyloop_timeout_us", n.busyloop_timeout_us != d.busyloop_timeout_us),
        ("net.moderation", n.moderation != d.moderation),
        ("net.offload", n.offload.is_some()),
        ("net.mtvd", n.mtvd),
        ("net.vfs", n.vfs.is_some()),
        ("net.queues", n.queues.is_some()),
    ];
    if let Some((k, _)) = nic_keys.iter().find(|(_, set)| *set) {
        return Err(format!(
            "key `{}`: a \"{kind}\" VM's device is its {} (a request queue per vCPU its jobs use, {}), which has no such setting; remove the key",
            key(k),
            if nvme { "NVMe disk" } else { "virtio-blk disk" },
            if nvme { "the profile's nvme.queue_depth commands each" } else { "the profile's blk.queue_size descriptors each" }
        ));
    }
    Ok(())
}

/// The device and delivery keys of VM `vm` against the profile and the host mode.
pub(super) fn check_device(vm: &Vm, key: &dyn Fn(&str) -> String, profile: &Profile, virt: Virtualization, io: Handling) -> Result<(), String> {
    let block = vm.workload.as_ref().is_some_and(Workload::is_block);
    if block {
        check_disk(vm, key, profile, virt, io)?;
    } else if vm.disk != Default::default() {
        return Err(format!(
            "key `{}`: a disk is a block workload's device (workload kind \"fio\" or \"filebench\"); remove [vm.disk] or set such a workload",
            key("disk.kind")
        ));
    }
    // An NVMe-like device assigned to the VM interrupts as a VF does.
    let nvme = block && vm.disk.kind == DiskKind::Nvme;
    let vf = vm.net.kind == NetKind::SriovVf;
    if io != Handling::Vhost && !vf && (vm.net.vhost_pin.is_some() || vm.net.busyloop_timeout_us > 0) {
        let k = if vm.net.vhost_pin.is_some() { "net.vhost_pin" } else { "net.busyloop_timeout_us" };
        return Err(format!("key `{}`: with host.io.handling = \"{}\" no per-device vhost thread serves the device; remove the key (place the I/O threads with host.io.cores)", key(k), io.key()));
    }
    if vm.net.kind.in_vf() && matches!(vm.workload, Some(Workload::RequestStream { .. })) {
        return Err(format!(
            "key `{}`: request_stream is the KVM testbed's guest writing a virtio queue served by a back-end thread; set {} = \"virtio\" (the default)",
            key("workload.kind"),
            key("net.kind")
        ));
    }
    // ELVIS's I/O core interrupts the guest as an assigned device would (ELVIS §2.2, ELI).
    let exitless_backend = io == Handling::Elvis && !vf;
    if vm.interrupt_delivery == InterruptDelivery::Native {
        return Err(format!(
            "key `{}`: \"native\" is not a VM setting; set [host] virtualization = \"bare_metal\" for a machine without hypervisor",
            key("interrupt_delivery")
        ));
    }
    if vm.interrupt_delivery.needs_assigned_device() && !vm.net.kind.in_vf() && !exitless_backend && !nvme {
        return Err(format!(
            "key `{}`: {} delivers only an assigned device's interrupts directly, and {} is a virtio device; set {} = \"sriov_vf\" (or host.io.handling = \"elvis\", whose I/O cores interrupt the guest directly; or, for a block workload, disk.kind = \"nvme\")",
            key("interrupt_delivery"),
            vm.interrupt_delivery.key(),
            key("net.kind"),
            key("net.kind")
        ));
    }
    if virt == Virtualization::BareMetal {
        if !vf && vm.workload.as_ref().is_some_and(Workload::uses_network) {
            return Err(format!(
                "key `{}`: a bare-metal host has no virtio device; set it to \"sriov_vf\" (the NIC used directly)",
                key("net.kind")
            ));
        }
        if vm.interrupt_delivery != InterruptDelivery::Emulated {
            return Err(format!(
                "key `{}`: a bare-metal host has no hypervisor to deliver interrupts; remove the key",
                key("interrupt_delivery")
            ));
        }
    }
    // [vm.apic]: the policy says which features this mode and CPU can have.
    let mode = if virt == Virtualization::BareMetal { InterruptDelivery::Native } else { vm.interrupt_delivery };
    let cpu = profile.apic_caps();
    // Only the IPI round trip with several targets sends multi-destination IPIs.
    let multicast = matches!(vm.workload, Some(Workload::IpiPingpong { targets: Some(n), .. }) if n > 1);
    if virt == Virtualization::Xen && vm.apic != Default::default() {
        return Err(format!(
            "key `{}`: [vm.apic]'s features are KVM's (its hypercalls, its APICv and AVIC support) and Xen 4.2's guests send IPIs over event channels; remove the key",
            key(&format!("apic.{}", vm.apic.first()))
        ));
    }
    vm.apic.check(mode, cpu, multicast).map_err(|r| {
        // A mode the scenario did not write is the profile's stock; say so, or the refusal reads
        // as a contradiction of the file.
        let stock = match vm.interrupt_delivery_written {
            None if virt == Virtualization::Kvm => format!(" (interrupt_delivery is absent, so this VM has profile {}'s stock \"{}\")", profile.name, mode.key()),
            _ => String::new(),
        };
        format!("key `{}`: {}{stock}", key(&format!("apic.{}", r.feature)), r.reason)
    })?;
    if vm.net.busyloop_timeout_us > 1_000_000 {
        return Err(format!("key `{}`: {} is not allowed; expected 0..=1000000 µs", key("net.busyloop_timeout_us"), vm.net.busyloop_timeout_us));
    }
    if vm.net.mtvd && !vf {
        return Err(format!("key `{}`: MTVD spreads an SR-IOV VF driver's receive work over the vCPUs; set {} = \"sriov_vf\" or remove the key", key("net.mtvd"), key("net.kind")));
    }
    if let Some(n) = vm.net.vfs {
        if !vf {
            return Err(format!("key `{}`: only SR-IOV VFs come several to a VM; set {} = \"sriov_vf\" or remove the key", key("net.vfs"), key("net.kind")));
        }
        let max = profile.sriov.as_ref().map_or(0.0, |s| s.max_vfs.value);
        if n == 0 || f64::from(n) > max {
            return Err(format!(
                "key `{}`: {n} is not allowed; expected 1..={max} (the VFs the {} of profile {} offers per port)",
                key("net.vfs"),
                profile.nic.model,
                profile.name
            ));
        }
        if n > 1 && vm.net.mtvd {
            return Err(format!("key `{}`: MTVD spreads one VF's receive work; with several VFs each VF's vector already has its own vCPU; remove one of the keys", key("net.vfs")));
        }
        let receives = matches!(vm.workload, Some(Workload::TcpReceive { .. } | Workload::UdpReceive { .. }));
        if n > 1 && !receives {
            let kind = vm.workload.as_ref().map_or_else(|| "none".to_string(), Workload::kind_name);
            return Err(format!(
                "key `{}`: {n} VFs are read by a receive workload (tcp_receive, udp_receive: one receiver per VF); workload kind \"{kind}\" would use one of them; set vfs = 1 or a receive workload",
                key("net.vfs")
            ));
        }
    }
    if let Some(n) = vm.net.queues {
        if vm.net.kind != NetKind::Virtio {
            return Err(format!("key `{}`: queue pairs are virtio-net's (an SR-IOV VM has several VFs with `{}`); set {} = \"virtio\" or remove the key", key("net.queues"), key("net.vfs"), key("net.kind")));
        }
        if n == 0 || n > vm.vcpus {
            return Err(format!(
                "key `{}`: {n} is not allowed; expected 1..={} (the guest's driver uses at most one queue pair per online vCPU)",
                key("net.queues"),
                vm.vcpus
            ));
        }
        if n > 1 && io != Handling::Vhost {
            return Err(format!(
                "key `{}`: {n} queue pairs are modelled under vhost-net (a worker per queue pair); host.io.handling = \"{}\" serves one queue per VM; set queues = 1 or handling = \"vhost\"",
                key("net.queues"),
                io.key()
            ));
        }
        let receives = matches!(vm.workload, Some(Workload::TcpReceive { .. } | Workload::UdpReceive { .. }));
        if n > 1 && !receives {
            let kind = vm.workload.as_ref().map_or_else(|| "none".to_string(), Workload::kind_name);
            return Err(format!(
                "key `{}`: {n} queue pairs are read by a receive workload (tcp_receive, udp_receive: one receiver per queue pair); workload kind \"{kind}\" would use one of them; set queues = 1 or a receive workload",
                key("net.queues")
            ));
        }
    }
    if vm.net.mtvd && vm.vcpus < 2 {
        return Err(format!("key `{}`: a VM with one vCPU has no other vCPU to hand receive work to; give it vcpus >= 2 or remove the key", key("net.mtvd")));
    }
    if vm.net.kind == NetKind::Vdpa {
        if profile.sriov.is_none() {
            return Err(format!(
                "key `{}`: \"vdpa\" puts the virtqueues in a VF of the host's NIC, and the {} of profile {} has no SR-IOV (the profile has no [sriov] section); use \"virtio\" or a profile with SR-IOV (did, sriov)",
                key("net.kind"),
                profile.nic.model,
                profile.name
            ));
        }
        if vm.net.vhost_pin.is_some() || vm.net.busyloop_timeout_us > 0 {
            let k = if vm.net.vhost_pin.is_some() { "net.vhost_pin" } else { "net.busyloop_timeout_us" };
            return Err(format!("key `{}`: a vDPA device has no vhost thread (its queues are the NIC's); remove the key", key(k)));
        }
    }
    if !vf {
        if vm.net.itr_us.is_some() {
            return Err(format!("key `{}`: only an SR-IOV VF has an interrupt throttle; set {} = \"sriov_vf\" or remove the key", key("net.itr_us"), key("net.kind")));
        }
        return Ok(());
    }
    let Some(sr) = &profile.sriov else {
        return Err(format!(
            "key `{}`: the {} of profile {} has no SR-IOV (the profile has no [sriov] section); use \"virtio\" or a profile with SR-IOV (did)",
            key("net.kind"),
            profile.nic.model,
            profile.name
        ));
    };
    if let Some(VfItr::Fixed(us)) = vm.net.itr_us {
        let max_us = sr.vf_itr_max_ns.value / 1e3;
        if !(us.is_finite() && us > 0.0 && us <= max_us) {
            return Err(format!("key `{}`: {us} is not allowed; expected 0 < interval <= {max_us} µs (the EITR register's maximum)", key("net.itr_us")));
        }
    }
    // A fixed rate the EITR cannot hold: its longest interval is sriov.vf_itr_max_ns, its
    // shortest sriov.vf_itr_min_ns. (The adaptive schemes' rates are written as the longest
    // interval when below it, as a driver clamps rx-usecs.)
    if let ModerationConfig::Fir(f) = &vm.net.moderation {
        let min_rate = (1e9 / sr.vf_itr_max_ns.value).ceil();
        let max_rate = (1e9 / sr.vf_itr_min_ns.value).floor();
        if !(min_rate..=max_rate).contains(&f64::from(f.itr)) {
            return Err(format!(
                "key `{}`: {} interrupts/s is not allowed on this VF; expected {min_rate}..={max_rate} (the EITR's longest and shortest intervals, {} and {} µs)",
                key("net.moderation.itr"),
                f.itr,
                sr.vf_itr_max_ns.value / 1e3,
                sr.vf_itr_min_ns.value / 1e3
            ));
        }
    }
    if vm.net.vhost_pin.is_some() || vm.net.busyloop_timeout_us > 0 {
        let k = if vm.net.vhost_pin.is_some() { "net.vhost_pin" } else { "net.busyloop_timeout_us" };
        return Err(format!("key `{}`: an SR-IOV VF has no vhost thread; remove the key", key(k)));
    }
    // ixgbevf's IXGBEVF_MIN_RXD and IXGBEVF_MAX_RXD: the VF's descriptor rings hold 64 to 4096.
    let q = vm.net.queue_size;
    if !(64..=4096).contains(&q) {
        return Err(format!("key `{}`: {q} descriptors is not allowed for an SR-IOV VF; expected 64..=4096 (the VF driver's ring sizes)", key("net.queue_size")));
    }
    Ok(())
}
