//! A set of pCPUs (`cpumask_t`): a thread's allowed pCPUs, Xen credit's idlers and sockets.
//! Fixed-size bits for up to [`MAX_PCPUS`] pCPUs, `Copy` and free of the heap, so a mask costs
//! what a word did where a host had at most 64 pCPUs: tests of one pCPU read one word.

use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, Not};

pub use crate::config::limits::MAX_PCPUS;

/// Words of a mask.
const WORDS: usize = (MAX_PCPUS / 64) as usize;

/// A set of pCPUs, 0..[`MAX_PCPUS`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuMask([u64; WORDS]);

impl CpuMask {
    /// The empty set.
    pub const EMPTY: CpuMask = CpuMask([0; WORDS]);

    /// pCPU `c` alone.
    pub fn bit(c: u32) -> CpuMask {
        let mut m = CpuMask::EMPTY;
        m.set(c);
        m
    }

    /// pCPUs 0..n.
    pub fn first(n: u32) -> CpuMask {
        let mut m = CpuMask::EMPTY;
        for (i, w) in m.0.iter_mut().enumerate() {
            let lo = i as u32 * 64;
            *w = match n.saturating_sub(lo) {
                0 => 0,
                k if k >= 64 => u64::MAX,
                k => (1u64 << k) - 1,
            };
        }
        m
    }

    /// The set of `cpus`.
    pub fn of(cpus: impl IntoIterator<Item = u32>) -> CpuMask {
        let mut m = CpuMask::EMPTY;
        for c in cpus {
            m.set(c);
        }
        m
    }

    /// Add pCPU `c`.
    pub fn set(&mut self, c: u32) {
        self.0[(c / 64) as usize] |= 1u64 << (c % 64);
    }

    /// Is pCPU `c` in the set?
    #[inline]
    pub fn has(&self, c: u32) -> bool {
        self.0.get((c / 64) as usize).is_some_and(|w| w >> (c % 64) & 1 == 1)
    }

    /// How many pCPUs it holds.
    pub fn count_ones(&self) -> u32 {
        self.0.iter().map(|w| w.count_ones()).sum()
    }

    /// Its lowest pCPU (`MAX_PCPUS` if empty, as `u64::trailing_zeros` gives 64).
    pub fn trailing_zeros(&self) -> u32 {
        self.0.iter().position(|&w| w != 0).map_or(MAX_PCPUS, |i| i as u32 * 64 + self.0[i].trailing_zeros())
    }

    /// Is it empty?
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }
}

impl From<u64> for CpuMask {
    /// pCPUs 0..64 as the bits of a word (as masks were before hosts grew past 64 pCPUs).
    fn from(w: u64) -> CpuMask {
        let mut m = CpuMask::EMPTY;
        m.0[0] = w;
        m
    }
}

impl BitAnd for CpuMask {
    type Output = CpuMask;
    fn bitand(mut self, o: CpuMask) -> CpuMask {
        self &= o;
        self
    }
}

impl BitAndAssign for CpuMask {
    fn bitand_assign(&mut self, o: CpuMask) {
        for (a, b) in self.0.iter_mut().zip(o.0) {
            *a &= b;
        }
    }
}

impl BitOr for CpuMask {
    type Output = CpuMask;
    fn bitor(mut self, o: CpuMask) -> CpuMask {
        self |= o;
        self
    }
}

impl BitOrAssign for CpuMask {
    fn bitor_assign(&mut self, o: CpuMask) {
        for (a, b) in self.0.iter_mut().zip(o.0) {
            *a |= b;
        }
    }
}

impl Not for CpuMask {
    type Output = CpuMask;
    fn not(mut self) -> CpuMask {
        for w in self.0.iter_mut() {
            *w = !*w;
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mask_holds_pcpus_past_64() {
        let m = CpuMask::of([0, 63, 64, 300, 511]);
        assert!(m.has(0) && m.has(63) && m.has(64) && m.has(300) && m.has(511));
        assert!(!m.has(1) && !m.has(65) && !m.has(512));
        assert_eq!(m.count_ones(), 5);
        assert_eq!((m & !CpuMask::bit(0)).trailing_zeros(), 63);
        assert_eq!(CpuMask::EMPTY.trailing_zeros(), MAX_PCPUS);
    }

    #[test]
    fn first_n_is_the_low_n_pcpus() {
        for n in [0, 1, 63, 64, 65, 128, 300, 512] {
            let m = CpuMask::first(n);
            assert_eq!(m.count_ones(), n, "{n}");
            assert!(n == 0 || m.has(n - 1));
            assert!(!m.has(n));
        }
        assert_eq!(CpuMask::first(4), CpuMask::of(0..4));
    }
}
