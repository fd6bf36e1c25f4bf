//! The host's physical NIC port (DESIGN §3.2), shared by every device: the transmit side's
//! per-device queues and arbiter (`nic_tx.rs`), the receive side from the client machine (its
//! NIC's queues and arbiter, `client_port.rs`), the receive path to the tap; and each device's
//! [`Wire`]: its qdisc limit and the accounting of its frames (delivered, bytes, latency).

use crate::model::hw::client_port::ClientPort;
use crate::model::hw::nic_tx::TxPort;
use crate::model::hw::virtq::Buf;
use crate::engine::{Rng, Time, round_ns};
use crate::metrics::Histogram;
use crate::profile::Profile;

/// IPv4 (20) + TCP with timestamps (32) header bytes per segment (Linux defaults).
pub const TCP_IP_HDR: u32 = 52;

/// IPv4 + UDP headers carried in every datagram's first fragment.
const IP_HDR: u32 = 20;
const UDP_HDR: u32 = 8;

/// Bytes a UDP datagram of `payload` bytes occupies on a link of `mtu` with `overhead` bytes of
/// framing per frame, IP fragments included.
pub fn udp_wire_bytes(payload: u32, mtu: u32, overhead: u32) -> u32 {
    payload + UDP_HDR + udp_frames(payload, mtu) * (IP_HDR + overhead)
}

/// The frames (IP fragments) a UDP datagram of `payload` bytes is cut into on a link of `mtu`.
pub fn udp_frames(payload: u32, mtu: u32) -> u32 {
    (payload + UDP_HDR).div_ceil(mtu - IP_HDR)
}

/// The host's NIC port: one link per direction, shared by every device.
#[derive(Debug)]
pub struct Port {
    /// Host → client: every device's TX queue and the NIC's arbiter (`nic_tx.rs`).
    pub tx: TxPort,
    /// Client → host: the client NIC's queues and arbiter (`client_port.rs`).
    pub rx: ClientPort,
    /// From the port to a device's tap queue.
    pub rx_path: PortToTap,
}

impl Port {
    /// Both directions at the profile's line rate for `devices` devices whose client flows
    /// run on `client_cores` cores; `seed` is the scenario's.
    pub fn new(p: &Profile, seed: u64, devices: usize, client_cores: usize) -> Self {
        Port { tx: TxPort::new(p, devices), rx: ClientPort::new(p, devices, client_cores), rx_path: PortToTap::new(p, seed) }
    }
}

/// The host's receive path from the port to a device's tap/macvtap queue: the NIC's interrupt,
/// NAPI and the bridge on host cores the model does not charge. It takes `host.nic_rx_ns` ±
/// `host.nic_rx_spread_ns` (uniform) per frame — the interrupt-moderation timer's phase, the
/// idle state of the core that takes the interrupt and its cache state vary — and keeps each
/// device's frames in order.
#[derive(Debug)]
pub struct PortToTap {
    base_ns: f64,
    spread_ns: f64,
    rng: Rng,
}

