//! The host's physical NIC port (DESIGN §3.2): one [`Link`] per direction shared by every
//! virtio-net device, serializing frames FIFO at line rate, and each device's [`Wire`]: its
//! frames on the TX link and their accounting (delivered, bytes, latency).

use super::virtq::Buf;
use crate::engine::{Rng, Time, round_ns};
use crate::metrics::Histogram;
use crate::profile::Profile;
use std::collections::VecDeque;

/// IPv4 + UDP headers carried in every datagram's first fragment.
const IP_HDR: u32 = 20;
const UDP_HDR: u32 = 8;

/// Bytes a UDP datagram of `payload` bytes occupies on a link of `mtu` with `overhead` bytes of
/// framing per frame, IP fragments included.
pub fn udp_wire_bytes(payload: u32, mtu: u32, overhead: u32) -> u32 {
    let frag_payload = mtu - IP_HDR;
    let frames = (payload + UDP_HDR).div_ceil(frag_payload);
    payload + UDP_HDR + frames * (IP_HDR + overhead)
}

/// One direction of the physical port: frames of all devices are serialized one after another
/// in the order they are handed to it (FIFO), at the profile's line rate.
#[derive(Debug)]
pub struct Link {
    ns_per_byte: f64,
    /// When the link is free, in exact (fractional) ns: rounding each frame's serialization
    /// time would make a busy link faster or slower than line rate.
    free_at: f64,
    /// Packets handed to the link, of every device (lifetime; a UDP datagram's IP fragments
    /// count once). Conservation: = Σ over devices of (delivered + still on the link).
    pub packets_life: u64,
}

impl Link {
    /// A link of the profile's NIC rate.
    pub fn new(p: &Profile) -> Self {
        Link { ns_per_byte: 8.0 / p.nic.gbps.value, free_at: 0.0, packets_life: 0 }
    }

    /// How long the link stays busy with what is already handed to it, seen at `now` (ns).
    pub fn backlog_ns(&self, now: Time) -> f64 {
        (self.free_at - now as f64).max(0.0)
    }

    /// Time to serialize `bytes` (ns).
    pub fn ns_for(&self, bytes: f64) -> f64 {
        bytes * self.ns_per_byte
    }

    /// Serialize a frame of `wire_bytes` handed over at `at`, after every frame handed over
    /// before it; returns when its last bit leaves (rounded to the ns).
    pub fn serialize(&mut self, at: Time, wire_bytes: u32) -> Time {
        self.free_at = self.free_at.max(at as f64) + wire_bytes as f64 * self.ns_per_byte;
        self.packets_life += 1;
        round_ns(self.free_at)
    }
}

/// The host's NIC port: one link per direction, shared by every device.
#[derive(Debug)]
pub struct Port {
    /// Host → client.
    pub tx: Link,
    /// Client → host.
    pub rx: Link,
    /// From the port to a device's tap queue.
    pub rx_path: HostRxPath,
}

impl Port {
    /// Both directions at the profile's line rate; `seed` is the scenario's.
    pub fn new(p: &Profile, seed: u64) -> Self {
        Port { tx: Link::new(p), rx: Link::new(p), rx_path: HostRxPath::new(p, seed) }
    }
}

/// The host's receive path from the port to a device's tap/macvtap queue: the NIC's interrupt,
/// NAPI and the bridge on host cores the model does not charge. It takes `host.nic_rx_ns` ±
/// `host.nic_rx_spread_ns` (uniform) per frame — the interrupt-moderation timer's phase, the
/// idle state of the core that takes the interrupt and its cache state vary — and keeps each
/// device's frames in order.
#[derive(Debug)]
pub struct HostRxPath {
    base_ns: f64,
    spread_ns: f64,
    rng: Rng,
}

impl HostRxPath {
    /// The profile's path latency and spread, with its own random stream.
    pub fn new(p: &Profile, seed: u64) -> Self {
        let base_ns = p.host.nic_rx_ns.value;
        HostRxPath { base_ns, spread_ns: p.host.nic_rx_spread_ns.value, rng: Rng::for_component(seed, "host-nic-rx") }
    }

    /// When a frame that reached the port at `arrive` is on its tap queue; `last` is when the
    /// device's previous frame got there (updated: the path is FIFO per device).
    pub fn deliver(&mut self, arrive: Time, last: &mut Time) -> Time {
        let d = if self.spread_ns > 0.0 {
            self.base_ns - self.spread_ns + 2.0 * self.spread_ns * self.rng.uniform()
        } else {
            self.base_ns
        };
        *last = (*last).max(arrive + round_ns(d));
        *last
    }
}

