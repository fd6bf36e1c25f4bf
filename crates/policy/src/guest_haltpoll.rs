//! Guest halt polling: the cpuidle-haltpoll driver with the haltpoll governor in a KVM guest
//! (drivers/cpuidle/cpuidle-haltpoll.c, drivers/cpuidle/governors/haltpoll.c,
//! Documentation/virt/guest-halt-polling.rst).
//!
//! The guest's idle loop has two states: 0, a poll loop in guest mode (`poll_idle`, with the
//! thread's POLL flag set so that a waker on another vCPU sets need_resched instead of sending
//! a reschedule IPI) of up to the per-CPU `poll_limit_ns`; 1, HLT (an exit). The governor ports:
//!
//! ```text
//! select:   poll_limit_ns == 0                  -> halt
//!           last state was poll: timed out      -> halt, else poll again
//!           last state was halt                 -> poll
//! reflect:  after a halt, adjust_poll_limit(its residency, block_ns):
//!           poll_limit_ns < block_ns <= guest_halt_poll_ns   -> grow: ×grow, at least
//!                                                   grow_start, at most guest_halt_poll_ns
//!           block_ns > guest_halt_poll_ns && allow_shrink    -> shrink: ÷shrink (0: to 0),
//!                                                   to 0 below grow_start (Linux 6.9)
//! ```
//!
//! A poll that a wake-up ends changes nothing (reflect adjusts only after a halt), so a vCPU
//! whose idle periods are short keeps polling at its limit. The halt's residency is what the
//! guest measures around HLT: the host's wake-up latency included. Loading the driver also
//! writes `MSR_KVM_POLL_CONTROL` = 0, turning KVM's own halt polling off for the vCPU.

use crate::error::{at_least, ConfigError};
use crate::idle::{Haltpoll, HaltpollConfig};

/// The module parameters a VM's driver may be given: the governor's own
/// ([`HaltpollConfig`], whose `validate` refuses a zero `grow_start_ns`, as the driver's setter
/// does), and a poll of at least 1 ns (0 would never poll: leave the driver out instead).
pub fn check(cfg: &HaltpollConfig) -> Result<(), ConfigError> {
    cfg.validate()?;
    at_least("guest_halt_poll.guest_halt_poll_ns", cfg.guest_halt_poll_ns, 1)
}

/// The idle state the governor picks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdleChoice {
    /// State 0: poll in guest mode for up to `limit_ns`.
    Poll {
        /// `cpuidle_poll_time()`: the per-CPU `poll_limit_ns`. Unit: ns.
        limit_ns: u64,
    },
    /// State 1: HLT.
    Halt,
}

/// The last state entered (`dev->last_state_idx`), with what `select` needs of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Last {
    /// A poll that ended on a wake-up (`poll_time_limit` false) or timed out (true).
    Poll { timed_out: bool },
    /// A halt (or nothing yet: `haltpoll_enable_device` leaves no poll limit, so the first
    /// idle period halts either way).
    Halt,
}

/// One vCPU's haltpoll governor.
#[derive(Debug, Clone)]
pub struct GuestHaltPoll {
    /// `dev->poll_limit_ns` and `adjust_poll_limit()`, shared with the host-side idle
    /// governor of a nested host (`idle::Haltpoll`).
    window: Haltpoll,
    last: Last,
}

impl GuestHaltPoll {
    /// A CPU as `haltpoll_enable_device` leaves it: no poll limit yet.
    pub fn new(cfg: HaltpollConfig) -> Self {
        Self { window: Haltpoll::new(cfg), last: Last::Halt }
    }

    /// The current `poll_limit_ns`.
    pub fn poll_limit_ns(&self) -> u64 {
        self.window.poll_limit_ns()
    }

    /// `haltpoll_select`: the state for the idle period that begins.
    pub fn select(&self) -> IdleChoice {
        let limit_ns = self.poll_limit_ns();
        if limit_ns == 0 {
            return IdleChoice::Halt;
        }
        match self.last {
            Last::Poll { timed_out: true } => IdleChoice::Halt,
            Last::Poll { timed_out: false } | Last::Halt => IdleChoice::Poll { limit_ns },
        }
    }

