//! (a) The simulator's side: `crates/sim/src/model/io/es2.rs`'s calls into the policy, run by
//! `io/thread.rs`'s loop, over the model's ring counters and `KickGate` — transcribed, function
//! by function (the adapter is private to the simulator); keep it in step with io/es2.rs.
use super::*;
use eventpath_policy::es2::*;
use eventpath_policy::notify::{driver_should_kick, kick_control, KickControlWrite, Suppression};
use eventpath_policy::vhost::{VhostAction, VhostConfig, VhostEvent, VhostHandler};
use eventpath_sim::scenario::{Es2Switch, IoHandling};
/// The model's TX virtqueue as `model/virtq.rs` and `notify.rs`'s `KickGate` keep it.
#[derive(Default)]
struct SimRing {
    avail: u64,
    consumed: u64,
    avail_event: u16,
    prepared: u16,
}

impl SimRing {
    /// Driver: `add`, then `virtqueue_kick_prepare`.
    fn publish(&mut self) -> bool {
        self.avail += 1;
        let (old, new) = (self.prepared, self.avail as u16);
        self.prepared = new;
        driver_should_kick(Suppression::EventIdx, 0, self.avail_event, new, old)
    }
    /// `enable_kicks` (`device_enable(avail)`) or `kick.device_disable()`.
    fn kicks(&mut self, on: bool) {
        if let KickControlWrite::AvailEvent(e) = kick_control(Suppression::EventIdx, on, 0, self.avail as u16) {
            self.avail_event = e;
        }
    }
}

enum Es2Tx {
    Perceptive(PerceptiveHandler),
    Optimistic(OptimisticTx, VhostHandler),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TurnMode {
    Perceptive,
    OptimisticPoll,
    Regular,
    Nothing,
}

pub struct SimWorld {
    joint: JointThread,
    tx: Vec<Es2Tx>,
    rings: Vec<SimRing>,
    guest: Guest,
    t: u64,
    trace: Trace,
}

impl World for SimWorld {
    fn t(&mut self) -> &mut u64 {
        &mut self.t
    }
    fn guest(&self) -> &Guest {
        &self.guest
    }
    fn publish(&mut self) -> bool {
        let mut kicked = false;
        while let Some((_, q)) = self.guest.due(self.t) {
            if self.rings[q].publish() {
                self.trace.push((self.t, Rec::Kick(q)));
                self.notice(q); // the kick's notice arrives now, whatever the thread is doing
                kicked = true;
            }
        }
        kicked
    }
}

impl SimWorld {
    pub fn new(io: &IoHandling, guest: Guest) -> Self {
        let (switch, p, o, j) = io.es2();
        let n = guest.arrivals.len();
        let tx = (0..n)
            .map(|_| match switch {
                Es2Switch::Perceptive => Es2Tx::Perceptive(PerceptiveHandler::new(&p)),
                Es2Switch::Optimistic => Es2Tx::Optimistic(OptimisticTx::new(&o), VhostHandler::new(VhostConfig::default())),
            })
            .collect();
        SimWorld { joint: JointThread::new(&j), tx, rings: (0..n).map(|_| SimRing::default()).collect(), guest, t: 0, trace: vec![] }
    }

    /// `es2_notice(TxKick)`.
    fn notice(&mut self, q: usize) {
        let add = match &mut self.tx[q] {
            Es2Tx::Perceptive(p) => p.step(PerceptiveEvent::Kick) == PerceptiveAction::Enqueue,
            Es2Tx::Optimistic(..) => true,
        };
        if add {
            self.joint.add(q, HandlerKind::Regular);
        }
    }

    fn kicks(&mut self, q: usize, on: bool) -> bool {
        self.publish();
        self.rings[q].kicks(on);
        let has_work = self.rings[q].avail > self.rings[q].consumed;
        self.trace.push((self.t, if on { Rec::Enable(q, has_work) } else { Rec::Disable(q) }));
        has_work
    }

    /// `take_tx`: one request (costs ITEM), or an empty look (LOOK).
    fn take_tx(&mut self, q: usize) -> bool {
        self.publish();
        let r = &mut self.rings[q];
        let got = r.avail > r.consumed;
        r.consumed += u64::from(got);
        self.trace.push((self.t, Rec::Take(q, got)));
        self.t += if got { ITEM } else { LOOK };
        self.publish();
        got
    }

