//! The device side of a split virtqueue (virtio 1.x §2.7) over guest memory the guest writes
//! concurrently. Every guest-written index, address and length is checked before use: head and
//! `next` indices against the ring size, buffers against guest memory and MAX_BUFFER_LEN, chain
//! walks bounded by the ring size, avail->idx against the ring size. A bad request is counted and
//! dropped; the queue keeps working.
pub mod error;
#[cfg(test)]
mod tests;

pub use error::{ErrorCounts, VirtqError};

use crate::vmm::memory::GuestMem;
use eventpath_policy::notify::{device_should_interrupt, kick_control, KickControlWrite, Suppression};
use std::num::Wrapping;

/// Largest buffer a descriptor may describe (1 MiB): anything longer is `HugeLength`.
pub const MAX_BUFFER_LEN: u32 = 1 << 20;
/// Descriptors remembered per chain (a longer valid chain is still walked and checked).
pub const CHAIN_KEEP: usize = 4;
const F_NEXT: u16 = 1;
const F_WRITE: u16 = 2;
const F_INDIRECT: u16 = 4;

/// Where the three parts of a ring live.
#[derive(Debug, Clone, Copy)]
pub struct RingAddrs {
    /// Descriptor table.
    pub desc: u64,
    /// Avail ring.
    pub avail: u64,
    /// Used ring.
    pub used: u64,
}

/// A descriptor chain that passed every check.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Chain {
    /// Head index (what goes back in the used ring).
    pub head: u16,
    /// Descriptors in the chain.
    pub len: u16,
    /// The first CHAIN_KEEP buffers: (address, length, device-writable).
    pub bufs: [(u64, u32, bool); CHAIN_KEEP],
    /// Sum of buffer lengths.
    pub total_len: u64,
}

/// Device state of one queue.
#[derive(Debug, Clone)]
pub struct DeviceQueue {
    addrs: RingAddrs,
    size: u16,
    next_avail: Wrapping<u16>,
    next_used: Wrapping<u16>,
    signalled_used: Wrapping<u16>,
    /// Bad input seen on this queue, by kind.
    pub errors: ErrorCounts,
}

impl DeviceQueue {
    /// A queue of `size` entries (a power of two, 1..=32768) at `addrs`; the rings must fit memory.
    pub fn new(mem: &GuestMem, addrs: RingAddrs, size: u16) -> Result<Self, VirtqError> {
        let s = size as u64;
        let fits = size.is_power_of_two()
            && size <= 32768
            && mem.contains(addrs.desc, 16 * s)
            && mem.contains(addrs.avail, 6 + 2 * s)
            && mem.contains(addrs.used, 6 + 8 * s)
            && addrs.desc.is_multiple_of(16)
            && addrs.avail.is_multiple_of(2)
            && addrs.used.is_multiple_of(4);
        if !fits {
            return Err(VirtqError::RingOutOfRange);
        }
        Ok(Self {
            addrs,
            size,
            next_avail: Wrapping(0),
            next_used: Wrapping(0),
            signalled_used: Wrapping(0),
            errors: ErrorCounts::default(),
        })
    }

    /// Ring size.
    pub fn size(&self) -> u16 {
        self.size
    }

    /// avail->idx as the guest last wrote it (0 if unreadable, which `new` rules out).
    fn avail_idx(&self, mem: &GuestMem) -> u16 {
        mem.load_u16(self.addrs.avail + 2).unwrap_or(self.next_avail.0)
    }

    /// Are there avail entries the device has not taken?
    pub fn has_work(&self, mem: &GuestMem) -> bool {
        self.avail_idx(mem) != self.next_avail.0
    }

    /// Takes the next request. `None`: ring empty. `Some(Err)`: bad input, counted and dropped.
    pub fn pop(&mut self, mem: &GuestMem) -> Option<Result<Chain, VirtqError>> {
        let avail_idx = Wrapping(self.avail_idx(mem));
        if avail_idx == self.next_avail {
            return None;
        }
        if (avail_idx - self.next_avail).0 > self.size {
            // The guest claims more entries than the ring holds: drop them all, resynchronise.
            self.next_avail = avail_idx;
            return Some(Err(self.fail(VirtqError::AvailIdxJump)));
        }
        let slot = (self.next_avail.0 % self.size) as u64;
        self.next_avail += 1;
        let head = match mem.load_u16(self.addrs.avail + 4 + 2 * slot) {
            Ok(h) => h,
            Err(_) => return Some(Err(self.fail(VirtqError::RingOutOfRange))),
        };
        Some(self.walk(mem, head).map_err(|e| self.fail(e)))
    }

    fn fail(&mut self, e: VirtqError) -> VirtqError {
        self.errors.count(e);
        e
    }

