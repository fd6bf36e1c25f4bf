//! The host scheduler: a CFS-like model of Linux 4.4's `kernel/sched/fair.c` (DESIGN §3.3).
//!
//! Per-pCPU runqueues ordered by vruntime (`update_curr`, `calc_delta_fair` with the nice-0
//! weight 1024 and `prio_to_weight`), slices from the scheduling period (`__sched_period`,
//! `sched_slice`), tick preemption (`check_preempt_tick`), wake-up preemption
//! (`check_preempt_wakeup`, `wakeup_gran`), sleeper placement (`place_entity` with
//! GENTLE_FAIR_SLEEPERS), affinity masks, wake-up placement (`place.rs`: `select_task_rq_fair`,
//! `wake_affine`, `select_idle_sibling`) and load balancing (`balance.rs`: `idle_balance`,
//! `rebalance_domains`, `nohz_idle_balance`).
//!
//! The scheduler only decides; the host model (`threads.rs`) carries the decisions out, because
//! a thread can leave its pCPU only at a preemption point (a vCPU at VM entry, vhost between
//! packets, a CPU hog at once). Decisions come out as [`Action`]s in a reusable buffer.

mod balance;
pub mod cpumask;
pub mod credit;
mod idle;
mod load;
mod place;
mod seam;
mod waits;
#[cfg(test)]
mod tests;
mod yield_to;

use crate::engine::{Rng, Time, round_ns};
pub use cpumask::{CpuMask, MAX_PCPUS};
pub use idle::{CStateTable, IdleHistory, MAX_CSTATES};
pub use credit::{Credit, CreditParams};
pub use seam::{SchedStats, Scheduler};

/// Linux `NICE_0_LOAD` (scale of vruntime: ns of a nice-0 thread).
pub const NICE_0_LOAD: u64 = 1024;

/// Linux 4.4 `prio_to_weight[]` (kernel/sched/core.c), index nice + 20.
const PRIO_TO_WEIGHT: [u64; 40] = [
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100, 4904, 3906, 3121,
    2501, 1991, 1586, 1277, 1024, 820, 655, 526, 423, 335, 272, 215, 172, 137, 110, 87, 70, 56, 45, 36, 29, 23,
    18, 15,
];

/// Load weight of a nice value (−20..=19).
pub fn nice_weight(nice: i32) -> u64 {
    PRIO_TO_WEIGHT[(nice.clamp(-20, 19) + 20) as usize]
}

/// Scheduler parameters, already scaled for the number of CPUs.
#[derive(Debug, Clone, Copy)]
pub struct Params {
    /// `sysctl_sched_latency` (ns).
    pub latency_ns: u64,
    /// `sysctl_sched_min_granularity` (ns).
    pub min_granularity_ns: u64,
    /// `sysctl_sched_wakeup_granularity` (ns).
    pub wakeup_granularity_ns: u64,
    /// Switching from one thread to another (ns).
    pub context_switch_ns: u64,
    /// Extra cost of the first run after a migration: cache refill (ns).
    pub migration_ns: u64,
    /// Sleeping thread woken onto an idle pCPU: IPI, idle exit, switch (ns, mean).
    pub idle_wakeup_ns: f64,
    /// The same for a thread whose own timed sleep expired (its pCPU's timer, no IPI).
    pub timer_wakeup_ns: f64,
    /// Half-width of the idle wake-up spread (ns).
    pub idle_wakeup_spread_ns: f64,
    /// Idle states: a thread woken onto an idle pCPU also waits for the exit from the state
    /// the idle governor chose (`idle.rs`).
    pub cstates: CStateTable,
    /// Minimum interval between periodic balancing of a pCPU (`sd->min_interval`, ns).
    pub balance_interval_ns: u64,
    /// `sd->busy_factor`: a busy pCPU balances this many times less often.
    pub busy_factor: u64,
    /// `sysctl_sched_migration_cost` (ns): cache-hotness threshold (`task_hot`) and the
    /// `avg_idle` gate of `idle_balance`.
    pub migration_cost_ns: u64,
    /// pCPUs per last-level cache (socket): `select_idle_sibling` searches within one.
    pub cores_per_llc: u32,
}

