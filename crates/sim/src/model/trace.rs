//! Timeline recording for `eventpath trace`: where the model's hooks write. The layout a
//! Perfetto user expects:
//!
//! * one process per VM: a track per vCPU (guest work, exits), its interrupts (each raised
//!   vector, naming the vCPU it targets) and its vhost worker (each item it processes, the
//!   time it owes — wake-ups, empty looks, queue switches — and its spins on the rings);
//! * a "host I/O" process with the shared back-end threads (ES2 joint threads, ELVIS I/O
//!   cores, PMDs), their tracks filled as a vhost worker's;
//! * a "host" process with a track per pCPU: which thread occupies it all the time (a vCPU
//!   thread, guest mode and exits alike; a back-end thread, spinning or not; a CPU hog), cut
//!   by the host interrupt work (`hypervisor/softirq.rs`) that takes it from that thread; idle
//!   is a gap.
//!
//! Flow arrows follow one I/O: the guest's TX kick (its `io_instruction` exit, or a mark where
//! it wrote the ring without one) → the back-end item that took the request → the interrupt
//! raised for it → the guest's handler. An RX packet's flow starts at the item that received
//! it. One flow per request: a kick while an earlier one still waits for the back end starts
//! none; an interrupt carries the flow of the last item completed before it.
//!
//! Off unless a run asks for it; each hook is one branch when off and allocates nothing. Spans
//! still open at the end of the run are closed there. Events go to the output as they are
//! recorded ([`writer::TraceWriter`]): memory does not grow with them.

pub(crate) mod writer;

use crate::engine::Time;
use crate::metrics::{ExitReason, Name};
use crate::model::hw::lapic::Vector;
use crate::model::hypervisor::vcpu::Task;
use writer::{FlowPart, TraceWriter};

/// What a written trace holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceCounts {
    /// Events written (metadata not counted).
    pub written: u64,
    /// Events not written because the limit was reached (`otherData.dropped_events`).
    pub dropped: u64,
}

/// A flow under way: its id, and whether a span of it was written (an arrow can arrive).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Flow {
    pub(crate) id: u64,
    pub(crate) begun: bool,
    /// Where its last part starts: a later part that starts at the same nanosecond (a back
    /// end that takes a request while its kick's exit is still under way) is drawn 1 ns
    /// later, so a viewer orders the parts as they happened.
    pub(crate) last: Time,
}

/// The interrupt vectors a VM's interrupt track names, in [`vec_slot`] order.
pub(crate) const VEC_NAMES: [&str; 7] = ["timer irq", "reschedule ipi", "net tx irq", "net rx irq", "vf irq", "msi", "call-function ipi"];

pub(crate) fn vec_slot(v: Vector) -> usize {
    match v {
        Vector::Timer => 0,
        Vector::Resched => 1,
        Vector::NetTx => 2,
        Vector::NetRx => 3,
        Vector::Vf => 4,
        Vector::Msi => 5,
        Vector::CallFunction => 6,
    }
}

/// A back-end thread's step under way: since when, its name, the item (device, RX) and the
/// item's flow.
type Step = (Time, Name, Option<(u32, bool)>, Option<Flow>);

/// Trace state kept by the host while recording.
pub(crate) struct Tracing {
    pub(crate) trace: TraceWriter,
    pub(crate) from: Time,
    pub(crate) to: Time,
    pub(crate) vcpu_track: Vec<u32>,
    /// Per vCPU: its VM's interrupt track.
    pub(crate) irq_track: Vec<u32>,
    pub(crate) io_track: Vec<u32>,
    pub(crate) cpu_track: Vec<u32>,
    /// Interned thread names, by thread id.
    pub(crate) thread_name: Vec<Name>,
    /// Per vCPU and vector ([`VEC_NAMES`]): "<vector> → vCPU <i>".
    pub(crate) irq_name: Vec<[Name; VEC_NAMES.len()]>,
    /// Per device: its TX and RX items' names.
    pub(crate) item_name: Vec<[Name; 2]>,
    /// Each vCPU's guest-mode span under way: since when, and its task.
    pub(crate) guest_from: Vec<Option<(Time, Task)>>,
    /// The flow arriving at each vCPU's current guest span (its interrupt's handler).
    pub(crate) guest_flow: Vec<Option<Flow>>,
    /// Per vCPU: the device whose TX kick its next exit is (that exit starts the flow).
    pub(crate) kick_dev: Vec<Option<u32>>,
    /// Each back-end thread's step under way, and since when it spins.
    pub(crate) io_step: Vec<Option<Step>>,
    pub(crate) io_spin: Vec<Option<Time>>,
    /// The thread each pCPU runs, and since when its current span runs (later than now
    /// while host interrupt work in hand holds the pCPU).
    pub(crate) cpu_on: Vec<Option<u32>>,
    pub(crate) cpu_since: Vec<Time>,
    /// Flows: the next id; per device, the TX kick waiting for the back end; per device and
    /// direction, the last completed item's, waiting for an interrupt; per vCPU and
    /// direction, the raised interrupt's, waiting for its handler.
    pub(crate) next_flow: u64,
    pub(crate) kicked: Vec<Option<Flow>>,
    pub(crate) at_irq: Vec<Option<Flow>>,
    pub(crate) at_handler: Vec<Option<Flow>>,
}

