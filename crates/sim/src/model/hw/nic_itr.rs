//! The physical NICs' receive interrupt throttle (ITR, ethtool `rx-usecs`), on the host's port
//! and on the client machine: the simulator's adapter of `eventpath_policy`'s [`Throttle`] (the
//! same decision FIR moderation of a device queue uses). A frame that arrives within the
//! minimum gap after the queue's last interrupt waits for the next one, and every frame that
//! arrives meanwhile is received by the same NAPI poll — the batching that lets GRO merge a
//! flow's segments (the client's ACK coalescing) and lets one vhost wake-up carry several
//! frames. Gap 0: off, every frame interrupts on arrival.
//!
//! The gap is fixed, or the driver's adaptive ITR chooses it ([`NicItrDriver`]: ixgbe's
//! `ixgbe_set_itr`, i40e's `i40e_set_new_dynamic_itr`). The adaptive policy is fed what the
//! driver's NAPI poll counts — the frames each interrupt received and the frames the queue
//! pair's TX ring completed, by their length as the driver counts it (`skb->len`: the
//! Ethernet header and the IP packet) — and is told of each NAPI completion; the interval it
//! returns applies from the next interrupt on. A completion is reported when the next
//! interrupt opens (the first frame after the last one fired): by then no frame can join the
//! batch it received, and no decision has used the gap in between.

use crate::engine::{round_ns, Time};
use eventpath_policy::moderation::{AdaptiveItr, InterruptModerator, IrqDecision, NicItrDriver, Throttle};

/// `ETH_HLEN`: the Ethernet header, the part of a frame's wire overhead a driver counts.
const ETH_HLEN: u32 = 14;

/// One receive queue's throttle (None: off).
#[derive(Debug, Clone)]
pub struct RxItr {
    t: Option<Throttle>,
    /// The driver's adaptive ITR, if it runs one.
    adaptive: Option<AdaptiveItr>,
    /// An interrupt fired whose NAPI completion the adaptive policy has not been told of.
    completion_due: bool,
    /// Wire bytes per frame beyond the IP packet (preamble, header, FCS, gap).
    wire_overhead: u32,
    /// Interrupts raised (window).
    pub irqs: u64,
}

/// What a frame arriving at the client's NIC does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// It interrupts now: receive it at once.
    Now,
    /// It waits for an interrupt the caller must schedule at this time ([`RxItr::deadline`]).
    Wait(Time),
    /// It joins the frames waiting for the interrupt already scheduled.
    Join,
}

impl RxItr {
    /// A fixed throttle with a minimum gap of `gap_ns` (a profile value; 0 = off).
    pub fn new(gap_ns: f64) -> Self {
        let gap = round_ns(gap_ns);
        RxItr { t: (gap > 0).then(|| Throttle::with_gap_ns(gap)), adaptive: None, completion_due: false, wire_overhead: 0, irqs: 0 }
    }

    /// A physical NIC's throttle as its `driver` runs it: fixed at `gap_ns`, or adaptive
    /// starting there (the profile checked it lies in the driver's range); 0 = off either way
    /// (ethtool `rx-usecs 0` turns adaptation off too). `wire_overhead` is the profile's
    /// per-frame wire overhead, so that frames given by their wire bytes count as the driver
    /// counts them.
    pub fn for_nic(driver: NicItrDriver, gap_ns: f64, wire_overhead: u32) -> Self {
        let mut r = Self::new(gap_ns);
        r.wire_overhead = wire_overhead;
        if let Some(t) = &r.t {
            r.adaptive = driver.adaptive(t.gap_ns());
            if let Some(a) = &r.adaptive {
                // The register's granularity: the throttle runs the interval the NIC holds.
                let gap = a.interval_ns();
                r.t = Some(Throttle::with_gap_ns(gap));
            }
        }
        r
    }

    /// A new minimum gap (ns), from the next interrupt on (a driver rewriting EITR).
    pub fn set_gap_ns(&mut self, gap_ns: u64) {
        match &mut self.t {
            Some(t) => t.set_gap_ns(gap_ns),
            None => self.t = Some(Throttle::with_gap_ns(gap_ns)),
        }
    }

    /// The queue pair's TX ring completed `segs` frames of `wire_bytes` in all (a TSO skb's
    /// segments: the drivers count `gso_segs` packets and every segment's bytes; an adaptive
    /// driver counts them with the RX ring's, a fixed one ignores them).
    pub fn on_tx(&mut self, wire_bytes: u32, segs: u16) {
        let len = self.frame_len(wire_bytes, segs);
        if let Some(a) = &mut self.adaptive {
            a.on_tx(u64::from(segs), len);
        }
    }

    /// The driver's length of `segs` frames of `wire_bytes` on the wire: Ethernet header and
    /// IP packet each.
    fn frame_len(&self, wire_bytes: u32, segs: u16) -> u64 {
        let segs = u32::from(segs);
        u64::from(wire_bytes.saturating_sub(self.wire_overhead * segs) + ETH_HLEN * segs)
    }

