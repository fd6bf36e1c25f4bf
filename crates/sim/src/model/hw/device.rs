//! A VM's network device by kind (`[vm.net] kind`), each variant owning the state only that
//! kind has — in place of a flag per kind checked where the kinds differ (issue 46).
//!
//! Two families: a *backed* device (virtio-net, Xen PV, Xen e1000) has its rings served by a
//! host back-end thread (`io/`), which its frames reach through the host NIC's receive path
//! and a tap; an *assigned* one (an SR-IOV VF, a vDPA device) has its rings served by the NIC
//! itself, by DMA, with an MSI-X vector of its own (`vf.rs`). What the guest's driver does
//! differently per kind — how it notifies the device, how it cleans TX — reads the variant.

use crate::config::NetKind;
use crate::engine::Time;
use crate::model::hw::rxq::{RxPkt, RxRing};
use crate::model::hw::vf::Vf;
use std::collections::VecDeque;

/// A VM's network device.
#[derive(Debug)]
pub(crate) enum Device {
    /// virtio-net over a host back end (vhost-net, ES2's joint threads, ELVIS, a PMD): a kick
    /// is an I/O-instruction exit whose ioeventfd signals the back end.
    VirtioNet,
    /// A virtio-blk disk's request queue over a host RAM disk (issue 51, the block workloads):
    /// its requests go through the TX virtqueue to a back end as virtio-net's frames do, and
    /// complete in place — nothing reaches the link.
    VirtioBlk,
    /// An NVMe-like device's queue pair assigned to the VM (issue 51, `[vm.disk] kind =
    /// "nvme"`): the controller serves the submission queue itself; no back end, no link.
    Nvme(crate::model::hw::nvme::Nvme),
    /// Xen PV (netfront/netback): netfront notifies by an `EVTCHNOP_send` hypercall — a trap
    /// into Xen, no VM exit — and netback's thread is woken at once.
    XenPv,
    /// Xen FV's emulated e1000 (QEMU in dom0): a doorbell write is a synchronous ioreq whose
    /// round trip (`xen.ioreq_ns`) the vCPU waits on top of its exit.
    XenE1000,
    /// An SR-IOV VF assigned to the VM (ixgbevf in the guest): descriptors posted by MMIO to
    /// the VF's BAR, no exit; its EITR throttles its vector.
    SriovVf(Vf),
    /// A vDPA device: the guest's virtio-net driver on the NIC's queue pair.
    Vdpa(Vdpa),
}

/// A vDPA device's state: its queue pair's interrupt side (a VF's without an EITR) and its RX
/// doorbell's bookkeeping.
#[derive(Debug)]
pub(crate) struct Vdpa {
    /// Its queue pair's MSI-X vector (no throttle: a virtio device has no EITR).
    pub queues: Vf,
    /// NAPI's received-frame count at the last RX doorbell: a completion that received
    /// something refilled the ring and rings the RX doorbell once.
    pub rx_rung_at: u64,
}

impl Vdpa {
    /// A vDPA device's queue pair carrying TCP (else UDP) frames: its MSI-X fires for each
    /// write-back while the driver's callbacks are on (virtio-net's NAPI turns them off while it
    /// polls, `virtqueue_disable_cb`, as the VF's vector masks itself), with no throttle.
    pub fn new(tcp: bool) -> Self {
        Vdpa { queues: Vf::new(Some(crate::config::VfItr::Fixed(0.0)), &eventpath_policy::moderation::ModerationConfig::None, 0.0, 0.0, tcp), rx_rung_at: 0 }
    }
}

impl Device {
    /// The device of a backed kind (`kind` is not one the NIC serves: those carry their state,
    /// built by the caller).
    pub fn backed(kind: NetKind) -> Self {
        match kind {
            NetKind::Virtio => Device::VirtioNet,
            NetKind::XenPv => Device::XenPv,
            NetKind::XenE1000 => Device::XenE1000,
            NetKind::SriovVf | NetKind::Vdpa => unreachable!("an assigned device is built with its VF"),
        }
    }

    /// The NIC's queue pair the device is (an SR-IOV VF) or holds its virtqueues in (vDPA):
    /// none for a backed device.
    pub fn assigned(&mut self) -> Option<&mut Vf> {
        match self {
            Device::SriovVf(vf) | Device::Vdpa(Vdpa { queues: vf, .. }) => Some(vf),
            Device::VirtioNet | Device::VirtioBlk | Device::Nvme(_) | Device::XenPv | Device::XenE1000 => None,
        }
    }

    /// [`Self::assigned`], to read.
    pub fn assigned_ref(&self) -> Option<&Vf> {
        match self {
            Device::SriovVf(vf) | Device::Vdpa(Vdpa { queues: vf, .. }) => Some(vf),
            Device::VirtioNet | Device::VirtioBlk | Device::Nvme(_) | Device::XenPv | Device::XenE1000 => None,
        }
    }

    /// A block workload's disk (virtio-blk or NVMe): its requests complete in place and are
    /// no frames (the workload balances them).
    pub fn is_disk(&self) -> bool {
        matches!(self, Device::VirtioBlk | Device::Nvme(_))
    }

    /// The NIC serves its rings (an SR-IOV VF or a vDPA device): no back end, no tap.
    pub fn is_assigned(&self) -> bool {
        self.assigned_ref().is_some()
    }
}

/// What became of a packet that reached the device from the port.
pub(crate) enum Received {
    /// No room (the tap queue full; no RX descriptor posted): dropped.
    Dropped(RxPkt),
    /// On the tap socket, for the back end's RX handler.
    OnTap,
    /// Written into the assigned device's RX ring: its write-back set the queue's cause.
    InRing,
}

impl Device {
    /// Packet `pkt` reached the device at `now`: a backed device's goes on its tap socket
    /// `tap` (at most `tap_limit` packets), an assigned one's NIC writes it into the RX ring
    /// `rxq` (if a descriptor is posted), its controller counting the write-back.
    pub fn receive(&mut self, now: Time, pkt: RxPkt, rxq: &mut RxRing, tap: &mut VecDeque<RxPkt>, tap_limit: usize) -> Received {
        let room = if self.is_assigned() { rxq.posted > 0 } else { tap.len() < tap_limit };
        if !room {
            return Received::Dropped(pkt);
        }
        if let Some(vf) = self.assigned() {
            vf.written_back(now, pkt.segs.into(), pkt.bytes.into());
            rxq.take(&pkt);
            rxq.put_used(pkt);
            return Received::InRing;
        }
        if tap.is_empty() {
            rxq.head_bufs = u32::from(pkt.bufs);
        }
        tap.push_back(pkt);
        Received::OnTap
    }
}
