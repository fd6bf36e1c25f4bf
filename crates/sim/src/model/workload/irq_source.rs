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

use crate::model::workload::app::{App, ClientEv, DevView, Measure, Step};
use crate::model::workload::ctx::Ctx;
use crate::engine::{Rng, Time, round_ns};
use crate::metrics::Histogram;
use eventpath_policy::routing::RunClass;
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

impl App for IrqSource {
    /// The guest runs nothing: its vCPUs idle (halt, or spin with idle=poll).
    fn next(g: &mut impl Ctx<Self>, v: u32) {
        g.idle(v, None)
    }

    fn step_done(_g: &mut impl Ctx<Self>, _v: u32, _s: Step) {
        unreachable!("an interrupt source's guest runs no steps")
    }

    fn step_name(_s: Step) -> &'static str {
        "idle"
    }

    fn start(g: &mut impl Ctx<Self>) {
        let first = g.app().next_gap();
        g.client_at(first, ClientEv::new(INJECT, 0));
    }

    /// Inject: class the instant, route, raise; the next injection whatever became of this one.
    fn client_event(g: &mut impl Ctx<Self>, _e: ClientEv) {
        let now = g.now();
        let home = g.app().home;
        let running: Vec<bool> = (0..g.vcpu_count()).map(|l| g.on_cpu(g.vcpu(l))).collect();
        let class = RunClass::of(&running, home as usize);
        let target = g.route_device_irq(home);
        let s = g.app();
        s.pending[target as usize].push_back((now, class));
        s.raised += 1;
        s.raised_life += 1;
        let gap = s.next_gap();
        g.client_at(now + gap, ClientEv::new(INJECT, 0));
        g.raise_msi(target);
    }

    /// A handler ran on local vCPU `local`: every raise to it so far is noticed now.
    fn msi_handled(&mut self, now: Time, local: u32, window_start: Time) {
        while let Some((at, class)) = self.pending[local as usize].pop_front() {
            if at >= window_start {
                self.latency.record(now - at);
                self.by_class[class as usize].record(now - at);
            }
            self.handled += 1;
            self.handled_life += 1;
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
    fn measure<'a>(&'a self, _d: DevView<'a>) -> Measure<'a> {
        Measure { latency: Some(&self.latency), ops: Some(self.handled), by_run_class: Some(&self.by_class), ..Measure::default() }
    }
}
