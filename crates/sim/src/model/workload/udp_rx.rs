//! netperf UDP_STREAM towards the guest (DESIGN §3.6, ES2 §6.2 Fig. 5b): the remote client
//! sends datagrams open loop at a rate, limited by its own CPU; they cross the link to the host
//! NIC, wait on the tap socket for the vhost RX handler (dropped when the tap queue is full),
//! are copied into the guest's RX ring, received by NAPI into the UDP socket (dropped when its
//! receive buffer is full) and read by the application with `recvfrom()`, which blocks (HLT)
//! when the socket is empty.
//!
//! The same receiver answers request/response traffic (netperf UDP_RR, ping): after each
//! `recvfrom()` it sends a response through the TX path; the client sends its next request when
//! the response arrives (closed loop) or at a fixed interval (open loop).
//!
//! ping (ICMP echo) is the same exchange without the application: the guest kernel answers an
//! echo request in the NET_RX softirq that received it (`icmp_rcv` → `icmp_echo` →
//! `icmp_reply`), on the vCPU that took the interrupt, so no thread wakes and nothing waits in a
//! socket (issue 28 item 6: work where the kernel does it).

use crate::model::hw::rxq::{Ctl, RxPkt};
use crate::model::hw::virtq::Buf;
use crate::model::workload::app::{pct, App, AppLedger, Balance, ClientEv, DevLedger, DevView, Measure, Step};
use crate::model::workload::ctx::Ctx;
use crate::model::workload::net::{udp_frames, udp_wire_bytes, SKB_OVERHEAD_BYTES};
use crate::engine::{Fired, Time, Timer, NS_PER_S, round_ns};
use crate::metrics::Histogram;
use crate::profile::Profile;
use std::collections::VecDeque;

/// The guest application receiving a UDP stream, and the client source feeding it.
#[derive(Debug)]
pub struct UdpReceiver {
    bytes: u32,
    /// Open-loop interval between client sends (0: unpaced); None: closed loop (next on
    /// response).
    interval: Option<Time>,
    /// A bulk stream's CPU per datagram on the client's core (one `sendto()`, the payload's
    /// copy, each IP fragment's way to the NIC); None: a request/response or echo source,
    /// whose sends cost `client.rx_packet_ns` apart and are not charged to the core.
    send_cost: Option<Time>,
    /// Response payload, if this is a request/response workload.
    pub reply: Option<u32>,
    /// ICMP echo: the kernel answers in softirq; no socket, no application thread.
    icmp: bool,
    reply_cost: Time,
    /// Responses handed to the driver (window / lifetime).
    pub replies: u64,
    /// Lifetime count of responses.
    pub replies_life: u64,
    recv_cost: Time,
    /// The UDP socket's receive queue.
    sock: VecDeque<RxPkt>,
    sock_bytes: u64,
    rcvbuf: u64,
    /// Open loop: when the client's next datagram is due (its core and its rate allow it),
    /// for a sender that waits for its send buffer to drain.
    next_at: Time,
    /// Datagrams the client's NIC queue dropped (window: of those sent in the window).
    client_drops: u64,
    /// Datagrams the client sent (window / lifetime).
    pub sent: u64,
    /// Lifetime count of datagrams the client sent.
    pub sent_life: u64,
    /// Datagrams the application received (window / lifetime).
    pub received: u64,
    /// Lifetime count of datagrams the application received.
    pub received_life: u64,
    /// Payload bytes received (window).
    pub received_bytes: u64,
    /// Datagrams dropped at the socket (window: of those sent in the window / lifetime).
    pub sock_drops: u64,
    /// Lifetime count of datagrams dropped at the socket.
    pub sock_drops_life: u64,
    /// Client send → application receive (ns).
    pub latency: Histogram,
    /// Request/response: request sent → response received by the client (after its NIC's
    /// interrupt), per response.
    pub rtt: Histogram,
    /// Closed loop: when the outstanding request was first sent, and its timeout.
    outstanding: Option<Time>,
    timeout: Timer,
    timeout_ns: Time,
    /// Closed loop: requests resent after a timeout (window).
    pub timeouts: u64,
}