impl Params {
    /// The parameters `p` gives for a host of `ncpus` pCPUs (CFS times scaled as Linux
    /// `update_sysctl` does with `SCHED_TUNABLESCALING_LOG`).
    pub fn from_profile(p: &crate::profile::Profile, ncpus: u32) -> Params {
        let s = &p.sched;
        let f = Params::scale_factor(ncpus);
        let ns = |p: &crate::profile::Param| round_ns(p.value);
        Params {
            latency_ns: ns(&s.latency_ns) * f,
            min_granularity_ns: ns(&s.min_granularity_ns) * f,
            wakeup_granularity_ns: ns(&s.wakeup_granularity_ns) * f,
            context_switch_ns: ns(&s.context_switch_ns),
            migration_ns: ns(&s.migration_ns),
            idle_wakeup_ns: p.host.thread_wakeup_ns.value,
            timer_wakeup_ns: p.host.timer_wakeup_ns.value,
            idle_wakeup_spread_ns: p.host.thread_wakeup_spread_ns.value,
            cstates: CStateTable::from_profile(&p.host.cstates),
            balance_interval_ns: ns(&s.balance_interval_ns),
            busy_factor: ns(&s.busy_factor),
            migration_cost_ns: ns(&s.migration_cost_ns),
            cores_per_llc: p.cpu.cores_per_socket.value as u32,
        }
    }

    /// Linux `update_sysctl` with `SCHED_TUNABLESCALING_LOG`: factor = 1 + ilog2(min(ncpus, 8)).
    pub fn scale_factor(ncpus: u32) -> u64 {
        1 + (ncpus.clamp(1, 8)).ilog2() as u64
    }
}

/// A thread's scheduling state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Blocked (not on a runqueue).
    Sleeping,
    /// On its pCPU's runqueue, waiting.
    Queued,
    /// The current thread of its pCPU (possibly still being switched in).
    Running,
}

/// One host thread as the scheduler sees it.
#[derive(Debug)]
pub struct Thread {
    /// Load weight (from nice).
    pub weight: u64,
    /// Allowed pCPUs (bit i = pCPU i).
    pub allowed: CpuMask,
    /// State.
    pub state: State,
    /// Its pCPU: current, queued on, or last run on (`task_cpu`).
    pub cpu: u32,
    /// Virtual runtime (ns at nice 0).
    pub vruntime: u64,
    /// Run time since it was last picked (for the slice).
    slice_start_exec: u64,
    /// Total run time (lifetime, ns), excluding the current stint.
    sum_exec: u64,
    /// Start of the current stint on a pCPU (while Running).
    exec_start: Time,
    /// Migrated since it last ran (pays `migration_ns` at its next switch-in).
    migrated: bool,
    /// Where its reported run time (`run_ns`) starts: `exec_start`, or later while the pCPU it
    /// was switched in on wakes from idle (IPI, idle exit: the pCPU's time, as schedstat has it;
    /// its vruntime still counts from `exec_start`).
    run_from: Time,
    /// Woken by the expiry of its own timed sleep (pays `timer_wakeup_ns` from idle).
    timer_woken: bool,
    /// Its waits for a pCPU.
    waits: waits::Waits,
    /// `wakee_flips`: how often, decaying by half each second, it woke a different thread than
    /// the one it woke before (`record_wakee`; read by `wake_wide`).
    wakee_flips: u32,
    /// `last_wakee`.
    last_wakee: Option<u32>,
    /// `wakee_flip_decay_ts`.
    wakee_decay_at: Time,
    /// PELT load average (`se->avg.load_avg`), updated when it becomes runnable or sleeps.
    load: load::LoadAvg,
    /// Times it moved to another pCPU (window).
    pub migrations: u64,
    /// Descheduled while runnable and not run since (KVM's `vcpu->preempted`, which a guest
    /// reads from its steal-time record: `vcpu_is_preempted`).
    preempted: bool,
    /// Random stream (idle wake-up latency).
    rng: Rng,
    /// When it last entered its runqueue (`Sched::enqueued`): among equal vruntimes the
    /// earlier goes first, as `__enqueue_entity` inserts an equal key to the right.
    enq: u64,
}

