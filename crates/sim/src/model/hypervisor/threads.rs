//! Host threads on the host scheduler (`sched/`): the glue that carries its decisions out.
//!
//! Thread ids: vCPU threads first (id = vCPU index), then the back-end threads (`io/`: one
//! vhost worker per device, or the shared ES2/ELVIS/PMD threads), then the CPU hogs. A thread leaves its pCPU only at a preemption point:
//!
//! * a vCPU thread in guest mode is forced out by the reschedule IPI or the tick: an
//!   `external_interrupt` exit; KVM's `vcpu_run` loop checks `need_resched()` before every VM
//!   entry (`kvm_vcpu_check_block`/`cond_resched`), so a vCPU yields at the end of an exit and
//!   waits *in exit mode* — an interrupt raised meanwhile is injected at its next entry;
//! * a back-end thread yields between packets (`vhost_worker` checks `need_resched()`; the copy
//!   helpers' `might_fault` is a voluntary preemption point under `CONFIG_PREEMPT_VOLUNTARY`);
//! * a CPU hog (user-space loop) is preempted at once.

use crate::model::hypervisor::sched::{Action, State};
use crate::model::hypervisor::vcpu::Mode;
use crate::model::{Ev, Host};
use crate::engine::{round_ns, EventQueue, Time};
use crate::metrics::ExitReason;
use eventpath_policy::routing::RunState;

/// What a scheduler thread is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// vCPU thread of vCPU `0`.
    Vcpu(u32),
    /// Back-end thread `0` (a vhost worker, an ES2 joint thread, an ELVIS I/O core, a PMD;
    /// `io/`).
    Io(u32),
    /// CPU hog number `0`.
    Hog(u32),
}

impl Host {
    /// The kind of thread `tid`.
    pub(crate) fn kind(&self, tid: u32) -> Kind {
        let nv = self.vcpus.len() as u32;
        let nd = self.io.threads.len() as u32;
        if tid < nv {
            Kind::Vcpu(tid)
        } else if tid < nv + nd {
            Kind::Io(tid - nv)
        } else {
            Kind::Hog(tid - nv - nd)
        }
    }

    /// The pCPU of thread `tid` (current, queued on, or last run on).
    pub(crate) fn cpu_of(&self, tid: u32) -> u32 {
        self.sched.thread_cpu(tid)
    }

    /// Wake sleeping thread `tid`; the waker is the pCPU running the current event's thread.
    pub(crate) fn wake_thread(&mut self, now: Time, tid: u32, q: &mut EventQueue<Ev>) {
        self.sched.wake(now, tid, self.waker);
        self.drain(now, q);
    }

    /// Thread on `cpu` leaves it (to sleep, or back to its runqueue at a preemption point).
    pub(crate) fn leave_cpu(&mut self, now: Time, cpu: u32, sleep: bool, q: &mut EventQueue<Ev>) {
        if let Some(Kind::Vcpu(v)) = self.sched.current(cpu).map(|t| self.kind(t)) {
            self.vcpus[v as usize].busy.set(now, false);
            self.vcpu_run_state(v, if sleep { RunState::Blocked } else { RunState::Runnable });
        }
        self.sched.deschedule(now, cpu, sleep);
        self.tr_cpu(now, cpu, None);
        self.drain(now, q);
        if self.sched.current(cpu).is_none() {
            self.set_pcpu_busy(now, cpu, false);
        }
    }

    /// Is a preemption of the thread on `cpu` pending?
    pub(crate) fn should_yield(&self, cpu: u32) -> bool {
        self.sched.need_resched(cpu)
    }

    /// Carry out the scheduler's decisions, in order.
    pub(crate) fn drain(&mut self, now: Time, q: &mut EventQueue<Ev>) {
        while let Some(a) = self.sched.next_action() {
            match a {
                Action::SwitchIn { cpu, delay, from_idle, seq, .. } => {
                    if !from_idle {
                        self.set_pcpu_busy(now, cpu, true);
                    } // else busy from its SchedIn (sched_in)
                    self.switching[cpu as usize] = true;
                    q.at(now + delay, Ev::SchedIn { cpu, seq });
                }
                Action::Resched { cpu } => self.poke(now, cpu, q),
            }
        }
    }

