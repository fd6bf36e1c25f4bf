//! ES2 hybrid I/O handling (ES2 §4.2, §5.1–5.3): the adapter between a joint I/O thread and
//! `eventpath_policy::es2` — the joint thread's scheduling and polling lists and sleeps
//! (`JointThread`), each TX queue's perceptive (`PerceptiveHandler`) or optimistic
//! (`OptimisticTx`) mode switch, and a regular vhost handler (`VhostHandler`) for every RX
//! queue and for an optimistic TX queue in notification mode. The KVM testbed's back end drives
//! the same machines (`crates/kvm/src/backend/serve/joint.rs`). The adapter sees its rings only
//! through [`Queues`]: the I/O thread's view of the model's, or a driver's outside the model
//! (`es2_driver.rs`, which the KVM crate's two-worlds test runs beside the testbed's adapter).
//!
//! A device's handlers are `2 × local` (TX) and `2 × local + 1` (RX), `local` its index among
//! the joint thread's devices. What the adapter does with each action:
//! * a TX kick: perceptive `Kick` → `Enqueue` adds the handler (regular); an optimistic queue in
//!   notification mode is a regular vhost handler, added on its kick;
//! * an RX kick or a packet on the tap socket adds the RX handler (regular);
//! * a received packet taken by the RX handler of an optimistic device: `on_rx_packet` →
//!   disable TX kicks and add the TX handler as a *polling* handler;
//! * perceptive `YieldTurn` → `requeue_quota` (the 10 µs sleep when it is alone); optimistic
//!   `PollAgain` → `requeue_polling`; `EnableNotifyAndRecheck` with requests → a regular turn.
//! * a `request_stream` has no RX path: the completion of each of its requests is what its
//!   guest answers (with the next request), so it is the optimistic switch's "packet"
//!   (`on_rx_packet`), in both worlds (the testbed's `serve/joint.rs` maps it the same way).
//!   Taken during a notification-mode turn, the switch applies when that turn ends (kicks off,
//!   a polling handler queued): the regular handler first finishes its own loop.

use crate::model::io::queues::{recheck, DevRings, Notice, Notified, Queues, Work};
use crate::model::io::seam::{per_group, Backend, Decision, Take, Turn, TurnMode, View};
use crate::engine::Time;
use crate::config::{Es2Switch, IoHandling};
use eventpath_policy::es2::{
    HandlerKind, JointConfig, JointDecision, JointThread, OptimisticAction, OptimisticConfig, OptimisticTx, PerceptiveAction,
    PerceptiveConfig, PerceptiveEvent, PerceptiveHandler,
};
use eventpath_policy::vhost::{VhostAction, VhostConfig, VhostEvent, VhostHandler};

/// A TX queue's mode switch.
enum Es2Tx {
    Perceptive(PerceptiveHandler),
    /// The switch, and the regular handler that serves the queue in notification mode.
    Optimistic(OptimisticTx, VhostHandler),
}

/// The ES2 state of one joint thread.
pub(crate) struct Es2Io {
    joint: JointThread,
    tx: Vec<Es2Tx>,
    rx: Vec<VhostHandler>,
    /// Per device: its guest answers each TX completion (a request stream).
    replies: Vec<bool>,
}

impl Es2Io {
    /// A joint thread for `n` devices; `replies[i]`: device `i`'s guest answers its TX
    /// completions as it would a received packet.
    pub fn new(n: usize, switch: Es2Switch, p: &PerceptiveConfig, o: &OptimisticConfig, j: &JointConfig, vhost: &VhostConfig, replies: Vec<bool>) -> Self {
        let tx = (0..n)
            .map(|_| match switch {
                Es2Switch::Perceptive => Es2Tx::Perceptive(PerceptiveHandler::new(p)),
                Es2Switch::Optimistic => Es2Tx::Optimistic(OptimisticTx::new(o), VhostHandler::new(vhost.clone())),
            })
            .collect();
        Es2Io { joint: JointThread::new(j), tx, rx: (0..n).map(|_| VhostHandler::new(vhost.clone())).collect(), replies }
    }

    /// Work arrived for the joint thread's device `local`.
    pub fn notice(&mut self, _now: Time, local: usize, _dev: u32, n: Notice, _v: &mut impl Queues) {
        match n {
            Notice::TxKick => {
                let add = match &mut self.tx[local] {
                    Es2Tx::Perceptive(p) => p.step(PerceptiveEvent::Kick) == PerceptiveAction::Enqueue,
                    Es2Tx::Optimistic(..) => true,
                };
                if add {
                    self.joint.add(handler(local, false), HandlerKind::Regular);
                }
            }
            Notice::RxKick | Notice::RxPacket => {
                self.joint.add(handler(local, true), HandlerKind::Regular);
            }
        }
    }

