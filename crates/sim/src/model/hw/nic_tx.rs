//! The host NIC's transmit side (DESIGN §3.2): one TX queue per device — a multi-queue NIC's
//! queue of a virtio-net device's traffic, or an SR-IOV VF's own queue — and the NIC's
//! transmit arbiter, which serves the queues that have a frame in turn, one frame at a time at
//! line rate (round robin: the 82599 and XL710 data sheets' transmit arbitration without DCB).
//! A TSO skb is one item here but many frames on the wire, so the arbiter is deficit round
//! robin with a quantum of one full-sized frame (Shreedhar and Varghese, SIGCOMM '95): a queue
//! of 64 KB skbs gets the link's bytes at the rate of a queue of MTU frames, not 45 times it —
//! the share the NIC gives when it interleaves the queues' segments. For items of at most one
//! frame it is plain round robin.
//!
//! Why not one FIFO: with a FIFO, a device whose flow hands the NIC its whole TCP window at
//! once (megabytes) holds the link for the time that window takes, and every other device's
//! frames wait behind it; 256 such flows on one port made flows go without a delivered frame
//! for 60+ ms. Round robin gives each backlogged queue one frame per turn, so a flow's share
//! of the link is continuous. Only the frame being serialized is an event in the future-event
//! set: the heap holds one event for the whole port however many frames wait.

use crate::model::hw::virtq::Buf;
use crate::engine::{round_ns, Time};
use crate::profile::Profile;
use std::collections::VecDeque;

/// One device's TX queue on the NIC: its frames (with their wire bytes), oldest first; the
/// head is being serialized when the port's arbiter chose this queue.
#[derive(Debug, Default)]
struct TxQueue {
    frames: VecDeque<(Buf, u32)>,
    /// Wire bytes of the frames in `frames`.
    bytes: u64,
    /// Bytes this queue may still send in its turns (DRR's deficit counter).
    deficit: u64,
}

/// The NIC's transmit arbiter over every device's TX queue.
#[derive(Debug)]
pub struct TxPort {
    ns_per_byte: f64,
    /// DRR quantum: one full-sized frame's wire bytes.
    quantum: u64,
    /// When the frame being serialized ends, in exact (fractional) ns: rounding each frame's
    /// time would make a busy link faster or slower than line rate.
    free_at: f64,
    queues: Vec<TxQueue>,
    /// Queues with a frame waiting, in the order the arbiter serves them (not the one being
    /// serialized, which rejoins at the back if it has more).
    ready: VecDeque<u32>,
    /// The queue whose head frame is on the wire.
    busy: Option<u32>,
    /// Frames handed to the port, of every device (lifetime; a UDP datagram's IP fragments
    /// count once). Conservation: = Σ over devices of (delivered + still queued).
    pub packets_life: u64,
}

impl TxPort {
    /// A port of the profile's line rate with `devices` TX queues.
    pub fn new(p: &Profile, devices: usize) -> Self {
        TxPort {
            ns_per_byte: 8.0 / p.nic.gbps.value,
            quantum: (p.nic.mtu_bytes.value + p.nic.wire_overhead_bytes.value) as u64,
            free_at: 0.0,
            queues: (0..devices).map(|_| TxQueue::default()).collect(),
            ready: VecDeque::new(),
            busy: None,
            packets_life: 0,
        }
    }

    /// Wire bytes of device `dev`'s frames not yet delivered (being serialized included).
    pub fn queued_bytes(&self, dev: u32) -> u64 {
        self.queues[dev as usize].bytes
    }

    /// Device `dev`'s frames not yet delivered.
    pub fn in_flight(&self, dev: u32) -> usize {
        self.queues[dev as usize].frames.len()
    }

    /// Queue device `dev`'s frame of `wire_bytes` at `now`. Returns when it is delivered if
    /// the link was idle and it starts now (the caller schedules that `WireDone`); otherwise
    /// the arbiter reaches it in turn.
    pub fn push(&mut self, now: Time, dev: u32, b: Buf, wire_bytes: u32) -> Option<Time> {
        let q = &mut self.queues[dev as usize];
        let was_empty = q.frames.is_empty();
        q.frames.push_back((b, wire_bytes));
        q.bytes += u64::from(wire_bytes);
        self.packets_life += 1;
        if self.busy.is_none() {
            return Some(self.start(now, dev));
        }
        if was_empty {
            // A queue that has frames is either on the wire or already waiting its turn.
            self.ready.push_back(dev);
        }
        None
    }

