//! A log-linear histogram of non-negative integer values (ns), in the manner of HdrHistogram.
//!
//! Values below 2^SUB_BITS are exact; above, each power of two is split into 2^SUB_BITS
//! equal buckets, so any quantile is within 1/2^SUB_BITS (< 0.8 %) of the true value. Memory is
//! at most 64 * 2^SUB_BITS counters, however many values are recorded.

const SUB_BITS: u32 = 7;
const SUB: u64 = 1 << SUB_BITS;

/// Streaming histogram with bounded memory and exact count, sum, min and max.
#[derive(Debug, Clone, Default)]
pub struct Histogram {
    buckets: Vec<u64>,
    count: u64,
    sum: u128,
    min: u64,
    max: u64,
}

#[inline]
fn bucket_of(v: u64) -> usize {
    if v < SUB {
        return v as usize;
    }
    let msb = 63 - v.leading_zeros(); // >= SUB_BITS
    let shift = msb - SUB_BITS;
    let sub = (v >> shift) & (SUB - 1);
    ((shift as u64 + 1) * SUB + sub) as usize
}

/// Smallest value that falls into bucket `b`, and the bucket's width.
fn bucket_range(b: usize) -> (u64, u64) {
    let b = b as u64;
    if b < SUB {
        return (b, 1);
    }
    let shift = b / SUB - 1;
    let sub = b % SUB;
    (((SUB + sub) << shift), 1 << shift)
}

impl Histogram {
    /// An empty histogram.
    pub fn new() -> Self {
        Self::default()
    }

    /// Record one value.
    #[inline]
    pub fn record(&mut self, v: u64) {
        self.record_n(v, 1);
    }

    /// Record `n` values equal to `v`.
    #[inline]
    pub fn record_n(&mut self, v: u64, n: u64) {
        if n == 0 {
            return;
        }
        let b = bucket_of(v);
        if b >= self.buckets.len() {
            self.buckets.resize(b + 1, 0);
        }
        self.buckets[b] += n;
        if self.count == 0 || v < self.min {
            self.min = v;
        }
        self.max = self.max.max(v);
        self.count += n;
        self.sum += v as u128 * n as u128;
    }

    /// Values counted by another recorder that kept them only to a bucket: `counts` gives each
    /// bucket's representative value and how many values fell there (recorded as that value),
    /// `sum` and `max` that recorder's exact sum and maximum (which mean and max report).
    pub fn from_counts(counts: impl IntoIterator<Item = (u64, u64)>, sum: u128, max: u64) -> Self {
        let mut h = Self::new();
        for (v, n) in counts {
            h.record_n(v, n);
        }
        if h.count > 0 {
            h.sum = sum;
            h.max = max;
            // A bucket's representative can lie above the exact maximum (one value below its
            // bucket's midpoint): the exact maximum bounds the minimum too.
            h.min = h.min.min(max);
        }
        h
    }

    /// Add every value of `other` (histograms of two threads, or two windows).
    pub fn merge(&mut self, other: &Histogram) {
        if other.count == 0 {
            return;
        }
        if other.buckets.len() > self.buckets.len() {
            self.buckets.resize(other.buckets.len(), 0);
        }
        for (a, b) in self.buckets.iter_mut().zip(&other.buckets) {
            *a += b;
        }
        self.min = if self.count == 0 { other.min } else { self.min.min(other.min) };
        self.max = self.max.max(other.max);
        self.count += other.count;
        self.sum += other.sum;
    }