impl UdpReceiver {
    /// A receiver of `bytes`-byte datagrams sent at `rate_pps` (None: closed loop) that
    /// answers each with `reply` bytes if given.
    pub fn new(bytes: u32, rate_pps: Option<f64>, reply: Option<u32>, p: &Profile) -> Self {
        let g = &p.guest;
        UdpReceiver {
            bytes,
            interval: rate_pps.map(|r| (NS_PER_S as f64 / r).round().max(1.0) as Time),
            send_cost: None,
            reply,
            icmp: false,
            reply_cost: reply.map_or(0, |b| round_ns(g.udp_tx_packet_ns.value + g.udp_tx_byte_ns.value * b as f64)),
            replies: 0,
            replies_life: 0,
            recv_cost: round_ns(p.guest.udp_recv_ns.value + p.guest.udp_tx_byte_ns.value * bytes as f64),
            sock: VecDeque::new(),
            sock_bytes: 0,
            rcvbuf: p.guest.udp_rcvbuf_bytes.value as u64,
            next_at: 0,
            client_drops: 0,
            sent: 0,
            sent_life: 0,
            received: 0,
            received_life: 0,
            received_bytes: 0,
            sock_drops: 0,
            sock_drops_life: 0,
            latency: Histogram::new(),
            rtt: Histogram::new(),
            outstanding: None,
            timeout: Timer::default(),
            timeout_ns: p.client.udp_rr_timeout_ns.value.round().max(1.0) as Time,
            timeouts: 0,
        }
    }

    /// netperf UDP_STREAM into the guest: `bytes`-byte datagrams at `rate_pps`, or unpaced
    /// (None: as fast as the client's core and its send buffer let it), each costing the
    /// client's core a `sendto()` call, the payload's copy and one skb per IP fragment.
    pub fn stream(bytes: u32, rate_pps: Option<f64>, p: &Profile) -> Self {
        let c = &p.client;
        let frames = udp_frames(bytes, p.nic.mtu_bytes.value as u32);
        let cost = c.send_call_ns.value + c.tx_byte_ns.value * f64::from(bytes) + c.tx_skb_ns.value * f64::from(frames);
        UdpReceiver {
            interval: Some(rate_pps.map_or(0, |r| (NS_PER_S as f64 / r).round().max(1.0) as Time)),
            send_cost: Some(round_ns(cost).max(1)),
            ..UdpReceiver::new(bytes, None, None, p)
        }
    }

    /// A guest answering ICMP echo requests of `bytes` payload sent at `rate_pps` (None: the
    /// next on the reply). The reply's cost is one packet down the IP output path, as a TCP
    /// segment's (`guest.tcp_tx_segment_ns`: `icmp_reply` → `ip_push_pending_frames` → qdisc →
    /// virtio-net `start_xmit`), plus copying the echoed payload (`guest.udp_tx_byte_ns`); its
    /// route lookup and skb allocation (a few hundred ns) are not charged.
    pub fn icmp_echo(bytes: u32, rate_pps: Option<f64>, p: &Profile) -> Self {
        let g = &p.guest;
        UdpReceiver {
            icmp: true,
            reply_cost: round_ns(g.tcp_tx_segment_ns.value + g.udp_tx_byte_ns.value * f64::from(bytes)),
            recv_cost: 0,
            ..UdpReceiver::new(bytes, rate_pps, Some(bytes), p)
        }
    }

    /// Datagrams waiting in the socket.
    pub fn queued(&self) -> usize {
        self.sock.len()
    }

    /// Closed-loop request/response: one transaction at a time, the next on its response.
    fn closed_loop(&self) -> bool {
        self.reply.is_some() && self.interval.is_none()
    }
}

