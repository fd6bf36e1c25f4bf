//! The RX virtqueue of virtio-net as the model sees it: receive buffers the guest has posted,
//! used buffers (filled by vhost) waiting for the guest's NAPI poll, and the two notification
//! directions: the device wants refill kicks only after it ran out of buffers (vhost
//! `handle_rx` enables notifications when `headcount == 0`), and the driver wants an interrupt
//! only while its NAPI context is idle (`virtqueue_disable_cb` in the interrupt handler,
//! `virtqueue_enable_cb_prepare` at `napi_complete`). With `VIRTIO_RING_F_EVENT_IDX` the device
//! signals once per re-enable (used_event), which `interrupt_wanted` models.
//!
//! Invariant: `posted + used.len() + in_device == size`.

use crate::engine::Time;
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
    /// Device wants a kick when the driver posts buffers.
    pub notify_enabled: bool,
    /// Driver wants an interrupt on the next used buffer.
    pub interrupt_wanted: bool,
    /// Refill kicks (window).
    pub kicks: u64,
    /// Interrupts signalled (window).
    pub interrupts: u64,
}

impl RxRing {
    /// A ring of `size` buffers, all posted, callbacks enabled.
    pub fn new(size: u32) -> Self {
        RxRing {
            size,
            posted: size,
            used: VecDeque::with_capacity(size as usize),
            notify_enabled: false,
            interrupt_wanted: true,
            kicks: 0,
            interrupts: 0,
        }
    }

    /// Ring size.
    pub fn size(&self) -> u32 {
        self.size
    }

    /// Start a new measurement window.
    pub fn reset_metrics(&mut self) {
        self.kicks = 0;
        self.interrupts = 0;
    }
}
