//! A directed yield (`yield_to`, kernel/sched/core.c; `yield_to_task_fair` and the buddies of
//! `pick_next_entity`, kernel/sched/fair.c): the thread running on a pCPU gives way to a
//! runnable thread that waits for its own pCPU. KVM calls it for a vCPU that asks to yield to
//! a preempted sibling (`KVM_HC_SCHED_YIELD` → `kvm_sched_yield` → `kvm_vcpu_yield_to`,
//! `yield_to(task, preempt = true)`).
//!
//! CFS does not move anything: it marks the target its runqueue's *next buddy* and the yielder
//! its runqueue's *skip buddy*, reschedules both pCPUs, and lets the pick decide. The pick
//! still runs the leftmost thread unless a buddy is within the wake-up granularity of it
//! (`wakeup_preempt_entity(buddy, left) < 1`): a yield never makes CFS unfair by more than that.
//! A buddy is cleared when it is picked or leaves the runqueue (`clear_buddies`).

use super::{Rq, Sched, State, NICE_0_LOAD};
use crate::engine::Time;

impl Rq {
    /// `clear_buddies`: `t` was picked or left this runqueue.
    pub(super) fn clear_buddies(&mut self, t: u32) {
        if self.next == Some(t) {
            self.next = None;
        }
        if self.skip == Some(t) {
            self.skip = None;
        }
    }
}

impl Sched {
    /// `yield_to(p, true)` from the thread running on `cpu` (KVM's `kvm_vcpu_yield_to`).
    /// Returns whether it yielded: only to a thread that is runnable and not running
    /// (`task_running(p_rq, p) || p->state` fails it), never to itself.
    pub fn yield_to(&mut self, now: Time, cpu: u32, p: u32) -> bool {
        let Some(curr) = self.rqs[cpu as usize].curr else { return false };
        let target = &self.threads[p as usize];
        if target.state != State::Queued || curr == p {
            return false;
        }
        let p_cpu = target.cpu;
        // yield_to_task_fair: set_next_buddy(p) on p's runqueue, then yield_task_fair here.
        self.rqs[p_cpu as usize].next = Some(p);
        // yield_task_fair: alone on its runqueue the yielder would pick itself again, so there
        // is nothing to mark.
        if self.rqs[cpu as usize].nr_running() > 1 {
            self.update_curr(now, cpu);
            let rq = &mut self.rqs[cpu as usize];
            rq.clear_buddies(curr);
            rq.skip = Some(curr);
        }
        // yield_to's schedule() here and the reschedule of p's pCPU ("pick_next_entity takes
        // care of fairness"). Where that pick would choose the running thread again, Linux
        // switches nothing (`prev == next`) and only clears the running thread's buddies: the
        // model does the same without the round trip through a reschedule, which would charge
        // a switch and restart the slice.
        let cpus = [cpu, p_cpu];
        for &c in &cpus[..if p_cpu == cpu { 1 } else { 2 }] {
            let running = self.rqs[c as usize].curr;
            if self.choose(c, running) == running {
                if let Some(r) = running {
                    self.rqs[c as usize].clear_buddies(r);
                }
            } else {
                self.resched(c);
            }
        }
        true
    }

    /// Thread `t` was descheduled while runnable and has not run since (KVM sets
    /// `vcpu->preempted` in `kvm_sched_out` when the vCPU thread is still on its runqueue, and
    /// clears it in `kvm_sched_in`; a woken vCPU that has not yet run is not preempted).
    pub fn preempted(&self, t: u32) -> bool {
        self.threads[t as usize].preempted
    }

    /// `pick_next_entity`: the leftmost thread, unless a buddy may run instead without being
    /// too unfair — the thread after a leftmost skip buddy, then the next buddy.
    pub(super) fn pick_next_entity(&self, cpu: u32) -> Option<u32> {
        self.choose(cpu, None)
    }

