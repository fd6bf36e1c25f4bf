//! Interrupt delivery carried out: a device, timer or IPI raises a vector for a vCPU, the VM's
//! delivery mode (`eventpath_policy::delivery`, recorded by `delivery.rs`) says which path it
//! takes and what follows — an exit (interrupt delivery or external interrupt) and injection at
//! the entry, a notification the running guest takes with no exit, a wake-up — and the guest's
//! handler ends in an EOI that exits or not by the same mode.
//!
//! Whichever the mode, the guest takes the interrupt only when its priority class is above the
//! highest in-service vector's (the LAPIC's IRR/ISR rules, `lapic.rs`), and only with its
//! interrupts on: a handler runs with IF clear from its injection to its `iret` (after its EOI
//! and, for the timer, its TMICT re-arm), so nothing nests into it and no softirq runs inside
//! it. At the `iret` a vector that waited for IF is taken at once where the hardware holds it,
//! and after an interrupt-window exit where software injects it (`emulated`, ELI's injection
//! mode: `DeliveryMode::window_exit`). A TX interrupt's kick (softirq, after the `iret` in Linux)
//! comes before that window exit here; the exits counted are the same.

use crate::engine::Schedule;
use crate::model::hypervisor::event::Event;
use crate::model::hw::lapic::Vector;
use crate::model::hypervisor::delivery::{source_of, Recorded};
use eventpath_policy::delivery::features::{IpiKind, IpiSend};
use eventpath_policy::delivery::{Action, ExitCause, Target};
use crate::model::hypervisor::vcpu::{AfterExit, Mode, Task, XenIo};
use crate::model::hypervisor::ctx::{HvOwn, HvRead, Machine, Trace, OWN};
use crate::model::hypervisor::ops::{Irqs, Threads, Up, Vcpus};
use crate::engine::{Time, NS_PER_S, round_ns};
use crate::metrics::ExitReason;


impl<M: Machine> Irqs for M {
    fn raise_irq(&mut self, now: Time, v: u32, vec: Vector) {
        self.trace(now, Trace::Irq { v, vec });
        let exitless = self.setup().exitless_io;
        let vc = self.vcpu(v);
        vc.ledger.raised += 1;
        if matches!(vec, Vector::NetTx | Vector::NetRx | Vector::Vf | Vector::Msi) {
            match vc.mode {
                Mode::Guest { .. } | Mode::Entering => vc.target.guest += 1,
                Mode::Exit { .. } | Mode::Waking => vc.target.exit += 1,
                Mode::Halted | Mode::Polling => vc.target.halted += 1,
            }
        }
        debug_assert!(
            !vc.apic.irqs_off() || !matches!(vc.mode, Mode::Guest { task, .. } if !matches!(task, Task::Irq(_))),
            "vCPU {v} runs {:?} inside a handler (IF clear)",
            vc.mode
        );
        let target = match vc.mode {
            Mode::Guest { .. } if vc.apic.irqs_off() => Target::InGuestIrqsOff,
            Mode::Guest { .. } => Target::InGuest,
            Mode::Entering => Target::Entering,
            Mode::Exit { .. } | Mode::Waking => Target::InHypervisor,
            Mode::Halted => Target::Halted,
            Mode::Polling => Target::Polling,
        };
        let d = vc.delivery.raise(source_of(vec, exitless), target, vc.apic.injection_mode());
        match vc.apic.record(vec, d.path) {
            Recorded::New => {}
            Recorded::Quiet => return,
            Recorded::Coalesced => {
                vc.ledger.coalesced += 1;
                return;
            }
            Recorded::CoalescedKick => vc.ledger.coalesced += 1,
        }
        match d.action {
            Action::Pend => {}
            Action::Exit(ExitCause::InterruptDelivery) => self.exit(now, v, ExitReason::InterruptDelivery, AfterExit::Resume),
            Action::Exit(ExitCause::ExternalInterrupt) => self.exit(now, v, ExitReason::ExternalInterrupt, AfterExit::Resume),
            Action::TakeNow => {
                let vc = self.vcpu(v);
                vc.ledger.coalesced += vc.apic.sync() as u64;
                if vc.apic.lapic.deliverable().is_some() {
                    vc.save_running(now);
                    self.inject(now, v);
                }
            }
            Action::Wake => self.wake_vcpu(now, v),
            Action::PollWake => self.halt_poll_wake(now, v),
        }
    }

    fn wake_vcpu(&mut self, now: Time, v: u32) {
        // kvm_vcpu_kick → wake_up: the host scheduler places and runs the vCPU thread.
        self.vcpu(v).halt.end(now, true);
        self.vcpu(v).mode = Mode::Waking;
        self.vcpu(v).from_halt = true;
        self.on_run_state(now, v, eventpath_policy::routing::RunState::Runnable);
        self.wake_thread(now, v);
    }

    fn resched(&mut self, now: Time, to: u32) -> bool {
        if self.vcpu_ref(to).poll_flag() {
            self.q().schedule(now, Event::NeedResched { vcpu: to });
            return false;
        }
        self.raise_irq(now, to, Vector::Resched);
        true
    }