    /// The joint thread's next handler, or its sleep; a chosen handler starts its turn.
    pub fn decide(&mut self, now: Time, devs: &[u32], v: &mut impl Queues) -> Decision {
        match self.next(now) {
            JointDecision::Run(h, _kind) => Decision::Turn(self.start(h, devs[h / 2], v)),
            JointDecision::Sleep { until_ns } => Decision::Sleep { until: Some(until_ns), notice: true, write: false },
            JointDecision::Idle => Decision::Sleep { until: None, notice: true, write: false },
        }
    }

    /// What the joint thread does next (`JointThread::next`): handler `2 × local` is device
    /// `local`'s TX queue, `2 × local + 1` its RX queue.
    pub fn next(&mut self, now: Time) -> JointDecision {
        self.joint.next(now)
    }

    /// Handler `h`, chosen by [`Self::next`], starts its turn on its device `dev`.
    pub fn start(&mut self, h: usize, dev: u32, v: &mut impl Queues) -> Turn {
        let (local, rx) = (h / 2, h % 2 == 1);
        let mode = if rx {
            if self.rx[local].step(VhostEvent::Run) == VhostAction::DisableNotifyAndDrain {
                v.rx_ring(dev).disable_notification();
            }
            TurnMode::Regular
        } else {
            match &mut self.tx[local] {
                Es2Tx::Perceptive(p) => match p.step(PerceptiveEvent::Scheduled) {
                    PerceptiveAction::DisableNotifyAndPoll => {
                        v.tx_ring(dev).disable_notification();
                        TurnMode::Perceptive
                    }
                    PerceptiveAction::PollNext => TurnMode::Perceptive,
                    _ => TurnMode::Nothing,
                },
                // Algorithm 2: a queue marked `is_poll` is polled whichever list it came from.
                Es2Tx::Optimistic(o, _) if o.is_poll() => TurnMode::OptimisticPoll,
                Es2Tx::Optimistic(_, h) => {
                    if h.step(VhostEvent::Run) == VhostAction::DisableNotifyAndDrain {
                        v.tx_ring(dev).disable_notification();
                    }
                    TurnMode::Regular
                }
            }
        };
        Turn { local, rx, taken: 0, mode }
    }

    /// The turn's next item, or `End`.
    pub fn take(&mut self, now: Time, turn: Turn, dev: u32, v: &mut impl Queues) -> Take {
        let h = handler(turn.local, turn.rx);
        loop {
            if turn.mode == TurnMode::Nothing {
                return Take::End;
            }
            if turn.rx {
                if let Some((w, cost)) = v.take_rx(dev) {
                    return Take::Item(w, cost);
                }
                let rx = &mut self.rx[turn.local];
                if v.sock_empty(dev) {
                    rx.step(VhostEvent::SourceEmpty);
                    return Take::End;
                }
                // Packets but no guest buffer: ask for the refill kick, then re-check.
                if rx.step(VhostEvent::Empty { now_ns: now }) != VhostAction::EnableNotifyAndRecheck {
                    return Take::End;
                }
                if !recheck(&mut v.rx_ring(dev), |has_work| rx.step(VhostEvent::Recheck { has_work }) == VhostAction::DisableNotifyAndDrain) {
                    return Take::End;
                }
                continue;
            }
            if turn.mode != TurnMode::OptimisticPoll || turn.taken < v.weight_packets() {
                if let Some((w, cost)) = v.take_tx(dev) {
                    return Take::Item(w, cost);
                }
            }
            let drain = match (&mut self.tx[turn.local], turn.mode) {
                (Es2Tx::Perceptive(p), _) => {
                    if p.step(PerceptiveEvent::Empty) != PerceptiveAction::EnableNotifyAndRecheck {
                        return Take::End;
                    }
                    recheck(&mut v.tx_ring(dev), |has_work| p.step(PerceptiveEvent::Recheck { has_work }) == PerceptiveAction::DisableNotifyAndPoll)
                }
                (Es2Tx::Optimistic(o, _), TurnMode::OptimisticPoll) => {
                    match o.on_tx_polled() {
                        OptimisticAction::PollAgain => self.joint.requeue_polling(h),
                        OptimisticAction::EnableNotifyAndRecheck => {
                            if v.tx_ring(dev).enable_notification() {
                                // Requests raced the re-enable: serve them as after a kick.
                                self.joint.add(h, HandlerKind::Regular);
                            }
                        }
                        _ => {}
                    }
                    return Take::End;
                }
                (Es2Tx::Optimistic(o, r), _) => {
                    if r.step(VhostEvent::Empty { now_ns: now }) != VhostAction::EnableNotifyAndRecheck {
                        return Take::End;
                    }
                    let drain = recheck(&mut v.tx_ring(dev), |has_work| r.step(VhostEvent::Recheck { has_work }) == VhostAction::DisableNotifyAndDrain);
                    if !drain && o.is_poll() {
                        // The switch to polling taken during this turn (a request's completion).
                        self.joint.add(h, HandlerKind::Polling);
                        v.tx_ring(dev).disable_notification();
                    }
                    drain
                }
            };
            if !drain {
                return Take::End;
            }
        }
    }