pub(crate) fn exit_name(r: ExitReason) -> &'static str {
    match r {
        ExitReason::IoInstruction => "exit: io_instruction (kick)",
        ExitReason::InterruptDelivery => "exit: interrupt_delivery",
        ExitReason::Eoi => "exit: eoi",
        ExitReason::ExternalInterrupt => "exit: external_interrupt",
        ExitReason::Timer => "exit: timer",
        ExitReason::Hlt => "exit: hlt",
        ExitReason::EptViolation => "exit: ept_violation",
        ExitReason::InterruptWindow => "exit: interrupt_window",
        ExitReason::Ipi => "exit: ipi (ICR write)",
        ExitReason::Other => "exit: other",
    }
}

impl Tracing {
    pub(crate) fn new_flow(&mut self) -> Flow {
        self.next_flow += 1;
        Flow { id: self.next_flow, begun: false, last: 0 }
    }

    /// A span [start, end) clipped to the window, as part of `flow` if any: an arrow arrives
    /// if the flow has begun, one leaves if `out`.
    pub(crate) fn put(&mut self, track: u32, name: Name, start: Time, end: Time, flow: Option<&mut Flow>, out: bool) {
        let (a, b) = (start.max(self.from), end.min(self.to));
        if a < b {
            self.write(track, name, a, b, flow, out);
        }
    }

    /// A mark (a span of no length) for the moment `at`, if inside the window, as part of
    /// `flow` if any. It is drawn 1 ns early: Perfetto orders slices that start together
    /// longest first, and a flow's next slice (the item that took a ring write, the handler
    /// of an interrupt taken at once) often starts at the same nanosecond.
    pub(crate) fn mark(&mut self, track: u32, name: Name, at: Time, flow: Option<&mut Flow>, out: bool) {
        let at = at.saturating_sub(1);
        if (self.from..=self.to).contains(&at) {
            self.write(track, name, at, at, flow, out);
        }
    }

    pub(crate) fn write(&mut self, track: u32, name: Name, a: Time, b: Time, flow: Option<&mut Flow>, out: bool) {
        let part = flow.as_ref().map(|f| FlowPart { id: f.id, flow_in: f.begun, flow_out: out }).filter(|p| p.flow_in || p.flow_out);
        let a = match &flow {
            Some(f) if f.begun && a <= f.last => f.last + 1,
            _ => a,
        };
        let b = b.max(a);
        if self.trace.span_flow(track, name, a, b - a, part) {
            if let Some(f) = flow {
                if part.is_some() {
                    f.last = a;
                }
                if out {
                    f.begun = true;
                }
            }
        }
    }

    /// pCPU `cpu`'s span of the thread on it, up to `end`.
    pub(crate) fn cpu_close(&mut self, cpu: usize, end: Time) {
        if let Some(t) = self.cpu_on[cpu] {
            let (track, name) = (self.cpu_track[cpu], self.thread_name[t as usize]);
            self.put(track, name, self.cpu_since[cpu], end, None, false);
        }
    }

    pub(crate) fn spin_close(&mut self, t: usize, now: Time) {
        if let Some(start) = self.io_spin[t].take() {
            self.put(self.io_track[t], "spin (polling its rings)".into(), start, now, None, false);
        }
    }

    /// Back-end thread `t`'s step ends: its span; an item's flow now waits for an interrupt.
    pub(crate) fn step_close(&mut self, t: usize, now: Time) {
        let Some((start, name, item, mut flow)) = self.io_step[t].take() else { return };
        self.put(self.io_track[t], name, start, now, flow.as_mut(), true);
        if let (Some((dev, rx)), Some(f)) = (item, flow) {
            self.at_irq[dev as usize * 2 + rx as usize] = Some(f);
        }
    }
}