    /// Bring the thread on `cpu` to its preemption point if a reschedule is pending.
    fn poke(&mut self, now: Time, cpu: u32, q: &mut EventQueue<Ev>) {
        if !self.sched.need_resched(cpu) || self.switching[cpu as usize] {
            return;
        }
        let Some(t) = self.sched.current(cpu) else { return };
        match self.kind(t) {
            Kind::Hog(_) => self.leave_cpu(now, cpu, false, q),
            Kind::Vcpu(v) => match self.vcpus[v as usize].mode {
                // The reschedule IPI / tick interrupt forces the vCPU out of guest mode.
                Mode::Guest { .. } => self.exit(now, v, ExitReason::ExternalInterrupt, crate::model::hypervisor::vcpu::AfterExit::Resume, q),
                // A halt-polling thread stops polling when another thread wants the pCPU.
                Mode::Polling => self.block(now, v, q),
                _ => {}
            },
            Kind::Io(_) => {} // yields after the packet it is copying
        }
    }

    /// The switched-in thread starts running on `cpu`.
    pub(crate) fn sched_in(&mut self, now: Time, cpu: u32, seq: u32, q: &mut EventQueue<Ev>) {
        if self.sched.switch_seq(cpu) != seq {
            return;
        }
        self.switching[cpu as usize] = false;
        self.set_pcpu_busy(now, cpu, true);
        let t = self.sched.current(cpu).expect("SchedIn on an idle pCPU");
        debug_assert_eq!(self.sched.thread_state(t), State::Running);
        self.tr_cpu(now, cpu, Some(t));
        // CPU for the wake-up from the idle state its pCPU left (host.cstates wake_cpu_ns):
        // a back end owes it before its first item, a vCPU thread before its VM entry; a CPU
        // hog's run is all work anyway.
        let wake_cpu = self.sched.take_wake_cpu(cpu);
        match self.kind(t) {
            Kind::Vcpu(v) => {
                self.vcpus[v as usize].busy.set(now, true);
                self.vcpu_run_state(v, RunState::Running);
                let halt_wakeup = round_ns(self.profile.host.halt_wakeup_ns.value) + wake_cpu;
                let vc = &mut self.vcpus[v as usize];
                if std::mem::take(&mut vc.from_halt) && halt_wakeup > 0 && vc.mode == Mode::Waking {
                    // Back from kvm_vcpu_block to VM entry: host time of the vCPU thread, as
                    // the rest of its HLT exit (not counted as another exit).
                    vc.mode = Mode::Exit { then: crate::model::hypervisor::vcpu::AfterExit::Resume };
                    q.at(now + halt_wakeup, Ev::ExitDone { vcpu: v });
                    return self.poke(now, cpu, q);
                }
                match self.vcpus[v as usize].mode {
                    Mode::Exit { .. } => self.exit_done(now, v, q),
                    _ => self.enter(now, v, q),
                }
            }
            Kind::Io(t) => self.io_run(now, t, wake_cpu, q),
            Kind::Hog(_) => {}
        }
        self.poke(now, cpu, q);
    }

    /// The host's periodic tick on `cpu` (CONFIG_HZ): slice accounting and load balancing.
    pub(crate) fn host_tick(&mut self, now: Time, cpu: u32, q: &mut EventQueue<Ev>) {
        q.at(now + self.host_tick_ns, Ev::HostTick { cpu });
        if cpu == 0 {
            self.watchdog_tick(now);
        }
        self.sched.tick(now, cpu);
        self.drain(now, q);
        self.poke(now, cpu, q);
    }

    /// The pCPU whose thread handles event `ev` (the waker of anything it wakes).
    pub(crate) fn event_cpu(&self, ev: &Ev) -> Option<u32> {
        match *ev {
            Ev::GuestDone { vcpu, .. }
            | Ev::ExitDone { vcpu }
            | Ev::Tick { vcpu }
            | Ev::TimerFire { vcpu }
            | Ev::Ioeventfd { vcpu, .. } => {
                Some(self.cpu_of(vcpu))
            }
            Ev::IoStep { thread } | Ev::IoPoll { thread } => Some(self.cpu_of(self.io_thread_tid(thread))),
            Ev::SchedIn { cpu, .. } | Ev::HostTick { cpu } => Some(cpu),
            _ => None,
        }
    }

    /// vCPU `v`'s thread changed run state: tell its VM's interrupt routing.
    pub(crate) fn vcpu_run_state(&mut self, v: u32, state: RunState) {
        let vm = self.vcpus[v as usize].vm as usize;
        self.vms[vm].routing.on_run_state(v, state);
    }
}
