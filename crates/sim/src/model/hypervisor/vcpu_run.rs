//! The vCPU's run loop (KVM's `vcpu_run`, ES2 §2.2, DID §2): a vCPU runs one guest task at a
//! time; an exit or an interrupt handler saves the running task, which resumes later; at VM
//! entry a handler in progress finishes, a deliverable interrupt is injected, pending softirq
//! work runs, saved work resumes, or the workload chooses; with nothing to run it idles and
//! halts (`halt.rs`, `guest_poll.rs`). The vCPU's state is `vcpu.rs`.

use crate::engine::Schedule;
use crate::model::hypervisor::event::Event;
use crate::model::hypervisor::guest_poll::IdleStep;
use crate::model::hypervisor::halt::HaltStart;
use crate::model::hypervisor::ctx::{HvOwn, HvRead, Machine, Trace, OWN};
use crate::model::hypervisor::ops::{Irqs, Threads, Up, Vcpus};
use crate::model::hypervisor::vcpu::{AfterExit, IdleThread, Mode, Step, Task, XenIo, BURN_CHUNK_NS};
use crate::engine::{Fired, Time, round_ns};
use crate::profile::Profile;
use crate::metrics::ExitReason;
use crate::config::InterruptDelivery;


impl<M: Machine> Vcpus for M {
    fn run_task(&mut self, now: Time, v: u32, task: Task, cost: Time) {
        let p = self.parts(OWN);
        let vc = &mut p.vcpus[v as usize];
        if let (Task::App(Step { softirq: false, .. }) | Task::Backlog, Some(gp)) = (task, vc.guest_poll.as_mut()) {
            // A thread runs: the guest's poll, if it polled, ended on its wake-up.
            gp.woken();
        }
        // The first guest work after an exit runs slower: it pays the indirect cost.
        let pollution = std::mem::take(&mut vc.pollution_ns);
        let cost = cost + pollution;
        vc.task_pollution = (pollution, now, cost);
        vc.charge(task, cost, true);
        vc.mode = Mode::Guest { task, end: now + cost };
        vc.guest_time.set(now, true);
        if let Some(t) = vc.done.arm(now + cost) {
            p.q.schedule(t, Event::GuestDone { vcpu: v });
        }
        self.trace(now, Trace::GuestStart { v, task });
    }

    fn run_step(&mut self, now: Time, v: u32, s: Step, cost: Time) {
        self.run_task(now, v, Task::App(s), cost)
    }

    fn exit(&mut self, now: Time, v: u32, reason: ExitReason, then: AfterExit) {
        self.exit_for(now, v, reason, then, 0)
    }

    fn exit_for(&mut self, now: Time, v: u32, reason: ExitReason, then: AfterExit, extra: Time) {
        let cost = match (self.vcpu_ref(v).xen, self.profile().xen.as_ref()) {
            (XenIo::Pv, Some(x)) => xen_pv_cost(x, reason).unwrap_or_else(|| exit_cost(self.profile(), reason)),
            _ => exit_cost(self.profile(), reason),
        } + extra;
        let indirect = round_ns(self.profile().exit.indirect_per_direct.value * cost as f64);
        if let Mode::Guest { task, .. } = self.vcpu_ref(v).mode {
            self.trace(now, Trace::GuestEnd { v, task });
        }
        self.trace(now, Trace::Exit { v, reason, cost });
        let p = self.parts(OWN);
        let vc = &mut p.vcpus[v as usize];
        vc.pollution_ns = indirect;
        vc.save_running(now);
        vc.guest_time.set(now, false);
        vc.mode = Mode::Exit { then };
        vc.exits.record(reason, cost);
        vc.exit_until = now + cost;
        p.q.schedule(now + cost, Event::ExitDone { vcpu: v });
    }

    fn paused(&mut self, now: Time, v: u32, ns: Time) {
        if let Mode::Guest { task, .. } = self.vcpu_ref(v).mode {
            self.trace(now, Trace::GuestEnd { v, task });
        }
        let p = self.parts(OWN);
        let vc = &mut p.vcpus[v as usize];
        vc.save_running(now);
        vc.guest_time.set(now, false);
        vc.mode = Mode::Exit { then: AfterExit::Resume };
        vc.exit_until = now + ns;
        p.q.schedule(now + ns, Event::ExitDone { vcpu: v });
    }

    fn exit_done(&mut self, now: Time, v: u32) -> Up {
        let Mode::Exit { then } = self.vcpu_ref(v).mode else { unreachable!("ExitDone outside an exit") };
        let pending = self.vcpu_ref(v).has_deliverable();
        match then {
            // An interrupt that arrived during the exit cancels the idle entry.
            AfterExit::Hlt if !pending => self.exit(now, v, ExitReason::Hlt, AfterExit::Block),
            // kvm_vcpu_halt: poll for an interrupt, or block until one wakes the thread.
            AfterExit::Block if !pending => self.halt(now, v),
            AfterExit::Rearm => self.exit(now, v, ExitReason::Timer, AfterExit::Resume),
            AfterExit::KickTx => return Up::KickTx { v, poke: None },
            _ => {
                // vcpu_run checks need_resched() before VM entry: a preempted vCPU waits here,
                // in exit mode, and this exit is finished again when it runs.
                let cpu = self.cpu_of(v);
                if self.should_yield(cpu) {
                    self.leave_cpu(now, cpu, false);
                    return Up::None;
                }
                self.enter(now, v)
            }
        }
        Up::None
    }

