//! The client machine's NIC, transmit side (client → host; DESIGN §3.2): what bounds the frames
//! the client's senders queue for the link, and who goes first.
//!
//! Linux on a multi-queue NIC attaches `mq` at the root and one child qdisc per hardware TX
//! queue (`mq_init`); a sender's frames go to its core's queue (XPS), and the NIC's transmit
//! arbiter serves the queues that have a frame in turn (`nic_tx.rs`: deficit round robin with
//! a quantum of one full-sized frame). Device `d`'s flow runs on client core `d mod cores`
//! (`client.cores`), so its frames share a queue only with the flows of that core. Each
//! queue's qdisc is the profile's `client.qdisc`:
//!
//! * `pfifo_fast` — the kernel's default (`net.core.default_qdisc`, and before 3.12 the only
//!   default): one FIFO of at most `txqueuelen` packets (`nic.txqueuelen_packets`).
//! * `fq_codel` — the default of distributions since systemd 217 set it: a queue per flow
//!   served in deficit round robin with a quantum of one frame (`fq_codel_dequeue`), at most
//!   10,240 packets. A flow here is a device's traffic (its connections share one flow queue);
//!   CoDel's drops of packets that waited over 5 ms are not modelled.
//!
//! A packet that finds its queue full is dropped (`qdisc_drop`). For a UDP sender that is a
//! datagram lost (`UDP_MIB_SNDBUFERRORS`); a TCP sender's segment stays in its socket and is
//! sent again at its next chance (`tcp_transmit_skb` fails, `tcp_write_xmit` stops), which the
//! model keeps as the segment held in its socket and let into the queue as room frees, the
//! held flows of a queue in turn. So no flow's frame waits behind more than a full queue of
//! other flows' frames — before this port, one FIFO for every client carried megabytes of a
//! bulk sender ahead of every other VM's packets and starved them for 50-110 ms on 1 GbE.
//!
//! A frame enters its queue when its sender hands it over, but is not sent before `ready`
//! (when the client's core finished building it), and counts against the qdisc's limit only
//! from then (a saturated client core's future frames do not fill its queue ahead of a
//! datagram handed over now); a queue's frames are in order of `ready`.
//! One event at a time is in the future-event set for the whole port (its [`Timer`]: the end
//! of the frame on the wire, or the start of the next frame to become ready).

use crate::engine::{round_ns, Fired, Time, Timer};
pub use crate::profile::Qdisc;
use crate::profile::Profile;
use std::collections::VecDeque;

/// `sch_fq_codel.c` `fq_codel_init`: `q->sch->limit = 10*1024` packets.
pub const FQ_CODEL_LIMIT_PACKETS: usize = 10 * 1024;

/// What became of a frame handed to the port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handed {
    /// In its queue (or held in its TCP socket until there is room); the port's event must
    /// be scheduled at this time, if any.
    Queued(Option<Time>),
    /// Dropped: its UDP datagram found the queue full.
    Dropped,
}

/// A frame in a queue: its device, wire bytes, packets (a UDP datagram's IP fragments) and
/// when its sender's core has built it.
#[derive(Debug, Clone, Copy)]
struct Frame {
    dev: u32,
    bytes: u32,
    packets: u32,
    ready: Time,
}

/// One NIC TX queue with its qdisc.
#[derive(Debug, Default)]
struct Queue {
    /// Admitted frames, in order of `ready` (the head is on the wire when the port serves it).
    frames: VecDeque<Frame>,
    /// The first `built` frames are ready (built by their cores), and `packets` are theirs:
    /// what the qdisc holds, against its limit.
    built: usize,
    packets: usize,
    /// Bytes this queue may still send in its turns (DRR's deficit counter).
    deficit: u64,
    /// Devices with TCP segments held back in their sockets by the full queue, in turn.
    held: VecDeque<u32>,
}

impl Queue {
    /// Count the frames built by `now` into the qdisc's occupancy.
    fn advance(&mut self, now: Time) {
        while let Some(f) = self.frames.get(self.built).filter(|f| f.ready <= now) {
            self.packets += f.packets as usize;
            self.built += 1;
        }
    }
}

