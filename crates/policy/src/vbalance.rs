//! vBalance (Cheng and Wang, SoCC 2012; ref. [13] of hBalance): the *guest* moves a PV device's
//! event channel to a running vCPU, from the vCPU run states the hypervisor exports to it.
//!
//! hBalance §4.1.2 (and its Table 1) describes it against hBalance: Xen's event channels are
//! vCPU-specific, so the hypervisor cannot redirect an event; the guest must rebind the channel
//! itself (`EVTCHNOP_bind_vcpu`, a hypercall per migration), from each vCPU's scheduling state
//! that "the hypervisor passes to the guest space, using an additional communication channel";
//! it works for PV guests only, and it has no scheduler half (no BOOST, no quota rebalancing).
//!
//! Our reading, where the paper is silent (kept simple, one state machine per VM):
//! - The binding starts at the guest-programmed destination (vCPU 0, as vanilla Xen binds).
//! - When an event is sent while the bound vCPU is preempted (runnable, waiting in a runqueue)
//!   and another vCPU of the VM runs, the guest rebinds the channel to the first running vCPU
//!   after the bound one (circular search, as hBalance's) and the event goes there. The rebind
//!   is one `EVTCHNOP_bind_vcpu` hypercall, which the caller charges (see
//!   [`VBalanceRouter::take_rebind`]). The binding stays where it moved (sticky), so a vCPU
//!   that keeps running keeps the channel without further hypercalls.
//! - A blocked bound vCPU keeps the event (Xen wakes it, with the credit scheduler's ordinary
//!   wake-up BOOST); with no vCPU running the event waits on the bound one: no BOOST of its own.
//! - The run states are taken as current when the guest reads them (the hypervisor writes the
//!   exported state at each context switch); the lag of the real exchange is not modelled (a
//!   time-free policy has no clock; hBalance's Fig. 7 shows vBalance's ping RTT as close to
//!   hBalance's, which fresh states give).
//! - Only device interrupts (event channels of netfront) move; timers and IPIs never do.

use crate::routing::types::{InterruptClass, InterruptRouter, RouteDecision, RouteRequest, RunState, VcpuId, VcpuStates};

/// vBalance's in-guest event-channel balancer for one VM.
#[derive(Debug, Clone)]
pub struct VBalanceRouter {
    states: VcpuStates,
    /// The vCPU each event channel (interrupt source) is bound to.
    bound: std::collections::BTreeMap<u32, VcpuId>,
    /// Rebinding hypercalls made and not yet taken by the caller.
    owed: u32,
    /// Rebinding hypercalls made in all.
    rebinds: u64,
}

impl VBalanceRouter {
    /// A balancer for `n` vCPUs (≥ 1), all blocked.
    pub fn new(n: usize) -> Self {
        Self { states: VcpuStates::new(n), bound: Default::default(), owed: 0, rebinds: 0 }
    }

    /// The vCPU source `irq` is bound to, if it has had an event.
    pub fn bound(&self, irq: u32) -> Option<VcpuId> {
        self.bound.get(&irq).copied()
    }

    /// Did the last [`InterruptRouter::route`] rebind its channel (one `EVTCHNOP_bind_vcpu`
    /// the caller charges to the vCPU the channel moved to)? Clears the mark.
    pub fn take_rebind(&mut self) -> bool {
        let owed = self.owed > 0;
        self.owed = 0;
        owed
    }

    /// Rebinding hypercalls made so far.
    pub fn rebinds(&self) -> u64 {
        self.rebinds
    }
}

impl InterruptRouter for VBalanceRouter {
    fn n_vcpus(&self) -> usize {
        self.states.len()
    }
    fn on_run_state(&mut self, vcpu: VcpuId, state: RunState) {
        self.states.set(vcpu, state);
    }
    fn route(&mut self, req: RouteRequest) -> RouteDecision {
        let n = self.states.len();
        let dest = req.dest % n;
        self.owed = 0;
        if req.class != InterruptClass::Device {
            return RouteDecision::to(dest);
        }
        let k = *self.bound.entry(req.irq).or_insert(dest);
        if self.states.get(k) == RunState::Runnable {
            if let Some(j) = self.states.find_from((k + 1) % n, RunState::Running) {
                self.bound.insert(req.irq, j);
                self.owed = 1;
                self.rebinds += 1;
                return RouteDecision::to(j);
            }
        }
        RouteDecision::to(k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(irq: u32) -> RouteRequest {
        RouteRequest { irq, class: InterruptClass::Device, dest: 0 }
    }

    #[test]
    fn starts_on_the_programmed_vcpu_and_stays_while_it_runs() {
        let mut r = VBalanceRouter::new(4);
        r.on_run_state(0, RunState::Running);
        r.on_run_state(2, RunState::Running);
        assert_eq!(r.route(dev(1)).target, 0);
        assert!(!r.take_rebind());
        assert_eq!(r.bound(1), Some(0));
    }

    #[test]
    fn a_preempted_binding_moves_to_the_next_running_vcpu_with_one_hypercall() {
        let mut r = VBalanceRouter::new(4);
        r.on_run_state(0, RunState::Runnable);
        r.on_run_state(3, RunState::Running);
        let d = r.route(dev(1));
        assert_eq!(d, RouteDecision::to(3), "first running after vCPU 0, circularly; never a boost");
        assert!(r.take_rebind());
        assert!(!r.take_rebind(), "taken once");
        // Sticky: vCPU 3 keeps it while it runs, with no further hypercall.
        r.on_run_state(0, RunState::Running);
        assert_eq!(r.route(dev(1)).target, 3);
        assert!(!r.take_rebind());
        assert_eq!(r.rebinds(), 1);
    }

    #[test]
    fn a_blocked_binding_or_no_running_vcpu_keeps_the_event_and_never_boosts() {
        let mut r = VBalanceRouter::new(3);
        r.on_run_state(1, RunState::Running);
        // vCPU 0 blocked: Xen wakes it; the guest does not move the channel.
        assert_eq!(r.route(dev(1)), RouteDecision::to(0));
        // vCPU 0 preempted and nobody running: it waits on vCPU 0, no boost.
        r.on_run_state(0, RunState::Runnable);
        r.on_run_state(1, RunState::Blocked);
        assert_eq!(r.route(dev(1)), RouteDecision::to(0));
        assert!(!r.take_rebind());
    }

    #[test]
    fn each_channel_has_its_own_binding_and_timers_and_ipis_never_move() {
        let mut r = VBalanceRouter::new(2);
        r.on_run_state(0, RunState::Runnable);
        r.on_run_state(1, RunState::Running);
        assert_eq!(r.route(dev(7)).target, 1);
        assert_eq!(r.bound(8), None);
        let timer = RouteRequest { irq: 0, class: InterruptClass::Timer, dest: 0 };
        assert_eq!(r.route(timer).target, 0);
        assert!(!r.take_rebind(), "a timer's routing clears the mark and makes no hypercall");
        let ipi = RouteRequest { irq: 0, class: InterruptClass::Ipi, dest: 0 };
        assert_eq!(r.route(ipi).target, 0);
        r.on_run_state(9, RunState::Running); // out of range: ignored
        assert_eq!(r.n_vcpus(), 2);
    }
}