/// One pCPU's runqueue.
#[derive(Debug, Default)]
pub struct Rq {
    /// The running thread, if any.
    pub curr: Option<u32>,
    /// Waiting threads (few; scanned for the leftmost).
    pub queued: Vec<u32>,
    /// `cfs_rq->min_vruntime`.
    pub min_vruntime: u64,
    /// TIF_NEED_RESCHED of `curr`.
    pub need_resched: bool,
    /// Next periodic balance.
    next_balance: Time,
    /// When it went idle and its idle governor (idle-state choice).
    pub idle: IdleHistory,
    /// CPU its current thread owes for its wake-up from the idle state (`wake_cpu_ns` of the
    /// state it left), until the host model takes it at the switch-in ([`Sched::take_wake_cpu`]).
    wake_cpu: Time,
    /// `rq->avg_idle`: running average of its idle periods (ns), capped at twice the
    /// migration cost; `None` until set up by the scheduler.
    avg_idle: u64,
    /// `rq->idle_stamp`: when it last went idle, until a wake-up onto it.
    idle_stamp: Option<Time>,
    /// `sd->nr_balance_failed`: periodic balances in a row that found an imbalance but could
    /// move nothing (cache-hot threads become movable after `CACHE_NICE_TRIES`).
    nr_balance_failed: u32,
    /// `cfs_rq->next`: a thread someone wants to run next, if that is not too unfair
    /// (`yield_to`'s target; `yield_to.rs`).
    next: Option<u32>,
    /// `cfs_rq->skip`: a thread that yielded, passed over if that is not too unfair.
    skip: Option<u32>,
}

impl Rq {
    /// Threads on the runqueue, running one included (`nr_running`).
    pub fn nr_running(&self) -> usize {
        self.queued.len() + self.curr.is_some() as usize
    }
}

/// Why a thread moved to another pCPU. Xen's credit scheduler reuses the causes for its own
/// moves (`credit/`): it never moves a thread at wake-up; an idle pCPU tickled by a busy one's
/// wake-up steals (`csched_load_balance` from `__runq_tickle`: `NohzBalance`), a pCPU going idle
/// steals (`IdleBalance`), and a pCPU whose best local thread is OVER steals, or the tick moves
/// a running thread to a more idle pCPU (`csched_vcpu_acct`): `PeriodicBalance`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Migration {
    /// Wake-up placement (`select_task_rq_fair`).
    Wakeup,
    /// A pCPU about to go idle pulled it (`idle_balance`).
    IdleBalance,
    /// An idle pCPU pulled it when a busy one kicked it (`nohz_idle_balance`).
    NohzBalance,
    /// Periodic balancing at the tick (`rebalance_domains`).
    PeriodicBalance,
}

impl Migration {
    /// Number of causes.
    pub const COUNT: usize = 4;
    /// Every cause, in summary order.
    pub const ALL: [Migration; Self::COUNT] =
        [Migration::Wakeup, Migration::IdleBalance, Migration::NohzBalance, Migration::PeriodicBalance];
    /// Its key in summary.json.
    pub fn key(self) -> &'static str {
        match self {
            Migration::Wakeup => "wakeup",
            Migration::IdleBalance => "idle_balance",
            Migration::NohzBalance => "nohz_balance",
            Migration::PeriodicBalance => "periodic_balance",
        }
    }
}

/// A decision for the host model to carry out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// `cpu`'s current thread should reach a preemption point and call `deschedule`.
    Resched {
        /// The pCPU.
        cpu: u32,
    },
    /// `tid` becomes `cpu`'s current thread; it runs after `delay` ns (switch or idle exit).
    SwitchIn {
        /// The pCPU.
        cpu: u32,
        /// The thread.
        tid: u32,
        /// Switch cost before it runs.
        delay: Time,
        /// The pCPU was idle: `delay` opens with its wake-up (IPI, idle exit), which is neither
        /// the thread's reported run time nor the pCPU's busy time.
        from_idle: bool,
    },
    /// Call the scheduler's `timer(cpu)` at `at` (Xen credit's tick, slice and accounting
    /// timers; CFS runs from the host tick and never asks).
    Timer {
        /// The pCPU whose timer it is.
        cpu: u32,
        /// When it fires.
        at: Time,
    },
}

/// The scheduler: threads, runqueues, and the pending decisions.
#[derive(Debug)]
pub struct Sched {
    /// Parameters.
    pub p: Params,
    /// Threads by id.
    pub threads: Vec<Thread>,
    /// Runqueues by pCPU.
    pub rqs: Vec<Rq>,
    /// Decisions since the host last drained them.
    pub actions: std::collections::VecDeque<Action>,
    /// Run time of thread t on pCPU c in the window: `run_ns[t * ncpu + c]`.
    run_ns: Vec<u64>,
    /// Start of the measurement window.
    window_start: Time,
    /// Migrations (window), by cause.
    pub migrations: [u64; Migration::COUNT],
    /// Context switches (window).
    pub switches: u64,
    /// Wake-ups placed on the waker's pCPU (window).
    pub wake_affine_hits: u64,
    /// Wake-ups of an idle pCPU by the idle state it left (window).
    pub cstate_wakeups: [u64; MAX_CSTATES],
    /// Runqueue insertions so far (the order of [`Thread::enq`]).
    enqueued: u64,
    /// Per CPU: time taken from it by a lower level that its run-queue clock does not count
    /// (a guest's vCPU's steal time, `update_rq_clock_task` with CONFIG_PARAVIRT_TIME_ACCOUNTING;
    /// empty: none, the host's own instance). Run time is charged on `now` less it.
    steal: Vec<Time>,
}

