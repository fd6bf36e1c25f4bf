//! TCP request/response servers in the guest with closed-loop clients on the remote machine
//! (DESIGN §3.6): netperf TCP_RR, memcached with a memaslap-like client, and a web server
//! (Apache, nginx) with an ab-like client. One behaviour, three applications:
//!
//! 1. The client core (`client.request_ns`, then `client.rx_packet_ns` per received segment,
//!    one FIFO core: its CPU limit) sends a request on each of `concurrency` persistent
//!    connections, split into MSS segments, over the reverse link to the host NIC and the tap.
//! 2. vhost RX copies it into the RX ring and interrupts the guest; NAPI receives each segment
//!    (`guest.tcp_rx_segment_ns`) into the connection's socket. A
//!    complete request wakes a server worker (`workers.rs`): by default the one on the vCPU
//!    that took the interrupt (DESIGN §3.5: work woken by an interrupt starts where the
//!    interrupt ran); a worker homed on another vCPU is woken with a reschedule IPI.
//! 3. The server `read()`s the request (`guest.tcp_read_ns`), does its work (`app.*`: memcached
//!    get or set, an HTTP static-file request, nothing for netperf's echo) and `write()`s the
//!    response (`tcp_write_ns` + bytes × `tcp_tx_byte_ns`); TCP sends it in MSS segments
//!    (`tcp_tx_segment_ns` each) through the TX ring, kicking when vhost has notifications on.
//!    memcached, Apache and nginx set TCP_NODELAY, so no segment waits for Nagle.
//! 4. The client ACKs every `client.delack_segments` response segments (RFC 1122 §4.2.3.2);
//!    the rest is ACKed by the next request, which carries the ACK (piggybacking). When the
//!    last byte of a response arrives the transaction completes (latency = request sent →
//!    response received) and the client sends the next request on that connection.
//!
//! Connections are persistent (netperf, memaslap, ab `-k`) unless the web client says
//! `keepalive = false` (ab's default) or is webbench's (HTTP/1.0): then each request opens and
//! closes its own connection (`tcp_rr/conn.rs`: the control segments' handlers at both ends).
//! The webbench client abandons a request after its time-out and counts its client failed
//! (`tcp_rr/timeout.rs`).
//!
//! The guest ACKs a request by piggybacking on its response (responses come well within the
//! 40 ms delayed-ACK timeout); requests span at most the initial window (ten segments), so the
//! client never waits for the guest's ACKs. A request segment dropped at the full tap queue is
//! retransmitted after `TCP_RTO_MIN` (200 ms), doubled by each timeout until the guest next
//! sends on the connection (`net::backed_off`; a SYN from the client kernel's initial RTO;
//! `tcp_syn_retries` is not modelled: runs end long before it). Segments cross the host and the
//! link in FIFO order, so the client matches response segments to connections by their order.

use crate::model::hw::rxq::{Ctl, RxPkt};
use crate::model::hw::virtq::Buf;
use crate::model::guest::guest_sched::Placement;
use crate::model::guest::workers::Workers;
use crate::model::workload::app::{TcpRrStats, App, AppLedger, Balance, ClientEv, DevLedger, DevView, Measure, Step};
use crate::model::workload::ctx::{Ctx, Ipi};
use crate::model::workload::net::{backed_off, TCP_IP_HDR, TCP_RTO_MIN_NS};
use crate::engine::{Rng, Time, round_ns};
use crate::metrics::Histogram;
use crate::profile::Profile;
use crate::config::{HttpServer, Offload, Workload};
use crate::model::guest::tso::SizeGoal;
use std::collections::VecDeque;

mod conn;
mod httperf;
mod timeout;

/// memcached ASCII protocol framing (protocol.txt): `get <key>\r\n`.
const GET_OVERHEAD: u32 = 6;
/// `VALUE <key> <flags> <bytes>\r\n<data>\r\nEND\r\n` minus key and data.
const VALUE_OVERHEAD: u32 = 24;
/// `set <key> <flags> <exptime> <bytes>\r\n<data>\r\n` minus key and data.
const SET_OVERHEAD: u32 = 20;
/// `STORED\r\n`.
const STORED_BYTES: u32 = 8;
/// An ab GET request (request line, Host, User-Agent, Accept), as ab 2.3 writes it.
const AB_REQUEST_BYTES: u32 = 96;
/// webbench 1.5's HTTP/1.0 GET of `/`: the request line and its User-Agent line
/// (`GET / HTTP/1.0`, `User-Agent: WebBench 1.5`, the blank line; no Host under HTTP/1.0).
const WEBBENCH_REQUEST_BYTES: u32 = 44;
/// httperf 0.9's HTTP/1.0 GET (request line, `User-Agent: httperf/0.9.0`, `Host`).
const HTTPERF_REQUEST_BYTES: u32 = 70;
/// A SPECweb2009 Banking request: a GET or a small form POST with its session cookie
/// (request line, Host, User-Agent, Accept, Cookie, Content-Length and a few form fields),
/// inside a TLS record (its 29-byte header and MAC). A prior, not measured.
const SPECWEB_REQUEST_BYTES: u32 = 400;
/// Response headers of a static file (status line, Date, Server, Last-Modified, ETag,
/// Accept-Ranges, Content-Length, Keep-Alive, Connection, Content-Type).
const HTTP_HEADER_BYTES: u32 = 280;

