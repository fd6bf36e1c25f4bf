//! Guest halt polling (`[vm.guest_halt_poll]`): the simulator's adapter of
//! `eventpath_policy::guest_haltpoll`, the guest's cpuidle-haltpoll driver and governor.
//!
//! When the guest would idle, the governor picks a poll in guest mode (up to `poll_limit_ns`)
//! or HLT. The poll is the vCPU running the idle task's loop: guest time, no exit, the tick
//! left running (haltpoll keeps it for state 0). Three things end it:
//! - a thread woken onto the vCPU — by its own interrupt's handler, or by a waker on another
//!   vCPU, which finds the POLL flag set and only sets need_resched: no reschedule IPI, no
//!   ICR-write exit (`set_nr_and_not_polling`); the poll loop sees the flag and schedules;
//! - an interrupt that wakes nothing: its handler runs, then the same poll goes on to its limit;
//! - the limit: the governor's next choice is HLT, the exit and host wake-up of a halting vCPU.
//!
//! [`GuestPoll`] owns one vCPU's side of this — the governor, the poll window, the halt whose
//! residency the governor adapts from, the counters — and answers what the idle loop does; the
//! vCPU model (`vcpu_run.rs`) carries it out.

use crate::engine::Time;
use eventpath_policy::guest_haltpoll::{GuestHaltPoll, IdleChoice};
use eventpath_policy::idle::HaltpollConfig;

/// What the guest's idle loop does now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IdleStep {
    /// Poll (go on polling) in guest mode until `until`.
    Poll {
        /// The poll's limit.
        until: Time,
    },
    /// HLT.
    Halt,
}

/// One vCPU's guest halt polling.
#[derive(Debug)]
pub(crate) struct GuestPoll {
    gov: GuestHaltPoll,
    /// The poll in progress ends at its limit here.
    deadline: Option<Time>,
    /// The halt in progress began here (its residency is measured at the next VM entry: the
    /// guest reads its clock after HLT returns, the host's wake-up included).
    halt_start: Option<Time>,
    /// Polls begun (window).
    pub polls: u64,
    /// Of those, polls a woken thread ended (window).
    pub polls_woken: u64,
    /// Guest time the poll loop ran (window, ns).
    pub poll_ns: Time,
}

impl GuestPoll {
    /// A vCPU whose driver just loaded: no poll limit yet.
    pub fn new(cfg: HaltpollConfig) -> Self {
        GuestPoll { gov: GuestHaltPoll::new(cfg), deadline: None, halt_start: None, polls: 0, polls_woken: 0, poll_ns: 0 }
    }

    /// The guest's idle loop runs at `now` (nothing to do): poll on, begin a poll, or halt.
    pub fn idle(&mut self, now: Time) -> IdleStep {
        match self.deadline {
            Some(until) if now < until => return IdleStep::Poll { until },
            Some(_) => {
                // poll_idle reached its limit (`poll_time_limit`).
                self.deadline = None;
                self.gov.poll_ended(true);
            }
            None => {
                if let IdleChoice::Poll { limit_ns } = self.gov.select() {
                    let until = now + limit_ns;
                    self.deadline = Some(until);
                    self.polls += 1;
                    return IdleStep::Poll { until };
                }
            }
        }
        self.halt_start = Some(now);
        IdleStep::Halt
    }

    /// Is the idle loop polling (the POLL flag set: a waker sets need_resched, sends no IPI)?
    pub fn polling(&self) -> bool {
        self.deadline.is_some()
    }

    /// A thread runs on the vCPU: a poll in progress ended on its wake-up.
    pub fn woken(&mut self) {
        if self.deadline.take().is_some() {
            self.polls_woken += 1;
            self.gov.poll_ended(false);
        }
    }

    /// The vCPU enters the guest at `now`: a halt in progress has ended.
    pub fn entered(&mut self, now: Time) {
        if let Some(start) = self.halt_start.take() {
            self.gov.halt_ended(now - start);
        }
    }

    /// Start a new measurement window.
    pub fn reset_metrics(&mut self) {
        self.polls = 0;
        self.polls_woken = 0;
        self.poll_ns = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halts_first_then_polls_after_a_short_halt_and_goes_on_to_its_limit() {
        let mut g = GuestPoll::new(HaltpollConfig::default());
        assert_eq!(g.idle(0), IdleStep::Halt);
        g.entered(10_000);
        assert_eq!(g.idle(20_000), IdleStep::Poll { until: 70_000 });
        assert!(g.polling());
        // An interrupt that woke nothing: the same poll goes on.
        assert_eq!(g.idle(30_000), IdleStep::Poll { until: 70_000 });
        assert_eq!(g.idle(70_000), IdleStep::Halt, "the limit: HLT");
        assert!(!g.polling());
        assert_eq!(g.polls, 1);
    }

    #[test]
    fn a_woken_thread_ends_the_poll_and_the_next_idle_polls_again() {
        let mut g = GuestPoll::new(HaltpollConfig::default());
        g.idle(0);
        g.entered(1_000);
        g.idle(2_000);
        g.woken();
        assert!(!g.polling());
        assert_eq!((g.polls, g.polls_woken), (1, 1));
        assert_eq!(g.idle(9_000), IdleStep::Poll { until: 59_000 });
    }
}