    /// `haltpoll_reflect(dev, 0)`: the poll ended, on a wake-up or at its limit
    /// (`poll_time_limit`).
    pub fn poll_ended(&mut self, timed_out: bool) {
        self.last = Last::Poll { timed_out };
    }

    /// `haltpoll_reflect(dev, 1)`: the halt ended after `block_ns` (its residency).
    pub fn halt_ended(&mut self, block_ns: u64) {
        self.last = Last::Halt;
        self.window.adjust(block_ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gov() -> GuestHaltPoll {
        GuestHaltPoll::new(HaltpollConfig::default())
    }

    #[test]
    fn the_first_idle_period_halts_and_a_short_halt_grows_to_grow_start() {
        let mut g = gov();
        assert_eq!(g.select(), IdleChoice::Halt);
        g.halt_ended(10_000);
        assert_eq!(g.poll_limit_ns(), 50_000);
        assert_eq!(g.select(), IdleChoice::Poll { limit_ns: 50_000 });
    }

    #[test]
    fn halts_shorter_than_the_maximum_grow_by_two_up_to_it() {
        let mut g = gov();
        let mut seen = vec![];
        for _ in 0..4 {
            g.halt_ended(150_000);
            seen.push(g.poll_limit_ns());
        }
        assert_eq!(seen, vec![50_000, 100_000, 200_000, 200_000]);
    }

    #[test]
    fn a_halt_within_the_limit_keeps_it() {
        let mut g = gov();
        g.halt_ended(1);
        g.halt_ended(40_000); // <= poll_limit_ns: neither grow nor shrink
        assert_eq!(g.poll_limit_ns(), 50_000);
    }

    #[test]
    fn long_halts_shrink_by_two_and_drop_to_zero_below_grow_start() {
        let mut g = gov();
        for _ in 0..3 {
            g.halt_ended(150_000);
        }
        assert_eq!(g.poll_limit_ns(), 200_000);
        g.halt_ended(1_000_000);
        assert_eq!(g.poll_limit_ns(), 100_000);
        g.halt_ended(1_000_000);
        assert_eq!(g.poll_limit_ns(), 50_000);
        g.halt_ended(1_000_000);
        assert_eq!(g.poll_limit_ns(), 0, "25000 < grow_start");
        assert_eq!(g.select(), IdleChoice::Halt);
    }

    #[test]
    fn shrink_zero_resets_and_allow_shrink_false_keeps() {
        let mut g = GuestHaltPoll::new(HaltpollConfig { shrink: 0, ..Default::default() });
        g.halt_ended(1);
        g.halt_ended(1_000_000);
        assert_eq!(g.poll_limit_ns(), 0);
        let mut g = GuestHaltPoll::new(HaltpollConfig { allow_shrink: false, ..Default::default() });
        g.halt_ended(1);
        g.halt_ended(1_000_000);
        assert_eq!(g.poll_limit_ns(), 50_000);
    }

    #[test]
    fn a_poll_that_timed_out_halts_next_and_one_ended_by_a_wake_up_polls_again() {
        let mut g = gov();
        g.halt_ended(1);
        g.poll_ended(false);
        assert_eq!(g.select(), IdleChoice::Poll { limit_ns: 50_000 });
        assert_eq!(g.poll_limit_ns(), 50_000, "a poll changes no limit");
        g.poll_ended(true);
        assert_eq!(g.select(), IdleChoice::Halt);
        g.halt_ended(60_000);
        assert_eq!(g.select(), IdleChoice::Poll { limit_ns: 100_000 });
    }

    #[test]
    fn the_driver_refuses_a_zero_grow_start_or_poll() {
        assert!(check(&HaltpollConfig::default()).is_ok());
        assert!(check(&HaltpollConfig { grow_start_ns: 0, ..Default::default() }).is_err());
        assert!(check(&HaltpollConfig { guest_halt_poll_ns: 0, ..Default::default() }).is_err());
    }
}