    fn walk(&self, mem: &GuestMem, head: u16) -> Result<Chain, VirtqError> {
        if head >= self.size {
            return Err(VirtqError::HeadOutOfRange);
        }
        let mut chain = Chain { head, ..Default::default() };
        let mut idx = head;
        // A chain can have at most `size` descriptors; visiting more means a loop.
        for n in 0..self.size as usize {
            let d = self.addrs.desc + 16 * idx as u64;
            let load = |o: u64| mem.load_u64(d + o).map_err(|_| VirtqError::RingOutOfRange);
            let addr = load(0)?;
            let lfn = load(8)?;
            let (len, flags, next) = (lfn as u32, (lfn >> 32) as u16, (lfn >> 48) as u16);
            if flags & F_INDIRECT != 0 {
                return Err(VirtqError::Indirect);
            }
            if len > MAX_BUFFER_LEN {
                return Err(VirtqError::HugeLength);
            }
            if !mem.contains(addr, len as u64) {
                return Err(VirtqError::AddrOutOfRange);
            }
            if n < CHAIN_KEEP {
                chain.bufs[n] = (addr, len, flags & F_WRITE != 0);
            }
            chain.len += 1;
            chain.total_len += len as u64;
            if flags & F_NEXT == 0 {
                return Ok(chain);
            }
            if next >= self.size {
                return Err(VirtqError::NextOutOfRange);
            }
            idx = next;
        }
        Err(VirtqError::ChainLoop)
    }

    /// Puts `head` in the used ring with `len` bytes written and publishes used->idx.
    pub fn push_used(&mut self, mem: &GuestMem, head: u16, len: u32) {
        let slot = (self.next_used.0 % self.size) as u64;
        let at = self.addrs.used + 4 + 8 * slot;
        let _ = mem.store_u32(at, head as u32);
        let _ = mem.store_u32(at + 4, len);
        self.next_used += 1;
        let _ = mem.store_u16(self.addrs.used + 2, self.next_used.0); // Release: entries first
    }

    /// Should the device interrupt now for what it published since the last interrupt?
    /// (vhost_notify() with event idx; advances the "last signalled" index when true.)
    pub fn should_interrupt(&mut self, mem: &GuestMem) -> bool {
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst); // used->idx before used_event
        let used_event = mem.load_u16(self.addrs.avail + 4 + 2 * self.size as u64).unwrap_or(0);
        // avail flags are ignored with event indices (VIRTIO_F_EVENT_IDX is always negotiated here)
        let yes = device_should_interrupt(Suppression::EventIdx, 0, used_event, self.next_used.0, self.signalled_used.0);
        if yes {
            self.signalled_used = self.next_used;
        }
        yes
    }

    /// Forget the interrupt owed (moderation sent one covering it).
    pub fn mark_signalled(&mut self) {
        self.signalled_used = self.next_used;
    }

    /// Asks the guest to kick for the next request (avail_event := next_avail, event index) and
    /// answers the re-check: `true` when the guest published requests the device has not taken,
    /// for which no kick may come (it read the old avail_event), so the device must serve them
    /// now. The avail_event store and the avail->idx load are ordered by a full fence (the
    /// store-load barrier virtio 1.x §2.7.10 asks of the device, `smp_mb()` in Linux's
    /// `vhost_enable_notify`): a guest that publishes after the load sees the new avail_event
    /// and kicks. The sequence exists once, here, as rust-vmm virtio-queue's
    /// `enable_notification()`; every back end calls it instead of writing its own.
    #[must_use = "true means requests arrived that no kick will announce: serve them"]
    pub fn enable_notification(&self, mem: &GuestMem) -> bool {
        self.write_avail_event(mem, true);
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst); // avail_event before avail->idx
        self.has_work(mem)
    }

    /// Suppresses guest kicks, as the spec's device does: with event indices (always used here)
    /// it writes nothing, so the guest goes on comparing against the avail_event of the last
    /// enable and kicks once more only when its index crosses it (after 2^16 requests, or
    /// once if it publishes right after an enable the device took back) — as Linux's
    /// `vhost_disable_notify`, DPDK's `vhost_enable_notify_split(.., 0)` and rust-vmm's
    /// `disable_notification()` do. Without event indices it would set VRING_USED_F_NO_NOTIFY.
    pub fn disable_notification(&self, mem: &GuestMem) {
        self.write_avail_event(mem, false);
    }

    fn write_avail_event(&self, mem: &GuestMem, enable: bool) {
        match kick_control(Suppression::EventIdx, enable, 0, self.next_avail.0) {
            KickControlWrite::AvailEvent(v) => {
                let _ = mem.store_u16(self.addrs.used + 4 + 8 * self.size as u64, v);
            }
            KickControlWrite::UsedFlags(f) => {
                let _ = mem.store_u16(self.addrs.used, f);
            }
            KickControlWrite::Nothing => {}
        }
    }

    /// Device's next avail index (entries taken so far, mod 2^16).
    pub fn next_avail(&self) -> u16 {
        self.next_avail.0
    }
}