    /// `es2_decide` after `joint.next` chose TX handler `q`.
    fn start_turn(&mut self, q: usize) -> TurnMode {
        match &mut self.tx[q] {
            Es2Tx::Perceptive(p) => match p.step(PerceptiveEvent::Scheduled) {
                PerceptiveAction::DisableNotifyAndPoll => {
                    self.kicks(q, false);
                    TurnMode::Perceptive
                }
                PerceptiveAction::PollNext => TurnMode::Perceptive,
                _ => TurnMode::Nothing,
            },
            Es2Tx::Optimistic(o, _) if o.is_poll() => TurnMode::OptimisticPoll,
            Es2Tx::Optimistic(_, v) => {
                if v.step(VhostEvent::Run) == VhostAction::DisableNotifyAndDrain {
                    self.kicks(q, false);
                }
                TurnMode::Regular
            }
        }
    }

    /// `es2_take` (TX): true if an item was taken.
    fn take(&mut self, q: usize, mode: TurnMode, taken: u32) -> bool {
        loop {
            if mode == TurnMode::Nothing {
                return false;
            }
            if (mode != TurnMode::OptimisticPoll || taken < VhostConfig::default().pkt_weight) && self.take_tx(q) {
                return true;
            }
            let now = self.t;
            let again = match (&mut self.tx[q], mode) {
                (Es2Tx::Perceptive(p), _) => {
                    if p.step(PerceptiveEvent::Empty) != PerceptiveAction::EnableNotifyAndRecheck {
                        return false;
                    }
                    let has_work = self.kicks(q, true);
                    let Es2Tx::Perceptive(p) = &mut self.tx[q] else { unreachable!() };
                    p.step(PerceptiveEvent::Recheck { has_work }) == PerceptiveAction::DisableNotifyAndPoll
                }
                (Es2Tx::Optimistic(o, _), TurnMode::OptimisticPoll) => {
                    match o.on_tx_polled() {
                        OptimisticAction::PollAgain => self.joint.requeue_polling(q),
                        OptimisticAction::EnableNotifyAndRecheck if self.kicks(q, true) => {
                            self.joint.add(q, HandlerKind::Regular);
                        }
                        _ => {}
                    }
                    return false;
                }
                (Es2Tx::Optimistic(_, v), _) => {
                    if v.step(VhostEvent::Empty { now_ns: now }) != VhostAction::EnableNotifyAndRecheck {
                        return false;
                    }
                    let has_work = self.kicks(q, true);
                    let Es2Tx::Optimistic(o, v) = &mut self.tx[q] else { unreachable!() };
                    let drain = v.step(VhostEvent::Recheck { has_work }) == VhostAction::DisableNotifyAndDrain;
                    if !drain && o.is_poll() {
                        self.joint.add(q, HandlerKind::Polling);
                        self.kicks(q, false);
                    }
                    drain
                }
            };
            if !again {
                return false;
            }
            self.kicks(q, false);
        }
    }

    /// `es2_after_item` (TX; a request stream's completion invites the guest's reply): true if
    /// the turn ends.
    fn after_item(&mut self, q: usize, mode: TurnMode) -> bool {
        match (&mut self.tx[q], mode) {
            (Es2Tx::Perceptive(p), _) => {
                let yield_turn = p.step(PerceptiveEvent::Request) == PerceptiveAction::YieldTurn;
                if yield_turn {
                    self.joint.requeue_quota(q, self.t);
                }
                yield_turn
            }
            (Es2Tx::Optimistic(o, _), TurnMode::OptimisticPoll) => {
                o.on_rx_packet();
                false
            }
            (Es2Tx::Optimistic(o, v), _) => {
                o.on_rx_packet();
                let requeue = v.step(VhostEvent::Buffer { bytes: BYTES }) == VhostAction::Requeue;
                if requeue {
                    self.joint.add(q, HandlerKind::Regular);
                }
                requeue
            }
        }
    }

    /// `io/thread.rs` `io_next` / `io_step`: decide, then a turn's items until it ends.
    pub fn run(mut self) -> Trace {
        while self.t <= END {
            let d = self.joint.next(self.t);
            // The simulator's TX handler of local device q is handler 2q (2q + 1: RX).
            self.trace.push((self.t, Rec::Next(d)));
            match d {
                JointDecision::Run(q, _) => {
                    let mode = self.start_turn(q);
                    let mut taken = 0;
                    while self.take(q, mode, taken) {
                        taken += 1;
                        if self.after_item(q, mode) {
                            break;
                        }
                    }
                }
                JointDecision::Sleep { until_ns } => {
                    wait(&mut self, Some(until_ns));
                }
                JointDecision::Idle => {
                    if !wait(&mut self, None) {
                        break;
                    }
                }
            }
        }
        self.trace
    }
}

