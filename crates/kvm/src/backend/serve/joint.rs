//! The joint thread's loop (`[host.io] handling = "vhost" | "es2"`): the policy's decisions
//! come from [`JointAdapter`] (`backend/joint.rs`); this file gives it the thread's rings and
//! carries out its sleeps. Sleeps are ppoll(2) on the kick eventfds: a kick ends them (counter
//! `short_sleeps` counts the timed ones).
use super::{Took, Worker};
use crate::backend::joint::{JointAdapter, Rings};
use crate::vmm::sys::now_ns;
use eventpath_policy::es2::JointDecision;
use std::sync::atomic::Ordering;

/// The thread's devices as the adapter sees them.
struct WorkerRings<'a> {
    w: &'a mut Worker,
    fds: &'a mut [libc::pollfd],
}

impl Rings for WorkerRings<'_> {
    fn take(&mut self, i: usize) -> Took {
        self.w.take(i)
    }
    fn enable_kicks(&mut self, i: usize) -> bool {
        self.w.enable_kicks(i)
    }
    fn disable_kicks(&mut self, i: usize) {
        self.w.disable_kicks(i)
    }
    fn kicks(&mut self) -> Vec<usize> {
        self.w.kicked(self.fds, 0)
    }
    fn now_ns(&mut self) -> u64 {
        now_ns()
    }
}

impl Worker {
    /// Runs the handler the policy picks (its interrupt decision after its turn), or sleeps
    /// (interruptibly: a kick ends the sleep), or waits for a kick or a moderation deadline.
    pub(super) fn run_joint(&mut self, mut a: JointAdapter, fds: &mut [libc::pollfd]) {
        while !self.stop.load(Ordering::Relaxed) {
            self.fire_deadlines();
            match a.next(now_ns()) {
                JointDecision::Run(i, _kind) => {
                    a.run(i, &mut WorkerRings { w: self, fds });
                    self.signal(i);
                }
                JointDecision::Sleep { until_ns } => {
                    self.c.bump(&self.c.short_sleeps, 1);
                    for i in self.kicked(fds, until_ns.saturating_sub(now_ns()).max(1)) {
                        a.on_kick(i);
                    }
                }
                JointDecision::Idle => {
                    let timeout_ns = self.wait_timeout_ns();
                    for i in self.kicked(fds, timeout_ns) {
                        a.on_kick(i);
                    }
                }
            }
        }
    }
}
