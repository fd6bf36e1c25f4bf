//! The hypervisor's operations, declared in one place — the vCPU run loop's ([`Vcpus`],
//! `vcpu_run.rs`), interrupt delivery's ([`Irqs`], `irq.rs`) and the host threads' ([`Threads`],
//! `threads.rs`) — each implemented for every [`Machine`](crate::model::hypervisor::ctx::Machine)
//! in its own file. They call one another (a VM entry injects an interrupt; a switch-in enters
//! the guest; an exit's end may yield the pCPU): declared here, the files that implement them
//! import this interface and not each other, so the hypervisor's imports have no circle.

use crate::engine::Time;
use crate::metrics::ExitReason;
use crate::model::hw::lapic::Vector;
use crate::model::hypervisor::vcpu::{AfterExit, Step, Task};

/// What the model root carries out after a hypervisor event, for a layer above it: the
/// hypervisor returns it rather than calling up. (Each arises where the event's handling ends:
/// a decision at the tail of an operation is handed up, not made from inside it.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Up {
    /// Nothing.
    None,
    /// Back-end thread `thread` was switched in on `cpu`, owing `wake_cpu` ns of wake-up from
    /// idle: its run is the I/O layer's; then the pCPU is poked (`Threads::poke`), as after
    /// any switch-in.
    IoRun { thread: u32, wake_cpu: Time, cpu: u32 },
    /// Guest task `task` (an application step, a NAPI receive, an MTVD thread's packet) ended
    /// on `v`: its owner goes on.
    TaskDone { v: u32, task: Task },
    /// The exit (or the handler) after which `v`'s driver kicks its TX queue ended: the kick
    /// (buffers the TX interrupt's handler added); then `poke`'s pCPU is poked, when the exit
    /// ended at a switch-in.
    KickTx { v: u32, poke: Option<u32> },
    /// Host interrupt work (a host tick's) took `held` ns from back-end thread `thread` in the
    /// middle of its step: the I/O layer's to delay (`IoThread::interrupted`).
    IoHeld { thread: u32, held: Time },
}

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
    /// The per-CPU kernel thread of pCPU `0` (`kthread.rs`).
    Kthread(u32),
}

/// The host threads' side of the scheduler's decisions, for every [`Machine`].
pub(crate) trait Threads {
    /// The kind of thread `tid`.
    fn kind(&self, tid: u32) -> Kind;

    /// The pCPU of thread `tid` (current, queued on, or last run on).
    fn cpu_of(&self, tid: u32) -> u32;

    /// Wake sleeping thread `tid`; the waker is the pCPU running the current event's thread.
    fn wake_thread(&mut self, now: Time, tid: u32);

    /// Thread on `cpu` leaves it (to sleep, or back to its runqueue at a preemption point).
    fn leave_cpu(&mut self, now: Time, cpu: u32, sleep: bool);

    /// Is a preemption of the thread on `cpu` pending?
    fn should_yield(&self, cpu: u32) -> bool;

    /// hBalance's `SMP_BOOST` of vCPU `v`'s thread, carried out (Xen credit) or not (CFS:
    /// `Scheduler::smp_boost`).
    fn smp_boost(&mut self, now: Time, v: u32);

    /// vCPU `v`'s thread yields to vCPU `to`'s (`kvm_vcpu_yield_to`, `Scheduler::yield_to`).
    fn yield_to(&mut self, now: Time, v: u32, to: u32);

    /// Carry out the scheduler's decisions, in order.
    fn drain(&mut self, now: Time);

    /// Bring the thread on `cpu` to its preemption point if a reschedule is pending.
    fn poke(&mut self, now: Time, cpu: u32);

    /// The switched-in thread starts running on `cpu`. A back-end thread's run is the I/O
    /// layer's, and a TX kick owed at the end of a vCPU's exit the guest's: returned for the
    /// root to carry out, which then pokes `cpu`.
    fn sched_in(&mut self, now: Time, cpu: u32) -> Up;

    /// The host's periodic tick on `cpu` (CONFIG_HZ): slice accounting and load balancing.
    fn host_tick(&mut self, now: Time, cpu: u32) -> Up;

    /// A timer the scheduler asked for fires on `cpu` (Xen credit's tick, slice, accounting).
    fn sched_timer(&mut self, now: Time, cpu: u32);
    /// Thread `tid` is created and runnable (`Event::ThreadStart`).
    fn start_thread(&mut self, now: Time, tid: u32);
    /// `cpu`'s kernel thread wakes (`Event::KthreadWake`).
    fn kthread_wake(&mut self, now: Time, cpu: u32);
    /// `cpu`'s kernel thread is done (`Event::KthreadDone`).
    fn kthread_done(&mut self, now: Time, cpu: u32);
}

