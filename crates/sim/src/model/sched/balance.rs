//! Load balancing, after Linux 4.4 (kernel/sched/fair.c), reduced to one domain level per
//! host (all pCPUs): a pCPU pulls one waiting thread from the busiest runqueue.
//!
//! * `idle_balance`: a pCPU about to go idle pulls a waiting thread at once.
//! * `rebalance_domains` (from `trigger_load_balance` at the tick): every `min_interval`
//!   (times `busy_factor` when the pCPU is busy) a pCPU pulls from the busiest runqueue when
//!   that one has at least two threads more (`find_busiest_group` / `calculate_imbalance`
//!   in whole threads).
//! * `nohz_idle_balance`: idle pCPUs have no tick (NO_HZ); a busy pCPU with two or more
//!   threads kicks them (`nohz_balancer_kick`), and each idle pCPU pulls.
//!
//! Simplifications: loads are thread counts weighted equally (PELT not modelled), no
//! `task_hot` / `sysctl_sched_migration_cost` cache-hotness veto and no `avg_idle` gate on
//! idle balancing; only waiting (not running) threads move, as in `can_migrate_task`.

use super::{Sched, State};
use crate::engine::Time;

impl Sched {
    /// Pull the best waiting thread allowed on `this` from the busiest other runqueue; the
    /// thread is moved (not yet picked). Returns it.
    fn pull_one(&mut self, this: u32, min_gap: usize) -> Option<u32> {
        let here = self.rqs[this as usize].nr_running();
        let mut best: Option<(usize, u32)> = None;
        for c in 0..self.ncpus() {
            if c == this {
                continue;
            }
            let nr = self.rqs[c as usize].nr_running();
            let movable = self.rqs[c as usize].queued.iter().any(|&t| self.threads[t as usize].allowed >> this & 1 == 1);
            if movable && nr >= here + min_gap && best.map_or(true, |(bn, _)| nr > bn) {
                best = Some((nr, c));
            }
        }
        let (_, src) = best?;
        // detach_tasks walks from the tail of the list: the waiter that would run last.
        let t = self.rqs[src as usize]
            .queued
            .iter()
            .copied()
            .filter(|&t| self.threads[t as usize].allowed >> this & 1 == 1)
            .max_by_key(|&t| (self.threads[t as usize].vruntime, t))?;
        self.rqs[src as usize].queued.retain(|&x| x != t);
        let rel = self.threads[t as usize].vruntime.saturating_sub(self.rqs[src as usize].min_vruntime);
        let base = self.rqs[this as usize].min_vruntime;
        let th = &mut self.threads[t as usize];
        th.vruntime = base + rel;
        th.cpu = this;
        th.migrated = true;
        debug_assert_eq!(th.state, State::Queued);
        self.migrations += 1;
        Some(t)
    }

    /// `idle_balance`: `this` has nothing to run; pull a waiting thread from elsewhere.
    pub(super) fn idle_balance(&mut self, this: u32) -> Option<u32> {
        let t = self.pull_one(this, 2)?;
        self.rqs[this as usize].queued.push(t);
        Some(t)
    }

    /// `trigger_load_balance` at `cpu`'s tick.
    pub(super) fn trigger_load_balance(&mut self, now: Time, cpu: u32) {
        let busy = !self.idle(cpu);
        if busy && self.rqs[cpu as usize].nr_running() >= 2 {
            // nohz_balancer_kick → nohz_idle_balance on behalf of the idle pCPUs.
            for c in 0..self.ncpus() {
                if self.idle(c) {
                    if let Some(t) = self.pull_one(c, 2) {
                        self.rqs[c as usize].queued.push(t);
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
        if let Some(t) = self.pull_one(cpu, 2) {
            self.rqs[cpu as usize].queued.push(t);
            match self.rqs[cpu as usize].curr {
                None => self.pick(now, cpu, true),
                Some(c) => self.check_preempt_wakeup(cpu, c, t),
            }
        }
    }
}
