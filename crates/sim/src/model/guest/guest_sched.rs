//! The guest kernel's scheduler for a VM's application threads (DESIGN §3.5): one CFS-like run
//! queue per vCPU, as Linux 4.4's `kernel/sched/fair.c` keeps, over the threads homed on it
//! (netperf's threads; `tcp.rs`). Equal weights (nice 0): each runnable thread's virtual
//! runtime advances by the guest time it is given, and the vCPU runs
//! * the current thread until it blocks or has had its slice of the period
//!   (`sched_slice`: period = max(latency, nr × min_granularity), split evenly:
//!   `check_preempt_tick`, checked at step boundaries instead of ticks);
//! * then the runnable thread with the smallest virtual runtime (`pick_next_entity`);
//! * a thread that wakes is placed no earlier than `min_vruntime` − latency / 2 (`place_entity`
//!   for sleepers) and preempts the current one when it is more than `wakeup_granularity`
//!   behind it (`check_preempt_wakeup` / `wakeup_preempt_entity`), seen at the next step
//!   boundary.
//!
//! Switching between two threads costs `sched.context_switch_ns` of guest time (the guest is
//! the same Linux as the host, whose parameters — latency, granularities, scaled by
//! 1 + ilog2(min(vCPUs, 8)) as `update_sysctl` does — it shares). The lowest-priority CPU
//! burn (`guest_cpu_burn`, ES2 §6.3's "lowest-priority CPU burn scripts") is not on these run
//! queues: it runs only when none of them has a runnable thread (`vcpu.rs`), so a woken
//! application thread always preempts it.
//!
//! Threads stay on their home vCPU: wake-up placement of netperf's busy threads is their
//! previous CPU (`select_task_rq_fair` keeps a task on a CPU that is not idle-balanced away),
//! and the guest's load balancer is not modelled.

use crate::engine::Time;
use crate::profile::Profile;

/// The CFS parameters of a guest of `vcpus` vCPUs (ns).
#[derive(Debug, Clone, Copy)]
struct Params {
    latency: Time,
    min_granularity: Time,
    wakeup_granularity: Time,
    switch: Time,
}

/// One vCPU's run queue.
#[derive(Debug, Default)]
struct Rq {
    /// The threads homed on the vCPU (workload-local ids), in id order.
    threads: Vec<u32>,
    /// Their virtual runtimes (ns).
    vruntime: Vec<Time>,
    /// Runnable at the previous pick (a thread runnable now and not then has woken).
    was_runnable: Vec<bool>,
    /// Index of the thread that ran last, and its virtual runtime when it was picked.
    curr: Option<(usize, Time)>,
    /// Monotone floor of the runnable threads' virtual runtimes.
    min_vruntime: Time,
}

/// The guest scheduler of one VM.
#[derive(Debug)]
pub(crate) struct GuestSched {
    p: Params,
    rqs: Vec<Rq>,
    /// Switches between two threads on a vCPU (lifetime).
    pub switches: u64,
}

impl GuestSched {
    /// Run queues for `vcpus` vCPUs; thread `t` of `threads` is homed on vCPU `t % vcpus`.
    pub fn new(threads: u32, vcpus: u32, p: &Profile) -> Self {
        let s = &p.sched;
        let factor = 1 + u64::from(vcpus.clamp(1, 8).ilog2());
        let p = Params {
            latency: s.latency_ns.value as Time * factor,
            min_granularity: s.min_granularity_ns.value as Time * factor,
            wakeup_granularity: s.wakeup_granularity_ns.value as Time * factor,
            switch: s.context_switch_ns.value as Time,
        };
        let mut rqs: Vec<Rq> = (0..vcpus).map(|_| Rq::default()).collect();
        for t in 0..threads {
            let rq = &mut rqs[(t % vcpus) as usize];
            rq.threads.push(t);
            rq.vruntime.push(0);
            rq.was_runnable.push(true);
        }
        GuestSched { p, rqs, switches: 0 }
    }

    /// The thread local vCPU `v` runs next among those `runnable` says can run, and the guest
    /// time the switch to it costs; None: none can (the vCPU idles or burns).
    pub fn pick(&mut self, v: u32, runnable: impl Fn(u32) -> bool) -> Option<(u32, Time)> {
        let p = self.p;
        let rq = &mut self.rqs[v as usize];
        let mut nr = 0u64;
        let mut best: Option<usize> = None;
        let mut woken: Option<usize> = None;
        let floor = rq.min_vruntime.saturating_sub(p.latency / 2);
        for i in 0..rq.threads.len() {
            let r = runnable(rq.threads[i]);
            if r && !rq.was_runnable[i] {
                // place_entity: a sleeper gets at most half a period of credit.
                rq.vruntime[i] = rq.vruntime[i].max(floor);
                if woken.is_none_or(|w| rq.vruntime[i] < rq.vruntime[w]) {
                    woken = Some(i);
                }
            }
            rq.was_runnable[i] = r;
            if r {
                nr += 1;
                if best.is_none_or(|b| rq.vruntime[i] < rq.vruntime[b]) {
                    best = Some(i);
                }
            }
        }
        let best = best?;
        rq.min_vruntime = rq.min_vruntime.max(rq.vruntime[best]);
        let period = p.latency.max(nr * p.min_granularity);
        let slice = period / nr;
        let next = match rq.curr {
            Some((c, at)) if rq.was_runnable[c] => {
                let preempted_by_wakeup = woken.filter(|&w| w != c && rq.vruntime[c] > rq.vruntime[w] + p.wakeup_granularity);
                match preempted_by_wakeup {
                    Some(w) => w,
                    None if rq.vruntime[c] - at < slice => c,
                    None => best,
                }
            }
            _ => best,
        };
        let cost = match rq.curr {
            Some((c, _)) if c != next => {
                self.switches += 1;
                p.switch
            }
            _ => 0,
        };
        if rq.curr.is_none_or(|(c, _)| c != next) {
            rq.curr = Some((next, rq.vruntime[next]));
        }
        Some((rq.threads[next], cost))
    }