/// The client NIC's transmit side.
#[derive(Debug)]
pub struct ClientPort {
    ns_per_byte: f64,
    /// One full-sized frame's wire bytes: the arbiter's quantum and a packet's size.
    quantum: u64,
    /// When the frame on the wire ends, in exact (fractional) ns.
    free_at: f64,
    /// Packets a queue's qdisc holds at most.
    limit: usize,
    /// Per device: its queue.
    queue_of: Vec<u32>,
    queues: Vec<Queue>,
    /// Per device: its TCP segments held in the socket (frames not yet admitted), oldest first.
    held: Vec<VecDeque<Frame>>,
    /// Queues with a frame waiting, in the order the arbiter serves them (not the one on the
    /// wire, which rejoins at the back if it has more).
    turn: VecDeque<u32>,
    /// The queue whose head frame is on the wire.
    busy: Option<u32>,
    /// The port's one pending event: the frame on the wire ends, or the next frame is ready.
    timer: Timer,
    /// Frames handed to the port and not dropped, of every device (lifetime).
    /// Conservation: = Σ over devices of (arrived at the host + still on the link).
    pub packets_life: u64,
}

impl ClientPort {
    /// The client NIC of the profile (its line rate and qdisc) for `devices` devices whose
    /// flows run on `cores` client cores.
    pub fn new(p: &Profile, devices: usize, cores: usize) -> Self {
        let quantum = (p.nic.mtu_bytes.value + p.nic.wire_overhead_bytes.value) as u64;
        let (limit, queue_of): (usize, Vec<u32>) = match p.client.qdisc.value {
            Qdisc::PfifoFast => (p.nic.txqueuelen_packets.value as usize, (0..devices).map(|d| (d % cores.max(1)) as u32).collect()),
            Qdisc::FqCodel => (FQ_CODEL_LIMIT_PACKETS, (0..devices as u32).collect()),
        };
        let nq = queue_of.iter().map(|&q| q as usize + 1).max().unwrap_or(0);
        ClientPort {
            ns_per_byte: 8.0 / p.nic.gbps.value,
            quantum,
            free_at: 0.0,
            limit,
            queue_of,
            queues: (0..nq).map(|_| Queue::default()).collect(),
            held: (0..devices).map(|_| VecDeque::new()).collect(),
            turn: VecDeque::new(),
            busy: None,
            timer: Timer::default(),
            packets_life: 0,
        }
    }

    /// Device `dev` hands over a frame of `wire_bytes` at `now`, built by `ready`; `tcp`: a TCP
    /// segment, which a full queue holds back in its socket instead of dropping.
    pub fn hand(&mut self, now: Time, dev: u32, wire_bytes: u32, tcp: bool, ready: Time) -> Handed {
        let packets = wire_bytes.div_ceil(self.quantum as u32).max(1);
        let f = Frame { dev, bytes: wire_bytes, packets, ready: ready.max(now) };
        let qi = self.queue_of[dev as usize] as usize;
        self.queues[qi].advance(now);
        let q = &self.queues[qi];
        // A frame larger than the whole limit still goes into an empty queue.
        let full = q.packets > 0 && q.packets + packets as usize > self.limit;
        if full || !self.held[dev as usize].is_empty() {
            if !tcp {
                return Handed::Dropped;
            }
            // Behind its own held segments too: a socket sends in order.
            if self.held[dev as usize].is_empty() {
                self.queues[qi].held.push_back(dev);
            }
            self.held[dev as usize].push_back(f);
            self.packets_life += 1;
            return Handed::Queued(None);
        }
        self.packets_life += 1;
        self.admit(now, qi, f);
        Handed::Queued(self.plan(now))
    }

    /// Put frame `f` into queue `qi` in order of readiness (a device's own frames are already
    /// in order, so a frame never passes one of its own device's).
    fn admit(&mut self, now: Time, qi: usize, f: Frame) {
        let q = &mut self.queues[qi];
        let at = q.frames.iter().rposition(|g| g.ready <= f.ready).map_or(0, |i| i + 1);
        // The head of a queue being served stays the head.
        let at = if self.busy == Some(qi as u32) { at.max(1) } else { at };
        let was_empty = q.frames.is_empty();
        q.frames.insert(at, f);
        if at < q.built {
            q.built += 1;
            q.packets += f.packets as usize;
        }
        q.advance(now);
        if was_empty {
            self.turn.push_back(qi as u32);
        }
    }

    /// With nothing on the wire, when the next frame should start: the earliest `ready` of the
    /// queues' heads (not before the link is free). Returns the time to schedule the port's
    /// event at, if its pending one does not come early enough.
    fn plan(&mut self, now: Time) -> Option<Time> {
        if self.busy.is_some() {
            return None;
        }
        let next = self.turn.iter().map(|&qi| self.queues[qi as usize].frames.front().expect("a queue in turn has a frame").ready).min()?;
        self.timer.arm(next.max(now).max(round_ns(self.free_at)))
    }