/// One request kind, which decides sizes and the application's cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Echo,
    Get,
    Set,
    Http,
    /// A SPECweb light and heavy request.
    Light,
    Heavy,
}

/// One connection as both ends see it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Conn {
    op: Op,
    req_bytes: u32,
    pub(crate) resp_bytes: u32,
    /// When the client sent the current request (a paced client: when it was due).
    pub(crate) born: Time,
    /// A paced client: when the connection's next request is due.
    due: Time,
    /// Guest: request bytes received so far.
    got: u32,
    /// Client: response bytes received so far.
    resp_got: u32,
    /// Client: response segments not yet ACKed.
    unacked: u32,
    /// Client: response bytes that reached it before the measurement window began (not the
    /// window's throughput).
    before_window: u32,
    /// Client: retransmission timeouts since the guest last sent on this connection
    /// (`icsk_backoff`): each doubles the next RTO.
    backoff: u8,
}

/// The server application of a VM and its remote closed-loop client.
#[derive(Debug)]
pub struct TcpServer {
    workload: Workload,
    mss: u32,
    /// The response's segmentation (TSO or one MSS per skb).
    goal: SizeGoal,
    /// Per byte of a response skb the guest checksums (0: the device offloads it).
    csum_byte_ns: f64,
    pub(crate) conns: Vec<Conn>,
    rng: Rng,
    /// The worker threads and their requests.
    pub(crate) workers: Workers,
    /// Connection and control flag of each guest segment between the TX ring and the client,
    /// in order.
    pub(crate) in_path: VecDeque<(u32, Ctl)>,
    /// Each request on a connection of its own (handshake, then close after the response).
    pub(crate) per_request_conn: bool,
    /// The driver stopped the queue (TX ring full): waiting for a TX interrupt.
    pub stopped: bool,
    read_ns: f64,
    rx_byte_ns: f64,
    write_ns: f64,
    tx_byte_ns: f64,
    pub(crate) seg_ns: Time,
    get_ns: f64,
    set_ns: f64,
    http_ns: f64,
    /// Transactions completed at the client (window / lifetime).
    pub ops: u64,
    /// Lifetime count of completed transactions.
    pub ops_life: u64,
    /// Response payload of the transactions completed in the window: what the client's
    /// application got (its throughput), not what reached its NIC ahead of its core.
    done_bytes: u64,
    /// Requests the client issued (lifetime); issued + `next_pending` = completed +
    /// concurrency (closed loop).
    pub issued_life: u64,
    /// Connections whose transaction completed and whose next request waits for the client's
    /// core (its `ClientReq` is scheduled, not yet issued).
    pub next_pending: u64,
    /// Response segments handed to the driver (window / lifetime).
    pub segments: u64,
    /// Lifetime count of response segments.
    pub segments_life: u64,
    /// Request segments retransmitted after a tap drop (window).
    pub retransmits: u64,
    /// The most consecutive timeouts one connection reached (window).
    backoff_max: u8,
    /// Retransmission timers armed and not yet fired (lifetime state).
    retx_armed: u32,
    /// A paced client (memcached `rate_rps`): the mean gap between requests of a connection.
    pace_ns: Option<f64>,
    /// The webbench client's time-outs and failed clients (None: no time-out).
    pub(crate) timeouts: Option<timeout::Timeouts>,
    /// The httperf client (None: a closed loop).
    pub(crate) open_loop: Option<httperf::OpenLoop>,
    /// SPECweb: the mean think time (ns) and its own stream; the classes' server CPU (ns).
    think_ns: Option<f64>,
    think_rng: Rng,
    light_ns: f64,
    heavy_ns: f64,
    /// SPECweb: finished requests by class, light and heavy (window).
    pub(crate) by_class: [u64; 2],
    /// Request sent → response complete at the client (ns).
    pub latency: Histogram,
}

