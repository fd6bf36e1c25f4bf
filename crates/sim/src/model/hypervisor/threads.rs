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

use crate::engine::Schedule;
use crate::model::hypervisor::event::Event;
use crate::model::hypervisor::sched::{Action, State};
use crate::model::hypervisor::vcpu::Mode;
use crate::model::hypervisor::ctx::{HvOwn, HvRead, Machine, Trace, OWN};
use crate::model::hypervisor::vcpu::AfterExit;
use crate::model::hypervisor::ops::{Kind, Threads, Up, Vcpus};
use crate::model::hypervisor::host_irq::Softirqs;
use crate::engine::{round_ns, Fired, Time};
use crate::metrics::ExitReason;
use eventpath_policy::routing::RunState;



impl<M: Machine> Threads for M {
    fn kind(&self, tid: u32) -> Kind {
        let nv = self.vcpu_count();
        let nd = self.setup().io_threads;
        if tid < nv {
            Kind::Vcpu(tid)
        } else if tid < nv + nd {
            Kind::Io(tid - nv)
        } else if tid < kthread_tid(self, 0) {
            Kind::Hog(tid - nv - nd)
        } else {
            Kind::Kthread(tid - kthread_tid(self, 0))
        }
    }

    fn cpu_of(&self, tid: u32) -> u32 {
        self.sched_ref().thread_cpu(tid)
    }

    fn wake_thread(&mut self, now: Time, tid: u32) {
        let waker = self.waker();
        self.sched().wake(now, tid, waker);
        self.drain(now);
    }

    fn smp_boost(&mut self, now: Time, v: u32) {
        // A vCPU's thread id is its index.
        if self.sched().smp_boost(now, v) {
            self.drain(now);
        }
    }

    fn yield_to(&mut self, now: Time, v: u32, to: u32) {
        // A vCPU's thread id is its index; `v` runs (it is in its hypercall exit).
        let cpu = self.cpu_of(v);
        if self.sched().yield_to(now, cpu, to) {
            self.drain(now);
        }
    }

    fn leave_cpu(&mut self, now: Time, cpu: u32, sleep: bool) {
        if let Some(Kind::Vcpu(v)) = self.sched_ref().current(cpu).map(|t| self.kind(t)) {
            self.vcpu(v).busy.set(now, false);
            self.on_run_state(now, v, if sleep { RunState::Blocked } else { RunState::Runnable });
        }
        self.sched().deschedule(now, cpu, sleep);
        self.trace(now, Trace::Cpu { cpu, t: None });
        self.drain(now);
        if self.sched_ref().current(cpu).is_none() {
            self.set_pcpu_busy(now, cpu, false);
        }
    }

    fn should_yield(&self, cpu: u32) -> bool {
        self.sched_ref().need_resched(cpu)
    }

    fn drain(&mut self, now: Time) {
        while let Some(a) = self.sched().next_action() {
            match a {
                Action::SwitchIn { cpu, delay, from_idle, .. } => {
                    if !from_idle {
                        self.set_pcpu_busy(now, cpu, true);
                    } // else busy from its SchedIn (sched_in)
                    let p = self.parts(OWN);
                    if let Some(t) = p.switch_in[cpu as usize].arm(now + delay) {
                        p.q.schedule(t, Event::SchedIn { cpu });
                    }
                }
                Action::Resched { cpu } => self.poke(now, cpu),
                Action::Timer { cpu, at } => self.parts(OWN).q.schedule(at, Event::SchedTimer { cpu }),
            }
        }
    }

    fn poke(&mut self, now: Time, cpu: u32) {
        if !self.sched_ref().need_resched(cpu) || self.parts(OWN).switch_in[cpu as usize].armed() {
            return;
        }
        let Some(t) = self.sched_ref().current(cpu) else { return };
        match self.kind(t) {
            Kind::Hog(_) => self.leave_cpu(now, cpu, false),
            Kind::Vcpu(v) => match self.vcpu_ref(v).mode {
                // The reschedule IPI / tick interrupt forces the vCPU out of guest mode (on bare
                // metal it only interrupts the task, which then yields).
                Mode::Guest { .. } if !self.vcpu_ref(v).delivery.virtualized() => self.paused(now, v, 0),
                Mode::Guest { .. } => self.exit(now, v, ExitReason::ExternalInterrupt, AfterExit::Resume),
                // A halt-polling thread stops polling when another thread wants the pCPU.
                Mode::Polling => self.block(now, v),
                _ => {}
            },
            Kind::Io(_) => {} // yields after the packet it is copying
            Kind::Kthread(_) => {} // a kernel work item runs to its end (no preemption point)
        }
    }

