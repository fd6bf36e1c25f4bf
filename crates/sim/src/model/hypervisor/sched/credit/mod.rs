//! Xen 4.2's credit scheduler (`xen/common/sched_credit.c` of Xen 4.2.2, hBalance's host: its
//! §2 describes the scheduler, §6 the version) behind the host-scheduler seam (`seam.rs`).
//!
//! * Priorities BOOST > UNDER (credit ≥ 0) > OVER (credit < 0) (`CSCHED_PRI_TS_*`); per-pCPU
//!   runqueues ordered by priority, FIFO within one (`__runq_insert`).
//! * Credits: the master pCPU's accounting every time slice hands the pCPUs' credits out to
//!   the active threads by weight (`csched_acct`, `acct.rs`); a running thread burns 10 credits
//!   a ms (`burn_credits`, `CSCHED_CREDITS_PER_MSEC`) at each tick (a third of the slice,
//!   `csched_tick` → `csched_vcpu_acct`) and each schedule.
//! * A thread woken while UNDER is BOOSTed (`csched_vcpu_wake`) and preempts a lower-priority
//!   thread at once (`__runq_tickle`), unless that one has run less than `sched_ratelimit_us`;
//!   the tick it is found running at drops the BOOST (`csched_vcpu_acct`).
//! * The pCPU runs its head for a time slice (`csched_schedule`, the `s_timer`); when the head
//!   is OVER, or the pCPU would idle, it steals a better thread from another pCPU's runqueue
//!   (`csched_load_balance`, `csched_runq_steal`, `pick.rs`). A wake-up stays on the thread's
//!   pCPU and tickles one idle pCPU, which then steals (Xen calls `csched_cpu_pick` only to
//!   move a running thread at the tick, and for a migration).
//!
//! Every thread is a domain of one vCPU with the default weight 256 and no cap (a scenario sets
//! neither; with equal weights Xen's per-domain split gives each vCPU the same share), so
//! parking of capped domains and yields are not modelled. Switch and idle wake-up costs are the
//! CFS path's (`sched.context_switch_ns`, `migration_ns`, `idle.rs`). The scheduler owns its
//! timers (tick, slice, accounting) and asks the host model for them as [`Action::Timer`].

mod acct;
mod pick;
mod schedule;
mod stats;
#[cfg(test)]
mod tests;

use super::idle::{self, IdleHistory, MAX_CSTATES};
use super::waits::Waits;
use super::{Action, CpuMask, Migration, Params, SchedStats, State};
use crate::engine::{Rng, Time, Timer};

/// `CSCHED_DEFAULT_WEIGHT`: every domain's weight.
pub const DEFAULT_WEIGHT: i64 = 256;
pub use crate::config::limits::{DEFAULT_TSLICE_MS, TSLICE_MS_RANGE};
/// `CSCHED_TICKS_PER_TSLICE`.
const TICKS_PER_TSLICE: u64 = 3;
/// `CSCHED_CREDITS_PER_MSEC`.
const CREDITS_PER_MSEC: i64 = 10;
/// `SCHED_DEFAULT_RATELIMIT_US` (xen/include/xen/sched-if.h): the default `sched_ratelimit_us`.
const DEFAULT_RATELIMIT_US: u64 = 1000;
/// `vcpu_migration_delay`'s default (µs): no cache-hot time.
const MIGRATION_DELAY_US: u64 = 0;
/// The accounting master (`prv->master`: the first pCPU).
const MASTER: u32 = 0;
const NS_PER_MS: i64 = 1_000_000;

/// The credit scheduler's own parameters (`csched_init`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CreditParams {
    /// `tslice_ms` as ns: the slice and the accounting period.
    pub tslice_ns: Time,
    /// `tick_period_us` as ns: a third of the slice, or the slice below 3 ms.
    pub tick_ns: Time,
    /// `credits_per_tslice` = 10 × `tslice_ms`.
    pub credits_per_tslice: i64,
    /// `ratelimit_us` as ns (`sched_ratelimit_us`, at most the slice).
    pub ratelimit_ns: Time,
    /// `vcpu_migration_delay` as ns.
    pub migration_delay_ns: Time,
}

