//! The host kernel's housekeeping on each pCPU (issue 48, "hosts as they run"): the host
//! tick's own work, and one per-CPU kernel thread (kworker, watchdog) that a periodic timer
//! wakes at its own phase. A wake-up preempts the pCPU's thread (CFS places the long sleeper
//! half a latency back, `place_entity`), runs `kthread_ns`, and sleeps; the pCPU then runs
//! its leftmost thread — not necessarily the one it took the pCPU from — so each pCPU's
//! round of always-runnable vCPUs drifts on its own, as no two pCPUs of a real host keep
//! one phase. Values from `[housekeeping]` of the profile (its kernel's defaults, sourced
//! there); `threads.rs` runs the thread and the tick's work.

use crate::engine::{round_ns, Time};
use crate::profile::Profile;

/// The housekeeping a pCPU gets (all 0: a quiet host).
#[derive(Debug, Clone, Copy, Default)]
pub struct Housekeeping {
    /// The host tick's own work on a pCPU that runs a thread.
    pub tick_ns: Time,
    /// Period of each pCPU's kernel thread's timer; 0: no kernel threads.
    pub kthread_interval_ns: Time,
    /// What one wake-up of it runs.
    pub kthread_ns: Time,
}

impl Housekeeping {
    /// The profile's housekeeping, on a Linux host scheduled by CFS (`linux`); none under Xen
    /// or its credit scheduler (the hypervisor's own timers and softirqs make no scheduling
    /// decision among the guests' vCPUs, and dom0's kernel threads run on dom0's vCPUs), nor
    /// where the profile leaves a key out (a Xen host's profile may).
    pub fn of(p: &Profile, linux: bool) -> Housekeeping {
        let ns = |v: &Option<crate::profile::Param>| v.as_ref().map_or(0, |v| round_ns(v.value));
        match &p.housekeeping {
            Some(h) if linux => Housekeeping {
                tick_ns: ns(&h.tick_ns),
                kthread_interval_ns: ns(&h.kthread_interval_ns),
                kthread_ns: ns(&h.kthread_ns),
            },
            _ => Housekeeping::default(),
        }
    }

    /// Whether each pCPU has a kernel thread.
    pub fn kthreads(&self) -> bool {
        self.kthread_interval_ns > 0
    }
}