    /// Thread `t`, homed on local vCPU `t % vCPUs`, is given `ns` of guest time.
    pub fn ran(&mut self, t: u32, ns: Time) {
        let n = self.rqs.len() as u32;
        let rq = &mut self.rqs[(t % n) as usize];
        let i = (t / n) as usize;
        rq.vruntime[i] += ns;
    }

    /// Thread `t`'s virtual runtime (ns).
    #[cfg(test)]
    fn vruntime(&self, t: u32) -> Time {
        let n = self.rqs.len() as u32;
        self.rqs[(t % n) as usize].vruntime[(t / n) as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sched(threads: u32, vcpus: u32) -> GuestSched {
        GuestSched::new(threads, vcpus, &crate::profile::Profile::load("es2").expect("es2"))
    }

    /// Run vCPU 0 for `steps` steps of `ns` each with every thread runnable; returns each
    /// thread's share of the guest time.
    fn shares(g: &mut GuestSched, steps: u32, ns: Time, runnable: impl Fn(u32) -> bool + Copy) -> Vec<Time> {
        let mut got = vec![0; g.rqs[0].threads.len()];
        for _ in 0..steps {
            let (t, _) = g.pick(0, runnable).expect("a runnable thread");
            g.ran(t, ns);
            got[(t / g.rqs.len() as u32) as usize] += ns;
        }
        got
    }

    #[test]
    fn threads_on_one_vcpu_share_it_evenly_in_slices() {
        let mut g = sched(3, 1);
        let got = shares(&mut g, 30_000, 1_000, |_| true);
        let (lo, hi) = (got.iter().min().unwrap(), got.iter().max().unwrap());
        // Equal to within one slice (6 ms latency / 3 = 2 ms at 1 vCPU).
        assert!(hi - lo <= 2_000_000, "{got:?}");
        // Slices, not step-by-step alternation: far fewer switches than steps.
        assert!(g.switches < 100, "{} switches", g.switches);
    }

    #[test]
    fn a_thread_alone_runs_without_switch_costs() {
        let mut g = sched(1, 1);
        for _ in 0..100 {
            let (t, cost) = g.pick(0, |_| true).unwrap();
            assert_eq!((t, cost), (0, 0));
            g.ran(t, 5_000);
        }
        assert_eq!(g.pick(0, |_| false), None);
    }

    #[test]
    fn threads_are_homed_round_robin_on_the_vcpus() {
        let mut g = sched(4, 2);
        assert_eq!(g.pick(0, |_| true).unwrap().0, 0);
        assert_eq!(g.pick(1, |_| true).unwrap().0, 1);
        assert_eq!(g.pick(1, |t| t == 3).unwrap().0, 3);
        assert_eq!(g.pick(0, |t| t == 1), None, "thread 1 lives on vCPU 1");
    }

    #[test]
    fn a_woken_sleeper_preempts_a_thread_that_ran_long() {
        let mut g = sched(2, 1);
        // Thread 1 sleeps while thread 0 runs 100 ms.
        for _ in 0..100 {
            let (t, _) = g.pick(0, |t| t == 0).unwrap();
            g.ran(t, 1_000_000);
        }
        // It wakes: placed at most half a latency behind, and runs at once (with a switch).
        let (t, cost) = g.pick(0, |_| true).unwrap();
        assert_eq!(t, 1);
        assert!(cost > 0);
        // (min_vruntime trails thread 0 by its last 1 ms step.)
        assert_eq!(g.vruntime(1), g.vruntime(0) - 1_000_000 - 3_000_000);
    }

    #[test]
    fn a_wakeup_within_the_granularity_does_not_preempt() {
        let mut g = sched(2, 1);
        let (t, _) = g.pick(0, |t| t == 0).unwrap();
        g.ran(t, 100_000);
        g.ran(1, 50_000); // thread 1 is only a little behind
        assert_eq!(g.pick(0, |_| true).unwrap().0, 0, "0.05 ms behind < 1 ms wake-up granularity");
    }
}