    fn enter(&mut self, now: Time, v: u32) {
        let vc = self.vcpu(v);
        vc.mode = Mode::Entering;
        if let Some(gp) = vc.guest_poll.as_mut() {
            gp.entered(now);
        }
        if self.handler_return(now, v) || self.inject(now, v) {
            return;
        }
        if self.guest_softirq(now, v, false) {
            return;
        }
        let vc = self.vcpu(v);
        if let Some((task, left)) = vc.saved.pop() {
            // The burn has the lowest priority: work woken meanwhile runs first, and the
            // workload chooses the burn again when it has nothing to do. The lookbusy spinner's
            // cut chunk was counted: the guest scheduler chooses again (`guest_next`).
            if task != Task::Burn && task != Task::Lookbusy {
                return self.run_task(now, v, task, left);
            }
        }
        self.guest_next(now, v);
    }

    fn guest_done(&mut self, now: Time, v: u32) -> Up {
        match self.vcpu(v).done.fired(now) {
            Fired::Expired => {}
            Fired::Reschedule(t) => {
                self.q().schedule(t, Event::GuestDone { vcpu: v });
                return Up::None;
            }
            Fired::Idle => return Up::None,
        }
        let vc = self.vcpu(v);
        let Mode::Guest { task, .. } = vc.mode else { return Up::None };
        vc.mode = Mode::Entering;
        self.trace(now, Trace::GuestEnd { v, task });
        match task {
            Task::App(_) | Task::NapiRx | Task::Backlog => return Up::TaskDone { v, task },
            Task::Irq(vec) => return self.irq_done(now, v, vec),
            Task::Burn => {
                self.vcpu(v).burn_ran(now);
                self.guest_next(now, v)
            }
            Task::Lookbusy => {
                self.vcpu(v).lookbusy_ran(now);
                self.guest_next(now, v)
            }
        }
        Up::None
    }

    fn idle(&mut self, now: Time, v: u32, until: Option<Time>) {
        // Deferred softirq work (ksoftirqd) runs before the vCPU may halt.
        if self.guest_softirq(now, v, true) {
            return;
        }
        let delivery = self.vcpu_ref(v).delivery;
        // The VM's own guest thread (lookbusy's spinner), an ordinary thread: it runs before
        // the idle loop or the lowest-priority burn; asleep, its wake-up is a LAPIC deadline.
        let mut until = until;
        let mut own_deadline = false;
        match self.guest_idle_thread(now, v) {
            IdleThread::None => {}
            IdleThread::Run(cost) => {
                if program_deadline(self, now, v, until, delivery) {
                    return;
                }
                return self.run_task(now, v, Task::Lookbusy, cost);
            }
            IdleThread::Sleep(wake) => {
                until = Some(until.map_or(wake, |u| u.min(wake)));
                own_deadline = true;
            }
        }
        if self.vcpu_ref(v).burn {
            // Busy guest: no HLT. A workload deadline still needs the LAPIC timer, once.
            if program_deadline(self, now, v, until, delivery) {
                return;
            }
            return self.run_task(now, v, Task::Burn, BURN_CHUNK_NS);
        }
        if let Some(IdleStep::Poll { until: end }) = self.vcpu(v).guest_poll.as_mut().map(|g| g.idle(now)) {
            // cpuidle-haltpoll's state 0: the idle task polls in guest mode (as the burn runs,
            // a workload deadline programmed once).
            if program_deadline(self, now, v, until, delivery) {
                return;
            }
            return self.run_task(now, v, Task::Burn, (end - now).min(BURN_CHUNK_NS));
        }
        // A deadline the guest's poll already programmed is not programmed again (nor, with a
        // spinner asleep, one programmed at an earlier idle: it is still pending).
        if let Some(t) = until.filter(|&t| self.vcpu_ref(v).burn_timer != Some(t)) {
            if own_deadline {
                self.vcpu(v).burn_timer = Some(t);
            }
            self.q().schedule(t.max(now), Event::TimerFire { vcpu: v });
            if delivery.timer_write_exits() {
                return self.exit(now, v, ExitReason::Timer, AfterExit::Hlt);
            }
        }
        if delivery.hlt_exits() {
            return self.exit(now, v, ExitReason::Hlt, AfterExit::Block);
        }
        // Bare metal: the CPU idles until an interrupt, with no exit — unless one arrived while
        // it was on its way (what the end of a HLT exit checks in the virtualized modes).
        if self.vcpu_ref(v).has_deliverable() {
            return self.enter(now, v);
        }
        self.vcpu(v).guest_time.set(now, false);
        self.halt(now, v)
    }

