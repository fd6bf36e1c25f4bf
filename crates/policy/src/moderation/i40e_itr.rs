//! The XL710 driver's dynamic interrupt throttle in the Linux 4.4 series (i40e_txrx.c:
//! `i40e_set_new_dynamic_itr`, called from `i40e_update_enable_itr` at NAPI completion; the
//! default `I40E_ITR_RX_DEF` is 20 K/s with `I40E_ITR_DYNAMIC` set). The ixgbe family's three
//! byte-rate classes ([`LatencyRange::step`], same 10 and 20 bytes/µs thresholds) with i40e's
//! own targets — lowest 50 K/s, low 20 K/s, bulk 18 K/s — and a fourth, *ultra* (8 K/s), that
//! an RX ring enters whenever it received more than 40 000 packets per second
//! (`RX_ULTRA_PACKET_RATE`), whatever their size.
//!
//! Unlike ixgbe, i40e neither smooths nor decides at every interrupt: a countdown
//! (`ITR_COUNTDOWN_START` = 100) lets it decide once every 101 NAPI completions, over the
//! bytes and packets of all of them, divided by the time the driver assumes they took (100 ×
//! the current interval — not the time that passed). When a ring's interval changes, both
//! rings take the larger of the two (`max(tx.itr, rx.itr)`), so an idle TX ring at the
//! starting 20 K/s keeps RX from going below 50 µs.
//!
//! Units follow the driver: `itr` counts the ITR register's 2 µs (25 is 50 µs).

use super::ixgbe_itr::LatencyRange;

/// `I40E_ITR_50K`: 20 µs, the lowest range's target.
pub const ITR_50K: u16 = 0x000A;
/// `I40E_ITR_20K`: 50 µs, the low range's target and the default start (`I40E_ITR_RX_DEF`).
pub const ITR_20K: u16 = 0x0019;
/// `I40E_ITR_18K`: 54 µs, the bulk range's target.
pub const ITR_18K: u16 = 0x001B;
/// `I40E_ITR_8K`: 124 µs, the ultra range's target.
pub const ITR_8K: u16 = 0x003E;
/// `ITR_COUNTDOWN_START`: NAPI completions skipped between two decisions.
pub const COUNTDOWN_START: u8 = 100;
/// `RX_ULTRA_PACKET_RATE`: received packets per second beyond which RX is ultra.
pub const ULTRA_PACKET_RATE: u64 = 40_000;

/// A ring's class (`enum i40e_latency_range`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum I40eRange {
    /// One of the three byte-rate classes.
    Bytes(LatencyRange),
    /// More than [`ULTRA_PACKET_RATE`] received packets per second.
    Ultra,
}

impl I40eRange {
    fn target(self) -> u16 {
        match self {
            I40eRange::Bytes(LatencyRange::Lowest) => ITR_50K,
            I40eRange::Bytes(LatencyRange::Low) => ITR_20K,
            I40eRange::Bytes(LatencyRange::Bulk) => ITR_18K,
            I40eRange::Ultra => ITR_8K,
        }
    }
}

/// One ring's interval and counters (`struct i40e_ring_container`).
#[derive(Debug, Clone)]
struct Container {
    itr: u16,
    range: I40eRange,
    bytes: u64,
    packets: u64,
}

impl Container {
    fn new(itr: u16) -> Self {
        // i40e_configure_msix: every ring starts in the low range.
        Container { itr, range: I40eRange::Bytes(LatencyRange::Low), bytes: 0, packets: 0 }
    }

    /// `i40e_set_new_dynamic_itr`: true when the ring's interval changed. A ring that moved
    /// nothing keeps its class and counters.
    fn set_new_dynamic_itr(&mut self, rx: bool) -> bool {
        if self.packets == 0 || self.itr == 0 {
            return false;
        }
        let usecs = u64::from(self.itr) * 2 * u64::from(COUNTDOWN_START);
        let bytes_per_us = self.bytes / usecs;
        let mut range = match self.range {
            I40eRange::Bytes(r) => I40eRange::Bytes(r.step(bytes_per_us)),
            // The bulk and ultra cases share the driver's `default:` branch.
            I40eRange::Ultra if bytes_per_us <= 20 => I40eRange::Bytes(LatencyRange::Low),
            I40eRange::Ultra => I40eRange::Ultra,
        };
        if rx && self.packets * 1_000_000 / usecs > ULTRA_PACKET_RATE {
            range = I40eRange::Ultra;
        }
        self.range = range;
        self.bytes = 0;
        self.packets = 0;
        let new = range.target();
        let changed = new != self.itr;
        self.itr = new;
        changed
    }
}

/// The dynamic throttle of one i40e vector serving an RX and a TX ring.
#[derive(Debug, Clone)]
pub struct I40eItr {
    rx: Container,
    tx: Container,
    countdown: u8,
}

impl I40eItr {
    /// A vector starting at `start` (2 µs units; the driver's is [`ITR_20K`]), held to the
    /// driver's adaptive range [`ITR_50K`]..=[`ITR_8K`].
    pub fn new(start: u16) -> Self {
        let start = start.clamp(ITR_50K, ITR_8K);
        I40eItr { rx: Container::new(start), tx: Container::new(start), countdown: 0 }
    }

    /// The intervals the driver moves between, ns: its lowest and ultra targets.
    pub const RANGE_NS: (u64, u64) = (20_000, 124_000);

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

