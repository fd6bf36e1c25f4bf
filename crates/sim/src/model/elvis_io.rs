//! ELVIS fine-grained I/O scheduling in the simulator (ELVIS §2.2, §3): the adapter between an
//! I/O core's thread (`iothread.rs`) and `eventpath_policy::elvis::ElvisScheduler`, the machine
//! the KVM testbed's backend runs too (`crates/kvm/src/backend/serve/elvis.rs`, `run_elvis`).
//!
//! Queues are `2 × local` (TX) and `2 × local + 1` (RX), `local` the device's index among the
//! thread's. A kick feeds the policy's rate counter and work queue; `StartPolling` disables the
//! queue's kicks for as long as it is polled (exitless requests). A packet on the tap socket is
//! host-side work for the RX queue. A turn serves one queue until it is empty or the policy says
//! leave (`max_work`, or `min_work` with another queue stuck); a notified queue found empty
//! re-enables kicks and re-checks, as vhost does; a polled one found empty for `poll_idle_ns`
//! of its producers' run time (the VM's vCPU threads: a descheduled vCPU issues nothing without
//! its activity having subsided) goes back to notifications.

use super::iothread::{Decision, IoPolicy, Turn, TurnMode};
use super::sched::Scheduler;
use super::vhost::{Notice, Work};
use super::Host;
use crate::engine::Time;
use eventpath_policy::elvis::{ElvisConfig, ElvisDecision, ElvisScheduler, ModeChange, QueueMode, ServeAction};

/// The ELVIS state of one I/O core's thread.
pub(crate) struct ElvisIo {
    sched: ElvisScheduler,
}

impl ElvisIo {
    /// An I/O thread for `n` devices.
    pub fn new(cfg: ElvisConfig, n: usize) -> Self {
        ElvisIo { sched: ElvisScheduler::new(cfg, 2 * n) }
    }
}

impl Scheduler {
    /// ELVIS's producer run clock in the simulator, the observation this adapter gives
    /// `ElvisScheduler::on_empty`: the summed lifetime run time of host threads `vcpus` (a VM's
    /// vCPU threads) at `now`, exact (`sum_exec_runtime` plus the running stint). Public so
    /// that the testbed's two-worlds test (`crates/kvm/tests/elvis_two_worlds.rs`) drives the
    /// policy through the same conversion as the simulator.
    pub fn producers_run_ns(&self, now: Time, vcpus: &[u32]) -> u64 {
        vcpus.iter().map(|&v| self.run_and_delay(now, v).0).sum()
    }
}

fn queue(local: usize, rx: bool) -> usize {
    2 * local + usize::from(rx)
}

impl Host {
    fn elvis(&mut self, t: u32) -> &mut ElvisScheduler {
        match &mut self.io[t as usize].policy {
            IoPolicy::Elvis(e) => &mut e.sched,
            IoPolicy::Es2(_) => unreachable!("thread {t} is not an ELVIS I/O thread"),
        }
    }

    /// Work arrived for the thread's device `local`.
    pub(crate) fn elvis_notice(&mut self, now: Time, t: u32, local: usize, n: Notice) {
        let dev = self.io[t as usize].devs[local] as usize;
        match n {
            Notice::TxKick => {
                if self.elvis(t).on_kick(queue(local, false), now) == ModeChange::StartPolling {
                    self.devs[dev].txq.kick.device_disable();
                }
            }
            Notice::RxKick => {
                if self.elvis(t).on_kick(queue(local, true), now) == ModeChange::StartPolling {
                    self.devs[dev].rxq.kick.device_disable();
                }
            }
            Notice::RxPacket => self.elvis(t).on_host_work(queue(local, true), now),
        }
    }

    /// The next queue to serve, or sleep (both of the policy's queues are empty).
    pub(crate) fn elvis_decide(&mut self, now: Time, t: u32) -> Decision {
        let ElvisDecision::Serve(qid, _) = self.elvis(t).next(now) else { return Decision::Sleep(None) };
        let polled = matches!(self.elvis(t).mode(qid), Some(QueueMode::Polled { .. }));
        let (local, rx) = (qid / 2, qid % 2 == 1);
        let d = &mut self.devs[self.io[t as usize].devs[local] as usize];
        // No kicks while the queue is served (a polled queue has them off already).
        if rx {
            d.rxq.kick.device_disable();
        } else {
            d.txq.kick.device_disable();
        }
        Decision::Turn(Turn { local, rx, taken: 0, mode: TurnMode::Elvis(polled) })
    }

    /// The turn's next item, or `None` when its queue is empty (the turn ends).
    pub(crate) fn elvis_take(&mut self, now: Time, t: u32, turn: Turn) -> Option<(Work, Time)> {
        let dev = self.io[t as usize].devs[turn.local];
        let item = if turn.rx { self.take_rx(dev) } else { self.take_tx(dev) };
        if item.is_some() {
            return item;
        }
        let vm = self.devs[dev as usize].vm as usize;
        // The producers' run clock is read only when the policy asks (a polled queue): an empty
        // poll is the I/O core's most frequent step.
        let (sched, vcpus) = (&self.sched, &self.vms[vm].vcpus);
        let IoPolicy::Elvis(e) = &mut self.io[t as usize].policy else { unreachable!("thread {t} is not an ELVIS I/O thread") };
        let change = e.sched.on_empty(now, || sched.producers_run_ns(now, vcpus));
        let TurnMode::Elvis(polled) = turn.mode else { return None };
        if polled && change != ModeChange::StopPolling {
            return None;
        }
        // Notification mode: re-enable kicks, then re-check (work that raced the re-enable
        // sends no kick).
        let qid = queue(turn.local, turn.rx);
        let d = &mut self.devs[dev as usize];
        let raced = if turn.rx {
            // Only a ring without guest buffers needs the refill kick (vhost's RX handler).
            if d.rx_sock.is_empty() {
                false
            } else {
                d.rxq.enable_kicks();
                d.rxq.posted > 0
            }
        } else {
            d.txq.enable_kicks();
            d.txq.pending() > 0
        };
        if raced {
            self.elvis(t).on_host_work(qid, now);
        }
        None
    }

    /// An item of the current turn is done: the policy says whether to stay on the queue.
    pub(crate) fn elvis_after_item(&mut self, now: Time, t: u32) {
        if self.elvis(t).on_request(now) == ServeAction::Leave {
            self.io[t as usize].end_turn();
        }
    }
}