impl TcpServer {
    /// The server for `w` (TcpRr, Memcached or Http) on a VM of `vcpus` vCPUs.
    pub fn new(w: &Workload, vcpus: u32, at: Placement, p: &Profile, seed: u64, vm_name: &str, off: Offload) -> Self {
        let g = &p.guest;
        let conc = match *w {
            Workload::TcpRr { concurrency, .. } | Workload::Memcached { concurrency, .. } | Workload::Http { concurrency, .. } => concurrency,
            Workload::Webbench { clients, .. } => clients,
            Workload::Httperf { rate_rps, timeout_ms, .. } => httperf::OpenLoop::slots(rate_rps, timeout_ms),
            Workload::Specweb { sessions, .. } => sessions,
            _ => unreachable!("TcpServer for a non-server workload"),
        };
        let open_loop = match *w {
            Workload::Httperf { rate_rps, timeout_ms, .. } => Some(httperf::OpenLoop::new(rate_rps, timeout_ms, conc)),
            _ => None,
        };
        let c0 = Conn { op: Op::Echo, req_bytes: 0, resp_bytes: 0, born: 0, due: 0, got: 0, resp_got: 0, unacked: 0, before_window: 0, backoff: 0 };
        // A paced client's mean gap between one connection's requests.
        let pace_ns = match *w {
            Workload::Memcached { rate_rps: Some(r), .. } => Some(conc as f64 * 1e9 / r),
            _ => None,
        };
        TcpServer {
            workload: w.clone(),
            mss: p.nic.mtu_bytes.value as u32 - TCP_IP_HDR,
            goal: SizeGoal::new(p, off.host_tso4, u64::MAX),
            csum_byte_ns: if off.csum { 0.0 } else { g.csum_byte_ns.value },
            conns: vec![c0; conc as usize],
            rng: Rng::for_component(seed, &format!("vm:{vm_name}/client")),
            workers: Workers::new(w, vcpus, at, p),
            in_path: VecDeque::new(),
            per_request_conn: matches!(*w, Workload::Http { keepalive: false, .. } | Workload::Webbench { .. } | Workload::Httperf { .. }),
            stopped: false,
            read_ns: g.tcp_read_ns.value,
            rx_byte_ns: g.tcp_rx_byte_ns.value,
            write_ns: g.tcp_write_ns.value,
            tx_byte_ns: g.tcp_tx_byte_ns.value,
            seg_ns: round_ns(g.tcp_tx_segment_ns.value),
            get_ns: p.app.memcached_get_ns.value,
            set_ns: p.app.memcached_set_ns.value,
            http_ns: match *w {
                Workload::Http { server: HttpServer::Nginx, .. }
                | Workload::Webbench { server: HttpServer::Nginx, .. }
                | Workload::Httperf { server: HttpServer::Nginx, .. } => {
                    p.app.nginx_request_ns.value
                }
                _ => p.app.http_request_ns.value,
            },
            ops: 0,
            ops_life: 0,
            done_bytes: 0,
            issued_life: 0,
            // Every connection's first request is pending from the start (a closed loop).
            next_pending: if open_loop.is_some() { 0 } else { conc as u64 },
            segments: 0,
            segments_life: 0,
            retransmits: 0,
            backoff_max: 0,
            retx_armed: 0,
            pace_ns,
            timeouts: match *w {
                Workload::Webbench { clients, timeout_ms, .. } => Some(timeout::Timeouts::new(clients, Time::from(timeout_ms) * 1_000_000)),
                _ => None,
            },
            open_loop,
            think_ns: match *w {
                Workload::Specweb { think_ms, .. } if think_ms > 0.0 => Some(think_ms * 1e6),
                _ => None,
            },
            think_rng: Rng::for_component(seed, &format!("vm:{vm_name}/specweb-think")),
            // A scenario's own per-request CPU replaces the profile's cost.
            light_ns: match *w {
                Workload::Specweb { light_cpu_us, .. } => light_cpu_us.map_or(p.app.specweb_light_ns.value, |us| us * 1e3),
                _ => 0.0,
            },
            heavy_ns: match *w {
                Workload::Specweb { heavy_cpu_us, .. } => heavy_cpu_us.map_or(p.app.specweb_heavy_ns.value, |us| us * 1e3),
                _ => 0.0,
            },
            by_class: [0; 2],
            latency: Histogram::new(),
        }
    }

    /// Has client `conn` given up (a webbench client whose request timed out)?
    fn gave_up(&self, conn: u32) -> bool {
        self.timeouts.as_ref().is_some_and(|t| t.failed(conn))
    }

    /// Connections (the client's concurrency).
    pub fn concurrency(&self) -> u32 {
        self.conns.len() as u32
    }

