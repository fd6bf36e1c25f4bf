//! Xen's keys against the host and each VM (`[host] virtualization = "xen"`, `dom0_cpus`,
//! `[vm.net] kind = "xen_pv" | "xen_e1000"`, `interrupt_delivery = "evtchn"`,
//! `interrupt_routing = "v_balance"`): each one a layout cannot use is refused with one line
//! naming the key (`docs/model.md`, "Xen's I/O paths").

use super::{Handling, HostScheduler, InterruptDelivery, NetKind, Scenario, Virtualization};
use crate::profile::Profile;
use eventpath_policy::routing::RouterConfig;

/// The pCPUs dom0 runs on: `[host] dom0_cpus`, else the profile's `xen.dom0_pcpus` last ones.
pub fn dom0_cpus(s: &Scenario, profile: &Profile, pcpus: u32) -> Vec<u32> {
    if let Some(c) = &s.host.dom0_cpus {
        return c.clone();
    }
    let n = profile.xen.as_ref().map_or(1, |x| x.dom0_pcpus.value as u32).min(pcpus);
    (pcpus - n..pcpus).collect()
}

/// The host's and every VM's Xen keys; `pcpus` is the host's pCPU count.
pub(super) fn check(s: &Scenario, profile: &Profile, pcpus: u32) -> Result<(), String> {
    let xen = s.host.virtualization == Virtualization::Xen;
    for (i, vm) in s.vm.iter().enumerate() {
        let key = |k: &str| format!("vm[{i}].{k}");
        let kind = vm.net.kind;
        if kind.is_xen() && !xen {
            return Err(format!(
                "key `{}`: \"{}\" is a Xen device (served from dom0); set [host] virtualization = \"xen\" (with a Xen profile, hbalance) or use \"virtio\"",
                key("net.kind"),
                kind.key()
            ));
        }
        if xen && !kind.is_xen() {
            return Err(format!(
                "key `{}`: \"{}\" is not allowed under Xen; use \"xen_pv\" (netfront/netback over event channels) or \"xen_e1000\" (QEMU's emulated e1000)",
                key("net.kind"),
                kind.key()
            ));
        }
        let d = vm.interrupt_delivery; // the written value, else the device's default
        if d == InterruptDelivery::Evtchn && kind != NetKind::XenPv {
            return Err(format!(
                "key `{}`: \"evtchn\" (Xen's event channels) delivers a xen_pv device's interrupts; {} is \"{}\"; set it to \"xen_pv\" or remove the key",
                key("interrupt_delivery"),
                key("net.kind"),
                kind.key()
            ));
        }
        // `emulated` written too: absent, the key reads as `evtchn`; written, it would be read so
        // silently, which no other written value of any key is.
        if kind == NetKind::XenPv && d != InterruptDelivery::Evtchn {
            return Err(format!(
                "key `{}`: \"{}\" is not allowed on a xen_pv device: its interrupts are event channels (\"evtchn\", the default); remove the key",
                key("interrupt_delivery"),
                d.key()
            ));
        }
        if kind == NetKind::XenE1000 && d != InterruptDelivery::Emulated {
            return Err(format!(
                "key `{}`: \"{}\" is not allowed on a xen_e1000 device: QEMU's e1000 interrupts through Xen's emulated vIOAPIC and vLAPIC (\"emulated\", the default; the Nehalem-era hosts have no APICv); remove the key",
                key("interrupt_delivery"),
                d.key()
            ));
        }
        if vm.interrupt_routing == RouterConfig::VBalance && kind != NetKind::XenPv {
            return Err(format!(
                "key `{}`: \"v_balance\" rebinds a Xen PV event channel from the guest (EVTCHNOP_bind_vcpu); {} is \"{}\"; set it to \"xen_pv\" or choose another router",
                key("interrupt_routing"),
                key("net.kind"),
                kind.key()
            ));
        }
        if xen && (vm.net.vhost_pin.is_some() || vm.net.busyloop_timeout_us > 0) {
            let k = if vm.net.vhost_pin.is_some() { "net.vhost_pin" } else { "net.busyloop_timeout_us" };
            return Err(format!("key `{}`: under Xen the device's back end runs in dom0, on host.dom0_cpus; remove the key", key(k)));
        }
    }
    if !xen {
        if s.host.dom0_cpus.is_some() {
            return Err("key `host.dom0_cpus`: only Xen has a dom0; set [host] virtualization = \"xen\" or remove the key".into());
        }
        return Ok(());
    }
    let Some(x) = &profile.xen else {
        return Err(format!(
            "key `host.virtualization`: \"xen\" is not allowed on profile {}: a Xen path on a KVM profile (it has no [xen] section); use a Xen profile (hbalance)",
            profile.name
        ));
    };
    if s.host.scheduler != HostScheduler::XenCredit {
        return Err("key `host.scheduler`: Xen schedules its vCPUs with its credit scheduler; set scheduler = \"xen_credit\" with virtualization = \"xen\"".into());
    }
    if s.host.io.handling != Handling::Vhost {
        return Err(format!(
            "key `host.io.handling`: \"{}\" is not allowed under Xen: the back ends are dom0's (netback, QEMU); remove [host.io]",
            s.host.io.handling.key()
        ));
    }
    let dom0 = match &s.host.dom0_cpus {
        Some(c) => {
            if c.is_empty() {
                return Err("key `host.dom0_cpus`: [] is not allowed; dom0 needs at least one pCPU (or omit the key)".into());
            }
            if let Some(&p) = c.iter().find(|&&p| p >= pcpus) {
                return Err(format!("key `host.dom0_cpus`: pCPU {p} does not exist; the host has pCPUs 0..={}", pcpus - 1));
            }
            if c.len() as u32 >= pcpus {
                return Err(format!("key `host.dom0_cpus`: {} pCPUs are not allowed; the host has {pcpus} and its guests need one", c.len()));
            }
            c.clone()
        }
        None => {
            let n = x.dom0_pcpus.value as u32;
            if n >= pcpus {
                return Err(format!(
                    "key `host.pcpus`: {pcpus} is not allowed under Xen: dom0 takes the last {n} (profile {}'s xen.dom0_pcpus) and the guests need one; give more pCPUs or set host.dom0_cpus",
                    profile.name
                ));
            }
            dom0_cpus(s, profile, pcpus)
        }
    };
    for (i, vm) in s.vm.iter().enumerate() {
        if let Some(pins) = &vm.vcpu_pins {
            if let Some((j, p)) = pins.iter().enumerate().find(|(_, p)| dom0.contains(p)) {
                return Err(format!("key `vm[{i}].vcpu_pins[{j}]`: pCPU {p} is dom0's (host.dom0_cpus = {dom0:?}); pin the guest's vCPUs to other pCPUs"));
            }
        }
    }
    Ok(())
}
