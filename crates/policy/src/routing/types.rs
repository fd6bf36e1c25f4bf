//! The interrupt-routing interface: what a router is asked ([`RouteRequest`]) and answers
//! ([`RouteDecision`]), what it is told (each vCPU's [`RunState`] and Xen [`CreditPriority`]), and
//! the [`InterruptRouter`] trait. Depends on no router; every router depends on it.

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

/// Xen credit-scheduler priority of a vCPU (hBalance §5.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CreditPriority {
    /// Consumed more than its allocation (credit < 0).
    Over,
    /// Has unused quota.
    Under,
    /// Xen's wake-up BOOST, or hBalance's `SMP_BOOST` (higher than all others).
    Boost,
}


/// What was running when an interrupt was raised for a VM, as a router sees it: the home
/// (programmed destination) vCPU, only another vCPU of the VM (the case a run-state router
/// fixes: hBalance §3.2, ES2 §4.3), or none. Both worlds class their interrupt generators' raises
/// with it (the testbed's `irqgen` from heartbeats, the simulator's `irq_source` from its
/// scheduler) to split latency by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunClass {
    /// The home vCPU was running.
    HomeRunning = 0,
    /// The home vCPU was not, another vCPU of the VM was.
    OtherRunning = 1,
    /// No vCPU of the VM was running.
    NoneRunning = 2,
}

impl RunClass {
    /// The classes' names (summary keys), by index.
    pub const KEYS: [&'static str; 3] = ["home_running", "other_running", "none_running"];

    /// The class of a raise aimed at `home`, given which vCPUs were running.
    pub fn of(running: &[bool], home: usize) -> Self {
        if running.get(home).copied().unwrap_or(false) {
            Self::HomeRunning
        } else if running.iter().any(|r| *r) {
            Self::OtherRunning
        } else {
            Self::NoneRunning
        }
    }
}

#[cfg(test)]
mod run_class_tests {
    use super::RunClass;

    #[test]
    fn home_first_then_any_other_then_none() {
        assert_eq!(RunClass::of(&[true, true], 0), RunClass::HomeRunning);
        assert_eq!(RunClass::of(&[false, true], 0), RunClass::OtherRunning);
        assert_eq!(RunClass::of(&[false, false], 0), RunClass::NoneRunning);
        assert_eq!(RunClass::of(&[true], 3), RunClass::OtherRunning, "a home out of range is not running");
        assert_eq!(RunClass::KEYS[RunClass::OtherRunning as usize], "other_running");
    }
}
