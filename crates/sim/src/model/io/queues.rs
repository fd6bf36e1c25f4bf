//! The queue side of request handling: what a back end sees of a device (its TX and RX rings
//! and the packets waiting on its tap socket), the items it takes from them with their costs,
//! and the one "re-enable notifications, check again" sequence every handler ends with.
//!
//! A back end never touches the rest of the model: it reaches a device's queues through
//! [`DevRings`] (the model implements it for its devices) and hands each item it finishes back
//! to the model, which applies the device's side of it (used ring, wire, interrupt).

use crate::model::hw::rxq::{RxPkt, RxRing};
use crate::model::hw::virtq::{Buf, Virtq};
use crate::engine::{round_ns, Time};
use crate::profile::Profile;
use std::collections::VecDeque;

/// The item a back-end thread is working on.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Work {
    /// A TX buffer the guest made available.
    Tx(Buf),
    /// An RX packet from the tap socket, into a posted guest buffer.
    Rx(RxPkt),
}

impl Work {
    /// Its payload bytes.
    pub fn bytes(&self) -> u32 {
        match self {
            Work::Tx(b) => b.bytes,
            Work::Rx(p) => p.bytes,
        }
    }
}

/// What reached a device's back end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Notice {
    /// The guest kicked the TX queue (new buffers).
    TxKick,
    /// The guest kicked the RX queue (refilled buffers).
    RxKick,
    /// A packet reached the tap socket.
    RxPacket,
}

/// A back end's view of the devices' queues.
pub(crate) trait DevRings {
    /// Device `dev`'s TX virtqueue.
    fn tx(&mut self, dev: u32) -> &mut Virtq;
    /// Device `dev`'s RX virtqueue.
    fn rx(&mut self, dev: u32) -> &mut RxRing;
    /// The packets on device `dev`'s tap socket, oldest first.
    fn sock(&mut self, dev: u32) -> &mut VecDeque<RxPkt>;
}

/// A ring whose device-side notifications (the guest's kicks) a handler turns on and off.
pub(crate) trait Notified {
    /// Re-enable notifications; returns whether work arrived meanwhile (rust-vmm's
    /// `enable_notification()`, Linux `vhost_enable_notify`'s return): work that raced the
    /// re-enable sends no notification, so the handler must see it now.
    fn enable_notification(&mut self) -> bool;
    /// Disable notifications (`vhost_disable_notify`).
    fn disable_notification(&mut self);
}

impl Notified for Virtq {
    fn enable_notification(&mut self) -> bool {
        self.enable_kicks();
        self.pending() > 0
    }
    fn disable_notification(&mut self) {
        self.kick.device_disable();
    }
}

impl Notified for RxRing {
    /// An RX handler waits for guest buffers: the work is room for the next packet.
    fn enable_notification(&mut self) -> bool {
        self.enable_kicks();
        self.has_room()
    }
    fn disable_notification(&mut self) {
        self.kick.device_disable();
    }
}

/// A ring lent out by a [`Queues`] view (the model's `&mut Virtq`, `&mut RxRing`).
impl<T: Notified + ?Sized> Notified for &mut T {
    fn enable_notification(&mut self) -> bool {
        (**self).enable_notification()
    }
    fn disable_notification(&mut self) {
        (**self).disable_notification()
    }
}

/// What an adapter does to its devices' queues: take the next item (with its cost), look at the
/// tap socket, turn a ring's notifications off and on. The I/O thread's view (`seam::View`) does it on
/// the model's rings ([`DevRings`], priced by [`Costs`]); a driver outside the model on rings of its
/// own (`es2_driver.rs`: the KVM crate's two-worlds test runs the ES2 adapter over a script).
pub(crate) trait Queues {
    /// Device `dev`'s next TX buffer and its cost, if its ring has one.
    fn take_tx(&mut self, dev: u32) -> Option<(Work, Time)>;
    /// The next packet on `dev`'s tap socket in a posted guest buffer, and its cost, if there
    /// are both.
    fn take_rx(&mut self, dev: u32) -> Option<(Work, Time)>;
    /// No packet waits on `dev`'s tap socket.
    fn sock_empty(&mut self, dev: u32) -> bool;
    /// `dev`'s TX ring, whose kicks a handler turns off and on.
    fn tx_ring(&mut self, dev: u32) -> impl Notified + '_;
    /// `dev`'s RX ring (the guest's refill kicks).
    fn rx_ring(&mut self, dev: u32) -> impl Notified + '_;
    /// vhost's packet weight (an ES2 optimistic poll's bound).
    fn weight_packets(&self) -> u32;
}


