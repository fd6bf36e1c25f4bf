//! Processor idle states (C-states) and the idle governor that picks one.
//!
//! A thread woken onto an idle pCPU runs only after the pCPU leaves its idle state, so the
//! wake-up latency depends on how deep the pCPU went: about 1 µs from C1, 80–100 µs from C6
//! on the Xeons of the seeds' testbeds (`intel_idle` tables in the profiles). Linux chooses
//! the state when the pCPU goes idle with the *menu* governor (drivers/cpuidle/governors/
//! menu.c): it predicts the idle period from the recent ones (`get_typical_interval`) and
//! takes the deepest state whose target residency fits the prediction. A pCPU that goes idle
//! every few µs (a busy vhost thread's) therefore stays in C1 and wakes fast; one idle for
//! milliseconds sinks to C6 and wakes slowly.
//!
//! Simplifications: when the recent periods are too scattered to be "typical", Linux falls
//! back to the next timer event scaled by a learned correction factor; the model uses their
//! mean (what that factor converges to). The iowait/load performance multiplier and PM QoS
//! limits are not modelled.

use crate::engine::Time;

pub use crate::profile::MAX_CSTATES;

/// Recent idle periods the governor remembers (menu.c `INTERVALS`).
const INTERVALS: usize = 8;

/// The host's idle states, shallowest first: (exit latency, target residency) in ns.
#[derive(Debug, Clone, Copy, Default)]
pub struct CStateTable {
    states: [(u64, u64); MAX_CSTATES],
    n: usize,
}

impl CStateTable {
    /// A table from (exit latency, target residency) pairs, shallowest first.
    pub fn new(states: impl IntoIterator<Item = (u64, u64)>) -> CStateTable {
        let mut t = CStateTable::default();
        for s in states.into_iter().take(MAX_CSTATES) {
            t.states[t.n] = s;
            t.n += 1;
        }
        t
    }

    /// Number of states (0: idle pCPUs wake without an idle-state exit).
    pub fn len(&self) -> usize {
        self.n
    }

    /// True when the profile lists no idle states.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Exit latency of state `i` (ns).
    pub fn exit_latency(&self, i: usize) -> u64 {
        self.states[i].0
    }

    /// menu.c's choice for a predicted idle period: the deepest state whose target residency
    /// does not exceed it (the shallowest state when none fits).
    pub fn select(&self, predicted_ns: u64) -> usize {
        (1..self.n).rev().find(|&i| self.states[i].1 <= predicted_ns).unwrap_or(0)
    }
}

/// One pCPU's idle bookkeeping: when it went idle and its recent idle periods.
#[derive(Debug, Clone, Copy, Default)]
pub struct IdleHistory {
    /// When the pCPU last went idle.
    pub since: Time,
    intervals: [u64; INTERVALS],
    filled: usize,
    next: usize,
}

impl IdleHistory {
    /// Record a finished idle period.
    pub fn record(&mut self, ns: u64) {
        self.intervals[self.next] = ns;
        self.next = (self.next + 1) % INTERVALS;
        self.filled = (self.filled + 1).min(INTERVALS);
    }

    /// The predicted idle period (ns); `u64::MAX` before any history (deepest state).
    ///
    /// menu.c `get_typical_interval` (4.4): the mean of the recent periods counts as typical
    /// when it exceeds six standard deviations (with at least 3/4 of the samples kept) or the
    /// deviation is at most 20 µs; otherwise the largest periods are dropped and the test
    /// repeated until only 3/4 of them remain.
    pub fn predict(&self) -> u64 {
        if self.filled == 0 {
            return u64::MAX;
        }
        let all = &self.intervals[..self.filled];
        let mut thresh = u64::MAX;
        loop {
            let (mut n, mut sum, mut max) = (0u64, 0u128, 0u64);
            for &x in all.iter().filter(|&&x| x <= thresh) {
                n += 1;
                sum += x as u128;
                max = max.max(x);
            }
            let avg = (sum / n as u128) as u64;
            let var = all.iter().filter(|&&x| x <= thresh).map(|&x| (x as i128 - avg as i128).pow(2) as u128).sum::<u128>()
                / n as u128;
            let stddev = (var as f64).sqrt() as u64;
            if (avg > 6 * stddev && n * 4 >= self.filled as u64 * 3) || stddev <= 20_000 {
                return avg;
            }
            if n * 4 <= self.filled as u64 * 3 || max == 0 {
                // Not typical: Linux then uses the next timer × a learned correction factor;
                // the model stands in for it with the mean of all recent periods.
                return (all.iter().map(|&x| x as u128).sum::<u128>() / self.filled as u128) as u64;
            }
            thresh = max - 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ivt() -> CStateTable {
        // intel_idle ivt_cstates: C1 1/1, C1E 10/80, C3 59/156, C6 82/300 (µs).
        CStateTable::new([(1_000, 1_000), (10_000, 80_000), (59_000, 156_000), (82_000, 300_000)])
    }

    #[test]
    fn deepest_state_that_fits_the_prediction() {
        let t = ivt();
        assert_eq!(t.select(500), 0, "shorter than every residency: the shallowest");
        assert_eq!(t.select(10_000), 0);
        assert_eq!(t.select(80_000), 1);
        assert_eq!(t.select(200_000), 2);
        assert_eq!(t.select(u64::MAX), 3);
        assert_eq!(CStateTable::default().len(), 0);
    }

    #[test]
    fn short_regular_idles_predict_short() {
        let mut h = IdleHistory::default();
        assert_eq!(h.predict(), u64::MAX, "no history: as deep as possible");
        for _ in 0..8 {
            h.record(9_000);
        }
        assert_eq!(h.predict(), 9_000);
        assert_eq!(ivt().select(h.predict()), 0, "a vhost core idle ~9 µs at a time stays in C1");
    }

    #[test]
    fn one_long_outlier_is_discarded() {
        let mut h = IdleHistory::default();
        for x in [10_000, 11_000, 9_000, 10_000, 10_000, 12_000, 9_000, 5_000_000] {
            h.record(x);
        }
        let p = h.predict();
        assert!(p < 20_000, "the 5 ms outlier is dropped, prediction {p}");
    }

    #[test]
    fn scattered_idles_fall_back_to_the_mean() {
        let mut h = IdleHistory::default();
        for x in [1_000, 400_000, 2_000, 900_000, 3_000, 700_000, 5_000, 600_000] {
            h.record(x);
        }
        let mean = (1_000 + 400_000 + 2_000 + 900_000 + 3_000 + 700_000 + 5_000 + 600_000) / 8;
        assert_eq!(h.predict(), mean);
    }
}
