//! The baseline vhost handler loop, with optional vhost-net busy polling.
//!
//! Linux `handle_tx_copy()` (drivers/vhost/net.c), reduced to its decisions:
//!
//! ```text
//! kick (ioeventfd) ──> Run: vhost_disable_notify(); drain
//!   per buffer:  ++pkts, bytes += len; vhost_exceeds_weight(pkts, bytes)? -> requeue, stop
//!   ring empty:  busyloop_timeout > 0 ? busy-poll until deadline (vhost_net_busy_poll)
//!                : vhost_enable_notify(); new buffers since? -> disable, keep draining
//!                                                         else -> sleep (Idle)
//! ```
//!
//! `vhost_exceeds_weight()` (drivers/vhost/vhost.c) stops the loop when
//! `(byte_weight && total_len >= byte_weight) || pkts >= weight` and re-queues the handler, so one
//! busy queue cannot starve the others; notifications stay disabled meanwhile.
//!
//! The same machine runs `handle_rx`, whose "ring empty" is the guest having no receive buffer
//! left (enable refill kicks and re-check) and whose input can run out first
//! ([`VhostEvent::SourceEmpty`]: the socket is drained; stop, notifications left disabled).

use crate::error::{at_least, ConfigError};

/// Parameters of the vhost handler loop.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields, default))]
pub struct VhostConfig {
    /// Packets handled per run before re-queueing (`VHOST_NET_PKT_WEIGHT`, default 256). Unit: packets.
    pub pkt_weight: u32,
    /// Bytes handled per run before re-queueing (`VHOST_NET_WEIGHT`, default 0x80000 = 524288);
    /// 0 disables the byte limit (as `dev->byte_weight == 0` does upstream). Unit: bytes.
    pub byte_weight: u64,
    /// vhost-net `busyloop_timeout` (`VHOST_SET_VRING_BUSYLOOP_TIMEOUT`): how long to busy-poll an
    /// empty ring before re-enabling notifications. Default 0 (off, as upstream). Unit: µs.
    pub busyloop_timeout_us: u32,
}

impl Default for VhostConfig {
    fn default() -> Self {
        Self { pkt_weight: 256, byte_weight: 0x80000, busyloop_timeout_us: 0 }
    }
}

impl VhostConfig {
    /// Checks the ranges: `pkt_weight >= 1`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        at_least("vhost.pkt_weight", self.pkt_weight, 1)
    }

    /// `vhost_exceeds_weight(vq, pkts, total_len)` without the re-queue side effect.
    pub fn exceeds_weight(&self, pkts: u32, total_len: u64) -> bool {
        (self.byte_weight != 0 && total_len >= self.byte_weight) || pkts >= self.pkt_weight
    }
}

/// Where the handler is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VhostState {
    /// Notifications enabled; waiting for a kick.
    Idle,
    /// Notifications disabled; taking buffers. Counters are this run's totals.
    Draining {
        /// Buffers handled in this run.
        pkts: u32,
        /// Bytes handled in this run.
        bytes: u64,
    },
    /// Ring found empty; busy-polling it until `deadline_ns` with notifications still disabled.
    BusyPolling {
        /// Buffers handled in this run.
        pkts: u32,
        /// Bytes handled in this run.
        bytes: u64,
        /// End of the busy-poll window (absolute, ns).
        deadline_ns: u64,
    },
    /// Notifications re-enabled; the caller must re-check the ring for buffers that raced in.
    Rechecking {
        /// Buffers handled in this run.
        pkts: u32,
        /// Bytes handled in this run.
        bytes: u64,
    },
    /// Weight exceeded; the handler re-queued itself (notifications stay disabled).
    Requeued,
}

/// An observation fed to [`VhostHandler::step`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VhostEvent {
    /// The handler starts running (woken by a kick, or its re-queued turn came).
    Run,
    /// One buffer of `bytes` was taken from the ring and handled.
    Buffer {
        /// Length of the buffer. Unit: bytes.
        bytes: u64,
    },
    /// The ring was found empty at `now_ns` (also: a busy-poll probe found nothing).
    Empty {
        /// Current time, ns.
        now_ns: u64,
    },
    /// Result of the re-check after re-enabling notifications (`vhost_enable_notify()`'s return).
    Recheck {
        /// New buffers appeared between the last check and re-enabling.
        has_work: bool,
    },
    /// The handler's input ran out while the ring still has room (an RX handler's socket is
    /// empty, `handle_rx` leaves its `peek_head_len` loop): it stops without touching
    /// notifications, since new input wakes it anyway.
    SourceEmpty,
}

