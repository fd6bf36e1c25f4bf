//! The hypervisor layer's events: a vCPU's guest work or exit done, its timers and ticks, a
//! scheduler's switch, tick and timers, an IPI leaving its exit. Scheduled through
//! `engine::Schedule`; the model root's event (`model/event.rs`) carries them.

/// The hypervisor layer's events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// A vCPU finished a piece of guest work (its `done` timer's event).
    GuestDone {
        /// vCPU index (host-wide).
        vcpu: u32,
    },
    /// A vCPU finished handling an exit and re-enters the guest.
    ExitDone {
        /// vCPU index.
        vcpu: u32,
    },
    /// The thread the scheduler switched in on `cpu` starts running (the pCPU's `switch_in`
    /// timer's event).
    SchedIn {
        /// pCPU.
        cpu: u32,
    },
    /// The host's periodic scheduler tick on a pCPU.
    HostTick {
        /// pCPU.
        cpu: u32,
    },
    /// The guest's LAPIC timer fires.
    TimerFire {
        /// vCPU index.
        vcpu: u32,
    },
    /// Periodic guest scheduler tick of a vCPU (its LAPIC timer as a host hrtimer).
    Tick {
        /// vCPU index.
        vcpu: u32,
    },
    /// A halted vCPU's poll window timer fires (`halt.rs`: a restartable `engine::Timer`).
    HaltPollEnd {
        /// vCPU index.
        vcpu: u32,
    },
    /// A timer the host scheduler asked for fires (`sched::Action::Timer`: Xen credit's tick,
    /// slice end and accounting).
    SchedTimer {
        /// pCPU.
        cpu: u32,
    },
    /// A waker set need_resched for a vCPU whose guest idle loop polls with the POLL flag set
    /// (`guest_poll.rs`), instead of sending it a reschedule IPI.
    NeedResched {
        /// vCPU index.
        vcpu: u32,
    },
    /// A reschedule IPI leaves its sender's ICR-write exit (`exit.ipi_send_ns` into it) and is
    /// raised at its target (`Irqs::resched_ipis`).
    ReschedIpi {
        /// Target vCPU index.
        vcpu: u32,
    },
    /// A pCPU's per-CPU kernel thread wakes (`kthread.rs`: its periodic timer).
    KthreadWake {
        /// pCPU.
        cpu: u32,
    },
    /// A pCPU's kernel thread finished its work and sleeps.
    KthreadDone {
        /// pCPU.
        cpu: u32,
    },
    /// A host thread is created and first runnable (`wake_up_new_task`): a vCPU thread at its
    /// VM's boot offset and its place in QEMU's creation order (`build.rs` start times).
    ThreadStart {
        /// Thread id.
        tid: u32,
    },
    /// A call-function IPI leaves its sender's ICR-write exit (`exit.ipi_send_ns` into it) and
    /// is raised at its target.
    CallFunctionIpi {
        /// Target vCPU index.
        vcpu: u32,
    },
}
