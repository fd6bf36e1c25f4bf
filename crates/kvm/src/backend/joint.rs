//! The ES2 joint thread's adapter on the testbed (`[host.io] handling = "vhost"` or `"es2"`):
//! which handler runs next, and when the thread sleeps, is the policy's `JointThread`
//! (§5.1–5.3); each device is one (TX) handler whose turn is its vhost handler loop, its
//! perceptive switch or its optimistic switch — the same machines, in the same order, as the
//! simulator's adapter (`crates/sim/src/model/io/es2.rs`; `tests/es2_two_worlds.rs` holds the
//! two to the same decisions). The adapter owns that state and sees the rings only through
//! [`Rings`]: the back-end thread's devices (`serve/joint.rs`) or a test's scripted rings.
//!
//! Kicks reach the scheduling list whatever the thread is doing: Linux's eventfd wake-up queues
//! vhost work at once (`vhost_poll_queue`), and the simulator adds a kicked handler when the
//! kick arrives. The testbed reads its kick eventfds at the end of every turn, before the
//! turn's own list operation (its requeue), so a kick that came during a turn is queued before
//! the handler that ran, as in both of those, in the order they came (`Rings::kicks`). (Reading
//! them only when nothing was queued let one optimistic queue, re-queued after every poll,
//! starve every other device: issue 26.)
use super::Took;
use eventpath_policy::es2::{
    HandlerKind, JointDecision, JointThread, OptimisticAction, OptimisticTx, PerceptiveAction, PerceptiveEvent, PerceptiveHandler,
};
use eventpath_policy::vhost::{VhostAction, VhostConfig, VhostEvent, VhostHandler};
use eventpath_sim::scenario::{Es2Switch, Handling, IoHandling};

/// The rings a joint thread serves, as its adapter needs them.
pub trait Rings {
    /// Takes device `i`'s next request and serves it (used entry written).
    fn take(&mut self, i: usize) -> Took;
    /// Re-enables `i`'s kicks; true if requests raced the re-enable (no kick comes for them):
    /// `DeviceQueue::enable_notification`.
    fn enable_kicks(&mut self, i: usize) -> bool;
    /// Suppresses `i`'s kicks.
    fn disable_kicks(&mut self, i: usize);
    /// The devices that kicked since the last look, in the order they kicked, without waiting.
    fn kicks(&mut self) -> Vec<usize>;
    /// Now, ns (the policy's clock).
    fn now_ns(&mut self) -> u64;
}

/// One device's handler.
enum Handler {
    /// handling = "vhost": the vhost handler loop (handle_tx_copy).
    Vhost(VhostHandler),
    /// es2, switch = "perceptive".
    Perceptive(PerceptiveHandler),
    /// es2, switch = "optimistic": the switch, and the regular handler that serves the queue in
    /// notification mode.
    Optimistic(OptimisticTx, VhostHandler),
}

/// One joint thread's policy state: its lists and sleeps, and each device's handler.
pub struct JointAdapter {
    joint: JointThread,
    handlers: Vec<Handler>,
}

impl JointAdapter {
    /// An idle thread of `devices` devices under `[host.io]` `io` (vhost or es2); `vhost` is the
    /// vhost handler loop's configuration (an optimistic queue in notification mode runs
    /// vhost's defaults, as in the simulator).
    pub fn new(io: &IoHandling, vhost: &VhostConfig, devices: usize) -> Self {
        let (switch, p, o, j) = io.es2();
        let handler = || match (io.handling, switch) {
            (Handling::Es2, Es2Switch::Perceptive) => Handler::Perceptive(PerceptiveHandler::new(&p)),
            (Handling::Es2, Es2Switch::Optimistic) => Handler::Optimistic(OptimisticTx::new(&o), VhostHandler::new(VhostConfig::default())),
            _ => Handler::Vhost(VhostHandler::new(vhost.clone())),
        };
        JointAdapter { joint: JointThread::new(&j), handlers: (0..devices).map(|_| handler()).collect() }
    }

    /// What the thread does next (`JointThread::next`).
    pub fn next(&mut self, now_ns: u64) -> JointDecision {
        self.joint.next(now_ns)
    }

    /// A kick on device `i`: its handler goes on the scheduling list (perceptive: if its switch
    /// says so).
    pub fn on_kick(&mut self, i: usize) {
        let add = match &mut self.handlers[i] {
            Handler::Perceptive(p) => p.step(PerceptiveEvent::Kick) == PerceptiveAction::Enqueue,
            _ => true,
        };
        if add {
            self.joint.add(i, HandlerKind::Regular);
        }
    }

    /// Takes in the kicks that came meanwhile (before a turn's own list operation).
    fn take_kicks(&mut self, r: &mut impl Rings) {
        for i in r.kicks() {
            self.on_kick(i);
        }
    }

    /// Device `i`'s turn, chosen by [`Self::next`]; kicks that came during it are taken in.
    pub fn run(&mut self, i: usize, r: &mut impl Rings) {
        match self.handlers[i] {
            Handler::Vhost(_) => self.run_vhost(i, r),
            Handler::Perceptive(_) => self.run_perceptive(i, r),
            Handler::Optimistic(ref o, _) if o.is_poll() => self.run_optimistic_poll(i, r),
            Handler::Optimistic(..) => self.run_vhost(i, r),
        }
    }

