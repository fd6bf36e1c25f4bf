//! Wake-up placement, after Linux 4.4 `select_task_rq_fair` (kernel/sched/fair.c).
//!
//! For a wake-up (`SD_BALANCE_WAKE`) the kernel first asks `wake_affine` whether the thread
//! may be pulled to the waker's CPU, then `select_idle_sibling` looks for an idle CPU near the
//! chosen target inside its last-level cache:
//!
//! 1. the target itself if idle;
//! 2. else the previous CPU if idle and sharing the cache with the target;
//! 3. else the first scheduling group (a core: no SMT here) of the LLC domain other than the
//!    target's whose CPUs are all idle and one of them allowed;
//! 4. else the target.
//!
//! Simplifications (documented in docs/model.md): loads are instantaneous runqueue weights
//! rather than PELT averages; `wake_wide` is not modelled (one waker, one wakee here); eventfd
//! and irqfd wake-ups are not `WF_SYNC`, so the waker's own load is never discounted.

use super::Sched;

/// `sd->imbalance_pct` of the LLC (MC) domain in Linux 4.4 `sd_init`.
const IMBALANCE_PCT: u64 = 117;

impl Sched {
    /// Choose the pCPU for waking thread `t`.
    pub(super) fn select_task_rq(&self, t: u32, waker: Option<u32>) -> u32 {
        let th = &self.threads[t as usize];
        let prev = th.cpu;
        if th.allowed.count_ones() == 1 {
            return th.allowed.trailing_zeros();
        }
        let mut target = prev;
        if let Some(w) = waker {
            let allowed = th.allowed >> w & 1 == 1;
            if allowed && w != prev && self.same_llc(w, prev) && self.wake_affine(t, w, prev) {
                target = w;
            }
        }
        let c = self.select_idle_sibling(t, prev, target);
        if th.allowed >> c & 1 == 1 {
            c
        } else {
            // The previous CPU may have left the mask (never here: masks are fixed); first allowed.
            th.allowed.trailing_zeros()
        }
    }

    /// `wake_affine` (4.4): pull to the waker's CPU if that does not make it busier than the
    /// previous CPU by more than half the domain's imbalance percentage.
    fn wake_affine(&self, t: u32, this: u32, prev: u32) -> bool {
        let w = self.threads[t as usize].weight;
        let this_load = self.weight_sum(this);
        let load = self.weight_sum(prev);
        let this_eff = 100 * (this_load + w);
        let prev_eff = (100 + (IMBALANCE_PCT - 100) / 2) * load;
        this_eff <= prev_eff
    }

    /// `select_idle_sibling` (4.4): see the module documentation.
    fn select_idle_sibling(&self, t: u32, prev: u32, target: u32) -> u32 {
        if self.idle(target) {
            return target;
        }
        if prev != target && self.same_llc(prev, target) && self.idle(prev) {
            return prev;
        }
        let allowed = self.threads[t as usize].allowed;
        let llc = self.p.cores_per_llc.max(1);
        let first = target / llc * llc;
        let last = (first + llc).min(self.ncpus());
        // Groups are single cores; the walk starts at the target's group and wraps.
        for k in 1..(last - first) {
            let c = first + (target - first + k) % (last - first);
            if self.idle(c) && allowed >> c & 1 == 1 {
                return c;
            }
        }
        target
    }

    fn same_llc(&self, a: u32, b: u32) -> bool {
        let llc = self.p.cores_per_llc.max(1);
        a / llc == b / llc
    }
}
