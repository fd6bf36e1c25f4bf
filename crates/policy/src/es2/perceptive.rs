//! ES2 perceptive mode switch (§4.2.2, Algorithm 1; parameters §5.2).
//!
//! ```text
//! notification: sleep with notifications enabled; woken by an I/O request
//! schedule:     wait for the joint thread; when run: if notify_enabled { disable_notify }
//!               load = 0
//!               while queue not empty: take one request; load += 1
//!                                      if load >= quota: goto schedule   (stay polling)
//!               enable_notify; goto notification
//! ```
//!
//! ES2 is built on vhost-net, whose `vhost_enable_notify()` reports whether buffers raced in
//! between the last empty check and re-enabling; the algorithm box omits that re-check, we keep it
//! (state [`PerceptiveState::Rechecking`]) so that no request is stranded without a kick.

use crate::error::{at_least, ConfigError};

/// `quota` recommended for TCP streams: "no more than 4" (§5.2).
pub const QUOTA_TCP: u32 = 4;
/// `quota` recommended for UDP streams: "no more than 16" (§5.2).
pub const QUOTA_UDP: u32 = 16;

/// Parameters of the perceptive switch.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields, default))]
pub struct PerceptiveConfig {
    /// Requests per turn that keep the handler in polling mode (vhost-net module parameter
    /// `poll_quota`). Default [`QUOTA_TCP`] = 4; §5.2 recommends ≤ 4 for TCP, ≤ 16 for UDP.
    /// Unit: requests.
    pub quota: u32,
}

impl Default for PerceptiveConfig {
    fn default() -> Self {
        Self { quota: QUOTA_TCP }
    }
}

impl PerceptiveConfig {
    /// Checks `quota >= 1`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        at_least("es2.perceptive.quota", self.quota, 1)
    }
}

/// State of one TX handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PerceptiveState {
    /// Notification mode: sleeping, notifications enabled.
    Notification,
    /// Woken by a kick; on the scheduling list; notifications still enabled.
    Woken,
    /// Running in polling mode (notifications disabled), `load` requests taken this turn.
    Polling {
        /// Requests taken this turn.
        load: u32,
    },
    /// Reached the quota: stays in polling mode, waiting for its next turn.
    WaitingTurn,
    /// Notifications re-enabled after `load < quota`; the caller re-checks the ring.
    Rechecking {
        /// Requests taken this turn.
        load: u32,
    },
}

/// Observations fed to [`PerceptiveHandler::step`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PerceptiveEvent {
    /// The guest kicked this queue (a VM exit).
    Kick,
    /// The joint thread scheduled this handler.
    Scheduled,
    /// One request was taken from the queue.
    Request,
    /// The queue was found empty.
    Empty,
    /// Result of the re-check after re-enabling notifications.
    Recheck {
        /// Requests arrived in the race window.
        has_work: bool,
    },
}

/// What the caller must do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PerceptiveAction {
    /// Add the handler to the joint thread's scheduling list (as a regular handler).
    Enqueue,
    /// Disable notifications (mode switch to polling) and take requests.
    DisableNotifyAndPoll,
    /// Take the next request.
    PollNext,
    /// Quota reached: deschedule and put the handler back at the tail of the scheduling list
    /// ([`crate::es2::JointThread::requeue_quota`]); notifications stay disabled.
    YieldTurn,
    /// `load < quota` with the queue empty: enable notifications (mode switch) and re-check.
    EnableNotifyAndRecheck,
    /// Back to notification mode; sleep.
    Sleep,
    /// The event does not apply in this state; nothing changed.
    Ignored,
}

/// One TX virtqueue handler under the perceptive switch.
#[derive(Debug, Clone)]
pub struct PerceptiveHandler {
    quota: u32,
    state: PerceptiveState,
}

impl PerceptiveHandler {
    /// A handler in notification mode. Call [`PerceptiveConfig::validate`] first.
    pub fn new(cfg: &PerceptiveConfig) -> Self {
        Self { quota: cfg.quota.max(1), state: PerceptiveState::Notification }
    }

    /// Current state.
    pub fn state(&self) -> PerceptiveState {
        self.state
    }

