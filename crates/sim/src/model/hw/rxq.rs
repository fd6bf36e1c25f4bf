//! The RX virtqueue of virtio-net as the model sees it: receive buffers the guest has posted,
//! used buffers (filled by vhost) waiting for the guest's NAPI poll, and the two notification
//! directions: the device wants refill kicks only after it ran out of buffers (vhost
//! `handle_rx` enables notifications when `headcount == 0`), and the driver wants an interrupt
//! only while its NAPI context is idle (`virtqueue_disable_cb` in the interrupt handler,
//! `virtqueue_enable_cb_prepare` at `napi_complete`). With `VIRTIO_RING_F_EVENT_IDX` the device
//! signals once per re-enable (used_event), which `interrupt_wanted` models.
//!
//! A packet larger than one buffer (a GRO skb with `VIRTIO_NET_F_GUEST_TSO4`, `hw/gro.rs`)
//! fills several mergeable buffers; each is a used-ring entry, so the used index, the driver's
//! poll count and the refill each move by the packet's buffers.
//!
//! Invariant: `posted + used_bufs + in_device == size` (buffers).

use crate::model::hw::notify::{IrqGate, KickGate};
use crate::engine::Time;
use eventpath_policy::notify::Suppression;
use std::collections::VecDeque;

/// TCP control flags a packet carries beyond data and ACK (connection set-up and close).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ctl {
    /// Data and/or ACK only.
    None,
    /// SYN (from the client) or SYN-ACK (from the guest).
    Syn,
    /// FIN.
    Fin,
}

/// A packet on the receive path (tap socket, RX ring, guest).
#[derive(Debug, Clone, Copy)]
pub struct RxPkt {
    /// Payload bytes (0 for a pure TCP ACK).
    pub bytes: u32,
    /// Cumulative ACK number it carries (TCP ACKs).
    pub ack: u64,
    /// When the client sent it.
    pub born: Time,
    /// Connection of a TCP request/response workload (`tcp_rr.rs`); 0 otherwise.
    pub conn: u32,
    /// Connection set-up / close flag.
    pub ctl: Ctl,
    /// Wire frames it carries (more than one after GRO merged a flow's segments).
    pub segs: u16,
    /// Receive buffers it takes in the guest's ring (`hw/gro.rs` [`buffers`]).
    ///
    /// [`buffers`]: crate::model::hw::gro::buffers
    pub bufs: u16,
}

impl RxPkt {
    /// One frame's packet of `bytes` payload, one buffer.
    pub fn new(bytes: u32, ack: u64, born: Time, conn: u32, ctl: Ctl) -> Self {
        RxPkt { bytes, ack, born, conn, ctl, segs: 1, bufs: 1 }
    }
}

/// One RX virtqueue.
#[derive(Debug)]
pub struct RxRing {
    size: u32,
    /// Empty buffers available to the device.
    pub posted: u32,
    /// Filled packets not yet polled by the guest (each `bufs` buffers).
    pub used: VecDeque<RxPkt>,
    /// Buffers the packets in `used` fill.
    used_bufs: u32,
    /// Frames the device holds between taking their buffers and returning them.
    device_segs: u64,
    /// Buffers the device needs for the next packet it will receive (its tap socket's head).
    pub head_bufs: u32,
    /// Buffers the driver has made available (free-running avail index).
    avail: u64,
    /// Buffers the device has taken.
    consumed: u64,
    /// Buffers the device has returned (free-running used index).
    used_idx: u64,
    /// Buffers the driver has polled off the used ring.
    polled: u64,
    /// Driver → device notifications (refill kicks).
    pub kick: KickGate,
    /// Device → driver notifications (interrupts).
    pub irq: IrqGate,
    /// Refill kicks (window).
    pub kicks: u64,
    /// Interrupts signalled (window).
    pub interrupts: u64,
    /// The back end that last filled it ran on another socket than the device's home vCPU
    /// (profile `[numa]`; set by the model root), as [`crate::model::hw::virtq::Virtq::far`].
    pub far: bool,
}

impl RxRing {
    /// A ring of `size` buffers, all posted, callbacks enabled, refill kicks off.
    pub fn new(size: u32, mode: Suppression) -> Self {
        RxRing {
            size,
            posted: size,
            used: VecDeque::with_capacity(size as usize),
            used_bufs: 0,
            device_segs: 0,
            head_bufs: 1,
            avail: size as u64,
            consumed: 0,
            used_idx: 0,
            polled: 0,
            kick: KickGate::new(mode, size as u64, false),
            irq: IrqGate::new(mode, 0, true),
            kicks: 0,
            interrupts: 0,
            far: false,
        }
    }

    /// Are enough buffers posted for the packet the device would receive next?
    pub fn has_room(&self) -> bool {
        self.posted >= self.head_bufs
    }

    /// Device: take the posted buffers for `pkt` (`pkt.bufs` of them).
    pub fn take(&mut self, pkt: &RxPkt) {
        let n = u32::from(pkt.bufs);
        debug_assert!(self.posted >= n);
        self.posted -= n;
        self.consumed += u64::from(n);
        self.device_segs += u64::from(pkt.segs);
    }

    /// Device: return the filled buffers; returns whether to interrupt the driver.
    pub fn put_used(&mut self, pkt: RxPkt) -> bool {
        self.device_segs -= u64::from(pkt.segs);
        self.used_bufs += u32::from(pkt.bufs);
        self.used_idx += u64::from(pkt.bufs);
        self.used.push_back(pkt);
        debug_assert!(self.posted + self.used_bufs <= self.size, "more buffers posted and used than the ring has");
        self.irq.device_publish(self.used_idx)
    }

    /// Driver (NAPI): poll one used packet and post fresh buffers in its place (`try_fill_recv`).
    pub fn poll_and_refill(&mut self) -> Option<RxPkt> {
        let pkt = self.used.pop_front()?;
        let n = u32::from(pkt.bufs);
        self.used_bufs -= n;
        self.polled += u64::from(n);
        self.posted += n;
        self.avail += u64::from(n);
        Some(pkt)
    }

    /// Frames in the ring: held by the device or filled and not yet polled.
    pub fn queued_segs(&self) -> u64 {
        self.device_segs + self.used.iter().map(|p| u64::from(p.segs)).sum::<u64>()
    }

    /// Driver (`napi_complete` → `virtqueue_enable_cb_prepare`): interrupt me at the next used
    /// buffer.
    pub fn enable_interrupts(&mut self) {
        self.irq.driver_enable(self.polled);
    }

    /// Driver: should it kick for the buffers it posted since it last asked?
    pub fn kick_prepare(&mut self) -> bool {
        self.kick.driver_kick_prepare(self.avail)
    }

    /// Device (`vhost_enable_notify`, short of buffers): kick me at the next buffer posted
    /// after those it has seen (`avail_event` = the avail index it read). Out of buffers that is
    /// the next one at all; a packet that needs more buffers than are posted (mergeable
    /// buffers) waits for one beyond them — an index behind them would never be crossed.
    pub fn enable_kicks(&mut self) {
        self.kick.device_enable(self.avail);
    }

    /// Start a new measurement window.
    pub fn reset_metrics(&mut self) {
        self.kicks = 0;
        self.interrupts = 0;
    }
}
