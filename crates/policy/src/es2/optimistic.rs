//! ES2 optimistic mode switch for query-reply workloads (§4.2.3, Algorithm 2; parameters §5.3).
//!
//! ```text
//! RX_HANDLER: on a new packet in the RX queue:
//!     disable_notify(TX); TX.is_poll = TRUE; TX.poll_count = 0; add TX handler to scheduling list
//! TX_HANDLER: if TX.is_poll:
//!     poll requests from TX; TX.poll_count += 1
//!     if TX.poll_count > max_poll_count: TX.is_poll = FALSE; enable_notify; return
//!     wait to be scheduled again                      (goes on the joint thread's polling list)
//! ```
//!
//! When `is_poll` is false the TX handler is an ordinary (regular) vhost handler, driven by kicks;
//! see [`crate::vhost`]. After [`OptimisticAction::EnableNotifyAndRecheck`], if the re-check finds
//! requests, the caller treats them as a kick (the handler runs as a regular handler).

use crate::error::{at_least, ConfigError};

/// Parameters of the optimistic switch.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields, default))]
pub struct OptimisticConfig {
    /// Polls of the TX queue after each RX packet before returning to notification mode
    /// ("the max polling time (i.e., poll_count) is set to 1000", §5.3). Unit: polls.
    pub max_poll_count: u32,
}

impl Default for OptimisticConfig {
    fn default() -> Self {
        Self { max_poll_count: 1000 }
    }
}

impl OptimisticConfig {
    /// Checks `max_poll_count >= 1`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        at_least("es2.optimistic.max_poll_count", self.max_poll_count, 1)
    }
}

/// State of one TX queue under the optimistic switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptimisticState {
    /// `is_poll = FALSE`: notifications enabled, regular handler.
    Notification,
    /// `is_poll = TRUE`: notifications disabled, polled `poll_count` times since the last RX packet.
    Polling {
        /// Polls since the last RX packet.
        poll_count: u32,
    },
}

/// What the caller must do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptimisticAction {
    /// Disable TX notifications and add the TX handler to the scheduling list as a polling handler.
    DisableNotifyAndEnqueue,
    /// Already polling: the count was reset; make sure the handler is on the scheduling list.
    Enqueue,
    /// Still polling: put the handler on the joint thread's polling list
    /// ([`crate::es2::JointThread::requeue_polling`]).
    PollAgain,
    /// `poll_count > max_poll_count`: enable TX notifications (mode switch) and re-check the ring.
    EnableNotifyAndRecheck,
    /// Not polling: nothing to do here (the regular path handles kicks).
    Ignored,
}

/// The optimistic switch of one TX queue.
#[derive(Debug, Clone)]
pub struct OptimisticTx {
    max_poll_count: u32,
    state: OptimisticState,
}

impl OptimisticTx {
    /// A queue in notification mode.
    pub fn new(cfg: &OptimisticConfig) -> Self {
        Self { max_poll_count: cfg.max_poll_count, state: OptimisticState::Notification }
    }

    /// Current state.
    pub fn state(&self) -> OptimisticState {
        self.state
    }

    /// `TX-queue.is_poll`.
    pub fn is_poll(&self) -> bool {
        matches!(self.state, OptimisticState::Polling { .. })
    }

    /// RX_HANDLER captured a new packet on the paired RX queue.
    pub fn on_rx_packet(&mut self) -> OptimisticAction {
        self.transition(true)
    }

    /// TX_HANDLER was scheduled and polled the TX queue once (whatever it found was processed).
    pub fn on_tx_polled(&mut self) -> OptimisticAction {
        self.transition(false)
    }

    fn transition(&mut self, rx_packet: bool) -> OptimisticAction {
        use OptimisticAction as A;
        use OptimisticState as S;
        let (next, action) = match (self.state, rx_packet) {
            (S::Notification, true) => (S::Polling { poll_count: 0 }, A::DisableNotifyAndEnqueue),
            (S::Polling { .. }, true) => (S::Polling { poll_count: 0 }, A::Enqueue),
            (S::Polling { poll_count }, false) => {
                let poll_count = poll_count.saturating_add(1);
                if poll_count > self.max_poll_count {
                    (S::Notification, A::EnableNotifyAndRecheck)
                } else {
                    (S::Polling { poll_count }, A::PollAgain)
                }
            }
            (S::Notification, false) => (S::Notification, A::Ignored),
        };
        self.state = next;
        action
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use OptimisticAction as A;

    #[test]
    fn default_is_paper_value() {
        assert_eq!(OptimisticConfig::default().max_poll_count, 1000);
        assert!(OptimisticConfig { max_poll_count: 0 }.validate().is_err());
    }

    #[test]
    fn rx_packet_starts_polling() {
        let mut t = OptimisticTx::new(&OptimisticConfig::default());
        assert_eq!(t.on_rx_packet(), A::DisableNotifyAndEnqueue);
        assert!(t.is_poll());
    }

    #[test]
    fn polls_max_plus_one_times_then_reenables() {
        let mut t = OptimisticTx::new(&OptimisticConfig { max_poll_count: 3 });
        t.on_rx_packet();
        // poll_count 1, 2, 3 stay polling; the 4th (> 3) switches back.
        assert_eq!(t.on_tx_polled(), A::PollAgain);
        assert_eq!(t.on_tx_polled(), A::PollAgain);
        assert_eq!(t.on_tx_polled(), A::PollAgain);
        assert_eq!(t.on_tx_polled(), A::EnableNotifyAndRecheck);
        assert!(!t.is_poll());
        assert_eq!(t.on_tx_polled(), A::Ignored);
    }

    #[test]
    fn new_rx_packet_resets_the_count() {
        let mut t = OptimisticTx::new(&OptimisticConfig { max_poll_count: 2 });
        t.on_rx_packet();
        t.on_tx_polled();
        t.on_tx_polled();
        assert_eq!(t.on_rx_packet(), A::Enqueue);
        assert_eq!(t.state(), OptimisticState::Polling { poll_count: 0 });
        assert_eq!(t.on_tx_polled(), A::PollAgain);
    }
}