impl Sched {
    /// An empty scheduler for `ncpus` pCPUs.
    pub fn new(p: Params, ncpus: u32) -> Sched {
        Sched {
            p,
            threads: Vec::new(),
            // init_sched: rq->avg_idle = 2 * sysctl_sched_migration_cost.
            rqs: (0..ncpus).map(|_| Rq { avg_idle: 2 * p.migration_cost_ns, idle: IdleHistory::new(&p.cstates), ..Rq::default() }).collect(),
            actions: std::collections::VecDeque::with_capacity(16),
            run_ns: Vec::new(),
            window_start: 0,
            migrations: [0; Migration::COUNT],
            switches: 0,
            wake_affine_hits: 0,
            cstate_wakeups: [0; MAX_CSTATES],
            enqueued: 0,
            steal: Vec::new(),
        }
    }

    /// CPU `cpu` has lost `steal` ns so far to a lower level (monotone): its run-queue task
    /// clock stops while it is stolen ([`Sched::steal`]).
    pub fn set_steal(&mut self, cpu: u32, steal: Time) {
        if self.steal.is_empty() {
            self.steal = vec![0; self.rqs.len()];
        }
        let s = &mut self.steal[cpu as usize];
        *s = (*s).max(steal);
    }

    /// `rq_clock_task` of `cpu` at `now`: `now` less the time stolen from it.
    fn clock_task(&self, now: Time, cpu: u32) -> Time {
        now.saturating_sub(self.steal.get(cpu as usize).copied().unwrap_or(0))
    }

    /// Number of pCPUs.
    pub fn ncpus(&self) -> u32 {
        self.rqs.len() as u32
    }

    /// Add a sleeping thread; returns its id. Placed by fork balancing (`find_idlest_cpu`):
    /// the allowed pCPU with the fewest threads (lowest index on ties).
    pub fn add(&mut self, nice: i32, allowed: impl Into<CpuMask>, rng: Rng) -> u32 {
        let allowed = allowed.into();
        let tid = self.threads.len() as u32;
        let cpu = (0..self.ncpus())
            .filter(|&c| allowed.has(c))
            .min_by_key(|&c| (self.rqs[c as usize].nr_running() + self.sleepers_on(c), c))
            .expect("a thread needs an allowed pCPU");
        let vruntime = self.rqs[cpu as usize].min_vruntime;
        self.threads.push(Thread {
            weight: nice_weight(nice),
            allowed,
            state: State::Sleeping,
            cpu,
            vruntime,
            slice_start_exec: 0,
            sum_exec: 0,
            exec_start: 0,
            migrated: false,
            run_from: 0,
            timer_woken: false,
            waits: Default::default(),
            wakee_flips: 0,
            last_wakee: None,
            wakee_decay_at: 0,
            load: load::LoadAvg::new(nice_weight(nice)),
            migrations: 0,
            preempted: false,
            rng,
            enq: 0,
        });
        self.run_ns.resize(self.threads.len() * self.rqs.len(), 0);
        tid
    }

    fn sleepers_on(&self, c: u32) -> usize {
        self.threads.iter().filter(|t| t.state == State::Sleeping && t.cpu == c).count()
    }

    /// Start a new measurement window.
    pub fn reset_metrics(&mut self, now: Time) {
        for c in 0..self.rqs.len() {
            self.update_curr(now, c as u32);
        }
        self.run_ns.iter_mut().for_each(|x| *x = 0);
        self.window_start = now;
        self.migrations = [0; Migration::COUNT];
        self.threads.iter_mut().for_each(|t| t.migrations = 0);
        self.switches = 0;
        self.wake_affine_hits = 0;
        self.cstate_wakeups = [0; MAX_CSTATES];
    }

    /// Run time of thread `t` on pCPU `c` in the window up to `now`.
    pub fn run_ns(&self, now: Time, t: u32, c: u32) -> u64 {
        let th = &self.threads[t as usize];
        let live = if th.state == State::Running && th.cpu == c { now.saturating_sub(th.run_from.max(self.window_start)) } else { 0 };
        self.run_ns[t as usize * self.rqs.len() + c as usize] + live
    }