    fn resched_ipis(&mut self, now: Time, from: u32, to: impl Iterator<Item = u32> + Clone) -> bool {
        // Who needs an IPI and how many of them were not running, read before any is sent.
        let (mut sent, mut not_running) = (false, 0);
        for t in to.clone() {
            if !self.vcpu_ref(t).poll_flag() {
                sent = true;
                not_running += u32::from(!self.is_running(t));
            }
        }
        let exits = sent && self.ipi_sent(now, from, not_running);
        for t in to {
            if !exits {
                self.resched(now, t);
            } else if self.vcpu_ref(t).poll_flag() {
                self.q().schedule(now, Event::NeedResched { vcpu: t });
            } else {
                let at = now + self.setup().ipi_send_ns;
                self.q().schedule(at, Event::ReschedIpi { vcpu: t });
            }
        }
        exits
    }

    fn call_function(&mut self, now: Time, from: u32, to: u32) -> bool {
        let not_running = u32::from(!self.is_running(to));
        if self.ipi_sent(now, from, not_running) {
            let at = now + self.setup().ipi_send_ns;
            self.q().schedule(at, Event::CallFunctionIpi { vcpu: to });
            true
        } else {
            self.raise_irq(now, to, Vector::CallFunction);
            false
        }
    }

    fn call_function_many(&mut self, now: Time, from: u32, to: &[u32]) -> Option<bool> {
        let not_running = to.iter().filter(|&&t| !self.is_running(t)).count() as u32;
        let vc = self.vcpu_ref(from);
        let n = u32::try_from(to.len()).unwrap_or(u32::MAX);
        match vc.features.ipi_send(vc.delivery, vc.cpu_caps, IpiKind::Multicast(n), not_running) {
            IpiSend::Hypercall => {
                // kvm_pv_send_ipi -> __pv_send_ipi: kvm_apic_set_irq for each destination in
                // turn, inside the one exit. An ICR-write exit is a generic exit plus one such
                // delivery, so each destination after the first adds exit.ipi_ns - exit.other_ns
                // (derived from the two priors; no measurement of it was found), and each IPI
                // leaves that much after the one before.
                let x = &self.profile().exit;
                let per = round_ns((x.ipi_ns.value - x.other_ns.value).max(0.0));
                let rest = per * (to.len() as Time).saturating_sub(1);
                self.exit_for(now, from, ExitReason::Ipi, AfterExit::Resume, rest);
                let mut at = now + self.setup().ipi_send_ns;
                for &t in to {
                    self.q().schedule(at, Event::CallFunctionIpi { vcpu: t });
                    at += per;
                }
                Some(true)
            }
            IpiSend::Exitless | IpiSend::IcrWrites(_) | IpiSend::IncompleteIpi(_) => None,
        }
    }

    fn sched_yield(&mut self, now: Time, from: u32, to: &[u32]) -> bool {
        // A vCPU's thread id is its index.
        let sched = self.sched_ref();
        let Some(i) = self.vcpu_ref(from).features.sched_yield_to(to.iter().map(|&t| sched.preempted(t))) else {
            return false;
        };
        self.exit(now, from, ExitReason::Other, AfterExit::Resume);
        self.yield_to(now, from, to[i]);
        true
    }

    fn ipi_sent(&mut self, now: Time, v: u32, not_running: u32) -> bool {
        let vc = self.vcpu_ref(v);
        // A PV IPI hypercall would be this exit with the hypercall's path; the model's
        // unicast IPIs never take it (the policy keeps them ICR writes). AVIC's incomplete-IPI
        // exit is counted with the ICR-write exits (`ipi`): its handler kicks the target.
        if vc.features.ipi_send(vc.delivery, vc.cpu_caps, IpiKind::Unicast, not_running).exits() {
            self.exit(now, v, ExitReason::Ipi, AfterExit::Resume);
            return true;
        }
        false
    }

    fn is_running(&self, v: u32) -> bool {
        // A vCPU's thread id is its index.
        let cpu = self.cpu_of(v);
        self.sched_ref().current(cpu) == Some(v)
    }

    fn handler_return(&mut self, now: Time, v: u32) -> bool {
        let vc = self.vcpu(v);
        if !vc.apic.irqs_off() {
            return false;
        }
        if let Some(&(task @ Task::Irq(_), left)) = vc.saved.last() {
            vc.saved.pop();
            self.run_task(now, v, task, left);
            return true;
        }
        vc.apic.iret();
        vc.ledger.coalesced += vc.apic.sync() as u64;
        match vc.apic.deliverable_path() {
            Some(path) if vc.delivery.window_exit(path) => {
                self.exit(now, v, ExitReason::InterruptWindow, AfterExit::Resume);
                true
            }
            _ => false,
        }
    }

