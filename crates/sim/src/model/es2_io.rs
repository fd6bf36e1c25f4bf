//! ES2 hybrid I/O handling in the simulator (ES2 §4.2, §5.1–5.3): the adapter between a shared
//! I/O thread (`iothread.rs`) and `eventpath_policy::es2` — the joint thread's scheduling and
//! polling lists and sleeps (`JointThread`), each TX queue's perceptive (`PerceptiveHandler`) or
//! optimistic (`OptimisticTx`) mode switch, and a regular vhost handler (`VhostHandler`) for
//! every RX queue and for an optimistic TX queue in notification mode. The KVM testbed's
//! backend drives the same machines (`crates/kvm/src/backend/serve/joint.rs`).
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
//!   (`on_rx_packet`), in both worlds (the testbed's `serve/joint.rs` maps it the same way). Taken
//!   during a notification-mode turn, the switch applies when that turn ends (kicks off, a
//!   polling handler queued): the regular handler first finishes its own loop.

use super::iothread::{Decision, IoPolicy, Turn, TurnMode};
use super::vhost::{Notice, Work};
use super::Host;
use crate::engine::Time;
use crate::scenario::Es2Switch;
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
}

impl Es2Io {
    /// A joint thread for `n` devices.
    pub fn new(n: usize, switch: Es2Switch, p: &PerceptiveConfig, o: &OptimisticConfig, j: &JointConfig, vhost: &VhostConfig) -> Self {
        let tx = (0..n)
            .map(|_| match switch {
                Es2Switch::Perceptive => Es2Tx::Perceptive(PerceptiveHandler::new(p)),
                Es2Switch::Optimistic => Es2Tx::Optimistic(OptimisticTx::new(o), VhostHandler::new(vhost.clone())),
            })
            .collect();
        Es2Io { joint: JointThread::new(j), tx, rx: (0..n).map(|_| VhostHandler::new(vhost.clone())).collect() }
    }
}

fn handler(local: usize, rx: bool) -> usize {
    2 * local + usize::from(rx)
}

impl Host {
    fn es2(&mut self, t: u32) -> &mut Es2Io {
        match &mut self.io[t as usize].policy {
            IoPolicy::Es2(e) => e,
            IoPolicy::Elvis(_) => unreachable!("thread {t} is not an ES2 joint thread"),
        }
    }

    /// Work arrived for the joint thread's device `local`.
    pub(crate) fn es2_notice(&mut self, t: u32, local: usize, n: Notice) {
        let e = self.es2(t);
        match n {
            Notice::TxKick => {
                let add = match &mut e.tx[local] {
                    Es2Tx::Perceptive(p) => p.step(PerceptiveEvent::Kick) == PerceptiveAction::Enqueue,
                    Es2Tx::Optimistic(..) => true,
                };
                if add {
                    e.joint.add(handler(local, false), HandlerKind::Regular);
                }
            }
            Notice::RxKick | Notice::RxPacket => {
                e.joint.add(handler(local, true), HandlerKind::Regular);
            }
        }
    }

    /// The joint thread's next handler, or its sleep; a chosen handler starts its turn.
    pub(crate) fn es2_decide(&mut self, now: Time, t: u32) -> Decision {
        let (h, _kind) = match self.es2(t).joint.next(now) {
            JointDecision::Run(h, kind) => (h, kind),
            JointDecision::Sleep { until_ns } => return Decision::Sleep(Some(until_ns)),
            JointDecision::Idle => return Decision::Sleep(None),
        };
        let (local, rx) = (h / 2, h % 2 == 1);
        let dev = self.io[t as usize].devs[local] as usize;
        let e = self.es2(t);
        let mode = if rx {
            if e.rx[local].step(VhostEvent::Run) == VhostAction::DisableNotifyAndDrain {
                self.devs[dev].rxq.kick.device_disable();
            }
            TurnMode::Regular
        } else {
            match &mut e.tx[local] {
                Es2Tx::Perceptive(p) => match p.step(PerceptiveEvent::Scheduled) {
                    PerceptiveAction::DisableNotifyAndPoll => {
                        self.devs[dev].txq.kick.device_disable();
                        TurnMode::Perceptive
                    }
                    PerceptiveAction::PollNext => TurnMode::Perceptive,
                    _ => TurnMode::Nothing,
                },
                // Algorithm 2: a queue marked `is_poll` is polled whichever list it came from.
                Es2Tx::Optimistic(o, _) if o.is_poll() => TurnMode::OptimisticPoll,
                Es2Tx::Optimistic(_, v) => {
                    if v.step(VhostEvent::Run) == VhostAction::DisableNotifyAndDrain {
                        self.devs[dev].txq.kick.device_disable();
                    }
                    TurnMode::Regular
                }
            }
        };
        Decision::Turn(Turn { local, rx, taken: 0, mode })
    }