impl CreditParams {
    /// `csched_init` with `sched_credit_tslice_ms` = `tslice_ms` (in [`TSLICE_MS_RANGE`]) and
    /// Xen's defaults for the rest.
    pub fn new(tslice_ms: u32) -> CreditParams {
        let ms = tslice_ms as u64;
        let ticks = if ms < TICKS_PER_TSLICE { 1 } else { TICKS_PER_TSLICE };
        let ratelimit_us = if DEFAULT_RATELIMIT_US > 1000 * ms { 1000 * ms } else { DEFAULT_RATELIMIT_US };
        CreditParams {
            tslice_ns: ms * 1_000_000,
            tick_ns: ms * 1000 / ticks * 1000,
            credits_per_tslice: CREDITS_PER_MSEC * ms as i64,
            ratelimit_ns: ratelimit_us * 1000,
            migration_delay_ns: MIGRATION_DELAY_US * 1000,
        }
    }
}

/// `CSCHED_PRI_*`, lowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Pri {
    /// The idle vCPU (`CSCHED_PRI_IDLE`): only what an idle pCPU compares with.
    Idle,
    /// Out of credit (`CSCHED_PRI_TS_OVER`).
    Over,
    /// With credit (`CSCHED_PRI_TS_UNDER`).
    Under,
    /// Woken while UNDER, until a tick finds it running (`CSCHED_PRI_TS_BOOST`).
    Boost,
    /// hBalance's `SMP_BOOST` (§5.1): above every other priority, set by the h_balance router
    /// on the vCPU it redirects an interrupt to when no vCPU of the VM runs and the VM has
    /// unused quota ([`Credit::smp_boost`]); dropped like BOOST at the next tick that finds it
    /// running, or when it halts first.
    SmpBoost,
}

/// One host thread as the credit scheduler sees it (`struct csched_vcpu`, and the bookkeeping
/// the seam reports).
#[derive(Debug)]
struct Vcpu {
    credit: i64,
    pri: Pri,
    /// On the active list (`active_vcpu_elem`): earning credits.
    active: bool,
    /// `start_time`: while it runs, when its unburnt time starts; otherwise that start less
    /// the time it stopped (`csched_schedule`'s `start_time -= now`).
    start_time: i64,
    /// `_VPF_migrating`: the tick found a better pCPU for it.
    migrating: bool,
    allowed: CpuMask,
    state: State,
    cpu: u32,
    /// `runstate.state_entry_time` of its running state (the rate limit's runtime).
    entry: Time,
    /// `last_run_time`: when it last left a pCPU.
    last_run: Time,
    sum_exec: u64,
    exec_start: Time,
    run_from: Time,
    timer_woken: bool,
    migrated: bool,
    waits: Waits,
    migrations: u64,
    rng: Rng,
}

/// One pCPU (`struct csched_pcpu` and its `schedule_data`).
#[derive(Debug)]
struct Pcpu {
    runq: Vec<u32>,
    curr: Option<u32>,
    need_resched: bool,
    idle: IdleHistory,
    wake_cpu: Time,
    /// `runq_sort_last`.
    runq_sort_last: u32,
    /// `idle_bias` (`_csched_cpu_pick`).
    idle_bias: u32,
    /// `last_tickle_cpu` of this pCPU as a waker.
    last_tickle: u32,
    /// The `ticker` (suspended while idle: `csched_tick_suspend`).
    next_tick: Option<Time>,
    /// The `s_timer`: the end of the current slice.
    slice_end: Option<Time>,
    /// The one timer event standing for the above (and the master's accounting).
    timer: Timer,
}

