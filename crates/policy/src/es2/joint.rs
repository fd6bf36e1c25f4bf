//! ES2 joint I/O thread (§5.1–5.3): handler selection, `combining_level`, the polling list and
//! the 10 µs interruptible sleeps.
//!
//! * Up to `combining_level` vhost-net devices share one joint thread (§5.1).
//! * Handlers run round-robin from the *scheduling list*. A regular handler (woken by a kick or
//!   with pending work) is scheduled only when it has work; a polling handler (optimistic switch)
//!   is scheduled because there may be work (§5.3).
//! * A polling handler that needs rescheduling goes on the *polling list*. Whenever a regular
//!   handler is scheduled, the polling list moves to the tail of the scheduling list. If the
//!   scheduling list is empty but the polling list is not, all active handlers are polling
//!   handlers that ran once: sleep 10 µs, then move the polling list back (§5.3).
//! * If a perceptive TX handler reaches its quota and is the only handler on the scheduling list,
//!   sleep 10 µs before running it again, so that its queue can accumulate requests (§5.2).
//! * Both sleeps are interruptible: adding a handler wakes the thread at once.

use std::collections::VecDeque;

use crate::error::{at_least, ConfigError};

/// Identifier of a handler (one per virtqueue) within a joint thread.
pub type HandlerId = usize;

/// Parameters of the joint I/O threads.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields, default))]
pub struct JointConfig {
    /// Most back-end I/O threads (devices) combined into one joint thread (module parameter,
    /// default 4, §5.1). Unit: devices.
    pub combining_level: u32,
    /// Interruptible sleep of §5.2 and §5.3 ("10 µs, an empirical value"). Unit: ns.
    pub sleep_ns: u64,
}

impl Default for JointConfig {
    fn default() -> Self {
        Self { combining_level: 4, sleep_ns: 10_000 }
    }
}

impl JointConfig {
    /// Checks `combining_level >= 1`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        at_least("es2.joint.combining_level", self.combining_level, 1)
    }
}

/// Splits `n_devices` devices (ids `0..n`) into joint threads of at most `combining_level` each.
///
/// The paper fixes only the cap; we use the fewest threads (`ceil(n / level)`) and balance them
/// (sizes differ by at most one, contiguous ids), so 6 devices at level 4 become 3 + 3 rather
/// than 4 + 2.
pub fn combine_devices(n_devices: usize, combining_level: u32) -> Vec<Vec<usize>> {
    let level = combining_level.max(1) as usize;
    if n_devices == 0 {
        return Vec::new();
    }
    let threads = n_devices.div_ceil(level);
    let (base, extra) = (n_devices / threads, n_devices % threads);
    let mut next = 0;
    (0..threads)
        .map(|t| {
            let size = base + usize::from(t < extra);
            let group = (next..next + size).collect();
            next += size;
            group
        })
        .collect()
}

/// Why a handler is on the scheduling list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandlerKind {
    /// Triggered by a kick or with pending work.
    Regular,
    /// An optimistic-mode TX handler, scheduled on speculation.
    Polling,
}

/// What the thread does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JointDecision {
    /// Run this handler.
    Run(HandlerId, HandlerKind),
    /// Sleep (interruptibly) until `until_ns`, then call [`JointThread::next`] again.
    Sleep {
        /// End of the sleep (absolute, ns).
        until_ns: u64,
    },
    /// Nothing active: block until a handler is added.
    Idle,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ThreadState {
    Active,
    /// Sleeping; on wake-up, move the polling list back if `then_move_polling`.
    Sleeping { until_ns: u64, then_move_polling: bool },
}

/// One joint I/O thread's scheduler.
#[derive(Debug, Clone)]
pub struct JointThread {
    sleep_ns: u64,
    sched: VecDeque<(HandlerId, HandlerKind)>,
    polling: VecDeque<HandlerId>,
    state: ThreadState,
}

