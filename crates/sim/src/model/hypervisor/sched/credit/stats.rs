//! What the credit scheduler reports through the seam: run times, waits, migrations, switches
//! (the same bookkeeping as CFS's, `sched/mod.rs`), and the reads of its state.

use super::{Credit, Migration, SchedStats, State, MAX_CSTATES};
use crate::engine::Time;

impl Credit {
    /// Run-time bookkeeping of `cpu`'s current thread up to `now`.
    pub(super) fn account(&mut self, now: Time, cpu: u32) {
        let Some(t) = self.pcpus[cpu as usize].curr else { return };
        let n = self.pcpus.len();
        let th = &mut self.threads[t as usize];
        let from = th.run_from.max(self.window_start);
        self.run_ns[t as usize * n + cpu as usize] += now.saturating_sub(from);
        th.run_from = th.run_from.max(now);
        th.sum_exec += now - th.exec_start;
        th.exec_start = now;
    }

    /// Pending preemption of `cpu`'s current thread.
    pub fn need_resched(&self, cpu: u32) -> bool {
        self.pcpus[cpu as usize].need_resched
    }
    /// The current thread of `cpu`.
    pub fn current(&self, cpu: u32) -> Option<u32> {
        self.pcpus[cpu as usize].curr
    }
    /// The idle-state wake-up CPU owed by the thread switched in on `cpu` (taken once).
    pub fn take_wake_cpu(&mut self, cpu: u32) -> Time {
        std::mem::take(&mut self.pcpus[cpu as usize].wake_cpu)
    }
    /// Threads on `cpu`'s runqueue, the running one included.
    pub fn nr_running(&self, cpu: u32) -> usize {
        let pc = &self.pcpus[cpu as usize];
        pc.runq.len() + pc.curr.is_some() as usize
    }
    /// Thread `t`'s pCPU.
    pub fn thread_cpu(&self, t: u32) -> u32 {
        self.threads[t as usize].cpu
    }
    /// Thread `t`'s state.
    pub fn thread_state(&self, t: u32) -> State {
        self.threads[t as usize].state
    }
    /// Thread `t`'s migrations in the window.
    pub fn thread_migrations(&self, t: u32) -> u64 {
        self.threads[t as usize].migrations
    }

    /// Start a new measurement window.
    pub fn reset_metrics(&mut self, now: Time) {
        for c in 0..self.ncpus() {
            self.account(now, c);
        }
        self.run_ns.iter_mut().for_each(|x| *x = 0);
        self.window_start = now;
        self.migrations = [0; Migration::COUNT];
        self.threads.iter_mut().for_each(|t| t.migrations = 0);
        self.switches = 0;
        self.smp_boosts = 0;
        self.cstate_wakeups = [0; MAX_CSTATES];
    }

    /// Run time of thread `t` on pCPU `c` in the window up to `now`.
    pub fn run_ns(&self, now: Time, t: u32, c: u32) -> u64 {
        let th = &self.threads[t as usize];
        let live = if th.state == State::Running && th.cpu == c { now.saturating_sub(th.run_from.max(self.window_start)) } else { 0 };
        self.run_ns[t as usize * self.pcpus.len() + c as usize] + live
    }

    /// Busy time of pCPU `c` in the window.
    pub fn busy_ns(&self, now: Time, c: u32) -> u64 {
        (0..self.threads.len() as u32).map(|t| self.run_ns(now, t, c)).sum()
    }

    /// Lifetime (run time, run delay) of thread `t`.
    pub fn run_and_delay(&self, now: Time, t: u32) -> (u64, u64) {
        let th = &self.threads[t as usize];
        let ran = th.sum_exec + if th.state == State::Running { now - th.exec_start } else { 0 };
        (ran, th.waits.delay(now, th.state == State::Queued))
    }

    /// Thread `t`'s longest single wait since the last call, and start over.
    pub fn take_max_wait(&mut self, now: Time, t: u32) -> u64 {
        let th = &mut self.threads[t as usize];
        th.waits.take_max(now, th.state == State::Queued)
    }

    /// Thread `t`'s longest single wait over the run.
    pub fn longest_wait(&self, now: Time, t: u32) -> u64 {
        let th = &self.threads[t as usize];
        th.waits.longest(now, th.state == State::Queued)
    }

    /// None: credit bounds no wait simply. BOOSTed wakers run ahead of a waiting thread, and an
    /// OVER thread waits behind every UNDER one until the accounting lifts its credit, which
    /// takes as many periods as there are active threads per pCPU host-wide.
    pub fn starvation_bound_ns(&self, _tick_ns: u64) -> Option<u64> {
        None
    }

    /// The window's counters (no wake-affine placement in credit).
    pub fn stats(&self) -> SchedStats {
        SchedStats {
            switches: self.switches,
            migrations: Migration::ALL.iter().map(|&m| (m, self.migrations[m as usize])).collect(),
            wake_affine_hits: 0,
            cstate_wakeups: self.cstate_wakeups.to_vec(),
        }
    }
}
