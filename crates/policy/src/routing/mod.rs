//! Interrupt routing: which vCPU of a VM a virtual device interrupt goes to.
//!
//! Every router implements [`InterruptRouter`]: it is told each vCPU's run-state change
//! ([`InterruptRouter::on_run_state`]; and, for hBalance, credit priority changes) and answers
//! [`InterruptRouter::route`] for each interrupt. Only [`InterruptClass::Device`] interrupts are
//! ever redirected; timer interrupts and IPIs are vCPU-specific (hBalance §4.1.1, ES2 §5.5) and
//! always go to their programmed destination.
//!
//! Routers: [`FixedRouter`] (physical destination mode), [`LowestPriorityRr`] (logical mode,
//! round-robin per interrupt), [`RunningFirst`] (the KVM testbed's router by observed run state),
//! [`crate::es2::Es2Redirect`] (ES2 §4.3) and [`crate::hbalance::HBalanceRouter`] (hBalance
//! Algorithm 1) and [`crate::vbalance::VBalanceRouter`] (vBalance, the guest's own event-channel
//! rebinding, Xen PV only). [`RouterConfig::build`] makes any of them as a [`Router`].
//!
//! The interface every router implements (requests, decisions, vCPU states) is in [`types`],
//! which depends on no router: `hbalance` and `es2::redirect` use it, this module selects them.

pub mod types;

pub use types::{CreditPriority, InterruptClass, InterruptRouter, RouteDecision, RouteRequest, RunClass, RunState, VcpuId, VcpuStates};

use crate::error::{at_least, ConfigError};
use crate::es2::Es2Redirect;
use crate::hbalance::HBalanceRouter;
use crate::vbalance::VBalanceRouter;

/// Physical destination mode: always the programmed vCPU.
#[derive(Debug, Clone)]
pub struct FixedRouter {
    n: usize,
}

impl FixedRouter {
    /// A fixed router for `n` vCPUs.
    pub fn new(n: usize) -> Self {
        Self { n }
    }
}

impl InterruptRouter for FixedRouter {
    fn n_vcpus(&self) -> usize {
        self.n
    }
    fn on_run_state(&mut self, _vcpu: VcpuId, _state: RunState) {}
    fn route(&mut self, req: RouteRequest) -> RouteDecision {
        RouteDecision::to(req.dest % self.n)
    }
}

/// Logical destination mode with lowest-priority delivery modelled as round-robin: each device
/// interrupt goes to the vCPU after the previous one (hBalance §4.2.1: "changes the targeted vCPU
/// for every interrupt"), regardless of run state.
#[derive(Debug, Clone)]
pub struct LowestPriorityRr {
    n: usize,
    next: VcpuId,
}

impl LowestPriorityRr {
    /// A round-robin router for `n` vCPUs, starting at vCPU 0.
    pub fn new(n: usize) -> Self {
        Self { n, next: 0 }
    }
}

impl InterruptRouter for LowestPriorityRr {
    fn n_vcpus(&self) -> usize {
        self.n
    }
    fn on_run_state(&mut self, _vcpu: VcpuId, _state: RunState) {}
    fn route(&mut self, req: RouteRequest) -> RouteDecision {
        if req.class != InterruptClass::Device {
            return RouteDecision::to(req.dest % self.n);
        }
        let t = self.next;
        self.next = (t + 1) % self.n;
        RouteDecision::to(t)
    }
}

/// The KVM testbed's router: the programmed vCPU if it is running, else the first running vCPU
/// after it (circularly), else the programmed vCPU. Run states come from observation (a guest
/// heartbeat), so they may lag; the router only needs them to be eventually right.
#[derive(Debug, Clone)]
pub struct RunningFirst {
    states: VcpuStates,
}

impl RunningFirst {
    /// A router for `n` vCPUs, all initially considered blocked.
    pub fn new(n: usize) -> Self {
        Self { states: VcpuStates::new(n) }
    }
}

impl InterruptRouter for RunningFirst {
    fn n_vcpus(&self) -> usize {
        self.states.len()
    }
    fn on_run_state(&mut self, vcpu: VcpuId, state: RunState) {
        self.states.set(vcpu, state);
    }
    fn route(&mut self, req: RouteRequest) -> RouteDecision {
        let dest = req.dest % self.states.len();
        if req.class != InterruptClass::Device {
            return RouteDecision::to(dest);
        }
        RouteDecision::to(self.states.find_from(dest, RunState::Running).unwrap_or(dest))
    }
}

/// Which router a VM uses (scenario-file form).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case", deny_unknown_fields)
)]
pub enum RouterConfig {
    /// [`FixedRouter`] (default: the guest's own affinity).
    #[default]
    Fixed,
    /// [`LowestPriorityRr`].
    LowestPriorityRr,
    /// [`RunningFirst`].
    RunningFirst,
    /// [`Es2Redirect`].
    Es2,
    /// [`HBalanceRouter`] (scenario name `h_balance`, as docs/kvm.md spells it; `hbalance`
    /// is accepted too).
    #[cfg_attr(feature = "serde", serde(alias = "hbalance"))]
    HBalance,
    /// [`VBalanceRouter`] (scenario name `v_balance`; a Xen PV device only).
    VBalance,
}

