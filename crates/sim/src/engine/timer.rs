//! A restartable timer with at most one event in the queue (Linux's `mod_timer` semantics on
//! a DES queue). Arming, re-arming and cancelling never schedule a second event: a pending event
//! that fires before the current deadline re-schedules itself for it, and one that fires after
//! a cancel does nothing. A timer armed once per packet and cancelled by the next (a delayed
//! ACK, a request timeout) thus leaves one stale event per flow in the queue, not one per arm.
//!
//! Deadlines may only move later while an event is pending (the owner's clock is monotone);
//! an earlier deadline schedules its own event.

use super::time::Time;

/// What the owner of a [`Timer`] does when its event fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fired {
    /// The timer expired: act on it.
    Expired,
    /// It was re-armed for later: schedule its event at this time.
    Reschedule(Time),
    /// It was cancelled: nothing to do.
    Idle,
}

/// A timer's deadline and its one event in the queue.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timer {
    deadline: Option<Time>,
    event: Option<Time>,
}

impl Timer {
    /// Whether the timer is armed.
    pub fn armed(&self) -> bool {
        self.deadline.is_some()
    }

    /// Arm (or re-arm) the timer for `at`; returns the time to schedule its event at, if the
    /// pending one (if any) does not come early enough.
    #[must_use]
    pub fn arm(&mut self, at: Time) -> Option<Time> {
        self.deadline = Some(at);
        match self.event {
            Some(e) if e <= at => None,
            _ => {
                self.event = Some(at);
                Some(at)
            }
        }
    }

    /// Disarm the timer (its pending event, if any, will fire and do nothing).
    pub fn cancel(&mut self) {
        self.deadline = None;
    }

    /// The timer's event fired at `now`. An event of an earlier arming than the latest
    /// scheduled one (`now` before the event the timer waits for) is ignored.
    pub fn fired(&mut self, now: Time) -> Fired {
        if self.event != Some(now) {
            return Fired::Idle;
        }
        self.event = None;
        match self.deadline {
            Some(d) if d > now => {
                self.event = Some(d);
                Fired::Reschedule(d)
            }
            Some(_) => {
                self.deadline = None;
                Fired::Expired
            }
            None => Fired::Idle,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_event_for_many_arms() {
        let mut t = Timer::default();
        assert_eq!(t.arm(100), Some(100));
        t.cancel();
        assert_eq!(t.arm(150), None); // the event at 100 is still pending
        assert_eq!(t.fired(100), Fired::Reschedule(150));
        assert_eq!(t.fired(150), Fired::Expired);
        assert!(!t.armed());
    }

    #[test]
    fn a_cancelled_timer_fires_idle() {
        let mut t = Timer::default();
        assert_eq!(t.arm(10), Some(10));
        t.cancel();
        assert_eq!(t.fired(10), Fired::Idle);
        // Re-armed after its event is gone: a new event.
        assert_eq!(t.arm(20), Some(20));
        assert_eq!(t.fired(20), Fired::Expired);
    }

    #[test]
    fn an_earlier_deadline_gets_its_own_event_and_the_old_one_is_ignored() {
        let mut t = Timer::default();
        assert_eq!(t.arm(100), Some(100));
        assert_eq!(t.arm(50), Some(50));
        assert_eq!(t.fired(50), Fired::Expired);
        assert_eq!(t.fired(100), Fired::Idle);
    }
}
