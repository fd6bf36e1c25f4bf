//! Per-entity load tracking (PELT, Linux 3.8+ `__update_load_avg`): a thread's load is its
//! weight times the share of recent time it was runnable (queued or running), averaged with a
//! geometric decay whose half-life is 32 periods of 1024 µs (y^32 = 1/2). A runqueue's
//! `runnable_load_avg` is the sum over its runnable threads. `wake_affine` compares these, so a
//! thread that runs in short bursts (a vhost worker) weighs little, a CPU-bound vCPU its full
//! weight.
//!
//! The model keeps the average in closed form between state changes (continuous decay
//! e^(−Δ ln2 / half-life)) instead of Linux's 1024 µs steps; the two agree to within a period.

use crate::engine::Time;

/// PELT half-life: 32 periods of 1024 µs (`LOAD_AVG_PERIOD`).
const HALF_LIFE_NS: f64 = 32.0 * 1_024_000.0;

/// The load average of one thread.
#[derive(Debug, Clone, Copy)]
pub struct LoadAvg {
    /// Load at `stamp`.
    value: f64,
    /// When `value` was last brought up to date.
    stamp: Time,
}

impl LoadAvg {
    /// A new thread starts at its full weight (`init_entity_runnable_average`).
    pub fn new(weight: u64) -> Self {
        LoadAvg { value: weight as f64, stamp: 0 }
    }

    /// The load at `now`, having been runnable (or not) since the last update.
    pub fn at(&self, now: Time, weight: u64, runnable: bool) -> f64 {
        let keep = (-(now.saturating_sub(self.stamp) as f64) * std::f64::consts::LN_2 / HALF_LIFE_NS).exp();
        let fill = if runnable { weight as f64 * (1.0 - keep) } else { 0.0 };
        self.value * keep + fill
    }

    /// Bring it up to `now` before the thread's runnability changes.
    pub fn update(&mut self, now: Time, weight: u64, runnable: bool) {
        self.value = self.at(now, weight, runnable);
        self.stamp = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sleeping_thread_halves_its_load_every_32_ms() {
        let l = LoadAvg::new(1024);
        assert!((l.at(32_768_000, 1024, false) - 512.0).abs() < 1e-6);
    }

    #[test]
    fn a_thread_runnable_a_tenth_of_the_time_weighs_about_a_tenth() {
        let mut l = LoadAvg::new(1024);
        let mut now = 0;
        for _ in 0..2000 {
            l.update(now + 100_000, 1024, true); // runnable 0.1 ms
            now += 100_000;
            l.update(now + 900_000, 1024, false); // asleep 0.9 ms
            now += 900_000;
        }
        let v = l.at(now, 1024, false);
        assert!((90.0..115.0).contains(&v), "{v}");
    }
}