impl JointThread {
    /// An idle thread.
    pub fn new(cfg: &JointConfig) -> Self {
        Self { sleep_ns: cfg.sleep_ns, sched: VecDeque::new(), polling: VecDeque::new(), state: ThreadState::Active }
    }

    /// Scheduling list, head first.
    pub fn scheduling_list(&self) -> impl Iterator<Item = (HandlerId, HandlerKind)> + '_ {
        self.sched.iter().copied()
    }

    /// Polling list, head first.
    pub fn polling_list(&self) -> impl Iterator<Item = HandlerId> + '_ {
        self.polling.iter().copied()
    }

    /// Adds a handler to the tail of the scheduling list (a kick, an RX packet, new work). A handler
    /// already on the scheduling list stays where it is (upgraded to `Regular` if so added); one on
    /// the polling list moves to the scheduling list. Returns true when this wakes a sleeping
    /// thread (the caller interrupts the sleep and calls [`Self::next`]).
    pub fn add(&mut self, h: HandlerId, kind: HandlerKind) -> bool {
        if let Some(e) = self.sched.iter_mut().find(|e| e.0 == h) {
            if kind == HandlerKind::Regular {
                e.1 = kind;
            }
        } else {
            self.polling.retain(|&p| p != h);
            self.sched.push_back((h, kind));
        }
        let woke = matches!(self.state, ThreadState::Sleeping { .. });
        if let ThreadState::Sleeping { then_move_polling: true, .. } = self.state {
            self.move_polling_to_sched();
        }
        self.state = ThreadState::Active;
        woke
    }

    /// A perceptive handler reached its quota: back to the tail of the scheduling list; if it is
    /// then the only handler there, the thread first sleeps `sleep_ns` (§5.2).
    pub fn requeue_quota(&mut self, h: HandlerId, now_ns: u64) {
        self.sched.retain(|e| e.0 != h);
        self.sched.push_back((h, HandlerKind::Regular));
        if self.sched.len() == 1 {
            self.state = ThreadState::Sleeping { until_ns: now_ns.saturating_add(self.sleep_ns), then_move_polling: false };
        }
    }

    /// A polling handler ran and needs rescheduling: onto the polling list (§5.3).
    pub fn requeue_polling(&mut self, h: HandlerId) {
        if !self.polling.contains(&h) && !self.sched.iter().any(|e| e.0 == h) {
            self.polling.push_back(h);
        }
    }

    /// Removes a handler from both lists (its device went away or it has no more work).
    pub fn remove(&mut self, h: HandlerId) {
        self.sched.retain(|e| e.0 != h);
        self.polling.retain(|&p| p != h);
    }

    fn move_polling_to_sched(&mut self) {
        while let Some(p) = self.polling.pop_front() {
            self.sched.push_back((p, HandlerKind::Polling));
        }
    }

    /// Picks what the thread does at `now_ns`; all thread transitions are in this one `match`.
    pub fn next(&mut self, now_ns: u64) -> JointDecision {
        loop {
            match self.state {
                ThreadState::Sleeping { until_ns, .. } if now_ns < until_ns => return JointDecision::Sleep { until_ns },
                ThreadState::Sleeping { then_move_polling, .. } => {
                    if then_move_polling {
                        self.move_polling_to_sched();
                    }
                    self.state = ThreadState::Active;
                }
                ThreadState::Active => {
                    if let Some((h, kind)) = self.sched.pop_front() {
                        if kind == HandlerKind::Regular {
                            self.move_polling_to_sched();
                        }
                        return JointDecision::Run(h, kind);
                    }
                    if self.polling.is_empty() {
                        return JointDecision::Idle;
                    }
                    let until_ns = now_ns.saturating_add(self.sleep_ns);
                    self.state = ThreadState::Sleeping { until_ns, then_move_polling: true };
                    return JointDecision::Sleep { until_ns };
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use HandlerKind::{Polling, Regular};

    fn thread() -> JointThread {
        JointThread::new(&JointConfig::default())
    }

    #[test]
    fn combining_respects_the_level_and_balances() {
        assert_eq!(combine_devices(6, 4), vec![vec![0, 1, 2], vec![3, 4, 5]]);
        assert_eq!(combine_devices(4, 4), vec![vec![0, 1, 2, 3]]);
        assert_eq!(combine_devices(9, 4), vec![vec![0, 1, 2], vec![3, 4, 5], vec![6, 7, 8]]);
        assert!(combine_devices(0, 4).is_empty());
        assert!(JointConfig { combining_level: 0, ..Default::default() }.validate().is_err());
    }

    #[test]
    fn round_robin_over_the_scheduling_list() {
        let mut t = thread();
        t.add(1, Regular);
        t.add(2, Regular);
        t.add(1, Regular); // already queued
        assert_eq!(t.next(0), JointDecision::Run(1, Regular));
        assert_eq!(t.next(0), JointDecision::Run(2, Regular));
        assert_eq!(t.next(0), JointDecision::Idle);
    }

    #[test]
    fn only_polling_handlers_sleep_then_rerun() {
        let mut t = thread();
        t.add(5, Polling);
        assert_eq!(t.next(0), JointDecision::Run(5, Polling));
        t.requeue_polling(5);
        assert_eq!(t.next(100), JointDecision::Sleep { until_ns: 10_100 });
        assert_eq!(t.next(5_000), JointDecision::Sleep { until_ns: 10_100 });
        assert_eq!(t.next(10_100), JointDecision::Run(5, Polling));
    }

    #[test]
    fn regular_handler_pulls_polling_list_back_without_sleep() {
        let mut t = thread();
        t.add(5, Polling);
        t.add(1, Regular);
        assert_eq!(t.next(0), JointDecision::Run(5, Polling));
        t.requeue_polling(5);
        assert_eq!(t.next(0), JointDecision::Run(1, Regular));
        assert_eq!(t.polling_list().count(), 0);
        assert_eq!(t.next(0), JointDecision::Run(5, Polling));
    }

    #[test]
    fn adding_a_handler_interrupts_the_sleep() {
        let mut t = thread();
        t.add(5, Polling);
        t.next(0);
        t.requeue_polling(5);
        assert!(matches!(t.next(0), JointDecision::Sleep { .. }));
        assert!(t.add(2, Regular));
        // The new handler runs first; the polling handlers follow without another sleep.
        assert_eq!(t.next(1), JointDecision::Run(2, Regular));
        assert_eq!(t.next(1), JointDecision::Run(5, Polling));
    }

    #[test]
    fn lone_handler_at_quota_sleeps_before_its_next_turn() {
        let mut t = thread();
        t.add(3, Regular);
        assert_eq!(t.next(0), JointDecision::Run(3, Regular));
        t.requeue_quota(3, 50);
        assert_eq!(t.next(60), JointDecision::Sleep { until_ns: 10_050 });
        assert_eq!(t.next(10_050), JointDecision::Run(3, Regular));
    }

    #[test]
    fn handler_at_quota_with_company_does_not_sleep() {
        let mut t = thread();
        t.add(3, Regular);
        t.add(4, Regular);
        assert_eq!(t.next(0), JointDecision::Run(3, Regular));
        t.requeue_quota(3, 0);
        assert_eq!(t.next(0), JointDecision::Run(4, Regular));
        assert_eq!(t.next(0), JointDecision::Run(3, Regular));
    }

    #[test]
    fn rx_packet_moves_a_polling_handler_to_the_scheduling_list() {
        let mut t = thread();
        t.add(5, Polling);
        t.next(0);
        t.requeue_polling(5);
        t.add(5, Polling);
        assert_eq!(t.polling_list().count(), 0);
        assert_eq!(t.next(0), JointDecision::Run(5, Polling));
    }
}