/// The end of every handler's drain: re-enable notifications, let the handler's machine decide
/// on the ring's answer (`decide(work arrived)` → keep draining?), and if it keeps draining,
/// disable them again. Returns whether it keeps draining. The one place this sequence lives.
pub(crate) fn recheck(ring: &mut impl Notified, decide: impl FnOnce(bool) -> bool) -> bool {
    let has_work = ring.enable_notification();
    let drain = decide(has_work);
    if drain {
        ring.disable_notification();
    }
    drain
}

/// What a back end's steps cost (profile `[vhost]`): a taken buffer or packet costs its
/// per-packet plus per-byte cost — for a kernel back end (vhost-net, ES2's joint threads,
/// ELVIS's I/O cores) a TX buffer also the host's transmit path below it, which runs in the
/// back end's own context (`host.tap_tx_ns`, `host.dev_xmit_ns`: the tap or macvtap, the
/// qdisc, the NIC driver's xmit); a look that finds nothing, `poll_ns` (paid only by threads
/// that poll); moving to another VM's queue, `queue_switch_ns`; a wake-up, its CPU.
#[derive(Debug, Clone)]
pub(crate) struct Costs {
    tx_packet_ns: f64,
    tx_byte_ns: f64,
    rx_packet_ns: f64,
    rx_byte_ns: f64,
    pub poll_ns: Time,
    pub queue_switch_ns: Time,
    pub wakeup_ns: Time,
    pub timed_sleep_ns: Time,
    /// vhost's packet weight (an ES2 optimistic poll's bound too).
    pub weight_packets: u32,
    /// Per device: per byte the host's tap path checksums before delivery, for a guest
    /// without `VIRTIO_NET_F_GUEST_CSUM` (0 with it).
    rx_csum_byte_ns: Vec<f64>,
    /// Per device: what its back end pays per packet beyond vhost's, both ways (a Xen
    /// device's: netback's grant copy, QEMU's e1000 emulation; 0 otherwise).
    packet_extra_ns: Vec<f64>,
    /// What an item of a VM whose memory is on another node costs more (profile `[numa]`);
    /// None: one memory distance.
    remote: Option<Remote>,
    /// Per device that is a disk's request queue: what serving one request costs (its back
    /// end's work and the RAM disk's, profile `[blk]`) and its copy per byte, in place of a
    /// frame's TX costs (no host network path). Empty: no disks.
    disk: Vec<Option<(f64, f64)>>,
}

/// A back end's remote-memory costs (profile `[numa]`, issue 48 item 5): an item of a device
/// whose VM's memory is on another node than the back end's pCPU makes its ring accesses
/// (indices, entries, descriptors, the used element) and copies the packet's bytes across the
/// socket interconnect. The host side of each copy (the skb) is on the back end's own node.
#[derive(Debug, Clone)]
struct Remote {
    numa: crate::profile::Numa,
    /// Per device, its VM's memory node.
    dev_node: Vec<u32>,
}

impl Costs {
    /// The profile's costs for devices whose negotiated offloads are `offloads`; `kernel_path`:
    /// the back end hands TX buffers to the host's network stack (not a PMD, whose own driver
    /// writes the NIC: its per-packet cost is `vhost.tx_packet_ns` alone).
    pub fn new(p: &Profile, offloads: impl Iterator<Item = crate::config::Offload>, kernel_path: bool) -> Self {
        let v = &p.vhost;
        let host_path = if kernel_path { p.host.tap_tx_ns.value + p.host.dev_xmit_ns.value } else { 0.0 };
        let csum = p.guest.csum_byte_ns.value;
        Costs {
            rx_csum_byte_ns: offloads.map(|o| if o.guest_csum { 0.0 } else { csum }).collect(),
            packet_extra_ns: Vec::new(),
            remote: None,
            disk: Vec::new(),
            tx_packet_ns: v.tx_packet_ns.value + host_path,
            tx_byte_ns: v.tx_byte_ns.value,
            rx_packet_ns: v.rx_packet_ns.value,
            rx_byte_ns: v.rx_byte_ns.value,
            poll_ns: round_ns(v.poll_ns.value),
            queue_switch_ns: round_ns(v.queue_switch_ns.value),
            wakeup_ns: round_ns(v.wakeup_ns.value),
            timed_sleep_ns: round_ns(v.timed_sleep_ns.value),
            weight_packets: v.weight_packets.value as u32,
        }
    }

