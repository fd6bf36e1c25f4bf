//! The vhost-net worker thread of a device ("Baseline" in ELVIS §2.1, ES2 §5.1): one thread,
//! two handlers. It is woken through an eventfd — by the guest's TX kick (ioeventfd) or by a
//! packet reaching the tap socket (RX) — and merges signals while it runs.
//!
//! Each handler's decisions are `eventpath_policy::vhost::VhostHandler`'s, the state machine the
//! KVM testbed's backend runs too; this module is the simulator's adapter (it takes buffers,
//! charges their cost, and applies the machine's actions to the rings' notification gates):
//!
//! * TX (`handle_tx`): disable kicks, transmit available buffers up to the weight, re-enable
//!   kicks and re-check before leaving (drivers/vhost/net.c).
//! * RX (`handle_rx`): for each packet on the socket, take a posted guest buffer, copy, add it to
//!   the used ring and signal the guest if it wants interrupts; if the guest has posted no
//!   buffer, enable refill kicks, re-check and stop; a drained socket just ends the handler.
//!
//! A handler stopped at its weight is requeued. The thread runs its handlers in turn until
//! neither has work, then sleeps.
//!
//! With vhost-net busy polling (`[vm.net] busyloop_timeout_us`, Linux `busyloop_timeout`), the
//! TX handler that finds its ring empty keeps the CPU and polls, kicks still disabled, until the
//! window ends (then re-enables kicks and re-checks, as without polling), a buffer is added or
//! a packet reaches the socket (`vhost_net_busy_poll` breaks on both), whichever comes first;
//! it does not start polling when another thread waits for its CPU (`need_resched`). The RX
//! handler does not poll.

use super::lapic::Vector;
use super::rxq::RxPkt;
use super::virtq::Buf;
use super::{Ev, Host};
use crate::engine::{EventQueue, Time, round_ns};
use crate::metrics::BusyTime;
use eventpath_policy::vhost::{VhostAction, VhostConfig, VhostEvent, VhostHandler, VhostState};

/// The item the thread is working on.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Work {
    Tx(Buf),
    /// An RX packet.
    Rx(RxPkt),
}

/// Which handler runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Handler {
    Tx,
    Rx,
}

/// One vhost worker thread.
#[derive(Debug)]
pub struct Vhost {
    /// Thread name (`vhost-<vm>`).
    pub name: String,
    /// In its handler loop (else sleeping on the eventfd).
    pub running: bool,
    /// A wake-up is on its way (eventfd signals merge).
    pub(crate) wake_pending: bool,
    handler: Handler,
    /// The two handlers' state machines.
    tx: VhostHandler,
    rx: VhostHandler,
    current: Option<Work>,
    /// Busy time (window).
    pub busy: BusyTime,
    /// Handler invocations that found no work (window).
    pub empty_polls: u64,
    /// Handler invocations (window).
    pub polls: u64,
    /// Busy-polling an empty TX ring.
    pub(crate) polling: bool,
    /// Generation of the pending [`Ev::VhostPoll`] (older ones are stale).
    poll_gen: u32,
}

impl Vhost {
    /// A sleeping vhost thread whose handlers run with `cfg` (weights, busy polling).
    pub fn new(name: String, cfg: VhostConfig) -> Self {
        Vhost {
            name,
            running: false,
            wake_pending: false,
            handler: Handler::Tx,
            rx: VhostHandler::new(VhostConfig { busyloop_timeout_us: 0, ..cfg.clone() }),
            tx: VhostHandler::new(cfg),
            current: None,
            busy: BusyTime::default(),
            empty_polls: 0,
            polls: 0,
            polling: false,
            poll_gen: 0,
        }
    }

    pub(crate) fn reset_metrics(&mut self, now: Time) {
        self.busy.reset(now);
        self.empty_polls = 0;
        self.polls = 0;
    }
}

/// What reached a device's back end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Notice {
    /// The guest kicked the TX queue (new buffers).
    TxKick,
    /// The guest kicked the RX queue (refilled buffers).
    RxKick,
    /// A packet reached the tap socket.
    RxPacket,
}

