//! Metric primitives: counters by reason, streaming latency histograms, time-weighted
//! utilization and time series. All are bounded in memory whatever the run length.

mod exits;
mod histogram;
mod series;
mod trace;
mod util;

pub use exits::{ExitCounters, ExitReason};
pub use histogram::Histogram;
pub use series::Series;
pub use trace::Name;
pub use util::BusyTime;