    /// The client's next request on a connection: its kind and request/response sizes.
    fn next_op(&mut self) -> (Op, u32, u32) {
        match self.workload {
            Workload::TcpRr { request_bytes, response_bytes, .. } => (Op::Echo, request_bytes, response_bytes),
            Workload::Memcached { get_ratio, value_bytes, key_bytes, .. } => {
                if self.rng.uniform() < get_ratio {
                    (Op::Get, GET_OVERHEAD + key_bytes, VALUE_OVERHEAD + key_bytes + value_bytes)
                } else {
                    (Op::Set, SET_OVERHEAD + key_bytes + value_bytes, STORED_BYTES)
                }
            }
            Workload::Http { file_bytes, .. } => (Op::Http, AB_REQUEST_BYTES, HTTP_HEADER_BYTES + file_bytes),
            Workload::Webbench { file_bytes, .. } => (Op::Http, WEBBENCH_REQUEST_BYTES, HTTP_HEADER_BYTES + file_bytes),
            Workload::Httperf { file_bytes, .. } => (Op::Http, HTTPERF_REQUEST_BYTES, HTTP_HEADER_BYTES + file_bytes),
            Workload::Specweb { heavy_pct, light_bytes, heavy_bytes, .. } => {
                if self.rng.uniform() * 100.0 < heavy_pct {
                    (Op::Heavy, SPECWEB_REQUEST_BYTES, HTTP_HEADER_BYTES + heavy_bytes)
                } else {
                    (Op::Light, SPECWEB_REQUEST_BYTES, HTTP_HEADER_BYTES + light_bytes)
                }
            }
            _ => unreachable!("TcpServer for a non-server workload"),
        }
    }

    /// Guest CPU to serve one request on `conn`: read, the application's work, write.
    fn serve_cost(&self, conn: u32) -> Time {
        let c = &self.conns[conn as usize];
        let app = match c.op {
            Op::Echo => 0.0,
            Op::Get => self.get_ns,
            Op::Set => self.set_ns,
            Op::Http => self.http_ns,
            Op::Light => self.light_ns,
            Op::Heavy => self.heavy_ns,
        };
        let ns = self.read_ns + self.rx_byte_ns * c.req_bytes as f64 + app + self.write_ns + self.tx_byte_ns * c.resp_bytes as f64;
        round_ns(ns)
    }


    /// A transaction on `conn` completed at the client at `at`; when its next request goes out
    /// (at once in a closed loop, when it is due for a paced client).
    fn complete(&mut self, conn: u32, at: Time, window_start: Time) -> Time {
        self.ops += 1;
        self.ops_life += 1;
        let c = &self.conns[conn as usize];
        self.done_bytes += u64::from(c.resp_bytes.saturating_sub(c.before_window));
        // Both callers schedule the connection's next request (ClientReq) then.
        self.next_pending += 1;
        // A latency counts for a request sent and completed in the window (`window_start`).
        let born = self.conns[conn as usize].born;
        if born >= window_start {
            self.latency.record(at - born);
        }
        match self.conns[conn as usize].op {
            Op::Light => self.by_class[0] += 1,
            Op::Heavy => self.by_class[1] += 1,
            _ => {}
        }
        timeout::disarm(self, conn);
        if let Some(mean) = self.think_ns {
            // The user reads the page, then clicks on: an exponential think time from the
            // response's last byte, drawn from the think stream.
            return at + round_ns(-(1.0 - self.think_rng.uniform()).ln() * mean);
        }
        self.next_due(conn).max(at)
    }

    /// A paced client: draw when `conn`'s next request is due (a Poisson process per
    /// connection) and return it; a closed loop: 0 (now).
    fn next_due(&mut self, conn: u32) -> Time {
        let Some(mean) = self.pace_ns else { return 0 };
        let gap = -(1.0 - self.rng.uniform()).ln() * mean;
        let c = &mut self.conns[conn as usize];
        c.due += round_ns(gap);
        c.due
    }
}

/// Its steps: serve the request on connection `a`; transmit a response segment of `a` bytes;
/// transmit a control segment on connection `a` (`b`: its [`Ctl`], see [`ctl_code`]).
const SERVE: u8 = 0;
const SRV_XMIT: u8 = 1;
const CTL_XMIT: u8 = 2;
/// Its client's events: the next request on connection `a`; the retransmission of a dropped
/// segment on connection `a` (`b` bytes, `x` its [`Ctl`]); client `a`'s time-out.
const REQ: u8 = 0;
const RETX: u8 = 1;
const TIMEOUT: u8 = 2;
/// The httperf client's events: the next connection opens; connection `a`'s time-out.
const OL_ARRIVE: u8 = 3;
const OL_TIMEOUT: u8 = 4;
/// The client's core has received the last byte of connection `a`'s response; a control
/// segment (`x`: its [`Ctl`]) on connection `a`: the client application sees them now.
const DONE: u8 = 5;
const CTL_RX: u8 = 6;