    /// The port's event fired at `now`. Returns the device whose frame is now through (if it
    /// was one's end), and the time to schedule the port's next event at, if any.
    pub fn fired(&mut self, now: Time) -> (Option<u32>, Option<Time>) {
        match self.timer.fired(now) {
            Fired::Idle => return (None, None),
            Fired::Reschedule(t) => return (None, Some(t)),
            Fired::Expired => {}
        }
        let done = self.busy.take().map(|qi| self.finish(now, qi));
        let next = match self.next_turn(now) {
            Some(qi) => self.start(now, qi),
            None => self.plan(now),
        };
        (done, next)
    }

    /// Queue `qi`'s head frame is through: it leaves, and a held segment takes its room.
    fn finish(&mut self, now: Time, qi: u32) -> u32 {
        let q = &mut self.queues[qi as usize];
        q.advance(now);
        let f = q.frames.pop_front().expect("a frame on the wire");
        // It was ready: it started no earlier.
        q.built -= 1;
        q.packets -= f.packets as usize;
        if q.frames.is_empty() {
            q.deficit = 0;
        } else {
            self.turn.push_back(qi);
        }
        self.let_held_in(now, qi as usize);
        f.dev
    }

    /// Held TCP segments of queue `qi`'s devices enter as room allows, one device at a time.
    fn let_held_in(&mut self, now: Time, qi: usize) {
        while let Some(&dev) = self.queues[qi].held.front() {
            let f = *self.held[dev as usize].front().expect("a held device has a segment");
            let q = &self.queues[qi];
            if q.packets > 0 && q.packets + f.packets as usize > self.limit {
                return;
            }
            self.queues[qi].held.pop_front();
            self.held[dev as usize].pop_front();
            if !self.held[dev as usize].is_empty() {
                self.queues[qi].held.push_back(dev);
            }
            self.admit(now, qi, f);
        }
    }

    /// The queue whose head goes next at `now`: each queue whose head is ready in turn adds a
    /// quantum to its deficit and sends its head if the deficit covers it.
    fn next_turn(&mut self, now: Time) -> Option<u32> {
        let mut unready = 0;
        loop {
            if unready == self.turn.len() {
                return None;
            }
            let qi = self.turn.pop_front()?;
            let q = &mut self.queues[qi as usize];
            let head = *q.frames.front().expect("a queue in turn has a frame");
            if head.ready > now {
                self.turn.push_back(qi);
                unready += 1;
                continue;
            }
            unready = 0;
            let need = u64::from(head.bytes);
            if q.deficit < need {
                q.deficit += self.quantum;
            }
            if q.deficit >= need || self.turn.is_empty() {
                q.deficit = q.deficit.saturating_sub(need);
                return Some(qi);
            }
            self.turn.push_back(qi);
        }
    }

    /// Start serializing queue `qi`'s head at `now`; returns the port's event time (its end).
    fn start(&mut self, now: Time, qi: u32) -> Option<Time> {
        let bytes = self.queues[qi as usize].frames.front().expect("a queue to serve has a frame").bytes;
        self.busy = Some(qi);
        self.free_at = self.free_at.max(now as f64) + f64::from(bytes) * self.ns_per_byte;
        self.timer.arm(round_ns(self.free_at).max(now))
    }

