//! The hypervisor's context: what its vCPU model (`vcpu_run.rs`), interrupt delivery (`irq.rs`),
//! host interrupt work (`softirq.rs`) and thread glue (`threads.rs`) may touch — their own
//! state, one [`Parts`] behind a key only `hypervisor/` can make ([`Own`]), so that the layers
//! above, whose contexts extend `Machine`, read the hypervisor ([`Machine::seen`]) but reach no
//! `&mut Vcpu` and no scheduler of its — and, above them, the guest only through four named
//! calls (what runs at a VM entry, whether a guest thread runs instead of the idle loop, what a
//! finished handler did) and the timeline through one ([`Machine::trace`]). What it decides
//! at the end of an event for a layer above it returns instead of calling up (`ops::Up`: a
//! back-end thread switched in, a guest task's end, the driver's TX kick after a handler), as
//! the time host interrupt work took from a back-end thread (`Softirqs::host_irq_work`).
//!
//! A trait here, implemented by the model root (`model/cx.rs`), as the workloads' `Ctx` is:
//! the hypervisor states what it needs and imports nothing above it. Its operations are the
//! extension traits [`crate::model::hypervisor::vcpu::Vcpus`], [`crate::model::hypervisor::irq::Irqs`]
//! and [`crate::model::hypervisor::threads::Threads`], implemented for every `Machine`; static
//! dispatch, no box or vtable per event.

use crate::engine::{Schedule, Time, Timer};
use crate::metrics::{BusyTime, ExitReason};
use crate::model::hw::lapic::Vector;
use crate::model::hypervisor::cosched::CoSched;
use crate::model::hypervisor::routing::IrqRouting;
use crate::model::hypervisor::sched::Scheduler;
use crate::model::hypervisor::softirq::SoftirqCpus;
use crate::model::hypervisor::vcpu::{Task, Vcpu};
use crate::model::hypervisor::event::Event;
use crate::profile::Profile;
use eventpath_policy::routing::RunState;

/// The key to the hypervisor's own state: [`Machine::parts`] takes one, and only the
/// hypervisor's files can make one ([`OWN`]) — the layers above, whose contexts extend
/// `Machine`, read the hypervisor ([`Machine::seen`]) but reach no `&mut Vcpu` and no
/// scheduler of its.
pub(crate) struct Own(());

/// The hypervisor's key (see [`Own`]).
pub(in crate::model::hypervisor) const OWN: Own = Own(());

/// The hypervisor's fixed parameters, set when the host is built.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Setup {
    /// Host tick period (ns).
    pub host_tick_ns: Time,
    /// `exit.ipi_send_ns`: how far into its ICR-write exit a call-function IPI leaves.
    pub ipi_send_ns: Time,
    /// How many back-end threads there are (their thread ids follow the vCPUs').
    pub io_threads: u32,
    /// How many CPU hogs there are (their ids follow the back ends'; then each pCPU's kernel
    /// thread, `kthread.rs`, if the host has housekeeping).
    pub hogs: u32,
    /// The host's housekeeping on each pCPU (`[housekeeping]`; all 0 on a quiet host).
    pub housekeeping: crate::model::hypervisor::kthread::Housekeeping,
    /// The back ends' notifications are exitless (ELVIS: posted as a device interrupt's).
    pub exitless_io: bool,
}

/// The hypervisor's own state, borrowed apart so that one operation may use several at once.
pub(crate) struct Parts<'a, Q> {
    /// Every vCPU, by host-wide index.
    pub vcpus: &'a mut [Vcpu],
    /// The host scheduler.
    pub sched: &'a mut Scheduler,
    /// Per pCPU: the switch-in under way (its `SchedIn`; armed while a thread is being
    /// switched in, a later switch re-arms it: a restartable `engine::Timer`).
    pub switch_in: &'a mut [Timer],
    /// The pCPUs' host interrupt work (`softirq.rs`).
    pub softirqs: &'a mut SoftirqCpus,
    /// Per pCPU: its busy time (guest, exits, host threads; time conservation).
    pub pcpu_busy: &'a mut [BusyTime],
    /// Per VM: which vCPU its device interrupts go to (`routing.rs`), which hears its vCPUs'
    /// run states.
    pub routing: &'a mut [IrqRouting],
    /// Per VM: how much of the window all its vCPUs were on pCPUs at once (`cosched.rs`).
    pub cosched: &'a mut [CoSched],
    /// The host's profile (costs).
    pub profile: &'a Profile,
    /// The event queue.
    pub q: &'a mut Q,
}

/// What of the hypervisor anyone may read.
pub(crate) struct Seen<'a> {
    /// Every vCPU, by host-wide index.
    pub vcpus: &'a [Vcpu],
    /// The host scheduler.
    pub sched: &'a Scheduler,
    /// The host's profile (costs).
    pub profile: &'a Profile,
    /// Its fixed parameters.
    pub setup: &'a Setup,
    /// The pCPU running the thread that handles the current event (the waker).
    pub waker: Option<u32>,
}

