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
//! Algorithm 1). [`RouterConfig::build`] makes any of them as a [`Router`].

use crate::error::{at_least, ConfigError};
use crate::es2::Es2Redirect;
use crate::hbalance::{CreditPriority, HBalanceRouter};

/// Index of a vCPU within its VM (0-based).
pub type VcpuId = usize;

/// Scheduling state of a vCPU, as the hypervisor scheduler sees it (DESIGN §3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(rename_all = "snake_case"))]
pub enum RunState {
    /// In guest mode on a pCPU ("online" in ES2's terms).
    Running,
    /// Preempted, waiting in a runqueue ("waiting" in hBalance's terms).
    Runnable,
    /// Halted with nothing to do.
    Blocked,
}

/// What kind of interrupt is being routed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InterruptClass {
    /// An I/O device interrupt (MSI/MSI-X, event channel): OS-specific, may be redirected.
    Device,
    /// A vCPU's local timer: CPU-specific, never redirected.
    Timer,
    /// An inter-processor interrupt: CPU-specific, never redirected.
    Ipi,
}

/// One interrupt to route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteRequest {
    /// Interrupt source (GSI / MSI route / event channel). Routers that keep per-source state
    /// (hBalance's `int.cur_vcpu`) key it by this.
    pub irq: u32,
    /// Kind of interrupt.
    pub class: InterruptClass,
    /// The destination the guest programmed. Taken modulo the VM's vCPU count.
    pub dest: VcpuId,
}

/// The router's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteDecision {
    /// The vCPU to inject into.
    pub target: VcpuId,
    /// hBalance's BOOST rule: raise `target` to the highest scheduling priority so that it
    /// preempts the running vCPU (hBalance §4.2.1, `SMP_BOOST`). Always false for other routers.
    pub boost: bool,
}

impl RouteDecision {
    /// A decision without boost.
    pub fn to(target: VcpuId) -> Self {
        Self { target, boost: false }
    }
}

/// An interrupt router for one VM.
pub trait InterruptRouter {
    /// Number of vCPUs of the VM.
    fn n_vcpus(&self) -> usize;
    /// vCPU `vcpu` changed run state. Out-of-range ids are ignored.
    fn on_run_state(&mut self, vcpu: VcpuId, state: RunState);
    /// vCPU `vcpu`'s credit priority changed (Xen credit). Default: ignored.
    fn on_priority(&mut self, _vcpu: VcpuId, _prio: CreditPriority) {}
    /// Chooses the target of one interrupt.
    fn route(&mut self, req: RouteRequest) -> RouteDecision;
}

/// Run states of a VM's vCPUs, as last reported; all start [`RunState::Blocked`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VcpuStates(Vec<RunState>);

impl VcpuStates {
    /// `n` vCPUs, all blocked.
    pub fn new(n: usize) -> Self {
        Self(vec![RunState::Blocked; n])
    }
    /// Number of vCPUs.
    pub fn len(&self) -> usize {
        self.0.len()
    }
    /// True when there are no vCPUs.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// State of `vcpu` (`Blocked` when out of range).
    pub fn get(&self, vcpu: VcpuId) -> RunState {
        self.0.get(vcpu).copied().unwrap_or(RunState::Blocked)
    }
    /// Records a state; returns false (and changes nothing) when `vcpu` is out of range.
    pub fn set(&mut self, vcpu: VcpuId, state: RunState) -> bool {
        match self.0.get_mut(vcpu) {
            Some(s) => {
                *s = state;
                true
            }
            None => false,
        }
    }
    /// First vCPU in `state` searching circularly from `start` (inclusive).
    pub fn find_from(&self, start: VcpuId, state: RunState) -> Option<VcpuId> {
        let n = self.0.len();
        (0..n).map(|i| (start + i) % n).find(|&v| self.0[v] == state)
    }
}

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
}

impl Router {
    fn inner(&mut self) -> &mut dyn InterruptRouter {
        match self {
            Router::Fixed(r) => r,
            Router::LowestPriorityRr(r) => r,
            Router::RunningFirst(r) => r,
            Router::Es2(r) => r,
            Router::HBalance(r) => r,
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
