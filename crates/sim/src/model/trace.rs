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

mod writer;

use crate::engine::Time;
use crate::metrics::{ExitReason, Name};
use crate::model::hw::lapic::Vector;
use crate::model::hypervisor::vcpu::Task;
use crate::model::Host;
use crate::run::TraceCounts;
use writer::{FlowPart, TraceWriter};

/// A flow under way: its id, and whether a span of it was written (an arrow can arrive).
#[derive(Debug, Clone, Copy)]
struct Flow {
    id: u64,
    begun: bool,
}

/// The interrupt vectors a VM's interrupt track names, in [`vec_slot`] order.
const VEC_NAMES: [&str; 7] = ["timer irq", "reschedule ipi", "net tx irq", "net rx irq", "vf irq", "msi", "call-function ipi"];

fn vec_slot(v: Vector) -> usize {
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
    trace: TraceWriter,
    from: Time,
    to: Time,
    vcpu_track: Vec<u32>,
    /// Per vCPU: its VM's interrupt track.
    irq_track: Vec<u32>,
    io_track: Vec<u32>,
    cpu_track: Vec<u32>,
    /// Interned thread names, by thread id.
    thread_name: Vec<Name>,
    /// Per vCPU and vector ([`VEC_NAMES`]): "<vector> → vCPU <i>".
    irq_name: Vec<[Name; VEC_NAMES.len()]>,
    /// Per device: its TX and RX items' names.
    item_name: Vec<[Name; 2]>,
    /// Each vCPU's guest-mode span under way: since when, and its task.
    guest_from: Vec<Option<(Time, Task)>>,
    /// The flow arriving at each vCPU's current guest span (its interrupt's handler).
    guest_flow: Vec<Option<Flow>>,
    /// Per vCPU: the device whose TX kick its next exit is (that exit starts the flow).
    kick_dev: Vec<Option<u32>>,
    /// Each back-end thread's step under way, and since when it spins.
    io_step: Vec<Option<Step>>,
    io_spin: Vec<Option<Time>>,
    /// The thread each pCPU runs, and since when its current span runs (later than now
    /// while host interrupt work in hand holds the pCPU).
    cpu_on: Vec<Option<u32>>,
    cpu_since: Vec<Time>,
    /// Flows: the next id; per device, the TX kick waiting for the back end; per device and
    /// direction, the last completed item's, waiting for an interrupt; per vCPU and
    /// direction, the raised interrupt's, waiting for its handler.
    next_flow: u64,
    kicked: Vec<Option<Flow>>,
    at_irq: Vec<Option<Flow>>,
    at_handler: Vec<Option<Flow>>,
}

fn exit_name(r: ExitReason) -> &'static str {
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
    fn new_flow(&mut self) -> Flow {
        self.next_flow += 1;
        Flow { id: self.next_flow, begun: false }
    }

    /// A span [start, end) clipped to the window, as part of `flow` if any: an arrow arrives
    /// if the flow has begun, one leaves if `out`.
    fn put(&mut self, track: u32, name: Name, start: Time, end: Time, flow: Option<&mut Flow>, out: bool) {
        let (a, b) = (start.max(self.from), end.min(self.to));
        if a < b {
            self.write(track, name, a, b, flow, out);
        }
    }

    /// A mark (a span of no length) for the moment `at`, if inside the window, as part of
    /// `flow` if any. It is drawn 1 ns early: Perfetto orders slices that start together
    /// longest first, and a flow's next slice (the item that took a ring write, the handler
    /// of an interrupt taken at once) often starts at the same nanosecond.
    fn mark(&mut self, track: u32, name: Name, at: Time, flow: Option<&mut Flow>, out: bool) {
        let at = at.saturating_sub(1);
        if (self.from..=self.to).contains(&at) {
            self.write(track, name, at, at, flow, out);
        }
    }

    fn write(&mut self, track: u32, name: Name, a: Time, b: Time, flow: Option<&mut Flow>, out: bool) {
        let part = flow.as_ref().map(|f| FlowPart { id: f.id, flow_in: f.begun, flow_out: out }).filter(|p| p.flow_in || p.flow_out);
        if self.trace.span_flow(track, name, a, b - a, part) && out {
            if let Some(f) = flow {
                f.begun = true;
            }
        }
    }

    /// pCPU `cpu`'s span of the thread on it, up to `end`.
    fn cpu_close(&mut self, cpu: usize, end: Time) {
        if let Some(t) = self.cpu_on[cpu] {
            let (track, name) = (self.cpu_track[cpu], self.thread_name[t as usize]);
            self.put(track, name, self.cpu_since[cpu], end, None, false);
        }
    }

    fn spin_close(&mut self, t: usize, now: Time) {
        if let Some(start) = self.io_spin[t].take() {
            self.put(self.io_track[t], "spin (polling its rings)".into(), start, now, None, false);
        }
    }

    /// Back-end thread `t`'s step ends: its span; an item's flow now waits for an interrupt.
    fn step_close(&mut self, t: usize, now: Time) {
        let Some((start, name, item, mut flow)) = self.io_step[t].take() else { return };
        self.put(self.io_track[t], name, start, now, flow.as_mut(), true);
        if let (Some((dev, rx)), Some(f)) = (item, flow) {
            self.at_irq[dev as usize * 2 + rx as usize] = Some(f);
        }
    }
}

