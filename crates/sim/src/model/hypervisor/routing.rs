//! Interrupt routing, the simulator's adapter of `eventpath_policy::routing` (the routers the KVM
//! testbed drives too): each VM's router hears every run-state change of its vCPUs (running in
//! guest mode, runnable on a runqueue, blocked after HLT) and picks the vCPU of each device
//! interrupt (`[vm] interrupt_routing`; default `fixed`, the guest's own affinity: vCPU 0).
//!
//! [`IrqRouting`] owns a VM's router and knows which host-wide vCPUs are the VM's (a VM's vCPUs
//! have consecutive indices, `Host::build`); the thread model tells it run-state changes, the
//! devices ask it for targets. What the guest does when routed work lands away from the thread
//! that waits for it (a reschedule IPI) is the guest's: `guest/net_rx.rs`, `guest/driver.rs`.
//!
//! Under Xen credit (`[host] scheduler = "xen_credit"`) the router is also told each of the
//! VM's vCPUs' credit priority (UNDER/OVER/BOOST) just before each decision — read from the
//! scheduler at routing time, which costs a few reads per interrupt and never goes stale, where
//! telling it at every change would touch the scheduler's hot accounting path. A decision's
//! `boost` (hBalance's `SMP_BOOST`) is carried out by the scheduler (`Scheduler::smp_boost`).
//! Under CFS no priority is told (hBalance's router then holds every vCPU UNDER, so "the VM
//! has unused quota" always holds) and `boost` is not carried out: hBalance's scheduler half
//! needs credit.
//!
//! A VM's router is a built-in one ([`Router`], dispatched without boxing) or one the embedding
//! program supplied (`run::External`, e.g. a router written in Python).

use crate::model::hw::lapic::Vector;
/// A router supplied at run time (`run::External`). `Send`, so that a run can move to another
/// thread.
pub type ExternalRouter = Box<dyn eventpath_policy::routing::InterruptRouter + Send>;
use eventpath_policy::hbalance::CreditPriority;
use eventpath_policy::routing::{InterruptClass, InterruptRouter, RouteDecision, RouteRequest, Router, RunState};

/// A VM's router: built in, or supplied at run time.
pub(crate) enum VmRouter {
    /// A router the scenario names (`interrupt_routing`).
    Builtin(Router),
    /// A router given to the run (`run::External`).
    External(ExternalRouter),
}

impl VmRouter {
    #[inline]
    fn route(&mut self, req: RouteRequest) -> RouteDecision {
        match self {
            VmRouter::Builtin(r) => r.route(req),
            VmRouter::External(r) => r.route(req),
        }
    }

    #[inline]
    fn on_run_state(&mut self, vcpu: usize, state: RunState) {
        match self {
            VmRouter::Builtin(r) => r.on_run_state(vcpu, state),
            VmRouter::External(r) => r.on_run_state(vcpu, state),
        }
    }

    #[inline]
    fn on_priority(&mut self, vcpu: usize, prio: CreditPriority) {
        match self {
            VmRouter::Builtin(r) => r.on_priority(vcpu, prio),
            VmRouter::External(r) => r.on_priority(vcpu, prio),
        }
    }
}

/// The run-state classes of [`IrqRouting::routed`], in order (hBalance Fig. 14's
/// running / waiting / blocked targets).
pub(crate) const RUN_STATE_KEYS: [&str; 3] = ["running", "runnable", "blocked"];

/// One VM's interrupt routing.
pub(crate) struct IrqRouting {
    router: VmRouter,
    /// Host-wide index of the VM's first vCPU.
    first: u32,
    /// Its number of vCPUs.
    n: u32,
    /// Each vCPU's run state as the router was told it (what a decision's target was in).
    states: Vec<RunState>,
    /// Device interrupts routed to a vCPU in each run state: running, runnable, blocked
    /// (window; `VmSummary::device_interrupts_by_run_state_per_s`).
    pub routed: [u64; 3],
    /// Device interrupts routed while one of the VM's vCPUs was running, and of those, the
    /// ones routed to a running vCPU (window; `VmSummary::running_target_found_pct`).
    pub with_one_running: [u64; 2],
    /// Device interrupts whose default target (the source's affinity, `dest`) was not running,
    /// by the run state of the vCPU they were delivered to: running, runnable, blocked
    /// (window; `VmSummary::default_target_away_by_run_state_per_s`; issue 48 item 2).
    pub away: [u64; 3],
}