impl PortToTap {
    /// The profile's path latency and spread, with its own random stream.
    pub fn new(p: &Profile, seed: u64) -> Self {
        let base_ns = p.host.nic_rx_ns.value;
        PortToTap { base_ns, spread_ns: p.host.nic_rx_spread_ns.value, rng: Rng::for_component(seed, "host-nic-rx") }
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

/// One device's traffic to the client and its accounting: the qdisc's limit above its NIC TX
/// queue (`nic_tx.rs` holds the frames), what was delivered and dropped.
#[derive(Debug)]
pub struct Wire {
    dev: u32,
    mtu: u32,
    overhead: u32,
    /// Buffers carry TCP segments (a TSO skb several, one frame each) rather than UDP
    /// datagrams.
    tcp: bool,
    /// A UDP datagram is dropped at the port's qdisc when this device already has this many
    /// wire bytes waiting (`txqueuelen` full-sized frames: the limit of its own TX queue of a
    /// multi-queue NIC, so one device's flood does not starve another's packets).
    qdisc_limit_bytes: u64,
    /// Start of the measurement window: a drop counts in the window's loss only if the
    /// datagram was sent in it.
    window_start: Time,
    /// Datagrams dropped at the full qdisc (window / lifetime).
    pub dropped: u64,
    /// Lifetime count of qdisc drops.
    pub dropped_life: u64,
    /// Datagrams delivered to the client (window).
    pub delivered: u64,
    /// Datagrams delivered to the client (lifetime, for conservation).
    pub delivered_life: u64,
    /// Frames delivered (window): a TSO skb's segments each count.
    pub frames: u64,
    /// Payload bytes delivered (window).
    pub payload_bytes: u64,
    /// Send → delivery latency of each datagram (ns).
    pub latency: Histogram,
}

impl Wire {
    /// Device `dev`'s traffic with the profile's MTU and framing overhead; `tcp` selects TCP
    /// segment framing instead of UDP datagrams.
    pub fn new(p: &Profile, dev: u32, tcp: bool) -> Self {
        Wire {
            dev,
            mtu: p.nic.mtu_bytes.value as u32,
            overhead: p.nic.wire_overhead_bytes.value as u32,
            tcp,
            qdisc_limit_bytes: (p.nic.txqueuelen_packets.value * (p.nic.mtu_bytes.value + p.nic.wire_overhead_bytes.value)) as u64,
            window_start: 0,
            dropped: 0,
            dropped_life: 0,
            delivered: 0,
            delivered_life: 0,
            frames: 0,
            payload_bytes: 0,
            latency: Histogram::new(),
        }
    }

    /// Does the device carry TCP segments (else UDP datagrams)?
    pub fn is_tcp(&self) -> bool {
        self.tcp
    }

    /// Bytes a buffer occupies on the wire: a UDP datagram's IP fragments, or a TCP buffer's
    /// segments (a TSO skb's `segs` frames, each with its headers and framing).
    pub fn wire_bytes(&self, b: &Buf) -> u32 {
        self.frames_bytes(b.bytes, b.segs)
    }

    /// Bytes `payload` occupies on the wire in `segs` TCP segments (ignored for UDP).
    pub fn frames_bytes(&self, payload: u32, segs: u16) -> u32 {
        if self.tcp {
            return payload + u32::from(segs) * (TCP_IP_HDR + self.overhead);
        }
        udp_wire_bytes(payload, self.mtu, self.overhead)
    }

    /// Queue a datagram on the device's NIC TX queue of `port`. Returns its delivery time when
    /// the link was idle and it starts at once (the caller schedules that `WireDone`);
    /// otherwise `None`: the arbiter reaches it in turn, or it was dropped at the full qdisc
    /// (UDP only: a TCP sender's window bounds its segments).
    pub fn send(&mut self, now: Time, b: Buf, port: &mut TxPort) -> Option<Time> {
        let bytes = self.wire_bytes(&b);
        if !self.tcp && port.queued_bytes(self.dev) + u64::from(bytes) > self.qdisc_limit_bytes {
            self.dropped += u64::from(b.born >= self.window_start);
            self.dropped_life += 1;
            return None;
        }
        port.push(now, self.dev, b, bytes)
    }

    /// Would an SR-IOV VF's datagram of `payload` bytes fit in the NIC's queue for the VF: its
    /// frames not yet through, plus this one, within the same limit as a device's qdisc (or
    /// none at all is waiting)? A VF's frame that does not fit is not dropped: its descriptor
    /// waits in the ring, unfetched, until earlier frames are through. TCP segments always
    /// fit, as in [`Self::send`] (the window bounds them).
    pub fn vf_room(&self, port: &TxPort, b: &Buf) -> bool {
        let waiting = port.queued_bytes(self.dev);
        self.tcp || waiting == 0 || waiting + u64::from(self.wire_bytes(b)) <= self.qdisc_limit_bytes
    }

    /// Hand a VF's frame, fetched from its ring, to its NIC TX queue (never dropped; see
    /// [`Self::vf_room`]). Returns its delivery time as [`Self::send`] does.
    pub fn send_from_vf_ring(&mut self, now: Time, b: Buf, port: &mut TxPort) -> Option<Time> {
        let bytes = self.wire_bytes(&b);
        port.push(now, self.dev, b, bytes)
    }

    /// A datagram of this device reached the client at `now`.
    pub fn arrive(&mut self, now: Time, b: Buf) {
        self.delivered += 1;
        self.delivered_life += 1;
        self.frames += u64::from(b.segs);
        self.payload_bytes += b.bytes as u64;
        // A latency counts for a datagram sent and delivered in the window.
        if b.born >= self.window_start {
            self.latency.record(now - b.born);
        }
    }

    /// Start a new measurement window at `now`.
    pub fn reset_metrics(&mut self, now: Time) {
        self.window_start = now;
        self.delivered = 0;
        self.frames = 0;
        self.dropped = 0;
        self.payload_bytes = 0;
        self.latency.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(base: f64, spread: f64) -> PortToTap {
        let mut p = Profile::load("es2").unwrap();
        p.host.nic_rx_ns.value = base;
        p.host.nic_rx_spread_ns.value = spread;
        PortToTap::new(&p, 7)
    }

    #[test]
    fn a_vf_frame_waits_for_room_where_a_device_s_datagram_is_dropped() {
        let p = Profile::load("did").unwrap();
        let (mut port, mut virtio, mut vf) = (TxPort::new(&p, 3), Wire::new(&p, 0, false), Wire::new(&p, 1, false));
        let b = Buf::new(65_507, 0);
        // Fill both queues to their limit at one instant.
        while virtio.dropped_life == 0 {
            virtio.send(0, b, &mut port);
        }
        assert!(port.in_flight(0) > 1, "a datagram past the qdisc limit is dropped");
        let mut fetched = 0;
        while vf.vf_room(&port, &b) {
            vf.send_from_vf_ring(0, b, &mut port);
            fetched += 1;
        }
        assert_eq!(fetched, port.in_flight(0), "the same limit");
        assert_eq!(vf.dropped_life, 0);
        // Once the VF's first frame is through, there is room for one more.
        let mut next = Some(0);
        while next != Some(1) {
            let (_, n) = port.finish(0, next.unwrap());
            next = n.map(|(d, _)| d);
        }
        assert!(!vf.vf_room(&port, &b));
        port.finish(0, 1);
        assert!(vf.vf_room(&port, &b));
        // TCP segments are bounded by their window, not here.
        assert!(Wire::new(&p, 2, true).vf_room(&port, &Buf::new(1448, 0)));
    }

    #[test]
    fn a_drop_counts_in_the_window_only_for_a_datagram_sent_in_it() {
        let p = Profile::load("did").unwrap();
        let (mut port, mut w) = (TxPort::new(&p, 1), Wire::new(&p, 0, false));
        let b = Buf::new(65_507, 0);
        while w.dropped_life == 0 {
            w.send(0, b, &mut port);
        }
        w.reset_metrics(10);
        w.send(10, b, &mut port); // sent before the window: lost, not in the window's loss
        assert_eq!((w.dropped_life, w.dropped), (2, 0));
        w.send(10, Buf::new(65_507, 10), &mut port);
        assert_eq!((w.dropped_life, w.dropped), (3, 1));
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
