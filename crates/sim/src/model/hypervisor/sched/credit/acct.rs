//! Credit accounting, after Xen 4.2.2's `sched_credit.c`: `burn_credits`, the tick
//! (`csched_tick` → `csched_vcpu_acct`, `csched_runq_sort`) and the master's accounting
//! (`csched_acct`), ported with each thread a domain of one vCPU of weight 256 and no cap.

use super::{Credit, Pri, CREDITS_PER_MSEC, DEFAULT_WEIGHT, NS_PER_MS};
use crate::engine::Time;

impl Credit {
    /// `burn_credits`: debit running thread `t` 10 credits per ms since its `start_time`, to
    /// the nearest credit, and move `start_time` on by the time those credits stand for.
    pub(super) fn burn_credits(&mut self, t: u32, now: Time) {
        let th = &mut self.threads[t as usize];
        let delta = now as i64 - th.start_time;
        if delta <= 0 {
            return;
        }
        let credits = (delta * CREDITS_PER_MSEC + NS_PER_MS / 2) / NS_PER_MS;
        th.credit -= credits;
        th.start_time += credits * NS_PER_MS / CREDITS_PER_MSEC;
    }

    /// `csched_tick` on `cpu`: account for its running thread (`csched_vcpu_acct`: BOOST
    /// dropped, credits burnt, back on the active list, or marked to move to a pCPU
    /// `csched_cpu_pick` finds better), then sort the runqueue if the master accounted since.
    pub(super) fn tick_cpu(&mut self, now: Time, cpu: u32) {
        if let Some(t) = self.pcpus[cpu as usize].curr {
            let th = &mut self.threads[t as usize];
            if th.pri == Pri::Boost {
                th.pri = Pri::Under;
            } else if th.pri == Pri::SmpBoost {
                // hBalance's SMP_BOOST was set whatever the vCPU's own credit: it falls back to
                // what that credit says, not to UNDER as a wake-up BOOST (only set on UNDER) does.
                th.pri = if th.credit < 0 { Pri::Over } else { Pri::Under };
            }
            self.burn_credits(t, now);
            if !self.threads[t as usize].active {
                self.acct_start(t);
            } else if self.cpu_pick(t, false) != cpu {
                self.threads[t as usize].migrating = true;
                self.resched(cpu);
            }
        }
        self.runq_sort(cpu);
        self.pcpus[cpu as usize].next_tick = Some(now + self.c.tick_ns);
    }

    /// `__csched_vcpu_acct_start`: `t` (its domain) goes to the head of the active list.
    pub(super) fn acct_start(&mut self, t: u32) {
        self.threads[t as usize].active = true;
        self.weight += DEFAULT_WEIGHT;
        self.active.insert(0, t);
    }

    /// `csched_runq_sort`: once per accounting, UNDER (and BOOST) threads move ahead of OVER
    /// ones, each group keeping its order.
    fn runq_sort(&mut self, cpu: u32) {
        let pc = &mut self.pcpus[cpu as usize];
        if pc.runq_sort_last == self.runq_sort {
            return;
        }
        pc.runq_sort_last = self.runq_sort;
        let mut under = 0;
        for i in 0..pc.runq.len() {
            let t = pc.runq[i];
            if self.threads[t as usize].pri >= Pri::Under {
                if i != under {
                    pc.runq.remove(i);
                    pc.runq.insert(under, t);
                }
                under += 1;
            }
        }
    }

    /// `csched_acct`: hand the slice's credits of every pCPU out to the active threads in
    /// proportion to weight (at most a slice's worth each, more only while the system's balance
    /// is negative), set UNDER/OVER by the sign of the credit, clip it at minus a slice, and
    /// take a thread above a slice of credit off the active list with half its credit.
    pub(super) fn acct(&mut self) {
        let cpt = self.c.credits_per_tslice;
        let weight_total = self.weight;
        let mut credit_total = self.credit;
        if self.credit_balance < 0 {
            credit_total -= self.credit_balance;
        }
        if weight_total == 0 {
            self.credit_balance = 0;
            return;
        }
        let mut weight_left = weight_total;
        let mut credit_xtra = false;
        let w = DEFAULT_WEIGHT;
        // Phase 1: each active thread's share (`credit_fair`), in list order; the list's lazy
        // reordering happens here. Nothing below depends on a thread's own credit, so the shares
        // can be settled before any credit moves (what lets Algorithm 2 pool a VM's).
        let mut fair: Vec<(u32, i64)> = Vec::with_capacity(self.active.len());
        for i in 0..self.active.len() {
            let t = self.active[i];
            weight_left -= w;
            let mut credit_peak = cpt;
            if self.credit_balance < 0 {
                credit_peak += (-self.credit_balance * w + (weight_total - 1)) / weight_total;
            }
            let mut credit_fair = (credit_total * w + (weight_total - 1)) / weight_total;
            if credit_fair < credit_peak {
                credit_xtra = true;
            } else {
                if weight_left != 0 {
                    // Give other domains a chance at unused credits.
                    credit_total += ((credit_fair - credit_peak) * weight_total + (weight_left - 1)) / weight_left;
                }
                if credit_xtra {
                    // Domains with extra credits lazily kept at the head.
                    self.active.remove(i);
                    self.active.insert(0, t);
                }
                credit_fair = credit_peak;
            }
            fair.push((t, credit_fair));
        }
        // Phase 2: credit the shares; hBalance's SMP VMs pool their vCPUs' credits with the
        // shares their active vCPUs earned and split the pool equally (Algorithm 2), so that
        // no vCPU of the VM is OVER while another holds unused quota.
        for &(t, f) in &fair {
            self.threads[t as usize].credit += f;
        }
        let mut pooled = Vec::new();
        for g in &self.groups {
            let mut q: Vec<i64> = g.iter().map(|&t| self.threads[t as usize].credit).collect();
            eventpath_policy::hbalance::refill_quota(eventpath_policy::hbalance::QuotaAllocation::IoFriendly, &mut q, 0);
            for (&t, c) in g.iter().zip(q) {
                self.threads[t as usize].credit = c;
                if !self.threads[t as usize].active {
                    pooled.push(t);
                }
            }
        }
        // Phase 3: priority, the lower clip and the upper bound, as Xen does per thread.
        let mut credit_balance = 0;
        for &(t, _) in &fair {
            let th = &mut self.threads[t as usize];
            let mut stopped = false;
            if th.credit < 0 {
                th.pri = Pri::Over;
                th.credit = th.credit.max(-cpt);
            } else {
                th.pri = Pri::Under;
                if th.credit > cpt {
                    // Upper bound: it stops earning, half its credit kept as a head start.
                    th.active = false;
                    th.credit /= 2;
                    stopped = true;
                }
            }
            credit_balance += th.credit;
            if stopped {
                self.weight -= w;
                let at = self.active.iter().position(|&x| x == t).expect("an active thread is listed");
                self.active.remove(at);
            }
        }
        // A pooled vCPU off the active list earned nothing but its credit moved: its priority
        // follows the new sign (a BOOST it holds stays, as Xen leaves an inactive one's).
        for t in pooled {
            let th = &mut self.threads[t as usize];
            if th.pri <= Pri::Under {
                th.pri = if th.credit < 0 { Pri::Over } else { Pri::Under };
            }
        }
        self.credit_balance = credit_balance;
        self.runq_sort = self.runq_sort.wrapping_add(1);
    }
}