/// Xen's credit scheduler over the host's pCPUs.
#[derive(Debug)]
pub struct Credit {
    /// The costs shared with CFS (switch, migration, idle wake-up, C-states, cores per socket).
    pub p: Params,
    /// Xen's parameters.
    pub c: CreditParams,
    threads: Vec<Vcpu>,
    pcpus: Vec<Pcpu>,
    /// Decisions since the host last drained them.
    pub actions: std::collections::VecDeque<Action>,
    run_ns: Vec<u64>,
    window_start: Time,
    migrations: [u64; Migration::COUNT],
    switches: u64,
    cstate_wakeups: [u64; MAX_CSTATES],
    /// `prv->weight`: the active threads' weights.
    weight: i64,
    /// `prv->credit`: credits per slice of all pCPUs.
    credit: i64,
    /// `prv->credit_balance`.
    credit_balance: i64,
    /// `prv->runq_sort`.
    runq_sort: u32,
    /// `prv->active_sdom`, in list order (one thread per domain).
    active: Vec<u32>,
    /// The master ticker (`csched_acct`).
    next_acct: Time,
    /// Threads whose credits `acct` pools and splits equally (hBalance's Algorithm 2,
    /// `refill_quota(IoFriendly)`): one list per SMP VM routed by h_balance (`set_groups`).
    groups: Vec<Vec<u32>>,
    /// `SMP_BOOST`s applied over the window (a debug counter for tests).
    smp_boosts: u64,
}

impl Credit {
    /// The scheduler for `ncpus` pCPUs, its accounting timer armed (`csched_alloc_pdata`).
    pub fn new(p: Params, c: CreditParams, ncpus: u32) -> Credit {
        let pcpu = |_| Pcpu {
            runq: Vec::new(),
            curr: None,
            need_resched: false,
            idle: IdleHistory::new(&p.cstates),
            wake_cpu: 0,
            runq_sort_last: 0,
            idle_bias: ncpus - 1,
            last_tickle: 0,
            next_tick: None,
            slice_end: None,
            timer: Timer::default(),
        };
        let mut s = Credit {
            p,
            c,
            threads: Vec::new(),
            pcpus: (0..ncpus).map(pcpu).collect(),
            actions: std::collections::VecDeque::with_capacity(16),
            run_ns: Vec::new(),
            window_start: 0,
            migrations: [0; Migration::COUNT],
            switches: 0,
            cstate_wakeups: [0; MAX_CSTATES],
            weight: 0,
            credit: ncpus as i64 * c.credits_per_tslice,
            credit_balance: 0,
            runq_sort: 0,
            active: Vec::new(),
            next_acct: c.tslice_ns,
            groups: Vec::new(),
            smp_boosts: 0,
        };
        s.rearm(MASTER);
        s
    }

    /// Number of pCPUs.
    pub fn ncpus(&self) -> u32 {
        self.pcpus.len() as u32
    }

    /// Add a sleeping thread allowed on `allowed`; returns its id. Xen has no nice: every
    /// thread has the default weight (the scenario check refuses a hog's `nice`). Placed on
    /// the allowed pCPU with the fewest threads (as `default_vcpu0_location`).
    pub fn add(&mut self, _nice: i32, allowed: impl Into<CpuMask>, rng: Rng) -> u32 {
        let allowed = allowed.into();
        let tid = self.threads.len() as u32;
        let on = |s: &Self, c: u32| s.threads.iter().filter(|t| t.cpu == c).count();
        let cpu = (0..self.ncpus()).filter(|&c| allowed.has(c)).min_by_key(|&c| (on(self, c), c)).expect("a thread needs an allowed pCPU");
        self.threads.push(Vcpu {
            credit: 0,
            pri: Pri::Under,
            active: false,
            start_time: 0,
            migrating: false,
            allowed,
            state: State::Sleeping,
            cpu,
            entry: 0,
            last_run: 0,
            sum_exec: 0,
            exec_start: 0,
            run_from: 0,
            timer_woken: false,
            migrated: false,
            waits: Waits::default(),
            migrations: 0,
            rng,
        });
        let n = self.threads.len();
        self.run_ns.resize(n * self.pcpus.len(), 0);
        self.active.reserve(n - self.active.len());
        for pc in &mut self.pcpus {
            pc.runq.reserve(n - pc.runq.len());
        }
        tid
    }

