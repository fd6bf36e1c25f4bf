//! The simulator's ES2 adapter (`es2.rs`) driven from outside the model, over TX rings the
//! driver keeps: the KVM crate's two-worlds test (`crates/kvm/tests/es2_two_worlds.rs`) runs
//! this very adapter and the testbed's `JointAdapter` on one script and asserts the same
//! decisions. Nothing of the model's own runs uses it.
//!
//! It carries out what the I/O-thread mechanism (`thread.rs`) does with the adapter, minus
//! time, costs and the host scheduler (the driver's clock is its own, read through
//! [`TxRings::now_ns`]): the joint thread's next decision; a chosen handler's turn, item by
//! item (`take`, then `after_item` on the item taken) until the adapter ends it. A kick
//! reaches the adapter (`notice`) as soon as no adapter call is under way — in the model, an
//! event between two of the thread's steps: the driver takes in [`TxRings::kicks`] after every
//! call. The devices have no RX queue: no RX handler is ever scheduled.
//!
//! Nothing here decides anything: every decision is `es2.rs`'s.

use super::es2::Es2Io;
use super::queues::{Notice, Notified, Queues, Work};
use super::seam::Take;
use crate::engine::Time;
use crate::model::hw::virtq::Buf;
use crate::config::IoHandling;
use eventpath_policy::es2::JointDecision;
use eventpath_policy::vhost::VhostConfig;

/// A driver's TX rings, guest and clock: what the adapter does to them, as
/// `eventpath_kvm::backend::joint::Rings` is the testbed adapter's.
pub trait TxRings {
    /// Takes device `i`'s next request: its bytes, or `None` if its ring is empty.
    fn take(&mut self, i: usize) -> Option<u64>;
    /// Re-enables `i`'s kicks; true if requests raced the re-enable (no kick comes for them).
    fn enable_kicks(&mut self, i: usize) -> bool;
    /// Suppresses `i`'s kicks.
    fn disable_kicks(&mut self, i: usize);
    /// The devices that kicked since the last look, in the order they kicked.
    fn kicks(&mut self) -> Vec<usize>;
    /// Now, ns.
    fn now_ns(&mut self) -> u64;
}

/// One joint thread's ES2 adapter (`[host.io] handling = "es2"`) over a driver's TX rings.
pub struct Es2Driver {
    io: Es2Io,
    /// vhost's packet weight.
    weight: u32,
}

impl Es2Driver {
    /// A joint thread of `devices` devices under `io` (its `switch` and ES2 keys), whose guests
    /// answer each completion as they would a received packet (a request stream, as
    /// `io/mod.rs` builds it); `vhost` configures the regular handlers (the model takes it from
    /// the profile's `[vhost]`).
    pub fn new(io: &IoHandling, vhost: &VhostConfig, devices: usize) -> Self {
        let (switch, p, o, j) = io.es2();
        Es2Driver { io: Es2Io::new(devices, switch, &p, &o, &j, vhost, vec![true; devices]), weight: vhost.pkt_weight }
    }

    /// What the thread does next, after taking in the kicks that came meanwhile (its wait);
    /// `Run(i, kind)`: device `i`'s TX handler (the adapter's handler `2 × i`).
    pub fn next(&mut self, r: &mut impl TxRings) -> JointDecision {
        self.take_kicks(r);
        match self.io.next(r.now_ns()) {
            JointDecision::Run(h, kind) => {
                assert!(h % 2 == 0, "RX handler {h} scheduled: the driver's devices have no RX queue");
                JointDecision::Run(h / 2, kind)
            }
            d => d,
        }
    }

    /// Device `i`'s turn, chosen by [`Self::next`]: as `thread.rs`'s `IoThread::next` runs it.
    pub fn run(&mut self, i: usize, r: &mut impl TxRings) {
        let dev = i as u32;
        let mut turn = self.io.start(2 * i, dev, &mut self.rings(r));
        self.take_kicks(r);
        loop {
            let now = r.now_ns();
            let took = self.io.take(now, turn, dev, &mut self.rings(r));
            self.take_kicks(r);
            let Take::Item(w, _) = took else { return };
            turn.taken += 1;
            let now = r.now_ns();
            let end = self.io.after_item(now, turn, dev, w, &mut self.rings(r));
            self.take_kicks(r);
            if end {
                return;
            }
        }
    }

    fn rings<'a, R: TxRings>(&self, r: &'a mut R) -> Rings<'a, R> {
        Rings { r, weight: self.weight }
    }

    /// The kicks that came during the last call, each noticed as the model notices it.
    fn take_kicks(&mut self, r: &mut impl TxRings) {
        for i in r.kicks() {
            let now = r.now_ns();
            self.io.notice(now, i, i as u32, Notice::TxKick, &mut Rings { r: &mut *r, weight: self.weight });
        }
    }
}

/// A driver's rings as the adapter's [`Queues`]: each request a buffer of its bytes, costing
/// nothing (the driver's clock prices it); no RX queue, no tap socket.
struct Rings<'a, R> {
    r: &'a mut R,
    weight: u32,
}

impl<R: TxRings> Queues for Rings<'_, R> {
    fn take_tx(&mut self, dev: u32) -> Option<(Work, Time)> {
        let now = self.r.now_ns();
        let bytes = self.r.take(dev as usize)?;
        Some((Work::Tx(Buf::new(bytes as u32, now)), 0))
    }
    fn take_rx(&mut self, _dev: u32) -> Option<(Work, Time)> {
        None
    }
    fn sock_empty(&mut self, _dev: u32) -> bool {
        true
    }
    fn tx_ring(&mut self, dev: u32) -> impl Notified + '_ {
        Kicks { r: &mut *self.r, i: dev as usize }
    }
    fn rx_ring(&mut self, _dev: u32) -> impl Notified + '_ {
        NoRx
    }
    fn weight_packets(&self) -> u32 {
        self.weight
    }
}

/// Device `i`'s TX kicks, turned off and on through the driver.
struct Kicks<'a, R> {
    r: &'a mut R,
    i: usize,
}

impl<R: TxRings> Notified for Kicks<'_, R> {
    fn enable_notification(&mut self) -> bool {
        self.r.enable_kicks(self.i)
    }
    fn disable_notification(&mut self) {
        self.r.disable_kicks(self.i);
    }
}

/// The RX ring a driver's device does not have (no RX handler runs).
struct NoRx;

impl Notified for NoRx {
    fn enable_notification(&mut self) -> bool {
        false
    }
    fn disable_notification(&mut self) {}
}