/// A control flag as a step or event argument.
fn ctl_code(c: Ctl) -> u8 {
    match c {
        Ctl::None => 0,
        Ctl::Syn => 1,
        Ctl::Fin => 2,
    }
}

/// The control flag of [`ctl_code`] (or of a [`retx_arg`]).
fn ctl_of(code: u64) -> Ctl {
    match code & 3 {
        1 => Ctl::Syn,
        2 => Ctl::Fin,
        _ => Ctl::None,
    }
}

/// A retransmission timer's small argument: the segment's control flag (bits 0-1) and the
/// connection's backoff when it was armed (bits 2-7).
fn retx_arg(ctl: Ctl, backoff: u8) -> u8 {
    ctl_code(ctl) | (backoff.min(63) << 2)
}

impl TcpServer {
    /// The client sends the next request on `conn` (after its own CPU time).
    fn client_request(g: &mut impl Ctx<Self>, conn: u32) {
        let now = g.now();
        let req_ns = round_ns(g.profile().client.request_ns.value);
        let s = g.app();
        let (op, req, resp) = s.next_op();
        s.issued_life += 1;
        if s.open_loop.is_none() {
            s.next_pending -= 1;
        }
        let at = g.client_cpu(now, req_ns);
        let s = g.app();
        let due = s.conns[conn as usize].due;
        // A paced request's latency counts from when it was due, queueing at the client included.
        let born = if s.pace_ns.is_some() { due.min(at) } else { at };
        s.conns[conn as usize] = Conn { op, req_bytes: req, resp_bytes: resp, born, due, got: 0, resp_got: 0, unacked: 0, before_window: 0, backoff: 0 };
        timeout::arm(g, conn, born);
        httperf::arm(g, conn, born);
        let s = g.app();
        if s.per_request_conn {
            // connect(): the SYN first; the request follows the SYN-ACK (conn.rs).
            return conn::client_send(g, at, conn, Ctl::Syn);
        }
        Self::client_send_request(g, at, conn);
    }

    /// Put the request of `conn` on the link at `at`, in MSS segments.
    fn client_send_request(g: &mut impl Ctx<Self>, at: Time, conn: u32) {
        let s = g.app();
        let (mss, req) = (s.mss, s.conns[conn as usize].req_bytes);
        let mut left = req;
        while left > 0 {
            let b = left.min(mss);
            left -= b;
            Self::client_segment(g, at, conn, b);
        }
    }

    /// Put one request segment of `bytes` on the reverse link at `at`.
    fn client_segment(g: &mut impl Ctx<Self>, at: Time, conn: u32, bytes: u32) {
        Self::client_packet(g, at, RxPkt::new(bytes, 0, at, conn, Ctl::None));
    }

    /// Put one client packet on the reverse link at `at`.
    fn client_packet(g: &mut impl Ctx<Self>, at: Time, pkt: RxPkt) {
        let wire = pkt.bytes + TCP_IP_HDR + g.profile().nic.wire_overhead_bytes.value as u32;
        g.to_host(at, pkt, wire);
    }

    /// The client application has the whole response on `conn` (unless it gave up meanwhile):
    /// the transaction completes, and the next request carries the ACK of what is left.
    fn client_done(g: &mut impl Ctx<Self>, conn: u32) {
        let (now, window_start) = (g.now(), g.window_start());
        let s = g.app();
        if s.gave_up(conn) {
            return;
        }
        let next = s.complete(conn, now, window_start);
        g.client_at(next, ClientEv::new(REQ, conn));
    }

    /// The retransmission timer of a dropped request segment (or SYN, FIN) fired.
    /// `armed_at` is the connection's backoff when the timer was armed: the timeout backs the
    /// next one off once, however many segments of one flight it resends.
    fn client_retx(g: &mut impl Ctx<Self>, conn: u32, bytes: u32, ctl: Ctl, armed_at: u8) {
        let now = g.now();
        let s = g.app();
        s.retx_armed -= 1;
        if s.gave_up(conn) || (ctl == Ctl::Syn && httperf::drop_lost_syn(s, conn)) {
            return;
        }
        let c = &mut s.conns[conn as usize];
        c.backoff = c.backoff.max(armed_at.saturating_add(1));
        s.backoff_max = s.backoff_max.max(c.backoff);
        s.retransmits += 1;
        Self::client_packet(g, now, RxPkt::new(bytes, 0, now, conn, ctl));
    }