    fn halt(&mut self, now: Time, v: u32) {
        let cpu = self.cpu_of(v);
        let alone = self.sched_ref().nr_running(cpu) == 1 && !self.should_yield(cpu);
        match self.vcpu(v).halt.begin(now, alone) {
            HaltStart::Block => self.block(now, v),
            HaltStart::Poll { event } => {
                let vc = self.vcpu(v);
                vc.mode = Mode::Polling;
                vc.busy.set(now, false);
                if let Some(t) = event {
                    self.q().schedule(t, Event::HaltPollEnd { vcpu: v });
                }
            }
        }
    }

    fn block(&mut self, now: Time, v: u32) {
        self.vcpu(v).halt.stop_polling(now);
        self.vcpu(v).mode = Mode::Halted;
        let cpu = self.cpu_of(v);
        self.leave_cpu(now, cpu, true);
    }

    fn halt_poll_end(&mut self, now: Time, v: u32) {
        match self.vcpu(v).halt.window_fired(now) {
            Fired::Expired => {
                debug_assert_eq!(self.vcpu_ref(v).mode, Mode::Polling, "a poll window expired outside its poll");
                self.block(now, v)
            }
            Fired::Reschedule(t) => self.q().schedule(t, Event::HaltPollEnd { vcpu: v }),
            Fired::Idle => {}
        }
    }

    fn need_resched(&mut self, now: Time, v: u32) {
        if !matches!(self.vcpu_ref(v).mode, Mode::Guest { task: Task::Burn, .. }) {
            return;
        }
        self.trace(now, Trace::GuestEnd { v, task: Task::Burn });
        let vc = self.vcpu(v);
        vc.save_running(now);
        vc.saved.pop();
        vc.mode = Mode::Entering;
        self.guest_next(now, v);
    }

    fn halt_poll_wake(&mut self, now: Time, v: u32) {
        let resume = round_ns(self.profile().host.halt_poll_wake_ns.value);
        let p = self.parts(OWN);
        let vc = &mut p.vcpus[v as usize];
        vc.busy.set(now, true);
        vc.halt.woken_in_poll(now);
        if resume > 0 {
            // The rest of the HLT exit, as host time of the vCPU thread (not another exit).
            vc.mode = Mode::Exit { then: AfterExit::Resume };
            return p.q.schedule(now + resume, Event::ExitDone { vcpu: v });
        }
        self.enter(now, v);
    }
}

/// A workload deadline `until` of a vCPU that keeps running in guest mode (lookbusy's
/// spinner, the burn, the guest's idle poll): its LAPIC timer is programmed once
/// (`burn_timer`). Returns whether that write exits — the exit is then taken, and the caller
/// stops.
fn program_deadline<M: Machine>(m: &mut M, now: Time, v: u32, until: Option<Time>, delivery: InterruptDelivery) -> bool {
    if let Some(t) = until.filter(|&t| m.vcpu_ref(v).burn_timer != Some(t)) {
        m.vcpu(v).burn_timer = Some(t);
        m.q().schedule(t.max(now), Event::TimerFire { vcpu: v });
        if delivery.timer_write_exits() {
            m.exit(now, v, ExitReason::Timer, AfterExit::Resume);
            return true;
        }
    }
    false
}

/// A PV vCPU's cost for `r` where Xen's PV path replaces the HVM exit: the event-channel
/// upcall for an interrupt kick, a hypercall for an IPI (`EVTCHNOP_send` on the IPI's event
/// channel) or any other trap (the netfront notify, vBalance's rebinding).
fn xen_pv_cost(x: &crate::profile::Xen, r: ExitReason) -> Option<Time> {
    let p = match r {
        ExitReason::InterruptDelivery => &x.evtchn_upcall_ns,
        ExitReason::Ipi | ExitReason::Other => &x.hypercall_ns,
        _ => return None,
    };
    Some(round_ns(p.value))
}

/// The profile's cost of an exit for `r`.
fn exit_cost(profile: &Profile, r: ExitReason) -> Time {
    let x = &profile.exit;
    let p = match r {
        ExitReason::IoInstruction => &x.io_instruction_ns,
        ExitReason::InterruptDelivery => &x.interrupt_delivery_ns,
        ExitReason::Eoi => &x.eoi_ns,
        ExitReason::ExternalInterrupt => &x.external_interrupt_ns,
        ExitReason::Timer => &x.timer_ns,
        ExitReason::Hlt => &x.hlt_ns,
        ExitReason::EptViolation => &x.ept_violation_ns,
        ExitReason::InterruptWindow => &x.interrupt_window_ns,
        ExitReason::Ipi => &x.ipi_ns,
        ExitReason::Other => &x.other_ns,
    };
    round_ns(p.value)
}
