//! The configuration the model reads (DESIGN §2: below the model, so that no layer imports
//! `scenario/`, which checks a scenario file against a profile and builds it): the workloads,
//! the back ends' settings, the device kinds and offloads, the delivery modes, the limits the
//! model and the checks share, and the deserialization helpers that hold them to their
//! documented form. `scenario` re-exports every type here, as its users have always named
//! them.

pub mod de;
pub(crate) mod io;
pub mod key;
pub mod limits;
pub mod workload;

pub use io::{Es2Switch, Handling, IoHandling};
pub use workload::{Consume, FioRw, HttpServer, Workload};

use serde::{Deserialize, Serialize};

/// lookbusy 1.4's CPU spinners in a guest (`[vm.lookbusy]`; hBalance §6.1's background load).
/// lookbusy forks one spinner per CPU; each calibrates a loop count worth `util_pct` % of a
/// 100 ms cycle, then loops: spin that count, `usleep` the rest of the cycle (fixed at
/// calibration), and adjust the count from the utilization `/proc/stat` shows (`cpu_spin`).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Lookbusy {
    /// The utilization asked of each CPU, % (lookbusy `-c`), in (0, 100].
    pub util_pct: f64,
    /// The spinner's cycle, ms (lookbusy 1.4 calibrates against 100 ms, `cpu_spin_calibrate`;
    /// not a lookbusy option), in [1, 10000].
    #[serde(default = "default_lookbusy_period_ms")]
    pub period_ms: f64,
}

/// lookbusy 1.4's cycle: `cpu_spin_calibrate` sizes the busy count for `util` % of
/// 100,000 µs and sleeps `100000 - busy` µs.
fn default_lookbusy_period_ms() -> f64 {
    100.0
}

/// Virtual interrupt delivery mode of a VM (`eventpath_policy::delivery`): `emulated`,
/// `apicv`, `posted`, `eli`, `did`. (`native` is the bare-metal host mode, not a VM setting.)
pub use eventpath_policy::delivery::DeliveryMode as InterruptDelivery;

/// The VM's network device kind (`[vm.net] kind`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NetKind {
    /// virtio-net served by a vhost thread.
    #[default]
    Virtio,
    /// An SR-IOV virtual function of the host's NIC, assigned to the VM (the profile's
    /// `[sriov]` section must exist): DMA into guest buffers, no host thread.
    SriovVf,
    /// Xen PV: netfront in the guest, netback's kernel thread in dom0, split rings with
    /// event-index notification over event channels (`virtualization = "xen"`).
    XenPv,
    /// Xen FV: QEMU's emulated Intel e1000 in dom0; register accesses are synchronous ioreqs,
    /// interrupts go through the vIOAPIC (`virtualization = "xen"`).
    XenE1000,
    /// vDPA: the guest's virtio-net driver on a hardware data path — the virtqueues live in
    /// a VF of the host's NIC (the profile's `[sriov]`), which DMAs into the guest's buffers;
    /// no back-end thread, the doorbell page mapped into the guest (no exit per kick), the
    /// device's MSI-X posted through vhost-vdpa's IRQ bypass (or injected by KVM).
    Vdpa,
}

impl NetKind {
    /// Its name in a scenario.
    pub fn key(self) -> &'static str {
        match self {
            NetKind::Virtio => "virtio",
            NetKind::SriovVf => "sriov_vf",
            NetKind::XenPv => "xen_pv",
            NetKind::XenE1000 => "xen_e1000",
            NetKind::Vdpa => "vdpa",
        }
    }

    /// A hardware data path in one of the NIC's VFs (an SR-IOV VF, or a vDPA device's queues):
    /// DMA into the guest's buffers, no host thread, one of the profile's `sriov.max_vfs`.
    pub fn in_vf(self) -> bool {
        matches!(self, NetKind::SriovVf | NetKind::Vdpa)
    }

    /// A Xen device (served by a back end in dom0).
    pub fn is_xen(self) -> bool {
        matches!(self, NetKind::XenPv | NetKind::XenE1000)
    }

    /// Served by a back-end thread through rings (virtio-net, or a Xen device whose back end
    /// reuses that machinery): not an SR-IOV VF.
    pub fn has_backend(self) -> bool {
        !self.in_vf()
    }
}

/// virtio-net offload features (virtio 1.x §5.1.3), each on by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Offload {
    /// `VIRTIO_NET_F_CSUM`: the device takes packets with partial checksums (the guest does not
    /// checksum what it sends).
    pub csum: bool,
    /// `VIRTIO_NET_F_GUEST_CSUM`: the guest takes packets with partial checksums (the host's
    /// tap path does not checksum what it delivers).
    pub guest_csum: bool,
    /// `VIRTIO_NET_F_HOST_TSO4`: the device takes TSO skbs (the guest TCP's size goal is
    /// `nic.gso_max_size_bytes`, not one MSS); requires `csum`.
    pub host_tso4: bool,
    /// `VIRTIO_NET_F_GUEST_TSO4`: the guest takes GSO skbs, in mergeable RX buffers, so what
    /// the host's GRO merged reaches it whole (`model/hw/gro.rs`); requires `guest_csum`.
    pub guest_tso4: bool,
    /// The host NIC's GRO for this device's frames (`ethtool -K <port> gro`): a poll's
    /// segments of one flow become one skb to the tap. Without `guest_tso4` the host cuts
    /// such an skb back into frames for the tap, so it has no effect there.
    pub host_gro: bool,
    /// The guest's GRO (`ethtool -K eth0 gro` in the guest; a netdev feature, not negotiated):
    /// its NAPI poll hands one flow's run of data packets up the stack as one skb.
    pub gro: bool,
}

impl Default for Offload {
    fn default() -> Self {
        Offload { csum: true, guest_csum: true, host_tso4: true, guest_tso4: true, host_gro: true, gro: true }
    }
}

impl Offload {
    /// The first combination the virtio specification forbids (§5.1.3.1), as (key, its
    /// prerequisite).
    pub fn forbidden(&self) -> Option<(&'static str, &'static str)> {
        if self.host_tso4 && !self.csum {
            return Some(("host_tso4", "csum"));
        }
        if self.guest_tso4 && !self.guest_csum {
            return Some(("guest_tso4", "guest_csum"));
        }
        None
    }
}

/// A VF's interrupt throttle setting (`[vm.net] itr_us`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum VfItr {
    /// A fixed interval (µs).
    Fixed(f64),
    /// The driver's dynamic throttle.
    Dynamic,
}