/// One device's frames on the TX link (host → client), in order, and their accounting.
#[derive(Debug)]
pub struct Wire {
    mtu: u32,
    overhead: u32,
    /// Frames carry TCP segments (one frame each) rather than UDP datagrams.
    tcp: bool,
    /// A UDP datagram is dropped at the port's qdisc when this device already has this many
    /// wire bytes waiting (`txqueuelen` full-sized frames: the limit of its own TX queue of a
    /// multi-queue NIC, so one device's flood does not starve another's packets).
    qdisc_limit_bytes: f64,
    /// Wire bytes of this device's frames handed to the link and not yet delivered.
    queued_bytes: f64,
    /// Datagrams dropped at the full qdisc (window / lifetime).
    pub dropped: u64,
    /// Lifetime count of qdisc drops.
    pub dropped_life: u64,
    /// Frames on the link with the time each arrives, oldest first. Only the head's arrival is
    /// an event in the future-event set (the link is FIFO, so arrivals are in order): the heap
    /// holds one event per device however many frames a saturated link has queued.
    on_wire: VecDeque<(Buf, Time)>,
    /// Datagrams delivered to the client (window).
    pub delivered: u64,
    /// Datagrams delivered to the client (lifetime, for conservation).
    pub delivered_life: u64,
    /// Payload bytes delivered (window).
    pub payload_bytes: u64,
    /// Send → delivery latency of each datagram (ns).
    pub latency: Histogram,
}

impl Wire {
    /// A device's frames with the profile's MTU and framing overhead; `tcp` selects TCP
    /// segment framing instead of UDP datagrams.
    pub fn new(p: &Profile, tcp: bool) -> Self {
        Wire {
            mtu: p.nic.mtu_bytes.value as u32,
            overhead: p.nic.wire_overhead_bytes.value as u32,
            tcp,
            qdisc_limit_bytes: p.nic.txqueuelen_packets.value * (p.nic.mtu_bytes.value + p.nic.wire_overhead_bytes.value),
            queued_bytes: 0.0,
            dropped: 0,
            dropped_life: 0,
            on_wire: VecDeque::new(),
            delivered: 0,
            delivered_life: 0,
            payload_bytes: 0,
            latency: Histogram::new(),
        }
    }

    /// Bytes a UDP datagram of `payload` bytes occupies on the wire, IP fragments included.
    pub fn wire_bytes(&self, payload: u32) -> u32 {
        if self.tcp {
            // A segment is at most one MSS: a single frame.
            return payload + super::tcp::TCP_IP_HDR + self.overhead;
        }
        udp_wire_bytes(payload, self.mtu, self.overhead)
    }

    /// Queue a datagram for transmission on the shared TX `link`. Returns its arrival time
    /// when it is the only frame of this device on the link (the caller schedules that
    /// arrival); otherwise `None`: it arrives after the frames ahead of it (FIFO link), or it
    /// was dropped at the full qdisc (UDP only).
    pub fn send(&mut self, now: Time, b: Buf, link: &mut Link) -> Option<Time> {
        let bytes = self.wire_bytes(b.bytes);
        if !self.tcp && self.queued_bytes + bytes as f64 > self.qdisc_limit_bytes {
            self.dropped += 1;
            self.dropped_life += 1;
            return None;
        }
        self.put_on_link(now, b, bytes, link)
    }

    /// Would an SR-IOV VF's datagram of `payload` bytes fit in the NIC's queue for the VF at
    /// `now`: its frames not yet through, plus this one, within the same limit as a device's
    /// qdisc (or none at all is waiting)? A VF's frame that does not fit is not dropped: its
    /// descriptor waits in the ring, unfetched, until earlier frames are through. TCP segments
    /// always fit, as in [`Self::send`] (the window bounds them).
    pub fn vf_room(&self, now: Time, payload: u32) -> bool {
        if self.tcp {
            return true;
        }
        let through: f64 = self.on_wire.iter().take_while(|&&(_, t)| t <= now).map(|(b, _)| self.wire_bytes(b.bytes) as f64).sum();
        let waiting = self.queued_bytes - through;
        waiting <= 0.0 || waiting + self.wire_bytes(payload) as f64 <= self.qdisc_limit_bytes
    }

