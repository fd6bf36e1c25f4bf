//! The vhost-net worker ("Baseline" in ELVIS §2.1, ES2 §5.1): one thread per device, two
//! handlers. It is woken through an eventfd — by the guest's TX kick (ioeventfd) or by a packet
//! reaching the tap socket (RX) — and merges signals while it runs. Each handler's decisions
//! are `eventpath_policy::vhost::VhostHandler`'s, the machine the KVM testbed's back end runs too;
//! this is the simulator's adapter:
//!
//! * TX (`handle_tx`): disable kicks, transmit available buffers up to the weight, re-enable
//!   kicks and re-check before leaving (drivers/vhost/net.c).
//! * RX (`handle_rx`): for each packet on the socket, take a posted guest buffer, copy, add it
//!   to the used ring and signal the guest if it wants interrupts; if the guest has posted no
//!   buffer, enable refill kicks, re-check and stop; a drained socket just ends the handler.
//!
//! A handler stopped at its weight is requeued. The thread runs its handlers in turn until
//! neither has work, then sleeps: its whole run is one turn of the I/O-thread mechanism.
//!
//! With vhost-net busy polling (`[vm.net] busyloop_timeout_us`, Linux `busyloop_timeout`), the
//! TX handler that finds its ring empty keeps the CPU and spins, kicks still disabled, until
//! the window ends (then re-enables kicks and re-checks, as without polling), a buffer is added
//! or a packet reaches the socket (`vhost_net_busy_poll` breaks on both), whichever comes first;
//! it does not start spinning when another thread waits for its CPU (`need_resched`). The RX
//! handler does not poll.

use crate::model::io::queues::{recheck, DevRings, Notice, Work};
use crate::model::io::seam::{Backend, Decision, Take, Turn, TurnMode, View};
use crate::engine::Time;
use eventpath_policy::vhost::{VhostAction, VhostConfig, VhostEvent, VhostHandler, VhostState};

/// The vhost handler loop's parameters (`eventpath_policy::vhost`): profile `p`'s packet and
/// byte weights, the device's busy-polling window.
pub(crate) fn config(p: &crate::profile::Profile, busyloop_timeout_us: u32) -> VhostConfig {
    VhostConfig { pkt_weight: p.vhost.weight_packets.value as u32, byte_weight: p.vhost.weight_bytes.value as u64, busyloop_timeout_us }
}

/// Which handler runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Handler {
    Tx,
    Rx,
}

/// A vhost worker's two handlers.
pub(crate) struct VhostIo {
    handler: Handler,
    tx: VhostHandler,
    rx: VhostHandler,
    /// Its loop decided to sleep (the next decision is the sleep).
    done: bool,
    /// Handler invocations (window), and those that found no work.
    polls: u64,
    empty_polls: u64,
}

impl VhostIo {
    /// A sleeping worker whose handlers run with `cfg` (weights, busy polling: TX only).
    pub fn new(cfg: VhostConfig) -> Self {
        VhostIo {
            handler: Handler::Tx,
            rx: VhostHandler::new(VhostConfig { busyloop_timeout_us: 0, ..cfg.clone() }),
            tx: VhostHandler::new(cfg),
            done: false,
            polls: 0,
            empty_polls: 0,
        }
    }

    fn start<R: DevRings + ?Sized>(&mut self, h: Handler, dev: u32, v: &mut View<'_, R>) {
        self.handler = h;
        self.polls += 1;
        let empty = match h {
            Handler::Tx => {
                let a = self.tx.step(VhostEvent::Run);
                debug_assert_eq!(a, VhostAction::DisableNotifyAndDrain);
                // vhost_disable_notify: the guest need not kick while the handler runs.
                v.rings.tx(dev).kick.device_disable();
                v.rings.tx(dev).pending() == 0
            }
            Handler::Rx => {
                let a = self.rx.step(VhostEvent::Run);
                debug_assert_eq!(a, VhostAction::DisableNotifyAndDrain);
                v.rings.rx(dev).kick.device_disable();
                v.rings.sock(dev).is_empty()
            }
        };
        self.empty_polls += u64::from(empty);
    }

}

