//! The host-scheduler seam: what the host model asks of a scheduler. [`Scheduler`] selects the
//! implementation — Linux CFS ([`Sched`], the default) or Xen 4.2's credit scheduler
//! ([`Credit`], hBalance's host; `[host] scheduler = "xen_credit"`). The host model
//! (`threads.rs`) only decides *when* a thread can leave its pCPU; placement, slices,
//! preemption and balancing are the scheduler's, and its decisions come out as [`Action`]s.

use super::{Action, Credit, Migration, Sched, State};
use crate::engine::{Rng, Time};

/// Counters of a scheduler over the measurement window.
#[derive(Debug, Clone, Default)]
pub struct SchedStats {
    /// Context switches.
    pub switches: u64,
    /// Migrations by cause ([`Migration::ALL`] order).
    pub migrations: Vec<(Migration, u64)>,
    /// Wake-ups placed on the waker's pCPU.
    pub wake_affine_hits: u64,
    /// Wake-ups of an idle pCPU by the idle state it left (profile's C-state order).
    pub cstate_wakeups: Vec<u64>,
}

/// The scheduler a host runs (dispatched without boxing: the hot path calls it per event).
#[derive(Debug)]
pub enum Scheduler {
    /// Linux CFS (kernel/sched/fair.c), see [`Sched`].
    Cfs(Sched),
    /// Xen 4.2's credit scheduler (xen/common/sched_credit.c), see [`Credit`].
    Credit(Credit),
}

macro_rules! each {
    ($self:ident, $s:ident => $e:expr) => {
        match $self {
            Scheduler::Cfs($s) => $e,
            Scheduler::Credit($s) => $e,
        }
    };
}

impl Scheduler {
    /// Number of pCPUs.
    pub fn ncpus(&self) -> u32 {
        each!(self, s => s.ncpus())
    }
    /// Add a sleeping thread of `nice` allowed on the pCPUs in `allowed`; returns its id.
    pub fn add(&mut self, nice: i32, allowed: impl Into<super::CpuMask>, rng: Rng) -> u32 {
        let allowed = allowed.into();
        each!(self, s => s.add(nice, allowed, rng))
    }
    /// Thread `t` is runnable from the start.
    pub fn start(&mut self, now: Time, t: u32) {
        each!(self, s => s.start(now, t))
    }
    /// Wake sleeping thread `t`; `waker` is the pCPU whose thread or interrupt woke it.
    pub fn wake(&mut self, now: Time, t: u32, waker: Option<u32>) {
        each!(self, s => s.wake(now, t, waker))
    }
    /// Wake sleeping thread `t` at the expiry of its own timed sleep.
    pub fn wake_by_timer(&mut self, now: Time, t: u32) {
        each!(self, s => s.wake_by_timer(now, t))
    }
    /// The current thread of `cpu` leaves it: to sleep, or back to its runqueue.
    pub fn deschedule(&mut self, now: Time, cpu: u32, sleep: bool) {
        each!(self, s => s.deschedule(now, cpu, sleep))
    }
    /// The periodic tick of `cpu`.
    pub fn tick(&mut self, now: Time, cpu: u32) {
        each!(self, s => s.tick(now, cpu))
    }
    /// Is a preemption of `cpu`'s current thread pending?
    pub fn need_resched(&self, cpu: u32) -> bool {
        each!(self, s => s.need_resched(cpu))
    }
    /// The oldest decision not yet carried out.
    pub fn next_action(&mut self) -> Option<Action> {
        each!(self, s => s.actions.pop_front())
    }
    /// The current thread of `cpu`.
    pub fn current(&self, cpu: u32) -> Option<u32> {
        each!(self, s => s.current(cpu))
    }
    /// The wake-up CPU the thread switched in on `cpu` owes for its pCPU's idle-state exit
    /// (taken once; see `Sched::take_wake_cpu`).
    pub fn take_wake_cpu(&mut self, cpu: u32) -> Time {
        each!(self, s => s.take_wake_cpu(cpu))
    }
    /// Threads on `cpu`'s runqueue, the running one included.
    pub fn nr_running(&self, cpu: u32) -> usize {
        each!(self, s => s.nr_running(cpu))
    }
    /// Thread `t`'s pCPU: current, queued on, or last run on.
    pub fn thread_cpu(&self, t: u32) -> u32 {
        each!(self, s => s.thread_cpu(t))
    }
    /// Thread `t`'s state.
    pub fn thread_state(&self, t: u32) -> State {
        each!(self, s => s.thread_state(t))
    }
    /// Start a new measurement window.
    pub fn reset_metrics(&mut self, now: Time) {
        each!(self, s => s.reset_metrics(now))
    }
    /// Run time of thread `t` on pCPU `c` in the window.
    pub fn run_ns(&self, now: Time, t: u32, c: u32) -> u64 {
        each!(self, s => s.run_ns(now, t, c))
    }
    /// Busy time of pCPU `c` in the window.
    pub fn busy_ns(&self, now: Time, c: u32) -> u64 {
        each!(self, s => s.busy_ns(now, c))
    }
    /// Lifetime (run time, run delay) of thread `t`.
    pub fn run_and_delay(&self, now: Time, t: u32) -> (u64, u64) {
        each!(self, s => s.run_and_delay(now, t))
    }
    /// Thread `t`'s longest single wait for a pCPU since the last call.
    pub fn take_max_wait(&mut self, now: Time, t: u32) -> u64 {
        each!(self, s => s.take_max_wait(now, t))
    }
    /// Thread `t`'s longest single wait for a pCPU over the run.
    pub fn longest_wait(&self, now: Time, t: u32) -> u64 {
        each!(self, s => s.longest_wait(now, t))
    }
    /// The longest a runnable thread may wait for a pCPU when all threads weigh the same
    /// (None when they do not); `tick_ns` is the host tick period.
    pub fn starvation_bound_ns(&self, tick_ns: u64) -> Option<u64> {
        each!(self, s => s.starvation_bound_ns(tick_ns))
    }
    /// Thread `t`'s migrations in the window.
    pub fn thread_migrations(&self, t: u32) -> u64 {
        each!(self, s => s.thread_migrations(t))
    }
    /// The window's counters.
    pub fn stats(&self) -> SchedStats {
        each!(self, s => s.stats())
    }

