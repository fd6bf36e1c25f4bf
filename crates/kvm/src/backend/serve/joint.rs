//! The ES2 joint thread on the testbed (handling "vhost" and "es2"): which handler
//! runs next, and when the thread sleeps, is the policy's `JointThread` (§5.1–5.3), as in the
//! simulator's adapter (`crates/sim/src/model/es2_io.rs`); each device is one (TX) handler.
//!
//! Kicks reach the scheduling list whatever the thread is doing: in Linux the eventfd's wake-up
//! callback queues the vhost work (`vhost_poll_queue`) at once, so the thread looks at the kick
//! eventfds without blocking before every decision. (Reading them only when nothing was queued
//! let one optimistic queue, re-queued after every poll, starve every other device of its VM's
//! kicks: issue 26.)
use super::{Handler, Took, Worker};
use crate::vmm::sys::now_ns;
use eventpath_policy::es2::{HandlerKind, JointDecision, OptimisticAction, PerceptiveAction, PerceptiveEvent};
use eventpath_policy::vhost::{VhostAction, VhostConfig, VhostEvent};
use std::sync::atomic::Ordering;

impl Worker {
    /// The joint thread's loop: take in kicks, then run the handler the policy picks, sleep
    /// (interruptibly: a kick ends the sleep) or wait for a kick or a moderation deadline.
    pub(super) fn run_joint(&mut self, fds: &mut [libc::pollfd]) {
        while !self.stop.load(Ordering::Relaxed) {
            self.fire_deadlines();
            if self.joint.scheduling_list().next().is_some() || self.joint.polling_list().next().is_some() {
                for i in self.kicked(fds, 0) {
                    self.on_kick(i);
                }
            }
            match self.joint.next(now_ns()) {
                JointDecision::Run(i, _kind) => {
                    match self.devs[i].handler {
                        Handler::Vhost(_) => self.run_vhost(i),
                        Handler::Perceptive(_) => self.run_perceptive(i),
                        Handler::Optimistic(..) => self.run_optimistic(i),
                        Handler::Elvis | Handler::Pmd => {}
                    }
                    self.signal(i);
                }
                JointDecision::Sleep { until_ns } => {
                    self.c.bump(&self.c.short_sleeps, 1);
                    for i in self.kicked(fds, until_ns.saturating_sub(now_ns()).max(1)) {
                        self.on_kick(i);
                    }
                }
                JointDecision::Idle => {
                    let timeout_ns = self.wait_timeout_ns();
                    for i in self.kicked(fds, timeout_ns) {
                        self.on_kick(i);
                    }
                }
            }
        }
    }

    /// A kick on device `i`: its handler goes on the scheduling list (perceptive: if its switch
    /// says so).
    fn on_kick(&mut self, i: usize) {
        let add = match &mut self.devs[i].handler {
            Handler::Perceptive(p) => p.step(PerceptiveEvent::Kick) == PerceptiveAction::Enqueue,
            _ => true,
        };
        if add {
            self.joint.add(i, HandlerKind::Regular);
        }
    }

    /// Exit-based: the vhost handler loop (handle_tx_copy) until Sleep or Requeue.
    fn run_vhost(&mut self, i: usize) {
        let mut act = self.vhost_step(i, VhostEvent::Run);
        loop {
            act = match act {
                VhostAction::DisableNotifyAndDrain => {
                    self.disable_kicks(i);
                    self.vhost_take(i)
                }
                VhostAction::ProcessNext => self.vhost_take(i),
                VhostAction::BusyPoll { until_ns } => {
                    if now_ns() < until_ns {
                        self.vhost_take(i)
                    } else {
                        self.vhost_step(i, VhostEvent::Empty { now_ns: now_ns() })
                    }
                }
                VhostAction::EnableNotifyAndRecheck => {
                    let has_work = self.enable_kicks(i);
                    self.vhost_step(i, VhostEvent::Recheck { has_work })
                }
                VhostAction::Requeue => {
                    self.joint.add(i, HandlerKind::Regular);
                    return;
                }
                VhostAction::Sleep | VhostAction::Ignored => {
                    if matches!(&self.devs[i].handler, Handler::Optimistic(o, _) if o.is_poll()) {
                        // The optimistic switch taken during this turn: a polling handler now.
                        self.disable_kicks(i);
                        self.joint.add(i, HandlerKind::Polling);
                    }
                    return;
                }
            }
        }
    }

