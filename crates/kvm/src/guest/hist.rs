//! The guest's request-latency buckets (guest.c `hist_bucket`: values < 64 exact, then 32
//! sub-buckets per power of two, `HIST_BUCKETS` in all), read from a control block and turned
//! into the simulator's [`Histogram`] (TSC ticks).
use crate::vmm::layout::HIST_BUCKETS;
use eventpath_sim::metrics::Histogram;

/// Smallest value in guest bucket `b`, and the bucket's width.
pub fn bucket_range(b: usize) -> (u64, u64) {
    if b < 64 {
        return (b as u64, 1);
    }
    let k = b as u64 - 64;
    let e = 6 + k / 32;
    let m = k % 32;
    ((32 + m) << (e - 5), 1 << (e - 5))
}

/// The value a guest bucket's counts are recorded as: its midpoint, rounded down.
fn representative(b: usize) -> u64 {
    let (lo, w) = bucket_range(b);
    lo + (w - 1) / 2
}

/// A vCPU's latency record as read at one instant (running totals since the guest started).
#[derive(Debug, Clone, Default)]
pub struct GuestLatencies {
    /// Count per guest bucket (`HIST_BUCKETS` of them).
    pub counts: Vec<u64>,
    /// Sum of all latencies. Unit: TSC ticks.
    pub sum: u64,
    /// Largest latency. Unit: TSC ticks.
    pub max: u64,
}

impl GuestLatencies {
    /// The latencies recorded after `earlier` was read, in TSC ticks: each at its bucket's
    /// midpoint, the sum exact, the maximum the guest's running one.
    pub fn since(&self, earlier: &GuestLatencies) -> Histogram {
        let old = |b: usize| earlier.counts.get(b).copied().unwrap_or(0);
        let counts = self.counts.iter().enumerate().filter(|&(b, &n)| n > old(b)).map(|(b, &n)| (representative(b), n - old(b)));
        Histogram::from_counts(counts, u128::from(self.sum.saturating_sub(earlier.sum)), self.max)
    }
}

const _: () = assert!(HIST_BUCKETS == 1024, "bucket_range mirrors guest.c for 1024 buckets");

#[cfg(test)]
mod tests {
    use super::*;

    /// guest.c `hist_bucket`, verbatim.
    fn hist_bucket(v: u64) -> u64 {
        if v < 64 {
            return v;
        }
        let e = 63 - v.leading_zeros() as u64;
        let idx = 64 + (e - 6) * 32 + ((v >> (e - 5)) & 31);
        if idx < HIST_BUCKETS { idx } else { HIST_BUCKETS - 1 }
    }

    #[test]
    fn bucket_range_inverts_the_guests_bucket_function() {
        for v in [0u64, 1, 63, 64, 65, 100, 1000, 12345, 1 << 20, 987_654_321] {
            let (lo, w) = bucket_range(hist_bucket(v) as usize);
            assert!(lo <= v && v < lo + w, "v={v} lo={lo} w={w}");
            assert!(w as f64 <= (v as f64 / 32.0).max(1.0) + 1.0);
            assert_eq!(hist_bucket(representative(hist_bucket(v) as usize)), hist_bucket(v));
        }
        assert_eq!(hist_bucket(u64::MAX), HIST_BUCKETS - 1);
    }

    #[test]
    fn since_counts_only_new_values_with_exact_sum_and_max() {
        let mut a = GuestLatencies { counts: vec![0; HIST_BUCKETS as usize], sum: 0, max: 0 };
        let mut b = a.clone();
        for v in 1..=1000u64 {
            let g = if v <= 100 { &mut a } else { &mut b };
            g.counts[hist_bucket(v * 10) as usize] += 1;
        }
        for (x, y) in b.counts.iter_mut().zip(&a.counts) {
            *x += y; // b is read after a: running totals
        }
        (a.sum, a.max) = ((1..=100u64).map(|v| v * 10).sum(), 1000);
        (b.sum, b.max) = ((1..=1000u64).map(|v| v * 10).sum(), 10_000);
        let h = b.since(&a);
        assert_eq!(h.count(), 900);
        assert_eq!(h.mean(), Some(5_505.0));
        assert_eq!(h.max(), Some(10_000));
        let p50 = h.quantile(0.5).unwrap();
        assert!((p50 - 5_500.0).abs() / 5_500.0 < 0.04, "{p50}");
        assert_eq!(h.quantile(1.0), Some(10_000.0));
        assert_eq!(a.since(&a).quantile(0.5), None);
    }
}
