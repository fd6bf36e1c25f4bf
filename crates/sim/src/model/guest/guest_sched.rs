//! The guest kernel's scheduler for a VM's application threads (DESIGN §3.5; issue 48 item 3):
//! the host's CFS (`hypervisor/sched`, a model of Linux 4.4's `kernel/sched/fair.c`)
//! instantiated once per VM over its vCPUs. One implementation serves both kernels, so the
//! guest has what the host has: vruntime and slices (`sched_slice`, `check_preempt_tick` at the
//! guest's tick), wake-up preemption (`check_preempt_wakeup`), sleeper placement
//! (`place_entity`), wake-up placement (`select_task_rq_fair`: `wake_wide`, `wake_affine`,
//! `select_idle_sibling`), and idle, new-idle, nohz and periodic balancing with `task_hot` and
//! `can_migrate_task`; affinity masks are honoured.
//!
//! What the guest's instance takes from the host's model, and what it does not:
//! * its CFS tunables are the profile's `[sched]` (Linux's defaults, identical from 3.10 to 4.4:
//!   6 ms latency, 0.75 ms minimum and 1 ms wake-up granularity, 0.5 ms migration cost), scaled
//!   by the VM's vCPUs as `update_sysctl` does; its tick is the guest's `guest.tick_hz`;
//! * a switch between two threads costs `sched.context_switch_ns` of guest time, a thread's
//!   first run after a migration also `sched.migration_ns` (its cache);
//! * an idle vCPU's wake-up is the hypervisor's to model (halt, IPI, VM entry), so the guest's
//!   instance has no idle-state exit costs of its own;
//! * a vCPU's run-queue clock stops while the vCPU waits for a pCPU (its steal time, which the
//!   workload brings up to date before each decision: CONFIG_PARAVIRT_TIME_ACCOUNTING, declared);
//! * the VM's vCPUs share one last-level cache (declared: a topology of one socket; QEMU 2.0's
//!   `-smp N` gives N sockets, whose only difference here is `select_idle_sibling`'s search).
//!
//! ES2 §6.3's "lowest-priority CPU burn scripts" (`guest_cpu_burn`) are CFS threads too: one
//! nice-19 busy loop pinned to each vCPU. They keep every vCPU busy for `select_idle_sibling`
//! and the balancers, which is why a woken thread stays where it last ran on such a guest, and
//! a woken thread preempts them at once (their vruntime runs 68 times faster). While a burner
//! is a vCPU's current thread, the vCPU runs the hypervisor layer's burn (`vcpu.rs`).
//!
//! The adapter: the workload asks at each step boundary of a vCPU which thread runs there
//! ([`GuestSched::pick`]); it reports a thread woken by an event ([`GuestSched::wake`]). The
//! scheduler's decisions that concern another vCPU (a wake-up onto it, a preemption of its
//! thread, a balancer's pull onto an idle one) come back as vCPUs to send a reschedule IPI to,
//! as Linux's `resched_curr` sends one.

use crate::engine::{Rng, Time, round_ns};
use crate::model::hypervisor::sched::{Action, CStateTable, CpuMask, Migration, Params, Sched, State};
use crate::profile::Profile;

/// What runs beside the application's threads on every vCPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Beside {
    /// Nothing: a vCPU without a runnable thread idles.
    Nothing,
    /// ES2's lowest-priority burn scripts (`guest_cpu_burn`): nice-19 CFS threads, one pinned
    /// to each vCPU.
    Burn,
    /// lookbusy's spinners (`[vm.lookbusy]`), which `lookbusy.rs` shares each vCPU with,
    /// outside this instance: the application's threads stay on the vCPUs they start on, so
    /// that the two never disagree on where a thread is.
    Lookbusy,
}

/// Where a VM's application threads may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    /// What runs beside them.
    pub beside: Beside,
    /// The VM has one network device, whose application the model may run on any vCPU. (With
    /// several, each device's application runs on the vCPUs it is homed on, and its threads
    /// stay on the vCPUs they start on; so do a one-thread application's, which the model runs
    /// on the VM's first vCPU.)
    pub one_device: bool,
}

/// The nice value of a lowest-priority burn script (`nice -n 19`).
const BURNER_NICE: i32 = 19;

/// The guest scheduler's counts over a window (`guest_sched.rs`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct GuestThreads {
    /// Application threads.
    pub threads: u32,
    /// Switches between two threads.
    pub switches: u64,
    /// Migrations by cause (`Migration::ALL` order).
    pub migrations: [u64; Migration::COUNT],
}

