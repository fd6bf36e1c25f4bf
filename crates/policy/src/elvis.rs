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
//! The paper gives no numbers for any of these; its prototype does (abelg/virtual_io_acceleration,
//! `drivers/vhost/vhost.c` module parameters; /work/shared/SOURCES.md), and those are our defaults:
//! * `devices_per_worker` = 7 (`devices_per_worker`): `vhost_dev_assign_worker` gives a new device
//!   to a worker with fewer than 7 devices, else creates a new worker — [`assign_workers`];
//! * polling starts at `poll_start_per_jiffy` = 1 event per jiffy (`poll_start_rate`):
//!   `vhost_worker_thread` counts the work done on a virtqueue in the current jiffy
//!   (`work_this_jiffy`, reset when `jiffies` moves on) and enables polling when the count reaches
//!   the rate — with 1, a queue is polled from its first notification. The jiffy is `jiffy_ns`
//!   = 4 ms, x86 Linux's default `HZ` = 250 (`kernel/Kconfig.hz`); it matters only for a start
//!   rate above 1;
//! * polling stops after `poll_idle_ns` = 3 s without work (`poll_stop_idle` = 3*HZ jiffies):
//!   `roundrobin_poll` returns a polled queue to notifications when it finds no new request and
//!   `jiffies > jiffies_last_kick + poll_stop_idle`, `jiffies_last_kick` being when polling
//!   started or a poll last found work — wall time. (We once counted this in the producing
//!   vCPU's run time, because a 10 ms wall-time limit took polling from queues whose vCPU the
//!   host merely descheduled for a few ms, and a 10,000 kicks/s start rate rarely gave it back.
//!   With the prototype's values neither holds: host scheduling gaps are milliseconds, far below
//!   3 s, and the next kick restarts polling; so both worlds use the prototype's wall time, and
//!   a VM's number of vCPUs does not enter the rule.);
//! * the stuck rule is off (`stuck_ns` = None): `max_queue_stuck_cycles` and
//!   `max_work_stuck_cycles` are -1 ("disabled") in the prototype; set `stuck_ns` to enable it
//!   (then `min_work` applies too);
//! * `max_work` = 64 requests, `min_work` = 8: our choices (NAPI's `weight`, and an eighth of
//!   it). The prototype's per-turn limits are bytes (`vhost_can_continue(vq, processed, min,
//!   max)` called by `net.c` with `VHOST_MIN_NET_WEIGHT` = 0x1000 and `VHOST_MAX_NET_WEIGHT` =
//!   0x80000); this policy counts requests.
//!
//! Other choices: the interleaving alternates strictly between the work queue and the poll queue
//! (the prototype's worker loop runs one work item, then checks one polled queue), stuck queues
//! or not; when some queue is stuck, the next queue served from the work queue is the stuck
//! queue that has waited longest (so leaving early actually helps it); a queue left at
//! `max_work` (or early) goes back to the work queue's tail, and counts as fresh from then: it was
//! being served, not waiting (its notifications stay off until its next turn, so the guest's new
//! requests meanwhile announce nothing). Polling starts when a notification is counted (the
//! prototype enables it right after serving that notification's work).

use std::collections::VecDeque;

use crate::error::{at_least, ConfigError};

/// Index of a virtqueue served by the thread.
pub type QueueId = usize;

/// Parameters of the ELVIS scheduler (defaults: the prototype's; see the module doc).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields, default))]
pub struct ElvisConfig {
    /// Requests after which the thread always leaves a queue (default 64, our choice). Unit:
    /// requests.
    pub max_work: u32,
    /// With the stuck rule on: requests before which the thread never leaves a non-empty queue
    /// (default 8, our choice). Unit: requests.
    pub min_work: u32,
    /// The stuck rule: a queue with pending work is stuck when no new work arrived for this
    /// long. Default None: off, as in the prototype (`max_queue_stuck_cycles` = -1). Unit: ns.
    pub stuck_ns: Option<u64>,
    /// Notifications within one jiffy that start polling a queue (default 1, the prototype's
    /// `poll_start_rate`). Unit: events per jiffy.
    pub poll_start_per_jiffy: u32,
    /// The jiffy over which notifications are counted (default 4 ms, `HZ` = 250). Unit: ns.
    pub jiffy_ns: u64,
    /// A polled queue without work for longer than this returns to notifications (default 3 s,
    /// the prototype's `poll_stop_idle` = 3*HZ). Unit: ns of wall time.
    pub poll_idle_ns: u64,
    /// Exitless requests (§2.2, "ELVIS" in §4.2): poll a queue whose notification rate reaches
    /// `poll_start_per_jiffy`. false: every queue stays in notification mode ("fine-grained I/O
    /// scheduling only", §4.7). Default true.
    pub exitless_requests: bool,
    /// Devices an I/O thread (a prototype "worker") serves before the next one is created
    /// (default 7, the prototype's `devices_per_worker`); see [`assign_workers`]. Unit: devices.
    pub devices_per_worker: u32,
}