impl Host {
    /// A guest task's name in the timeline; an application step is named by its workload.
    fn task_name(&self, _v: u32, t: Task) -> &'static str {
        match t {
            Task::App(s) => self.app_step_name(s),
            Task::NapiRx => "napi rx",
            Task::Backlog => "mtvd rx",
            Task::Irq(_) => "irq handler",
            Task::Burn => "cpu burn",
            Task::Lookbusy => "lookbusy",
        }
    }

    /// Start recording events in [from, to] (ns), at most `limit` of them, written to `out` as
    /// a timeline titled `title`.
    pub fn enable_trace(&mut self, from: Time, to: Time, limit: usize, title: &str, out: Box<dyn std::io::Write + Send>) {
        let mut trace = TraceWriter::new(out, limit);
        let (nv, nt) = (self.vcpus.len(), self.io.threads.len());
        let mut vcpu_track = vec![0; nv];
        let mut irq_track = vec![0; nv];
        let mut io_track = vec![0; nt];
        let mut irq_name = vec![[Name::Static(""); VEC_NAMES.len()]; nv];
        for (i, vm) in self.vms.iter().enumerate() {
            let pid = trace.process(format!("VM {}", vm.name));
            for (k, &v) in vm.vcpus.iter().enumerate() {
                vcpu_track[v as usize] = trace.track(pid, self.thread_names[v as usize].clone());
                for (s, n) in VEC_NAMES.iter().enumerate() {
                    irq_name[v as usize][s] = trace.intern(format!("{n} → vCPU {k}"));
                }
            }
            let irqs = trace.track(pid, format!("{} interrupts raised", vm.name));
            vm.vcpus.iter().for_each(|&v| irq_track[v as usize] = irqs);
            for t in (0..nt).filter(|&t| self.io.vm_of_thread(t as u32) == Some(i as u32)) {
                io_track[t] = trace.track(pid, self.io.threads[t].name.clone());
            }
        }
        let shared: Vec<usize> = (0..nt).filter(|&t| self.io.vm_of_thread(t as u32).is_none()).collect();
        if !shared.is_empty() {
            let pid = trace.process("host I/O threads");
            for t in shared {
                io_track[t] = trace.track(pid, self.io.threads[t].name.clone());
            }
        }
        let pid = trace.process(format!("host: {title}"));
        let np = self.pcpu_busy.len();
        let cpu_track = (0..np).map(|c| trace.track(pid, format!("pCPU {c}"))).collect();
        let thread_name = self.thread_names.iter().map(|n| trace.intern(n.clone())).collect();
        let item_name = self
            .devs
            .iter()
            .map(|d| {
                let vm = &self.vms[d.vm as usize].name;
                [trace.intern(format!("tx {vm}")), trace.intern(format!("rx {vm}"))]
            })
            .collect();
        let nd = self.devs.len();
        self.trace = Some(Box::new(Tracing {
            trace,
            from,
            to,
            vcpu_track,
            irq_track,
            io_track,
            cpu_track,
            thread_name,
            irq_name,
            item_name,
            guest_from: vec![None; nv],
            guest_flow: vec![None; nv],
            kick_dev: vec![None; nv],
            io_step: vec![None; nt],
            io_spin: vec![None; nt],
            cpu_on: vec![None; np],
            cpu_since: vec![0; np],
            next_flow: 0,
            kicked: vec![None; nd],
            at_irq: vec![None; nd * 2],
            at_handler: vec![None; nv * 2],
        }));
    }

    /// Whether writing the trace failed (the run can stop: nothing more will be written).
    pub fn trace_failed(&self) -> bool {
        self.trace.as_ref().is_some_and(|t| t.trace.failed())
    }

    /// Stop recording at `now` (the end of the run) and close the timeline, if recording: the
    /// spans still open end now. Its counts or the write error.
    pub fn finish_trace(&mut self, now: Time) -> Option<std::io::Result<TraceCounts>> {
        let mut tr = self.trace.take()?;
        for v in 0..self.vcpus.len() {
            if let Some((start, task)) = tr.guest_from[v].take() {
                let mut flow = tr.guest_flow[v].take().filter(|f| f.begun);
                tr.put(tr.vcpu_track[v], self.task_name(v as u32, task).into(), start, now, flow.as_mut(), false);
            }
        }
        for t in 0..self.io.threads.len() {
            tr.step_close(t, now);
            tr.spin_close(t, now);
        }
        for c in 0..tr.cpu_on.len() {
            tr.cpu_close(c, now);
        }
        Some(tr.trace.finish())
    }

    pub(crate) fn tr_guest_start(&mut self, now: Time, v: u32, task: Task) {
        let Some(tr) = self.trace.as_deref() else { return };
        // A handler the guest takes with no exit (a posted interrupt in guest mode) cuts the
        // task under way: its span ends here (the rest runs after the handler, a span of its own).
        if let Some((_, cut)) = tr.guest_from[v as usize] {
            self.tr_guest_end(now, v, cut);
        }
        if let Some(tr) = self.trace.as_deref_mut() {
            tr.guest_from[v as usize] = Some((now, task));
            if let Task::Irq(vec @ (Vector::NetTx | Vector::NetRx)) = task {
                if let Some(f) = tr.at_handler[v as usize * 2 + (vec == Vector::NetRx) as usize].take() {
                    tr.guest_flow[v as usize] = Some(f);
                }
            }
        }
    }

    pub(crate) fn tr_guest_end(&mut self, now: Time, v: u32, task: Task) {
        if self.trace.is_none() {
            return;
        }
        let name = self.task_name(v, task);
        if let Some(tr) = self.trace.as_deref_mut() {
            if let Some((start, _)) = tr.guest_from[v as usize].take() {
                let mut flow = tr.guest_flow[v as usize].take().filter(|f| f.begun);
                tr.put(tr.vcpu_track[v as usize], name.into(), start, now, flow.as_mut(), false);
            }
        }
    }

    pub(crate) fn tr_exit(&mut self, now: Time, v: u32, reason: ExitReason, cost: Time) {
        if let Some(tr) = self.trace.as_deref_mut() {
            let track = tr.vcpu_track[v as usize];
            match tr.kick_dev[v as usize].take().and_then(|d| tr.kicked[d as usize].map(|f| (d, f))) {
                Some((dev, mut f)) => {
                    tr.put(track, exit_name(reason).into(), now, now + cost, Some(&mut f), true);
                    tr.kicked[dev as usize] = Some(f);
                }
                None => tr.put(track, exit_name(reason).into(), now, now + cost, None, false),
            }
        }
    }

    /// The guest on `v` tells device `dev`'s back end of new buffers: with an exit (a kick,
    /// its exit follows) or by writing the ring only (`exit` false: its kicks are off).
    pub(crate) fn tr_kick(&mut self, now: Time, v: u32, dev: u32, rx: bool, exit: bool) {
        if let Some(tr) = self.trace.as_deref_mut() {
            if rx || tr.kicked[dev as usize].is_some() {
                return; // an RX flow starts at its packet; a request already waits
            }
            let mut f = tr.new_flow();
            if exit {
                tr.kick_dev[v as usize] = Some(dev);
            } else {
                tr.mark(tr.vcpu_track[v as usize], "tx ring write (no exit)".into(), now, Some(&mut f), true);
            }
            tr.kicked[dev as usize] = Some(f);
        }
    }

    /// `vec` is raised for vCPU `v`.
    pub(crate) fn tr_irq(&mut self, now: Time, v: u32, vec: Vector) {
        if self.trace.is_none() {
            return;
        }
        let dev = self.vms[self.vcpus[v as usize].vm as usize].dev;
        if let Some(tr) = self.trace.as_deref_mut() {
            let (track, name) = (tr.irq_track[v as usize], tr.irq_name[v as usize][vec_slot(vec)]);
            let dir = match vec {
                Vector::NetTx => Some(0),
                Vector::NetRx => Some(1),
                _ => None,
            };
            let mut flow = dir.and_then(|d| tr.at_irq[dev as usize * 2 + d].take());
            tr.mark(track, name, now, flow.as_mut(), true);
            if let (Some(d), Some(f)) = (dir, flow) {
                tr.at_handler[v as usize * 2 + d] = Some(f);
            }
        }
    }

    /// Back-end thread `t` starts a step (an item, or time it owes), after a spin if any.
    pub(crate) fn tr_io_step(&mut self, now: Time, t: u32) {
        if self.trace.is_none() {
            return;
        }
        let item = self.io.threads[t as usize].current_item();
        if let Some(tr) = self.trace.as_deref_mut() {
            tr.spin_close(t as usize, now);
            let (name, flow) = match item {
                Some((dev, false)) => (tr.item_name[dev as usize][0], tr.kicked[dev as usize].take()),
                Some((dev, true)) => (tr.item_name[dev as usize][1], Some(tr.new_flow())),
                None => ("overhead (wake-up, empty look, switch)".into(), None),
            };
            tr.io_step[t as usize] = Some((now, name, item, flow));
        }
    }

    /// Back-end thread `t`'s step is over (before its item is completed).
    pub(crate) fn tr_io_step_end(&mut self, now: Time, t: u32) {
        if let Some(tr) = self.trace.as_deref_mut() {
            tr.step_close(t as usize, now);
        }
    }

    /// Back-end thread `t` spins on its rings (from now, if not already).
    pub(crate) fn tr_io_spin(&mut self, now: Time, t: u32) {
        if let Some(tr) = self.trace.as_deref_mut() {
            tr.io_spin[t as usize].get_or_insert(now);
        }
    }

    /// Back-end thread `t` leaves its pCPU (yields or sleeps).
    pub(crate) fn tr_io_off(&mut self, now: Time, t: u32) {
        if let Some(tr) = self.trace.as_deref_mut() {
            tr.spin_close(t as usize, now);
        }
    }

    /// pCPU `cpu` starts running thread `t` (`Some`) or stops running it (`None`).
    pub(crate) fn tr_cpu(&mut self, now: Time, cpu: u32, t: Option<u32>) {
        if let Some(tr) = self.trace.as_deref_mut() {
            let c = cpu as usize;
            tr.cpu_close(c, now);
            tr.cpu_on[c] = t;
            tr.cpu_since[c] = tr.cpu_since[c].max(now);
        }
    }

    /// Host interrupt work runs on `cpu` over [start, end), taking it from its thread.
    pub(crate) fn tr_softirq(&mut self, cpu: u32, start: Time, end: Time) {
        if let Some(tr) = self.trace.as_deref_mut() {
            let c = cpu as usize;
            tr.cpu_close(c, start);
            tr.put(tr.cpu_track[c], "host irq + softirq (NIC)".into(), start, end, None, false);
            tr.cpu_since[c] = end;
        }
    }
}