impl RouterConfig {
    /// Builds the router for a VM with `n_vcpus` vCPUs (at least 1).
    pub fn build(self, n_vcpus: usize) -> Result<Router, ConfigError> {
        at_least("vm.vcpus", n_vcpus, 1)?;
        Ok(match self {
            RouterConfig::Fixed => Router::Fixed(FixedRouter::new(n_vcpus)),
            RouterConfig::LowestPriorityRr => Router::LowestPriorityRr(LowestPriorityRr::new(n_vcpus)),
            RouterConfig::RunningFirst => Router::RunningFirst(RunningFirst::new(n_vcpus)),
            RouterConfig::Es2 => Router::Es2(Es2Redirect::new(n_vcpus)),
            RouterConfig::HBalance => Router::HBalance(HBalanceRouter::new(n_vcpus)),
            RouterConfig::VBalance => Router::VBalance(VBalanceRouter::new(n_vcpus)),
        })
    }
}

/// Any router, dispatched without boxing.
#[derive(Debug, Clone)]
pub enum Router {
    /// See [`FixedRouter`].
    Fixed(FixedRouter),
    /// See [`LowestPriorityRr`].
    LowestPriorityRr(LowestPriorityRr),
    /// See [`RunningFirst`].
    RunningFirst(RunningFirst),
    /// See [`Es2Redirect`].
    Es2(Es2Redirect),
    /// See [`HBalanceRouter`].
    HBalance(HBalanceRouter),
    /// See [`VBalanceRouter`].
    VBalance(VBalanceRouter),
}

impl Router {
    fn inner(&mut self) -> &mut dyn InterruptRouter {
        match self {
            Router::Fixed(r) => r,
            Router::LowestPriorityRr(r) => r,
            Router::RunningFirst(r) => r,
            Router::Es2(r) => r,
            Router::HBalance(r) => r,
            Router::VBalance(r) => r,
        }
    }

    /// Did the last decision rebind an event channel from the guest (vBalance's
    /// `EVTCHNOP_bind_vcpu`, a hypercall the caller charges)? Other routers never do.
    pub fn take_rebind(&mut self) -> bool {
        match self {
            Router::VBalance(r) => r.take_rebind(),
            _ => false,
        }
    }
}

impl InterruptRouter for Router {
    fn n_vcpus(&self) -> usize {
        match self {
            Router::Fixed(r) => r.n_vcpus(),
            Router::LowestPriorityRr(r) => r.n_vcpus(),
            Router::RunningFirst(r) => r.n_vcpus(),
            Router::Es2(r) => r.n_vcpus(),
            Router::HBalance(r) => r.n_vcpus(),
            Router::VBalance(r) => r.n_vcpus(),
        }
    }
    fn on_run_state(&mut self, vcpu: VcpuId, state: RunState) {
        self.inner().on_run_state(vcpu, state)
    }
    fn on_priority(&mut self, vcpu: VcpuId, prio: CreditPriority) {
        self.inner().on_priority(vcpu, prio)
    }
    fn route(&mut self, req: RouteRequest) -> RouteDecision {
        self.inner().route(req)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(dest: VcpuId) -> RouteRequest {
        RouteRequest { irq: 1, class: InterruptClass::Device, dest }
    }

    #[test]
    fn fixed_always_uses_programmed_destination() {
        let mut r = RouterConfig::Fixed.build(4).unwrap();
        r.on_run_state(2, RunState::Running);
        assert_eq!(r.route(dev(1)).target, 1);
        assert_eq!(r.route(dev(5)).target, 1); // modulo n
    }

    #[test]
    fn round_robin_rotates_device_interrupts_only() {
        let mut r = LowestPriorityRr::new(3);
        let t: Vec<_> = (0..4).map(|_| r.route(dev(0)).target).collect();
        assert_eq!(t, vec![0, 1, 2, 0]);
        let timer = RouteRequest { irq: 0, class: InterruptClass::Timer, dest: 2 };
        assert_eq!(r.route(timer).target, 2);
        assert_eq!(r.route(dev(0)).target, 1);
    }

    #[test]
    fn running_first_prefers_dest_then_next_running() {
        let mut r = RunningFirst::new(4);
        assert_eq!(r.route(dev(1)).target, 1); // nobody running: programmed
        r.on_run_state(0, RunState::Running);
        assert_eq!(r.route(dev(1)).target, 0); // wraps around to vCPU 0
        r.on_run_state(3, RunState::Running);
        assert_eq!(r.route(dev(1)).target, 3);
        r.on_run_state(1, RunState::Running);
        assert_eq!(r.route(dev(1)).target, 1);
        let ipi = RouteRequest { irq: 0, class: InterruptClass::Ipi, dest: 2 };
        assert_eq!(r.route(ipi).target, 2);
        r.on_run_state(99, RunState::Running); // ignored
    }

    #[test]
    fn build_rejects_a_vm_without_vcpus() {
        let e = RouterConfig::Es2.build(0).unwrap_err();
        assert_eq!(e.param, "vm.vcpus");
    }
}