    fn inject(&mut self, now: Time, v: u32) -> bool {
        let p = self.parts(OWN);
        let vc = &mut p.vcpus[v as usize];
        vc.ledger.coalesced += vc.apic.sync() as u64;
        let Some(vec) = vc.apic.accept() else { return false };
        vc.ledger.accepted += 1;
        vc.irqs += 1;
        vc.irqs_by_source[match vec {
            Vector::Timer => 1,
            Vector::Resched => 2,
            Vector::CallFunction => 3,
            Vector::NetTx | Vector::NetRx | Vector::Vf | Vector::Msi => 0,
        }] += 1;
        let g = &p.profile.guest;
        let cost = match vec {
            // scheduler_ipi: a short handler that sets need_resched, like the timer's; the
            // call-function handler runs its function (kvm-unit-tests' `nop`) and acks: as short.
            Vector::Timer | Vector::Resched | Vector::CallFunction => g.timer_irq_ns.value,
            Vector::NetTx | Vector::NetRx => g.virtio_irq_ns.value,
            // The testbed guest's handler: count, EOI, return (its emulated CPL0 cost is in
            // the measured delivery latency; a timer-class handler's cost here).
            Vector::Msi => g.timer_irq_ns.value,
            Vector::Vf => p.profile.sriov.as_ref().map_or(g.virtio_irq_ns.value, |s| s.vf_irq_ns.value),
        };
        let cost = round_ns(cost);
        if let (XenIo::Fv, Some(x), Vector::NetTx | Vector::NetRx) = (p.vcpus[v as usize].xen, p.profile.xen.as_ref(), vec) {
            // e1000_intr reads ICR first: an MMIO exit whose ioreq to QEMU the vCPU waits out;
            // the handler runs after it (resumed from the saved stack at the entry).
            let ioreq = round_ns(x.ioreq_ns.value);
            let vc = &mut p.vcpus[v as usize];
            vc.saved.push((Task::Irq(vec), cost));
            vc.mode = Mode::Entering; // (a task this cut short was saved by the caller)
            self.exit_for(now, v, ExitReason::IoInstruction, AfterExit::Resume, ioreq);
            return true;
        }
        self.run_task(now, v, Task::Irq(vec), cost);
        true
    }

    fn irq_done(&mut self, now: Time, v: u32, vec: Vector) -> Up {
        // The handler's work in the guest (a TX clean, NAPI scheduled, the application told).
        let kick = self.guest_handled(now, v, vec);
        let vc = self.vcpu(v);
        let injection_mode = vc.apic.injection_mode();
        // PV EOI's flag, as KVM set it at the last entry: clear if anything besides this vector
        // was requested or in service (an interrupt raised since in emulated mode kicked the
        // vCPU out and back in, so the state now is the state KVM saw).
        let others = vc.apic.lapic.requested() > 0 || vc.apic.lapic.in_service() > 1;
        vc.apic.eoi();
        // The timer handler re-arms the LAPIC timer (TMICT/TSC-deadline write), an exit unless
        // the mode passes TMICT through (DID). A TX interrupt that moved the qdisc backlog into
        // the ring is followed by its kick (softirq after EOI).
        let then = match vec {
            Vector::Timer => AfterExit::Rearm,
            _ if kick => AfterExit::KickTx,
            _ => AfterExit::Resume,
        };
        let delivery = vc.delivery;
        if vc.rebind_owed && matches!(vec, Vector::NetTx | Vector::NetRx) {
            // vBalance moved the event channel here: the guest's EVTCHNOP_bind_vcpu (an
            // evtchn vCPU has no EOI exit, so this is the only trap after its handler).
            vc.rebind_owed = false;
            self.exit(now, v, ExitReason::Other, then);
            return Up::None;
        }
        if vc.features.eoi_exits(delivery, injection_mode, others) {
            self.exit(now, v, ExitReason::Eoi, then);
            return Up::None;
        }
        match then {
            AfterExit::Rearm if delivery.timer_write_exits() => self.exit(now, v, ExitReason::Timer, AfterExit::Resume),
            AfterExit::KickTx => return Up::KickTx { v, poke: None },
            _ => self.enter(now, v),
        }
        Up::None
    }

    fn timer_fire(&mut self, now: Time, v: u32) {
        self.vcpu(v).burn_timer = None;
        self.raise_irq(now, v, Vector::Timer);
    }

    fn tick(&mut self, now: Time, v: u32) {
        let hz = self.profile().guest.tick_hz.value;
        self.q().schedule(now + round_ns(NS_PER_S as f64 / hz), Event::Tick { vcpu: v });
        match self.vcpu_ref(v).mode {
            Mode::Halted | Mode::Polling | Mode::Waking => return,
            // idle=poll: the idle loop stops the tick too (NO_HZ).
            Mode::Guest { task: Task::Burn, .. } if self.vcpu_ref(v).idle_poll => return,
            Mode::Guest { .. } | Mode::Entering | Mode::Exit { .. } => {}
        }
        // The delivery mode decides whether it exits (a host hrtimer: external interrupt) or
        // the guest takes it on its own LAPIC (DID).
        self.raise_irq(now, v, Vector::Timer);
    }
}