impl UdpReceiver {
    /// The client sends its next datagram and schedules the one after.
    fn client_send(g: &mut impl Ctx<Self>) {
        let now = g.now();
        let p = g.profile();
        let (mtu, ovh) = (p.nic.mtu_bytes.value as u32, p.nic.wire_overhead_bytes.value as u32);
        let sndbuf = p.client.udp_sndbuf_bytes.value as u64;
        let r = g.app();
        r.sent += 1;
        r.sent_life += 1;
        let (bytes, interval) = (r.bytes, r.interval);
        if r.closed_loop() {
            // A request (or its resend): the response must come within the timeout.
            if let Some(at) = r.timeout.arm(now + r.timeout_ns) {
                g.client_at(at, ClientEv::new(TIMEOUT, 0));
            }
            let born = *g.app().outstanding.get_or_insert(now);
            let pkt = RxPkt::new(bytes, 0, born, 0, Ctl::None);
            g.to_host(now, pkt, udp_wire_bytes(bytes, mtu, ovh));
            return;
        }
        // The client's own CPU bounds its rate: a stream's sendto() runs on its core and the
        // datagram leaves when that is done; an echo or request source is not charged to it.
        let wire = udp_wire_bytes(bytes, mtu, ovh);
        let send_cost = g.app().send_cost;
        let at = send_cost.map_or(now, |c| g.client_cpu(now, c));
        if !g.to_host(at, RxPkt::new(bytes, 0, at, 0, Ctl::None), wire) {
            // The NIC queue's qdisc was full: sendto() counts an error, the datagram is lost.
            g.app().client_drops += 1;
        }
        let tx_ns = g.client().tx_ns;
        if let Some(i) = interval {
            // The client's CPU bounds its rate, and so does the link: sendto() blocks while its
            // socket's send buffer worth of its bytes still waits to be serialized.
            let next = if send_cost.is_some() { (now + i).max(at) } else { now + i.max(tx_ns) };
            if g.client().link_bytes() <= sndbuf {
                return g.client_at(next, ClientEv::new(SEND, 0));
            }
            g.app().next_at = next;
            g.client().wake_below(sndbuf, ClientEv::new(UNBLOCK, 0));
        }
    }

    /// `recvfrom()` returned one datagram.
    fn recv_done(g: &mut impl Ctx<Self>, v: u32) {
        let (now, window_start) = (g.now(), g.window_start());
        let r = g.app();
        let p = r.sock.pop_front().expect("recv from an empty socket");
        r.sock_bytes -= p.bytes as u64 + SKB_OVERHEAD_BYTES;
        r.received += 1;
        r.received_life += 1;
        r.received_bytes += p.bytes as u64;
        if p.born >= window_start {
            r.latency.record(now - p.born);
        }
        if let Some(b) = r.reply {
            // Answer: the reply carries the request's send time so the client sees the RTT.
            let c = r.reply_cost;
            return g.run_step(v, Step::new(REPLY, b, p.born), c);
        }
        g.enter(v);
    }

    /// The response went through the guest's UDP send path: post it to the TX ring.
    fn reply_done(g: &mut impl Ctx<Self>, v: u32, bytes: u32, born: Time) {
        let r = g.app();
        r.replies += 1;
        r.replies_life += 1;
        g.post_tx(v, Buf::new(bytes, born));
    }

    /// The timeout timer's event fired: resend the outstanding request if it expired.
    fn rr_timeout(g: &mut impl Ctx<Self>) {
        let now = g.now();
        let r = g.app();
        match r.timeout.fired(now) {
            Fired::Expired if r.outstanding.is_some() => {}
            Fired::Reschedule(at) => return g.client_at(at, ClientEv::new(TIMEOUT, 0)),
            _ => return,
        }
        r.timeouts += 1;
        Self::client_send(g);
    }
}

/// Its steps: one `recvfrom()`; the response's send path (`a` = bytes, `b` = the request's send
/// time).
const RECV: u8 = 0;
const REPLY: u8 = 1;
/// Its client's events: send the next datagram or request; the request timeout's event.
const SEND: u8 = 0;
const TIMEOUT: u8 = 1;
/// Its send buffer drained below `SO_SNDBUF`: the open-loop sender goes on when due.
const UNBLOCK: u8 = 2;

