//! The RX virtqueue of virtio-net as the model sees it: receive buffers the guest has posted,
//! used buffers (filled by vhost) waiting for the guest's NAPI poll, and the two notification
//! directions: the device wants refill kicks only after it ran out of buffers (vhost
//! `handle_rx` enables notifications when `headcount == 0`), and the driver wants an interrupt
//! only while its NAPI context is idle (`virtqueue_disable_cb` in the interrupt handler,
//! `virtqueue_enable_cb_prepare` at `napi_complete`). With `VIRTIO_RING_F_EVENT_IDX` the device
//! signals once per re-enable (used_event), which `interrupt_wanted` models.
//!
//! Invariant: `posted + used.len() + in_device == size`.

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
}

/// One RX virtqueue.
#[derive(Debug)]
pub struct RxRing {
    size: u32,
    /// Empty buffers available to the device.
    pub posted: u32,
    /// Filled buffers not yet polled by the guest.
    pub used: VecDeque<RxPkt>,
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
}

impl RxRing {
    /// A ring of `size` buffers, all posted, callbacks enabled, refill kicks off.
    pub fn new(size: u32, mode: Suppression) -> Self {
        RxRing {
            size,
            posted: size,
            used: VecDeque::with_capacity(size as usize),
            avail: size as u64,
            consumed: 0,
            used_idx: 0,
            polled: 0,
            kick: KickGate::new(mode, size as u64, false),
            irq: IrqGate::new(mode, 0, true),
            kicks: 0,
            interrupts: 0,
        }
    }

    /// Ring size.
    pub fn size(&self) -> u32 {
        self.size
    }

    /// Device: take a posted buffer for a packet.
    pub fn take(&mut self) {
        debug_assert!(self.posted > 0);
        self.posted -= 1;
        self.consumed += 1;
    }

    /// Device: return the filled buffer; returns whether to interrupt the driver.
    pub fn put_used(&mut self, pkt: RxPkt) -> bool {
        self.used.push_back(pkt);
        self.used_idx += 1;
        self.irq.device_publish(self.used_idx)
    }

    /// Driver (NAPI): poll one used buffer and post a fresh one in its place (`try_fill_recv`).
    pub fn poll_and_refill(&mut self) -> Option<RxPkt> {
        let pkt = self.used.pop_front()?;
        self.polled += 1;
        self.posted += 1;
        self.avail += 1;
        Some(pkt)
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

    /// Device (`vhost_enable_notify`, out of buffers): kick me at the next posted buffer.
    pub fn enable_kicks(&mut self) {
        self.kick.device_enable(self.consumed);
    }

    /// Start a new measurement window.
    pub fn reset_metrics(&mut self) {
        self.kicks = 0;
        self.interrupts = 0;
    }
}
