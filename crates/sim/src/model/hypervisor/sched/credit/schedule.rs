//! The pCPU's schedule under Xen 4.2.2's credit scheduler: `csched_schedule` (the head of the
//! runqueue, or a steal, for a slice), the reschedule a tickle or the slice's end asks for (with
//! `sched_ratelimit_us`), and the per-pCPU timer standing for the ticker, the `s_timer` and
//! the master's accounting.

use super::{idle, Action, Credit, Migration, Pri, State, MASTER};
use crate::engine::{Fired, Time};

impl Credit {
    /// `csched_schedule` after the current thread left `cpu` (`prev`, if it did): run the head of
    /// the runqueue, or a stolen thread when the head is OVER or there is none, or go idle.
    /// The pCPU was idle (`from_idle`) when a wake-up tickled it.
    pub(super) fn pick(&mut self, now: Time, cpu: u32, from_idle: bool, prev: Option<u32>) {
        let pc = &self.pcpus[cpu as usize];
        // A pCPU that went idle at this very instant (a migration's wake-up tickling the pCPU
        // it left) has entered no idle state: no wake-up to pay, and the host still counts it
        // busy.
        let from_idle = from_idle && pc.idle.since != now;
        let head = pc.runq.first().copied();
        let head_pri = head.map_or(Pri::Idle, |h| self.threads[h as usize].pri);
        let next = if head_pri > Pri::Over {
            self.pcpus[cpu as usize].runq.remove(0);
            head
        } else {
            let cause = match (head, from_idle) {
                (Some(_), _) => Migration::PeriodicBalance,
                (None, true) => Migration::NohzBalance,
                (None, false) => Migration::IdleBalance,
            };
            match self.steal(now, cpu, head_pri) {
                Some(s) => {
                    self.moved(s, cpu, cause);
                    Some(s)
                }
                None => {
                    if head.is_some() {
                        self.pcpus[cpu as usize].runq.remove(0);
                    }
                    head
                }
            }
        };
        let Some(t) = next else {
            let pc = &mut self.pcpus[cpu as usize];
            if !from_idle {
                pc.idle.since = now; // (a tickled idle pCPU that found nothing sleeps on)
            }
            pc.next_tick = None;
            return self.rearm(cpu);
        };
        let (p, c) = (self.p, self.c);
        let pc = &mut self.pcpus[cpu as usize];
        pc.curr = Some(t);
        pc.slice_end = Some(now + c.tslice_ns);
        pc.wake_cpu = 0;
        if pc.next_tick.is_none() {
            // csched_tick_resume: the next multiple of the tick period.
            pc.next_tick = Some(now + c.tick_ns - now % c.tick_ns);
        }
        let th = &mut self.threads[t as usize];
        th.state = State::Running;
        th.waits.run(now);
        th.exec_start = now;
        th.start_time += now as i64;
        let delay = if prev == Some(t) {
            // continue_running: the same thread, no switch.
            0
        } else {
            self.switches += 1;
            th.entry = now;
            let timer = std::mem::take(&mut th.timer_woken);
            let mut delay = if from_idle {
                let (delay, wake_cpu) = idle::idle_wakeup(&p, &mut pc.idle, &mut th.rng, timer, now, &mut self.cstate_wakeups);
                pc.wake_cpu = wake_cpu;
                delay
            } else {
                p.context_switch_ns
            };
            if std::mem::take(&mut th.migrated) {
                delay += p.migration_ns;
            }
            delay
        };
        th.run_from = if from_idle { now + delay } else { now };
        self.rearm(cpu);
        self.actions.push_back(Action::SwitchIn { cpu, tid: t, delay, from_idle });
    }

    /// SCHEDULE_SOFTIRQ on busy `cpu` (a tickle, or its slice ended): if `csched_schedule`
    /// would run another thread, preempt the current one; if it would keep it (rate limit,
    /// or nothing better), only its slice timer is set again, as Xen's `schedule` does.
    pub(super) fn reschedule(&mut self, now: Time, cpu: u32) {
        let pc = &self.pcpus[cpu as usize];
        let Some(t) = pc.curr else { return };
        if pc.need_resched {
            return;
        }
        let th = &self.threads[t as usize];
        let end = if now - th.entry < self.c.ratelimit_ns {
            // sched_ratelimit_us: it keeps the pCPU a rate-limit period from now.
            now + self.c.ratelimit_ns
        } else if self.would_switch(now, cpu, t) {
            return self.resched(cpu);
        } else {
            now + self.c.tslice_ns
        };
        self.pcpus[cpu as usize].slice_end = Some(end);
        self.rearm(cpu);
    }

    /// Would `csched_schedule` on `cpu` replace its current thread `t` (runnable)? It queues
    /// `t` behind its equals: a waiter of its priority or higher wins; an OVER `t` alone at
    /// the top loses to a thread it can steal.
    fn would_switch(&self, now: Time, cpu: u32, t: u32) -> bool {
        let pri = self.threads[t as usize].pri;
        if self.pcpus[cpu as usize].runq.first().is_some_and(|&h| self.threads[h as usize].pri >= pri) {
            return true;
        }
        pri <= Pri::Over && self.find_steal(now, cpu, pri).is_some()
    }

    pub(super) fn resched(&mut self, cpu: u32) {
        let pc = &mut self.pcpus[cpu as usize];
        if pc.curr.is_some() && !pc.need_resched {
            pc.need_resched = true;
            self.actions.push_back(Action::Resched { cpu });
        }
    }

    /// The seam's host tick: the credit scheduler keeps its own ticker instead.
    pub fn tick(&mut self, _now: Time, _cpu: u32) {}

    /// `cpu`'s timer fired: the master's accounting, the tick, the end of the slice.
    pub fn timer(&mut self, now: Time, cpu: u32) {
        match self.pcpus[cpu as usize].timer.fired(now) {
            Fired::Expired => {}
            Fired::Reschedule(at) => return self.actions.push_back(Action::Timer { cpu, at }),
            Fired::Idle => return,
        }
        if cpu == MASTER && self.next_acct <= now {
            self.acct();
            self.next_acct = now + self.c.tslice_ns;
        }
        if self.pcpus[cpu as usize].next_tick.is_some_and(|at| at <= now) {
            self.tick_cpu(now, cpu);
        }
        if self.pcpus[cpu as usize].slice_end.is_some_and(|at| at <= now) {
            self.pcpus[cpu as usize].slice_end = None;
            self.reschedule(now, cpu);
        }
        self.rearm(cpu);
    }

    /// Arm `cpu`'s timer for its earliest deadline.
    pub(super) fn rearm(&mut self, cpu: u32) {
        let pc = &mut self.pcpus[cpu as usize];
        let acct = (cpu == MASTER).then_some(self.next_acct);
        let next = [pc.next_tick, pc.slice_end, acct].into_iter().flatten().min();
        match next {
            Some(d) => {
                if let Some(at) = pc.timer.arm(d) {
                    self.actions.push_back(Action::Timer { cpu, at });
                }
            }
            None => pc.timer.cancel(),
        }
    }
}
