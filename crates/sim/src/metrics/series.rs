//! A time series sampled at a fixed interval (e.g. an adaptive interrupt rate over time).

use crate::engine::Time;

/// Samples of one named quantity, taken by the model every `interval_ns`.
#[derive(Debug, Clone)]
pub struct Series {
    /// What is sampled, e.g. `"vm0/itr_per_s"`.
    pub name: String,
    /// Sampling interval in ns.
    pub interval_ns: Time,
    /// (time ns, value) pairs in time order.
    pub points: Vec<(Time, f64)>,
}

impl Series {
    /// An empty series.
    pub fn new(name: impl Into<String>, interval_ns: Time) -> Self {
        Self { name: name.into(), interval_ns, points: Vec::new() }
    }

    /// Append a sample; times must not go backwards.
    pub fn push(&mut self, t: Time, v: f64) {
        debug_assert!(self.points.last().is_none_or(|&(lt, _)| lt <= t));
        self.points.push((t, v));
    }
}
