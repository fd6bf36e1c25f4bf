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
//! instantaneous `runnable_load_avg`). A `WF_SYNC` wake-up (`sock_def_readable`: data for a
//! socket's reader) discounts the waker's own load from its CPU's; the host's eventfd and
//! irqfd wake-ups are not sync.
//!
//! The three decisions are pure functions ([`affine_balanced`], [`wide`],
//! [`idle_sibling`]), tested against transcriptions of the 4.4 C code (`tests.rs`).

use crate::model::hypervisor::sched::Sched;
use crate::engine::Time;

/// `sd->imbalance_pct` of the LLC (MC) domain in Linux 4.4 `sd_init`.
pub(super) const IMBALANCE_PCT: u64 = 117;

impl Sched {
    /// Choose the pCPU for waking thread `t`.
    /// `waker` is the pCPU whose thread (`waker_thread`) or interrupt does the waking.
    /// `sync`: a `WF_SYNC` wake-up (the waker's load is discounted).
    pub(super) fn select_task_rq(&self, now: Time, t: u32, waker: Option<u32>, waker_thread: Option<u32>, sync: bool) -> u32 {
        let th = &self.threads[t as usize];
        let prev = th.cpu;
        if th.allowed.count_ones() == 1 {
            return th.allowed.trailing_zeros();
        }
        let mut target = prev;
        let wide = waker_thread.is_some_and(|w| self.wake_wide(w, t));
        if let Some(w) = waker.filter(|_| !wide) {
            let allowed = th.allowed.has(w);
            if allowed && w != prev && self.same_llc(w, prev) && self.wake_affine(now, t, w, prev, waker_thread.filter(|_| sync)) {
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

    /// `wake_wide` (4.4), on the two threads' `wakee_flips`.
    fn wake_wide(&self, waker: u32, wakee: u32) -> bool {
        let (a, b) = (self.threads[waker as usize].wakee_flips, self.threads[wakee as usize].wakee_flips);
        wide(a, b, self.p.cores_per_llc.clamp(1, self.ncpus()))
    }

    /// `wake_affine` (4.4) on the PELT loads of `this` (the waker's CPU; less the running
    /// `sync_waker`'s own load) and `prev` (without the woken thread, asleep).
    fn wake_affine(&self, now: Time, t: u32, this: u32, prev: u32, sync_waker: Option<u32>) -> bool {
        let discount = sync_waker.map_or(0.0, |w| self.thread_load(now, w));
        affine_balanced(self.runnable_load(now, this) - discount, self.runnable_load(now, prev), self.thread_load(now, t))
    }

    /// `select_idle_sibling` (4.4): see the module documentation.
    fn select_idle_sibling(&self, t: u32, prev: u32, target: u32) -> u32 {
        let allowed = self.threads[t as usize].allowed;
        idle_sibling(|c| self.idle(c), |c| allowed.has(c), prev, target, self.p.cores_per_llc, self.ncpus())
    }

    fn same_llc(&self, a: u32, b: u32) -> bool {
        let llc = self.p.cores_per_llc.max(1);
        a / llc == b / llc
    }
}

/// `wake_wide` (4.4): with `a` and `b` the waker's and the wakee's flips and `factor` the LLC
/// size, wide when the busier side flips at least `factor` times the other, which flips at
/// least `factor` times.
pub(super) fn wide(a: u32, b: u32, factor: u32) -> bool {
    let (master, slave) = (a.max(b), a.min(b));
    !(slave < factor || master < slave.saturating_mul(factor))
}

/// `wake_affine`'s balance test (4.4, equal CPU capacities, the root task group): pull when the
/// waker's CPU, with the woken thread's load `w` added, is no busier than the previous CPU by
/// more than half the domain's imbalance percentage; an unloaded waker's CPU always qualifies.
pub(super) fn affine_balanced(this_load: f64, prev_load: f64, w: f64) -> bool {
    if this_load <= 0.0 {
        return true;
    }
    100.0 * (this_load + w) <= (100 + (IMBALANCE_PCT - 100) / 2) as f64 * prev_load
}

/// `select_idle_sibling` (4.4) over CPUs `0..ncpus` in LLCs of `llc` CPUs, single-CPU groups.
pub(super) fn idle_sibling(idle: impl Fn(u32) -> bool, allowed: impl Fn(u32) -> bool, prev: u32, target: u32, llc: u32, ncpus: u32) -> u32 {
    if idle(target) {
        return target;
    }
    let llc = llc.max(1);
    if prev != target && prev / llc == target / llc && idle(prev) {
        return prev;
    }
    let first = target / llc * llc;
    let last = (first + llc).min(ncpus);
    // Groups are single cores; the walk starts at the target's group and wraps.
    for k in 1..(last - first) {
        let c = first + (target - first + k) % (last - first);
        if idle(c) && allowed(c) {
            return c;
        }
    }
    target
}