impl App for UdpReceiver {
    /// The receiving application's next step: read a datagram, or block in `recvfrom()`.
    fn next(g: &mut impl Ctx<Self>, v: u32) {
        let r = g.app();
        if r.sock.is_empty() {
            return g.idle(v, None);
        }
        let c = r.recv_cost;
        g.run_step(v, Step::new(RECV, 0, 0), c);
    }
    fn step_done(g: &mut impl Ctx<Self>, v: u32, s: Step) {
        match s.kind {
            RECV => Self::recv_done(g, v),
            _ => Self::reply_done(g, v, s.a, s.b),
        }
    }
    fn step_name(s: Step) -> &'static str {
        if s.kind == RECV { "recvfrom" } else { "reply" }
    }
    /// Datagrams the client sent in the window (what `loss_pct` is a share of).
    fn loss_base(&self) -> Option<u64> {
        Some(self.sent)
    }
    /// Datagrams wait in the socket.
    fn ready(&self) -> bool {
        !self.sock.is_empty()
    }
    /// NAPI hands the datagram to the UDP socket (or drops it: receive buffer full); an ICMP
    /// echo request is answered right here, in the softirq on `v`.
    fn deliver(g: &mut impl Ctx<Self>, v: u32, pkt: RxPkt) -> bool {
        let in_window = pkt.born >= g.window_start();
        let now = g.now();
        let r = g.app();
        if r.icmp {
            r.received += 1;
            r.received_life += 1;
            r.received_bytes += u64::from(pkt.bytes);
            if in_window {
                r.latency.record(now - pkt.born);
            }
            let c = r.reply_cost;
            g.run_step(v, Step::new(REPLY, pkt.bytes, pkt.born), c);
            return true;
        }
        let charge = pkt.bytes as u64 + SKB_OVERHEAD_BYTES;
        if r.sock_bytes + charge > r.rcvbuf {
            r.sock_drops += u64::from(in_window);
            r.sock_drops_life += 1;
            return false;
        }
        r.sock_bytes += charge;
        r.sock.push_back(pkt);
        false
    }
    /// A response reached the client: in closed loop, the response to the outstanding request
    /// (not a late one to a request since resent) ends the transaction, and the client sends
    /// the next request after its own processing.
    fn at_client(g: &mut impl Ctx<Self>, b: Buf) {
        let now = g.now();
        let t = g.client().tx_ns;
        let window_start = g.window_start();
        let r = g.app();
        if b.born >= window_start {
            r.rtt.record(now - b.born);
        }
        if r.closed_loop() && r.outstanding == Some(b.born) {
            r.outstanding = None;
            r.timeout.cancel();
            g.client_at(now + t, ClientEv::new(SEND, 0));
        }
    }
    fn client_event(g: &mut impl Ctx<Self>, e: ClientEv) {
        match e.kind {
            SEND => Self::client_send(g),
            UNBLOCK => {
                let at = g.app().next_at.max(g.now());
                g.client_at(at, ClientEv::new(SEND, 0))
            }
            _ => Self::rr_timeout(g),
        }
    }
    fn start(g: &mut impl Ctx<Self>) {
        g.client_at(0, ClientEv::new(SEND, 0));
    }

    fn sent_life(&self) -> u64 {
        self.replies_life
    }
    fn reset_metrics(&mut self) {
        self.sent = 0;
        self.replies = 0;
        self.received = 0;
        self.received_bytes = 0;
        self.sock_drops = 0;
        self.client_drops = 0;
        self.timeouts = 0;
        self.latency.clear();
        self.rtt.clear();
    }
    fn describe(&self) -> String {
        if self.icmp {
            return format!("icmp echo answered {}", self.received_life);
        }
        format!("udp rx queued {} reply {:?}", self.queued(), self.reply)
    }
    fn progress(&self) -> u64 {
        self.received_life
    }
    /// A request/response client with its request answered owes nothing until it sends the
    /// next.
    fn thinking(&self) -> bool {
        self.closed_loop() && self.outstanding.is_none()
    }
    /// A receive stream: what the application got, client send → `recvfrom`. Request/response:
    /// the responses at the client, latency the round trip as the client application sees it
    /// (after its NIC's interrupt), one transaction per response.
    fn measure<'a>(&'a self, d: DevView<'a>) -> Measure<'a> {
        let loss_pct = pct(d.tap_drops + self.sock_drops + self.client_drops, self.sent);
        match self.reply {
            None => Measure {
                delivered: Some(self.received),
                payload: Some(self.received_bytes),
                latency: Some(&self.latency),
                loss_pct,
                ops: None,
                by_run_class: None,
                ..Default::default()
            },
            Some(_) => Measure {
                delivered: Some(d.wire.delivered),
                payload: Some(d.wire.payload_bytes),
                latency: Some(&self.rtt),
                loss_pct,
                ops: Some(d.wire.delivered),
                by_run_class: None,
                ..Default::default()
            },
        }
    }
    /// Every datagram the client sent was received, dropped (at the socket or the tap), or is
    /// still on its way (the socket, the host's queues, the reverse link).
    fn ledger(&self, d: &DevLedger, l: &mut AppLedger) {
        l.udp_rx = [self.sent_life, self.received_life, self.sock_drops_life, self.queued() as u64];
        if self.sent_life > 0 {
            let fate = self.received_life + self.sock_drops_life + self.queued() as u64 + d.rx_tap_dropped + d.rx_queued + d.rx_on_link + d.rx_client_dropped;
            l.balances.push(Balance { what: "udp client sent = received + dropped + queued + on link", lhs: self.sent_life, rhs: fate });
        }
    }
}
