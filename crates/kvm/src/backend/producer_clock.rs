//! ELVIS's producer run clock in the testbed: the adapter from this world's state to the
//! observation `eventpath_policy::elvis::ElvisScheduler::on_empty` takes (how long the vCPU
//! that fills a polled queue has run, ns). The simulator's adapter reads its host scheduler's
//! exact run clock (`eventpath_sim::model::sched::Scheduler::producers_run_ns`, used by
//! `crates/sim/src/model/io/elvis.rs`); here the vCPU thread's run time comes from
//! `/proc/self/task/TID/schedstat`, a file read, so it is read at most once per
//! [`ProducerClock::MIN_READ_INTERVAL_NS`] (1 ms, a tenth of ELVIS's default idle limit) and is
//! up to that much wall time stale: the value returned at `now` is the run time at some
//! `read_at` with `now - read_at < 1 ms`, hence at most 1 ms of run time behind.
//!
//! The source is pluggable ([`RunClockSource`]) so that a test can feed a scripted run-clock
//! timeline instead of `/proc` (`crates/kvm/tests/elvis_two_worlds.rs`).

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

/// Where a [`ProducerClock`] reads the producer's run time from.
pub trait RunClockSource {
    /// The producer's lifetime run time (ns) as read at wall time `now_ns`.
    fn read(&mut self, now_ns: u64) -> u64;
}

/// A closure of the wall time is a source (tests: a scripted timeline).
impl<F: FnMut(u64) -> u64> RunClockSource for F {
    fn read(&mut self, now_ns: u64) -> u64 {
        self(now_ns)
    }
}

/// The testbed's source: the first field of `/proc/self/task/TID/schedstat` (the kernel's
/// `sum_exec_runtime`) of the vCPU thread whose id is published in the cell (0 until the vCPU
/// thread runs; an unreadable file reads 0).
#[derive(Clone, Debug)]
pub struct ThreadSchedstat(pub Arc<AtomicI32>);

impl RunClockSource for ThreadSchedstat {
    fn read(&mut self, _now_ns: u64) -> u64 {
        crate::vmm::sys::task_cpu_ns(self.0.load(Ordering::Relaxed))
    }
}

/// The producer's run clock, sampled at most once per [`Self::MIN_READ_INTERVAL_NS`] of wall
/// time. Read only when the policy asks (the closure `on_empty` calls for a polled queue).
#[derive(Clone, Debug)]
pub struct ProducerClock<S> {
    source: S,
    /// The last read's value and its wall time (`read_at` 0: never read; the testbed's clock,
    /// TSC nanoseconds since boot, is never 0).
    last: (u64, u64),
}

impl<S: RunClockSource> ProducerClock<S> {
    /// Minimum wall time between two reads of the source, ns.
    pub const MIN_READ_INTERVAL_NS: u64 = 1_000_000;

    /// A clock that has not read its source yet.
    pub fn new(source: S) -> Self {
        ProducerClock { source, last: (0, 0) }
    }

    /// The producer's run time (ns) at wall time `now_ns`, at most `MIN_READ_INTERVAL_NS`
    /// stale: reads the source when it was never read or last read that long ago, else returns
    /// the last read. A new read never returns less than the previous one.
    pub fn run_ns(&mut self, now_ns: u64) -> u64 {
        let (value, read_at) = self.last;
        if read_at == 0 || now_ns.saturating_sub(read_at) >= Self::MIN_READ_INTERVAL_NS {
            self.last = (self.source.read(now_ns), now_ns);
        }
        self.last.0.max(value)
    }

    /// Wall time of the last read (0: never).
    pub fn read_at(&self) -> u64 {
        self.last.1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn reads_at_most_once_per_millisecond_and_is_otherwise_the_last_read() {
        let reads = Cell::new(0);
        // Run clock = wall time (a producer that always runs).
        let mut c = ProducerClock::new(|now: u64| {
            reads.set(reads.get() + 1);
            now
        });
        assert_eq!(c.run_ns(5_000_000), 5_000_000);
        assert_eq!(c.run_ns(5_400_000), 5_000_000, "0.4 ms later: the cached read");
        assert_eq!(c.run_ns(5_999_999), 5_000_000);
        assert_eq!(reads.get(), 1);
        assert_eq!(c.run_ns(6_000_000), 6_000_000, "1 ms later: a new read");
        assert_eq!((reads.get(), c.read_at()), (2, 6_000_000));
    }

    #[test]
    fn staleness_is_below_the_read_interval() {
        let mut c = ProducerClock::new(|now: u64| now);
        for now in (1..200).map(|k| 1_000_000 + k * 70_000) {
            let v = c.run_ns(now);
            assert!(v <= now && now - v < ProducerClock::<fn(u64) -> u64>::MIN_READ_INTERVAL_NS, "{v} at {now}");
        }
    }
}
