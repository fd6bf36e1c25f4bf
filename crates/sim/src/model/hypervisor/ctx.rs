//! The hypervisor's context: what its vCPU model (`vcpu.rs`), interrupt delivery (`irq.rs`) and
//! thread glue (`threads.rs`) may touch — their own state (the vCPUs, the host scheduler, the
//! event queue, the profile's costs) and, above them, the guest and the back ends only through
//! named calls: what the guest runs at a VM entry, what a finished guest task or handler
//! means to it, a back-end thread's turn on its pCPU.
//!
//! A trait here, implemented by the model root (`model/cx.rs`), as the workloads' `Ctx` is:
//! the hypervisor states what it needs and imports nothing above it. Its operations are the
//! extension traits [`crate::model::hypervisor::vcpu::Vcpus`], [`crate::model::hypervisor::irq::Irqs`]
//! and [`crate::model::hypervisor::threads::Threads`], implemented for every `Machine`; static
//! dispatch, no box or vtable per event.

use crate::engine::{Schedule, Time, Timer};
use crate::metrics::ExitReason;
use crate::model::hw::lapic::Vector;
use crate::model::hypervisor::sched::Scheduler;
use crate::model::hypervisor::softirq::SoftirqCpus;
use crate::model::hypervisor::vcpu::{Task, Vcpu};
use crate::model::hypervisor::event::Event;
use crate::profile::Profile;
use eventpath_policy::routing::RunState;

/// The hypervisor's own state, borrowed apart so that one operation may use several at once.
pub(crate) struct Parts<'a, Q> {
    /// Every vCPU, by host-wide index.
    pub vcpus: &'a mut [Vcpu],
    /// Per pCPU: the switch-in under way (its `SchedIn`; armed while a thread is being
    /// switched in, a later switch re-arms it: a restartable `engine::Timer`).
    pub switch_in: &'a mut [Timer],
    /// The host's profile (costs).
    pub profile: &'a Profile,
    /// The event queue.
    pub q: &'a mut Q,
}

/// What the hypervisor layer may do (see the module doc).
pub(crate) trait Machine {
    /// The event queue, on which the hypervisor schedules its own events.
    type Q: Schedule<Event>;
    /// The hypervisor's own state.
    fn parts(&mut self) -> Parts<'_, Self::Q>;
    /// vCPU `v`.
    fn vcpu(&mut self, v: u32) -> &mut Vcpu;
    /// vCPU `v`, to read.
    fn vcpu_ref(&self, v: u32) -> &Vcpu;
    /// How many vCPUs there are (their thread ids come first).
    fn vcpu_count(&self) -> u32;
    /// The host scheduler.
    fn sched(&mut self) -> &mut Scheduler;
    /// The host scheduler, to read.
    fn sched_ref(&self) -> &Scheduler;
    /// The host's profile.
    fn profile(&self) -> &Profile;
    /// The event queue.
    fn q(&mut self) -> &mut Self::Q;
    /// `exit.ipi_send_ns`: how far into its ICR-write exit a call-function IPI leaves.
    fn ipi_send_ns(&self) -> Time;
    /// The pCPU running the thread that handles the current event (the waker).
    fn waker(&self) -> Option<u32>;
    /// Host tick period (ns).
    fn host_tick_ns(&self) -> Time;
    /// How many back-end threads there are (their thread ids follow the vCPUs').
    fn io_threads(&self) -> u32;
    /// The back ends' notifications are exitless (ELVIS: posted as a device interrupt's).
    fn exitless_io(&self) -> bool;
    /// pCPU `cpu` became busy or idle (time conservation).
    fn set_pcpu_busy(&mut self, now: Time, cpu: u32, busy: bool);
    /// vCPU `v`'s thread changed run state: its VM's interrupt routing hears it.
    fn on_run_state(&mut self, v: u32, state: RunState);
    /// The pCPUs' host interrupt work (`softirq.rs`).
    fn softirqs(&mut self) -> &mut SoftirqCpus;
    /// Back-end thread `t` lost `ns` of its pCPU to host interrupt work: the step it has under
    /// way ends that much later (`IoThread::interrupted`).
    fn io_interrupted(&mut self, t: u32, ns: Time);

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
    /// A guest task other than a handler or the burn finished on `v` (an application step,
    /// a NAPI receive): its owner goes on.
    fn guest_task_done(&mut self, now: Time, v: u32, task: Task);
    /// The guest's handler for `vec` on `v` finished its device-side work (before its EOI).
    /// Returns whether the TX queue must be kicked after it (buffers the handler added).
    fn guest_handled(&mut self, now: Time, v: u32, vec: Vector) -> bool;
    /// The driver's TX kick on `v` (an exit that signals the back end).
    fn guest_kick_tx(&mut self, now: Time, v: u32);

    // The back ends and the model's own bookkeeping.

    /// Back-end thread `t` was switched in (after `wake_cpu` ns of wake-up from idle).
    fn io_run(&mut self, now: Time, t: u32, wake_cpu: Time);
    /// The liveness watchdog's periodic look.
    fn watchdog_tick(&mut self, now: Time);

    // The timeline (`eventpath trace`); no-ops unless it records.

    /// `v` started guest task `task`.
    fn tr_guest_start(&mut self, now: Time, v: u32, task: Task);
    /// `v`'s guest task `task` ended.
    fn tr_guest_end(&mut self, now: Time, v: u32, task: Task);
    /// `v` took an exit for `reason` lasting `cost`.
    fn tr_exit(&mut self, now: Time, v: u32, reason: ExitReason, cost: Time);
    /// `vec` is raised for `v`.
    fn tr_irq(&mut self, now: Time, v: u32, vec: Vector);
    /// The guest on `v` tells device `dev`'s back end of new buffers in its RX (`rx`) or TX
    /// queue: by an exit (`exit`: its `io_instruction` exit follows) or a ring write only.
    fn tr_kick(&mut self, now: Time, v: u32, dev: u32, rx: bool, exit: bool);
    /// Thread `t` (or none) runs on `cpu` from now.
    fn tr_cpu(&mut self, now: Time, cpu: u32, t: Option<u32>);
    /// Host interrupt work holds `cpu` over [start, end).
    fn tr_softirq(&mut self, cpu: u32, start: Time, end: Time);
}