    fn sched_in(&mut self, now: Time, cpu: u32) -> Up {
        match self.parts(OWN).switch_in[cpu as usize].fired(now) {
            Fired::Expired => {}
            Fired::Reschedule(t) => {
                self.q().schedule(t, Event::SchedIn { cpu });
                return Up::None;
            }
            Fired::Idle => return Up::None,
        }
        self.set_pcpu_busy(now, cpu, true);
        let t = self.sched_ref().current(cpu).expect("SchedIn on an idle pCPU");
        debug_assert_eq!(self.sched_ref().thread_state(t), State::Running);
        self.trace(now, Trace::Cpu { cpu, t: Some(t) });
        // CPU for the wake-up from the idle state its pCPU left (host.cstates wake_cpu_ns):
        // a back end owes it before its first item, a vCPU thread before its VM entry; a CPU
        // hog's run is all work anyway.
        let wake_cpu = self.sched().take_wake_cpu(cpu);
        match self.kind(t) {
            Kind::Vcpu(v) => {
                self.vcpu(v).busy.set(now, true);
                self.on_run_state(now, v, RunState::Running);
                let halt_wakeup = round_ns(self.profile().host.halt_wakeup_ns.value) + wake_cpu;
                let p = self.parts(OWN);
                let vc = &mut p.vcpus[v as usize];
                if std::mem::take(&mut vc.from_halt) && halt_wakeup > 0 && vc.mode == Mode::Waking {
                    // Back from kvm_vcpu_block to VM entry: host time of the vCPU thread, as
                    // the rest of its HLT exit (not counted as another exit).
                    vc.mode = Mode::Exit { then: AfterExit::Resume };
                    p.q.schedule(now + halt_wakeup, Event::ExitDone { vcpu: v });
                    self.poke(now, cpu);
                    return Up::None;
                }
                match self.vcpu_ref(v).mode {
                    Mode::Exit { .. } => {
                        if let Up::KickTx { v, .. } = self.exit_done(now, v) {
                            return Up::KickTx { v, poke: Some(cpu) };
                        }
                    }
                    _ => self.enter(now, v),
                }
            }
            Kind::Io(thread) => return Up::IoRun { thread, wake_cpu, cpu },
            Kind::Hog(_) => {}
            Kind::Kthread(k) => {
                let run = self.setup().housekeeping.kthread_ns + wake_cpu;
                self.q().schedule(now + run, Event::KthreadDone { cpu: k });
                return Up::None;
            }
        }
        self.poke(now, cpu);
        Up::None
    }

    fn host_tick(&mut self, now: Time, cpu: u32) -> Up {
        let period = self.setup().host_tick_ns;
        self.q().schedule(now + period, Event::HostTick { cpu });
        // The tick's own work (`housekeeping.tick_ns`) on a pCPU that runs a thread: a vCPU in
        // guest mode takes it as an external-interrupt exit (an idle pCPU's tick is stopped,
        // NO_HZ_IDLE).
        // DID moves the host's timers off its vCPUs' cores (`host_tick_on_vcpu_core`).
        let ns = self.setup().housekeeping.tick_ns;
        let ticked = match self.sched_ref().current(cpu).map(|t| self.kind(t)) {
            None => false,
            Some(Kind::Vcpu(v)) => self.vcpu_ref(v).delivery.host_tick_on_vcpu_core(),
            Some(_) => true,
        };
        let held = if ticked { self.host_irq_work(now, cpu, ns) } else { None };
        self.sched().tick(now, cpu);
        self.drain(now);
        self.poke(now, cpu);
        held.map_or(Up::None, |(thread, held)| Up::IoHeld { thread, held })
    }

    fn kthread_wake(&mut self, now: Time, cpu: u32) {
        let hk = self.setup().housekeeping;
        self.q().schedule(now + hk.kthread_interval_ns, Event::KthreadWake { cpu });
        // DID moves the hypervisor's timers off its vCPUs' cores (DID §4.4): this one fires on
        // the designated core, and its per-CPU work for a DID core is not modelled.
        if let Some(Kind::Vcpu(v)) = self.sched_ref().current(cpu).map(|t| self.kind(t)) {
            if !self.vcpu_ref(v).delivery.host_tick_on_vcpu_core() {
                return;
            }
        }
        let tid = kthread_tid(self, cpu);
        self.sched().wake_by_timer(now, tid);
        self.drain(now);
    }

    fn kthread_done(&mut self, now: Time, cpu: u32) {
        // The work item done, the kernel thread sleeps until its timer's next expiry.
        // (Pinned to `cpu`, and never preempted inside its work: it is `cpu`'s current thread.)
        debug_assert_eq!(self.sched_ref().current(cpu), Some(kthread_tid(self, cpu)));
        self.leave_cpu(now, cpu, true);
    }

    fn start_thread(&mut self, now: Time, tid: u32) {
        self.sched().start(now, tid);
        self.drain(now);
    }

    fn sched_timer(&mut self, now: Time, cpu: u32) {
        self.sched().timer(now, cpu);
        self.drain(now);
        self.poke(now, cpu);
    }
}

/// The thread id of pCPU `cpu`'s kernel thread: after the vCPUs', the back ends' and the hogs'.
fn kthread_tid<M: Machine>(m: &M, cpu: u32) -> u32 {
    let s = m.setup();
    m.vcpu_count() + s.io_threads + s.hogs + cpu
}
