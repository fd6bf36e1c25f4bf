//! A split virtqueue as the model sees it: ring occupancy, the two notification-suppression
//! flags, and the timestamps of descriptors in flight.
//!
//! Indices are free-running counters (the ring's u16 indices are these modulo 2^16).
//! Invariant: `used <= consumed <= avail` and `avail - used <= size`.

use crate::model::hw::notify::{IrqGate, KickGate};
use crate::engine::Time;
use eventpath_policy::notify::Suppression;
use std::collections::VecDeque;

/// One descriptor chain's payload as the model tracks it.
#[derive(Debug, Clone, Copy)]
pub struct Buf {
    /// Bytes of payload.
    pub bytes: u32,
    /// When the guest application handed it to the driver.
    pub born: Time,
    /// The connection it belongs to, among its workload's (a netperf thread's stream; else 0).
    pub flow: u16,
    /// The TCP segments it carries: more than one for a TSO skb, which the host's NIC (TSO)
    /// cuts into this many frames on the wire. 1 for everything else.
    pub segs: u16,
}

impl Buf {
    /// A chain of `bytes` handed to the driver at `born`, on the workload's first connection.
    pub fn new(bytes: u32, born: Time) -> Self {
        Buf { bytes, born, flow: 0, segs: 1 }
    }
}

/// Split virtqueue state.
#[derive(Debug)]
pub struct Virtq {
    size: u32,
    /// Chains made available by the driver.
    avail: u64,
    /// Chains taken by the device.
    consumed: u64,
    /// Chains returned by the device.
    used: u64,
    /// Chains available but not yet taken, in order.
    pending: VecDeque<Buf>,
    /// Driver → device notifications (kicks).
    pub kick: KickGate,
    /// Device → driver notifications (interrupts).
    pub irq: IrqGate,
    /// Kicks the driver made (measured window).
    pub kicks: u64,
    /// Interrupts the device signalled (measured window).
    pub interrupts: u64,
    /// The back end that last served the ring ran on another socket than the device's home
    /// vCPU (profile `[numa]`; set by the model root): the driver's accesses to the lines it
    /// touched cross the socket interconnect.
    pub far: bool,
}

impl Virtq {
    /// An empty queue of `size` descriptors; kicks enabled, interrupts suppressed (the TX
    /// queue of virtio-net reclaims on transmit and asks for interrupts only when full).
    pub fn new(size: u32, mode: Suppression) -> Self {
        Virtq {
            size,
            avail: 0,
            consumed: 0,
            used: 0,
            pending: VecDeque::with_capacity(size as usize),
            kick: KickGate::new(mode, 0, true),
            irq: IrqGate::new(mode, 0, false),
            kicks: 0,
            interrupts: 0,
            far: false,
        }
    }

    /// Free descriptors from the driver's point of view (used ones count as reclaimable).
    pub fn free(&self) -> u32 {
        self.size - (self.avail - self.used) as u32
    }

    /// Driver: make a buffer available. Panics if the ring is full (a model bug).
    pub fn add(&mut self, b: Buf) {
        assert!(self.free() > 0, "virtqueue overflow");
        self.avail += 1;
        self.pending.push_back(b);
    }

    /// Driver (`virtqueue_kick_prepare`): should it kick for the buffers added since it last
    /// asked?
    pub fn kick_prepare(&mut self) -> bool {
        self.kick.driver_kick_prepare(self.avail)
    }

    /// Driver: interrupt me when the device next uses a buffer (the TX queue stopped).
    pub fn want_interrupt(&mut self) {
        self.irq.driver_enable(self.used);
    }

    /// Device (`vhost_enable_notify`): kick me at the next buffer after those it has read.
    pub fn enable_kicks(&mut self) {
        self.kick.device_enable(self.avail);
    }

    /// Device: take the next available buffer.
    pub fn take(&mut self) -> Option<Buf> {
        let b = self.pending.pop_front()?;
        self.consumed += 1;
        Some(b)
    }

    /// Device: return a taken buffer to the used ring; returns whether to interrupt the driver
    /// (`vhost_notify`).
    pub fn put_used(&mut self) -> bool {
        debug_assert!(self.used < self.consumed);
        self.used += 1;
        self.irq.device_publish(self.used)
    }

    /// The oldest chain available and not yet taken.
    pub fn peek(&self) -> Option<&Buf> {
        self.pending.front()
    }

    /// Chains available and not yet taken.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Chains taken by the device but not yet used (in its hands).
    pub fn in_device(&self) -> u64 {
        self.consumed - self.used
    }

    /// Start a new measurement window.
    pub fn reset_metrics(&mut self) {
        self.kicks = 0;
        self.interrupts = 0;
    }
}