    /// Thread `t` becomes runnable for the first time. At 0 it is one of the threads the host
    /// already runs when the model begins: queued as it is (UNDER), run at once on an idle pCPU.
    /// Later it is a new domain's vCPU made runnable: Xen 4.2 creates a vCPU UNDER with no
    /// credit (`csched_alloc_vdata`), and the toolstack's unpause (`domain_unpause` →
    /// `vcpu_wake`, for every vCPU of the domain) reaches `csched_vcpu_wake` like any wake-up:
    /// BOOSTed, queued, `__runq_tickle` (preempting a lower priority on its pCPU, tickling one
    /// idle pCPU, which steals it). The tickle cycles from the vCPU's own pCPU's
    /// `last_tickle_cpu` (Xen's is the toolstack's pCPU, in dom0: not modelled).
    pub fn start(&mut self, now: Time, t: u32) {
        if self.threads[t as usize].state != State::Sleeping {
            return;
        }
        if now > 0 {
            self.threads[t as usize].timer_woken = false;
            return self.wake_inner(now, t, None);
        }
        let cpu = self.threads[t as usize].cpu;
        self.runq_insert(now, cpu, t);
        if self.pcpus[cpu as usize].curr.is_none() {
            self.pick(now, cpu, false, None);
        }
    }

    /// Wake sleeping thread `t`; `waker` is the pCPU that woke it (`csched_vcpu_wake`).
    pub fn wake(&mut self, now: Time, t: u32, waker: Option<u32>) {
        if self.threads[t as usize].state == State::Sleeping {
            self.threads[t as usize].timer_woken = false;
            self.wake_inner(now, t, waker);
        }
    }

    /// Wake sleeping thread `t` at the expiry of its own timed sleep.
    pub fn wake_by_timer(&mut self, now: Time, t: u32) {
        if self.threads[t as usize].state == State::Sleeping {
            self.threads[t as usize].timer_woken = true;
            self.wake_inner(now, t, None);
        }
    }

    /// hBalance's SMP-VM credit groups (§5.1): each list's threads (one VM's vCPUs) have their
    /// credits pooled and split equally at every accounting (Algorithm 2). Set once, before
    /// the run; a thread in no group is accounted as Xen does.
    pub fn set_groups(&mut self, groups: Vec<Vec<u32>>) {
        debug_assert!(groups.iter().flatten().all(|&t| (t as usize) < self.threads.len()), "a group names unknown threads");
        self.groups = groups;
    }

    /// hBalance's `SMP_BOOST` of thread `t` (§5.1): the highest priority, so that it is queued
    /// first and preempts whatever runs on its pCPU, as a BOOSTed wake-up does (`tickle`). A
    /// sleeping thread keeps it through the wake-up the interrupt causes; a running one keeps
    /// its pCPU until its next tick drops it.
    pub fn smp_boost(&mut self, now: Time, t: u32) {
        self.smp_boosts += 1;
        let th = &mut self.threads[t as usize];
        th.pri = Pri::SmpBoost;
        if th.state == State::Queued {
            let cpu = th.cpu;
            let q = &mut self.pcpus[cpu as usize].runq;
            let at = q.iter().position(|&x| x == t).expect("a queued thread is on its pCPU's runqueue");
            q.remove(at);
            let since = self.threads[t as usize].waits.queued_since;
            self.runq_insert(now, cpu, t);
            // Still the same wait: the boost does not restart it.
            self.threads[t as usize].waits.queued_since = since;
            self.tickle(now, cpu, t, None);
        }
    }