    /// [`Self::pick_next_entity`] among `cpu`'s waiting threads and `running` (its current
    /// thread, as Linux's pick sees it when that thread is still runnable).
    fn choose(&self, cpu: u32, running: Option<u32>) -> Option<u32> {
        let rq = &self.rqs[cpu as usize];
        // The running thread is not in the tree: it goes first only if strictly before
        // (`entity_before(curr, left)`), so among equals it comes last.
        let key = |&t: &u32| if Some(t) == running { (self.threads[t as usize].vruntime, u64::MAX) } else { self.tree_key(t) };
        let all = || rq.queued.iter().copied().chain(running);
        let left = all().min_by_key(key)?;
        if rq.next.is_none() && rq.skip.is_none() {
            return Some(left);
        }
        let mut se = left;
        if rq.skip == Some(left) {
            if let Some(s) = all().filter(|&t| t != left).min_by_key(key).filter(|&s| self.not_too_unfair(s, left)) {
                se = s;
            }
        }
        if let Some(n) = rq.next.filter(|&n| all().any(|t| t == n) && self.not_too_unfair(n, left)) {
            se = n;
        }
        Some(se)
    }

    /// `wakeup_preempt_entity(buddy, left) < 1`: the buddy's vruntime leads the leftmost's by
    /// at most the wake-up granularity, scaled by the leftmost's weight (`wakeup_gran`).
    fn not_too_unfair(&self, buddy: u32, left: u32) -> bool {
        let (b, l) = (&self.threads[buddy as usize], &self.threads[left as usize]);
        let gran = self.p.wakeup_granularity_ns * NICE_0_LOAD / l.weight;
        b.vruntime <= l.vruntime + gran
    }
}

#[cfg(test)]
mod tests {
    use crate::model::hypervisor::sched::{Action, CStateTable, Params, Sched, State};
    use crate::engine::Rng;

    fn sched(ncpus: u32) -> Sched {
        let p = Params {
            latency_ns: 6_000_000,
            min_granularity_ns: 750_000,
            wakeup_granularity_ns: 1_000_000,
            context_switch_ns: 1_000,
            migration_ns: 0,
            idle_wakeup_ns: 0.0,
            timer_wakeup_ns: 0.0,
            idle_wakeup_spread_ns: 0.0,
            cstates: CStateTable::default(),
            balance_interval_ns: u64::MAX / 4,
            busy_factor: 1,
            migration_cost_ns: 500_000,
            cores_per_llc: ncpus,
        };
        Sched::new(p, ncpus)
    }

    fn switched_in(s: &mut Sched) -> Vec<u32> {
        let mut v = Vec::new();
        while let Some(a) = s.actions.pop_front() {
            if let Action::SwitchIn { tid, .. } = a {
                v.push(tid);
            }
        }
        v
    }

    /// Three threads on one pCPU: 2 runs and yields to 0, which is neither the leftmost (the
    /// yielder) nor the one after it (1), but within the granularity of both: 0 runs next.
    #[test]
    fn a_yield_runs_the_target_next_on_the_yielders_pcpu() {
        let mut s = sched(1);
        let ts: Vec<u32> = (0..3).map(|i| s.add(0, 1, Rng::for_component(i, "t"))).collect();
        for &t in &ts {
            s.start(0, t);
        }
        assert_eq!(switched_in(&mut s), vec![0]);
        s.deschedule(500_000, 0, false); // 0 ran 0.5 ms
        assert!(s.preempted(0), "descheduled while runnable");
        assert_eq!(switched_in(&mut s), vec![1]);
        assert!(!s.preempted(1) && !s.preempted(2), "1 runs; 2 never ran: only waiting");
        s.deschedule(800_000, 0, false); // 1 ran 0.3 ms
        assert_eq!(switched_in(&mut s), vec![2], "2 has the smallest vruntime");
        assert!(s.yield_to(900_000, 0, 0), "2 ran 0.1 ms and yields to 0");
        assert!(s.need_resched(0));
        assert_eq!((s.rqs[0].next, s.rqs[0].skip), (Some(0), Some(2)));
        s.deschedule(900_000, 0, false);
        assert_eq!(switched_in(&mut s), vec![0], "vruntimes 0.5 / 0.3 / 0.1 ms: the buddy, not the leftmost");
        assert_eq!(s.rqs[0].next, None, "picked: buddy cleared");
        assert_eq!(s.rqs[0].skip, Some(2), "the yielder stays skipped until it runs or leaves");
        assert!(!s.preempted(0));
    }

