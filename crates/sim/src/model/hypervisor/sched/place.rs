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
//! `wake_wide` vetoes the pull to the waker's CPU when waker and wakee switch partners often
//! (a dispatcher waking many workers): with `wakee_flips` of both at least the LLC size apart
//! by that factor, the wakee is placed near its previous CPU instead.
//!
//! Loads are PELT averages (`load.rs`), as `wake_affine` reads them (`wake_idx` 0: the
//! instantaneous `runnable_load_avg`). Simplification (documented in docs/model.md): eventfd
//! and irqfd wake-ups are not `WF_SYNC`, so the waker's own load is never discounted.

use crate::model::hypervisor::sched::Sched;
use crate::engine::Time;

/// `sd->imbalance_pct` of the LLC (MC) domain in Linux 4.4 `sd_init`.
pub(super) const IMBALANCE_PCT: u64 = 117;

impl Sched {
    /// Choose the pCPU for waking thread `t`.
    /// `waker` is the pCPU whose thread (`waker_thread`) or interrupt does the waking.
    pub(super) fn select_task_rq(&self, now: Time, t: u32, waker: Option<u32>, waker_thread: Option<u32>) -> u32 {
        let th = &self.threads[t as usize];
        let prev = th.cpu;
        if th.allowed.count_ones() == 1 {
            return th.allowed.trailing_zeros();
        }
        let mut target = prev;
        let wide = waker_thread.is_some_and(|w| self.wake_wide(w, t));
        if let Some(w) = waker.filter(|_| !wide) {
            let allowed = th.allowed.has(w);
            if allowed && w != prev && self.same_llc(w, prev) && self.wake_affine(now, t, w, prev) {
                target = w;
            }
        }
        let c = self.select_idle_sibling(t, prev, target);
        if th.allowed.has(c) {
            c
        } else {
            // The previous CPU may have left the mask (never here: masks are fixed); first allowed.
            th.allowed.trailing_zeros()
        }
    }

    /// `wake_wide` (4.4): a many-to-one waking pattern (flips of the busier side at least the
    /// LLC size times the other's, and the other's at least the LLC size) spreads wakees.
    fn wake_wide(&self, waker: u32, wakee: u32) -> bool {
        let (a, b) = (self.threads[waker as usize].wakee_flips, self.threads[wakee as usize].wakee_flips);
        let (master, slave) = (a.max(b), a.min(b));
        let factor = self.p.cores_per_llc.clamp(1, self.ncpus());
        !(slave < factor || master < slave.saturating_mul(factor))
    }

    /// `wake_affine` (4.4): pull to the waker's CPU if that does not make it busier than the
    /// previous CPU by more than half the domain's imbalance percentage (PELT loads; the woken
    /// thread is no longer counted on its previous CPU; an unloaded waker CPU always qualifies).
    fn wake_affine(&self, now: Time, t: u32, this: u32, prev: u32) -> bool {
        let w = self.thread_load(now, t);
        let this_load = self.runnable_load(now, this);
        let load = self.runnable_load(now, prev);
        if this_load <= 0.0 {
            return true;
        }
        let this_eff = 100.0 * (this_load + w);
        let prev_eff = (100 + (IMBALANCE_PCT - 100) / 2) as f64 * load;
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
            if self.idle(c) && allowed.has(c) {
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
