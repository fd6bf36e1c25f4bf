//! Timeline recording for `eventpath trace`: where the model's hooks write. One track per vCPU
//! (guest work, exits, interrupts raised), per back-end thread (its runs) and per pCPU (which
//! host thread ran). Off unless a run asks for it; each hook is one branch when off. Events go
//! to the output as they are recorded ([`writer::TraceWriter`]): memory does not grow with them.

mod writer;

use crate::model::hypervisor::vcpu::Task;
use crate::model::Host;
use crate::engine::Time;
use crate::metrics::{ExitReason, Name};
use crate::run::TraceCounts;
use writer::TraceWriter;

/// Trace state kept by the host while recording.
pub(crate) struct Tracing {
    trace: TraceWriter,
    from: Time,
    to: Time,
    vcpu_track: Vec<u32>,
    io_track: Vec<u32>,
    cpu_track: Vec<u32>,
    /// Interned thread names, by thread id.
    thread_name: Vec<Name>,
    /// When each vCPU's current guest-mode span started.
    guest_from: Vec<Option<Time>>,
    /// When each back-end thread's current run started.
    io_from: Vec<Option<Time>>,
    /// The thread each pCPU runs and since when.
    cpu_from: Vec<Option<(u32, Time)>>,
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

impl Host {
    /// A guest task's name in the timeline; an application step is named by its workload.
    fn task_name(&self, v: u32, t: Task) -> &'static str {
        match t {
            Task::App(s) => self.app_step_name(self.vcpus[v as usize].vm as usize, s),
            Task::NapiRx => "napi rx",
            Task::Irq(_) => "irq handler",
            Task::Burn => "cpu burn",
        }
    }

    /// Start recording events in [from, to] (ns), at most `limit` of them, written to `out` as
    /// a timeline titled `title`.
    pub fn enable_trace(&mut self, from: Time, to: Time, limit: usize, title: &str, out: Box<dyn std::io::Write + Send>) {
        let mut trace = TraceWriter::new(out, title, limit);
        let vcpu_track = (0..self.vcpus.len())
            .map(|v| trace.track(format!("{} (guest/exits)", self.thread_names[v])))
            .collect();
        let io_track = self.io.threads.iter().map(|t| trace.track(format!("{} (handler)", t.name))).collect();
        let cpu_track = (0..self.pcpu_busy.len()).map(|c| trace.track(format!("pCPU {c}"))).collect();
        let thread_name = self.thread_names.iter().map(|n| trace.intern(n.clone())).collect();
        self.trace = Some(Box::new(Tracing {
            trace,
            from,
            to,
            vcpu_track,
            io_track,
            cpu_track,
            thread_name,
            guest_from: vec![None; self.vcpus.len()],
            io_from: vec![None; self.io.threads.len()],
            cpu_from: vec![None; self.pcpu_busy.len()],
        }));
    }

    /// Whether writing the trace failed (the run can stop: nothing more will be written).
    pub fn trace_failed(&self) -> bool {
        self.trace.as_ref().is_some_and(|t| t.trace.failed())
    }

    /// Stop recording and close the timeline, if recording: its counts or the write error.
    pub fn finish_trace(&mut self) -> Option<std::io::Result<TraceCounts>> {
        self.trace.take().map(|t| t.trace.finish())
    }

    /// A span [start, now) clipped to the trace window.
    fn tr_span(tr: &mut Tracing, track: u32, name: Name, start: Time, now: Time) {
        let (a, b) = (start.max(tr.from), now.min(tr.to));
        if a < b {
            tr.trace.span(track, name, a, b - a);
        }
    }

    pub(crate) fn tr_guest_start(&mut self, now: Time, v: u32) {
        if let Some(tr) = self.trace.as_deref_mut() {
            tr.guest_from[v as usize] = Some(now);
        }
    }

    pub(crate) fn tr_guest_end(&mut self, now: Time, v: u32, task: Task) {
        if self.trace.is_none() {
            return;
        }
        let name = self.task_name(v, task);
        if let Some(tr) = self.trace.as_deref_mut() {
            if let Some(start) = tr.guest_from[v as usize].take() {
                let track = tr.vcpu_track[v as usize];
                Self::tr_span(tr, track, name.into(), start, now);
            }
        }
    }

    pub(crate) fn tr_exit(&mut self, now: Time, v: u32, reason: ExitReason, cost: Time) {
        if let Some(tr) = self.trace.as_deref_mut() {
            let track = tr.vcpu_track[v as usize];
            Self::tr_span(tr, track, exit_name(reason).into(), now, now + cost);
        }
    }

    pub(crate) fn tr_irq(&mut self, now: Time, v: u32, name: &'static str) {
        if let Some(tr) = self.trace.as_deref_mut() {
            if (tr.from..=tr.to).contains(&now) {
                let track = tr.vcpu_track[v as usize];
                tr.trace.instant(track, name, now);
            }
        }
    }

    /// Back-end thread `t` starts (`running`) or stops a run on its pCPU.
    pub(crate) fn tr_io(&mut self, now: Time, t: u32, running: bool) {
        let label = self.io.label(t);
        if let Some(tr) = self.trace.as_deref_mut() {
            let slot = &mut tr.io_from[t as usize];
            match (running, slot.take()) {
                (true, prev) => *slot = Some(prev.unwrap_or(now)),
                (false, Some(start)) => {
                    let track = tr.io_track[t as usize];
                    Self::tr_span(tr, track, label.into(), start, now);
                }
                (false, None) => {}
            }
        }
    }

    /// pCPU `cpu` starts running thread `t` (`Some`) or stops running it (`None`).
    pub(crate) fn tr_cpu(&mut self, now: Time, cpu: u32, t: Option<u32>) {
        if let Some(tr) = self.trace.as_deref_mut() {
            if let Some((prev, start)) = tr.cpu_from[cpu as usize].take() {
                let (track, name) = (tr.cpu_track[cpu as usize], tr.thread_name[prev as usize]);
                Self::tr_span(tr, track, name, start, now);
            }
            tr.cpu_from[cpu as usize] = t.map(|t| (t, now));
        }
    }
}
