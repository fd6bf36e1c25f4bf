//! Load balancing, after Linux 4.4 (kernel/sched/fair.c), reduced to one domain level per
//! host (all pCPUs): a pCPU pulls one waiting thread from the busiest runqueue.
//!
//! * `idle_balance`: a pCPU about to go idle pulls a waiting thread at once.
//! * `rebalance_domains` (from `trigger_load_balance` at the tick): every `min_interval`
//!   (times `busy_factor` when the pCPU is busy) a pCPU pulls from the busiest runqueue when
//!   its PELT load exceeds this one's by `imbalance_pct` (`find_busiest_group` /
//!   `calculate_imbalance`).
//! * `nohz_idle_balance`: idle pCPUs have no tick (NO_HZ); a busy pCPU with two or more
//!   threads kicks them (`nohz_balancer_kick`), and each idle pCPU pulls.
//!
//! Gates that keep Linux from migrating on every idle moment (`sysctl_sched_migration_cost`,
//! 0.5 ms by default):
//!
//! * `idle_balance` runs only if the pCPU's average idle period (`rq->avg_idle`) is at least
//!   the migration cost and some runqueue is overloaded (`rd->overload`);
//! * `can_migrate_task`: only waiting threads move (not the running one), and a thread that ran
//!   within the migration cost is cache-hot (`task_hot`) and stays, unless balancing of this
//!   pCPU has failed more than `cache_nice_tries` (1 for the LLC domain) times in a row.
//!
//! Simplifications: one domain level of single-CPU groups (no SMT, no NUMA level); no active
//! balancing of a running thread; `max_idle_balance_cost` stays at its initial value.

use crate::model::hypervisor::sched::place::IMBALANCE_PCT;
use super::{Migration, Sched, State};
use crate::engine::Time;

/// `sd->cache_nice_tries` of the LLC (MC) domain in Linux 4.4 `sd_init`.
const CACHE_NICE_TRIES: u32 = 1;

impl Sched {
    /// `task_hot`: thread `t` ran within the migration cost of `now`.
    fn task_hot(&self, now: Time, t: u32) -> bool {
        let th = &self.threads[t as usize];
        self.clock_task(now, th.cpu).saturating_sub(th.exec_start) < self.p.migration_cost_ns
    }

    /// Some runqueue has a waiting thread allowed on more than one pCPU. When none has,
    /// [`Sched::pull_one`] finds nothing to pull for any pCPU (a thread allowed on one pCPU
    /// only waits on that pCPU's runqueue) and returns before changing anything, so a caller
    /// may skip it: the check is O(waiting threads), the pulls O(pCPUs) each.
    fn any_movable_waiting(&self) -> bool {
        self.rqs.iter().any(|rq| rq.queued.iter().any(|&t| self.threads[t as usize].allowed.count_ones() > 1))
    }

