//! A fixed-rate UDP ping from the guest (sockperf `under-load` or `ping -i` run inside the
//! VM): every `interval_us` the application `sendto()`s one datagram to an echo server on the
//! client machine and `recvfrom()`s the echoes as they come back. Unlike `udp_rr`, where the
//! remote side asks and the guest answers, the guest asks here, so the latency is the round
//! trip as the guest application sees it: its send path, the TX kick and vhost, the wire,
//! the echo server's core, the reverse link, vhost RX, the interrupt, NAPI and `recvfrom()`.
//!
//! Sends are open loop (a late echo does not delay the next send); echoes wait in the socket
//! (dropped when its receive buffer is full) and the application reads them before its next
//! send. An echo lost anywhere counts as lost; there is no retry.

use crate::model::hw::rxq::{Ctl, RxPkt};
use crate::model::hw::virtq::Buf;
use crate::model::workload::app::{pct, App, DevView, Measure, Step};
use crate::model::workload::ctx::Ctx;
use crate::model::workload::net::{udp_wire_bytes, SKB_OVERHEAD_BYTES};
use crate::engine::{Rng, Time, round_ns};
use crate::metrics::Histogram;
use crate::profile::Profile;
use std::collections::VecDeque;

/// Its steps: one `sendto()`; one `recvfrom()`.
const SEND: u8 = 0;
const RECV: u8 = 1;

/// The pinging application and the echo server on the client machine.
#[derive(Debug)]
pub struct UdpPing {
    bytes: u32,
    /// ns between sends.
    interval: f64,
    /// When the next send is due.
    next_at: f64,
    send_cost: Time,
    recv_cost: Time,
    /// The driver stopped the queue (TX ring full).
    stopped: bool,
    /// Echoes in the socket, and the memory they hold.
    sock: VecDeque<RxPkt>,
    sock_bytes: u64,
    rcvbuf: u64,
    /// Pings handed to the driver (window / lifetime).
    sent: u64,
    sent_life: u64,
    /// Echoes the application read (window / lifetime).
    echoes: u64,
    echoes_life: u64,
    echo_bytes: u64,
    /// Echoes dropped at the full socket (window).
    sock_drops: u64,
    /// Guest `sendto()` → guest `recvfrom()` of its echo (ns).
    rtt: Histogram,
}

impl UdpPing {
    /// Pings of `bytes` every `interval_us`, in VM `vm_name`.
    pub fn new(bytes: u32, interval_us: f64, p: &Profile, seed: u64, vm_name: &str) -> Self {
        let g = &p.guest;
        let interval = interval_us * 1e3;
        // A random phase, so that VMs pinging at the same rate do not send in lockstep.
        let mut rng = Rng::for_component(seed, &format!("vm:{vm_name}/workload"));
        UdpPing {
            bytes,
            interval,
            next_at: rng.uniform() * interval,
            send_cost: round_ns(g.udp_tx_packet_ns.value + g.udp_tx_byte_ns.value * bytes as f64),
            recv_cost: round_ns(g.udp_recv_ns.value + g.udp_tx_byte_ns.value * bytes as f64),
            stopped: false,
            sock: VecDeque::new(),
            sock_bytes: 0,
            rcvbuf: g.udp_rcvbuf_bytes.value as u64,
            sent: 0,
            sent_life: 0,
            echoes: 0,
            echoes_life: 0,
            echo_bytes: 0,
            sock_drops: 0,
            rtt: Histogram::new(),
        }
    }

    /// Socket memory one echo takes (payload + skb, as `udp_rx.rs` charges).
    fn truesize(&self, bytes: u32) -> u64 {
        bytes as u64 + SKB_OVERHEAD_BYTES
    }
}

impl App for UdpPing {
    /// Read a waiting echo first, then send if one is due, else sleep until the next send.
    fn next(g: &mut impl Ctx<Self>, v: u32) {
        let p = g.app();
        if !p.sock.is_empty() {
            let c = p.recv_cost;
            return g.run_step(v, Step::new(RECV, 0, 0), c);
        }
        let (stopped, next_at, c) = (p.stopped, p.next_at, p.send_cost);
        g.paced_send(v, stopped, next_at, Step::new(SEND, 0, 0), c)
    }

    fn step_done(g: &mut impl Ctx<Self>, v: u32, s: Step) {
        let (now, window_start) = (g.now(), g.window_start());
        let p = g.app();
        if s.kind == SEND {
            p.sent += 1;
            p.sent_life += 1;
            p.next_at += p.interval;
            let b = Buf::new(p.bytes, now);
            return g.post_tx(v, b);
        }
        let e = p.sock.pop_front().expect("recvfrom on an empty socket");
        p.sock_bytes -= p.truesize(e.bytes);
        p.echoes += 1;
        p.echoes_life += 1;
        p.echo_bytes += e.bytes as u64;
        if e.born >= window_start {
            p.rtt.record(now - e.born);
        }
        g.enter(v)
    }

    fn step_name(s: Step) -> &'static str {
        if s.kind == SEND { "ping send" } else { "ping recvfrom" }
    }

    /// NAPI queues the echo on the socket (or drops it: receive buffer full).
    fn deliver(g: &mut impl Ctx<Self>, _v: u32, pkt: RxPkt) -> bool {
        let in_window = pkt.born >= g.window_start();
        let p = g.app();
        let charge = p.truesize(pkt.bytes);
        if p.sock_bytes + charge > p.rcvbuf {
            p.sock_drops += u64::from(in_window);
        } else {
            p.sock_bytes += charge;
            p.sock.push_back(pkt);
        }
        false
    }

    /// The echo server receives the ping on its core and sends it back, keeping the guest's
    /// send time so the guest sees the round trip.
    fn at_client(g: &mut impl Ctx<Self>, b: Buf) {
        let (mtu, ovh) = (g.profile().nic.mtu_bytes.value as u32, g.profile().nic.wire_overhead_bytes.value as u32);
        // A receive and a send on the client's core (`client.rx_packet_ns` each).
        let ns = 2 * g.client().tx_ns;
        let at = g.client_cpu(g.now(), ns);
        let echo = RxPkt::new(b.bytes, 0, b.born, 0, Ctl::None);
        g.to_host(at, echo, udp_wire_bytes(b.bytes, mtu, ovh));
    }

    fn sent_life(&self) -> u64 {
        self.sent_life
    }
    fn set_stopped(&mut self, stopped: bool) {
        self.stopped = stopped;
    }
    fn reset_metrics(&mut self) {
        self.sent = 0;
        self.echoes = 0;
        self.echo_bytes = 0;
        self.sock_drops = 0;
        self.rtt.clear();
    }
    fn describe(&self) -> String {
        format!("ping sent {} echoes {} queued {} stopped {}", self.sent_life, self.echoes_life, self.sock.len(), self.stopped)
    }
    fn progress(&self) -> u64 {
        self.echoes_life
    }

    /// Echoes the application read, their round trip, and the pings never answered (lost on
    /// the wire, at the tap or at the socket). One transaction per echo.
    fn measure<'a>(&'a self, d: DevView<'a>) -> Measure<'a> {
        Measure {
            delivered: Some(self.echoes),
            payload: Some(self.echo_bytes),
            latency: Some(&self.rtt),
            loss_pct: pct(d.wire.dropped + d.tap_drops + self.sock_drops, self.sent),
            ops: Some(self.echoes),
            by_run_class: None,
            ..Default::default()
        }
    }
}
