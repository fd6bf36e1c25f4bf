//! The host NIC's side of one device's flow (`docs/model.md` "Link and client"): its receive
//! queue's interrupt throttle, the host's GRO, and the skbs on their way from the port to the
//! device — to the tap after the host's receive path (a backed device), or into an assigned
//! device's RX ring after the NIC's L2 sort and DMA. Each step returns when its next event is
//! due; the model root schedules it and calls the next layer (issue 46: the wire/NIC receive
//! path owned by the hardware layer, not by the root's glue).

use crate::engine::Time;
use crate::model::hw::gro::{self, HostGro, PortSkb};
use crate::model::hw::nic_itr::RxItr;
use crate::model::hw::rxq::RxPkt;
use crate::model::hw::wire::PortToTap;
use std::collections::VecDeque;

/// The host NIC's interrupt work for the backed devices (profile `host.nic_*_ns`, rounded).
#[derive(Debug, Clone, Copy)]
pub(crate) struct NicWork {
    /// Per interrupt of a queue.
    pub irq_ns: Time,
    /// Per frame received for a device.
    pub rx_frame_ns: Time,
    /// Of `rx_frame_ns`, the part paid once per skb handed up the stack: a frame GRO appends
    /// to a held skb costs `rx_frame_ns - rx_skb_ns`.
    pub rx_skb_ns: Time,
    /// Per skb sent for a device (its TX clean).
    pub tx_clean_ns: Time,
}

/// One device's flow through the host NIC.
#[derive(Debug)]
pub(crate) struct HostNicRx {
    /// The receive interrupt throttle of the device's flow (its RSS queue).
    pub itr: RxItr,
    /// The skbs on their way from the port to the device, in order: each one frame, or the
    /// frames of one poll that the host's GRO merged (`gro.rs`).
    pub skbs: VecDeque<PortSkb>,
    /// The host's GRO for the device's flow.
    pub gro: HostGro,
    /// `VIRTIO_NET_F_GUEST_TSO4`: packets reach the guest in mergeable buffers as large as
    /// they are.
    pub guest_tso4: bool,
    /// When the device's latest frame from the port reached its tap queue.
    tap_last: Time,
}

impl HostNicRx {
    /// A flow through a queue throttled by `itr`, with the host's GRO `gro`.
    pub fn new(itr: RxItr, gro: HostGro, guest_tso4: bool) -> Self {
        HostNicRx { itr, skbs: VecDeque::new(), gro, guest_tso4, tap_last: 0 }
    }

    /// The host NIC's TX ring completed a frame of the device's (`wire_bytes`, `segs`): an
    /// adaptive throttle counts it.
    pub fn sent(&mut self, wire_bytes: u32, segs: u16) {
        self.itr.on_tx(wire_bytes, segs);
    }

    /// Frame `pkt` (`wire_bytes` on the wire) for a backed device reached the port at
    /// `arrive`: its interrupt (throttled), the host's GRO and the receive path. Returns when
    /// it reaches the tap (the device's `HostRx`), or `None` when GRO appended it to the skb
    /// its poll holds (it reaches the tap with that skb).
    pub fn port_to_tap(&mut self, arrive: Time, pkt: RxPkt, wire_bytes: u32, path: &mut PortToTap) -> Option<Time> {
        let irqs = self.itr.irqs;
        let irq = self.itr.irq_for(arrive, wire_bytes);
        let opened = self.itr.irqs != irqs;
        if self.gro.joins(self.skbs.back(), irq, &pkt) {
            gro::merge(&mut self.skbs.back_mut().expect("joined").pkt, &pkt);
            return None;
        }
        self.skbs.push_back(PortSkb { opened, irq, pkt });
        Some(path.deliver(irq, &mut self.tap_last))
    }

    /// Frame `pkt` for an assigned device reached the port at `arrive`: no tap, no host path;
    /// it waits for the DMA in order. Returns when it is in the device's ring (its `HostRx`).
    pub fn port_to_ring(&mut self, arrive: Time, pkt: RxPkt, dma_ns: Time) -> Time {
        self.skbs.push_back(PortSkb { opened: false, irq: arrive, pkt });
        arrive + dma_ns
    }

    /// The next skb reaches the device: the packet as the guest's ring takes it (its buffers),
    /// and — a backed device's — the host NIC's softirq work it cost on the queue's pCPU (its
    /// interrupt's, if it opened one; frames GRO appended pay only their per-frame part).
    pub fn arrived(&mut self, backed: bool, w: &NicWork) -> (RxPkt, Time) {
        let skb = self.skbs.pop_front().expect("an skb on its way to the tap");
        let merged = Time::from(skb.pkt.segs - 1);
        let ns = if backed { w.rx_frame_ns + merged * (w.rx_frame_ns - w.rx_skb_ns) + if skb.opened { w.irq_ns } else { 0 } } else { 0 };
        let mut pkt = skb.pkt;
        // Only a TCP skb the host's GRO built can outgrow one buffer: the model's UDP datagram
        // (up to 64 KB) stands for its IP fragments, each a frame of one buffer.
        pkt.bufs = if self.gro.enabled { gro::buffers(pkt.bytes, self.guest_tso4) } else { 1 };
        (pkt, ns)
    }

    /// Frames on their way to the device (a GRO skb counts its own).
    pub fn in_flight(&self) -> u64 {
        self.skbs.iter().map(|s| u64::from(s.pkt.segs)).sum()
    }
}