impl IrqRouting {
    /// `router` over the VM's vCPUs `first .. first + n`, each runnable (a vCPU thread starts
    /// runnable, `Mode::Waking`).
    pub fn new(mut router: VmRouter, first: u32, n: u32) -> Self {
        assert!(n > 0, "a checked VM has vCPUs");
        for j in 0..n as usize {
            router.on_run_state(j, RunState::Runnable);
        }
        IrqRouting { router, first, n, states: vec![RunState::Runnable; n as usize], routed: [0; 3], with_one_running: [0; 2], away: [0; 3] }
    }

    /// Its router was supplied at run time (`run::External`), not named by the scenario.
    pub fn external(&self) -> bool {
        matches!(self.router, VmRouter::External(_))
    }

    /// Index of `s` in [`IrqRouting::routed`] and [`RUN_STATE_KEYS`].
    fn slot(s: RunState) -> usize {
        match s {
            RunState::Running => 0,
            RunState::Runnable => 1,
            RunState::Blocked => 2,
        }
    }

    /// The request of device `dev`'s interrupt `vec` (each queue of a device is its own
    /// interrupt source: TX `2·dev`, RX `2·dev + 1`), aimed at the guest's affinity, vCPU 0.
    pub fn device_request(dev: u32, vec: Vector) -> RouteRequest {
        let irq = dev * 2 + (vec == Vector::NetRx) as u32;
        RouteRequest { irq, class: InterruptClass::Device, dest: 0 }
    }

    /// The vCPU (host-wide) a request goes to (its `dest` is the source's own affinity),
    /// whether the router asks for it to be boosted, and whether the guest rebound the source's
    /// event channel to get there (vBalance: a hypercall the target owes). `prio` gives a host-wide vCPU's credit
    /// priority (None under CFS: nothing is told).
    ///
    /// A one-vCPU VM's router is not asked: its only vCPU takes every interrupt and nothing is
    /// boosted (hBalance and ES2 redirection serve SMP VMs; `interrupt_routing` on such a VM is
    /// allowed and has no effect, which the summary says).
    pub fn decide(&mut self, req: RouteRequest, prio: impl Fn(u32) -> Option<CreditPriority>) -> (u32, bool, bool) {
        if self.n == 1 {
            self.count(0, req);
            return (self.first, false, false);
        }
        for j in 0..self.n {
            match prio(self.first + j) {
                Some(p) => self.router.on_priority(j as usize, p),
                None => break,
            }
        }
        let d = self.router.route(req);
        let t = d.target % self.n as usize;
        self.count(t, req);
        let rebind = match &mut self.router {
            VmRouter::Builtin(r) => r.take_rebind(),
            VmRouter::External(_) => false,
        };
        (self.first + t as u32, d.boost, rebind)
    }

    /// Count a device interrupt routed to local vCPU `t` by the state the router saw it in.
    fn count(&mut self, t: usize, req: RouteRequest) {
        if req.class == InterruptClass::Device {
            self.routed[Self::slot(self.states[t])] += 1;
            if self.states.contains(&RunState::Running) {
                self.with_one_running[0] += 1;
                self.with_one_running[1] += (self.states[t] == RunState::Running) as u64;
            }
            if self.states[req.dest as usize % self.n as usize] != RunState::Running {
                self.away[Self::slot(self.states[t])] += 1;
            }
        }
    }

    /// vCPU `v`'s (host-wide, one of this VM's) index within the VM.
    pub fn local(&self, v: u32) -> usize {
        (v - self.first) as usize
    }

    /// vCPU `v` (host-wide, one of this VM's) changed run state.
    pub fn on_run_state(&mut self, v: u32, state: RunState) {
        debug_assert!(v >= self.first && v < self.first + self.n, "vCPU {v} is not this VM's");
        self.states[(v - self.first) as usize] = state;
        self.router.on_run_state((v - self.first) as usize, state);
    }
}
