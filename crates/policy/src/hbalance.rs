//! hBalance (Xen): scheduling-aware interrupt routing (Algorithm 1, §4.2.1, §5.1) and
//! I/O-friendly CPU quota allocation (Algorithm 2, §4.2.2).
//!
//! Algorithm 1, per virtual interrupt `int` of an SMP-VM with N vCPUs:
//!
//! ```text
//! if int.cur_vcpu is waiting in the runqueue:
//!     k = int.cur_vcpu.id
//!     if run_bitmap != 0: j = first running vCPU searching from bit k+1
//!     else:
//!         j = blk_bitmap != 0 ? first blocked vCPU from bit k+1 : (k+1) % N
//!         if the SMP-VM has unused quota: int.next_vcpu.priority = HighestPrio   (BOOST)
//!     int.cur_vcpu = j
//! inject into int.cur_vcpu
//! ```
//!
//! Choices where the paper is silent: the bitmap search wraps around (bits k+1..N-1, then
//! 0..k), as a circular "logically next" search; the interrupt's first `cur_vcpu` is the
//! guest-programmed destination; "the SMP-VM has unused quota" is read from the credit priorities
//! the router is told: some vCPU is UNDER or BOOST (Xen marks a vCPU OVER once its credit is
//! negative, §5.1).

use std::collections::BTreeMap;

pub use crate::routing::types::CreditPriority;
use crate::routing::types::{InterruptClass, InterruptRouter, RouteDecision, RouteRequest, RunState, VcpuId, VcpuStates};

/// hBalance Algorithm 1 for one VM.
#[derive(Debug, Clone)]
pub struct HBalanceRouter {
    states: VcpuStates,
    prios: Vec<CreditPriority>,
    /// `int.cur_vcpu` per interrupt source.
    cur: BTreeMap<u32, VcpuId>,
}

impl HBalanceRouter {
    /// A router for `n` vCPUs (≥ 1), all blocked and UNDER.
    pub fn new(n: usize) -> Self {
        Self { states: VcpuStates::new(n), prios: vec![CreditPriority::Under; n], cur: BTreeMap::new() }
    }

    /// "The SMP-VM has unused quota": some vCPU is not OVER.
    pub fn vm_has_unused_quota(&self) -> bool {
        self.prios.iter().any(|p| *p != CreditPriority::Over)
    }

    /// Current `int.cur_vcpu` of source `irq`, if it has been routed before.
    pub fn cur_vcpu(&self, irq: u32) -> Option<VcpuId> {
        self.cur.get(&irq).copied()
    }
}

impl InterruptRouter for HBalanceRouter {
    fn n_vcpus(&self) -> usize {
        self.states.len()
    }
    fn on_run_state(&mut self, vcpu: VcpuId, state: RunState) {
        self.states.set(vcpu, state);
    }
    fn on_priority(&mut self, vcpu: VcpuId, prio: CreditPriority) {
        if let Some(p) = self.prios.get_mut(vcpu) {
            *p = prio;
        }
    }
    fn route(&mut self, req: RouteRequest) -> RouteDecision {
        let n = self.states.len();
        let dest = req.dest % n;
        if req.class != InterruptClass::Device {
            return RouteDecision::to(dest);
        }
        let k = *self.cur.entry(req.irq).or_insert(dest);
        let mut boost = false;
        if self.states.get(k) == RunState::Runnable {
            let start = (k + 1) % n;
            let j = match self.states.find_from(start, RunState::Running) {
                Some(j) => j,
                None => {
                    let j = self.states.find_from(start, RunState::Blocked).unwrap_or(start);
                    boost = self.vm_has_unused_quota();
                    j
                }
            };
            self.cur.insert(req.irq, j);
            return RouteDecision { target: j, boost };
        }
        RouteDecision { target: k, boost }
    }
}

/// How a VM's quota is split among its vCPUs each refill period.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(rename_all = "snake_case"))]
pub enum QuotaAllocation {
    /// Eq. (1): each vCPU gets `new_quota / N` on top of what it has left (Xen credit default).
    #[default]
    Equal,
    /// Algorithm 2: aggregate the remaining quota and rebalance so that all vCPUs end equal.
    IoFriendly,
}

