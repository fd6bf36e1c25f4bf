//! The physical NICs' receive interrupt throttle (ITR, ethtool `rx-usecs`), on the host's port
//! and on the client machine: the simulator's adapter of `eventpath_policy`'s [`Throttle`] (the
//! same decision FIR moderation of a device queue uses). A frame that arrives within the
//! minimum gap after the queue's last interrupt waits for the next one, and every frame that
//! arrives meanwhile is received by the same NAPI poll — the batching that lets GRO merge a
//! flow's segments (the client's ACK coalescing) and lets one vhost wake-up carry several
//! frames. Gap 0: off, every frame interrupts on arrival. Adaptive ITR (ixgbe/i40e
//! `ixgbe_set_itr`, which moves between 10, 50 and 125 µs with the traffic) is not modelled: the
//! gap is the driver's default start, fixed.

use crate::engine::{round_ns, Time};
use eventpath_policy::moderation::{InterruptModerator, IrqDecision, Throttle};

/// One receive queue's throttle (None: off).
#[derive(Debug, Clone)]
pub struct RxItr {
    t: Option<Throttle>,
    /// Interrupts raised (window).
    pub irqs: u64,
}

/// What a frame arriving at the client's NIC does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// It interrupts now: receive it at once.
    Now,
    /// It waits for an interrupt the caller must schedule at this time ([`RxItr::deadline`]).
    Wait(Time),
    /// It joins the frames waiting for the interrupt already scheduled.
    Join,
}

impl RxItr {
    /// A throttle with a minimum gap of `gap_ns` (a profile value; 0 = off).
    pub fn new(gap_ns: f64) -> Self {
        let gap = round_ns(gap_ns);
        RxItr { t: (gap > 0).then(|| Throttle::with_gap_ns(gap)), irqs: 0 }
    }

    /// A new minimum gap (ns), from the next interrupt on (a driver rewriting EITR).
    pub fn set_gap_ns(&mut self, gap_ns: u64) {
        match &mut self.t {
            Some(t) => t.set_gap_ns(gap_ns),
            None => self.t = Some(Throttle::with_gap_ns(gap_ns)),
        }
    }

    /// The time of the interrupt that receives a frame arriving at `at`, for frames fed in
    /// order of arrival ahead of time (the host's port: its reverse link is FIFO, so each
    /// frame's arrival is known, in order, when the client sends it).
    pub fn irq_for(&mut self, at: Time) -> Time {
        let Some(t) = &mut self.t else {
            self.irqs += 1;
            return at;
        };
        if let Some(d) = t.deadline_ns() {
            if d >= at {
                return d;
            }
            t.on_deadline(d);
        }
        self.irqs += 1;
        match t.on_event(at, 1, 0) {
            IrqDecision::FireNow => at,
            IrqDecision::DelayUntil(d) => d,
            IrqDecision::Coalesced => unreachable!("no deadline was armed"),
        }
    }

    /// A frame arrived at `now` (the client's NIC, event by event).
    pub fn arrive(&mut self, now: Time) -> Arrival {
        let Some(t) = &mut self.t else {
            self.irqs += 1;
            return Arrival::Now;
        };
        match t.on_event(now, 1, 0) {
            IrqDecision::FireNow => {
                self.irqs += 1;
                Arrival::Now
            }
            IrqDecision::DelayUntil(d) => Arrival::Wait(d),
            IrqDecision::Coalesced => Arrival::Join,
        }
    }

    /// The scheduled interrupt's time came: true when it fires (the waiting frames are
    /// received now).
    pub fn deadline(&mut self, now: Time) -> bool {
        let fired = self.t.as_mut().is_some_and(|t| t.on_deadline(now));
        self.irqs += fired as u64;
        fired
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_interrupts_for_every_frame() {
        let mut r = RxItr::new(0.0);
        assert_eq!(r.irq_for(5), 5);
        assert_eq!(r.arrive(6), Arrival::Now);
        assert_eq!(r.irqs, 2);
    }

    #[test]
    fn frames_known_ahead_share_the_next_interrupt() {
        let mut r = RxItr::new(50_000.0);
        assert_eq!(r.irq_for(1_000), 1_000, "first frame after a quiet period fires at once");
        assert_eq!(r.irq_for(2_000), 51_000, "inside the gap: waits for the next interrupt");
        assert_eq!(r.irq_for(40_000), 51_000, "joins it");
        assert_eq!(r.irq_for(51_000), 51_000, "arrives as it fires: same poll");
        assert_eq!(r.irq_for(60_000), 101_000, "after it: the gap counts from 51 us");
        assert_eq!(r.irq_for(500_000), 500_000);
        assert_eq!(r.irqs, 4);
    }

    #[test]
    fn frames_event_by_event_wait_join_and_fire() {
        let mut r = RxItr::new(50_000.0);
        assert_eq!(r.arrive(0), Arrival::Now);
        assert_eq!(r.arrive(10_000), Arrival::Wait(50_000));
        assert_eq!(r.arrive(20_000), Arrival::Join);
        assert!(!r.deadline(49_999));
        assert!(r.deadline(50_000));
        assert_eq!(r.arrive(60_000), Arrival::Wait(100_000));
        assert_eq!(r.irqs, 2);
    }
}
