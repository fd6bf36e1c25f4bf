//! ELVIS fine-grained I/O scheduling (§2.2–2.3, §3): one I/O thread per dedicated I/O core serves
//! the virtqueues of many VMs from a *work queue* (queues with notified or host-side work) and a
//! *poll queue* (queues whose notifications are disabled and which the thread polls).
//!
//! Rules, as §3 states them:
//! * always leave a queue after `max_work` requests, even if it is not empty;
//! * leave earlier, but not before `min_work`, when another non-empty queue is *stuck*: a certain
//!   time (`stuck_ns`) has passed since it last received new work;
//! * look for work in both queues, interleaved; any time work is done on a virtqueue it moves to the
//!   end of the poll queue;
//! * start polling a queue once its notification rate exceeds a threshold; stop (re-enable
//!   notifications) when its activity subsides.
//!
//! The paper gives no numbers for any of these. Our choices, with reasons:
//! * `max_work` = 64 requests: NAPI's `weight`, Linux's usual per-turn budget;
//! * `min_work` = 8 requests: an eighth of that, enough to amortize the switch (a page-table change);
//! * `stuck_ns` = 50 µs: several times an uncontended request-response turn around, so a waiting
//!   request-response flow is found stuck while a streaming one (new work every few µs) is not;
//! * `poll_start_rate` = 10,000 notifications/s counted over `rate_window_ns` = 10 ms windows
//!   (a queue kicking that often spends more on exits than polling it costs);
//! * `poll_idle_ns` = 10 ms: stop after a whole rate window without any work — counted in the
//!   time the queue's *producer* (the guest vCPU that fills it) ran, not in wall time: "activity
//!   on this virtqueue subsides" means the guest stopped issuing requests, and a vCPU the host
//!   scheduler keeps off its core issues none without its activity having subsided (in wall
//!   time a descheduled vCPU's queue looked idle and lost its polling for good). Each world's
//!   adapter supplies that clock: the testbed the vCPU thread's run time, the simulator the
//!   vCPU's.
//!
//! Other choices: the interleaving alternates strictly between the work queue and the poll queue,
//! stuck queues or not; when some queue is stuck, the next queue served from the work queue is
//! the stuck queue that has waited longest (so leaving early actually helps it); a queue left at
//! `max_work` (or early) goes back to the work queue's tail, and counts as fresh from then: it was
//! being served, not waiting (its notifications stay off until its next turn, so the guest's new
//! requests meanwhile announce nothing).

use std::collections::VecDeque;

use crate::error::{at_least, ConfigError};

/// Index of a virtqueue served by the thread.
pub type QueueId = usize;

/// Parameters of the ELVIS scheduler (all values are our choices; see the module doc).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields, default))]
pub struct ElvisConfig {
    /// Requests after which the thread always leaves a queue (default 64). Unit: requests.
    pub max_work: u32,
    /// Requests before which the thread never leaves a non-empty queue (default 8). Unit: requests.
    pub min_work: u32,
    /// A queue with pending work is stuck when no new work arrived for this long (default 50 µs).
    /// Unit: ns.
    pub stuck_ns: u64,
    /// Notification rate above which a queue is polled (default 10,000). Unit: notifications/s.
    pub poll_start_rate: u32,
    /// Window over which notifications are counted (default 10 ms). Unit: ns.
    pub rate_window_ns: u64,
    /// A polled queue without work for this long returns to notifications (default 10 ms). Unit: ns.
    pub poll_idle_ns: u64,
    /// Exitless requests (§2.2, "ELVIS" in §4.2): poll a queue whose notification rate exceeds
    /// `poll_start_rate`. false: every queue stays in notification mode ("fine-grained I/O
    /// scheduling only", §4.7). Default true.
    pub exitless_requests: bool,
}

impl Default for ElvisConfig {
    fn default() -> Self {
        Self {
            max_work: 64,
            min_work: 8,
            stuck_ns: 50_000,
            poll_start_rate: 10_000,
            rate_window_ns: 10_000_000,
            poll_idle_ns: 10_000_000,
            exitless_requests: true,
        }
    }
}

