//! A split virtqueue as the model sees it: ring occupancy, the two notification-suppression
//! flags, and the timestamps of descriptors in flight.
//!
//! Indices are free-running counters (the ring's u16 indices are these modulo 2^16).
//! Invariant: `used <= consumed <= avail` and `avail - used <= size`.

use crate::engine::Time;
use std::collections::VecDeque;

/// One descriptor chain's payload as the model tracks it.
#[derive(Debug, Clone, Copy)]
pub struct Buf {
    /// Bytes of payload.
    pub bytes: u32,
    /// When the guest application handed it to the driver.
    pub born: Time,
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
    /// Device wants kicks (`VRING_USED_F_NO_NOTIFY` clear / avail_event current).
    pub notify_enabled: bool,
    /// Driver wants an interrupt on the next used buffer (`VRING_AVAIL_F_NO_INTERRUPT` clear).
    pub interrupt_wanted: bool,
    /// Kicks the driver made (measured window).
    pub kicks: u64,
    /// Interrupts the device signalled (measured window).
    pub interrupts: u64,
}

impl Virtq {
    /// An empty queue of `size` descriptors; kicks enabled, interrupts suppressed (the TX
    /// queue of virtio-net reclaims on transmit and asks for interrupts only when full).
    pub fn new(size: u32) -> Self {
        Virtq {
            size,
            avail: 0,
            consumed: 0,
            used: 0,
            pending: VecDeque::with_capacity(size as usize),
            notify_enabled: true,
            interrupt_wanted: false,
            kicks: 0,
            interrupts: 0,
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

    /// Device: take the next available buffer.
    pub fn take(&mut self) -> Option<Buf> {
        let b = self.pending.pop_front()?;
        self.consumed += 1;
        Some(b)
    }

    /// Device: return a taken buffer to the used ring.
    pub fn put_used(&mut self) {
        debug_assert!(self.used < self.consumed);
        self.used += 1;
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