    /// The application served `conn`'s request and wrote the response into the socket.
    fn serve_done(g: &mut impl Ctx<Self>, v: u32, conn: u32) {
        let local = v - g.vcpu(0);
        let s = g.app();
        let w = s.workers.running(local) as usize;
        s.workers.w[w].tx = Some((conn, s.conns[conn as usize].resp_bytes));
        g.enter(v);
    }

    /// One response segment went through TCP/IP and virtio-net `start_xmit`.
    fn srv_xmit_done(g: &mut impl Ctx<Self>, v: u32, bytes: u32) {
        let now = g.now();
        let local = v - g.vcpu(0);
        let s = g.app();
        let w = s.workers.running(local);
        let (conn, left) = s.workers.w[w as usize].tx.expect("segment without a response");
        if left > bytes {
            s.workers.w[w as usize].tx = Some((conn, left - bytes));
        } else if s.per_request_conn {
            s.workers.w[w as usize].tx = Some((conn, 0));
        } else {
            s.workers.finish(w);
        }
        s.segments += 1;
        s.segments_life += 1;
        s.in_path.push_back((conn, Ctl::None));
        let segs = g.app().goal.segs(bytes);
        g.post_tx(v, Buf { segs, ..Buf::new(bytes, now) });
    }
}

impl App for TcpServer {
    /// The next step of the worker on `v` runs: segment the response in progress, else serve
    /// its next request, else (no worker homed here has work) block (HLT).
    fn next(g: &mut impl Ctx<Self>, v: u32) {
        let (now, local) = (g.now(), v - g.vcpu(0));
        if g.app().stopped {
            return g.idle(v, None);
        }
        crate::model::workload::ctx::sync_steal(g, |s: &mut Self| s.workers.sched());
        let s = g.app();
        let picked = s.workers.pick(now, local);
        // Reschedule IPIs its decisions ask for; an ICR write that exits ends here (VM entry
        // asks again).
        while let Some(k) = g.app().workers.take_kick() {
            let to = g.vcpu(k);
            if g.send_ipi(v, to, Ipi::Reschedule) {
                return;
            }
        }
        let Some(w) = picked else { return g.idle(v, None) };
        let s = g.app();
        let tx = s.workers.w[w as usize].tx;
        let (step, cost) = if let Some((conn, 0)) = tx {
            // close(): the FIN after the response.
            (Step::new(CTL_XMIT, conn, ctl_code(Ctl::Fin) as u64), s.seg_ns)
        } else if let Some((_, left)) = tx {
            let bytes = left.min(s.goal.goal());
            (Step::new(SRV_XMIT, bytes, 0), s.seg_ns + round_ns(s.csum_byte_ns * f64::from(bytes)))
        } else if let Some(conn) = s.workers.take(w, local) {
            (Step::new(SERVE, conn, 0), s.serve_cost(conn))
        } else {
            return g.idle(v, None);
        };
        let switch = s.workers.take_switch(local);
        g.run_step(v, step, cost + switch)
    }
    fn step_done(g: &mut impl Ctx<Self>, v: u32, s: Step) {
        match s.kind {
            SERVE => Self::serve_done(g, v, s.a),
            SRV_XMIT => Self::srv_xmit_done(g, v, s.a),
            _ => conn::guest_sent(g, v, s.a, ctl_of(s.b)),
        }
    }
    fn step_name(s: Step) -> &'static str {
        match s.kind {
            SERVE => "serve request",
            SRV_XMIT => "response xmit",
            _ => "tcp ctl xmit",
        }
    }
    /// NAPI received a segment for the server on vCPU `v`: a pure ACK ends here; request
    /// bytes go to the connection's socket, and a complete request wakes a worker.
    /// Returns whether a task (a control segment from softirq) or an exit (the IPI) was started.
    fn deliver(g: &mut impl Ctx<Self>, v: u32, pkt: RxPkt) -> bool {
        if pkt.ctl != Ctl::None {
            return conn::guest_rx(g, v, pkt);
        }
        let local = v - g.vcpu(0);
        let s = g.app();
        if pkt.bytes == 0 {
            return false;
        }
        let c = &mut s.conns[pkt.conn as usize];
        c.got += pkt.bytes;
        if c.got < c.req_bytes {
            return false;
        }
        let now = g.now();
        crate::model::workload::ctx::sync_steal(g, |s: &mut Self| s.workers.sched());
        match g.app().workers.deliver(now, pkt.conn, local) {
            Some(home) => {
                // try_to_wake_up on another vCPU: a reschedule IPI through the ICR.
                let target = g.vcpu(home);
                g.send_ipi(v, target, Ipi::Reschedule)
            }
            None => false,
        }
    }
    /// A response segment reached the client: its core receives it, ACKs every
    /// `delack_segments`, and on the last byte completes the transaction and sends the next
    /// request on that connection.
    fn at_client(g: &mut impl Ctx<Self>, b: Buf) {
        let p = &g.profile().client;
        let (rx_ns, delack) = (round_ns(p.rx_packet_ns.value) * Time::from(b.segs), p.delack_segments.value as u32);
        let at = g.client_cpu(g.now(), rx_ns);
        let s = g.app();
        let (conn, ctl) = s.in_path.pop_front().expect("response segment without a connection");
        if s.gave_up(conn) {
            // A failed client's socket is closed: its core received the segment, nothing more.
            return;
        }
        // The guest answered: what the client sent was received (an RTT sample ends the
        // backoff, tcp_ack_update_rtt).
        s.conns[conn as usize].backoff = 0;
        if ctl != Ctl::None || b.bytes == 0 {
            // Seen by the client application when its core has received it (a transaction
            // ends, and counts, when it really does: never after the run's end).
            return g.client_at(at, ClientEv { kind: CTL_RX, x: ctl_code(ctl), a: conn, b: 0 });
        }
        let per_request = s.per_request_conn;
        let c = &mut s.conns[conn as usize];
        c.resp_got += b.bytes;
        c.unacked += u32::from(b.segs);
        if c.resp_got >= c.resp_bytes && per_request {
            // ab reads until the server closes: the transaction ends with the FIN.
            return;
        }
        if c.resp_got >= c.resp_bytes {
            return g.client_at(at, ClientEv::new(DONE, conn));
        }
        if c.unacked >= delack {
            c.unacked = 0;
            Self::client_segment(g, at, conn, 0);
        }
    }
    fn client_event(g: &mut impl Ctx<Self>, e: ClientEv) {
        match e.kind {
            REQ => Self::client_request(g, e.a),
            TIMEOUT => timeout::fired(g, e.a),
            OL_ARRIVE => httperf::arrive(g),
            OL_TIMEOUT => httperf::fired(g, e.a),
            DONE => Self::client_done(g, e.a),
            CTL_RX => {
                let now = g.now();
                if !g.app().gave_up(e.a) {
                    conn::client_rx(g, now, e.a, ctl_of(u64::from(e.x)));
                }
            }
            _ => Self::client_retx(g, e.a, e.b, ctl_of(u64::from(e.x)), e.x >> 2),
        }
    }
    /// A request segment (or a GRO skb of several) was dropped at the tap queue: the client
    /// retransmits each segment after the RTO.
    /// The timer backs off with the connection's timeouts since the guest last answered
    /// (`net::backed_off`).
    fn tap_drop(g: &mut impl Ctx<Self>, pkt: RxPkt) {
        let now = g.now();
        let backoff = g.app().conns[pkt.conn as usize].backoff;
        let rto = backed_off(TCP_RTO_MIN_NS, u32::from(backoff));
        if pkt.bytes > 0 {
            let mss = g.app().mss;
            let mut left = pkt.bytes;
            while left > 0 {
                let b = left.min(mss);
                left -= b;
                g.app().retx_armed += 1;
                g.client_at(now + rto, ClientEv { kind: RETX, x: retx_arg(Ctl::None, backoff), a: pkt.conn, b });
            }
        } else if pkt.ctl != Ctl::None {
            g.app().retx_armed += 1;
            // A lost SYN or FIN: resent after the RTO; a SYN's starts at the client kernel's
            // initial one (client.tcp_syn_rto_ns: 3 s before Linux 3.1, 1 s since).
            let rto = if pkt.ctl == Ctl::Syn {
                backed_off(round_ns(g.profile().client.tcp_syn_rto_ns.value), u32::from(backoff))
            } else {
                rto
            };
            g.client_at(now + rto, ClientEv { kind: RETX, x: retx_arg(pkt.ctl, backoff), a: pkt.conn, b: 0 });
        }
    }
    /// Every connection's first request, serialized by the client's core; webbench's clients
    /// are processes forked one after another, so client `c` starts `c` forks after the first.
    fn start(g: &mut impl Ctx<Self>) {
        if g.app().open_loop.is_some() {
            return httperf::start(g);
        }
        if let Some(mean) = g.app().think_ns {
            // SPECweb's users arrive over one think time, each as if it had just thought.
            for conn in 0..g.app().concurrency() {
                let due = round_ns(-(1.0 - g.app().think_rng.uniform()).ln() * mean);
                g.client_at(due, ClientEv::new(REQ, conn));
            }
            return;
        }
        let fork = if g.app().timeouts.is_some() { round_ns(g.profile().client.fork_ns.value) } else { 0 };
        for conn in 0..g.app().concurrency() {
            let due = g.app().next_due(conn) + Time::from(conn) * fork;
            g.client_at(due, ClientEv::new(REQ, conn));
        }
    }

    fn sent_life(&self) -> u64 {
        self.segments_life
    }
    fn set_stopped(&mut self, stopped: bool) {
        self.stopped = stopped;
    }
    fn reset_metrics(&mut self) {
        self.workers.reset_metrics();
        self.ops = 0;
        self.done_bytes = 0;
        for c in &mut self.conns {
            c.before_window = c.resp_got;
        }
        self.segments = 0;
        self.retransmits = 0;
        self.backoff_max = 0;
        self.by_class = [0; 2];
        if let Some(o) = self.open_loop.as_mut() {
            o.reset_metrics();
        }
        self.latency.clear();
    }
    fn describe(&self) -> String {
        let busy: Vec<String> = self.workers.w.iter().enumerate()
            .filter(|(_, w)| w.tx.is_some() || !w.queue.is_empty())
            .map(|(i, w)| format!("w{i} tx {:?} queued {}", w.tx, w.queue.len()))
            .collect();
        let partial = self.conns.iter().filter(|c| c.got > 0 && c.got < c.req_bytes).count();
        let failed = self.timeouts.as_ref().map_or(0, |t| t.failed_n);
        format!(
            "server stopped {} issued {} done {} next pending {} failed clients {failed} workers [{}] requests partly received {partial} in path {}",
            self.stopped, self.issued_life, self.ops_life, self.next_pending, busy.join(", "), self.in_path.len()
        )
    }
    fn progress(&self) -> u64 {
        self.ops_life
    }
    fn retransmission_armed(&self) -> bool {
        self.retx_armed > 0
    }
    /// Every webbench client failed: nobody offers load any more.
    fn finished(&self) -> bool {
        self.timeouts.as_ref().is_some_and(|t| t.live() == 0)
    }
    /// Every SPECweb session thinks (its next request waits on its think timer), or every
    /// connection of a paced client waits for its next request's due time: nothing is owed
    /// (a Poisson client at 87 requests/s goes 50 ms without a request 1.3 % of the time).
    fn thinking(&self) -> bool {
        (self.think_ns.is_some() || self.pace_ns.is_some()) && self.next_pending == self.concurrency() as u64
    }
    /// Response segments at the client; the payload of the responses its application got;
    /// latency per transaction. Request segments dropped at the tap are retransmitted, never
    /// lost.
    fn measure<'a>(&'a self, d: DevView<'a>) -> Measure<'a> {
        Measure {
            delivered: Some(d.wire.frames),
            payload: Some(self.done_bytes),
            latency: Some(&self.latency),
            loss_pct: Some(0.0),
            ops: Some(self.ops),
            failed_clients: self.timeouts.as_ref().map(|t| t.failed_n),
            open_loop: self.open_loop.as_ref().map(|o| [o.opened, o.timeouts, o.no_slot]),
            by_class: matches!(self.workload, Workload::Specweb { .. }).then_some(self.by_class),
            guest_threads: Some(self.workers.counts()),
            tcp_rr: Some(TcpRrStats { retransmits: self.retransmits, backoff_max: self.backoff_max }),
            ..Default::default()
        }
    }
    /// A closed loop: each connection has one transaction in flight or its next request
    /// pending at the client's core. The open loop: each arrival opened a connection or found
    /// no slot, and each opened one is closed or open.
    fn ledger(&self, _d: &DevLedger, l: &mut AppLedger) {
        if let Some(o) = &self.open_loop {
            l.served_by_vcpu = Some(self.workers.served.clone());
            l.balances.push(Balance { what: "httperf arrivals = opened + no slot", lhs: o.arrivals_life, rhs: o.opened_life + o.no_slot_life });
            l.balances.push(Balance { what: "httperf opened = closed + open", lhs: o.opened_life, rhs: o.closed_life + o.in_use() });
            l.balances.push(Balance { what: "httperf issued = opened", lhs: self.issued_life, rhs: o.opened_life });
            return;
        }
        l.rr = [self.issued_life, self.ops_life, self.concurrency() as u64, self.next_pending];
        l.served_by_vcpu = Some(self.workers.served.clone());
        l.balances.push(Balance {
            what: "rr issued + next pending = completed + concurrency",
            lhs: self.issued_life + self.next_pending,
            rhs: self.ops_life + self.concurrency() as u64,
        });
    }
    fn on_every_vcpu(&self) -> bool {
        true
    }
    fn receives_tcp_data(&self) -> bool {
        true
    }
}
