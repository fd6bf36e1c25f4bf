//! The KVM testbed's interrupt generator as a workload (`irq_source`; the simulator twin of
//! `crates/kvm/src/backend/irqgen.rs` with `irq_sink` vCPUs, docs/kvm.md `[irqgen]`): a host
//! source raises an MSI open loop — each gap uniform in [0.5, 1.5] × `interval_us`, whatever
//! became of the previous one — aimed at the VM's vCPU `vcpu` and routed by the VM's
//! `interrupt_routing` (a device interrupt, as the testbed's router sees it). The guest does no
//! other work: its vCPUs halt when idle, or spin with `guest_idle = "poll"`.
//!
//! Latency = raise → the target's handler done (the testbed: injection → the CPL3 loop noticing
//! the handler's count). Raises that coalesce into one pending vector are resolved by the one
//! handler. Each raise is also classed by what was on a pCPU at that instant, as the testbed's
//! heartbeats class it: the home vCPU (`home_running`), only another vCPU of the VM
//! (`other_running`: the case routing to a running vCPU fixes), or none (`none_running`).

use crate::model::hw::lapic::Vector;
use crate::model::workload::{App, ClientEv, Measure, state_in, Sender, Step};
use crate::model::{Ev, Host, NetDev};
use crate::engine::{EventQueue, Rng, Time, round_ns};
use crate::metrics::Histogram;
use eventpath_policy::routing::{InterruptClass, InterruptRouter, RouteRequest, RunClass};
use std::collections::VecDeque;

/// Its client event: the next injection.
const INJECT: u8 = 0;

/// The generator and what it measured.
#[derive(Debug)]
pub struct IrqSource {
    /// Mean gap (ns).
    gap: f64,
    /// Local index of the home vCPU.
    home: u32,
    rng: Rng,
    /// Per local vCPU: raises not yet handled there (when, class).
    pending: Vec<VecDeque<(Time, RunClass)>>,
    /// Raise → handled (ns), all and by class.
    latency: Histogram,
    by_class: [Histogram; 3],
    /// Interrupts raised / handled (window, lifetime).
    raised: u64,
    raised_life: u64,
    handled: u64,
    handled_life: u64,
}

impl IrqSource {
    /// A source every `interval_us` (± 50 %) aimed at local vCPU `vcpu` of a VM of `vcpus`.
    pub fn new(interval_us: f64, vcpu: u32, vcpus: u32, seed: u64, vm_name: &str) -> Self {
        IrqSource {
            gap: interval_us * 1e3,
            home: vcpu,
            rng: Rng::for_component(seed, &format!("vm:{vm_name}/irq_source")),
            pending: (0..vcpus).map(|_| VecDeque::new()).collect(),
            latency: Histogram::new(),
            by_class: [Histogram::new(), Histogram::new(), Histogram::new()],
            raised: 0,
            raised_life: 0,
            handled: 0,
            handled_life: 0,
        }
    }

    fn next_gap(&mut self) -> Time {
        round_ns(self.gap * (0.5 + self.rng.uniform())).max(1)
    }
}

impl Host {
    /// Is vCPU `v`'s thread on a pCPU now?
    fn vcpu_on_cpu(&self, v: u32) -> bool {
        self.sched.current(self.sched.thread_cpu(v)) == Some(v)
    }
}

impl App for IrqSource {
    state_in!(Irqs);

    /// The guest runs nothing: its vCPUs idle (halt, or spin with idle=poll).
    fn next(h: &mut Host, now: Time, v: u32, _vm: usize, q: &mut EventQueue<Ev>) {
        h.idle(now, v, None, q)
    }

    fn step_done(_h: &mut Host, _now: Time, _v: u32, _vm: usize, _s: Step, _q: &mut EventQueue<Ev>) {
        unreachable!("an interrupt source's guest runs no steps")
    }

    fn step_name(_s: Step) -> &'static str {
        "idle"
    }

    fn start(h: &mut Host, dev: u32, q: &mut EventQueue<Ev>) {
        let vm = h.devs[dev as usize].vm as usize;
        let first = Self::state(h, vm).next_gap();
        q.at(first, ClientEv::new(INJECT, 0).on(dev));
    }

    /// Inject: class the instant, route, raise; the next injection whatever became of this one.
    fn client_event(h: &mut Host, now: Time, dev: u32, _e: ClientEv, q: &mut EventQueue<Ev>) {
        let vm = h.devs[dev as usize].vm as usize;
        let vcpus = h.vms[vm].vcpus.clone();
        let home = Self::state(h, vm).home as usize;
        let running: Vec<bool> = vcpus.iter().map(|&u| h.vcpu_on_cpu(u)).collect();
        let class = RunClass::of(&running, home);
        let d = h.vms[vm].router.route(RouteRequest { irq: dev * 2, class: InterruptClass::Device, dest: home });
        let target = d.target % vcpus.len();
        let s = Self::state(h, vm);
        s.pending[target].push_back((now, class));
        s.raised += 1;
        s.raised_life += 1;
        let gap = s.next_gap();
        q.at(now + gap, ClientEv::new(INJECT, 0).on(dev));
        h.raise_irq(now, vcpus[target], Vector::Msi, q);
    }

    /// A handler ran on `v`: every raise to it so far is noticed now.
    fn msi_handled(h: &mut Host, now: Time, v: u32, vm: usize) {
        let local = (v - h.vms[vm].vcpus[0]) as usize;
        let s = Self::state(h, vm);
        while let Some((at, class)) = s.pending[local].pop_front() {
            s.latency.record(now - at);
            s.by_class[class as usize].record(now - at);
            s.handled += 1;
            s.handled_life += 1;
        }
    }

    fn sent_life(&self) -> u64 {
        0
    }
    fn reset_metrics(&mut self) {
        self.latency.clear();
        for h in &mut self.by_class {
            h.clear();
        }
        self.raised = 0;
        self.handled = 0;
    }
    fn describe(&self) -> String {
        format!("irq source raised {} handled {}", self.raised_life, self.handled_life)
    }
    fn progress(&self) -> u64 {
        self.handled_life
    }

    /// Interrupts handled per second as operations; raise → handled latency.
    fn measure<'a>(&'a self, _d: &'a NetDev) -> Measure<'a> {
        Measure { latency: Some(&self.latency), ops: Some(self.handled), by_run_class: Some(&self.by_class), ..Measure::default() }
    }
}