/// The vCPU model's operations, for every [`Machine`]: a task's start and end, exits, VM entry,
/// idling and halting.
pub(crate) trait Vcpus {
    /// Start `task` on `v` for `cost` ns of guest time.
    fn run_task(&mut self, now: Time, v: u32, task: Task, cost: Time);

    /// Run step `s` of the VM's application on `v` for `cost`.
    fn run_step(&mut self, now: Time, v: u32, s: Step, cost: Time);

    /// Take a VM exit on `v` now; the running task (if any) is saved and resumes after.
    fn exit(&mut self, now: Time, v: u32, reason: ExitReason, then: AfterExit);

    /// An exit as [`Vcpus::exit`] that lasts `extra` ns longer than its reason's cost (host
    /// interrupt work that runs inside it: `softirq.rs`).
    fn exit_for(&mut self, now: Time, v: u32, reason: ExitReason, then: AfterExit, extra: Time);

    /// Without a hypervisor (bare metal) host interrupt work pauses the running task for `ns`:
    /// no exit, no exit cost, nothing counted as one; the task goes on after it.
    fn paused(&mut self, now: Time, v: u32, ns: Time);

    /// The exit of `v` was handled: what its handling said follows, else VM entry.
    fn exit_done(&mut self, now: Time, v: u32) -> Up;

    /// VM entry: finish a handler in progress (`irq.rs`), else inject a deliverable interrupt,
    /// else run pending softirq work (NAPI), else resume saved work, else ask the workload.
    fn enter(&mut self, now: Time, v: u32);

    /// A guest task completed (ignored if the task was cut short since).
    fn guest_done(&mut self, now: Time, v: u32) -> Up;

    /// Nothing to run: program the LAPIC timer for `until` (if any) and halt.
    fn idle(&mut self, now: Time, v: u32, until: Option<Time>);

    /// The vCPU halts (nothing pending at the end of its HLT exit): poll, or block (`halt.rs`).
    fn halt(&mut self, now: Time, v: u32);

    /// kvm_vcpu_block: the vCPU thread sleeps until an interrupt wakes it. Also where a
    /// halt-polling thread goes when another thread wants its pCPU.
    fn block(&mut self, now: Time, v: u32);

    /// The poll window's timer of vCPU `v` fired: block if the window ended.
    fn halt_poll_end(&mut self, now: Time, v: u32);

    /// An interrupt reached the polling vCPU: the guest resumes with it, after
    /// `host.halt_poll_wake_ns` (no wake-up, no idle-state exit).
    fn halt_poll_wake(&mut self, now: Time, v: u32);

    /// A waker set need_resched for `v`, whose guest idle loop was polling with the POLL flag
    /// set (`guest_poll.rs`): if the poll still runs, it sees the flag and the guest schedules
    /// (else the woken thread runs at the vCPU's next entry, as after an IPI).
    fn need_resched(&mut self, now: Time, v: u32);
}

/// Interrupt delivery's operations, for every [`Machine`].
pub(crate) trait Irqs {
    /// A device, timer or IPI raises `vec` for vCPU `v`.
    fn raise_irq(&mut self, now: Time, v: u32, vec: Vector);

    fn wake_vcpu(&mut self, now: Time, v: u32);

    /// vCPU `v` has just sent a unicast reschedule IPI (raised at its targets), `not_running`
    /// of which were not running when it wrote the ICR ([`Irqs::is_running`], read before the
    /// raise): its ICR write exits unless the VM's features say otherwise (IPIv: the CPU posts
    /// it; AVIC: the CPU delivers it to a running target). Returns whether `v` exits (the exit
    /// then takes the vCPU).
    fn ipi_sent(&mut self, now: Time, v: u32, not_running: u32) -> bool;

    /// AVIC's IsRunning bit of vCPU `v`: its thread is on its pCPU (KVM sets the bit in
    /// `avic_vcpu_load` and clears it in `avic_vcpu_put`, at sched-out, and in
    /// `avic_vcpu_blocking` before the thread blocks; a halt-polling thread is still running).
    fn is_running(&self, v: u32) -> bool;