impl ElvisConfig {
    /// Checks `1 <= min_work <= max_work`, positive window, rate ≥ 1.
    pub fn validate(&self) -> Result<(), ConfigError> {
        at_least("elvis.max_work", self.max_work, 1)?;
        at_least("elvis.min_work", self.min_work, 1)?;
        if self.min_work > self.max_work {
            return Err(ConfigError::new(
                "elvis.min_work",
                self.min_work,
                format!("must not exceed elvis.max_work ({})", self.max_work),
            ));
        }
        at_least("elvis.rate_window_ns", self.rate_window_ns, 1)?;
        at_least("elvis.poll_start_rate", self.poll_start_rate, 1)
    }

    /// Notifications within one window that start polling: `ceil(rate × window)`, at least 1.
    fn kicks_to_poll(&self) -> u64 {
        (u64::from(self.poll_start_rate) * self.rate_window_ns).div_ceil(1_000_000_000).max(1)
    }
}

/// How a queue signals new requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueMode {
    /// Exit-based notifications; `kicks` counted since `window_start_ns`.
    Notify {
        /// Start of the current counting window, ns.
        window_start_ns: u64,
        /// Notifications in the current window.
        kicks: u64,
    },
    /// Notifications disabled; polled.
    Polled {
        /// The producer's run clock when the queue was last seen without work since work was
        /// done on it (None: work was done since; the next empty look starts the count), ns.
        idle_since_run_ns: Option<u64>,
    },
}

#[derive(Debug, Clone)]
struct Queue {
    mode: QueueMode,
    in_work_queue: bool,
    last_new_work_ns: u64,
}

/// Why a queue is being served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Taken from the work queue (notified or host-side work).
    Work,
    /// Polled from the poll queue.
    Poll,
}

/// Decision of [`ElvisScheduler::next`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElvisDecision {
    /// Serve (or poll) this queue; then report [`ElvisScheduler::on_request`] per request and
    /// [`ElvisScheduler::on_empty`] when it is empty.
    Serve(QueueId, Source),
    /// Nothing to do: wait for a notification.
    Idle,
}

/// Result of handling one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServeAction {
    /// Take the next request from the same queue.
    Continue,
    /// Leave the queue now (it stays on the work queue); call [`ElvisScheduler::next`].
    Leave,
}

/// Notification-mode changes the caller must apply to the guest-visible ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModeChange {
    /// No change.
    None,
    /// Disable notifications permanently: the queue is now polled.
    StartPolling,
    /// Re-enable notifications (then re-check the ring, as vhost does).
    StopPolling,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ThreadState {
    Idle,
    Serving { queue: QueueId, done: u32 },
}

/// One ELVIS I/O thread.
#[derive(Debug, Clone)]
pub struct ElvisScheduler {
    cfg: ElvisConfig,
    queues: Vec<Queue>,
    work: VecDeque<QueueId>,
    poll: VecDeque<QueueId>,
    prefer_poll: bool,
    state: ThreadState,
}

impl ElvisScheduler {
    /// A thread serving `n_queues` queues, all in notification mode. Call
    /// [`ElvisConfig::validate`] first.
    pub fn new(cfg: ElvisConfig, n_queues: usize) -> Self {
        let q = Queue { mode: QueueMode::Notify { window_start_ns: 0, kicks: 0 }, in_work_queue: false, last_new_work_ns: 0 };
        Self { cfg, queues: vec![q; n_queues], work: VecDeque::new(), poll: VecDeque::new(), prefer_poll: false, state: ThreadState::Idle }
    }

    /// Mode of queue `q`.
    pub fn mode(&self, q: QueueId) -> Option<QueueMode> {
        self.queues.get(q).map(|x| x.mode)
    }

