//! The 82599 drivers' adaptive interrupt throttle (Linux 3.x `ixgbe_set_itr` /
//! `ixgbe_update_itr` in drivers/net/ethernet/intel/ixgbe/ixgbe_main.c, copied by the VF
//! driver as `ixgbevf_set_itr`; InterruptThrottleRate = 1, "dynamic", is both drivers'
//! default). At every NAPI completion the driver looks at the bytes each ring of the vector
//! (RX and TX) moved per µs of the last interval and moves the ring one step between three
//! latency ranges — lowest (≤ 10 bytes/µs: 100 K interrupts/s), low (≤ 20 bytes/µs: 20 K/s)
//! and bulk (more: 8 K/s; later VF drivers 12 K/s). The vector takes the larger range of
//! its two rings, and approaches that range's interval by exponential smoothing
//! (`new = 10·new·old / (9·new + old)`), never jumping to it.
//!
//! "Per µs of the last interval" is the driver's own arithmetic: it divides by the vector's
//! current interval (`timepassed_us = q_vector->itr >> 2`), not by the time that actually
//! passed, so a single full-sized frame per interrupt reads as bulk even at a low frame rate.
//! The policy therefore needs no clock: bytes and packets per NAPI completion in, the next
//! interval out.
//!
//! Units follow the driver: `itr` is µs << 2 as written to EITR, whose interval field counts
//! 2 µs from bit 3 (40 is 10 µs, 200 is 50 µs, 336 is 84 µs, 500 is 125 µs).

/// `IXGBE_100K_ITR`: 10 µs, the lowest range's target.
pub const ITR_100K: u32 = 40;
/// `IXGBE_20K_ITR`: 50 µs, the low range's target and every vector's starting value
/// (`ixgbe_alloc_q_vector`, `ixgbevf_configure_msix`).
pub const ITR_20K: u32 = 200;
/// `IXGBE_12K_ITR`: 84 µs, the bulk target of VF drivers later than the seeds' (the
/// ixgbevf.h that defines it); Linux 3.x's VF driver used [`ITR_8K`] like the PF's.
pub const ITR_12K: u32 = 336;
/// `IXGBE_8K_ITR`: 125 µs, the bulk target of the PF driver and of Linux 3.x's VF driver.
pub const ITR_8K: u32 = 500;

/// A ring's traffic class (`enum latency_range`; i40e's `i40e_latency_range` starts the same).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum LatencyRange {
    /// Up to 10 bytes/µs.
    #[default]
    Lowest,
    /// Up to 20 bytes/µs.
    Low,
    /// More.
    Bulk,
}

impl LatencyRange {
    /// The one-step move of `ixgbe_update_itr` (and of i40e's `i40e_set_new_dynamic_itr`)
    /// from the bytes per µs of the last interval: up past 10 and 20, down at or below them.
    pub fn step(self, bytes_per_us: u64) -> LatencyRange {
        match self {
            LatencyRange::Lowest if bytes_per_us > 10 => LatencyRange::Low,
            LatencyRange::Low if bytes_per_us > 20 => LatencyRange::Bulk,
            LatencyRange::Low if bytes_per_us <= 10 => LatencyRange::Lowest,
            LatencyRange::Bulk if bytes_per_us <= 20 => LatencyRange::Low,
            r => r,
        }
    }
}

/// One ring's counters since the last update (`struct ixgbe_ring_container`).
#[derive(Debug, Clone, Default)]
struct Ring {
    bytes: u64,
    packets: u64,
    range: LatencyRange,
}

impl Ring {
    /// `ixgbe_update_itr`: reclassify from the bytes per µs of an interval of `interval_us`;
    /// a ring that moved nothing keeps its range and its counters.
    fn update(&mut self, interval_us: u32) {
        if self.packets == 0 || interval_us == 0 {
            return;
        }
        self.range = self.range.step(self.bytes / u64::from(interval_us));
        self.bytes = 0;
        self.packets = 0;
    }
}

/// The dynamic throttle of one MSI-X vector serving an RX and a TX ring.
#[derive(Debug, Clone)]
pub struct DynamicItr {
    itr: u32,
    /// The bulk range's target: [`ITR_8K`] (the PF's and Linux 3.x's VF driver).
    bulk: u32,
    rx: Ring,
    tx: Ring,
}

impl Default for DynamicItr {
    fn default() -> Self {
        Self::ixgbevf()
    }
}

impl DynamicItr {
    /// The VF driver's vector as the seeds' guests ran it (Linux 3.6 ixgbevf 2.6.0-k,
    /// `ixgbevf_configure_msix` and `ixgbevf_set_itr`): starts at 20 K/s ([`ITR_20K`]), lowest
    /// 100 K/s, low 20 K/s, bulk 8 K/s ([`ITR_8K`], as the PF's; later VF drivers use
    /// [`ITR_12K`]). The same as [`DynamicItr::ixgbe`] from [`ITR_20K`].
    pub fn ixgbevf() -> Self {
        DynamicItr { itr: ITR_20K, bulk: ITR_8K, rx: Ring::default(), tx: Ring::default() }
    }