impl Host {
    /// Work for device `dev`'s back end: its vhost thread's eventfd, or the shared I/O thread
    /// (ES2's joint thread, ELVIS's I/O core) that serves it (`iothread.rs`).
    pub(crate) fn notify_backend(&mut self, now: Time, dev: u32, n: Notice, q: &mut EventQueue<Ev>) {
        if !self.shared_io {
            self.signal_vhost(now, dev, q)
        } else {
            self.io_notice(now, dev, n, q)
        }
    }

    /// Take the next TX buffer of `dev` and its cost, if the ring has one.
    pub(crate) fn take_tx(&mut self, dev: u32) -> Option<(Work, Time)> {
        let vp = &self.profile.vhost;
        let b = self.devs[dev as usize].txq.take()?;
        Some((Work::Tx(b), round_ns(vp.tx_packet_ns.value + vp.tx_byte_ns.value * b.bytes as f64)))
    }

    /// Take the next packet on `dev`'s tap socket into a posted guest buffer, and its cost,
    /// if there are both.
    pub(crate) fn take_rx(&mut self, dev: u32) -> Option<(Work, Time)> {
        let vp = &self.profile.vhost;
        let d = &mut self.devs[dev as usize];
        if d.rxq.posted == 0 {
            return None;
        }
        let pkt = d.rx_sock.pop_front()?;
        d.rxq.take();
        Some((Work::Rx(pkt), round_ns(vp.rx_packet_ns.value + vp.rx_byte_ns.value * pkt.bytes as f64)))
    }

    /// One item done: TX hands the buffer to the wire and returns it to the used ring; RX puts
    /// the filled buffer in the used ring. Either may interrupt the guest if it asked.
    pub(crate) fn complete(&mut self, now: Time, dev: u32, w: Work, q: &mut EventQueue<Ev>) {
        let d = &mut self.devs[dev as usize];
        match w {
            Work::Tx(b) => {
                d.tx_moderation.completed(b.bytes as u64);
                let interrupt = d.txq.put_used();
                self.app_tx_used(now, dev, b, q);
                let d = &mut self.devs[dev as usize];
                if let Some(arrive) = d.wire.send(now, b, &mut self.port.tx) {
                    q.at(arrive, Ev::WireDone { dev });
                }
                if interrupt {
                    self.moderated_irq(now, dev, Vector::NetTx, q);
                }
            }
            Work::Rx(pkt) => {
                d.rx_moderation.completed(pkt.bytes as u64);
                if d.rxq.put_used(pkt) {
                    self.moderated_irq(now, dev, Vector::NetRx, q);
                }
            }
        }
    }

    /// Signal the device's eventfd: wake the thread unless it is in its handler loop or a
    /// wake-up is under way (`vhost_poll_wakeup` → `vhost_work_queue` → `wake_up_process`;
    /// where it runs is the host scheduler's choice).
    pub(crate) fn signal_vhost(&mut self, now: Time, dev: u32, q: &mut EventQueue<Ev>) {
        let v = &mut self.devs[dev as usize].vhost;
        if v.running || v.wake_pending {
            return self.vhost_poll_notice(now, dev, q);
        }
        v.wake_pending = true;
        let tid = self.vhost_tid(dev);
        self.wake_thread(now, tid, q);
    }

    /// The thread runs on its pCPU: start the TX handler after a wake-up, or carry on with
    /// the loop it was preempted in.
    pub(crate) fn vhost_run(&mut self, now: Time, dev: u32, q: &mut EventQueue<Ev>) {
        self.tr_vhost(now, dev, true);
        let d = &mut self.devs[dev as usize];
        d.vhost.busy.set(now, true);
        if d.vhost.running {
            return self.vhost_next(now, dev, q);
        }
        d.vhost.wake_pending = false;
        d.vhost.running = true;
        self.start_handler(dev, Handler::Tx);
        let wakeup = round_ns(self.profile.vhost.wakeup_ns.value);
        if wakeup > 0 {
            // Back from its wait, reading the eventfd: a `VhostDone` with no item ends it.
            return q.at(now + wakeup, Ev::VhostDone { dev });
        }
        self.vhost_next(now, dev, q);
    }