    /// True while the guest's notifications for this queue are disabled (polling mode).
    pub fn is_polling(&self) -> bool {
        matches!(self.state, PerceptiveState::Polling { .. } | PerceptiveState::WaitingTurn)
    }

    /// Applies one observation; all transitions are in this one `match`.
    pub fn step(&mut self, ev: PerceptiveEvent) -> PerceptiveAction {
        use PerceptiveAction as A;
        use PerceptiveEvent as E;
        use PerceptiveState as S;
        let (next, action) = match (self.state, ev) {
            (S::Notification, E::Kick) => (S::Woken, A::Enqueue),
            (S::Woken, E::Scheduled) => (S::Polling { load: 0 }, A::DisableNotifyAndPoll),
            (S::WaitingTurn, E::Scheduled) => (S::Polling { load: 0 }, A::PollNext),
            (S::Polling { load }, E::Request) => {
                let load = load.saturating_add(1);
                if load >= self.quota {
                    (S::WaitingTurn, A::YieldTurn)
                } else {
                    (S::Polling { load }, A::PollNext)
                }
            }
            (S::Polling { load }, E::Empty) => (S::Rechecking { load }, A::EnableNotifyAndRecheck),
            (S::Rechecking { load }, E::Recheck { has_work: true }) => (S::Polling { load }, A::DisableNotifyAndPoll),
            (S::Rechecking { .. }, E::Recheck { has_work: false }) => (S::Notification, A::Sleep),
            (s, _) => (s, A::Ignored),
        };
        self.state = next;
        action
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use PerceptiveAction as A;
    use PerceptiveEvent as E;

    fn h(quota: u32) -> PerceptiveHandler {
        PerceptiveHandler::new(&PerceptiveConfig { quota })
    }

    #[test]
    fn defaults_and_validation() {
        assert_eq!(PerceptiveConfig::default().quota, 4);
        let e = PerceptiveConfig { quota: 0 }.validate().unwrap_err();
        assert_eq!(e.to_string(), "es2.perceptive.quota = 0: must be at least 1");
    }

    #[test]
    fn kick_then_schedule_switches_to_polling() {
        let mut p = h(4);
        assert_eq!(p.step(E::Kick), A::Enqueue);
        assert!(!p.is_polling());
        assert_eq!(p.step(E::Scheduled), A::DisableNotifyAndPoll);
        assert!(p.is_polling());
    }

    #[test]
    fn low_load_returns_to_notification_mode() {
        let mut p = h(4);
        p.step(E::Kick);
        p.step(E::Scheduled);
        for _ in 0..3 {
            assert_eq!(p.step(E::Request), A::PollNext);
        }
        assert_eq!(p.step(E::Empty), A::EnableNotifyAndRecheck);
        assert_eq!(p.step(E::Recheck { has_work: false }), A::Sleep);
        assert_eq!(p.state(), PerceptiveState::Notification);
    }

    #[test]
    fn reaching_quota_stays_polling_and_next_turn_skips_disable() {
        let mut p = h(2);
        p.step(E::Kick);
        p.step(E::Scheduled);
        assert_eq!(p.step(E::Request), A::PollNext);
        assert_eq!(p.step(E::Request), A::YieldTurn);
        assert_eq!(p.state(), PerceptiveState::WaitingTurn);
        assert!(p.is_polling());
        assert_eq!(p.step(E::Kick), A::Ignored); // guest cannot kick in polling mode
        assert_eq!(p.step(E::Scheduled), A::PollNext);
        assert_eq!(p.state(), PerceptiveState::Polling { load: 0 });
    }

    #[test]
    fn recheck_with_work_goes_back_to_polling_with_its_load() {
        let mut p = h(4);
        p.step(E::Kick);
        p.step(E::Scheduled);
        p.step(E::Request);
        p.step(E::Empty);
        assert_eq!(p.step(E::Recheck { has_work: true }), A::DisableNotifyAndPoll);
        assert_eq!(p.state(), PerceptiveState::Polling { load: 1 });
    }

    #[test]
    fn udp_quota_allows_more_per_turn() {
        let mut p = h(QUOTA_UDP);
        p.step(E::Kick);
        p.step(E::Scheduled);
        let yields = (0..16).filter(|_| p.step(E::Request) == A::YieldTurn).count();
        assert_eq!(yields, 1);
    }
}
