//! Where threads run under Xen 4.2.2's credit scheduler: `__runq_tickle` (a wake-up preempts
//! a lower-priority thread and tickles one idle pCPU), `csched_load_balance` /
//! `csched_runq_steal` (a pCPU with nothing better than OVER steals from the others' queues)
//! and `_csched_cpu_pick` (the pCPU the tick moves a running thread to).
//!
//! The hosts here have no SMT: a core's sibling mask is the core itself, and the core mask
//! (`cpu_core_mask`) is its socket (`cores_per_llc`).

use super::{Credit, Pri};
use crate::model::hypervisor::sched::CpuMask;
use crate::engine::Time;

/// `cpumask_cycle`: the first pCPU of `mask` after `n`, wrapping (`n` itself last).
fn cycle(n: u32, mask: CpuMask, ncpus: u32) -> u32 {
    (1..=ncpus).map(|k| (n + k) % ncpus).find(|&c| mask.has(c)).unwrap_or(n)
}

fn bit(c: u32) -> CpuMask {
    CpuMask::bit(c)
}

impl Credit {
    /// `prv->idlers`: the pCPUs running nothing.
    fn idlers(&self) -> CpuMask {
        CpuMask::of(self.pcpus.iter().enumerate().filter(|(_, p)| p.curr.is_none()).map(|(c, _)| c as u32))
    }

    /// `cpu`'s socket as a mask (`cpu_core_mask`).
    fn socket(&self, cpu: u32) -> CpuMask {
        let llc = self.p.cores_per_llc.max(1);
        let first = cpu / llc * llc;
        CpuMask::of(first..(first + llc).min(self.ncpus()))
    }

    /// `__runq_tickle` for thread `new` queued on `cpu` (woken by `waker`'s pCPU): a busy
    /// `cpu` tickles one idle pCPU `new` may run on (`tickle_one_idle_cpu`, cycling from the
    /// waker's `last_tickle_cpu`), which schedules at once and steals; `cpu` itself is
    /// rescheduled if `new` outranks its current thread.
    pub(super) fn tickle(&mut self, now: Time, cpu: u32, new: u32, waker: Option<u32>) {
        let cur = self.pcpus[cpu as usize].curr;
        let cur_pri = cur.map_or(Pri::Idle, |c| self.threads[c as usize].pri);
        if cur.is_some() {
            let idle = self.idlers() & self.threads[new as usize].allowed;
            if !idle.is_empty() {
                let me = waker.unwrap_or(cpu) as usize;
                let y = cycle(self.pcpus[me].last_tickle, idle, self.ncpus());
                self.pcpus[me].last_tickle = y;
                self.pick(now, y, true, None);
            }
        }
        if self.threads[new as usize].pri > cur_pri {
            match cur {
                None => self.pick(now, cpu, true, None),
                Some(_) => self.reschedule(now, cpu),
            }
        }
    }

    /// `__csched_vcpu_is_migrateable` to `cpu`: queued (not running), not cache-hot
    /// (`vcpu_migration_delay`), allowed there.
    fn migrateable(&self, now: Time, t: u32, cpu: u32) -> bool {
        let th = &self.threads[t as usize];
        let hot = now.saturating_sub(th.last_run) < self.c.migration_delay_ns;
        th.state == super::State::Queued && !hot && th.allowed.has(cpu)
    }

    /// `csched_load_balance` without the steal: the first thread of priority above `pri` that
    /// `cpu` may take from a busy peer's runqueue, peers in order from `cpu`'s neighbour
    /// (`csched_runq_steal` stops at a peer's first thread not above `pri`): (peer, position).
    pub(super) fn find_steal(&self, now: Time, cpu: u32, pri: Pri) -> Option<(u32, usize)> {
        let n = self.ncpus();
        for peer in (1..n).map(|k| (cpu + k) % n) {
            let pc = &self.pcpus[peer as usize];
            if pc.curr.is_none() {
                continue; // an idle peer picks up its own work
            }
            for (i, &t) in pc.runq.iter().enumerate() {
                if self.threads[t as usize].pri <= pri {
                    break;
                }
                if self.migrateable(now, t, cpu) {
                    return Some((peer, i));
                }
            }
        }
        None
    }

    /// `csched_load_balance`: take the thread [`Self::find_steal`] finds off its peer's queue.
    pub(super) fn steal(&mut self, now: Time, cpu: u32, pri: Pri) -> Option<u32> {
        let (peer, i) = self.find_steal(now, cpu, pri)?;
        Some(self.pcpus[peer as usize].runq.remove(i))
    }

    /// `_csched_cpu_pick` for thread `t`: its pCPU if allowed, else the next allowed; then an
    /// idle pCPU instead where that leaves fewer idlers around it (same socket: any idle core
    /// beats a busy one; another socket: one with more than twice the idle cores). `commit`
    /// records the choice as the peer's `idle_bias`.
    pub(super) fn cpu_pick(&mut self, t: u32, commit: bool) -> u32 {
        let n = self.ncpus();
        let th = &self.threads[t as usize];
        let allowed = th.allowed & CpuMask::first(n);
        let proc = th.cpu;
        let mut cpu = if allowed.has(proc) { proc } else { cycle(proc, allowed, n) };
        let mut idlers = self.idlers();
        if proc == cpu && self.pcpus[cpu as usize].runq.is_empty() {
            idlers |= bit(cpu); // discount `t` itself
        }
        let mut cpus = allowed & idlers & !bit(cpu);
        let mut spc = None;
        while !cpus.is_empty() {
            let nxt = cycle(cpu, cpus, n);
            let (factor, cpu_idlers, nxt_idlers) = if self.socket(cpu).has(nxt) {
                (1, idlers & bit(cpu), idlers & bit(nxt))
            } else {
                (2, idlers & self.socket(cpu), idlers & self.socket(nxt))
            };
            if cpu_idlers.count_ones() * factor < nxt_idlers.count_ones() {
                spc = Some(nxt);
                cpu = cycle(self.pcpus[nxt as usize].idle_bias, nxt_idlers & cpus, n);
                cpus &= !bit(cpu);
            } else {
                cpus &= !nxt_idlers;
            }
        }
        if let (true, Some(s)) = (commit, spc) {
            self.pcpus[s as usize].idle_bias = cpu;
        }
        cpu
    }
}