/// What the hypervisor layer may do (see the module doc).
pub(crate) trait Machine {
    /// The event queue, on which the hypervisor schedules its own events.
    type Q: Schedule<Event>;
    /// The hypervisor's own state (its files' only: see [`Own`]).
    fn parts(&mut self, key: Own) -> Parts<'_, Self::Q>;
    /// The hypervisor's state, to read.
    fn seen(&self) -> Seen<'_>;

    // The guest, above: what runs in the VM.

    /// At VM entry of `v`, nothing of the hypervisor's to do: pending softirq work (NAPI) runs
    /// if there is any (`force`: the vCPU has nothing else, ksoftirqd). Returns whether it
    /// started a task or an exit.
    fn guest_softirq(&mut self, now: Time, v: u32, force: bool) -> bool;
    /// `v` is free: the VM's workload chooses what it runs next.
    fn guest_next(&mut self, now: Time, v: u32);
    /// `v`'s application has nothing to run: does a guest thread of the VM's own (the lookbusy
    /// spinner) run, or sleep until some time?
    fn guest_idle_thread(&mut self, now: Time, v: u32) -> crate::model::hypervisor::vcpu::IdleThread;
    /// The guest's handler for `vec` on `v` finished its device-side work (before its EOI).
    /// Returns whether the TX queue must be kicked after it (buffers the handler added).
    fn guest_handled(&mut self, now: Time, v: u32, vec: Vector) -> bool;

    /// Tell the timeline (`eventpath trace`) what happened at `now`; a no-op unless it records.
    fn trace(&mut self, now: Time, e: Trace);
}

/// What the hypervisor and the guest's driver tell the timeline (`eventpath trace`), which the
/// model root records when asked to.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Trace {
    /// `v` started guest task `task`.
    GuestStart { v: u32, task: Task },
    /// `v`'s guest task `task` ended.
    GuestEnd { v: u32, task: Task },
    /// `v` took an exit for `reason` lasting `cost`.
    Exit { v: u32, reason: ExitReason, cost: Time },
    /// `vec` is raised for `v`.
    Irq { v: u32, vec: Vector },
    /// The guest on `v` tells device `dev`'s back end of new buffers in its RX (`rx`) or TX
    /// queue: by an exit (`exit`: its `io_instruction` exit follows) or a ring write only.
    Kick { v: u32, dev: u32, rx: bool, exit: bool },
    /// Thread `t` (or none) runs on `cpu` from now.
    Cpu { cpu: u32, t: Option<u32> },
    /// Host interrupt work holds `cpu` from now until `end`.
    Softirq { cpu: u32, end: Time },
}

/// What of the hypervisor the layers above may read: a vCPU, the scheduler, the profile.
pub(crate) trait HvRead: Machine {
    /// vCPU `v`, to read.
    fn vcpu_ref(&self, v: u32) -> &Vcpu {
        &self.seen().vcpus[v as usize]
    }
    /// The host scheduler, to read.
    fn sched_ref(&self) -> &Scheduler {
        self.seen().sched
    }
    /// The host's profile.
    fn profile(&self) -> &Profile {
        self.seen().profile
    }
}

impl<M: Machine + ?Sized> HvRead for M {}

/// The hypervisor's own state, for its own files (the trait is private to `hypervisor/`).
pub(in crate::model::hypervisor) trait HvOwn: Machine {
    /// vCPU `v`.
    fn vcpu(&mut self, v: u32) -> &mut Vcpu {
        &mut self.parts(OWN).vcpus[v as usize]
    }
    /// The host scheduler.
    fn sched(&mut self) -> &mut Scheduler {
        self.parts(OWN).sched
    }
    /// The event queue.
    fn q(&mut self) -> &mut Self::Q {
        self.parts(OWN).q
    }
    /// The pCPUs' host interrupt work.
    fn softirqs(&mut self) -> &mut SoftirqCpus {
        self.parts(OWN).softirqs
    }
    /// pCPU `cpu` became busy or idle (time conservation).
    fn set_pcpu_busy(&mut self, now: Time, cpu: u32, busy: bool) {
        self.parts(OWN).pcpu_busy[cpu as usize].set(now, busy);
    }
    /// vCPU `v`'s thread changed run state: its VM's interrupt routing hears it, and its
    /// co-scheduling count follows it on and off its pCPU.
    fn on_run_state(&mut self, now: Time, v: u32, state: RunState) {
        let p = self.parts(OWN);
        let vm = p.vcpus[v as usize].vm as usize;
        p.cosched[vm].set(now, p.routing[vm].local(v), state == RunState::Running);
        p.routing[vm].on_run_state(v, state);
    }
    /// How many vCPUs there are (their thread ids come first).
    fn vcpu_count(&self) -> u32 {
        self.seen().vcpus.len() as u32
    }
    /// The fixed parameters.
    fn setup(&self) -> Setup {
        *self.seen().setup
    }
    /// The pCPU running the thread that handles the current event (the waker).
    fn waker(&self) -> Option<u32> {
        self.seen().waker
    }
}

impl<M: Machine + ?Sized> HvOwn for M {}