/// The guest scheduler of one VM.
#[derive(Debug)]
pub(crate) struct GuestSched {
    cfs: Sched,
    /// Application threads: ids `0..apps` in `cfs`; the burners, if any, follow.
    apps: u32,
    /// The guest's tick period and each vCPU's next tick.
    tick: Time,
    next_tick: Vec<Time>,
    /// Guest time each vCPU owes for the switch-in of its current thread (until it runs).
    owed: Vec<Time>,
    /// vCPUs a decision left needing a reschedule IPI, not yet taken.
    kicks: Vec<u32>,
    /// [`Self::pick`] wakes threads that gained work without a [`Self::wake`].
    lazy: bool,
    /// The scheduler's switch and migration counts when the window began.
    base: (u64, [u64; Migration::COUNT]),
    /// One thread alone (no burner, kept on its vCPU): it runs whenever it has work, and no
    /// decision is asked of `cfs` (the hot path of one-thread applications).
    alone: bool,
}

impl GuestSched {
    /// The scheduler of a VM of `vcpus` vCPUs running `threads` application threads placed as
    /// `at` says: allowed on every vCPU, or kept on the vCPU each starts on (thread t on vCPU
    /// t % vcpus) where the model runs the application only there or lookbusy shares the vCPUs.
    pub fn new(threads: u32, vcpus: u32, at: Placement, p: &Profile) -> Self {
        let burn = at.beside == Beside::Burn;
        let free = at.one_device && threads > 1 && at.beside != Beside::Lookbusy;
        if free {
            Self::with_affinity(threads, vcpus, burn, p, |_| CpuMask::first(vcpus))
        } else {
            let mut g = Self::with_affinity(threads, vcpus, burn, p, |t| CpuMask::bit(t % vcpus));
            g.alone = threads == 1 && !burn;
            g
        }
    }

    /// As [`Self::new`], thread `t` allowed on the vCPUs of `allowed(t)`, with one pinned
    /// burner per vCPU if `burn`.
    pub fn with_affinity(threads: u32, vcpus: u32, burn: bool, p: &Profile, allowed: impl Fn(u32) -> CpuMask) -> Self {
        let mut params = Params::from_profile(p, vcpus);
        params.idle_wakeup_ns = 0.0;
        params.timer_wakeup_ns = 0.0;
        params.idle_wakeup_spread_ns = 0.0;
        params.cstates = CStateTable::new([]);
        params.cores_per_llc = vcpus;
        let mut cfs = Sched::new(params, vcpus);
        // No draw is ever made (no idle-exit spread): one constant stream.
        let rng = || Rng::from_seed(0);
        // Fork balancing (`find_idlest_cpu`: fewest threads) homes thread t on vCPU t % vcpus.
        for t in 0..threads {
            let id = cfs.add(0, allowed(t), rng());
            debug_assert_eq!(id, t);
        }
        if burn {
            for v in 0..vcpus {
                cfs.add(BURNER_NICE, CpuMask::bit(v), rng());
            }
        }
        let mut g = GuestSched {
            cfs,
            apps: threads,
            tick: round_ns(1e9 / p.guest.tick_hz.value),
            next_tick: vec![0; vcpus as usize],
            owed: vec![0; vcpus as usize],
            kicks: Vec::with_capacity(vcpus as usize),
            lazy: false,
            base: (0, [0; Migration::COUNT]),
            alone: false,
        };
        if burn {
            // Each burner has been running since boot.
            for v in 0..vcpus {
                g.cfs.start(0, threads + v);
            }
            g.drain(None);
            g.kicks.clear();
        }
        g
    }

    /// Let [`Self::pick`] wake, from no vCPU, the threads that gained work without a
    /// [`Self::wake`] (a workload whose threads' work appears in more places than one; each
    /// pick then looks at every thread).
    pub fn lazy_wakes(mut self) -> Self {
        self.lazy = true;
        self
    }

    fn burner(&self, t: u32) -> bool {
        t >= self.apps
    }

    /// Carry out the scheduler's pending decisions: a switch-in's cost is owed by its vCPU; a
    /// decision for another vCPU than `here` asks for a reschedule IPI there.
    fn drain(&mut self, here: Option<u32>) {
        while let Some(a) = self.cfs.actions.pop_front() {
            let cpu = match a {
                Action::SwitchIn { cpu, delay, .. } => {
                    self.owed[cpu as usize] = delay;
                    cpu
                }
                Action::Resched { cpu } => cpu,
                Action::Timer { .. } => unreachable!("CFS asks for no timers"),
            };
            if here != Some(cpu) && !self.kicks.contains(&cpu) {
                self.kicks.push(cpu);
            }
        }
    }