    /// The vhost handler loop until Sleep or Requeue (vhost, or an optimistic queue in
    /// notification mode).
    fn run_vhost(&mut self, i: usize, r: &mut impl Rings) {
        let mut act = self.vhost_step(i, VhostEvent::Run);
        loop {
            act = match act {
                VhostAction::DisableNotifyAndDrain => {
                    r.disable_kicks(i);
                    self.vhost_take(i, r)
                }
                VhostAction::ProcessNext => self.vhost_take(i, r),
                VhostAction::BusyPoll { until_ns } => {
                    let now = r.now_ns();
                    if now < until_ns {
                        self.vhost_take(i, r)
                    } else {
                        self.vhost_step(i, VhostEvent::Empty { now_ns: now })
                    }
                }
                VhostAction::EnableNotifyAndRecheck => {
                    let has_work = r.enable_kicks(i);
                    self.vhost_step(i, VhostEvent::Recheck { has_work })
                }
                VhostAction::Requeue => {
                    self.take_kicks(r);
                    self.joint.add(i, HandlerKind::Regular);
                    return;
                }
                VhostAction::Sleep | VhostAction::Ignored => {
                    self.take_kicks(r);
                    if matches!(&self.handlers[i], Handler::Optimistic(o, _) if o.is_poll()) {
                        // The optimistic switch taken during this turn: a polling handler now.
                        r.disable_kicks(i);
                        self.joint.add(i, HandlerKind::Polling);
                    }
                    return;
                }
            }
        }
    }

    fn vhost_step(&mut self, i: usize, ev: VhostEvent) -> VhostAction {
        match &mut self.handlers[i] {
            Handler::Vhost(h) | Handler::Optimistic(_, h) => h.step(ev),
            Handler::Perceptive(_) => VhostAction::Ignored,
        }
    }

    fn vhost_take(&mut self, i: usize, r: &mut impl Rings) -> VhostAction {
        match r.take(i) {
            Took::Request(bytes) => {
                self.optimistic_reply(i);
                self.vhost_step(i, VhostEvent::Buffer { bytes })
            }
            Took::Bad => self.vhost_step(i, VhostEvent::Buffer { bytes: 0 }),
            Took::Empty => {
                let now = r.now_ns();
                self.vhost_step(i, VhostEvent::Empty { now_ns: now })
            }
        }
    }

    /// ES2 perceptive: poll while each turn fills the quota, back to notifications otherwise;
    /// at quota the handler goes back on the list (`requeue_quota`: the joint thread sleeps
    /// 10 µs first when it is alone there, §5.2).
    fn run_perceptive(&mut self, i: usize, r: &mut impl Rings) {
        let mut act = self.perceptive_step(i, PerceptiveEvent::Scheduled);
        loop {
            act = match act {
                PerceptiveAction::DisableNotifyAndPoll | PerceptiveAction::PollNext => {
                    if act == PerceptiveAction::DisableNotifyAndPoll {
                        r.disable_kicks(i);
                    }
                    match r.take(i) {
                        Took::Request(_) | Took::Bad => self.perceptive_step(i, PerceptiveEvent::Request),
                        Took::Empty => self.perceptive_step(i, PerceptiveEvent::Empty),
                    }
                }
                PerceptiveAction::EnableNotifyAndRecheck => {
                    let has_work = r.enable_kicks(i);
                    self.perceptive_step(i, PerceptiveEvent::Recheck { has_work })
                }
                PerceptiveAction::YieldTurn => {
                    self.take_kicks(r);
                    let now = r.now_ns();
                    self.joint.requeue_quota(i, now);
                    return;
                }
                _ => return self.take_kicks(r),
            }
        }
    }

    fn perceptive_step(&mut self, i: usize, ev: PerceptiveEvent) -> PerceptiveAction {
        match &mut self.handlers[i] {
            Handler::Perceptive(p) => p.step(ev),
            _ => PerceptiveAction::Ignored,
        }
    }

    /// ES2 optimistic: each completion is what the guest answers (its "RX packet", Algorithm 2;
    /// the simulator's io/es2.rs maps a request stream's completions the same way): poll the
    /// queue up to max_poll_count rounds, then back to notifications. A switch taken inside a
    /// notification-mode turn applies when that turn ends (`run_vhost`), after the regular
    /// handler has finished its loop.
    fn optimistic_reply(&mut self, i: usize) {
        if let Handler::Optimistic(o, _) = &mut self.handlers[i] {
            o.on_rx_packet();
        }
    }

    /// One poll of an optimistic queue: at most the vhost packet weight of requests (as the
    /// simulator's `es2_take`: one busy queue cannot keep the thread), then the switch counts
    /// the poll: `PollAgain` puts it on the polling list (the joint thread runs the scheduling
    /// list first and sleeps 10 µs when only polling handlers are left, §5.3).
    fn run_optimistic_poll(&mut self, i: usize, r: &mut impl Rings) {
        let weight = VhostConfig::default().pkt_weight;
        let mut taken = 0;
        while taken < weight {
            match r.take(i) {
                Took::Request(_) => {
                    taken += 1;
                    self.optimistic_reply(i);
                }
                Took::Bad => taken += 1,
                Took::Empty => break,
            }
        }
        self.take_kicks(r);
        let Handler::Optimistic(o, _) = &mut self.handlers[i] else { return };
        match o.on_tx_polled() {
            OptimisticAction::PollAgain => self.joint.requeue_polling(i),
            // Kicks back on; requests that raced the re-enable are served as after a kick.
            OptimisticAction::EnableNotifyAndRecheck if r.enable_kicks(i) => {
                self.joint.add(i, HandlerKind::Regular);
            }
            _ => {}
        }
    }
}
