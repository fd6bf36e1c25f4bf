//! The hypervisor's events handled (`Host::handle` routes them here): each one call into the
//! part that owns it — the vCPU model, interrupt delivery, the threads and the scheduler.

use crate::engine::Time;
use crate::model::hw::lapic::Vector;
use crate::model::hypervisor::ctx::Machine;
use crate::model::hypervisor::event::Event;
use crate::model::hypervisor::ops::{Irqs, Threads, Up, Vcpus};


/// Handle hypervisor event `e` at `now`.
pub(crate) fn handle<M: Machine>(m: &mut M, now: Time, e: Event) -> Up {
    match e {
        Event::SchedIn { cpu } => return m.sched_in(now, cpu),
        Event::GuestDone { vcpu } => return m.guest_done(now, vcpu),
        Event::ExitDone { vcpu } => return m.exit_done(now, vcpu),
        Event::HostTick { cpu } => return m.host_tick(now, cpu),
        Event::TimerFire { vcpu } => m.timer_fire(now, vcpu),
        Event::Tick { vcpu } => m.tick(now, vcpu),
        Event::HaltPollEnd { vcpu } => m.halt_poll_end(now, vcpu),
        Event::NeedResched { vcpu } => m.need_resched(now, vcpu),
        Event::CallFunctionIpi { vcpu } => m.raise_irq(now, vcpu, Vector::CallFunction),
        Event::ReschedIpi { vcpu } => m.raise_irq(now, vcpu, Vector::Resched),
        Event::SchedTimer { cpu } => m.sched_timer(now, cpu),
        Event::ThreadStart { tid } => m.start_thread(now, tid),
        Event::KthreadWake { cpu } => m.kthread_wake(now, cpu),
        Event::KthreadDone { cpu } => m.kthread_done(now, cpu),
    }
    Up::None
}

/// The pCPU whose thread handles event `e` (the waker of anything it wakes), if it is one
/// thread's: a vCPU's by its thread, a pCPU's own.
pub(crate) fn waker(e: Event, thread_cpu: impl Fn(u32) -> u32) -> Option<u32> {
    match e {
        Event::GuestDone { vcpu, .. } | Event::ExitDone { vcpu } | Event::Tick { vcpu } | Event::TimerFire { vcpu } => Some(thread_cpu(vcpu)),
        Event::SchedIn { cpu, .. } | Event::HostTick { cpu } | Event::SchedTimer { cpu } | Event::KthreadWake { cpu } | Event::KthreadDone { cpu } => Some(cpu),
        _ => None,
    }
}