    fn vhost_step(&mut self, i: usize, ev: VhostEvent) -> VhostAction {
        match &mut self.devs[i].handler {
            Handler::Vhost(h) | Handler::Optimistic(_, h) => h.step(ev),
            _ => VhostAction::Ignored,
        }
    }

    fn vhost_take(&mut self, i: usize) -> VhostAction {
        match self.take(i) {
            Took::Request(bytes) => {
                self.optimistic_reply(i);
                self.vhost_step(i, VhostEvent::Buffer { bytes })
            }
            Took::Bad => self.vhost_step(i, VhostEvent::Buffer { bytes: 0 }),
            Took::Empty => self.vhost_step(i, VhostEvent::Empty { now_ns: now_ns() }),
        }
    }

    /// ES2 perceptive: poll while each turn fills the quota, back to notifications otherwise;
    /// at quota the handler goes back on the list (`requeue_quota`: the joint thread sleeps
    /// 10 µs first when it is alone there, §5.2).
    fn run_perceptive(&mut self, i: usize) {
        let step = |s: &mut Self, ev| match &mut s.devs[i].handler {
            Handler::Perceptive(p) => p.step(ev),
            _ => PerceptiveAction::Ignored,
        };
        let mut act = step(self, PerceptiveEvent::Scheduled);
        loop {
            act = match act {
                PerceptiveAction::DisableNotifyAndPoll | PerceptiveAction::PollNext => {
                    if act == PerceptiveAction::DisableNotifyAndPoll {
                        self.disable_kicks(i);
                    }
                    match self.take(i) {
                        Took::Request(_) | Took::Bad => step(self, PerceptiveEvent::Request),
                        Took::Empty => step(self, PerceptiveEvent::Empty),
                    }
                }
                PerceptiveAction::EnableNotifyAndRecheck => {
                    let has_work = self.enable_kicks(i);
                    step(self, PerceptiveEvent::Recheck { has_work })
                }
                PerceptiveAction::YieldTurn => {
                    self.joint.requeue_quota(i, now_ns());
                    return;
                }
                _ => return,
            }
        }
    }

    /// ES2 optimistic: each completion is what the guest answers (its "RX packet", Algorithm 2;
    /// the simulator's es2_io.rs maps a request stream's completions the same way): poll the
    /// queue up to max_poll_count rounds, then back to notifications. A switch taken inside a
    /// notification-mode turn applies when that turn ends (`run_vhost`), after the regular
    /// handler has finished its loop.
    fn optimistic_reply(&mut self, i: usize) {
        if let Handler::Optimistic(o, _) = &mut self.devs[i].handler {
            if o.on_rx_packet() == OptimisticAction::DisableNotifyAndEnqueue {
                self.c.bump(&self.c.mode_switches, 1);
            }
        }
    }

    /// One poll of an optimistic queue: at most the vhost packet weight of requests (as the
    /// simulator's `es2_take`: one busy queue cannot keep the thread), then the switch counts
    /// the poll: `PollAgain` puts it on the polling list (the joint thread runs the scheduling
    /// list first and sleeps 10 µs when only polling handlers are left, §5.3).
    fn run_optimistic(&mut self, i: usize) {
        let polling = matches!(&self.devs[i].handler, Handler::Optimistic(o, _) if o.is_poll());
        if !polling {
            return self.run_vhost(i);
        }
        let weight = VhostConfig::default().pkt_weight;
        let mut taken = 0;
        while taken < weight {
            match self.take(i) {
                Took::Request(_) => {
                    taken += 1;
                    self.optimistic_reply(i);
                }
                Took::Bad => taken += 1,
                Took::Empty => break,
            }
        }
        let act = match &mut self.devs[i].handler {
            Handler::Optimistic(o, _) => o.on_tx_polled(),
            _ => OptimisticAction::Ignored,
        };
        match act {
            OptimisticAction::PollAgain => self.joint.requeue_polling(i),
            OptimisticAction::EnableNotifyAndRecheck => {
                if self.enable_kicks(i) {
                    // Requests raced the re-enable: serve them as after a kick.
                    self.joint.add(i, HandlerKind::Regular);
                }
            }
            _ => {}
        }
    }
}