    /// Number of values recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Mean, or `None` when empty.
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum as f64 / self.count as f64)
    }

    /// Largest value recorded (exact).
    pub fn max(&self) -> Option<u64> {
        (self.count > 0).then_some(self.max)
    }

    /// Smallest value recorded (exact).
    pub fn min(&self) -> Option<u64> {
        (self.count > 0).then_some(self.min)
    }

    /// The `q`-quantile (0 ≤ q ≤ 1): the midpoint of the bucket holding the ⌈q·n⌉-th value,
    /// clamped to the exact min and max.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (b, &n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                let (lo, w) = bucket_range(b);
                let mid = lo as f64 + (w as f64 - 1.0) / 2.0;
                return Some(mid.clamp(self.min as f64, self.max as f64));
            }
        }
        Some(self.max as f64)
    }

    /// The cumulative distribution as (value upper bound, fraction ≤ it), one point per
    /// non-empty bucket: what a CDF plot needs.
    pub fn cdf(&self) -> Vec<(u64, f64)> {
        let mut out = Vec::new();
        let mut seen = 0u64;
        for (b, &n) in self.buckets.iter().enumerate() {
            if n == 0 {
                continue;
            }
            seen += n;
            let (lo, w) = bucket_range(b);
            out.push(((lo + w - 1).min(self.max), seen as f64 / self.count as f64));
        }
        out
    }

    /// Forget everything (end of warm-up).
    pub fn clear(&mut self) {
        *self = Self { buckets: std::mem::take(&mut self.buckets), ..Self::default() };
        self.buckets.iter_mut().for_each(|b| *b = 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_values_in_order() {
        let mut last = 0;
        for v in [0u64, 1, 127, 128, 129, 255, 256, 1000, 1 << 20, u64::MAX / 2, u64::MAX] {
            let b = bucket_of(v);
            assert!(b >= last, "bucket order broken at {v}");
            let (lo, w) = bucket_range(b);
            assert!(lo <= v && v - lo < w, "{v} not in bucket [{lo}, {lo}+{w})");
            last = b;
        }
    }

    #[test]
    fn counts_from_another_recorder_keep_min_within_the_exact_max() {
        // One value of 12,161,214 recorded by a coarser recorder as its bucket's midpoint
        // 12,189,695 (issue 45's kvm-histogram-quantile-panic: min > max in quantile).
        let h = Histogram::from_counts([(12_189_695, 1)], 12_161_214, 12_161_214);
        assert_eq!(h.min(), Some(12_161_214));
        assert_eq!(h.quantile(0.5), Some(12_161_214.0));
        assert_eq!(h.quantile(1.0), Some(12_161_214.0));
    }

    #[test]
    fn quantiles_are_within_resolution() {
        let mut h = Histogram::new();
        for v in 1..=100_000u64 {
            h.record(v * 10);
        }
        for (q, exact) in [(0.5, 500_000.0), (0.9, 900_000.0), (0.99, 990_000.0), (0.999, 999_000.0)] {
            let got = h.quantile(q).unwrap();
            assert!((got - exact).abs() / exact < 1.0 / 128.0, "q{q}: {got} vs {exact}");
        }
        assert_eq!(h.max(), Some(1_000_000));
        assert_eq!(h.min(), Some(10));
        assert_eq!(h.mean(), Some(500_005.0));
    }

    #[test]
    fn empty_histogram_has_no_statistics() {
        let h = Histogram::new();
        assert_eq!(h.quantile(0.5), None);
        assert_eq!(h.mean(), None);
        assert!(h.cdf().is_empty());
    }

    #[test]
    fn cdf_ends_at_one_and_clear_forgets() {
        let mut h = Histogram::new();
        for v in [5, 500, 50_000] {
            h.record(v);
        }
        let cdf = h.cdf();
        assert_eq!(cdf.len(), 3);
        assert_eq!(cdf.last().unwrap().1, 1.0);
        h.clear();
        assert_eq!(h.count(), 0);
        assert_eq!(h.quantile(0.5), None);
    }

    #[test]
    fn record_n_is_n_records() {
        let (mut a, mut b) = (Histogram::new(), Histogram::new());
        for v in [3u64, 700, 70_000] {
            a.record_n(v, 5);
            (0..5).for_each(|_| b.record(v));
        }
        a.record_n(1, 0);
        assert_eq!((a.count(), a.min(), a.max(), a.mean()), (b.count(), b.min(), b.max(), b.mean()));
        assert_eq!(a.cdf(), b.cdf());
    }

    #[test]
    fn merge_equals_recording_both() {
        let (mut a, mut b, mut both) = (Histogram::new(), Histogram::new(), Histogram::new());
        for v in 1..=1000u64 {
            let h = if v % 3 == 0 { &mut a } else { &mut b };
            h.record(v * 37);
            both.record(v * 37);
        }
        let mut empty = Histogram::new();
        empty.merge(&a);
        empty.merge(&b);
        empty.merge(&Histogram::new());
        for q in [0.0, 0.5, 0.9, 0.999, 1.0] {
            assert_eq!(empty.quantile(q), both.quantile(q));
        }
        assert_eq!((empty.count(), empty.min(), empty.max(), empty.mean()), (both.count(), both.min(), both.max(), both.mean()));
    }

    #[test]
    fn from_counts_keeps_the_exact_sum_and_max() {
        let h = Histogram::from_counts([(100, 3), (1000, 1), (5, 0)], 1_350, 1_020);
        assert_eq!((h.count(), h.min(), h.max()), (4, Some(100), Some(1_020)));
        assert_eq!(h.mean(), Some(337.5));
        assert_eq!(h.quantile(0.5), Some(100.0));
        assert_eq!(Histogram::from_counts([], 10, 10).max(), None);
    }
}
