//! A poll-mode back end (`[host.io] handling = "pmd"`): vhost-user served by DPDK-style PMD
//! threads, the production descendant of ELVIS's sidecores (OVS-DPDK). The adapter of
//! `eventpath_policy::pmd::PmdThread`.
//!
//! One thread per dedicated core (`[host.io] cores`) serves its devices' queues, each device's
//! TX queue (the guest's transmissions) then its RX queue (the tap's packets into the guest's
//! buffers), up to a burst from each per *iteration*; an empty look at a queue costs
//! `vhost.poll_ns`. It never asks for a notification: it turns the guest's kicks off for good
//! when it starts, so the guest never exits to notify it (interrupts to the guest are still
//! signalled, as vhost-user's callfd does). After each iteration the policy decides: poll
//! again; sleep (OVS-DPDK's load-based sleep, a timer only: packets do not end it); or wait
//! until a queue is written (DPDK monitor mode). A busy PMD whose iteration found nothing spins
//! without looking again until work is written — what it would find by polling, at no
//! simulation cost — and stays 100 % busy either way.
//!
//! Per-packet costs are the profile's vhost ones (a vhost-user PMD's own costs are not in the
//! profiles yet).

use crate::model::io::queues::{DevRings, Notice, Notified, Work};
use crate::model::io::seam::{per_group, Backend, Decision, Take, Turn, TurnMode, View};
use crate::config::IoHandling;
use crate::engine::Time;
use eventpath_policy::pmd::{PmdConfig, PmdDecision, PmdIdle, PmdThread};

/// One PMD thread's state.
pub(crate) struct PmdIo {
    pmd: PmdThread,
    busy: bool,
    /// Queues polled: `2 × devices` (TX, RX of each).
    queues: usize,
    /// The next queue of this iteration.
    cursor: usize,
    /// The most packets a queue gave in this iteration.
    most: u32,
    /// Kicks have been turned off (at its first decision).
    started: bool,
}

impl PmdIo {
    /// A PMD thread for `n` devices.
    pub fn new(cfg: &PmdConfig, n: usize) -> Self {
        PmdIo { pmd: PmdThread::new(cfg), busy: cfg.idle == PmdIdle::Busy, queues: 2 * n, cursor: 0, most: 0, started: false }
    }

}

impl Backend for PmdIo {
    /// Notices need nothing listed: it looks at every queue anyway.
    fn notice<R: DevRings + ?Sized>(&mut self, _now: Time, _local: usize, _dev: u32, _n: Notice, _v: &mut View<'_, R>) {}

    /// The next queue of the iteration, or — the iteration over — the policy's decision.
    fn decide<R: DevRings + ?Sized>(&mut self, now: Time, devs: &[u32], v: &mut View<'_, R>) -> Decision {
        if !std::mem::replace(&mut self.started, true) {
            for &d in devs {
                v.rings.tx(d).disable_notification();
                v.rings.rx(d).disable_notification();
            }
        }
        if self.queues == 0 {
            return Decision::Sleep { until: None, notice: false, write: false };
        }
        if self.cursor == self.queues {
            self.cursor = 0;
            let most = std::mem::take(&mut self.most);
            match self.pmd.after_iteration(most) {
                PmdDecision::PollAgain if self.busy && most == 0 => return Decision::Spin(None),
                PmdDecision::PollAgain => {}
                PmdDecision::Sleep { ns } => return Decision::Sleep { until: Some(now + ns), notice: false, write: false },
                PmdDecision::WaitForWork => return Decision::Sleep { until: None, notice: true, write: true },
            }
        }
        let q = self.cursor;
        self.cursor += 1;
        Decision::Turn(Turn { local: q / 2, rx: q % 2 == 1, taken: 0, mode: TurnMode::Plain })
    }

    /// Up to a burst from the turn's queue.
    fn take<R: DevRings + ?Sized>(&mut self, _now: Time, turn: Turn, dev: u32, v: &mut View<'_, R>) -> Take {
        if turn.taken < self.pmd.burst() {
            let item = if turn.rx { v.costs.take_rx(v.rings, dev, v.socket) } else { v.costs.take_tx(v.rings, dev, v.socket) };
            if let Some((w, cost)) = item {
                return Take::Item(w, cost);
            }
        }
        self.most = self.most.max(turn.taken);
        Take::End
    }

    fn after_item<R: DevRings + ?Sized>(&mut self, _now: Time, _turn: Turn, _dev: u32, _w: Work, _v: &mut View<'_, R>) -> bool {
        false
    }

    /// It spins on, or monitors, every ring.
    fn sees_write(&self, _n: Notice) -> bool {
        true
    }

    /// It polls from the start.
    fn runs_from_start(&self) -> bool {
        true
    }

    /// Its own driver writes the NIC: no host network stack per TX buffer.
    fn kernel_path(&self) -> bool {
        false
    }
}

/// One PMD thread per dedicated core (`[host.io] cores`), the devices `devs` split in
/// contiguous, balanced groups.
pub(crate) fn threads(io: &IoHandling, devs: &[u32]) -> Vec<(String, Vec<u32>, PmdIo)> {
    let cores = io.cores.as_deref().unwrap_or_default().len();
    let per_thread = devs.len().div_ceil(cores.max(1)).max(1) as u32;
    let cfg = io.pmd();
    let groups = eventpath_policy::es2::combine_devices(devs.len(), per_thread);
    per_group(&groups, devs, |g, mine| (format!("pmd{g}"), PmdIo::new(&cfg, mine.len())))
}
