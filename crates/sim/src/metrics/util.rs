//! Time-weighted utilization: how long something was busy inside the measurement window.

use crate::engine::Time;

/// Accumulates busy time of one resource (a pCPU, a thread). Call [`BusyTime::set`] whenever
/// the resource becomes busy or idle; [`BusyTime::reset`] at the end of warm-up.
#[derive(Debug, Clone, Default)]
pub struct BusyTime {
    since: Option<Time>,
    busy_ns: u64,
}

impl BusyTime {
    /// Mark the resource busy (`true`) or idle (`false`) from `now` on.
    #[inline]
    pub fn set(&mut self, now: Time, busy: bool) {
        match (self.since, busy) {
            (None, true) => self.since = Some(now),
            (Some(t), false) => {
                self.busy_ns += now - t;
                self.since = None;
            }
            _ => {}
        }
    }

    /// Whether it is busy now.
    pub fn is_busy(&self) -> bool {
        self.since.is_some()
    }

    /// Start a new window at `now`, keeping the current busy/idle state.
    pub fn reset(&mut self, now: Time) {
        self.busy_ns = 0;
        if self.since.is_some() {
            self.since = Some(now);
        }
    }

    /// Busy nanoseconds up to `now` in the current window.
    pub fn busy_ns(&self, now: Time) -> u64 {
        self.busy_ns + self.since.map_or(0, |t| now - t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accumulates_only_busy_spans_in_window() {
        let mut b = BusyTime::default();
        b.set(10, true);
        b.set(30, false);
        b.set(50, true);
        assert_eq!(b.busy_ns(60), 30);
        b.reset(60);
        assert_eq!(b.busy_ns(100), 40);
        b.set(100, false);
        b.set(100, false);
        assert_eq!(b.busy_ns(200), 40);
        assert!(!b.is_busy());
    }
}
