//! The guest context: everything an application (`A`) and its client peer may do, and nothing
//! else — its own state, its VM's vCPUs as its guest scheduler sees them (start a step, go on
//! with the next task, idle, wake a thread elsewhere), its driver (hand a frame to the TX path,
//! or, for the testbed's raw guest, the virtqueue itself), and its peer on the client machine
//! (its core, the reverse link, its events).
//!
//! A trait here, implemented by the model root (`model/app_ctx.rs`), as `io::queues::DevRings`
//! is: the workload layer states what it needs and imports nothing above it. The root's
//! implementation holds the whole host privately, because an application's step re-enters the
//! model — a step's end enters the guest, which may ask the same application for its next step
//! — so no split of the host's fields could be handed out for the length of a call. Apps are
//! generic over it (`&mut impl Ctx<Self>`), which the one implementation monomorphizes: static
//! dispatch, no box or vtable per event.

use crate::engine::Time;
use crate::model::hw::rxq::RxPkt;
use crate::model::hw::virtq::{Buf, Virtq};
use crate::model::hypervisor::vcpu::Step;
use crate::model::workload::client::{AckAction, Client};
pub use crate::model::workload::client::ClientEv;
use crate::profile::Profile;

/// The kinds of single-destination IPI an application's guest sends ([`Ctx::send_ipi`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ipi {
    /// A reschedule IPI (`try_to_wake_up` of a thread on another vCPU).
    Reschedule,
    /// A call-function IPI (`smp_call_function_single`).
    CallFunction,
}

/// The context of a VM's application `A`: what its behaviour functions may touch. vCPUs are
/// named by their host-wide index, as the [`crate::model::workload::app::App`] hooks get them.
pub(crate) trait Ctx<A> {
    /// The application's own state.
    fn app(&mut self) -> &mut A;
    /// Simulated time of the event being handled.
    fn now(&self) -> Time;
    /// The host's profile (costs and hardware facts).
    fn profile(&self) -> &Profile;
    /// Start of the measurement window (window counters count what was born after it).
    fn window_start(&self) -> Time;

    /// The host-wide index of the VM's vCPU `local`.
    fn vcpu(&self, local: u32) -> u32;
    /// The VM's vCPUs.
    fn vcpu_count(&self) -> u32;
    /// Is vCPU `v`'s thread on a pCPU now?
    fn on_cpu(&self, v: u32) -> bool;
    /// vCPU `v`'s steal time so far (ns): its thread's waits for a pCPU (`run_delay`), which
    /// KVM publishes in the guest's steal-time record (`MSR_KVM_STEAL_TIME`).
    fn steal_ns(&self, v: u32) -> Time;

    /// Start step `s` on vCPU `v` for `cost` ns of guest time.
    fn run_step(&mut self, v: u32, s: Step, cost: Time);
    /// vCPU `v` goes on in the guest (VM entry: an interrupt, softirq work, a saved task, or
    /// the application's next step).
    fn enter(&mut self, v: u32);
    /// Nothing to run on `v`: sleep until `until` (the LAPIC timer), or until woken.
    fn idle(&mut self, v: u32, until: Option<Time>);
    /// A paced sender's turn on `v`: halt while its queue is stopped, sleep until `next_at`
    /// (ns), else run `send` for `cost`.
    fn paced_send(&mut self, v: u32, stopped: bool, next_at: f64, send: Step, cost: Time);
    /// End the application's step of kind `kind` on `v` now, running or saved (a spin that
    /// an event cuts short); a running one makes `v` choose its next task.
    fn cut_step(&mut self, v: u32, kind: u8);
    /// A single-destination IPI of `kind` from `from` to `to` — `try_to_wake_up` on another
    /// vCPU (a reschedule IPI) or `smp_call_function_single` (a call-function IPI) — whose ICR
    /// write is an exit of `from` (the step in progress resumes after it). Returns whether
    /// `from` exits: not where the CPU virtualizes the write (`[vm.apic] ipiv`), and `from`
    /// goes on at once.
    fn send_ipi(&mut self, from: u32, to: u32, kind: Ipi) -> bool;
    /// `smp_call_function_many` from `from` to every vCPU of `to` (`apic->send_IPI_mask`):
    /// `Some(exits)` where the VM's features make it one send (a `KVM_HC_SEND_IPI` hypercall,
    /// its IPIs all raised); `None` where the guest writes the ICR once per destination, each
    /// a [`Ctx::send_ipi`] of its own.
    fn call_function_many(&mut self, from: u32, to: &[u32]) -> Option<bool>;
    /// The tail of `kvm_smp_send_call_func_ipi` after [`Ctx::call_function_many`]'s send:
    /// with PV sched yield, a `KVM_HC_SCHED_YIELD` hypercall exit of `from` that yields its
    /// pCPU to the first vCPU of `to` that is preempted. Returns whether `from` exits.
    fn sched_yield(&mut self, from: u32, to: &[u32]) -> bool;