    /// Pull a waiting thread allowed on `this` from the busiest other runqueue
    /// (`load_balance`: `find_busiest_queue`, `calculate_imbalance`, `detach_tasks`); the thread
    /// is moved (not yet picked). Returns it.
    ///
    /// Loads are PELT runnable loads. A busy `this` pulls only if the busiest queue's load
    /// exceeds its own by the domain's `imbalance_pct`, and only a thread whose load fits in
    /// half the difference; an idle `this` pulls from any queue with a thread waiting.
    fn pull_one(&mut self, now: Time, this: u32, cause: Migration) -> Option<u32> {
        let here = self.runnable_load(now, this);
        let this_idle = self.idle(this);
        let mut best: Option<(f64, u32)> = None;
        for c in 0..self.ncpus() {
            let movable = self.rqs[c as usize].queued.iter().any(|&t| self.threads[t as usize].allowed.has(this));
            if c == this || !movable {
                continue;
            }
            let load = self.runnable_load(now, c);
            if best.map_or(true, |(bl, _)| load > bl) {
                best = Some((load, c));
            }
        }
        let (load, src) = best?;
        let imbalance = if this_idle {
            load / 2.0
        } else if 100.0 * load > IMBALANCE_PCT as f64 * here {
            (load - here) / 2.0
        } else {
            return None; // balanced
        };
        // can_migrate_task: cache-hot threads stay until balancing has failed often enough.
        let hot_ok = self.rqs[this as usize].nr_balance_failed > CACHE_NICE_TRIES;
        // detach_tasks walks from the tail of the list: the waiter that would run last.
        let pick = self.rqs[src as usize]
            .queued
            .iter()
            .copied()
            .filter(|&t| self.threads[t as usize].allowed.has(this))
            .filter(|&t| hot_ok || !self.task_hot(now, t))
            // detach_tasks: a thread whose move would overshoot the imbalance stays.
            .filter(|&t| self.thread_load(now, t) / 2.0 <= imbalance)
            .max_by_key(|&t| (self.threads[t as usize].vruntime, t));
        let failed = &mut self.rqs[this as usize].nr_balance_failed;
        let Some(t) = pick else {
            // load_balance found an imbalance but moved nothing (not counted when newly idle).
            if cause != Migration::IdleBalance {
                *failed += 1;
            }
            return None;
        };
        *failed = 0;
        self.rqs[src as usize].queued.retain(|&x| x != t);
        self.rqs[src as usize].clear_buddies(t);
        let rel = self.threads[t as usize].vruntime.saturating_sub(self.rqs[src as usize].min_vruntime);
        let base = self.rqs[this as usize].min_vruntime;
        let th = &mut self.threads[t as usize];
        th.vruntime = base + rel;
        th.cpu = this;
        th.migrated = true;
        th.migrations += 1;
        debug_assert_eq!(th.state, State::Queued);
        self.migrations[cause as usize] += 1;
        Some(t)
    }

    /// `idle_balance`: `this` has nothing to run; pull a waiting thread from elsewhere, unless
    /// it is idle too briefly on average for a pull to pay, or no runqueue is overloaded.
    pub(super) fn idle_balance(&mut self, now: Time, this: u32) -> Option<u32> {
        let overload = self.rqs.iter().any(|rq| rq.nr_running() > 1);
        if self.rqs[this as usize].avg_idle < self.p.migration_cost_ns || !overload || !self.any_movable_waiting() {
            return None;
        }
        let t = self.pull_one(now, this, Migration::IdleBalance)?;
        self.enqueue(this, t);
        Some(t)
    }

    /// `trigger_load_balance` at `cpu`'s tick.
    pub(super) fn trigger_load_balance(&mut self, now: Time, cpu: u32) {
        let busy = !self.idle(cpu);
        // Without a waiting thread that may run elsewhere every pull below finds nothing and
        // changes nothing: skipped, so that a host of pinned threads does not pay idle pCPUs x
        // pCPUs runqueue scans at every tick (a 256-pCPU host, issue 32 item 4).
        if busy && self.rqs[cpu as usize].nr_running() >= 2 && self.any_movable_waiting() {
            // nohz_balancer_kick → nohz_idle_balance on behalf of the idle pCPUs.
            for c in 0..self.ncpus() {
                if self.idle(c) {
                    if let Some(t) = self.pull_one(now, c, Migration::NohzBalance) {
                        self.enqueue(c, t);
                        self.pick(now, c, true);
                    }
                }
            }
        }
        if now < self.rqs[cpu as usize].next_balance {
            return;
        }
        let factor = if busy { self.p.busy_factor } else { 1 };
        self.rqs[cpu as usize].next_balance = now + self.p.balance_interval_ns * factor;
        if let Some(t) = self.pull_one(now, cpu, Migration::PeriodicBalance) {
            self.enqueue(cpu, t);
            match self.rqs[cpu as usize].curr {
                None => self.pick(now, cpu, true),
                Some(c) => self.check_preempt_wakeup(cpu, c, t),
            }
        }
    }
}
