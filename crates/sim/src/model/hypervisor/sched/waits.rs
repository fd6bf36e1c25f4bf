//! A thread's waits for a pCPU, as both host schedulers keep them: when it last became
//! runnable, its run delay (`sched_info.run_delay`, lifetime) and its longest single wait —
//! since the liveness watchdog last asked, and over the run (the starvation audit).

use crate::engine::Time;

/// One thread's waits for a pCPU.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Waits {
    /// When it last became queued (runnable, waiting for its pCPU).
    pub(crate) queued_since: Time,
    /// Time spent queued, lifetime, excluding the current wait.
    run_delay: u64,
    /// Longest single wait since [`Waits::take_max`] last read it.
    max_wait: u64,
    /// Longest single wait over the whole run.
    longest_wait: u64,
}

impl Waits {
    /// It became runnable (queued) at `now`.
    pub(crate) fn queue(&mut self, now: Time) {
        self.queued_since = now;
    }

    /// It was switched in at `now`: its wait ends.
    pub(crate) fn run(&mut self, now: Time) {
        let wait = now - self.queued_since;
        self.run_delay += wait;
        self.max_wait = self.max_wait.max(wait);
        self.longest_wait = self.longest_wait.max(wait);
    }

    /// The wait under way at `now` (0 unless `queued`).
    fn ongoing(&self, now: Time, queued: bool) -> u64 {
        if queued { now - self.queued_since } else { 0 }
    }

    /// Lifetime run delay up to `now`.
    pub(crate) fn delay(&self, now: Time, queued: bool) -> u64 {
        self.run_delay + self.ongoing(now, queued)
    }

    /// The longest single wait since the last call (the one under way as far as it has got),
    /// and start over.
    pub(crate) fn take_max(&mut self, now: Time, queued: bool) -> u64 {
        let ongoing = self.ongoing(now, queued);
        std::mem::take(&mut self.max_wait).max(ongoing)
    }

    /// The longest single wait over the run up to `now`.
    pub(crate) fn longest(&self, now: Time, queued: bool) -> u64 {
        self.longest_wait.max(self.ongoing(now, queued))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_add_up_and_the_longest_is_kept_and_taken() {
        let mut w = Waits::default();
        w.queue(10);
        w.run(40); // 30
        w.queue(100);
        w.run(110); // 10
        w.queue(200);
        assert_eq!(w.delay(250, true), 90);
        assert_eq!(w.longest(250, true), 50);
        assert_eq!(w.take_max(220, true), 30);
        assert_eq!(w.take_max(220, true), 20, "taken: only the ongoing wait is left");
        assert_eq!(w.longest(300, false), 30);
    }
}
