//! A physical NIC's receive interrupt throttle as its Linux driver runs it: a fixed interval
//! (ethtool `rx-usecs N`, adaptive off), or the driver's adaptive ITR — ixgbe's
//! ([`super::ixgbe_itr`], 82599/X520) or i40e's ([`super::i40e_itr`], XL710). The adaptive
//! ones start at a configured interval and then choose their own from the bytes and packets
//! each NAPI completion cleaned; they never leave the driver's range.

use super::i40e_itr::I40eItr;
use super::ixgbe_itr::DynamicItr;

/// Which throttle a NIC's driver runs (profile `host.nic_itr`, `client.nic_itr`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(rename_all = "snake_case"))]
pub enum NicItrDriver {
    /// A fixed interval (adaptive off).
    #[default]
    Fixed,
    /// ixgbe's adaptive ITR: 100 K / 20 K / 8 K interrupts/s, smoothed, at every completion.
    Ixgbe,
    /// i40e's adaptive ITR: 50 K / 20 K / 18 K / 8 K interrupts/s, every 101 completions.
    I40e,
}

impl NicItrDriver {
    /// Every choice as a file names it.
    pub const NAMES: [&'static str; 3] = ["fixed", "ixgbe", "i40e"];

    /// The name a file gives it.
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// The intervals (ns) an adaptive driver moves between: a start interval must lie in it.
    /// `None`: fixed, any interval.
    pub fn range_ns(self) -> Option<(u64, u64)> {
        match self {
            NicItrDriver::Fixed => None,
            NicItrDriver::Ixgbe => Some(DynamicItr::IXGBE_RANGE_NS),
            NicItrDriver::I40e => Some(I40eItr::RANGE_NS),
        }
    }

    /// The adaptive throttle starting at `start_ns` (inside [`Self::range_ns`]); `None` for
    /// a fixed one.
    pub fn adaptive(self, start_ns: u64) -> Option<AdaptiveItr> {
        match self {
            NicItrDriver::Fixed => None,
            // EITR's µs << 2; i40e's register counts 2 µs.
            NicItrDriver::Ixgbe => Some(AdaptiveItr::Ixgbe(DynamicItr::ixgbe(u32::try_from(start_ns / 250).unwrap_or(u32::MAX)))),
            NicItrDriver::I40e => Some(AdaptiveItr::I40e(I40eItr::new(u16::try_from(start_ns / 2_000).unwrap_or(u16::MAX)))),
        }
    }
}

/// An adaptive driver's state, dispatched without boxing.
#[derive(Debug, Clone)]
pub enum AdaptiveItr {
    /// See [`DynamicItr::ixgbe`].
    Ixgbe(DynamicItr),
    /// See [`I40eItr`].
    I40e(I40eItr),
}

impl AdaptiveItr {
    /// NAPI cleaned `packets` received frames of `bytes` in all.
    pub fn on_rx(&mut self, packets: u64, bytes: u64) {
        match self {
            AdaptiveItr::Ixgbe(d) => d.on_rx(packets, bytes),
            AdaptiveItr::I40e(d) => d.on_rx(packets, bytes),
        }
    }

    /// The vector's TX ring completed `packets` frames of `bytes` in all.
    pub fn on_tx(&mut self, packets: u64, bytes: u64) {
        match self {
            AdaptiveItr::Ixgbe(d) => d.on_tx(packets, bytes),
            AdaptiveItr::I40e(d) => d.on_tx(packets, bytes),
        }
    }

    /// NAPI completed: the new RX interval (ns) when it changed.
    pub fn on_napi_complete(&mut self) -> Option<u64> {
        match self {
            AdaptiveItr::Ixgbe(d) => d.on_napi_complete(),
            AdaptiveItr::I40e(d) => d.on_napi_complete(),
        }
    }

    /// The current RX interval.
    pub fn interval_ns(&self) -> u64 {
        match self {
            AdaptiveItr::Ixgbe(d) => d.interval_ns(),
            AdaptiveItr::I40e(d) => d.interval_ns(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_driver_starts_where_it_is_told_inside_its_range() {
        assert!(NicItrDriver::Fixed.adaptive(50_000).is_none());
        assert_eq!(NicItrDriver::Ixgbe.adaptive(50_000).unwrap().interval_ns(), 50_000);
        assert_eq!(NicItrDriver::I40e.adaptive(50_000).unwrap().interval_ns(), 50_000);
        // EITR counts 2 µs: 67 µs is written as 268 (µs << 2) and runs as 66 µs.
        assert_eq!(NicItrDriver::Ixgbe.adaptive(67_067).unwrap().interval_ns(), 66_000);
        assert_eq!(NicItrDriver::Ixgbe.adaptive(10_000).unwrap().interval_ns(), 10_000);
        // IXGBE_8K_ITR is 500: EITR keeps bits 3.. (496), 124 µs.
        assert_eq!(NicItrDriver::Ixgbe.adaptive(125_000).unwrap().interval_ns(), 124_000);
        assert_eq!(NicItrDriver::I40e.adaptive(20_000).unwrap().interval_ns(), 20_000);
        assert_eq!(NicItrDriver::I40e.adaptive(124_000).unwrap().interval_ns(), 124_000);
        assert_eq!(NicItrDriver::Fixed.range_ns(), None);
    }

    #[test]
    fn the_same_light_traffic_takes_each_driver_to_its_lowest_class() {
        for (d, lowest) in [(NicItrDriver::Ixgbe, 10_000), (NicItrDriver::I40e, 20_000)] {
            let mut a = d.adaptive(50_000).unwrap();
            for _ in 0..400 {
                a.on_rx(1, 100);
                a.on_tx(1, 100);
                a.on_napi_complete();
            }
            assert_eq!(a.interval_ns(), lowest, "{}", d.name());
        }
    }
}
