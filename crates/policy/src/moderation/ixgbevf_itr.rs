//! The 82599 VF driver's dynamic interrupt throttle (Linux ixgbevf `ixgbevf_set_itr`, its
//! default `rx-usecs` = 1): the PF driver's algorithm ([`super::ixgbe_itr`]) with, in Linux
//! 3.6's ixgbevf 2.6.0-k (DID's era), the PF's 8 K/s bulk target too (later VF drivers: 12 K/s,
//! [`ITR_12K`]). A one-vCPU guest's VF has one vector for its RX and TX ring
//! (`ixgbevf_set_interrupt_capability` asks for min(queues, online CPUs) queue vectors).
//! SR-IOV's small-packet request/response traffic sits in the lowest range part of the time, an
//! interrupt for nearly every packet: the interrupt rate DID §5.7 blames for the SRIOV
//! configuration's exits.

pub use super::ixgbe_itr::{DynamicItr, LatencyRange, ITR_100K, ITR_12K, ITR_20K, ITR_8K};

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
        let mut d = DynamicItr::ixgbevf();
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
        let mut d = DynamicItr::ixgbevf();
        // 50 bytes/µs: lowest -> low on the first update, low -> bulk on the second.
        complete(&mut d, 50 * 50);
        assert_eq!(d.itr(), ITR_20K, "the low range's target is the starting value: no change");
        assert_eq!(d.on_napi_complete(), None, "no packets: no update");
        let n = complete(&mut d, 50 * 50).unwrap();
        assert!(d.itr() > ITR_20K && n > 50_000, "{} {n}", d.itr());
        for _ in 0..30 {
            complete(&mut d, 50 * 84);
        }
        assert!((450..=ITR_8K).contains(&d.itr()), "approaches 500 (125 µs): {}", d.itr());
    }

    #[test]
    fn the_vector_follows_the_busier_ring() {
        let mut d = DynamicItr::ixgbevf();
        d.on_tx(10, 40 * 50);
        d.on_rx(1, 64);
        d.on_napi_complete();
        d.on_tx(10, 40 * 50);
        d.on_rx(1, 64);
        d.on_napi_complete();
        assert!(d.itr() > ITR_20K, "TX in bulk lengthens the interval although RX is light: {}", d.itr());
    }
}