impl Default for ElvisConfig {
    fn default() -> Self {
        Self {
            max_work: 64,
            min_work: 8,
            stuck_ns: None,
            poll_start_per_jiffy: 1,
            jiffy_ns: 4_000_000,
            poll_idle_ns: 3_000_000_000,
            exitless_requests: true,
            devices_per_worker: 7,
        }
    }
}

impl ElvisConfig {
    /// Checks `1 <= min_work <= max_work`, a positive jiffy and stuck time, at least one event to
    /// start polling and one device per worker.
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
        if let Some(stuck) = self.stuck_ns {
            at_least("elvis.stuck_ns", stuck, 1)?;
        }
        at_least("elvis.jiffy_ns", self.jiffy_ns, 1)?;
        at_least("elvis.poll_start_per_jiffy", self.poll_start_per_jiffy, 1)?;
        at_least("elvis.devices_per_worker", self.devices_per_worker, 1)
    }
}

/// The prototype's assignment of devices to I/O threads (`vhost_dev_assign_worker`): devices,
/// in the order they are created, fill a worker up to `devices_per_worker`, then a new worker is
/// created. Returns each worker's device indices.
pub fn assign_workers(n_devices: usize, devices_per_worker: u32) -> Vec<Vec<usize>> {
    let per = devices_per_worker.max(1) as usize;
    (0..n_devices).step_by(per).map(|first| (first..(first + per).min(n_devices)).collect()).collect()
}