    /// The longest single wait for a pCPU of thread `t` since the last call (a wait still going
    /// on counts as far as it has got), and start over.
    pub fn take_max_wait(&mut self, now: Time, t: u32) -> u64 {
        let th = &mut self.threads[t as usize];
        th.waits.take_max(now, th.state == State::Queued)
    }

    /// Thread `t`'s longest single wait for a pCPU over the run up to `now` (a wait still going
    /// on counts as far as it has got).
    pub fn longest_wait(&self, now: Time, t: u32) -> u64 {
        let th = &self.threads[t as usize];
        th.waits.longest(now, th.state == State::Queued)
    }

    /// How long CFS may keep a runnable thread waiting when every thread has the same weight
    /// (None: weights differ, and a heavier thread may rightly take most of a pCPU): all of
    /// them on one pCPU, each ahead of it by up to the sleeper credit of `place_entity`
    /// (half a latency, GENTLE_FAIR_SLEEPERS) plus a slice of the period (`sched_slice` of
    /// `__sched_period(n)`), overrun by up to a tick (`check_preempt_tick` runs at the tick),
    /// and one more tick. `tick_ns` is the host's tick period.
    pub fn starvation_bound_ns(&self, tick_ns: u64) -> Option<u64> {
        let w = self.threads.first()?.weight;
        if self.threads.iter().any(|t| t.weight != w) {
            return None;
        }
        let n = self.threads.len() as u64;
        let slice = (self.period(n) / n).max(self.p.min_granularity_ns);
        Some(n * (self.p.latency_ns / 2 + slice + tick_ns) + tick_ns)
    }

    /// Lifetime (run time, run delay) of thread `t` up to `now`: how long it ran, and how long
    /// it was runnable but waited for a pCPU (`sum_exec_runtime`, `sched_info.run_delay`).
    pub fn run_and_delay(&self, now: Time, t: u32) -> (u64, u64) {
        let th = &self.threads[t as usize];
        let ran = th.sum_exec + if th.state == State::Running { self.clock_task(now, th.cpu).saturating_sub(th.exec_start) } else { 0 };
        (ran, th.waits.delay(now, th.state == State::Queued))
    }

    /// Busy time of pCPU `c` in the window: the sum of its threads' run time.
    pub fn busy_ns(&self, now: Time, c: u32) -> u64 {
        (0..self.threads.len() as u32).map(|t| self.run_ns(now, t, c)).sum()
    }

    /// `update_curr`: charge the running thread of `cpu` for its time since `exec_start`.
    fn update_curr(&mut self, now: Time, cpu: u32) {
        let Some(t) = self.rqs[cpu as usize].curr else { return };
        let task_now = self.clock_task(now, cpu);
        let n = self.rqs.len();
        let th = &mut self.threads[t as usize];
        let from = th.run_from.max(self.window_start);
        self.run_ns[t as usize * n + cpu as usize] += now.saturating_sub(from);
        th.run_from = th.run_from.max(now);
        let delta = task_now.saturating_sub(th.exec_start);
        th.exec_start = task_now;
        th.sum_exec += delta;
        th.vruntime += delta * NICE_0_LOAD / th.weight;
        self.update_min_vruntime(cpu);
    }

    /// `update_min_vruntime`: monotonic, follows min(curr, leftmost).
    fn update_min_vruntime(&mut self, cpu: u32) {
        let rq = &self.rqs[cpu as usize];
        let mut v = rq.curr.map(|t| self.threads[t as usize].vruntime);
        if let Some(l) = self.leftmost(cpu) {
            let lv = self.threads[l as usize].vruntime;
            v = Some(v.map_or(lv, |c| c.min(lv)));
        }
        if let Some(v) = v {
            let rq = &mut self.rqs[cpu as usize];
            rq.min_vruntime = rq.min_vruntime.max(v);
        }
    }

    /// The waiting thread with the smallest vruntime (ties: lowest id).
    pub fn leftmost(&self, cpu: u32) -> Option<u32> {
        self.rqs[cpu as usize].queued.iter().copied().min_by_key(|&t| self.tree_key(t))
    }

    /// A waiting thread's place in its runqueue's tree: vruntime, then insertion order (the
    /// rbtree of `__enqueue_entity` puts an equal key right of those already in it).
    pub(super) fn tree_key(&self, t: u32) -> (u64, u64) {
        let th = &self.threads[t as usize];
        (th.vruntime, th.enq)
    }

    /// Put thread `t` on `cpu`'s runqueue (`__enqueue_entity`), stamped with its turn.
    pub(super) fn enqueue(&mut self, cpu: u32, t: u32) {
        self.enqueued += 1;
        self.threads[t as usize].enq = self.enqueued;
        self.rqs[cpu as usize].queued.push(t);
    }