    /// Hand a VF's frame, fetched from its ring, to the shared TX `link` (never dropped; see
    /// [`Self::vf_room`]). Returns its arrival time as [`Self::send`] does.
    pub fn send_from_vf_ring(&mut self, now: Time, b: Buf, link: &mut Link) -> Option<Time> {
        let bytes = self.wire_bytes(b.bytes);
        self.put_on_link(now, b, bytes, link)
    }

    fn put_on_link(&mut self, now: Time, b: Buf, bytes: u32, link: &mut Link) -> Option<Time> {
        self.queued_bytes += bytes as f64;
        let done = link.serialize(now, bytes);
        self.on_wire.push_back((b, done));
        (self.on_wire.len() == 1).then_some(done)
    }

    /// The oldest datagram on the wire arrived at the client. Also returns when the next one
    /// arrives, if any, for the caller to schedule.
    pub fn arrive(&mut self, now: Time) -> (Buf, Option<Time>) {
        let (b, at) = self.on_wire.pop_front().expect("arrival without a datagram on the wire");
        debug_assert_eq!(at, now);
        self.queued_bytes = (self.queued_bytes - self.wire_bytes(b.bytes) as f64).max(0.0);
        self.delivered += 1;
        self.delivered_life += 1;
        self.payload_bytes += b.bytes as u64;
        self.latency.record(now - b.born);
        (b, self.on_wire.front().map(|&(_, t)| t))
    }

    /// Datagrams being serialized.
    pub fn in_flight(&self) -> usize {
        self.on_wire.len()
    }

    /// Start a new measurement window.
    pub fn reset_metrics(&mut self) {
        self.delivered = 0;
        self.dropped = 0;
        self.payload_bytes = 0;
        self.latency.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(base: f64, spread: f64) -> HostRxPath {
        let mut p = Profile::load("es2").unwrap();
        p.host.nic_rx_ns.value = base;
        p.host.nic_rx_spread_ns.value = spread;
        HostRxPath::new(&p, 7)
    }

    #[test]
    fn a_vf_frame_waits_for_room_where_a_device_s_datagram_is_dropped() {
        let p = Profile::load("did").unwrap();
        let (mut link, mut vf, mut virtio) = (Link::new(&p), Wire::new(&p, false), Wire::new(&p, false));
        let b = Buf::new(65_507, 0);
        // Fill both queues to their limit at one instant.
        while virtio.dropped_life == 0 {
            virtio.send(0, b, &mut link);
        }
        assert!(virtio.in_flight() > 1, "a datagram past the qdisc limit is dropped");
        let mut fetched = 0;
        while vf.vf_room(0, b.bytes) {
            vf.send_from_vf_ring(0, b, &mut link);
            fetched += 1;
        }
        assert_eq!(fetched, virtio.in_flight(), "the same limit");
        assert_eq!(vf.dropped_life, 0);
        // Once the first frame is through, there is room for one more.
        let (_, first) = vf.on_wire.front().copied().unwrap();
        assert!(!vf.vf_room(first - 1, b.bytes));
        assert!(vf.vf_room(first, b.bytes));
        // TCP segments are bounded by their window, not here.
        assert!(Wire::new(&p, true).vf_room(0, 1448));
    }

    #[test]
    fn without_spread_every_frame_takes_the_base_latency() {
        let (mut p, mut last) = (path(3000.0, 0.0), 0);
        for t in [0, 10_000, 10_001, 50_000] {
            assert_eq!(p.deliver(t, &mut last), t + 3000);
        }
    }

    #[test]
    fn spread_stays_within_bounds_varies_and_keeps_frames_in_order() {
        let (mut p, mut last) = (path(3000.0, 1000.0), 0);
        let mut seen = std::collections::BTreeSet::new();
        let mut prev = 0;
        for i in 0..1000u64 {
            let arrive = i * 20_000; // far apart: no reordering to undo
            let d = p.deliver(arrive, &mut last) - arrive;
            assert!((2000..=4000).contains(&d), "{d}");
            seen.insert(d / 100);
            prev = last;
        }
        assert!(seen.len() > 15, "latencies should spread over the range: {seen:?}");
        // Back-to-back frames: a later one never overtakes an earlier one.
        for i in 0..1000u64 {
            let t = p.deliver(1_000_000_000 + i, &mut last);
            assert!(t >= prev, "frame {i} overtook: {t} < {prev}");
            prev = t;
        }
    }
}