    fn start_handler(&mut self, dev: u32, h: Handler) {
        let d = &mut self.devs[dev as usize];
        d.vhost.handler = h;
        d.vhost.polls += 1;
        let empty = match h {
            Handler::Tx => {
                let a = d.vhost.tx.step(VhostEvent::Run);
                debug_assert_eq!(a, VhostAction::DisableNotifyAndDrain);
                // vhost_disable_notify: the guest need not kick while the handler runs.
                d.txq.kick.device_disable();
                d.txq.pending() == 0
            }
            Handler::Rx => {
                let a = d.vhost.rx.step(VhostEvent::Run);
                debug_assert_eq!(a, VhostAction::DisableNotifyAndDrain);
                d.rxq.kick.device_disable();
                d.rx_sock.is_empty()
            }
        };
        if empty {
            d.vhost.empty_polls += 1;
        }
    }

    /// Take the next item of the running handler, or move on to the other handler, or sleep.
    fn vhost_next(&mut self, now: Time, dev: u32, q: &mut EventQueue<Ev>) {
        match self.devs[dev as usize].vhost.handler {
            Handler::Tx => {
                if self.devs[dev as usize].vhost.tx.state() != VhostState::Requeued {
                    if let Some((w, cost)) = self.take_tx(dev) {
                        self.devs[dev as usize].vhost.current = Some(w);
                        q.at(now + cost, Ev::VhostDone { dev });
                        return;
                    }
                    let d = &mut self.devs[dev as usize];
                    // Ring empty: busy-poll it if configured, else vhost_enable_notify, then
                    // re-check — a buffer added meanwhile is handled now.
                    let mut empty = d.vhost.tx.step(VhostEvent::Empty { now_ns: now });
                    if let VhostAction::BusyPoll { until_ns } = empty {
                        let cpu = self.cpu_of(self.vhost_tid(dev));
                        let yield_cpu = self.should_yield(cpu);
                        let d = &mut self.devs[dev as usize];
                        if d.rx_sock.is_empty() && !yield_cpu {
                            d.vhost.polling = true;
                            d.vhost.poll_gen = d.vhost.poll_gen.wrapping_add(1);
                            q.at(until_ns, Ev::VhostPoll { dev, gen: d.vhost.poll_gen });
                            return;
                        }
                        // Socket data or a waiting thread: the poll ends at once.
                        empty = self.devs[dev as usize].vhost.tx.step(VhostEvent::Empty { now_ns: until_ns });
                    }
                    let d = &mut self.devs[dev as usize];
                    if empty == VhostAction::EnableNotifyAndRecheck {
                        d.txq.enable_kicks();
                        let has_work = d.txq.pending() > 0;
                        if d.vhost.tx.step(VhostEvent::Recheck { has_work }) == VhostAction::DisableNotifyAndDrain {
                            d.txq.kick.device_disable();
                            return self.vhost_next(now, dev, q);
                        }
                    }
                }
                // Weight exhausted (requeued, kicks still disabled) or ring empty: RX's turn.
                self.start_handler(dev, Handler::Rx);
                self.vhost_next(now, dev, q)
            }
            Handler::Rx => {
                if self.devs[dev as usize].vhost.rx.state() != VhostState::Requeued {
                    if let Some((w, cost)) = self.take_rx(dev) {
                        self.devs[dev as usize].vhost.current = Some(w);
                        q.at(now + cost, Ev::VhostDone { dev });
                        return;
                    }
                }
                let d = &mut self.devs[dev as usize];
                if d.vhost.rx.state() != VhostState::Requeued {
                    if d.rx_sock.is_empty() {
                        d.vhost.rx.step(VhostEvent::SourceEmpty);
                    } else if d.vhost.rx.step(VhostEvent::Empty { now_ns: now }) == VhostAction::EnableNotifyAndRecheck {
                        // No guest buffer: wait for the guest's refill kick.
                        d.rxq.enable_kicks();
                        let has_work = d.rxq.posted > 0;
                        if d.vhost.rx.step(VhostEvent::Recheck { has_work }) == VhostAction::DisableNotifyAndDrain {
                            d.rxq.kick.device_disable();
                            return self.vhost_next(now, dev, q);
                        }
                    }
                }
                // Packets left: handle them (a handler stopped at its weight is requeued, as
                // `vhost_poll_queue` does, so an empty ring still gets its refill
                // notification enabled on the next pass instead of the thread sleeping deaf).
                let rx_requeued = d.vhost.rx.state() == VhostState::Requeued;
                let rx_more = !d.rx_sock.is_empty() && (d.rxq.posted > 0 || rx_requeued);
                // TX work left, or a TX handler that stopped at its weight runs again.
                if d.txq.pending() > 0 || d.vhost.tx.state() == VhostState::Requeued {
                    self.start_handler(dev, Handler::Tx);
                    return self.vhost_next(now, dev, q);
                }
                if rx_more {
                    self.start_handler(dev, Handler::Rx);
                    return self.vhost_next(now, dev, q);
                }
                let d = &mut self.devs[dev as usize];
                d.vhost.running = false;
                d.vhost.busy.set(now, false);
                self.tr_vhost(now, dev, false);
                let cpu = self.cpu_of(self.vhost_tid(dev));
                self.leave_cpu(now, cpu, true, q);
            }
        }
    }

