//! vCPUs: guest mode, exits, halting, and virtual interrupt delivery through an emulated
//! LAPIC (ES2 §2, DID §2.2): an interrupt for a running vCPU costs an interrupt-delivery exit
//! (the IPI kick); one for a vCPU already in an exit is injected at its next entry with no
//! extra exit; one for a halted vCPU wakes its thread. Every guest EOI is an EOI exit.

use super::lapic::{Lapic, Vector};
use super::{Ev, Host};
use crate::engine::{EventQueue, Time};
use crate::metrics::{BusyTime, ExitCounters, ExitReason};

/// What a vCPU runs in guest mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Task {
    /// The workload's send path for one message.
    Send,
    /// An interrupt handler for a vector.
    Irq(Vector),
}

/// What happens when an exit's handling is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterExit {
    /// Re-enter the guest and carry on.
    Resume,
    /// Follow with a HLT exit (idle: TMICT was just programmed).
    Hlt,
    /// Block the vCPU thread until an interrupt.
    Block,
}

/// Where a vCPU is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// In guest mode on its pCPU, running `task` until `end`.
    Guest {
        /// The task.
        task: Task,
        /// When it completes unless interrupted.
        end: Time,
    },
    /// In guest mode with nothing scheduled (transient, inside one event).
    Entering,
    /// Handling an exit; then `then`.
    Exit {
        /// What follows.
        then: AfterExit,
    },
    /// Blocked in the host after HLT.
    Halted,
    /// Woken, its thread not yet running.
    Waking,
}

/// One vCPU.
#[derive(Debug)]
pub struct Vcpu {
    /// VM index.
    pub vm: u32,
    /// pCPU its thread is pinned to.
    pub pcpu: u32,
    /// Current mode.
    pub mode: Mode,
    /// Bumped whenever a scheduled `GuestDone` must be ignored.
    epoch: u32,
    /// Tasks cut short by an exit or an interrupt handler, with the ns they still need.
    saved: Vec<(Task, Time)>,
    /// The emulated LAPIC.
    pub lapic: Lapic,
    /// Exits by reason (window).
    pub exits: ExitCounters,
    /// Time in guest mode (window).
    pub guest_time: BusyTime,
    /// Time not halted: guest + exits (window).
    pub busy: BusyTime,
    /// Virtual interrupts injected (window).
    pub irqs: u64,
}

impl Vcpu {
    /// A vCPU that starts in guest mode with nothing scheduled yet.
    pub fn new(vm: u32, pcpu: u32) -> Self {
        Vcpu {
            vm,
            pcpu,
            mode: Mode::Entering,
            epoch: 0,
            saved: Vec::with_capacity(8),
            lapic: Lapic::default(),
            exits: ExitCounters::default(),
            guest_time: BusyTime::default(),
            busy: BusyTime::default(),
            irqs: 0,
        }
    }

    pub(crate) fn reset_metrics(&mut self, now: Time) {
        self.exits = ExitCounters::default();
        self.guest_time.reset(now);
        self.busy.reset(now);
        self.irqs = 0;
    }

    /// Is it in guest mode (running guest code)?
    pub fn in_guest(&self) -> bool {
        matches!(self.mode, Mode::Guest { .. } | Mode::Entering)
    }
}

impl Host {
    /// Start `task` on `v` for `cost` ns of guest time.
    pub(crate) fn run_task(&mut self, now: Time, v: u32, task: Task, cost: Time, q: &mut EventQueue<Ev>) {
        let vc = &mut self.vcpus[v as usize];
        vc.epoch = vc.epoch.wrapping_add(1);
        vc.mode = Mode::Guest { task, end: now + cost };
        vc.guest_time.set(now, true);
        q.at(now + cost, Ev::GuestDone { vcpu: v, epoch: vc.epoch });
    }

    /// Take a VM exit on `v` now; the running task (if any) is saved and resumes after.
    pub(crate) fn exit(&mut self, now: Time, v: u32, reason: ExitReason, then: AfterExit, q: &mut EventQueue<Ev>) {
        let cost = self.exit_cost(reason);
        let vc = &mut self.vcpus[v as usize];
        if let Mode::Guest { task, end } = vc.mode {
            vc.saved.push((task, end - now));
            vc.epoch = vc.epoch.wrapping_add(1);
        }
        vc.guest_time.set(now, false);
        vc.mode = Mode::Exit { then };
        vc.exits.record(reason, cost);
        q.at(now + cost, Ev::ExitDone { vcpu: v });
    }

    fn exit_cost(&self, r: ExitReason) -> Time {
        let x = &self.profile.exit;
        let p = match r {
            ExitReason::IoInstruction => &x.io_instruction_ns,
            ExitReason::InterruptDelivery => &x.interrupt_delivery_ns,
            ExitReason::Eoi => &x.eoi_ns,
            ExitReason::ExternalInterrupt => &x.external_interrupt_ns,
            ExitReason::Timer => &x.timer_ns,
            ExitReason::Hlt => &x.hlt_ns,
            ExitReason::EptViolation => &x.ept_violation_ns,
            ExitReason::InterruptWindow => &x.interrupt_window_ns,
            ExitReason::Other => &x.other_ns,
        };
        p.value.round() as Time
    }