    /// Application thread `t` got work at `now`, from local vCPU `waker` (the one whose
    /// interrupt or thread gave it; None: no vCPU's); `sync`: a `WF_SYNC` wake-up (data for a
    /// socket's reader, `sock_def_readable`). Returns a vCPU other than the waker's that needs
    /// a reschedule IPI for it (a halted or busy vCPU it was placed on). A thread not asleep
    /// finds its work at its next pick.
    pub fn wake(&mut self, now: Time, t: u32, waker: Option<u32>, sync: bool) -> Option<u32> {
        if self.alone || self.cfs.threads[t as usize].state != State::Sleeping {
            return None;
        }
        if sync {
            self.cfs.wake_sync(now, t, waker);
        } else {
            self.cfs.wake(now, t, waker);
        }
        self.drain(waker);
        self.kicks.pop()
    }

    /// Do its decisions depend on the vCPUs' clocks? Not with one thread alone (no burner): it
    /// runs whenever it has work, so the workload may skip [`Self::set_steal`]. (Several
    /// threads kept on their vCPUs, or one beside a burner, are the scheduler's.)
    pub fn clocked(&self) -> bool {
        !self.alone
    }

    /// Local vCPU `v` has had `steal` ns stolen so far (its steal-time record): the guest's
    /// run-queue clock of `v` stops meanwhile (`CONFIG_PARAVIRT_TIME_ACCOUNTING`).
    pub fn set_steal(&mut self, v: u32, steal: Time) {
        self.cfs.set_steal(v, steal);
    }

    /// A vCPU a past decision left needing a reschedule IPI (taken once).
    pub fn take_kick(&mut self) -> Option<u32> {
        self.kicks.pop()
    }

    /// The thread local vCPU `v` runs at `now` among those `runnable` says have work; None: the
    /// vCPU idles, or runs its burner. The current thread blocks if it has no work, or yields
    /// if it was preempted; the vCPU's tick runs if due; with [`Self::lazy_wakes`], threads
    /// that gained work are woken first. The switch-in's cost is [`Self::take_switch`]'s.
    pub fn pick(&mut self, now: Time, v: u32, runnable: impl Fn(u32) -> bool) -> Option<u32> {
        if self.alone {
            return (v == 0 && runnable(0)).then_some(0);
        }
        if self.lazy {
            for t in 0..self.apps {
                if self.cfs.threads[t as usize].state == State::Sleeping && runnable(t) {
                    self.cfs.wake(now, t, None);
                }
            }
            self.drain(Some(v));
        }
        if now >= self.next_tick[v as usize] {
            self.next_tick[v as usize] = (now / self.tick + 1) * self.tick;
            self.cfs.tick(now, v);
            self.drain(Some(v));
        }
        loop {
            let t = self.cfs.rqs[v as usize].curr?;
            let blocked = !self.burner(t) && !runnable(t);
            if blocked || self.cfs.need_resched(v) {
                self.cfs.deschedule(now, v, blocked);
                self.drain(Some(v));
                continue;
            }
            return (!self.burner(t)).then_some(t);
        }
    }

    /// The guest time local vCPU `v` owes for switching in the thread [`Self::pick`] gave it
    /// (a context switch, plus the cache after a migration; 0 when it went on running), taken once.
    pub fn take_switch(&mut self, v: u32) -> Time {
        std::mem::take(&mut self.owed[v as usize])
    }

    /// The local vCPU thread `t` is on, queued on or last ran on (`task_cpu`).
    pub fn cpu_of(&self, t: u32) -> u32 {
        self.cfs.threads[t as usize].cpu
    }

    /// Is thread `t` asleep (no work when the scheduler last looked)?
    #[cfg(test)]
    pub fn sleeping(&self, t: u32) -> bool {
        self.cfs.threads[t as usize].state == State::Sleeping
    }

    /// Migrations of the application threads since the window began, by cause (the order
    /// of [`Migration::ALL`]; burners are pinned).
    pub fn migrations(&self) -> [u64; Migration::COUNT] {
        std::array::from_fn(|c| self.cfs.migrations[c] - self.base.1[c])
    }

    /// Switches between two threads since the window began.
    pub fn switches(&self) -> u64 {
        self.cfs.switches - self.base.0
    }

    /// Start a new measurement window.
    pub fn reset_metrics(&mut self) {
        self.base = (self.cfs.switches, self.cfs.migrations);
    }

    /// The window's counts for the summary.
    pub fn counts(&self) -> GuestThreads {
        GuestThreads { threads: self.apps, switches: self.switches(), migrations: self.migrations() }
    }
}

#[cfg(test)]
mod tests;