    /// hBalance's `SMP_BOOST` (§5.1) of thread `t`: true when carried out. Only Xen credit has
    /// the priority ([`Credit::smp_boost`]); CFS has no priority classes to put a vCPU above,
    /// so it refuses (false) and hBalance's scheduler half — this boost and Algorithm 2's
    /// quota pooling — needs `scheduler = "xen_credit"`; under CFS h_balance only routes.
    pub fn smp_boost(&mut self, now: Time, t: u32) -> bool {
        match self {
            Scheduler::Cfs(_) => false,
            Scheduler::Credit(s) => {
                s.smp_boost(now, t);
                true
            }
        }
    }

    /// `yield_to` from the thread running on `cpu` to thread `t` (KVM's `kvm_vcpu_yield_to`,
    /// [`Sched::yield_to`]): true when it yielded. Xen's credit scheduler has no directed
    /// yield and the scenario refuses KVM's PV sched yield beside it, so it never yields.
    pub fn yield_to(&mut self, now: Time, cpu: u32, t: u32) -> bool {
        match self {
            Scheduler::Cfs(s) => s.yield_to(now, cpu, t),
            Scheduler::Credit(_) => false,
        }
    }

    /// Thread `t` was descheduled while runnable and has not run since (KVM's
    /// `vcpu->preempted`, [`Sched::preempted`]); under Xen credit, whether it waits in a
    /// runqueue.
    pub fn preempted(&self, t: u32) -> bool {
        match self {
            Scheduler::Cfs(s) => s.preempted(t),
            Scheduler::Credit(s) => s.thread_state(t) == State::Queued,
        }
    }

    /// Thread `t`'s credit priority, for a router that reads it (hBalance's "unused quota");
    /// None under CFS, which has none.
    pub fn credit_priority(&self, t: u32) -> Option<eventpath_policy::hbalance::CreditPriority> {
        match self {
            Scheduler::Cfs(_) => None,
            Scheduler::Credit(s) => Some(s.credit_priority(t)),
        }
    }

    /// `SMP_BOOST`s carried out in the window (0 under CFS, which carries none out).
    pub fn smp_boosts(&self) -> u64 {
        match self {
            Scheduler::Cfs(_) => 0,
            Scheduler::Credit(s) => s.smp_boosts(),
        }
    }

    /// A timer the scheduler asked for (`Action::Timer`) fires on `cpu`.
    pub fn timer(&mut self, now: Time, cpu: u32) {
        match self {
            Scheduler::Cfs(_) => {} // CFS runs from the host tick and asks for no timer
            Scheduler::Credit(s) => s.timer(now, cpu),
        }
    }
}

/// The seam's reads of CFS's state.
impl Sched {
    fn current(&self, cpu: u32) -> Option<u32> {
        self.rqs[cpu as usize].curr
    }
    fn nr_running(&self, cpu: u32) -> usize {
        self.rqs[cpu as usize].nr_running()
    }
    fn thread_cpu(&self, t: u32) -> u32 {
        self.threads[t as usize].cpu
    }
    fn thread_state(&self, t: u32) -> State {
        self.threads[t as usize].state
    }
    fn thread_migrations(&self, t: u32) -> u64 {
        self.threads[t as usize].migrations
    }
    fn stats(&self) -> SchedStats {
        SchedStats {
            switches: self.switches,
            migrations: Migration::ALL.iter().map(|&m| (m, self.migrations[m as usize])).collect(),
            wake_affine_hits: self.wake_affine_hits,
            cstate_wakeups: self.cstate_wakeups.to_vec(),
        }
    }
}