    #[test]
    fn no_yield_to_a_running_or_sleeping_thread_or_to_itself() {
        let mut s = sched(2);
        let a = s.add(0, 1, Rng::for_component(1, "a"));
        let b = s.add(0, 2, Rng::for_component(2, "b"));
        let c = s.add(0, 1, Rng::for_component(3, "c"));
        s.start(0, a);
        s.start(0, b);
        switched_in(&mut s);
        assert!(!s.yield_to(10, 0, b), "b runs on pCPU 1");
        assert!(!s.yield_to(10, 0, c), "c sleeps");
        assert!(!s.yield_to(10, 0, a), "itself");
        assert!(s.actions.is_empty());
        assert_eq!(s.threads[c as usize].state, State::Sleeping);
    }

    /// A yielder alone on pCPU 0; a hog and the target `t` on pCPU 1, the hog running.
    fn yielder_and_hog_with_target() -> (Sched, u32, u32) {
        let mut s = sched(2);
        let y = s.add(0, 1, Rng::for_component(1, "a"));
        let hog = s.add(0, 2, Rng::for_component(2, "b"));
        let t = s.add(0, 2, Rng::for_component(3, "c"));
        for x in [y, hog, t] {
            s.start(0, x);
        }
        switched_in(&mut s);
        (s, hog, t)
    }

    /// The target waits on another pCPU, further ahead of the running hog than the wake-up
    /// granularity: the hog runs on (no switch), the buddy waits for a later pick; the
    /// yielder, alone on its pCPU, keeps running.
    #[test]
    fn an_unfair_yield_to_another_pcpu_leaves_its_thread_running() {
        let (mut s, hog, t) = yielder_and_hog_with_target();
        assert_eq!(s.rqs[1].curr, Some(hog));
        // The hog runs 0.5 ms then t runs 2.5 ms and is preempted: t leads by 2 ms.
        s.deschedule(500_000, 1, false);
        assert_eq!(switched_in(&mut s), vec![t]);
        s.deschedule(3_000_000, 1, false);
        assert_eq!(switched_in(&mut s), vec![hog]);
        assert!(s.yield_to(3_000_000, 0, t));
        assert!(!s.need_resched(0), "alone: nothing to yield to on its own pCPU");
        assert!(!s.need_resched(1), "t leads the hog by 2 ms > 1 ms granularity: unfair, the hog runs on");
        assert_eq!(s.rqs[1].next, Some(t), "the buddy stays for a later pick");
        // After the hog has caught up to within the granularity, the next pick takes t.
        s.deschedule(4_500_000, 1, false);
        assert_eq!(switched_in(&mut s), vec![t]);
        assert_eq!(s.rqs[1].next, None);
    }

    #[test]
    fn a_fair_yield_to_another_pcpu_switches_it_to_the_target() {
        let (mut s, hog, t) = yielder_and_hog_with_target();
        s.deschedule(2_000_000, 1, false); // the hog ran 2 ms
        assert_eq!(switched_in(&mut s), vec![t]);
        s.deschedule(2_500_000, 1, false); // t ran 0.5 ms: the leftmost, yet preempted
        assert_eq!(switched_in(&mut s), vec![t], "still leftmost");
        s.deschedule(4_000_000, 1, false); // t 2.0 ms: ties the hog, which has the lower id
        assert_eq!(switched_in(&mut s), vec![hog]);
        assert!(s.yield_to(4_500_000, 0, t), "the hog at 2.5 ms, t at 2.0 ms");
        assert!(s.need_resched(1));
        s.deschedule(4_500_000, 1, false);
        assert_eq!(switched_in(&mut s), vec![t]);
    }

    #[test]
    fn a_buddy_leaving_its_runqueue_is_forgotten() {
        let mut s = sched(1);
        let a = s.add(0, 1, Rng::for_component(1, "a"));
        let b = s.add(0, 1, Rng::for_component(2, "b"));
        s.start(0, a);
        s.start(0, b);
        switched_in(&mut s);
        assert!(s.yield_to(100, 0, b));
        assert_eq!((s.rqs[0].next, s.rqs[0].skip), (Some(b), Some(a)));
        s.deschedule(100, 0, false);
        assert_eq!(switched_in(&mut s), vec![b]);
        s.deschedule(200, 0, true); // b sleeps
        assert_eq!(switched_in(&mut s), vec![a], "alone: the skip buddy runs anyway");
        assert_eq!((s.rqs[0].next, s.rqs[0].skip), (None, None));
    }
}
