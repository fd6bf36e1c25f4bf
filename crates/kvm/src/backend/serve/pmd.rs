//! A poll-mode back end on the testbed (`[host.io] handling = "pmd"`): the policy's
//! `PmdThread` (`eventpath_policy::pmd`) decides what the thread does after each iteration; this
//! file only carries it out.
//!
//! * An iteration looks at every queue in turn and takes up to `burst` requests from each
//!   (DPDK's `rte_vhost_dequeue_burst`), then makes each queue's interrupt decision.
//! * Kicks are off for good (`disable_notification` once, at start) and the thread never
//!   reads its kick eventfd: nothing wakes it. With event indices a disabled queue writes
//!   nothing, so the guest still kicks when its index crosses the stale avail_event, once per
//!   2^16 requests (and for the first request), as under a DPDK vhost PMD.
//! * `PollAgain`: the next iteration at once (`idle = "busy"`: the thread's CPU is ~100 %).
//! * `Sleep { ns }`: a timed sleep of exactly that long (`nanosleep`; the thread's timer slack
//!   is 1 ns, `sys::exact_timed_sleeps`); requests arriving meanwhile wait, as under OVS-DPDK's
//!   `pmd-maxsleep`.
//! * `WaitForWork`: DPDK's monitor mode parks the core in UMWAIT on the avail index
//!   (`rte_vhost_get_monitor_addr`) until the guest writes it. A user thread here has no
//!   UMWAIT on guest memory, so the thread spins on the avail indices with `pause` instead,
//!   for at most UMWAIT's OS cap per wait. Wake-up on write, no kick and no exit are kept; the
//!   power saving is not (the core stays in C0 and the thread's CPU time counts the wait, as
//!   it would under UMWAIT too: the kernel sees a running task). Counter `pmd_wait_ns`.
use super::{Took, Worker};
use crate::vmm::sys::{rdtsc, tsc_to_ns};
use eventpath_policy::pmd::{PmdDecision, PmdThread};
use std::sync::atomic::Ordering;
use std::time::Duration;

/// The longest one UMWAIT lasts under Linux: `umwait_control`'s default maximum time, 100,000
/// TSC cycles (arch/x86/kernel/cpu/umwait.c), after which DPDK's loop polls again.
const UMWAIT_MAX_TSC: u64 = 100_000;

impl Worker {
    /// The PMD thread's loop: iterations over every queue, the policy's decision after each.
    pub(super) fn run_pmd(&mut self, mut pmd: PmdThread) {
        let burst = pmd.burst();
        while !self.stop.load(Ordering::Relaxed) {
            self.fire_deadlines();
            self.c.bump(&self.c.pmd_iterations, 1);
            let mut most = 0;
            for i in 0..self.devs.len() {
                let got = self.pmd_look(i, burst);
                most = most.max(got);
            }
            match pmd.after_iteration(most) {
                PmdDecision::PollAgain => {}
                PmdDecision::Sleep { ns } => {
                    self.c.bump(&self.c.pmd_sleeps, 1);
                    self.c.bump(&self.c.pmd_sleep_ns, ns);
                    std::thread::sleep(Duration::from_nanos(ns));
                }
                PmdDecision::WaitForWork => self.wait_for_write(),
            }
        }
    }

    /// One look at queue `i`: up to `burst` entries (bad ones count: they were taken), then the
    /// interrupt decision.
    fn pmd_look(&mut self, i: usize, burst: u32) -> u32 {
        let mut got = 0;
        while got < burst {
            if let Took::Empty = self.take(i) {
                break;
            }
            got += 1;
        }
        if got > 0 {
            self.signal(i);
        }
        got
    }

    /// Monitor mode's wait: until a queue's avail index moves, the stop flag, or UMWAIT's cap.
    fn wait_for_write(&mut self) {
        let t0 = rdtsc();
        while !self.devs.iter().any(|d| d.q.has_work(&d.mem)) && rdtsc().wrapping_sub(t0) < UMWAIT_MAX_TSC && !self.stop.load(Ordering::Relaxed) {
            std::hint::spin_loop();
        }
        self.c.bump(&self.c.pmd_waits, 1);
        self.c.bump(&self.c.pmd_wait_ns, tsc_to_ns(rdtsc().wrapping_sub(t0)) as u64);
    }
}