    /// New work while the thread busy-polls: it sees it now.
    pub(crate) fn vhost_poll_notice(&mut self, now: Time, dev: u32, q: &mut EventQueue<Ev>) {
        let v = &mut self.devs[dev as usize].vhost;
        if v.polling {
            v.polling = false;
            v.poll_gen = v.poll_gen.wrapping_add(1);
            q.at(now, Ev::VhostPoll { dev, gen: v.poll_gen });
        }
    }

    /// A poll look (new work, or the window's end): carry on with the handler loop.
    pub(crate) fn vhost_poll(&mut self, now: Time, dev: u32, gen: u32, q: &mut EventQueue<Ev>) {
        let v = &mut self.devs[dev as usize].vhost;
        if v.poll_gen != gen {
            return;
        }
        v.polling = false;
        self.vhost_next(now, dev, q);
    }

    /// One item done: TX hands the buffer to the wire and returns it to the used ring; RX puts
    /// the filled buffer in the used ring. Either may interrupt the guest if it asked.
    pub(crate) fn vhost_done(&mut self, now: Time, dev: u32, q: &mut EventQueue<Ev>) {
        let d = &mut self.devs[dev as usize];
        let Some(w) = d.vhost.current.take() else {
            // The wake-up's own CPU time (`vhost.wakeup_ns`) is over.
            return self.vhost_next(now, dev, q);
        };
        match w {
            Work::Tx(b) => d.vhost.tx.step(VhostEvent::Buffer { bytes: b.bytes as u64 }),
            Work::Rx(pkt) => d.vhost.rx.step(VhostEvent::Buffer { bytes: pkt.bytes as u64 }),
        };
        self.complete(now, dev, w, q);
        // vhost_worker's need_resched() check: yield between packets, resume the loop later.
        let cpu = self.cpu_of(self.vhost_tid(dev));
        if self.should_yield(cpu) {
            self.devs[dev as usize].vhost.busy.set(now, false);
            self.tr_vhost(now, dev, false);
            return self.leave_cpu(now, cpu, false, q);
        }
        self.vhost_next(now, dev, q);
    }
}

/// The vhost handler loop's parameters (`eventpath_policy::vhost`): profile `p`'s packet and
/// byte weights, the device's busy-polling window.
pub(crate) fn vhost_config(p: &crate::profile::Profile, busyloop_timeout_us: u32) -> VhostConfig {
    VhostConfig { pkt_weight: p.vhost.weight_packets.value as u32, byte_weight: p.vhost.weight_bytes.value as u64, busyloop_timeout_us }
}
