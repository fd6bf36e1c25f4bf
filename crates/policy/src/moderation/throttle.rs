//! The NIC's interrupt throttle (ITR).

use super::{InterruptModerator, IrqDecision};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ThrottleState {
    /// No interrupt armed; `last_fire_ns` is the last interrupt (None: never).
    Ready { last_fire_ns: Option<u64> },
    /// A delayed interrupt fires at `deadline_ns`.
    Armed { deadline_ns: u64 },
}

/// At most one interrupt per `1/rate` seconds.
///
/// Timer semantics: the deadline is absolute, `last interrupt + 1/rate` (not restarted by later
/// events); events while armed coalesce. A rate change applies from the next interrupt on; an
/// already armed deadline keeps its time.
#[derive(Debug, Clone)]
pub struct Throttle {
    rate: u32,
    gap_ns: u64,
    state: ThrottleState,
}

impl Throttle {
    /// A throttle at `rate` interrupts/s (≥ 1; 0 is treated as 1).
    pub fn new(rate: u32) -> Self {
        let mut t = Self { rate: 0, gap_ns: 0, state: ThrottleState::Ready { last_fire_ns: None } };
        t.set_rate(rate);
        t
    }

    /// A throttle with a minimum gap of `gap_ns` between interrupts (≥ 1 ns): a NIC's ITR
    /// written as an interval, as ethtool's `rx-usecs` is. Its rate is the gap's inverse.
    pub fn with_gap_ns(gap_ns: u64) -> Self {
        let gap_ns = gap_ns.max(1);
        let rate = u32::try_from(1_000_000_000 / gap_ns).unwrap_or(u32::MAX).max(1);
        Self { rate, gap_ns, state: ThrottleState::Ready { last_fire_ns: None } }
    }

    /// Changes the minimum gap (ns, ≥ 1), as a driver rewriting EITR does.
    pub fn set_gap_ns(&mut self, gap_ns: u64) {
        self.gap_ns = gap_ns.max(1);
        self.rate = u32::try_from(1_000_000_000 / self.gap_ns).unwrap_or(u32::MAX).max(1);
    }

    /// Changes the rate (interrupts/s, ≥ 1).
    pub fn set_rate(&mut self, rate: u32) {
        self.rate = rate.max(1);
        self.gap_ns = 1_000_000_000 / u64::from(self.rate);
    }

    /// Minimum gap between interrupts. Unit: ns.
    pub fn gap_ns(&self) -> u64 {
        self.gap_ns
    }

    /// The armed deadline, if any.
    pub fn deadline_ns(&self) -> Option<u64> {
        match self.state {
            ThrottleState::Armed { deadline_ns } => Some(deadline_ns),
            ThrottleState::Ready { .. } => None,
        }
    }
}

impl InterruptModerator for Throttle {
    fn on_event(&mut self, now_ns: u64, _packets: u32, _bytes: u64) -> IrqDecision {
        match self.state {
            ThrottleState::Armed { .. } => IrqDecision::Coalesced,
            ThrottleState::Ready { last_fire_ns } => {
                let earliest = last_fire_ns.map_or(0, |t| t.saturating_add(self.gap_ns));
                if now_ns >= earliest {
                    self.state = ThrottleState::Ready { last_fire_ns: Some(now_ns) };
                    IrqDecision::FireNow
                } else {
                    self.state = ThrottleState::Armed { deadline_ns: earliest };
                    IrqDecision::DelayUntil(earliest)
                }
            }
        }
    }

    fn on_deadline(&mut self, now_ns: u64) -> bool {
        match self.state {
            ThrottleState::Armed { deadline_ns } if now_ns >= deadline_ns => {
                self.state = ThrottleState::Ready { last_fire_ns: Some(now_ns) };
                true
            }
            _ => false,
        }
    }

    fn advance(&mut self, _now_ns: u64) {}

    fn allowed_rate(&self) -> Option<u32> {
        Some(self.rate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fires_then_delays_then_coalesces() {
        let mut t = Throttle::new(8000); // 125 µs
        assert_eq!(t.gap_ns(), 125_000);
        assert_eq!(t.on_event(1_000, 1, 64), IrqDecision::FireNow);
        assert_eq!(t.on_event(2_000, 1, 64), IrqDecision::DelayUntil(126_000));
        assert_eq!(t.on_event(3_000, 1, 64), IrqDecision::Coalesced);
        assert!(!t.on_deadline(125_999));
        assert!(t.on_deadline(126_000));
        assert_eq!(t.on_event(200_000, 1, 64), IrqDecision::DelayUntil(251_000));
    }

    #[test]
    fn event_after_gap_fires_immediately() {
        let mut t = Throttle::new(10_000);
        t.on_event(0, 1, 1);
        assert_eq!(t.on_event(100_000, 1, 1), IrqDecision::FireNow);
        assert!(!t.on_deadline(1_000_000)); // nothing armed
    }

    #[test]
    fn gap_given_as_an_interval_is_exact() {
        let mut t = Throttle::with_gap_ns(47_123);
        assert_eq!((t.gap_ns(), t.allowed_rate()), (47_123, Some(21_221)));
        assert_eq!(t.on_event(0, 1, 1), IrqDecision::FireNow);
        assert_eq!(t.on_event(1, 1, 1), IrqDecision::DelayUntil(47_123));
    }

    #[test]
    fn rate_change_applies_to_next_gap() {
        let mut t = Throttle::new(1000);
        t.on_event(0, 1, 1);
        t.set_rate(100_000);
        assert_eq!(t.on_event(5_000, 1, 1), IrqDecision::DelayUntil(10_000));
        assert_eq!(t.allowed_rate(), Some(100_000));
    }
}