    /// `cfs_rq->runnable_load_avg` at `now`: the PELT loads of its runnable threads.
    pub(super) fn runnable_load(&self, now: Time, cpu: u32) -> f64 {
        let rq = &self.rqs[cpu as usize];
        rq.queued.iter().chain(rq.curr.iter()).map(|&t| self.thread_load(now, t)).sum()
    }

    /// A thread's PELT load at `now`.
    pub(super) fn thread_load(&self, now: Time, t: u32) -> f64 {
        let th = &self.threads[t as usize];
        th.load.at(now, th.weight, th.state != State::Sleeping)
    }

    fn weight_sum(&self, cpu: u32) -> u64 {
        let rq = &self.rqs[cpu as usize];
        rq.queued.iter().chain(rq.curr.iter()).map(|&t| self.threads[t as usize].weight).sum()
    }

    /// `__sched_period`: the latency, stretched to nr × min granularity past `sched_nr_latency`.
    fn period(&self, nr: u64) -> u64 {
        let nr_latency = (self.p.latency_ns / self.p.min_granularity_ns.max(1)).max(1);
        if nr > nr_latency { nr * self.p.min_granularity_ns } else { self.p.latency_ns }
    }

    /// `sched_slice`: the thread's share of the period by weight.
    pub fn slice(&self, cpu: u32, t: u32) -> u64 {
        let nr = self.rqs[cpu as usize].nr_running() as u64;
        let w = self.threads[t as usize].weight;
        self.period(nr.max(1)) * w / self.weight_sum(cpu).max(w)
    }

    /// Pending preemption of `cpu`'s current thread.
    pub fn need_resched(&self, cpu: u32) -> bool {
        self.rqs[cpu as usize].need_resched
    }

    fn resched(&mut self, cpu: u32) {
        let rq = &mut self.rqs[cpu as usize];
        if rq.curr.is_some() && !rq.need_resched {
            rq.need_resched = true;
            self.actions.push_back(Action::Resched { cpu });
        }
    }

    /// Wake sleeping thread `t` (`try_to_wake_up`); `waker` is the pCPU whose thread or
    /// interrupt woke it (None: a host core the model does not charge).
    pub fn wake(&mut self, now: Time, t: u32, waker: Option<u32>) {
        if self.threads[t as usize].state != State::Sleeping {
            return;
        }
        self.threads[t as usize].timer_woken = false;
        self.wake_inner(now, t, waker, false);
    }

    /// [`Self::wake`] with `WF_SYNC` (`sock_def_readable`: the waker hands the woken thread
    /// data and is expected to sleep soon), which `wake_affine` reads as the waker's CPU
    /// without the waker's own load.
    pub fn wake_sync(&mut self, now: Time, t: u32, waker: Option<u32>) {
        if self.threads[t as usize].state != State::Sleeping {
            return;
        }
        self.threads[t as usize].timer_woken = false;
        self.wake_inner(now, t, waker, true);
    }

    /// Wake sleeping thread `t` at the expiry of its own timed sleep (`hrtimer_wakeup`): as
    /// [`Self::wake`], but from idle it pays `timer_wakeup_ns` instead of `idle_wakeup_ns`.
    pub fn wake_by_timer(&mut self, now: Time, t: u32) {
        if self.threads[t as usize].state != State::Sleeping {
            return;
        }
        self.threads[t as usize].timer_woken = true;
        self.wake_inner(now, t, None, false); // the timer interrupt: no thread of the model woke it
    }

    fn wake_inner(&mut self, now: Time, t: u32, waker: Option<u32>, sync: bool) {
        let th = &mut self.threads[t as usize];
        th.load.update(now, th.weight, false);
        let prev = th.cpu;
        // The waking thread is whatever runs on the waker's pCPU (`current`).
        let waker_thread = waker.and_then(|c| self.rqs[c as usize].curr);
        if let Some(w) = waker_thread {
            self.record_wakee(now, w, t);
        }
        let cpu = self.select_task_rq(now, t, waker, waker_thread, sync);
        if waker == Some(cpu) && cpu != prev {
            self.wake_affine_hits += 1;
        }
        self.update_curr(now, cpu);
        // task_waking_fair / enqueue: vruntime relative to the old queue, then the new one.
        // (A long sleeper's relative vruntime is negative.)
        let th = &self.threads[t as usize];
        let rel = th.vruntime as i64 - self.rqs[prev as usize].min_vruntime as i64;
        let base = self.rqs[cpu as usize].min_vruntime;
        // place_entity with GENTLE_FAIR_SLEEPERS: a sleeper gets at most half a latency of credit.
        let v = ((base as i64 + rel).max(0) as u64).max(base.saturating_sub(self.p.latency_ns / 2));
        let th = &mut self.threads[t as usize];
        th.vruntime = v;
        if cpu != prev {
            th.migrated = true;
            th.migrations += 1;
            self.migrations[Migration::Wakeup as usize] += 1;
        }
        th.cpu = cpu;
        th.state = State::Queued;
        th.waits.queue(now);
        self.enqueue(cpu, t);
        self.end_idle_period(now, cpu);
        match self.rqs[cpu as usize].curr {
            None => self.pick(now, cpu, true),
            Some(c) => self.check_preempt_wakeup(cpu, c, t),
        }
    }

