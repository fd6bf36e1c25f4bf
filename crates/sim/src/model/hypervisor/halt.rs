//! HLT handling: KVM halt polling, the simulator's adapter of `eventpath_policy::halt_poll` (the
//! adaptive `halt_poll_ns` the KVM testbed reproduces too). `[vm.halt_poll]` turns it on (KVM's
//! defaults: up to 200 µs, grow ×2 from 10 µs, shrink to 0); without it a halting vCPU blocks at
//! once, as before.
//!
//! `kvm_vcpu_halt`: after the HLT exit the vCPU thread polls for up to `halt_poll_ns`, staying on
//! its pCPU (busy, though the guest is halted), while it is the only runnable thread there
//! (`single_task_running() && !need_resched()`). An interrupt that arrives meanwhile resumes the
//! guest at once — no wake-up, no idle-state exit; otherwise the thread blocks. Each halt's
//! outcome (its length, whether it blocked) grows or shrinks the poll time.
//!
//! [`Halt`] owns one vCPU's side of this — the policy, the current halt, the poll window's
//! generation, the counters — and answers what the halt does; the vCPU model (`vcpu.rs`) carries
//! it out (its mode, its thread leaving the pCPU, the window's end event).

use crate::engine::Time;
use eventpath_policy::halt_poll::{HaltOutcome, HaltPoll, HaltPollConfig};

/// What a halt that begins does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HaltStart {
    /// `kvm_vcpu_block`: the thread sleeps until an interrupt wakes it.
    Block,
    /// Poll until `until`; the window's end event carries `gen` (stale once it moved on).
    Poll {
        /// End of the poll window.
        until: Time,
        /// The window's generation.
        gen: u32,
    },
}

/// One vCPU's halt handling.
#[derive(Debug)]
pub(crate) struct Halt {
    /// KVM halt polling (`[vm.halt_poll]`), if on.
    poll: Option<HaltPoll>,
    /// When the current halt began.
    start: Option<Time>,
    /// Generation of the poll window's end event.
    gen: u32,
    /// Halts that polled (window).
    pub polls: u64,
    /// Of those, halts in whose poll an interrupt came (window).
    pub polls_successful: u64,
}

impl Halt {
    /// A vCPU's halt handling, polling if `cfg` is set.
    pub fn new(cfg: Option<HaltPollConfig>) -> Self {
        Halt { poll: cfg.map(HaltPoll::new), start: None, gen: 0, polls: 0, polls_successful: 0 }
    }

    /// The vCPU halts at `now` (nothing pending at the end of its HLT exit); `alone`: its thread
    /// is the only runnable one on its pCPU and no reschedule is due, so it may poll.
    pub fn begin(&mut self, now: Time, alone: bool) -> HaltStart {
        self.start = Some(now);
        let poll = match self.poll.as_mut() {
            Some(hp) if alone => hp.begin_halt(),
            _ => 0,
        };
        if poll == 0 {
            return HaltStart::Block;
        }
        self.gen = self.gen.wrapping_add(1);
        self.polls += 1;
        HaltStart::Poll { until: now + poll as Time, gen: self.gen }
    }

    /// Is `gen` the current poll window's (its end event not stale)?
    pub fn is_current(&self, gen: u32) -> bool {
        self.gen == gen
    }

    /// An interrupt reached the vCPU while it polled: the halt ends without a wake-up.
    pub fn woken_in_poll(&mut self, now: Time) {
        self.polls_successful += 1;
        self.end(now, false);
    }

    /// The halt ended at `now` (`waited`: it had blocked): adapt the poll time.
    pub fn end(&mut self, now: Time, waited: bool) {
        if let (Some(start), Some(hp)) = (self.start.take(), self.poll.as_mut()) {
            hp.end_halt(HaltOutcome { halt_ns: now - start, waited, valid_wakeup: true });
        }
    }

    /// Start a new measurement window.
    pub fn reset_metrics(&mut self) {
        self.polls = 0;
        self.polls_successful = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> HaltPollConfig {
        HaltPollConfig::default()
    }

    #[test]
    fn without_polling_a_halt_blocks() {
        let mut h = Halt::new(None);
        assert_eq!(h.begin(100, true), HaltStart::Block);
        assert_eq!(h.polls, 0);
    }

    #[test]
    fn a_thread_that_is_not_alone_blocks_at_once() {
        let mut h = Halt::new(Some(cfg()));
        assert_eq!(h.begin(100, false), HaltStart::Block);
    }

    #[test]
    fn a_poll_that_ends_in_a_wake_up_grows_the_window_and_counts_as_successful() {
        let mut h = Halt::new(Some(cfg()));
        // KVM starts at 0 and grows on the first short halt that blocked.
        let first = h.begin(0, true);
        if first == HaltStart::Block {
            h.end(5_000, true);
        }
        let HaltStart::Poll { until, gen } = h.begin(10_000, true) else { panic!("no poll after a short blocked halt") };
        assert!(until > 10_000 && h.is_current(gen));
        h.woken_in_poll(12_000);
        assert_eq!((h.polls, h.polls_successful), (1, 1));
        let HaltStart::Poll { gen: next, .. } = h.begin(20_000, true) else { panic!("the window shrank to nothing") };
        assert!(!h.is_current(gen) && h.is_current(next), "a new window makes the old end event stale");
        h.reset_metrics();
        assert_eq!((h.polls, h.polls_successful), (0, 0));
    }
}
