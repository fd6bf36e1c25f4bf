//! The root's hooks of the timeline (`eventpath trace`; the recorder is `trace.rs`): what the
//! parts report as it happens, put on the recorder's tracks. No-ops unless it records.

use crate::engine::Time;
use crate::metrics::{ExitReason, Name};
use crate::model::hw::lapic::Vector;
use crate::model::hypervisor::ctx::Trace;
use crate::model::hypervisor::vcpu::Task;
use crate::model::host::Host;
use crate::model::trace::writer::TraceWriter;
use crate::model::trace::{exit_name, vec_slot, TraceCounts, Tracing, VEC_NAMES};

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

    /// Record what the hypervisor or the guest's driver told the timeline (`Machine::trace`).
    pub(crate) fn trace_event(&mut self, now: Time, e: Trace) {
        match e {
            Trace::GuestStart { v, task } => self.tr_guest_start(now, v, task),
            Trace::GuestEnd { v, task } => self.tr_guest_end(now, v, task),
            Trace::Exit { v, reason, cost } => self.tr_exit(now, v, reason, cost),
            Trace::Irq { v, vec } => self.tr_irq(now, v, vec),
            Trace::Kick { v, dev, rx, exit } => self.tr_kick(now, v, dev, rx, exit),
            Trace::Cpu { cpu, t } => self.tr_cpu(now, cpu, t),
            Trace::Softirq { cpu, end } => self.tr_softirq(cpu, now, end),
        }
    }

    fn tr_guest_start(&mut self, now: Time, v: u32, task: Task) {
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