    /// An item of the current turn is done: the handler's machine counts it; true: the turn ends.
    pub fn after_item(&mut self, now: Time, turn: Turn, dev: u32, w: Work, v: &mut impl Queues) -> bool {
        let reply_due = matches!(w, Work::Tx(_)) && self.replies[turn.local];
        let (h_tx, h_rx) = (handler(turn.local, false), handler(turn.local, true));
        match (w, &mut self.tx[turn.local], turn.mode) {
            (Work::Rx(pkt), tx, _) => {
                let requeue = self.rx[turn.local].step(VhostEvent::Buffer { bytes: pkt.bytes as u64 }) == VhostAction::Requeue;
                if requeue {
                    self.joint.add(h_rx, HandlerKind::Regular);
                }
                if let Es2Tx::Optimistic(o, _) = tx {
                    // Algorithm 2: a new ingress packet makes the TX queue a polling handler.
                    let disable = o.on_rx_packet() == OptimisticAction::DisableNotifyAndEnqueue;
                    self.joint.add(h_tx, HandlerKind::Polling);
                    if disable {
                        v.tx_ring(dev).disable_notification();
                    }
                }
                requeue
            }
            (Work::Tx(_), Es2Tx::Perceptive(p), _) => {
                let yield_turn = p.step(PerceptiveEvent::Request) == PerceptiveAction::YieldTurn;
                if yield_turn {
                    self.joint.requeue_quota(h_tx, now);
                }
                yield_turn
            }
            (Work::Tx(_), Es2Tx::Optimistic(o, _), TurnMode::OptimisticPoll) => {
                if reply_due {
                    o.on_rx_packet(); // polling already: the count of empty polls restarts
                }
                false
            }
            (Work::Tx(b), Es2Tx::Optimistic(o, r), _) => {
                if reply_due {
                    o.on_rx_packet(); // applied when this turn ends (take)
                }
                let requeue = r.step(VhostEvent::Buffer { bytes: b.bytes as u64 }) == VhostAction::Requeue;
                if requeue {
                    self.joint.add(h_tx, HandlerKind::Regular);
                }
                requeue
            }
        }
    }
}

/// A joint thread's view of the model's rings is one of the [`Queues`] its machines are driven
/// through (`es2_driver.rs` drives them through another, outside the model).
impl Backend for Es2Io {
    fn notice<R: DevRings + ?Sized>(&mut self, now: Time, local: usize, dev: u32, n: Notice, v: &mut View<'_, R>) {
        Es2Io::notice(self, now, local, dev, n, v)
    }
    fn decide<R: DevRings + ?Sized>(&mut self, now: Time, devs: &[u32], v: &mut View<'_, R>) -> Decision {
        Es2Io::decide(self, now, devs, v)
    }
    fn take<R: DevRings + ?Sized>(&mut self, now: Time, turn: Turn, dev: u32, v: &mut View<'_, R>) -> Take {
        Es2Io::take(self, now, turn, dev, v)
    }
    fn after_item<R: DevRings + ?Sized>(&mut self, now: Time, turn: Turn, dev: u32, w: Work, v: &mut View<'_, R>) -> bool {
        Es2Io::after_item(self, now, turn, dev, w, v)
    }
}

/// ES2's joint threads: the devices `devs` combined `combining_level` to a thread (ES2 §5.1);
/// `replies(d)`: device `d`'s guest answers each TX completion (a request stream).
pub(crate) fn threads(io: &IoHandling, vhost: &VhostConfig, devs: &[u32], replies: &dyn Fn(u32) -> bool) -> Vec<(String, Vec<u32>, Es2Io)> {
    let (switch, p, o, j) = io.es2();
    let groups = eventpath_policy::es2::combine_devices(devs.len(), j.combining_level);
    per_group(&groups, devs, |g, mine| {
        let r = mine.iter().map(|&d| replies(d)).collect();
        (format!("es2-joint{g}"), Es2Io::new(mine.len(), switch, &p, &o, &j, vhost, r))
    })
}

fn handler(local: usize, rx: bool) -> usize {
    2 * local + usize::from(rx)
}
