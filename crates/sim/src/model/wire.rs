//! The physical link from the NIC to the remote client: serialization at line rate, FIFO.

use super::virtq::Buf;
use crate::engine::Time;
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

/// One link direction.
#[derive(Debug)]
pub struct Wire {
    ns_per_byte: f64,
    mtu: u32,
    overhead: u32,
    free_at: Time,
    /// Frames carry TCP segments (one frame each) rather than UDP datagrams.
    tcp: bool,
    on_wire: VecDeque<Buf>,
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
    /// A link with the profile's NIC rate, MTU and framing overhead; `tcp` selects TCP
    /// segment framing instead of UDP datagrams.
    pub fn new(p: &Profile, tcp: bool) -> Self {
        Wire {
            ns_per_byte: 8.0 / p.nic.gbps.value,
            mtu: p.nic.mtu_bytes.value as u32,
            overhead: p.nic.wire_overhead_bytes.value as u32,
            free_at: 0,
            tcp,
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

    /// Queue a datagram for transmission; returns when its last bit leaves.
    pub fn send(&mut self, now: Time, b: Buf) -> Time {
        let start = self.free_at.max(now);
        self.free_at = start + (self.wire_bytes(b.bytes) as f64 * self.ns_per_byte).round() as Time;
        self.on_wire.push_back(b);
        self.free_at
    }

    /// The oldest datagram on the wire arrived at the client.
    pub fn arrive(&mut self, now: Time) -> Buf {
        let b = self.on_wire.pop_front().expect("arrival without a datagram on the wire");
        self.delivered += 1;
        self.delivered_life += 1;
        self.payload_bytes += b.bytes as u64;
        self.latency.record(now - b.born);
        b
    }

    /// Datagrams being serialized.
    pub fn in_flight(&self) -> usize {
        self.on_wire.len()
    }

    /// Start a new measurement window.
    pub fn reset_metrics(&mut self) {
        self.delivered = 0;
        self.payload_bytes = 0;
        self.latency.clear();
    }
}