    /// Device `dev`'s head frame has been serialized at `now` (its `WireDone`): it leaves the
    /// port. Returns it, and the next queue served with the time its frame is done.
    pub fn finish(&mut self, now: Time, dev: u32) -> (Buf, Option<(u32, Time)>) {
        debug_assert_eq!(self.busy, Some(dev), "WireDone of a queue not on the wire");
        let q = &mut self.queues[dev as usize];
        let (b, bytes) = q.frames.pop_front().expect("WireDone without a frame");
        q.bytes -= u64::from(bytes);
        if q.frames.is_empty() {
            q.deficit = 0;
        } else {
            self.ready.push_back(dev);
        }
        self.busy = None;
        let next = self.next_turn().map(|d| (d, self.start(now, d)));
        (b, next)
    }

    /// The queue whose head frame goes next: each queue in turn adds a quantum to its deficit
    /// and sends its head if the deficit covers it, else waits for its next turn.
    fn next_turn(&mut self) -> Option<u32> {
        loop {
            let d = self.ready.pop_front()?;
            let q = &mut self.queues[d as usize];
            let head = u64::from(q.frames.front().expect("a ready queue has a frame").1);
            if q.deficit < head {
                q.deficit += self.quantum;
            }
            if q.deficit >= head || self.ready.is_empty() {
                q.deficit = q.deficit.saturating_sub(head);
                return Some(d);
            }
            self.ready.push_back(d);
        }
    }

    /// Start serializing `dev`'s head frame at `now`; returns when it is done.
    fn start(&mut self, now: Time, dev: u32) -> Time {
        let (_, bytes) = *self.queues[dev as usize].frames.front().expect("a queue to serve has a frame");
        self.busy = Some(dev);
        self.free_at = self.free_at.max(now as f64) + f64::from(bytes) * self.ns_per_byte;
        round_ns(self.free_at).max(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Run the port to empty from `now`, returning (device, delivery time) in order.
    fn drain(p: &mut TxPort, mut next: Option<(u32, Time)>) -> Vec<(u32, Time)> {
        let mut out = Vec::new();
        while let Some((d, t)) = next {
            out.push((d, t));
            next = p.finish(t, d).1;
        }
        out
    }

    fn port() -> TxPort {
        let mut p = Profile::load("es2").unwrap();
        p.nic.gbps.value = 8.0; // 1 ns per byte
        TxPort::new(&p, 3)
    }

    #[test]
    fn one_device_is_served_fifo_at_line_rate() {
        let mut p = port();
        let first = p.push(0, 0, Buf::new(1, 0), 1000).map(|t| (0, t));
        for i in 1..4 {
            assert_eq!(p.push(0, 0, Buf::new(1, i), 1000), None);
        }
        assert_eq!(drain(&mut p, first), vec![(0, 1000), (0, 2000), (0, 3000), (0, 4000)]);
        assert_eq!(p.in_flight(0), 0);
        assert_eq!(p.packets_life, 4);
    }

    #[test]
    fn backlogged_devices_take_turns_one_frame_each() {
        let mut p = port();
        // Device 0 hands over its whole window first; 1 and 2 one frame each just after.
        let first = p.push(0, 0, Buf::new(1, 0), 1000).map(|t| (0, t));
        for _ in 0..3 {
            p.push(0, 0, Buf::new(1, 0), 1000);
        }
        p.push(1, 1, Buf::new(1, 1), 1000);
        p.push(1, 2, Buf::new(1, 1), 500);
        let order: Vec<u32> = drain(&mut p, first).into_iter().map(|(d, _)| d).collect();
        // A FIFO would give 0 0 0 0 1 2.
        assert_eq!(order, vec![0, 1, 2, 0, 0, 0]);
    }

    #[test]
    fn an_idle_gap_restarts_the_link_at_the_new_frame() {
        let mut p = port();
        let t = p.push(0, 0, Buf::new(1, 0), 100).unwrap();
        assert_eq!(t, 100);
        assert_eq!(p.finish(t, 0).1, None);
        assert_eq!(p.push(5000, 2, Buf::new(1, 0), 100), Some(5100));
        assert_eq!(p.queued_bytes(2), 100);
    }
}