    /// Work queue, head first.
    pub fn work_queue(&self) -> impl Iterator<Item = QueueId> + '_ {
        self.work.iter().copied()
    }

    /// Poll queue, head first.
    pub fn poll_queue(&self) -> impl Iterator<Item = QueueId> + '_ {
        self.poll.iter().copied()
    }

    fn push_work(&mut self, q: QueueId) {
        if !self.queues[q].in_work_queue {
            self.queues[q].in_work_queue = true;
            self.work.push_back(q);
        }
    }

    fn take_work(&mut self, q: QueueId) {
        if self.queues[q].in_work_queue {
            self.queues[q].in_work_queue = false;
            self.work.retain(|&x| x != q);
        }
    }

    fn move_to_poll_tail(&mut self, q: QueueId) {
        if matches!(self.queues[q].mode, QueueMode::Polled { .. }) {
            self.poll.retain(|&x| x != q);
            self.poll.push_back(q);
        }
    }

    /// Stuck: waiting in the work queue with neither new work nor a turn for `stuck_ns`.
    fn is_stuck(&self, q: QueueId, now_ns: u64) -> bool {
        let x = &self.queues[q];
        x.in_work_queue && now_ns.saturating_sub(x.last_new_work_ns) >= self.cfg.stuck_ns
    }

    /// The guest notified queue `q` (an exit). Returns [`ModeChange::StartPolling`] when its rate
    /// crosses the threshold. Out-of-range ids are ignored.
    pub fn on_kick(&mut self, q: QueueId, now_ns: u64) -> ModeChange {
        let Some(x) = self.queues.get_mut(q) else { return ModeChange::None };
        x.last_new_work_ns = now_ns;
        let threshold = self.cfg.kicks_to_poll();
        let change = match x.mode {
            QueueMode::Notify { window_start_ns, kicks } => {
                let (start, kicks) = if now_ns >= window_start_ns.saturating_add(self.cfg.rate_window_ns) {
                    (now_ns, 1)
                } else {
                    (window_start_ns, kicks + 1)
                };
                if kicks >= threshold && self.cfg.exitless_requests {
                    x.mode = QueueMode::Polled { idle_since_run_ns: None };
                    ModeChange::StartPolling
                } else {
                    x.mode = QueueMode::Notify { window_start_ns: start, kicks };
                    ModeChange::None
                }
            }
            QueueMode::Polled { .. } => ModeChange::None, // a kick that raced the disable
        };
        if change == ModeChange::StartPolling {
            self.poll.push_back(q);
        }
        self.push_work(q);
        change
    }

    /// Host-side work for queue `q` (e.g. a packet arrived for a pending receive).
    pub fn on_host_work(&mut self, q: QueueId, now_ns: u64) {
        if q < self.queues.len() {
            self.queues[q].last_new_work_ns = now_ns;
            self.push_work(q);
        }
    }

    /// Chooses the next queue to serve at `now_ns`.
    pub fn next(&mut self, now_ns: u64) -> ElvisDecision {
        // Both queues, interleaved (§3), whatever is stuck: a polled queue's kicks are off, so
        // a stuck work queue served ahead of every poll (as it once was) left the polled queues
        // unlooked-at for as long as the thread was busy enough for some queue to be stuck.
        let from_poll = !self.poll.is_empty() && (self.prefer_poll || self.work.is_empty());
        self.prefer_poll = !from_poll;
        let pick = if from_poll {
            self.poll.front().map(|&q| (q, Source::Poll))
        } else {
            let stuck = self
                .work
                .iter()
                .copied()
                .filter(|&q| self.is_stuck(q, now_ns))
                .min_by_key(|&q| self.queues[q].last_new_work_ns);
            stuck.or(self.work.front().copied()).map(|q| (q, Source::Work))
        };
        match pick {
            Some((q, src)) => {
                self.take_work(q);
                self.state = ThreadState::Serving { queue: q, done: 0 };
                ElvisDecision::Serve(q, src)
            }
            None => {
                self.state = ThreadState::Idle;
                ElvisDecision::Idle
            }
        }
    }

    /// One request of the queue being served was handled at `now_ns`.
    pub fn on_request(&mut self, now_ns: u64) -> ServeAction {
        let ThreadState::Serving { queue, done } = self.state else { return ServeAction::Leave };
        let done = done.saturating_add(1);
        if let QueueMode::Polled { idle_since_run_ns } = &mut self.queues[queue].mode {
            *idle_since_run_ns = None;
        }
        let other_stuck = done >= self.cfg.min_work
            && self.work.iter().any(|&q| q != queue && self.is_stuck(q, now_ns));
        if done >= self.cfg.max_work || other_stuck {
            // The queue was served until now: it is not waiting for the thread, however old
            // its work. (Its notifications stay off while it waits for its next turn, so what
            // the guest adds meanwhile announces nothing; dated by its last kick, a queue left
            // with work stayed the oldest stuck queue and was picked again at every decision,
            // for good, while every other queue waited.)
            self.queues[queue].last_new_work_ns = now_ns;
            self.push_work(queue);
            self.move_to_poll_tail(queue);
            self.state = ThreadState::Idle;
            return ServeAction::Leave;
        }
        self.state = ThreadState::Serving { queue, done };
        ServeAction::Continue
    }

    /// The queue being served was found empty at `now_ns`; `producer_run_ns` reads the run
    /// clock of the vCPU that fills it (ns it has run; read only for a polled queue). A polled
    /// queue whose producer ran `poll_idle_ns` without adding work returns to notification mode
    /// ([`ModeChange::StopPolling`]).
    pub fn on_empty(&mut self, now_ns: u64, producer_run_ns: impl FnOnce() -> u64) -> ModeChange {
        let ThreadState::Serving { queue, .. } = self.state else { return ModeChange::None };
        self.state = ThreadState::Idle;
        let QueueMode::Polled { idle_since_run_ns } = self.queues[queue].mode else { return ModeChange::None };
        let run = producer_run_ns();
        match idle_since_run_ns {
            Some(since) if run.saturating_sub(since) >= self.cfg.poll_idle_ns => {
                self.queues[queue].mode = QueueMode::Notify { window_start_ns: now_ns, kicks: 0 };
                self.poll.retain(|&x| x != queue);
                ModeChange::StopPolling
            }
            _ => {
                self.queues[queue].mode = QueueMode::Polled { idle_since_run_ns: idle_since_run_ns.or(Some(run)) };
                self.move_to_poll_tail(queue);
                ModeChange::None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sched(n: usize) -> ElvisScheduler {
        ElvisScheduler::new(ElvisConfig { max_work: 4, min_work: 2, ..Default::default() }, n)
    }

    #[test]
    fn validation() {
        assert!(ElvisConfig::default().validate().is_ok());
        let e = ElvisConfig { min_work: 100, ..Default::default() }.validate().unwrap_err();
        assert_eq!(e.param, "elvis.min_work");
    }

    #[test]
    fn serves_notified_queues_in_order_and_idles() {
        let mut s = sched(3);
        s.on_kick(2, 0);
        s.on_kick(0, 0);
        assert_eq!(s.next(0), ElvisDecision::Serve(2, Source::Work));
        assert_eq!(s.on_request(0), ServeAction::Continue);
        assert_eq!(s.on_empty(0, || 0), ModeChange::None);
        assert_eq!(s.next(0), ElvisDecision::Serve(0, Source::Work));
        s.on_empty(0, || 0);
        assert_eq!(s.next(0), ElvisDecision::Idle);
    }

    #[test]
    fn leaves_after_max_work_and_requeues() {
        let mut s = sched(2);
        s.on_kick(0, 0);
        s.on_kick(1, 0);
        s.next(0);
        let acts: Vec<_> = (0..4).map(|_| s.on_request(1)).collect();
        assert_eq!(acts.last(), Some(&ServeAction::Leave));
        assert_eq!(s.work_queue().collect::<Vec<_>>(), vec![1, 0]);
    }

    #[test]
    fn leaves_early_after_min_work_when_another_queue_is_stuck_and_serves_it() {
        let mut s = sched(3);
        s.on_kick(0, 0);
        s.on_kick(1, 0); // latency-sensitive: one request, then waits
        s.on_kick(2, 10_000);
        assert_eq!(s.next(10_000), ElvisDecision::Serve(0, Source::Work));
        assert_eq!(s.on_request(20_000), ServeAction::Continue); // queue 1 not stuck yet
        assert_eq!(s.on_request(60_000), ServeAction::Leave); // done = 2 = min, queue 1 stuck
        assert_eq!(s.next(60_000), ElvisDecision::Serve(1, Source::Work));
    }

    #[test]
    fn a_queue_left_with_work_is_not_stuck_and_does_not_monopolize_the_thread() {
        let mut s = sched(3);
        s.on_kick(0, 0); // a stream: its kicks stay off while it is served or waits its turn
        s.on_kick(1, 10_000);
        s.on_kick(2, 10_000);
        // Every queue has waited past stuck_ns: the oldest stuck one is served first...
        assert_eq!(s.next(100_000), ElvisDecision::Serve(0, Source::Work));
        assert_eq!(s.on_request(100_100), ServeAction::Continue);
        assert_eq!(s.on_request(100_200), ServeAction::Leave); // min_work, others stuck
        // ...and, left with work but no kick since, it does not stay the oldest: the others
        // get their turns before it comes round again.
        assert_eq!(s.next(100_200), ElvisDecision::Serve(1, Source::Work));
        s.on_request(100_300);
        assert_eq!(s.on_request(100_400), ServeAction::Leave);
        assert_eq!(s.next(100_400), ElvisDecision::Serve(2, Source::Work));
        s.on_request(100_500);
        s.on_request(100_600);
        assert_eq!(s.next(100_600), ElvisDecision::Serve(0, Source::Work));
    }

    #[test]
    fn a_polled_queue_keeps_its_turns_while_work_queues_are_stuck() {
        let cfg = ElvisConfig { max_work: 4, min_work: 1, poll_start_rate: 200, rate_window_ns: 10_000_000, ..Default::default() };
        let mut s = ElvisScheduler::new(cfg, 4);
        s.on_kick(3, 0);
        assert_eq!(s.on_kick(3, 0), ModeChange::StartPolling); // threshold 2 kicks
        assert_eq!(s.next(0), ElvisDecision::Serve(3, Source::Work));
        s.on_empty(0, || 0);
        // An overloaded thread: three notified queues, each waiting past stuck_ns by the time
        // its turn comes (each turn takes 60 us). The polled queue, whose kicks are off, is
        // looked at every other turn all the same (§3: both queues, interleaved).
        for q in 0..3 {
            s.on_kick(q, 0);
        }
        let mut polled = 0;
        for turn in 1..=12u64 {
            let t = turn * 60_000;
            match s.next(t) {
                ElvisDecision::Serve(3, Source::Poll) => {
                    polled += 1;
                    s.on_empty(t, || t);
                }
                ElvisDecision::Serve(q, Source::Work) => {
                    assert!(q < 3);
                    assert_eq!(s.on_request(t + 30_000), ServeAction::Leave, "another queue is stuck");
                }
                d => panic!("turn {turn}: {d:?}"),
            }
        }
        assert_eq!(polled, 6);
    }

    #[test]
    fn does_not_leave_before_min_work() {
        let mut s = sched(2);
        s.on_kick(1, 0);
        s.on_kick(0, 100_000);
        s.next(100_000); // serves 1 (stuck: oldest)
        s.on_empty(100_000, || 100_000);
        s.on_kick(1, 100_000);
        assert_eq!(s.next(100_000), ElvisDecision::Serve(0, Source::Work));
        s.on_host_work(1, 0); // make queue 1's last new work old
        assert_eq!(s.on_request(200_000), ServeAction::Continue);
    }

    #[test]
    fn high_notification_rate_starts_polling_and_idle_stops_it() {
        let cfg = ElvisConfig { poll_start_rate: 1000, rate_window_ns: 10_000_000, ..Default::default() };
        let mut s = ElvisScheduler::new(cfg, 1);
        // 1000/s over 10 ms = 10 kicks in one window.
        let changes: Vec<_> = (0..10).map(|i| s.on_kick(0, i * 100_000)).collect();
        assert_eq!(changes[..9], [ModeChange::None; 9]);
        assert_eq!(changes[9], ModeChange::StartPolling);
        assert_eq!(s.poll_queue().collect::<Vec<_>>(), vec![0]);
        // Served from work queue first, then polled.
        assert_eq!(s.next(1_000_000), ElvisDecision::Serve(0, Source::Work));
        s.on_request(1_000_000);
        assert_eq!(s.on_empty(1_000_000, || 1_000_000), ModeChange::None);
        assert_eq!(s.next(2_000_000), ElvisDecision::Serve(0, Source::Poll));
        assert_eq!(s.on_empty(11_000_000, || 11_000_000), ModeChange::StopPolling);
        assert!(matches!(s.mode(0), Some(QueueMode::Notify { .. })));
        assert_eq!(s.next(11_000_000), ElvisDecision::Idle);
    }

    #[test]
    fn idleness_counts_the_producers_run_time_not_wall_time() {
        let cfg = ElvisConfig { poll_start_rate: 100, rate_window_ns: 10_000_000, ..Default::default() };
        let mut s = ElvisScheduler::new(cfg, 1);
        assert_eq!(s.on_kick(0, 0), ModeChange::StartPolling);
        assert_eq!(s.next(0), ElvisDecision::Serve(0, Source::Work));
        s.on_request(0);
        // The vCPU ran 1 ms, then was descheduled for 50 ms: its run clock stands still.
        assert_eq!(s.on_empty(1_000_000, || 1_000_000), ModeChange::None);
        for t in (2..=51).map(|ms| ms * 1_000_000) {
            assert_eq!(s.next(t), ElvisDecision::Serve(0, Source::Poll));
            assert_eq!(s.on_empty(t, || 1_000_000), ModeChange::None, "a descheduled guest is not idle at {t}");
        }
        // Back on its core and issuing nothing for 10 ms of its own run time: polling stops.
        assert_eq!(s.next(60_000_000), ElvisDecision::Serve(0, Source::Poll));
        assert_eq!(s.on_empty(60_000_000, || 11_000_000), ModeChange::StopPolling);
    }

    #[test]
    fn slow_kicks_never_start_polling() {
        let cfg = ElvisConfig { poll_start_rate: 1000, rate_window_ns: 10_000_000, ..Default::default() };
        let mut s = ElvisScheduler::new(cfg, 1);
        assert!((0..100).all(|i| s.on_kick(0, i * 2_000_000) == ModeChange::None));
    }

    #[test]
    fn without_exitless_requests_a_fast_queue_stays_notified() {
        let cfg = ElvisConfig { exitless_requests: false, ..Default::default() };
        let mut s = ElvisScheduler::new(cfg, 1);
        assert!((0..1000).all(|i| s.on_kick(0, i * 1000) == ModeChange::None));
        assert!(matches!(s.mode(0), Some(QueueMode::Notify { .. })));
        assert_eq!(s.next(1_000_000), ElvisDecision::Serve(0, Source::Work));
    }

    #[test]
    fn interleaves_work_and_poll_queues_and_rotates_polled_queue() {
        let cfg = ElvisConfig { poll_start_rate: 100, rate_window_ns: 10_000_000, ..Default::default() };
        let mut s = ElvisScheduler::new(cfg, 3);
        s.on_kick(0, 0); // threshold 1 kick: polled at once
        s.on_kick(1, 0);
        assert_eq!(s.poll_queue().collect::<Vec<_>>(), vec![0, 1]);
        let d1 = s.next(1);
        s.on_empty(1, || 1);
        s.on_host_work(2, 1);
        let d2 = s.next(2);
        s.on_empty(2, || 2);
        let d3 = s.next(3);
        s.on_empty(3, || 3);
        let d4 = s.next(4);
        assert_eq!(d1, ElvisDecision::Serve(0, Source::Work));
        assert_eq!(d2, ElvisDecision::Serve(1, Source::Poll));
        assert_eq!(d3, ElvisDecision::Serve(2, Source::Work));
        assert_eq!(d4, ElvisDecision::Serve(0, Source::Poll));
    }
}