    /// The turn's next item, or `None` when the turn ends.
    pub(crate) fn es2_take(&mut self, now: Time, t: u32, turn: Turn) -> Option<(Work, Time)> {
        let dev = self.io[t as usize].devs[turn.local];
        let weight = self.profile.vhost.weight_packets.value as u32;
        let h = handler(turn.local, turn.rx);
        loop {
            if turn.mode == TurnMode::Nothing {
                return None;
            }
            if turn.rx {
                if let Some(item) = self.take_rx(dev) {
                    return Some(item);
                }
                let d = &mut self.devs[dev as usize];
                let source_empty = d.rx_sock.is_empty();
                let rx = &mut self.es2(t).rx[turn.local];
                if source_empty {
                    rx.step(VhostEvent::SourceEmpty);
                    return None;
                }
                // Packets but no guest buffer: ask for the refill kick, then re-check.
                if rx.step(VhostEvent::Empty { now_ns: now }) != VhostAction::EnableNotifyAndRecheck {
                    return None;
                }
                self.devs[dev as usize].rxq.enable_kicks();
                let has_work = self.devs[dev as usize].rxq.posted > 0;
                if self.es2(t).rx[turn.local].step(VhostEvent::Recheck { has_work }) != VhostAction::DisableNotifyAndDrain {
                    return None;
                }
                self.devs[dev as usize].rxq.kick.device_disable();
                continue;
            }
            if turn.mode != TurnMode::OptimisticPoll || turn.taken < weight {
                if let Some(item) = self.take_tx(dev) {
                    return Some(item);
                }
            }
            let e = self.es2(t);
            let again = match (&mut e.tx[turn.local], turn.mode) {
                (Es2Tx::Perceptive(p), _) => {
                    if p.step(PerceptiveEvent::Empty) != PerceptiveAction::EnableNotifyAndRecheck {
                        return None;
                    }
                    self.devs[dev as usize].txq.enable_kicks();
                    let has_work = self.devs[dev as usize].txq.pending() > 0;
                    let Es2Tx::Perceptive(p) = &mut self.es2(t).tx[turn.local] else { unreachable!() };
                    p.step(PerceptiveEvent::Recheck { has_work }) == PerceptiveAction::DisableNotifyAndPoll
                }
                (Es2Tx::Optimistic(o, _), TurnMode::OptimisticPoll) => {
                    match o.on_tx_polled() {
                        OptimisticAction::PollAgain => e.joint.requeue_polling(h),
                        OptimisticAction::EnableNotifyAndRecheck => {
                            self.devs[dev as usize].txq.enable_kicks();
                            if self.devs[dev as usize].txq.pending() > 0 {
                                // Requests raced the re-enable: serve them as after a kick.
                                self.es2(t).joint.add(h, HandlerKind::Regular);
                            }
                        }
                        _ => {}
                    }
                    return None;
                }
                (Es2Tx::Optimistic(_, v), _) => {
                    if v.step(VhostEvent::Empty { now_ns: now }) != VhostAction::EnableNotifyAndRecheck {
                        return None;
                    }
                    self.devs[dev as usize].txq.enable_kicks();
                    let has_work = self.devs[dev as usize].txq.pending() > 0;
                    let e = self.es2(t);
                    let Es2Tx::Optimistic(o, v) = &mut e.tx[turn.local] else { unreachable!() };
                    let drain = v.step(VhostEvent::Recheck { has_work }) == VhostAction::DisableNotifyAndDrain;
                    if !drain && o.is_poll() {
                        // The switch to polling taken during this turn (a request's completion).
                        e.joint.add(h, HandlerKind::Polling);
                        self.devs[dev as usize].txq.kick.device_disable();
                    }
                    drain
                }
            };
            if !again {
                return None;
            }
            self.devs[dev as usize].txq.kick.device_disable();
        }
    }

    /// An item of the current turn is done: the handler's machine counts it.
    pub(crate) fn es2_after_item(&mut self, now: Time, t: u32, w: Work) {
        let Some(turn) = self.io_turn(t) else { return };
        let dev = self.io[t as usize].devs[turn.local] as usize;
        let reply_due = matches!(w, Work::Tx(_)) && self.tx_completion_invites_reply(dev as u32);
        let (h_tx, h_rx) = (handler(turn.local, false), handler(turn.local, true));
        let e = self.es2(t);
        let end = match (w, &mut e.tx[turn.local], turn.mode) {
            (Work::Rx(pkt), tx, _) => {
                let requeue = e.rx[turn.local].step(VhostEvent::Buffer { bytes: pkt.bytes as u64 }) == VhostAction::Requeue;
                if requeue {
                    e.joint.add(h_rx, HandlerKind::Regular);
                }
                if let Es2Tx::Optimistic(o, _) = tx {
                    // Algorithm 2: a new ingress packet makes the TX queue a polling handler.
                    let disable = o.on_rx_packet() == OptimisticAction::DisableNotifyAndEnqueue;
                    e.joint.add(h_tx, HandlerKind::Polling);
                    if disable {
                        self.devs[dev].txq.kick.device_disable();
                    }
                }
                requeue
            }
            (Work::Tx(_), Es2Tx::Perceptive(p), _) => {
                let yield_turn = p.step(PerceptiveEvent::Request) == PerceptiveAction::YieldTurn;
                if yield_turn {
                    e.joint.requeue_quota(h_tx, now);
                }
                yield_turn
            }
            (Work::Tx(_), Es2Tx::Optimistic(o, _), TurnMode::OptimisticPoll) => {
                if reply_due {
                    o.on_rx_packet(); // polling already: the count of empty polls restarts
                }
                false
            }
            (Work::Tx(b), Es2Tx::Optimistic(o, v), _) => {
                if reply_due {
                    o.on_rx_packet(); // applied when this turn ends (es2_take)
                }
                let requeue = v.step(VhostEvent::Buffer { bytes: b.bytes as u64 }) == VhostAction::Requeue;
                if requeue {
                    e.joint.add(h_tx, HandlerKind::Regular);
                }
                requeue
            }
        };
        if end {
            self.io[t as usize].end_turn();
        }
    }
}