    /// The guest programs `v`'s LAPIC timer (`hrtimer_start` / `hrtimer_cancel` reprogramming
    /// the clock event device: a TMICT or TSC-deadline write) — an exit unless the VM's
    /// delivery passes the write through (DID); the vCPU goes on after it.
    fn timer_write(&mut self, v: u32);

    /// Hand frame `b` to the driver on `v` (`start_xmit`; the vCPU goes on after it).
    fn post_tx(&mut self, v: u32, b: Buf);
    /// The VM's TX virtqueue (the testbed guest writes requests straight into it).
    fn txq(&mut self) -> &mut Virtq;
    /// The driver stops or wakes the TX queue (the application sees it in `set_stopped`).
    fn set_tx_stopped(&mut self, stopped: bool);
    /// Buffers were published on the TX ring by `v`: kick if the device asked for it, else
    /// let a back end polling the ring see them; the vCPU goes on.
    fn notify_tx(&mut self, v: u32);

    /// Where the VM's interrupt routing sends a device interrupt of its device aimed at its
    /// local vCPU `home` (a host interrupt source's MSI): the local vCPU it goes to.
    fn route_device_irq(&mut self, home: u32) -> u32;
    /// Raise an MSI on the VM's local vCPU `local`.
    fn raise_msi(&mut self, local: u32);

    /// Its peer on the client machine.
    fn client(&mut self) -> &mut Client;
    /// Run `ns` of client work on the peer's core from `at`; returns when it is done.
    fn client_cpu(&mut self, at: Time, ns: Time) -> Time;
    /// The peer's core receives a TCP segment of `bytes` of connection `flow` arriving now.
    fn client_receive(&mut self, bytes: u32, segs: u16, flow: u16) -> AckAction;
    /// The peer hands `pkt` (`wire_bytes` on the wire), built by its core at `at`, to its NIC
    /// for the host (its way through the NIC's queue, the link and the tap follows by itself).
    /// Returns false if the NIC queue's full qdisc dropped it (a datagram: `hw/client_port.rs`).
    fn to_host(&mut self, at: Time, pkt: RxPkt, wire_bytes: u32) -> bool;
    /// Schedule the client's event `e` at `at`.
    fn client_at(&mut self, at: Time, e: ClientEv);
}

/// Bring the guest scheduler `sched` picks out of the application up to date with each vCPU's
/// steal time before it decides (`guest_sched.rs`: the run-queue clocks).
pub(crate) fn sync_steal<A>(g: &mut impl Ctx<A>, sched: impl Fn(&mut A) -> &mut crate::model::guest::guest_sched::GuestSched) {
    if !sched(g.app()).clocked() {
        return;
    }
    for l in 0..g.vcpu_count() {
        let s = g.steal_ns(g.vcpu(l));
        sched(g.app()).set_steal(l, s);
    }
}