    /// `record_wakee`: waker `w` woke `t`; its flips count changes of wakee and halve each second.
    fn record_wakee(&mut self, now: Time, w: u32, t: u32) {
        let th = &mut self.threads[w as usize];
        if now > th.wakee_decay_at + crate::engine::NS_PER_S {
            th.wakee_flips >>= 1;
            th.wakee_decay_at = now;
        }
        if th.last_wakee != Some(t) {
            th.last_wakee = Some(t);
            th.wakee_flips += 1;
        }
    }

    /// `ttwu_do_wakeup`: a thread was woken onto `cpu`; if it had been idle, fold the idle
    /// period into `avg_idle` (`update_avg`: avg += (sample − avg) / 8, capped at twice the
    /// migration cost, the initial `max_idle_balance_cost`).
    fn end_idle_period(&mut self, now: Time, cpu: u32) {
        let max = 2 * self.p.migration_cost_ns;
        let rq = &mut self.rqs[cpu as usize];
        if let Some(stamp) = rq.idle_stamp.take() {
            let sample = (now - stamp) as i64;
            let avg = rq.avg_idle as i64;
            rq.avg_idle = ((avg + (sample - avg) / 8).max(0) as u64).min(max);
        }
    }

    /// `check_preempt_wakeup` / `wakeup_preempt_entity`: preempt if the current thread's
    /// vruntime leads the woken one's by more than the (weight-scaled) wake-up granularity.
    fn check_preempt_wakeup(&mut self, cpu: u32, curr: u32, woken: u32) {
        let (c, w) = (&self.threads[curr as usize], &self.threads[woken as usize]);
        let gran = self.p.wakeup_granularity_ns * NICE_0_LOAD / w.weight;
        if c.vruntime > w.vruntime + gran {
            self.resched(cpu);
        }
    }

    /// The current thread of `cpu` leaves it: to sleep (`sleep`) or back to the runqueue
    /// (preempted or yielding at a preemption point). The next thread is picked.
    pub fn deschedule(&mut self, now: Time, cpu: u32, sleep: bool) {
        self.update_curr(now, cpu);
        let rq = &mut self.rqs[cpu as usize];
        let t = rq.curr.take().expect("deschedule of an idle pCPU");
        rq.need_resched = false;
        let th = &mut self.threads[t as usize];
        th.preempted = !sleep;
        if sleep {
            th.load.update(now, th.weight, true);
            th.state = State::Sleeping;
            rq.clear_buddies(t); // dequeue_entity
        } else {
            th.state = State::Queued;
            th.waits.queue(now);
            self.enqueue(cpu, t);
        }
        self.pick_after(now, cpu, false, (!sleep).then_some(t));
    }

    /// `pick_next_task_fair`: run the leftmost thread, or go idle (after an idle balance).
    fn pick(&mut self, now: Time, cpu: u32, from_idle: bool) {
        self.pick_after(now, cpu, from_idle, None);
    }