impl Backend for VhostIo {
    /// The thread merges every signal into one wake-up and looks at both rings.
    fn notice<R: DevRings + ?Sized>(&mut self, _now: Time, _local: usize, _dev: u32, _n: Notice, _v: &mut View<'_, R>) {}

    /// After a wake-up, the TX handler first; once the loop has run dry, sleep until a kick.
    fn decide<R: DevRings + ?Sized>(&mut self, _now: Time, devs: &[u32], v: &mut View<'_, R>) -> Decision {
        if std::mem::take(&mut self.done) {
            return Decision::Sleep { until: None, notice: true, write: false };
        }
        self.start(Handler::Tx, devs[0], v);
        Decision::Turn(Turn { local: 0, rx: false, taken: 0, mode: TurnMode::Plain })
    }

    /// The loop's next item: the running handler's, or the other handler's, or a busy poll;
    /// `End` when neither has work (the worker then sleeps).
    fn take<R: DevRings + ?Sized>(&mut self, now: Time, _turn: Turn, dev: u32, v: &mut View<'_, R>) -> Take {
        loop {
            match self.handler {
                Handler::Tx => {
                    if self.tx.state() != VhostState::Requeued {
                        if let Some((w, cost)) = v.costs.take_tx(v.rings, dev, v.socket) {
                            return Take::Item(w, cost);
                        }
                        // Ring empty: busy-poll it if configured, else vhost_enable_notify, then
                        // re-check — a buffer added meanwhile is handled now.
                        let mut empty = self.tx.step(VhostEvent::Empty { now_ns: now });
                        if let VhostAction::BusyPoll { until_ns } = empty {
                            if v.rings.sock(dev).is_empty() && !v.yield_wanted {
                                return Take::Spin(Some(until_ns));
                            }
                            // Socket data or a waiting thread: the poll ends at once.
                            empty = self.tx.step(VhostEvent::Empty { now_ns: until_ns });
                        }
                        if empty == VhostAction::EnableNotifyAndRecheck {
                            let tx = &mut self.tx;
                            if recheck(v.rings.tx(dev), |has_work| tx.step(VhostEvent::Recheck { has_work }) == VhostAction::DisableNotifyAndDrain) {
                                continue;
                            }
                        }
                    }
                    // Weight exhausted (requeued, kicks still disabled) or ring empty: RX's turn.
                    self.start(Handler::Rx, dev, v);
                }
                Handler::Rx => {
                    if self.rx.state() != VhostState::Requeued {
                        if let Some((w, cost)) = v.costs.take_rx(v.rings, dev, v.socket) {
                            return Take::Item(w, cost);
                        }
                        if v.rings.sock(dev).is_empty() {
                            self.rx.step(VhostEvent::SourceEmpty);
                        } else if self.rx.step(VhostEvent::Empty { now_ns: now }) == VhostAction::EnableNotifyAndRecheck {
                            // No guest buffer: wait for the guest's refill kick.
                            let rx = &mut self.rx;
                            if recheck(v.rings.rx(dev), |has_work| rx.step(VhostEvent::Recheck { has_work }) == VhostAction::DisableNotifyAndDrain) {
                                continue;
                            }
                        }
                    }
                    // Packets left: handle them (a handler stopped at its weight is requeued, as
                    // `vhost_poll_queue` does, so an empty ring still gets its refill
                    // notification enabled on the next pass instead of the thread sleeping deaf).
                    let rx_requeued = self.rx.state() == VhostState::Requeued;
                    let rx_more = !v.rings.sock(dev).is_empty() && (v.rings.rx(dev).has_room() || rx_requeued);
                    // TX work left, or a TX handler that stopped at its weight runs again.
                    if v.rings.tx(dev).pending() > 0 || self.tx.state() == VhostState::Requeued {
                        self.start(Handler::Tx, dev, v);
                    } else if rx_more {
                        self.start(Handler::Rx, dev, v);
                    } else {
                        self.done = true;
                        return Take::End;
                    }
                }
            }
        }
    }

    /// One item done: its handler counts it against the weight.
    fn after_item<R: DevRings + ?Sized>(&mut self, _now: Time, _turn: Turn, _dev: u32, w: Work, _v: &mut View<'_, R>) -> bool {
        match w {
            Work::Tx(b) => self.tx.step(VhostEvent::Buffer { bytes: b.bytes as u64 }),
            Work::Rx(pkt) => self.rx.step(VhostEvent::Buffer { bytes: pkt.bytes as u64 }),
        };
        false
    }

    /// Handler invocations (window), and those that found no work.
    fn polls(&self) -> Option<(u64, u64)> {
        Some((self.polls, self.empty_polls))
    }

    fn reset_metrics(&mut self) {
        self.polls = 0;
        self.empty_polls = 0;
    }

    /// A worker sees a TX buffer written without a kick while it busy-polls its TX ring.
    fn sees_write(&self, n: Notice) -> bool {
        n == Notice::TxKick
    }

    /// It looks only when kicked.
    fn empty_look_costs(&self) -> bool {
        false
    }

    /// It runs its handlers back to back and checks `need_resched` after each packet.
    fn yields_between_turns(&self) -> bool {
        false
    }
}