    /// NAPI completed (`i40e_update_enable_itr`): decide if the countdown has run out.
    /// Returns the RX interval (ns) when it changed.
    pub fn on_napi_complete(&mut self) -> Option<u64> {
        if self.countdown > 0 {
            self.countdown -= 1;
            return None;
        }
        self.countdown = COUNTDOWN_START;
        let before = self.interval_ns();
        let rx = self.rx.set_new_dynamic_itr(true);
        let tx = self.tx.set_new_dynamic_itr(false);
        if !(rx || tx) {
            return None;
        }
        let itr = self.rx.itr.max(self.tx.itr);
        self.rx.itr = itr;
        self.tx.itr = itr;
        (self.interval_ns() != before).then(|| self.interval_ns())
    }

    /// The RX register value (2 µs units).
    pub fn itr(&self) -> u16 {
        self.rx.itr
    }

    /// The RX ring's class.
    pub fn rx_range(&self) -> I40eRange {
        self.rx.range
    }

    /// The RX interval.
    pub fn interval_ns(&self) -> u64 {
        u64::from(self.rx.itr) * 2_000
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Run `n` NAPI completions each cleaning one RX frame of `rx_bytes` and one TX frame of
    /// `tx_bytes` (0: none); the last change of interval.
    fn completions(d: &mut I40eItr, n: u32, rx_bytes: u64, tx_bytes: u64) -> Option<u64> {
        let mut last = None;
        for _ in 0..n {
            d.on_rx(1, rx_bytes);
            if tx_bytes > 0 {
                d.on_tx(1, tx_bytes);
            }
            last = d.on_napi_complete().or(last);
        }
        last
    }

    #[test]
    fn decides_at_the_first_completion_then_once_every_101() {
        let mut d = I40eItr::new(ITR_20K);
        assert_eq!(d.interval_ns(), 50_000);
        // 1 small frame each way: 64 bytes / (25·2·100 = 5000 µs) = 0 bytes/µs: low -> lowest;
        // 1 packet / 5000 µs = 200 pps: not ultra. Both rings go to 10 (20 µs).
        assert_eq!(completions(&mut d, 1, 64, 64), Some(20_000));
        assert_eq!(d.rx_range(), I40eRange::Bytes(LatencyRange::Lowest));
        // The next 100 completions decide nothing, whatever they carry ...
        assert_eq!(completions(&mut d, 100, 9000, 0), None);
        assert_eq!(d.itr(), ITR_50K);
        // ... and the 101st judges all of them: 100·9000 + 9000 bytes / (10·2·100 µs) = 454
        // bytes/µs: lowest -> low, one step; 101 packets / 2000 µs = 50 500 pps > 40 000: ultra.
        assert_eq!(completions(&mut d, 1, 9000, 0), Some(124_000));
        assert_eq!(d.rx_range(), I40eRange::Ultra);
    }

    #[test]
    fn an_idle_tx_ring_holds_rx_at_the_start() {
        // Only RX moves: the RX ring chooses 20 µs but the vector takes the TX ring's 50 µs.
        let mut d = I40eItr::new(ITR_20K);
        assert_eq!(completions(&mut d, 1, 64, 0), None);
        assert_eq!(d.rx_range(), I40eRange::Bytes(LatencyRange::Lowest));
        assert_eq!(d.itr(), ITR_20K);
    }

    #[test]
    fn bulk_bytes_at_a_low_packet_rate_are_bulk_not_ultra() {
        let mut d = I40eItr::new(ITR_20K);
        // 101 frames of 64 KB (GRO'd TSO) before the first decision: 6.6 MB / 5000 µs = 1323
        // bytes/µs, 101 / 5000 µs = 20 200 pps: low -> bulk, 18 K/s (27 = 54 µs); the TX
        // ring's ACK goes lowest (10) and the vector takes the larger.
        d.on_rx(101, 101 * 65_536);
        d.on_tx(1, 64);
        assert_eq!(d.on_napi_complete(), Some(54_000));
        assert_eq!(d.rx_range(), I40eRange::Bytes(LatencyRange::Bulk));
    }

    #[test]
    fn ultra_stays_while_bytes_stay_high_and_falls_to_low_when_they_drop() {
        let mut d = I40eItr::new(ITR_20K);
        for _ in 0..101 {
            d.on_rx(4, 6000);
        }
        assert_eq!(d.on_napi_complete(), Some(124_000), "404 packets / 5000 µs = 80 800 pps");
        // 101 completions of 1 frame of 30 KB at 62: 3.03 MB / 12 400 µs = 244 bytes/µs > 20,
        // 8145 pps: the driver's default branch keeps ultra.
        assert_eq!(completions(&mut d, 101, 30_000, 0), None);
        assert_eq!(d.rx_range(), I40eRange::Ultra);
        // Then small frames: ≤ 20 bytes/µs, ultra -> low (25). The TX ring, idle until now,
        // was raised to 62 with RX: it must move (to lowest, 10) for RX to come down.
        assert_eq!(completions(&mut d, 101, 64, 0), None, "RX at 25, the idle TX ring holds 62");
        assert_eq!(d.itr(), ITR_8K);
        // With TX frames too, both rings step down from there: RX low -> lowest, TX lowest.
        assert_eq!(completions(&mut d, 101, 64, 64), Some(20_000));
        assert_eq!(d.rx_range(), I40eRange::Bytes(LatencyRange::Lowest));
    }

    #[test]
    fn a_start_outside_the_range_is_held_to_it() {
        assert_eq!(I40eItr::new(1).itr(), ITR_50K);
        assert_eq!(I40eItr::new(500).itr(), ITR_8K);
    }
}