    /// [`Self::pick`] after `prev` left the pCPU still runnable: picked again, it goes on
    /// where it was — `__schedule` switches nothing when `prev == next`: no context switch
    /// to pay or count (its slice starts over, as `set_next_entity` restarts it).
    fn pick_after(&mut self, now: Time, cpu: u32, from_idle: bool, prev: Option<u32>) {
        let mut next = self.pick_next_entity(cpu);
        if next.is_none() {
            self.rqs[cpu as usize].idle_stamp = Some(now);
            next = self.idle_balance(now, cpu);
            if next.is_some() {
                self.rqs[cpu as usize].idle_stamp = None;
            }
        }
        let Some(t) = next else {
            self.rqs[cpu as usize].idle.since = now;
            return;
        };
        let rq = &mut self.rqs[cpu as usize];
        rq.queued.retain(|&x| x != t);
        rq.clear_buddies(t);
        rq.curr = Some(t);
        let same = prev == Some(t);
        self.switches += u64::from(!same);
        let p = self.p;
        let task_now = self.clock_task(now, cpu);
        let th = &mut self.threads[t as usize];
        th.state = State::Running;
        th.preempted = false;
        th.waits.run(now);
        th.exec_start = task_now;
        th.slice_start_exec = th.sum_exec;
        let timer = std::mem::take(&mut th.timer_woken);
        self.rqs[cpu as usize].wake_cpu = 0;
        let mut delay = if from_idle {
            let rq = &mut self.rqs[cpu as usize];
            let (delay, wake_cpu) = idle::idle_wakeup(&p, &mut rq.idle, &mut th.rng, timer, now, &mut self.cstate_wakeups);
            rq.wake_cpu = wake_cpu;
            delay
        } else if same {
            0
        } else {
            p.context_switch_ns
        };
        if std::mem::take(&mut th.migrated) {
            delay += p.migration_ns;
        }
        // From idle the pCPU and the thread count from its SchedIn (`threads.rs sched_in`).
        th.run_from = if from_idle { now + delay } else { now };
        self.update_min_vruntime(cpu);
        self.actions.push_back(Action::SwitchIn { cpu, tid: t, delay, from_idle });
    }

    /// Start thread `t`: enqueue it on its pCPU. A thread there from the run's start (time 0)
    /// is one the host already ran, at its runqueue's vruntime; one created later
    /// (`wake_up_new_task`) is placed a slice behind the threads already there
    /// (`place_entity(initial)` with START_DEBIT). A thread not sleeping is left as it is.
    pub fn start(&mut self, now: Time, t: u32) {
        if self.threads[t as usize].state != State::Sleeping {
            return;
        }
        let cpu = self.threads[t as usize].cpu;
        if now > 0 {
            self.update_curr(now, cpu);
            let w = self.threads[t as usize].weight;
            let nr = self.rqs[cpu as usize].nr_running() as u64 + 1;
            let vslice = self.period(nr) * NICE_0_LOAD / (self.weight_sum(cpu) + w);
            let base = self.rqs[cpu as usize].min_vruntime + vslice;
            let th = &mut self.threads[t as usize];
            th.vruntime = th.vruntime.max(base);
        }
        let th = &mut self.threads[t as usize];
        th.state = State::Queued;
        th.waits.queue(now);
        let cpu = th.cpu;
        self.enqueue(cpu, t);
        if self.rqs[cpu as usize].curr.is_none() {
            self.pick(now, cpu, false);
        }
    }

    /// The periodic scheduler tick of `cpu` (`scheduler_tick` → `task_tick_fair` →
    /// `check_preempt_tick`, then `trigger_load_balance`).
    pub fn tick(&mut self, now: Time, cpu: u32) {
        if let Some(t) = self.rqs[cpu as usize].curr {
            self.update_curr(now, cpu);
            if self.rqs[cpu as usize].nr_running() > 1 {
                self.check_preempt_tick(cpu, t);
            }
        }
        self.trigger_load_balance(now, cpu);
    }

    /// `check_preempt_tick`: preempt when the slice is used up, or when the current thread
    /// leads the leftmost waiter by more than a slice (after at least the minimum granularity).
    fn check_preempt_tick(&mut self, cpu: u32, t: u32) {
        let ideal = self.slice(cpu, t);
        let th = &self.threads[t as usize];
        let ran = th.sum_exec - th.slice_start_exec;
        if ran > ideal {
            return self.resched(cpu);
        }
        if ran < self.p.min_granularity_ns {
            return;
        }
        if let Some(l) = self.leftmost(cpu) {
            if th.vruntime > self.threads[l as usize].vruntime + ideal {
                self.resched(cpu);
            }
        }
    }

    /// The CPU the thread just switched in on `cpu` owes for its wake-up from the idle state
    /// its pCPU left (0 if none), taken once: the host model charges it as the thread's work
    /// before its first item, where it charges a back end's wake-up CPU.
    pub fn take_wake_cpu(&mut self, cpu: u32) -> Time {
        std::mem::take(&mut self.rqs[cpu as usize].wake_cpu)
    }

    /// Idle: nothing running, nothing queued.
    pub fn idle(&self, cpu: u32) -> bool {
        self.rqs[cpu as usize].nr_running() == 0
    }
}