    /// A thread was woken for vCPU `to`, which needs telling: a reschedule IPI raised at it —
    /// unless its guest idle loop polls with the POLL flag set, when the waker only sets
    /// need_resched (`set_nr_and_not_polling`). Returns whether an IPI was sent (its sender
    /// then asks [`Irqs::ipi_sent`] whether its ICR write exits).
    fn resched(&mut self, now: Time, to: u32) -> bool;

    /// `from` wakes threads on the vCPUs of `to` (a guest's `try_to_wake_up`s in one handler
    /// or step): a reschedule IPI to each that needs one ([`Irqs::resched`]'s POLL-flag rule),
    /// in one ICR-write exit of `from` where the VM's features say it exits
    /// ([`Irqs::ipi_sent`]); each IPI then leaves `exit.ipi_send_ns` into that exit, as a
    /// call-function IPI does, and at once where the CPU posts it. Returns whether `from`
    /// exits. `to` is walked twice (it must be cheap to clone).
    fn resched_ipis(&mut self, now: Time, from: u32, to: impl Iterator<Item = u32> + Clone) -> bool;

    /// `smp_call_function_single` from `from` to vCPU `to`: a call-function IPI. Where the
    /// ICR write exits, the IPI leaves `exit.ipi_send_ns` into that exit (KVM's
    /// `kvm_apic_send_ipi`); with IPI virtualization it is raised at once. Returns whether
    /// `from` exits. (Linux skips the IPI for an idle CPU polling with the POLL flag,
    /// `send_call_function_single_ipi`; the scenario refuses guest halt polling beside the one
    /// workload that sends these.)
    fn call_function(&mut self, now: Time, from: u32, to: u32) -> bool;

    /// `smp_call_function_many` from `from` to every vCPU of `to` (`apic->send_IPI_mask`):
    /// the VM's features say whether it is one send. PV IPI: one `KVM_HC_SEND_IPI` hypercall
    /// exit of `from` (counted as `ipi`), as long as an ICR write's exit (`exit.ipi_ns`) plus,
    /// for each destination after the first, the delivery such an exit does once
    /// (`exit.ipi_ns - exit.other_ns`); the first IPI leaves `exit.ipi_send_ns` into it, each
    /// next one a delivery later; returns `Some(true)`. Else `None`: the guest's `send_IPI_mask` writes the ICR
    /// once per destination, each a [`Irqs::call_function`] of the caller's.
    fn call_function_many(&mut self, now: Time, from: u32, to: &[u32]) -> Option<bool>;

    /// After `smp_call_function_many` from `from` to `to`, the guest's
    /// `kvm_smp_send_call_func_ipi` looks for a preempted destination (its steal-time record);
    /// with PV sched yield, the first it finds costs `from` a `KVM_HC_SCHED_YIELD` hypercall
    /// exit (counted as `other`, at `exit.other_ns`) in which KVM yields `from`'s thread to that
    /// vCPU's (`kvm_sched_yield` → `yield_to`): `from` leaves its pCPU at the exit's end if the
    /// scheduler picks another thread there. Returns whether `from` exits.
    fn sched_yield(&mut self, now: Time, from: u32, to: &[u32]) -> bool;

    /// At VM entry, or the guest's next step, while a handler is in progress (IF clear): resume
    /// the handler if an exit cut it short — it runs to its end before anything else; else it
    /// has ended, and this is its `iret`: IF is set, and a software-injected vector that waited
    /// for it costs an interrupt-window exit first (KVM `enable_irq_window` at the entry that
    /// found it blocked, `handle_interrupt_window`; injected at that exit's entry). Returns
    /// whether it took the vCPU.
    fn handler_return(&mut self, now: Time, v: u32) -> bool;

    /// At VM entry (or on a posted notification in guest mode): sync the PIR, accept the
    /// deliverable vector and start its handler. Returns whether a handler was started.
    fn inject(&mut self, now: Time, v: u32) -> bool;

    /// The guest's handler for `vec` finished: its device-side effect, then the EOI.
    fn irq_done(&mut self, now: Time, v: u32, vec: Vector) -> Up;

    /// The LAPIC timer the idle guest programmed expired.
    fn timer_fire(&mut self, now: Time, v: u32);

    /// The periodic scheduler tick of a busy vCPU (CONFIG_HZ). The guest's LAPIC timer is a
    /// host hrtimer on the vCPU's pCPU: if the vCPU runs guest code, the host timer interrupt
    /// causes an external-interrupt exit, and the timer vector is injected at the entry
    /// (unless the delivery mode gives the guest its core's timer: DID §4.4).
    /// A halted vCPU has its tick stopped (NO_HZ idle).
    fn tick(&mut self, now: Time, v: u32);
}
