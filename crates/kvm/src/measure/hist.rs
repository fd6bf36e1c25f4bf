//! Log-linear latency histogram: values < 64 exact, then 32 sub-buckets per power of two
//! (relative error <= 1/32). Same bucket function as the guest's `hist_bucket` (guest/guest.c).
use crate::vmm::layout::HIST_BUCKETS;

/// Counts per bucket plus exact count, sum and max.
#[derive(Debug, Clone)]
pub struct Histogram {
    /// Counts per bucket.
    pub buckets: Vec<u64>,
    /// Number of values.
    pub count: u64,
    /// Sum of values.
    pub sum: u128,
    /// Largest value.
    pub max: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Self { buckets: vec![0; HIST_BUCKETS as usize], count: 0, sum: 0, max: 0 }
    }
}

/// Bucket of value `v`.
pub fn bucket(v: u64) -> usize {
    if v < 64 {
        return v as usize;
    }
    let e = 63 - v.leading_zeros() as u64;
    let idx = 64 + (e - 6) * 32 + ((v >> (e - 5)) & 31);
    idx.min(HIST_BUCKETS - 1) as usize
}

/// Smallest value in bucket `b`, and the bucket's width.
pub fn bucket_range(b: usize) -> (u64, u64) {
    if b < 64 {
        return (b as u64, 1);
    }
    let k = b as u64 - 64;
    let e = 6 + k / 32;
    let m = k % 32;
    ((32 + m) << (e - 5), 1 << (e - 5))
}

impl Histogram {
    /// Adds one value.
    pub fn record(&mut self, v: u64) {
        self.buckets[bucket(v)] += 1;
        self.count += 1;
        self.sum += v as u128;
        self.max = self.max.max(v);
    }
    /// Adds `n` values of bucket `b` (sum and max are set by the caller).
    pub fn add_bucket(&mut self, b: usize, n: u64) {
        self.buckets[b] += n;
        self.count += n;
    }
    /// Merges another histogram.
    pub fn merge(&mut self, o: &Histogram) {
        for (a, b) in self.buckets.iter_mut().zip(&o.buckets) {
            *a += b;
        }
        self.count += o.count;
        self.sum += o.sum;
        self.max = self.max.max(o.max);
    }
    /// Mean, or None when empty.
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum as f64 / self.count as f64)
    }
    /// Quantile `q` in [0, 1] (bucket midpoint, clamped to max), or None when empty.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (b, n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                let (lo, w) = bucket_range(b);
                return Some(((lo as f64) + (w as f64 - 1.0) / 2.0).min(self.max as f64));
            }
        }
        Some(self.max as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_values_with_small_relative_error() {
        for v in [0u64, 1, 63, 64, 65, 100, 1000, 12345, 1 << 20, 987_654_321] {
            let (lo, w) = bucket_range(bucket(v));
            assert!(lo <= v && v < lo + w, "v={v} lo={lo} w={w}");
            assert!(w as f64 <= (v as f64 / 32.0).max(1.0) + 1.0);
        }
        assert_eq!(bucket(u64::MAX), HIST_BUCKETS as usize - 1);
    }

    #[test]
    fn quantiles_of_a_known_set() {
        let mut h = Histogram::default();
        for v in 1..=1000u64 {
            h.record(v * 10);
        }
        let p50 = h.quantile(0.5).unwrap();
        assert!((p50 - 5000.0).abs() / 5000.0 < 0.04, "{p50}");
        assert_eq!(h.quantile(1.0).unwrap(), 10000.0);
        assert!((h.mean().unwrap() - 5005.0).abs() < 1e-9);
        assert!(Histogram::default().quantile(0.5).is_none());
    }
}