    /// A frame of `wire_bytes` opens a new interrupt: the last one's NAPI completion comes
    /// first (its new interval applies to this one), then the frame is counted.
    fn open_interrupt(&mut self, wire_bytes: u32, segs: u16) {
        let len = self.frame_len(wire_bytes, segs);
        let Some(a) = &mut self.adaptive else { return };
        if std::mem::replace(&mut self.completion_due, true) {
            if let (Some(gap), Some(t)) = (a.on_napi_complete(), &mut self.t) {
                t.set_gap_ns(gap);
            }
        }
        a.on_rx(u64::from(segs), len);
    }

    /// A frame joins the interrupt already opened: counted in its batch.
    fn join(&mut self, wire_bytes: u32, segs: u16) {
        let len = self.frame_len(wire_bytes, segs);
        if let Some(a) = &mut self.adaptive {
            a.on_rx(u64::from(segs), len);
        }
    }

    /// The time of the interrupt that receives a frame of `wire_bytes` arriving at `at`, for
    /// frames fed in order of arrival ahead of time (the host's port: its reverse link is
    /// FIFO, so each frame's arrival is known, in order, when the client sends it).
    pub fn irq_for(&mut self, at: Time, wire_bytes: u32) -> Time {
        if self.t.is_none() {
            self.irqs += 1;
            return at;
        }
        if let Some(d) = self.t.as_ref().and_then(Throttle::deadline_ns) {
            if d >= at {
                self.join(wire_bytes, 1);
                return d;
            }
            if let Some(t) = &mut self.t {
                t.on_deadline(d);
            }
        }
        self.irqs += 1;
        self.open_interrupt(wire_bytes, 1);
        let t = self.t.as_mut().expect("a throttle");
        match t.on_event(at, 1, 0) {
            IrqDecision::FireNow => at,
            IrqDecision::DelayUntil(d) => d,
            IrqDecision::Coalesced => unreachable!("no deadline was armed"),
        }
    }

    /// A frame of `wire_bytes` arrived at `now` (the client's NIC, event by event).
    pub fn receive(&mut self, now: Time, wire_bytes: u32, segs: u16) -> Arrival {
        match self.t.as_ref().map(Throttle::deadline_ns) {
            None => {}
            Some(None) => self.open_interrupt(wire_bytes, segs),
            Some(Some(_)) => self.join(wire_bytes, segs),
        }
        self.arrive(now)
    }

    /// A cause arrived at `now` with nothing to count (an SR-IOV VF's write-back: its
    /// driver's own dynamic throttle counts the frames).
    pub fn arrive(&mut self, now: Time) -> Arrival {
        let Some(t) = &mut self.t else {
            self.irqs += 1;
            return Arrival::Now;
        };
        match t.on_event(now, 1, 0) {
            IrqDecision::FireNow => {
                self.irqs += 1;
                Arrival::Now
            }
            IrqDecision::DelayUntil(d) => Arrival::Wait(d),
            IrqDecision::Coalesced => Arrival::Join,
        }
    }

    /// The scheduled interrupt's time came: true when it fires (the waiting frames are
    /// received now).
    pub fn deadline(&mut self, now: Time) -> bool {
        let fired = self.t.as_mut().is_some_and(|t| t.on_deadline(now));
        self.irqs += fired as u64;
        fired
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_interrupts_for_every_frame() {
        let mut r = RxItr::new(0.0);
        assert_eq!(r.irq_for(5, 100), 5);
        assert_eq!(r.arrive(6), Arrival::Now);
        assert_eq!(r.irqs, 2);
    }

    #[test]
    fn frames_known_ahead_share_the_next_interrupt() {
        let mut r = RxItr::new(50_000.0);
        assert_eq!(r.irq_for(1_000, 100), 1_000, "first frame after a quiet period fires at once");
        assert_eq!(r.irq_for(2_000, 100), 51_000, "inside the gap: waits for the next interrupt");
        assert_eq!(r.irq_for(40_000, 100), 51_000, "joins it");
        assert_eq!(r.irq_for(51_000, 100), 51_000, "arrives as it fires: same poll");
        assert_eq!(r.irq_for(60_000, 100), 101_000, "after it: the gap counts from 51 us");
        assert_eq!(r.irq_for(500_000, 100), 500_000);
        assert_eq!(r.irqs, 4);
    }

    #[test]
    fn frames_event_by_event_wait_join_and_fire() {
        let mut r = RxItr::new(50_000.0);
        assert_eq!(r.arrive(0), Arrival::Now);
        assert_eq!(r.arrive(10_000), Arrival::Wait(50_000));
        assert_eq!(r.arrive(20_000), Arrival::Join);
        assert!(!r.deadline(49_999));
        assert!(r.deadline(50_000));
        assert_eq!(r.arrive(60_000), Arrival::Wait(100_000));
        assert_eq!(r.irqs, 2);
    }
}