    pub(crate) fn exit_done(&mut self, now: Time, v: u32, q: &mut EventQueue<Ev>) {
        let Mode::Exit { then } = self.vcpus[v as usize].mode else { unreachable!("ExitDone outside an exit") };
        let pending = self.vcpus[v as usize].lapic.deliverable().is_some();
        match then {
            // An interrupt that arrived during the exit cancels the idle entry.
            AfterExit::Hlt if !pending => self.exit(now, v, ExitReason::Hlt, AfterExit::Block, q),
            AfterExit::Block if !pending => {
                let vc = &mut self.vcpus[v as usize];
                vc.mode = Mode::Halted;
                vc.busy.set(now, false);
                let p = vc.pcpu;
                self.set_pcpu_busy(now, p, false);
            }
            _ => self.enter(now, v, q),
        }
    }

    /// VM entry: inject a deliverable interrupt, else resume saved work, else ask the workload.
    pub(crate) fn enter(&mut self, now: Time, v: u32, q: &mut EventQueue<Ev>) {
        let vc = &mut self.vcpus[v as usize];
        vc.mode = Mode::Entering;
        if let Some(vec) = vc.lapic.accept() {
            vc.irqs += 1;
            let cost = self.irq_handler_cost(vec);
            return self.run_task(now, v, Task::Irq(vec), cost, q);
        }
        if let Some((task, left)) = vc.saved.pop() {
            return self.run_task(now, v, task, left, q);
        }
        self.workload_next(now, v, q);
    }

    /// A guest task completed (ignored if the task was cut short since).
    pub(crate) fn guest_done(&mut self, now: Time, v: u32, epoch: u32, q: &mut EventQueue<Ev>) {
        let vc = &mut self.vcpus[v as usize];
        let Mode::Guest { task, .. } = vc.mode else { return };
        if vc.epoch != epoch {
            return;
        }
        vc.mode = Mode::Entering;
        match task {
            Task::Send => self.send_done(now, v, q),
            Task::Irq(vec) => {
                self.irq_handled(now, v, vec);
                // Emulated LAPIC: the guest's EOI write traps (ES2 §2, DID §2.4).
                self.vcpus[v as usize].lapic.eoi();
                self.exit(now, v, ExitReason::Eoi, AfterExit::Resume, q);
            }
        }
    }

    /// Raise `vec` on vCPU `v` through the emulated LAPIC.
    pub(crate) fn raise_irq(&mut self, now: Time, v: u32, vec: Vector, q: &mut EventQueue<Ev>) {
        let wake = self.profile.host.thread_wakeup_ns.value.round() as Time;
        let vc = &mut self.vcpus[v as usize];
        vc.lapic.raise(vec);
        if vc.lapic.deliverable().is_none() {
            return; // masked by a higher in-service vector: taken after its EOI
        }
        match vc.mode {
            // Running guest code: kick it out with an IPI; injection happens at entry.
            Mode::Guest { .. } | Mode::Entering => {
                self.exit(now, v, ExitReason::InterruptDelivery, AfterExit::Resume, q)
            }
            // Already in the hypervisor: injected at the coming entry, no extra exit (ES2 §3.3).
            Mode::Exit { .. } | Mode::Waking => {}
            Mode::Halted => {
                vc.mode = Mode::Waking;
                q.at(now + wake, Ev::VcpuWoken { vcpu: v });
            }
        }
    }

    pub(crate) fn vcpu_woken(&mut self, now: Time, v: u32, q: &mut EventQueue<Ev>) {
        let vc = &mut self.vcpus[v as usize];
        vc.busy.set(now, true);
        let p = vc.pcpu;
        self.set_pcpu_busy(now, p, true);
        self.enter(now, v, q);
    }

    /// Nothing to run: program the LAPIC timer for `until` (if any) and halt.
    pub(crate) fn idle(&mut self, now: Time, v: u32, until: Option<Time>, q: &mut EventQueue<Ev>) {
        match until {
            Some(t) => {
                q.at(t.max(now), Ev::TimerFire { vcpu: v });
                self.exit(now, v, ExitReason::Timer, AfterExit::Hlt, q);
            }
            None => self.exit(now, v, ExitReason::Hlt, AfterExit::Block, q),
        }
    }

    pub(crate) fn timer_fire(&mut self, now: Time, v: u32, q: &mut EventQueue<Ev>) {
        self.raise_irq(now, v, Vector::Timer, q);
    }

    fn irq_handler_cost(&self, vec: Vector) -> Time {
        match vec {
            Vector::Timer => self.profile.guest.timer_irq_ns.value.round() as Time,
            Vector::NetTx => self.profile.guest.virtio_irq_ns.value.round() as Time,
        }
    }
}
