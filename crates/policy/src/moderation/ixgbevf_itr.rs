//! The 82599 VF driver's dynamic interrupt throttle (Linux ixgbevf `ixgbevf_set_itr`, its
//! default `rx-usecs` = 1): at every NAPI completion the driver looks at the bytes its RX and
//! TX rings moved per µs of the last throttle interval and moves each ring between three
//! latency ranges — lowest (≤ 10 bytes/µs, about 20 MB/s: 100 K interrupts/s), low (≤ 20
//! bytes/µs: 20 K/s) and bulk (12 K/s) — one step at a time. The vector takes the larger
//! range of its two rings, and a new interval is approached by exponential smoothing, not
//! jumped to. SR-IOV's small-packet request/response traffic therefore sits in the lowest
//! range, an interrupt for nearly every packet: the interrupt rate DID §5.7 blames for the
//! SRIOV configuration's exits.
//!
//! Units follow the driver: `itr` is µs << 2 as written to EITR, whose interval field counts
//! 2 µs from bit 3 (so 40 is 10 µs, 200 is 50 µs, 336 is 84 µs).

/// `IXGBE_100K_ITR`: 10 µs.
pub const ITR_100K: u32 = 40;
/// `IXGBE_20K_ITR`: 50 µs, also the vector's starting value (`ixgbevf_configure_msix`).
pub const ITR_20K: u32 = 200;
/// `IXGBE_12K_ITR`: 84 µs.
pub const ITR_12K: u32 = 336;

/// A ring's traffic class (`enum latency_range`).
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

/// One ring's counters since the last update (`struct ixgbevf_ring_container`).
#[derive(Debug, Clone, Default)]
struct Ring {
    bytes: u64,
    packets: u64,
    range: LatencyRange,
}

impl Ring {
    /// `ixgbevf_update_itr`: reclassify from the bytes per µs of an interval of `interval_us`.
    fn update(&mut self, interval_us: u32) {
        if self.packets == 0 || interval_us == 0 {
            return;
        }
        let per_us = self.bytes / u64::from(interval_us);
        self.range = match self.range {
            LatencyRange::Lowest if per_us > 10 => LatencyRange::Low,
            LatencyRange::Low if per_us > 20 => LatencyRange::Bulk,
            LatencyRange::Low if per_us <= 10 => LatencyRange::Lowest,
            LatencyRange::Bulk if per_us <= 20 => LatencyRange::Low,
            r => r,
        };
        self.bytes = 0;
        self.packets = 0;
    }
}

/// The dynamic throttle of one MSI-X vector serving an RX and a TX ring.
#[derive(Debug, Clone)]
pub struct DynamicItr {
    itr: u32,
    rx: Ring,
    tx: Ring,
}

impl Default for DynamicItr {
    fn default() -> Self {
        DynamicItr { itr: ITR_20K, rx: Ring::default(), tx: Ring::default() }
    }
}

impl DynamicItr {
    /// A vector as the driver configures it: 20 K interrupts/s, both rings in the lowest range.
    pub fn new() -> Self {
        Self::default()
    }

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

    /// NAPI completed: update both rings and the vector's interval. Returns the new interval
    /// (ns) when it changed, for the caller to write to the throttle.
    pub fn on_napi_complete(&mut self) -> Option<u64> {
        let interval_us = self.itr >> 2;
        self.tx.update(interval_us);
        self.rx.update(interval_us);
        let target = match self.rx.range.max(self.tx.range) {
            LatencyRange::Lowest => ITR_100K,
            LatencyRange::Low => ITR_20K,
            LatencyRange::Bulk => ITR_12K,
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

    /// The hardware's interval: EITR's field counts 2 µs from bit 3.
    pub fn interval_ns(&self) -> u64 {
        u64::from(self.itr >> 3) * 2_000
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One NAPI completion after an interval's traffic of `rx_bytes` received.
    fn complete(d: &mut DynamicItr, rx_bytes: u64) -> Option<u64> {
        d.on_rx(1, rx_bytes);
        d.on_napi_complete()
    }

    #[test]
    fn starts_at_20k_and_small_request_traffic_drops_to_100k() {
        let mut d = DynamicItr::new();
        assert_eq!(d.interval_ns(), 50_000);
        // 300 bytes in a 50 µs interval: 6 bytes/µs, lowest range. Smoothing approaches 40.
        let first = complete(&mut d, 300).unwrap();
        assert_eq!(d.itr(), (10 * 40 * 200) / (9 * 40 + 200));
        assert!(first < 50_000 && first > 10_000, "{first}");
        for _ in 0..20 {
            complete(&mut d, 60);
        }
        assert!(d.itr() <= 47, "converges towards 40: {}", d.itr());
        assert_eq!(d.interval_ns(), 10_000);
    }

    #[test]
    fn bulk_traffic_steps_through_low_to_bulk() {
        let mut d = DynamicItr::new();
        // 50 bytes/µs: lowest -> low on the first update, low -> bulk on the second.
        complete(&mut d, 50 * 50);
        assert_eq!(d.itr(), ITR_20K, "the low range's target is the starting value: no change");
        assert_eq!(d.on_napi_complete(), None, "no packets: no update");
        let n = complete(&mut d, 50 * 50).unwrap();
        assert!(d.itr() > ITR_20K && n > 50_000, "{} {n}", d.itr());
        for _ in 0..30 {
            complete(&mut d, 50 * 84);
        }
        assert!((300..=336).contains(&d.itr()), "approaches 336: {}", d.itr());
    }

    #[test]
    fn the_vector_follows_the_busier_ring() {
        let mut d = DynamicItr::new();
        d.on_tx(10, 40 * 50);
        d.on_rx(1, 64);
        d.on_napi_complete();
        d.on_tx(10, 40 * 50);
        d.on_rx(1, 64);
        d.on_napi_complete();
        assert!(d.itr() > ITR_20K, "TX in bulk lengthens the interval although RX is light: {}", d.itr());
    }
}
