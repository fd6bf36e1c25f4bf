//! Guest RAM: one anonymous mapping (vm-memory's `GuestMemoryMmap`) and checked, atomic accessors.
//!
//! The guest writes this memory concurrently with the host, so every access is a single atomic
//! load or store of a naturally aligned integer (no references to guest memory are ever formed),
//! and every access checks `addr + size <= len` and alignment first: a guest-chosen address can
//! never reach outside the mapping.
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering};
use vm_memory::{GuestAddress, GuestMemoryBackend, GuestMemoryMmap};

/// A guest-physical access that would leave guest RAM or is misaligned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("guest address {addr:#x} (+{size}) is outside guest memory or misaligned")]
pub struct OutOfRange {
    /// Guest-physical address.
    pub addr: u64,
    /// Access size in bytes.
    pub size: u64,
}

/// Guest RAM at guest-physical 0.
pub struct GuestMem {
    mmap: GuestMemoryMmap,
    base: *mut u8,
    len: u64,
}

// SAFETY: the mapping lives as long as `GuestMem`; all accesses go through atomics on aligned
// addresses, which is how the guest side accesses it too. The raw pointer is only a cached base.
unsafe impl Send for GuestMem {}
// SAFETY: see `Send`: shared access is by atomic operations only.
unsafe impl Sync for GuestMem {}

macro_rules! access {
    ($load:ident, $store:ident, $t:ty, $a:ty) => {
        /// Atomic load at `addr` (checked).
        #[inline]
        pub fn $load(&self, addr: u64) -> Result<$t, OutOfRange> {
            let p = self.ptr(addr, std::mem::size_of::<$t>() as u64)?;
            // SAFETY: `ptr` checked that the access lies inside the mapping and is aligned.
            Ok(unsafe { (*(p as *const $a)).load(Ordering::Acquire) })
        }
        /// Atomic store at `addr` (checked).
        #[inline]
        pub fn $store(&self, addr: u64, v: $t) -> Result<(), OutOfRange> {
            let p = self.ptr(addr, std::mem::size_of::<$t>() as u64)?;
            // SAFETY: `ptr` checked that the access lies inside the mapping and is aligned.
            unsafe { (*(p as *const $a)).store(v, Ordering::Release) };
            Ok(())
        }
    };
}

impl GuestMem {
    /// Maps `len` bytes of zeroed anonymous memory.
    pub fn new(len: u64) -> std::io::Result<Self> {
        let mmap = GuestMemoryMmap::<()>::from_ranges(&[(GuestAddress(0), len as usize)])
            .map_err(|e| std::io::Error::other(format!("guest memory: {e}")))?;
        let base = mmap
            .get_host_address(GuestAddress(0))
            .map_err(|e| std::io::Error::other(format!("guest memory: {e}")))?;
        Ok(Self { mmap, base, len })
    }

    /// Size in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Never empty; here for clippy's `len_without_is_empty`.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Host address of guest-physical 0 (for KVM_SET_USER_MEMORY_REGION).
    pub fn host_base(&self) -> u64 {
        self.base as u64
    }

    /// The vm-memory object (for callers that want its API).
    pub fn mmap(&self) -> &GuestMemoryMmap {
        &self.mmap
    }

    /// Does `[addr, addr + len)` lie inside guest RAM? Overflow-safe.
    #[inline]
    pub fn contains(&self, addr: u64, len: u64) -> bool {
        addr.checked_add(len).is_some_and(|end| end <= self.len)
    }

    #[inline]
    fn ptr(&self, addr: u64, size: u64) -> Result<*mut u8, OutOfRange> {
        if !self.contains(addr, size) || !addr.is_multiple_of(size) {
            return Err(OutOfRange { addr, size });
        }
        // SAFETY: addr + size <= len, so the offset stays inside the mapping.
        Ok(unsafe { self.base.add(addr as usize) })
    }

    access!(load_u8, store_u8, u8, AtomicU8);
    access!(load_u16, store_u16, u16, AtomicU16);
    access!(load_u32, store_u32, u32, AtomicU32);
    access!(load_u64, store_u64, u64, AtomicU64);

    /// Copies `data` to `addr` (set-up only, before the vCPUs run).
    pub fn write_bytes(&self, addr: u64, data: &[u8]) -> Result<(), OutOfRange> {
        if !self.contains(addr, data.len() as u64) {
            return Err(OutOfRange { addr, size: data.len() as u64 });
        }
        // SAFETY: the destination range is inside the mapping (checked above) and cannot
        // overlap `data`, which is host memory outside guest RAM.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.base.add(addr as usize), data.len()) };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accesses_are_bounded_and_aligned() {
        let m = GuestMem::new(0x10000).unwrap();
        m.store_u64(0x8, 42).unwrap();
        assert_eq!(m.load_u64(0x8).unwrap(), 42);
        assert!(m.load_u64(0xfff8).is_ok());
        assert!(m.load_u64(0x10000).is_err());
        assert!(m.load_u64(u64::MAX - 3).is_err());
        assert!(m.load_u32(0x3).is_err());
        assert!(m.write_bytes(0xfff0, &[0; 32]).is_err());
        assert!(!m.contains(u64::MAX, 2));
    }
}