    /// The PF driver's vector (`ixgbe_set_itr`): starts at `start` (µs << 2; the driver's is
    /// [`ITR_20K`]), bulk at 8 K/s.
    pub fn ixgbe(start: u32) -> Self {
        DynamicItr { itr: start.clamp(ITR_100K, ITR_8K), bulk: ITR_8K, rx: Ring::default(), tx: Ring::default() }
    }

    /// The intervals the PF driver moves between, ns: its lowest and bulk targets.
    pub const IXGBE_RANGE_NS: (u64, u64) = (10_000, 125_000);

    /// NAPI cleaned `packets` received frames of `bytes` in all.
    pub fn on_rx(&mut self, packets: u64, bytes: u64) {
        self.rx.packets += packets;
        self.rx.bytes += bytes;
    }

    /// NAPI cleaned `packets` sent frames of `bytes` in all.
    pub fn on_tx(&mut self, packets: u64, bytes: u64) {
        self.tx.packets += packets;
        self.tx.bytes += bytes;
    }

    /// NAPI completed: update both rings and the vector's interval (`ixgbe_set_itr`). Returns
    /// the new interval (ns) when it changed, for the caller to write to the throttle.
    pub fn on_napi_complete(&mut self) -> Option<u64> {
        let interval_us = self.itr >> 2;
        self.tx.update(interval_us);
        self.rx.update(interval_us);
        let target = match self.rx.range.max(self.tx.range) {
            LatencyRange::Lowest => ITR_100K,
            LatencyRange::Low => ITR_20K,
            LatencyRange::Bulk => self.bulk,
        };
        if target == self.itr {
            return None;
        }
        self.itr = (10 * target * self.itr) / (9 * target + self.itr);
        Some(self.interval_ns())
    }

    /// The register value (µs << 2).
    pub fn itr(&self) -> u32 {
        self.itr
    }

    /// The vector's range: the larger of its rings'.
    pub fn range(&self) -> LatencyRange {
        self.rx.range.max(self.tx.range)
    }

    /// The hardware's interval: EITR's field counts 2 µs from bit 3.
    pub fn interval_ns(&self) -> u64 {
        u64::from(self.itr >> 3) * 2_000
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_class_steps_one_range_at_a_time_with_the_drivers_thresholds() {
        use LatencyRange::*;
        assert_eq!(Lowest.step(10), Lowest);
        assert_eq!(Lowest.step(11), Low);
        assert_eq!(Lowest.step(1000), Low, "one step per update, however heavy");
        assert_eq!(Low.step(21), Bulk);
        assert_eq!(Low.step(20), Low);
        assert_eq!(Low.step(10), Lowest);
        assert_eq!(Bulk.step(21), Bulk);
        assert_eq!(Bulk.step(20), Low);
        assert_eq!(Bulk.step(0), Low, "one step down too");
    }

    #[test]
    fn the_pf_smooths_towards_8k_under_bulk_traffic() {
        let mut d = DynamicItr::ixgbe(ITR_20K);
        assert_eq!(d.interval_ns(), 50_000);
        // 1500 bytes in a 50 µs interval: 30 bytes/µs. Lowest -> low: the target is the
        // start, no write.
        d.on_rx(1, 1500);
        assert_eq!(d.on_napi_complete(), None);
        assert_eq!(d.range(), LatencyRange::Low);
        // Low -> bulk: 10·500·200 / (9·500 + 200) = 1_000_000 / 4700 = 212 (µs << 2): 52 µs.
        d.on_rx(1, 1500);
        assert_eq!(d.on_napi_complete(), Some(52_000));
        assert_eq!(d.itr(), 212);
        // 1500 / (212 >> 2 = 53) = 28 bytes/µs: stays bulk; 10·500·212 / (4500 + 212) = 224.
        d.on_rx(1, 1500);
        d.on_napi_complete();
        assert_eq!(d.itr(), 224);
        for _ in 0..200 {
            d.on_rx(4, 6000);
            d.on_napi_complete();
        }
        assert!((480..=ITR_8K).contains(&d.itr()), "approaches 500: {}", d.itr());
    }

    #[test]
    fn a_start_outside_the_pf_range_is_held_to_it() {
        assert_eq!(DynamicItr::ixgbe(4).itr(), ITR_100K);
        assert_eq!(DynamicItr::ixgbe(10_000).itr(), ITR_8K);
    }

    #[test]
    fn linux_3_6s_vf_driver_runs_the_pfs_algorithm_and_bulk_target() {
        // ixgbevf 2.6.0-k's ixgbevf_set_itr: bulk_latency -> IXGBE_8K_ITR, as ixgbe's.
        let (mut pf, mut vf) = (DynamicItr::ixgbe(ITR_20K), DynamicItr::ixgbevf());
        for _ in 0..100 {
            for d in [&mut pf, &mut vf] {
                d.on_rx(8, 12_000);
                d.on_napi_complete();
            }
        }
        assert_eq!(pf.itr(), vf.itr());
        assert!(vf.itr() > ITR_12K, "past the later drivers' 12K target: {}", vf.itr());
    }
}
