//! HLT handling: KVM halt polling, the simulator's adapter of `eventpath_policy::halt_poll` (the
//! adaptive `halt_poll_ns` the KVM testbed reproduces too). `[vm.halt_poll]` sets it (KVM's
//! defaults: up to 200 µs, grow ×2 from 10 µs, shrink to 0); without it the profile's host
//! kernel's default applies (`host.halt_poll_ns`; a profile whose KVM predates halt polling,
//! Linux 4.0, has none), and with none a halting vCPU blocks at once.
//!
//! `kvm_vcpu_halt`: after the HLT exit the vCPU thread polls for up to `halt_poll_ns`, staying on
//! its pCPU (busy, though the guest is halted), while it is the only runnable thread there
//! (`single_task_running() && !need_resched()`). An interrupt that arrives meanwhile resumes the
//! guest at once — no wake-up, no idle-state exit; otherwise the thread blocks. Each halt's
//! outcome (its length, whether it blocked) grows or shrinks the poll time.
//!
//! [`Halt`] owns one vCPU's side of this — the policy, the current halt, the poll window's
//! timer, the counters — and answers what the halt does; the vCPU model (`vcpu_run.rs`) carries it
//! out (its mode, its thread leaving the pCPU, the window's end event). The window's end is a
//! restartable timer (`engine::Timer`): a halt that ends early cancels it, and the next halt's
//! window re-arms the one event still pending instead of adding another.

use crate::engine::{Fired, Time, Timer};
use eventpath_policy::halt_poll::{HaltOutcome, HaltPoll, HaltPollConfig};

/// What a halt that begins does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HaltStart {
    /// `kvm_vcpu_block`: the thread sleeps until an interrupt wakes it.
    Block,
    /// Poll until the window's end; schedule its event at `event`, if the one pending does not
    /// come early enough.
    Poll {
        /// When to schedule the window's `HaltPollEnd` (None: the pending one re-arms itself).
        event: Option<Time>,
    },
}

/// One vCPU's halt handling.
#[derive(Debug)]
pub(crate) struct Halt {
    /// KVM halt polling (`[vm.halt_poll]`), if on.
    poll: Option<HaltPoll>,
    /// When the current halt began.
    start: Option<Time>,
    /// The poll window's end.
    window: Timer,
    /// Halts that polled (window).
    pub polls: u64,
    /// Of those, halts in whose poll an interrupt came (window).
    pub polls_successful: u64,
    /// The poll in progress began here (or at the window's start, if it began before).
    poll_since: Option<Time>,
    /// Time the vCPU thread polled (window, ns): host CPU, not guest time.
    pub poll_ns: Time,
}

impl Halt {
    /// A vCPU's halt handling, polling if `cfg` is set.
    pub fn new(cfg: Option<HaltPollConfig>) -> Self {
        Halt { poll: cfg.map(HaltPoll::new), start: None, window: Timer::default(), polls: 0, polls_successful: 0, poll_since: None, poll_ns: 0 }
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
        self.polls += 1;
        self.poll_since = Some(now);
        HaltStart::Poll { event: self.window.arm(now + poll as Time) }
    }

    /// The window's end event fired at `now`: whether the poll ends now (else the timer was
    /// re-armed, `Fired::Reschedule`, or cancelled).
    pub fn window_fired(&mut self, now: Time) -> Fired {
        self.window.fired(now)
    }

    /// The poll stops at `now`, at or before its window's end: the vCPU blocks (the window
    /// ended, or another thread wants its pCPU).
    pub fn stop_polling(&mut self, now: Time) {
        self.window.cancel();
        self.poll_ended(now);
    }

    fn poll_ended(&mut self, now: Time) {
        if let Some(since) = self.poll_since.take() {
            self.poll_ns += now.saturating_sub(since);
        }
    }

    /// An interrupt reached the vCPU while it polled: the halt ends without a wake-up.
    pub fn woken_in_poll(&mut self, now: Time) {
        self.window.cancel();
        self.poll_ended(now);
        self.polls_successful += 1;
        self.end(now, false);
    }

    /// The halt ended at `now` (`waited`: it had blocked): adapt the poll time.
    pub fn end(&mut self, now: Time, waited: bool) {
        if let (Some(start), Some(hp)) = (self.start.take(), self.poll.as_mut()) {
            hp.end_halt(HaltOutcome { halt_ns: now - start, waited, valid_wakeup: true });
        }
    }

    /// Start a new measurement window at `now`.
    pub fn reset_metrics(&mut self, now: Time) {
        self.polls = 0;
        self.polls_successful = 0;
        self.poll_ns = 0;
        if self.poll_since.is_some() {
            self.poll_since = Some(now);
        }
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
    fn a_poll_that_ends_in_a_wake_up_keeps_its_window_and_counts_as_successful() {
        let mut h = Halt::new(Some(cfg()));
        // KVM starts at 0 and grows on the first short halt that blocked.
        let first = h.begin(0, true);
        if first == HaltStart::Block {
            h.end(5_000, true);
        }
        let HaltStart::Poll { event: Some(end) } = h.begin(10_000, true) else { panic!("no poll after a short blocked halt") };
        assert!(end > 10_000);
        h.woken_in_poll(12_000);
        assert_eq!((h.polls, h.polls_successful), (1, 1));
        // The next halt's window ends later: the pending event re-arms itself when it fires.
        let HaltStart::Poll { event } = h.begin(20_000, true) else { panic!("the window shrank to nothing") };
        assert_eq!(event, None, "one window event pending, not two");
        let Fired::Reschedule(later) = h.window_fired(end) else { panic!("the old event must re-arm") };
        assert!(later > end);
        assert_eq!(h.window_fired(later), Fired::Expired);
        h.reset_metrics(later);
        assert_eq!((h.polls, h.polls_successful), (0, 0));
    }

    #[test]
    fn a_poll_stopped_early_leaves_its_event_idle() {
        let mut h = Halt::new(Some(cfg()));
        if h.begin(0, true) == HaltStart::Block {
            h.end(5_000, true);
        }
        let HaltStart::Poll { event: Some(end) } = h.begin(10_000, true) else { panic!("no poll") };
        h.stop_polling(12_000);
        assert_eq!(h.window_fired(end), Fired::Idle);
        assert_eq!(h.poll_ns, 2_000);
    }
}