    /// Device `dev`'s frames handed over and not yet through (queued, held or on the wire).
    #[cfg(test)]
    pub fn in_flight(&self, dev: u32) -> usize {
        let q = &self.queues[self.queue_of[dev as usize] as usize];
        q.frames.iter().filter(|f| f.dev == dev).count() + self.held[dev as usize].len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 1-ns-per-byte port (8 Gbit/s) with 1000-byte frames, `devices` devices on `cores`.
    fn port(qdisc: Qdisc, devices: usize, cores: usize, limit: f64) -> ClientPort {
        let mut p = Profile::load("es2").unwrap();
        p.nic.gbps.value = 8.0;
        p.nic.mtu_bytes.value = 1000.0 - p.nic.wire_overhead_bytes.value;
        p.nic.txqueuelen_packets.value = limit;
        p.client.qdisc.value = qdisc;
        ClientPort::new(&p, devices, cores)
    }

    /// Run the port's events to the end from the first scheduled one: (device, time) each.
    fn drain(p: &mut ClientPort, mut next: Option<Time>) -> Vec<(u32, Time)> {
        let mut out = Vec::new();
        while let Some(t) = next {
            let (done, n) = p.fired(t);
            out.extend(done.map(|d| (d, t)));
            next = n;
        }
        out
    }

    fn queued(h: Handed) -> Option<Time> {
        match h {
            Handed::Queued(t) => t,
            Handed::Dropped => panic!("dropped"),
        }
    }

    #[test]
    fn flows_of_different_cores_take_turns_at_the_nic() {
        let mut p = port(Qdisc::PfifoFast, 2, 2, 1000.0);
        let first = queued(p.hand(0, 0, 1000, true, 0));
        for _ in 0..3 {
            assert_eq!(queued(p.hand(0, 0, 1000, true, 0)), None);
        }
        assert_eq!(queued(p.hand(0, 1, 1000, true, 0)), None);
        let order: Vec<u32> = drain(&mut p, first).into_iter().map(|(d, _)| d).collect();
        // One FIFO for both (the old link) would give 0 0 0 0 1.
        assert_eq!(order, vec![0, 1, 0, 0, 0]);
    }

    #[test]
    fn flows_of_one_core_share_its_fifo_under_pfifo_fast_and_take_turns_under_fq_codel() {
        for (qdisc, want) in [(Qdisc::PfifoFast, vec![0, 0, 0, 1]), (Qdisc::FqCodel, vec![0, 1, 0, 0])] {
            let mut p = port(qdisc, 2, 1, 1000.0);
            let first = queued(p.hand(0, 0, 1000, true, 0));
            p.hand(0, 0, 1000, true, 0);
            p.hand(0, 0, 1000, true, 0);
            p.hand(0, 1, 1000, true, 0);
            let order: Vec<u32> = drain(&mut p, first).into_iter().map(|(d, _)| d).collect();
            assert_eq!(order, want, "{qdisc:?}");
        }
    }

    #[test]
    fn a_full_fifo_drops_udp_and_holds_tcp_letting_each_held_flow_in_in_turn() {
        let mut p = port(Qdisc::PfifoFast, 3, 1, 3.0);
        let first = queued(p.hand(0, 0, 1000, true, 0));
        p.hand(0, 0, 1000, true, 0);
        p.hand(0, 0, 1000, true, 0);
        // Full: three packets. A datagram is dropped, segments wait in their sockets.
        assert_eq!(p.hand(0, 2, 1000, false, 0), Handed::Dropped);
        for _ in 0..3 {
            assert_eq!(queued(p.hand(0, 0, 1000, true, 0)), None);
        }
        assert_eq!(queued(p.hand(0, 1, 1000, true, 0)), None);
        assert_eq!((p.in_flight(0), p.in_flight(1), p.in_flight(2)), (6, 1, 0));
        assert_eq!(p.packets_life, 7);
        let order: Vec<u32> = drain(&mut p, first).into_iter().map(|(d, _)| d).collect();
        // Device 1's segment gets in after one of device 0's held ones, not behind all three.
        assert_eq!(order, vec![0, 0, 0, 0, 1, 0, 0]);
    }

    #[test]
    fn a_frame_waits_for_its_core_and_a_ready_one_of_another_core_goes_first() {
        let mut p = port(Qdisc::PfifoFast, 2, 2, 1000.0);
        // Device 0's frame is built at 5,000; device 1's, handed later, at 100.
        let first = queued(p.hand(0, 0, 1000, true, 5000));
        assert_eq!(first, Some(5000));
        assert_eq!(queued(p.hand(50, 1, 1000, true, 100)), Some(100));
        assert_eq!(drain(&mut p, Some(100)), vec![(1, 1100), (0, 6000)]);
    }

    #[test]
    fn frames_not_yet_built_do_not_fill_the_qdisc() {
        let mut p = port(Qdisc::PfifoFast, 2, 1, 3.0);
        // A saturated client core: three segments built only at 10,000 and later.
        let first = queued(p.hand(0, 0, 1000, true, 10_000));
        for i in 1..3 {
            p.hand(0, 0, 1000, true, 10_000 + i);
        }
        // A datagram handed over now finds room, and goes first.
        assert_eq!(queued(p.hand(10, 1, 1000, false, 10)), Some(10));
        assert_ne!(first, None);
        assert_eq!(drain(&mut p, Some(10))[0], (1, 1010));
    }

    #[test]
    fn line_rate_is_kept_across_back_to_back_frames() {
        let mut p = port(Qdisc::FqCodel, 3, 3, 1000.0);
        let first = queued(p.hand(0, 0, 1500, true, 0));
        p.hand(0, 1, 500, false, 0);
        p.hand(0, 2, 1000, true, 0);
        let out = drain(&mut p, first);
        assert_eq!(out.last().unwrap().1, 3000);
        assert_eq!(out.len(), 3);
    }
}
