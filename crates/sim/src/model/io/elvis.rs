//! ELVIS fine-grained I/O scheduling in the simulator (ELVIS §2.2, §3): the adapter between an
//! I/O core's thread and `eventpath_policy::elvis::ElvisScheduler`, the machine the KVM
//! testbed's back end runs too (`crates/kvm/src/backend/serve/elvis.rs`, `run_elvis`).
//!
//! Queues are `2 × local` (TX) and `2 × local + 1` (RX), `local` the device's index among the
//! thread's. A kick feeds the policy's rate counter and work queue; `StartPolling` disables the
//! queue's kicks for as long as it is polled (exitless requests). A packet on the tap socket is
//! host-side work for the RX queue. A turn serves one queue until it is empty or the policy says
//! leave (`max_work`, or `min_work` with another queue stuck); a notified queue found empty
//! re-enables kicks and re-checks, as vhost does; a polled one found empty more than
//! `poll_idle_ns` of wall time after its last work goes back to notifications (the prototype's
//! rule; the testbed's adapter applies the same, whatever the VM's number of vCPUs).

use crate::model::io::queues::{DevRings, Notice, Notified, Work};
use crate::model::io::seam::{per_group, Backend, Decision, Take, Turn, TurnMode, View};
use crate::config::IoHandling;
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

impl Backend for ElvisIo {
    /// Work arrived for the thread's device `local`.
    fn notice<R: DevRings + ?Sized>(&mut self, now: Time, local: usize, dev: u32, n: Notice, v: &mut View<'_, R>) {
        match n {
            Notice::TxKick => {
                if self.sched.on_kick(queue(local, false), now) == ModeChange::StartPolling {
                    v.rings.tx(dev).disable_notification();
                }
            }
            Notice::RxKick => {
                if self.sched.on_kick(queue(local, true), now) == ModeChange::StartPolling {
                    v.rings.rx(dev).disable_notification();
                }
            }
            Notice::RxPacket => self.sched.on_host_work(queue(local, true), now),
        }
    }

    /// The next queue to serve, or sleep (both of the policy's queues are empty).
    fn decide<R: DevRings + ?Sized>(&mut self, now: Time, devs: &[u32], v: &mut View<'_, R>) -> Decision {
        let ElvisDecision::Serve(qid, _) = self.sched.next(now) else { return Decision::Sleep { until: None, notice: true, write: false } };
        let polled = matches!(self.sched.mode(qid), Some(QueueMode::Polled { .. }));
        let (local, rx) = (qid / 2, qid % 2 == 1);
        // No kicks while the queue is served (a polled queue has them off already).
        if rx {
            v.rings.rx(devs[local]).disable_notification();
        } else {
            v.rings.tx(devs[local]).disable_notification();
        }
        Decision::Turn(Turn { local, rx, taken: 0, mode: TurnMode::Elvis(polled) })
    }

    /// The turn's next item, or `End` when its queue is empty.
    fn take<R: DevRings + ?Sized>(&mut self, now: Time, turn: Turn, dev: u32, v: &mut View<'_, R>) -> Take {
        let item = if turn.rx { v.costs.take_rx(v.rings, dev, v.socket) } else { v.costs.take_tx(v.rings, dev, v.socket) };
        if let Some((w, cost)) = item {
            return Take::Item(w, cost);
        }
        let change = self.sched.on_empty(now);
        let TurnMode::Elvis(polled) = turn.mode else { return Take::End };
        if polled && change != ModeChange::StopPolling {
            return Take::End;
        }
        // Notification mode: re-enable kicks; the ring says whether work raced the re-enable
        // (it sends no kick).
        let raced = if turn.rx {
            // Only a ring without guest buffers needs the refill kick (vhost's RX handler).
            !v.rings.sock(dev).is_empty() && v.rings.rx(dev).enable_notification()
        } else {
            v.rings.tx(dev).enable_notification()
        };
        if raced {
            self.sched.on_host_work(queue(turn.local, turn.rx), now);
        }
        Take::End
    }

    /// An item of the current turn is done: the policy says whether to stay on the queue.
    fn after_item<R: DevRings + ?Sized>(&mut self, now: Time, _turn: Turn, _dev: u32, _w: Work, _v: &mut View<'_, R>) -> bool {
        self.sched.on_request(now) == ServeAction::Leave
    }
}

/// ELVIS's prototype: each worker filled with `devices_per_worker` of the devices `devs`, in
/// order (the workers pinned to the I/O cores in turn).
pub(crate) fn threads(io: &IoHandling, devs: &[u32]) -> Vec<(String, Vec<u32>, ElvisIo)> {
    let cfg = io.elvis();
    let groups = eventpath_policy::elvis::assign_workers(devs.len(), cfg.devices_per_worker);
    per_group(&groups, devs, |g, mine| (format!("elvis-io{g}"), ElvisIo::new(cfg.clone(), mine.len())))
}

fn queue(local: usize, rx: bool) -> usize {
    2 * local + usize::from(rx)
}
