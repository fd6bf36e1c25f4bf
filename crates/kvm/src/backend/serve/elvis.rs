//! ELVIS (§3) on the testbed: one thread, the policy's `ElvisScheduler` picks every turn.
use super::{Took, Worker};
use crate::vmm::sys::now_ns;
use eventpath_policy::elvis::{ElvisDecision, ElvisScheduler, ModeChange, QueueMode, ServeAction, Source};
use std::sync::atomic::Ordering;

impl Worker {
    /// ELVIS (§3): one thread serves every device through the policy's `ElvisScheduler`. Kicks
    /// feed its work queue (and its rate counter, which moves a queue to the poll queue: kicks
    /// disabled); each turn serves one queue until it is empty or the scheduler says leave
    /// (max_work, or min_work with another queue stuck, the stuck rule being off by default).
    /// A notified queue found empty re-arms its kick (avail_event) and re-checks, as vhost does;
    /// a polled queue found empty more than poll_idle_ns of wall time after its last work goes
    /// back to notifications (the prototype's rule, as in the simulator). The thread sleeps only
    /// when both queues are empty.
    pub(super) fn run_elvis(&mut self, mut sched: ElvisScheduler, fds: &mut [libc::pollfd]) {
        let n = self.devs.len();
        while !self.stop.load(Ordering::Relaxed) {
            self.fire_deadlines();
            // Kicks that came while serving: only queues in notification mode can kick.
            if (0..n).any(|i| matches!(sched.mode(i), Some(QueueMode::Notify { .. }))) {
                for i in self.kicked(fds, 0) {
                    self.elvis_kick(&mut sched, i);
                }
            }
            let (i, src) = match sched.next(now_ns()) {
                ElvisDecision::Idle => {
                    let timeout_ns = self.wait_timeout_ns();
                    for i in self.kicked(fds, timeout_ns) {
                        self.elvis_kick(&mut sched, i);
                    }
                    continue;
                }
                ElvisDecision::Serve(i, src) => (i, src),
            };
            self.c.bump(if src == Source::Poll { &self.c.elvis_poll_turns } else { &self.c.elvis_work_turns }, 1);
            let polled = matches!(sched.mode(i), Some(QueueMode::Polled { .. }));
            loop {
                match self.take(i) {
                    Took::Request(_) | Took::Bad => {
                        if sched.on_request(now_ns()) == ServeAction::Leave {
                            self.c.bump(&self.c.elvis_leaves, 1);
                            break;
                        }
                    }
                    Took::Empty => {
                        let now = now_ns();
                        let change = sched.on_empty(now);
                        let raced = if change == ModeChange::StopPolling {
                            self.c.bump(&self.c.elvis_stop_polling, 1);
                            self.enable_kicks(i)
                        } else if !polled {
                            let d = &self.devs[i];
                            d.q.enable_notification(&d.mem) // re-arm avail_event past what was taken
                        } else {
                            false
                        };
                        if raced {
                            sched.on_host_work(i, now); // no kick will come for these
                        }
                        break;
                    }
                }
            }
            self.signal(i);
        }
    }

    fn elvis_kick(&mut self, sched: &mut ElvisScheduler, i: usize) {
        if sched.on_kick(i, now_ns()) == ModeChange::StartPolling {
            self.c.bump(&self.c.elvis_start_polling, 1);
            self.disable_kicks(i);
        }
    }
}