/// How a queue signals new requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueMode {
    /// Exit-based notifications; `events` counted in jiffy number `jiffy` (`now / jiffy_ns`).
    Notify {
        /// The jiffy the count belongs to (the prototype's `jiffies_last_work`).
        jiffy: u64,
        /// Notifications in that jiffy (`work_this_jiffy`).
        events: u32,
    },
    /// Notifications disabled; polled.
    Polled {
        /// When polling started or work was last done on the queue (the prototype's
        /// `jiffies_last_kick`), ns of wall time.
        last_work_ns: u64,
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
        let q = Queue { mode: QueueMode::Notify { jiffy: 0, events: 0 }, in_work_queue: false, last_new_work_ns: 0 };
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

    /// Stuck: waiting in the work queue with neither new work nor a turn for `stuck_ns` (never,
    /// with the stuck rule off).
    fn is_stuck(&self, q: QueueId, now_ns: u64) -> bool {
        let x = &self.queues[q];
        self.cfg.stuck_ns.is_some_and(|stuck| x.in_work_queue && now_ns.saturating_sub(x.last_new_work_ns) >= stuck)
    }

    /// The guest notified queue `q` (an exit). Returns [`ModeChange::StartPolling`] when the
    /// notifications counted in the current jiffy reach `poll_start_per_jiffy`. Out-of-range ids
    /// are ignored.
    pub fn on_kick(&mut self, q: QueueId, now_ns: u64) -> ModeChange {
        let Some(x) = self.queues.get_mut(q) else { return ModeChange::None };
        x.last_new_work_ns = now_ns;
        let change = match x.mode {
            QueueMode::Notify { jiffy, events } => {
                // The prototype's count: reset when `jiffies` has moved on since the last one.
                let now_jiffy = now_ns / self.cfg.jiffy_ns;
                let events = if now_jiffy == jiffy { events.saturating_add(1) } else { 1 };
                if events >= self.cfg.poll_start_per_jiffy && self.cfg.exitless_requests {
                    x.mode = QueueMode::Polled { last_work_ns: now_ns };
                    ModeChange::StartPolling
                } else {
                    x.mode = QueueMode::Notify { jiffy: now_jiffy, events };
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
        if let QueueMode::Polled { last_work_ns } = &mut self.queues[queue].mode {
            *last_work_ns = now_ns;
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

    /// The queue being served was found empty at `now_ns`. A polled queue without work for
    /// more than `poll_idle_ns` of wall time (since polling started or work was last done on
    /// it) returns to notification mode ([`ModeChange::StopPolling`]), as `roundrobin_poll`
    /// does.
    pub fn on_empty(&mut self, now_ns: u64) -> ModeChange {
        let ThreadState::Serving { queue, .. } = self.state else { return ModeChange::None };
        self.state = ThreadState::Idle;
        let QueueMode::Polled { last_work_ns } = self.queues[queue].mode else { return ModeChange::None };
        if now_ns.saturating_sub(last_work_ns) > self.cfg.poll_idle_ns {
            self.queues[queue].mode = QueueMode::Notify { jiffy: now_ns / self.cfg.jiffy_ns, events: 0 };
            self.poll.retain(|&x| x != queue);
            ModeChange::StopPolling
        } else {
            self.move_to_poll_tail(queue);
            ModeChange::None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;
    const S: u64 = 1_000_000_000;

    /// Scheduling tests: the stuck rule on at 50 µs, no polling (so that kicks only queue work).
    fn sched(n: usize) -> ElvisScheduler {
        ElvisScheduler::new(ElvisConfig { max_work: 4, min_work: 2, stuck_ns: Some(50_000), exitless_requests: false, ..Default::default() }, n)
    }

    #[test]
    fn defaults_are_the_prototypes() {
        let d = ElvisConfig::default();
        assert_eq!((d.devices_per_worker, d.poll_start_per_jiffy, d.poll_idle_ns, d.stuck_ns), (7, 1, 3 * S, None));
        assert!(d.validate().is_ok());
    }

    #[test]
    fn validation() {
        let e = ElvisConfig { min_work: 100, ..Default::default() }.validate().unwrap_err();
        assert_eq!(e.param, "elvis.min_work");
        let e = ElvisConfig { devices_per_worker: 0, ..Default::default() }.validate().unwrap_err();
        assert_eq!(e.param, "elvis.devices_per_worker");
        let e = ElvisConfig { stuck_ns: Some(0), ..Default::default() }.validate().unwrap_err();
        assert_eq!(e.param, "elvis.stuck_ns");
        let e = ElvisConfig { poll_start_per_jiffy: 0, ..Default::default() }.validate().unwrap_err();
        assert_eq!(e.param, "elvis.poll_start_per_jiffy");
    }

    #[test]
    fn workers_fill_up_to_devices_per_worker_in_creation_order() {
        assert_eq!(assign_workers(0, 7), Vec::<Vec<usize>>::new());
        assert_eq!(assign_workers(7, 7), vec![(0..7).collect::<Vec<_>>()]);
        assert_eq!(assign_workers(10, 7), vec![(0..7).collect(), vec![7, 8, 9]]);
        assert_eq!(assign_workers(3, 1), vec![vec![0], vec![1], vec![2]]);
    }

    #[test]
    fn serves_notified_queues_in_order_and_idles() {
        let mut s = sched(3);
        s.on_kick(2, 0);
        s.on_kick(0, 0);
        assert_eq!(s.next(0), ElvisDecision::Serve(2, Source::Work));
        assert_eq!(s.on_request(0), ServeAction::Continue);
        assert_eq!(s.on_empty(0), ModeChange::None);
        assert_eq!(s.next(0), ElvisDecision::Serve(0, Source::Work));
        s.on_empty(0);
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
    fn without_the_stuck_rule_a_queue_is_left_only_at_max_work() {
        // The prototype's default (max_queue_stuck_cycles = -1): queue 1 waits however long.
        let cfg = ElvisConfig { max_work: 4, min_work: 2, exitless_requests: false, ..Default::default() };
        let mut s = ElvisScheduler::new(cfg, 2);
        s.on_kick(0, 0);
        s.on_kick(1, 0);
        assert_eq!(s.next(0), ElvisDecision::Serve(0, Source::Work));
        let acts: Vec<_> = (1..=4).map(|k| s.on_request(k * S)).collect();
        assert_eq!(acts, [ServeAction::Continue, ServeAction::Continue, ServeAction::Continue, ServeAction::Leave]);
        assert_eq!(s.next(5 * S), ElvisDecision::Serve(1, Source::Work));
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
        let cfg = ElvisConfig { max_work: 4, min_work: 1, stuck_ns: Some(50_000), poll_start_per_jiffy: 2, ..Default::default() };
        let mut s = ElvisScheduler::new(cfg, 4);
        s.on_kick(3, 0);
        assert_eq!(s.on_kick(3, 0), ModeChange::StartPolling); // 2 events in one jiffy
        assert_eq!(s.next(0), ElvisDecision::Serve(3, Source::Work));
        s.on_empty(0);
        // An overloaded thread: three notified queues, each waiting past stuck_ns by the time
        // its turn comes (each turn takes 60 us). The polled queue, whose kicks are off, is
        // looked at every other turn all the same (§3: both queues, interleaved). Their kicks
        // come one per jiffy at most: they stay notified.
        for q in 0..3 {
            s.on_kick(q, 0);
        }
        let mut polled = 0;
        for turn in 1..=12u64 {
            let t = turn * 60_000;
            match s.next(t) {
                ElvisDecision::Serve(3, Source::Poll) => {
                    polled += 1;
                    s.on_empty(t);
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
        s.on_empty(100_000);
        s.on_kick(1, 100_000);
        assert_eq!(s.next(100_000), ElvisDecision::Serve(0, Source::Work));
        s.on_host_work(1, 0); // make queue 1's last new work old
        assert_eq!(s.on_request(200_000), ServeAction::Continue);
    }

    #[test]
    fn by_default_the_first_notification_starts_polling() {
        // poll_start_rate = 1 event per jiffy: work_this_jiffy reaches it at once.
        let mut s = ElvisScheduler::new(ElvisConfig::default(), 2);
        assert_eq!(s.on_kick(1, 123), ModeChange::StartPolling);
        assert_eq!(s.poll_queue().collect::<Vec<_>>(), vec![1]);
        assert!(matches!(s.mode(0), Some(QueueMode::Notify { .. })));
    }

    #[test]
    fn the_start_count_is_per_jiffy_and_resets_when_the_jiffy_moves_on() {
        let cfg = ElvisConfig { poll_start_per_jiffy: 3, jiffy_ns: 4 * MS, ..Default::default() };
        let mut s = ElvisScheduler::new(cfg, 1);
        // Two per jiffy, for many jiffies: never three in one.
        for j in 0..50 {
            assert_eq!(s.on_kick(0, j * 4 * MS + MS), ModeChange::None);
            assert_eq!(s.on_kick(0, j * 4 * MS + 3 * MS), ModeChange::None);
        }
        // Three within jiffy 60 (counted from its start, not from the first kick).
        assert_eq!(s.on_kick(0, 240 * MS), ModeChange::None);
        assert_eq!(s.on_kick(0, 242 * MS), ModeChange::None);
        assert_eq!(s.on_kick(0, 243 * MS + 999_999), ModeChange::StartPolling);
    }

    #[test]
    fn polling_stops_after_the_idle_limit_of_wall_time_since_the_last_work() {
        let mut s = ElvisScheduler::new(ElvisConfig::default(), 1);
        assert_eq!(s.on_kick(0, 0), ModeChange::StartPolling);
        assert_eq!(s.next(0), ElvisDecision::Serve(0, Source::Work));
        s.on_request(10 * MS); // the last work: 10 ms
        assert_eq!(s.on_empty(10 * MS), ModeChange::None);
        // Empty polls for 3 s (the guest issues nothing, or its vCPU is descheduled: the same).
        for t in (1..=300).map(|k| 10 * MS + k * 10 * MS) {
            assert_eq!(s.next(t), ElvisDecision::Serve(0, Source::Poll));
            assert_eq!(s.on_empty(t), ModeChange::None, "at {t}: not more than 3 s idle");
        }
        assert_eq!(s.next(3010 * MS + 1), ElvisDecision::Serve(0, Source::Poll));
        assert_eq!(s.on_empty(3010 * MS + 1), ModeChange::StopPolling);
        assert!(matches!(s.mode(0), Some(QueueMode::Notify { .. })));
        assert_eq!(s.next(3011 * MS), ElvisDecision::Idle);
        // The next notification polls it again.
        assert_eq!(s.on_kick(0, 4 * S), ModeChange::StartPolling);
    }

    #[test]
    fn a_queue_polled_but_never_served_stops_counting_from_the_start_of_polling() {
        let cfg = ElvisConfig { poll_idle_ns: 10 * MS, ..Default::default() };
        let mut s = ElvisScheduler::new(cfg, 1);
        assert_eq!(s.on_kick(0, 5 * MS), ModeChange::StartPolling);
        s.next(5 * MS);
        assert_eq!(s.on_empty(15 * MS), ModeChange::None, "exactly 10 ms: not more");
        s.next(15 * MS + 1);
        assert_eq!(s.on_empty(15 * MS + 1), ModeChange::StopPolling);
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
        let mut s = ElvisScheduler::new(ElvisConfig::default(), 3);
        s.on_kick(0, 0); // one event: polled at once
        s.on_kick(1, 0);
        assert_eq!(s.poll_queue().collect::<Vec<_>>(), vec![0, 1]);
        let d1 = s.next(1);
        s.on_empty(1);
        s.on_host_work(2, 1);
        let d2 = s.next(2);
        s.on_empty(2);
        let d3 = s.next(3);
        s.on_empty(3);
        let d4 = s.next(4);
        assert_eq!(d1, ElvisDecision::Serve(0, Source::Work));
        assert_eq!(d2, ElvisDecision::Serve(1, Source::Poll));
        assert_eq!(d3, ElvisDecision::Serve(2, Source::Work));
        assert_eq!(d4, ElvisDecision::Serve(0, Source::Poll));
    }
}