    /// Per device, what its back end pays per packet beyond vhost's (Xen's dom0 back ends).
    pub fn with_packet_extra(mut self, extra: Vec<f64>) -> Self {
        self.packet_extra_ns = extra;
        self
    }

    /// The profile's remote-memory costs (if it has `[numa]`), each device's VM's memory on
    /// `dev_node`.
    pub fn with_numa(mut self, p: &Profile, dev_node: Vec<u32>) -> Self {
        self.remote = p.numa.clone().map(|numa| Remote { numa, dev_node });
        self
    }

    /// Per device, the back end serving it if it is a disk's request queue (None: a NIC's):
    /// its request costs from the profile's `[blk]` — QEMU's event loop under vhost handling
    /// (the stock back end), an in-kernel I/O core under ELVIS, an SPDK-like target under PMD —
    /// plus the RAM disk's own work, and the RAM disk's copy per byte.
    pub fn with_disks(mut self, p: &Profile, disks: Vec<Option<crate::config::Handling>>) -> Self {
        use crate::config::Handling;
        let Some(b) = &p.blk else { return self };
        self.disk = disks
            .into_iter()
            .map(|h| {
                let serve = match h? {
                    Handling::Vhost | Handling::Es2 => b.qemu_request_ns.value,
                    Handling::Elvis => b.kernel_request_ns.value,
                    Handling::Pmd => b.spdk_request_ns.value,
                };
                Some((serve + b.ramdisk_request_ns.value, b.ramdisk_byte_ns.value))
            })
            .collect();
        self
    }

    /// What an item of `bytes` of device `dev` costs beyond its local cost when the back end
    /// runs on a pCPU of socket `socket` (None: not on a pCPU, nothing to say): 0 unless the
    /// device's VM's memory is on another node.
    pub fn remote_ns(&self, dev: u32, bytes: u32, socket: Option<u32>) -> Time {
        match (&self.remote, socket) {
            (Some(r), Some(s)) if r.dev_node[dev as usize] != s => round_ns(r.numa.cross_ns(1, bytes)),
            _ => 0,
        }
    }

    fn extra(&self, dev: u32) -> f64 {
        self.packet_extra_ns.get(dev as usize).copied().unwrap_or(0.0)
    }

    /// Take device `dev`'s next TX buffer and its cost, if its ring has one.
    /// `socket`: the back end's pCPU's (the remote-memory cost's question).
    pub fn take_tx(&self, rings: &mut (impl DevRings + ?Sized), dev: u32, socket: Option<u32>) -> Option<(Work, Time)> {
        let b = rings.tx(dev).take()?;
        let (per, per_byte) = match self.disk.get(dev as usize) {
            Some(&Some(disk)) => disk,
            _ => (self.tx_packet_ns + self.extra(dev), self.tx_byte_ns),
        };
        let local = round_ns(per + per_byte * b.bytes as f64);
        Some((Work::Tx(b), local + self.remote_ns(dev, b.bytes, socket)))
    }

    /// Take the next packet on device `dev`'s tap socket into posted guest buffers (as many as
    /// it needs, `hw/gro.rs`), and its cost, if there are both.
    pub fn take_rx(&self, rings: &mut (impl DevRings + ?Sized), dev: u32, socket: Option<u32>) -> Option<(Work, Time)> {
        if !rings.rx(dev).has_room() {
            return None;
        }
        let pkt = rings.sock(dev).pop_front()?;
        let head = rings.sock(dev).front().map_or(1, |p| u32::from(p.bufs));
        let rx = rings.rx(dev);
        rx.take(&pkt);
        rx.head_bufs = head;
        let per_byte = self.rx_byte_ns + self.rx_csum_byte_ns[dev as usize];
        let local = round_ns(self.rx_packet_ns + self.extra(dev) + per_byte * pkt.bytes as f64);
        Some((Work::Rx(pkt), local + self.remote_ns(dev, pkt.bytes, socket)))
    }
}
