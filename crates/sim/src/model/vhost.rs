//! The vhost-net TX handler thread (one per device, "Baseline" in ELVIS §2.1): woken by the
//! guest's kick through an ioeventfd, it disables notifications, transmits available
//! buffers up to its weight, re-enables notifications and re-checks before sleeping
//! (Linux `handle_tx` in drivers/vhost/net.c).

use super::lapic::Vector;
use super::virtq::Buf;
use super::{Ev, Host};
use crate::engine::{EventQueue, Time};
use crate::metrics::BusyTime;

/// One vhost worker thread.
#[derive(Debug)]
pub struct Vhost {
    /// Thread name (`vhost-<vm>`).
    pub name: String,
    /// pCPU it is pinned to.
    pub pcpu: u32,
    /// In its handler loop (else sleeping on the eventfd).
    pub running: bool,
    /// The buffer being transmitted.
    current: Option<Buf>,
    /// Buffers handled in this handler invocation (for the weight).
    round: u32,
    /// Busy time (window).
    pub busy: BusyTime,
    /// Handler invocations that found the ring empty (window).
    pub empty_polls: u64,
    /// Handler invocations (window).
    pub polls: u64,
}

impl Vhost {
    /// A sleeping vhost thread on `pcpu`.
    pub fn new(name: String, pcpu: u32) -> Self {
        Vhost { name, pcpu, running: false, current: None, round: 0, busy: BusyTime::default(), empty_polls: 0, polls: 0 }
    }

    pub(crate) fn reset_metrics(&mut self, now: Time) {
        self.busy.reset(now);
        self.empty_polls = 0;
        self.polls = 0;
    }
}

impl Host {
    /// The eventfd woke the thread: start the handler unless it already runs (signals merge).
    pub(crate) fn vhost_wake(&mut self, now: Time, dev: u32, q: &mut EventQueue<Ev>) {
        let d = &mut self.devs[dev as usize];
        if d.vhost.running {
            return;
        }
        d.vhost.running = true;
        d.vhost.round = 0;
        d.vhost.polls += 1;
        if d.txq.pending() == 0 {
            d.vhost.empty_polls += 1;
        }
        d.vhost.busy.set(now, true);
        let p = d.vhost.pcpu;
        self.set_pcpu_busy(now, p, true);
        // vhost_disable_notify: the guest need not kick while the handler runs.
        self.devs[dev as usize].txq.notify_enabled = false;
        self.vhost_next(now, dev, q);
    }

    /// Take the next buffer, or re-enable notifications and sleep.
    fn vhost_next(&mut self, now: Time, dev: u32, q: &mut EventQueue<Ev>) {
        let weight = self.profile.vhost.weight_packets.value as u32;
        let (pkt_ns, byte_ns) = (self.profile.vhost.tx_packet_ns.value, self.profile.vhost.tx_byte_ns.value);
        let d = &mut self.devs[dev as usize];
        if d.vhost.round >= weight {
            // Weight exhausted: vhost_poll_queue() requeues the work; on a pCPU of its own the
            // thread picks it up again at once.
            d.vhost.round = 0;
            d.vhost.polls += 1;
        }
        if let Some(b) = d.txq.take() {
            d.vhost.current = Some(b);
            d.vhost.round += 1;
            let cost = (pkt_ns + byte_ns * b.bytes as f64).round() as Time;
            q.at(now + cost, Ev::VhostDone { dev });
            return;
        }
        // vhost_enable_notify, then re-check: a buffer added meanwhile is handled now.
        d.txq.notify_enabled = true;
        if d.txq.pending() > 0 {
            d.txq.notify_enabled = false;
            return self.vhost_next(now, dev, q);
        }
        d.vhost.running = false;
        d.vhost.busy.set(now, false);
        let p = d.vhost.pcpu;
        self.set_pcpu_busy(now, p, false);
    }

    /// One buffer transmitted: return it to the used ring, hand it to the wire, interrupt
    /// the guest if it asked, and go on.
    pub(crate) fn vhost_done(&mut self, now: Time, dev: u32, q: &mut EventQueue<Ev>) {
        let d = &mut self.devs[dev as usize];
        let b = d.vhost.current.take().expect("VhostDone without a buffer");
        d.txq.put_used();
        let arrive = d.wire.send(now, b);
        q.at(arrive, Ev::WireDone { dev });
        if d.txq.interrupt_wanted {
            // One interrupt per request: the driver re-arms when it wants another.
            d.txq.interrupt_wanted = false;
            d.txq.interrupts += 1;
            let vm = d.vm as usize;
            let target = self.vms[vm].vcpus[0];
            self.raise_irq(now, target, Vector::NetTx, q);
        }
        self.vhost_next(now, dev, q);
    }

    pub(crate) fn wire_done(&mut self, now: Time, dev: u32) {
        self.devs[dev as usize].wire.arrive(now);
    }
}