/// What the caller must do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VhostAction {
    /// Disable kicks (see [`crate::notify::kick_control`]) and take the next buffer.
    DisableNotifyAndDrain,
    /// Take the next buffer.
    ProcessNext,
    /// Stop; put the handler back on the worker's queue (notifications stay disabled).
    Requeue,
    /// Probe the ring again (busy-poll) no later than `until_ns`; report `Empty` or `Buffer`.
    BusyPoll {
        /// End of the busy-poll window (absolute, ns).
        until_ns: u64,
    },
    /// Enable kicks, then re-check the ring and report [`VhostEvent::Recheck`].
    EnableNotifyAndRecheck,
    /// Done; sleep until the next kick.
    Sleep,
    /// The event does not apply in the current state; nothing changed.
    Ignored,
}

/// The vhost handler of one virtqueue.
#[derive(Debug, Clone)]
pub struct VhostHandler {
    cfg: VhostConfig,
    state: VhostState,
}

impl VhostHandler {
    /// A handler in [`VhostState::Idle`]. Call [`VhostConfig::validate`] first.
    pub fn new(cfg: VhostConfig) -> Self {
        Self { cfg, state: VhostState::Idle }
    }

    /// Current state.
    pub fn state(&self) -> VhostState {
        self.state
    }

    /// Applies one observation; all transitions are in this one `match`.
    pub fn step(&mut self, ev: VhostEvent) -> VhostAction {
        use VhostAction as A;
        use VhostEvent as E;
        use VhostState as S;
        let (next, action) = match (self.state, ev) {
            (S::Idle | S::Requeued, E::Run) => (S::Draining { pkts: 0, bytes: 0 }, A::DisableNotifyAndDrain),
            (S::Draining { pkts, bytes } | S::BusyPolling { pkts, bytes, .. }, E::Buffer { bytes: len }) => {
                let (pkts, bytes) = (pkts.saturating_add(1), bytes.saturating_add(len));
                if self.cfg.exceeds_weight(pkts, bytes) {
                    (S::Requeued, A::Requeue)
                } else {
                    (S::Draining { pkts, bytes }, A::ProcessNext)
                }
            }
            (S::Draining { pkts, bytes }, E::Empty { now_ns }) if self.cfg.busyloop_timeout_us > 0 => {
                let deadline_ns = now_ns.saturating_add(u64::from(self.cfg.busyloop_timeout_us) * 1_000);
                (S::BusyPolling { pkts, bytes, deadline_ns }, A::BusyPoll { until_ns: deadline_ns })
            }
            (S::BusyPolling { pkts, bytes, deadline_ns }, E::Empty { now_ns }) if now_ns < deadline_ns => {
                (S::BusyPolling { pkts, bytes, deadline_ns }, A::BusyPoll { until_ns: deadline_ns })
            }
            (S::Draining { pkts, bytes } | S::BusyPolling { pkts, bytes, .. }, E::Empty { .. }) => {
                (S::Rechecking { pkts, bytes }, A::EnableNotifyAndRecheck)
            }
            (S::Rechecking { pkts, bytes }, E::Recheck { has_work: true }) => {
                (S::Draining { pkts, bytes }, A::DisableNotifyAndDrain)
            }
            (S::Rechecking { .. }, E::Recheck { has_work: false }) => (S::Idle, A::Sleep),
            (S::Draining { .. } | S::BusyPolling { .. }, E::SourceEmpty) => (S::Idle, A::Sleep),
            (s, _) => (s, A::Ignored),
        };
        self.state = next;
        action
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn handler(busy_us: u32) -> VhostHandler {
        VhostHandler::new(VhostConfig { pkt_weight: 3, byte_weight: 1000, busyloop_timeout_us: busy_us })
    }

    #[test]
    fn defaults_are_upstream_and_valid() {
        let c = VhostConfig::default();
        assert_eq!((c.pkt_weight, c.byte_weight, c.busyloop_timeout_us), (256, 524_288, 0));
        assert!(c.validate().is_ok());
        assert!(VhostConfig { pkt_weight: 0, ..c }.validate().is_err());
    }

    #[test]
    fn run_disables_then_drains_and_sleeps_when_empty() {
        let mut h = handler(0);
        assert_eq!(h.step(VhostEvent::Run), VhostAction::DisableNotifyAndDrain);
        assert_eq!(h.step(VhostEvent::Buffer { bytes: 10 }), VhostAction::ProcessNext);
        assert_eq!(h.step(VhostEvent::Empty { now_ns: 5 }), VhostAction::EnableNotifyAndRecheck);
        assert_eq!(h.step(VhostEvent::Recheck { has_work: false }), VhostAction::Sleep);
        assert_eq!(h.state(), VhostState::Idle);
    }

    #[test]
    fn recheck_that_finds_work_keeps_the_run_counters() {
        let mut h = handler(0);
        h.step(VhostEvent::Run);
        h.step(VhostEvent::Buffer { bytes: 10 });
        h.step(VhostEvent::Empty { now_ns: 0 });
        assert_eq!(h.step(VhostEvent::Recheck { has_work: true }), VhostAction::DisableNotifyAndDrain);
        assert_eq!(h.state(), VhostState::Draining { pkts: 1, bytes: 10 });
    }

    #[test]
    fn packet_weight_requeues_and_next_run_starts_fresh() {
        let mut h = handler(0);
        h.step(VhostEvent::Run);
        assert_eq!(h.step(VhostEvent::Buffer { bytes: 1 }), VhostAction::ProcessNext);
        assert_eq!(h.step(VhostEvent::Buffer { bytes: 1 }), VhostAction::ProcessNext);
        assert_eq!(h.step(VhostEvent::Buffer { bytes: 1 }), VhostAction::Requeue);
        assert_eq!(h.state(), VhostState::Requeued);
        assert_eq!(h.step(VhostEvent::Run), VhostAction::DisableNotifyAndDrain);
        assert_eq!(h.state(), VhostState::Draining { pkts: 0, bytes: 0 });
    }

    #[test]
    fn byte_weight_requeues() {
        let mut h = handler(0);
        h.step(VhostEvent::Run);
        assert_eq!(h.step(VhostEvent::Buffer { bytes: 1000 }), VhostAction::Requeue);
    }

    #[test]
    fn busy_poll_waits_until_deadline_then_rechecks() {
        let mut h = handler(50);
        h.step(VhostEvent::Run);
        assert_eq!(h.step(VhostEvent::Empty { now_ns: 1_000 }), VhostAction::BusyPoll { until_ns: 51_000 });
        assert_eq!(h.step(VhostEvent::Empty { now_ns: 20_000 }), VhostAction::BusyPoll { until_ns: 51_000 });
        assert_eq!(h.step(VhostEvent::Empty { now_ns: 51_000 }), VhostAction::EnableNotifyAndRecheck);
    }

    #[test]
    fn busy_poll_that_finds_a_buffer_resumes_draining() {
        let mut h = handler(50);
        h.step(VhostEvent::Run);
        h.step(VhostEvent::Empty { now_ns: 0 });
        assert_eq!(h.step(VhostEvent::Buffer { bytes: 7 }), VhostAction::ProcessNext);
        assert_eq!(h.state(), VhostState::Draining { pkts: 1, bytes: 7 });
    }

    #[test]
    fn out_of_place_events_are_ignored() {
        let mut h = handler(0);
        assert_eq!(h.step(VhostEvent::Buffer { bytes: 1 }), VhostAction::Ignored);
        assert_eq!(h.step(VhostEvent::Recheck { has_work: true }), VhostAction::Ignored);
        h.step(VhostEvent::Run);
        assert_eq!(h.step(VhostEvent::Run), VhostAction::Ignored);
        assert_eq!(h.state(), VhostState::Draining { pkts: 0, bytes: 0 });
    }

    #[test]
    fn rx_handler_stops_without_enabling_notify_when_its_socket_is_empty() {
        let mut h = handler(0);
        h.step(VhostEvent::Run);
        assert_eq!(h.step(VhostEvent::Buffer { bytes: 1 }), VhostAction::ProcessNext);
        assert_eq!(h.step(VhostEvent::SourceEmpty), VhostAction::Sleep);
        assert_eq!(h.state(), VhostState::Idle);
        // Out of guest buffers instead: enable refill kicks and re-check.
        h.step(VhostEvent::Run);
        assert_eq!(h.step(VhostEvent::Empty { now_ns: 0 }), VhostAction::EnableNotifyAndRecheck);
        assert_eq!(h.step(VhostEvent::SourceEmpty), VhostAction::Ignored);
    }
}
