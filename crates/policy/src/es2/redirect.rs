//! ES2 intelligent interrupt redirection (§4.3, §5.4–5.5).
//!
//! Online/offline vCPU lists are kept from scheduling notifications (`kvm_sched_in` /
//! `kvm_sched_out`, §5.4). For a device interrupt:
//! * if the last chosen vCPU is still online, keep it (cache affinity: "keeps redirecting the
//!   subsequent interrupts to it until it is descheduled");
//! * else, if some vCPU is online, choose the one that has processed the fewest interrupts and make
//!   it the sticky choice;
//! * else, the head of the offline list: the vCPU descheduled longest ago, predicted to run first.
//!
//! Timer interrupts and IPIs are not redirected (§5.5). Choices where the paper is silent: ties in
//! the interrupt count go to the vCPU that came online first; at start all vCPUs are offline in id
//! order; a vCPU moving between runnable and blocked keeps its offline-list position (only a
//! deschedule appends); interrupts sent to an offline vCPU also count as processed by it.

use std::collections::VecDeque;

use crate::routing::types::{InterruptClass, InterruptRouter, RouteDecision, RouteRequest, RunState, VcpuId};

/// ES2's redirection state for one VM.
#[derive(Debug, Clone)]
pub struct Es2Redirect {
    n: usize,
    /// Online vCPUs, in the order they came online.
    online: Vec<VcpuId>,
    /// Offline vCPUs, in descheduling order (head = offline longest).
    offline: VecDeque<VcpuId>,
    /// Interrupts routed to each vCPU.
    processed: Vec<u64>,
    /// The vCPU receiving interrupts until it is descheduled.
    sticky: Option<VcpuId>,
}

impl Es2Redirect {
    /// State for `n` vCPUs (≥ 1), all offline.
    pub fn new(n: usize) -> Self {
        Self { n, online: Vec::new(), offline: (0..n).collect(), processed: vec![0; n], sticky: None }
    }

    /// Online list, in the order vCPUs came online.
    pub fn online(&self) -> &[VcpuId] {
        &self.online
    }

    /// Offline list, head first.
    pub fn offline(&self) -> impl Iterator<Item = VcpuId> + '_ {
        self.offline.iter().copied()
    }

    /// Interrupts routed to `vcpu` so far.
    pub fn processed(&self, vcpu: VcpuId) -> u64 {
        self.processed.get(vcpu).copied().unwrap_or(0)
    }
}

impl InterruptRouter for Es2Redirect {
    fn n_vcpus(&self) -> usize {
        self.n
    }

    fn on_run_state(&mut self, vcpu: VcpuId, state: RunState) {
        if vcpu >= self.n {
            return;
        }
        let is_online = self.online.contains(&vcpu);
        match (state, is_online) {
            (RunState::Running, false) => {
                self.offline.retain(|&v| v != vcpu);
                self.online.push(vcpu);
            }
            (RunState::Runnable | RunState::Blocked, true) => {
                self.online.retain(|&v| v != vcpu);
                self.offline.push_back(vcpu);
                if self.sticky == Some(vcpu) {
                    self.sticky = None;
                }
            }
            _ => {}
        }
    }

    fn route(&mut self, req: RouteRequest) -> RouteDecision {
        let dest = req.dest % self.n;
        if req.class != InterruptClass::Device {
            return RouteDecision::to(dest);
        }
        let target = match self.sticky {
            Some(v) => v,
            None => match self.online.iter().copied().min_by_key(|&v| self.processed[v]) {
                Some(v) => {
                    self.sticky = Some(v);
                    v
                }
                None => self.offline.front().copied().unwrap_or(dest),
            },
        };
        self.processed[target] += 1;
        RouteDecision::to(target)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev() -> RouteRequest {
        RouteRequest { irq: 1, class: InterruptClass::Device, dest: 0 }
    }

    #[test]
    fn picks_least_loaded_online_and_sticks_until_descheduled() {
        let mut r = Es2Redirect::new(3);
        r.on_run_state(1, RunState::Running);
        assert_eq!(r.route(dev()).target, 1);
        r.on_run_state(2, RunState::Running);
        // 2 has processed fewer, but 1 is sticky while online.
        assert_eq!(r.route(dev()).target, 1);
        assert_eq!(r.processed(1), 2);
        r.on_run_state(1, RunState::Runnable);
        assert_eq!(r.route(dev()).target, 2);
        r.on_run_state(1, RunState::Running);
        assert_eq!(r.route(dev()).target, 2); // sticky again
    }

    #[test]
    fn least_loaded_tie_goes_to_first_online() {
        let mut r = Es2Redirect::new(3);
        r.on_run_state(2, RunState::Running);
        r.on_run_state(0, RunState::Running);
        assert_eq!(r.route(dev()).target, 2);
    }

    #[test]
    fn no_online_vcpu_picks_longest_offline() {
        let mut r = Es2Redirect::new(3);
        for v in [2, 0, 1] {
            r.on_run_state(v, RunState::Running);
        }
        for v in [0, 2, 1] {
            r.on_run_state(v, RunState::Runnable);
        }
        assert_eq!(r.offline().collect::<Vec<_>>(), vec![0, 2, 1]);
        assert_eq!(r.route(dev()).target, 0);
        // Runnable -> blocked keeps the position.
        r.on_run_state(0, RunState::Blocked);
        assert_eq!(r.route(dev()).target, 0);
    }

    #[test]
    fn timer_interrupts_are_not_redirected() {
        let mut r = Es2Redirect::new(2);
        r.on_run_state(1, RunState::Running);
        let t = RouteRequest { irq: 0, class: InterruptClass::Timer, dest: 0 };
        assert_eq!(r.route(t).target, 0);
        assert_eq!(r.processed(0) + r.processed(1), 0);
    }
}