    /// Thread `t`'s priority as hBalance's router reads it (`SMP_BOOST` is a BOOST to it).
    pub fn credit_priority(&self, t: u32) -> eventpath_policy::hbalance::CreditPriority {
        use eventpath_policy::hbalance::CreditPriority as P;
        match self.threads[t as usize].pri {
            Pri::Idle | Pri::Over => P::Over,
            Pri::Under => P::Under,
            Pri::Boost | Pri::SmpBoost => P::Boost,
        }
    }

    /// `SMP_BOOST`s applied in the window.
    pub fn smp_boosts(&self) -> u64 {
        self.smp_boosts
    }

    /// `csched_vcpu_wake`: BOOST an UNDER thread, queue it on its pCPU, tickle.
    fn wake_inner(&mut self, now: Time, t: u32, waker: Option<u32>) {
        let th = &mut self.threads[t as usize];
        if th.pri == Pri::Under {
            th.pri = Pri::Boost;
        }
        let cpu = th.cpu;
        self.runq_insert(now, cpu, t);
        self.tickle(now, cpu, t, waker);
    }

    /// `__runq_insert`: behind every queued thread of its priority or higher.
    fn runq_insert(&mut self, now: Time, cpu: u32, t: u32) {
        let pri = self.threads[t as usize].pri;
        let threads = &self.threads;
        let q = &mut self.pcpus[cpu as usize].runq;
        let at = q.iter().position(|&x| pri > threads[x as usize].pri).unwrap_or(q.len());
        q.insert(at, t);
        let th = &mut self.threads[t as usize];
        th.state = State::Queued;
        th.waits.queue(now);
    }

    /// The current thread of `cpu` leaves it, to sleep or back to its runqueue (or, if the
    /// tick found it a better pCPU, to that one): `csched_schedule` picks the next.
    pub fn deschedule(&mut self, now: Time, cpu: u32, sleep: bool) {
        self.account(now, cpu);
        let pc = &mut self.pcpus[cpu as usize];
        let t = pc.curr.take().expect("deschedule of an idle pCPU");
        pc.need_resched = false;
        pc.slice_end = None;
        self.burn_credits(t, now);
        let th = &mut self.threads[t as usize];
        th.start_time -= now as i64;
        th.last_run = now;
        let migrate = std::mem::take(&mut th.migrating);
        if sleep {
            th.state = State::Sleeping;
            if th.pri == Pri::SmpBoost {
                // The boost served the interrupt it was set for; kept through a halt it would
                // let the next, unrelated wake-up outrank every BOOST on the pCPU.
                th.pri = if th.credit < 0 { Pri::Over } else { Pri::Under };
            }
        } else if !migrate {
            self.runq_insert(now, cpu, t);
        }
        self.pick(now, cpu, false, Some(t));
        if migrate {
            self.migrate(now, cpu, t, sleep);
        }
    }

    /// `vcpu_migrate` of a thread the tick marked: to the pCPU `csched_cpu_pick` chooses, woken
    /// there (`vcpu_wake`: BOOSTed if UNDER) unless it went to sleep.
    fn migrate(&mut self, now: Time, from: u32, t: u32, sleep: bool) {
        let to = self.cpu_pick(t, true);
        if to != from {
            self.moved(t, to, Migration::PeriodicBalance);
        }
        if sleep {
            self.threads[t as usize].state = State::Sleeping;
        } else {
            self.threads[t as usize].timer_woken = false;
            self.wake_inner(now, t, Some(from));
        }
    }

    /// Thread `t` now belongs to pCPU `to` for `cause`.
    fn moved(&mut self, t: u32, to: u32, cause: Migration) {
        let th = &mut self.threads[t as usize];
        th.cpu = to;
        th.migrated = true;
        th.migrations += 1;
        self.migrations[cause as usize] += 1;
    }
}