/// One quota refill for an SMP-VM: updates each vCPU's remaining quota (`remaining[i]`, in
/// credits; may be negative) in place, adding the VM's `new_quota` for this period.
///
/// * [`QuotaAllocation::Equal`], Eq. (1): `Quota(vcpu_i) += new_quota / N`.
/// * [`QuotaAllocation::IoFriendly`], Algorithm 2:
///   `Quota(vcpu_i) = (Σ_j Quota(vcpu_j) + new_quota) / N` for every i.
///
/// Integer remainders (which the paper's real-valued formulas do not have) go one credit each to
/// the lowest-numbered vCPUs, so that the VM's total is conserved exactly. Capping credit (Xen
/// discards credit above a bound) is the scheduler's business, not this function's.
pub fn refill_quota(alloc: QuotaAllocation, remaining: &mut [i64], new_quota: i64) {
    let n = remaining.len() as i64;
    if n == 0 {
        return;
    }
    let spread = |total: i64, out: &mut dyn FnMut(usize, i64)| {
        let (q, r) = (total.div_euclid(n), total.rem_euclid(n));
        for i in 0..n {
            out(i as usize, q + i64::from(i < r));
        }
    };
    match alloc {
        QuotaAllocation::Equal => spread(new_quota, &mut |i, share| remaining[i] = remaining[i].saturating_add(share)),
        QuotaAllocation::IoFriendly => {
            let total = remaining.iter().fold(0i64, |a, &b| a.saturating_add(b)).saturating_add(new_quota);
            spread(total, &mut |i, share| remaining[i] = share)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(dest: VcpuId) -> RouteRequest {
        RouteRequest { irq: 7, class: InterruptClass::Device, dest }
    }

    #[test]
    fn stays_on_current_vcpu_unless_it_waits_in_runqueue() {
        let mut r = HBalanceRouter::new(4);
        r.on_run_state(2, RunState::Running);
        // cur = dest = 0, blocked: no redirect (injection wakes it).
        assert_eq!(r.route(dev(0)), RouteDecision::to(0));
        r.on_run_state(0, RunState::Running);
        assert_eq!(r.route(dev(0)).target, 0);
    }

    #[test]
    fn preempted_current_moves_to_next_running_vcpu_without_boost() {
        let mut r = HBalanceRouter::new(4);
        for (v, s) in [(0, RunState::Runnable), (1, RunState::Blocked), (2, RunState::Running), (3, RunState::Running)] {
            r.on_run_state(v, s);
        }
        assert_eq!(r.route(dev(0)), RouteDecision { target: 2, boost: false });
        assert_eq!(r.cur_vcpu(7), Some(2));
        // Sticky (small batching): stays on 2 while it runs, even though 3 also runs.
        assert_eq!(r.route(dev(0)).target, 2);
        // 2 preempted: search starts at bit 3.
        r.on_run_state(2, RunState::Runnable);
        assert_eq!(r.route(dev(0)).target, 3);
    }

    #[test]
    fn running_search_wraps_around() {
        let mut r = HBalanceRouter::new(4);
        r.on_run_state(3, RunState::Runnable);
        r.on_run_state(1, RunState::Running);
        assert_eq!(r.route(dev(3)).target, 1);
    }

    #[test]
    fn no_running_vcpu_picks_next_blocked_and_boosts_with_unused_quota() {
        let mut r = HBalanceRouter::new(4);
        for (v, s) in [(0, RunState::Runnable), (1, RunState::Runnable), (2, RunState::Blocked), (3, RunState::Runnable)] {
            r.on_run_state(v, s);
        }
        assert_eq!(r.route(dev(0)), RouteDecision { target: 2, boost: true });
    }

    #[test]
    fn all_waiting_picks_neighbour_and_no_boost_when_quota_used_up() {
        let mut r = HBalanceRouter::new(3);
        for v in 0..3 {
            r.on_run_state(v, RunState::Runnable);
            r.on_priority(v, CreditPriority::Over);
        }
        assert_eq!(r.route(dev(2)), RouteDecision { target: 0, boost: false });
    }

    #[test]
    fn timers_and_ipis_are_never_redirected() {
        let mut r = HBalanceRouter::new(2);
        r.on_run_state(0, RunState::Runnable);
        r.on_run_state(1, RunState::Running);
        let t = RouteRequest { irq: 0, class: InterruptClass::Timer, dest: 0 };
        assert_eq!(r.route(t), RouteDecision::to(0));
    }

    #[test]
    fn equal_refill_carries_imbalance_over() {
        let mut q = vec![-100, 200, 200, 200];
        refill_quota(QuotaAllocation::Equal, &mut q, 400);
        assert_eq!(q, vec![0, 300, 300, 300]);
    }

    #[test]
    fn io_friendly_refill_rebalances_and_conserves_total() {
        let mut q = vec![-100, 200, 200, 200];
        refill_quota(QuotaAllocation::IoFriendly, &mut q, 400);
        assert_eq!(q, vec![225, 225, 225, 225]);
        let mut q = vec![1, 0, 0];
        refill_quota(QuotaAllocation::IoFriendly, &mut q, 1);
        assert_eq!(q, vec![1, 1, 0]);
        let mut q = vec![-10, 0, 0];
        refill_quota(QuotaAllocation::IoFriendly, &mut q, 0);
        assert_eq!(q.iter().sum::<i64>(), -10);
        assert!(q.iter().max().unwrap() - q.iter().min().unwrap() <= 1);
    }
}
