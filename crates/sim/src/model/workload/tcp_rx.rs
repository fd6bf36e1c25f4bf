//! netperf TCP_STREAM towards the guest (DESIGN §3.6: "sending and receiving"): the remote
//! client `write()`s `send_bytes` at a time (netperf `-m`) and sends whole MSS segments as fast
//! as its core, its congestion window and the guest's receive window allow; they cross the
//! reverse link, the tap, vhost RX and the RX ring; NAPI receives each segment
//! (`guest.tcp_rx_segment_ns`, or `gro_segment_ns` for each frame GRO merges into one) into the
//! socket and ACKs every `client.delack_segments` full segments from softirq (`__tcp_ack_snd_check`: a pure ACK through the TX ring,
//! `tcp_tx_segment_ns`). The application `recv()`s up to `message_bytes` at a time
//! (`tcp_read_ns` + bytes × `tcp_rx_byte_ns`, the copy to user space: the payload's only
//! per-byte cost) and halts when the socket is empty.
//!
//! The advertised window is the socket's free space (its window − queued, RFC 793): a fixed
//! `window_bytes` (`SO_RCVBUF`), or the profile kernel's autotuned buffer (`rcvbuf.rs`: each
//! ACK carries a timestamp the client echoes, which gives the receiver its RTT); the
//! client sends only below the right edge it last heard. When a read frees at least twice the
//! window last advertised (and one MSS), the application sends a window update
//! (`tcp_cleanup_rbuf`). An odd segment left unacknowledged is ACKed with the next one; a
//! stream never stops with one segment pending because the client keeps sending.
//!
//! The client's core pays `client.send_call_ns` per `write()`, `client.tx_byte_ns` per byte
//! written and `client.tx_skb_ns` per skb sent down its stack. With TSO on its NIC
//! (`client.tso`) an skb carries up to `tcp_xmit_size_goal`'s whole segments (`SizeGoal`:
//! 45 × 1,448 bytes, at most half the largest window the guest advertised), which the NIC cuts
//! into MSS frames that leave together; without TSO each MSS is an skb of its own. A client
//! kernel without autocorking (`client.tcp_autocorking`, before 3.14) pushes each write's
//! whole segments at once, so a sender bound by its core sends skbs of about one `write()`
//! (at least an MSS), and full-sized ones only of what it wrote while it waited. The writes
//! are charged as the bytes they carry are sent (netperf keeps the socket's buffer full, so a
//! sender never waits for its application). `tcp_tso_should_defer` is not modelled on the
//! client: it sends what the windows allow at once.
//!
//! The client's TCP small queues (`client.tsq_limit_bytes`, Linux `tcp_limit_output_bytes`)
//! bound what it queues for the link: past the limit it waits until its oldest queued segment
//! is through. (A 1 GB window once filled the shared link's queue with a second of frames that
//! every other VM's packets waited behind.)
//!
//! A segment dropped at the host's tap queue or a VF's full ring (a guest that cannot keep up)
//! is resent by the client: at the next guest ACK it receives (SACK tells it of the hole: fast
//! retransmit, RFC 6675), or when the retransmission timer (200 ms, Linux `TCP_RTO_MIN`, doubled
//! by each timeout until an ACK acknowledges new data: `net::rto_after`) fires
//! if no ACK comes. The model counts bytes, not sequence numbers, so a resent segment simply
//! adds its bytes when it arrives.
//!
//! The client's congestion window (`cc.rs`, the profile client kernel's CUBIC or Reno) bounds
//! what it has in flight, RFC 6675's pipe: sent, not yet acknowledged, less what it knows lost
//! and has not resent. The first SACKed hole cuts the window once (fast recovery, until what
//! was in flight then is acknowledged); a timeout that finds segments still lost drops it to
//! one. Resends go out as the window lets them, at least one per ACK or timeout.

use crate::model::hw::rxq::{Ctl, RxPkt};
use crate::model::hw::virtq::Buf;
use crate::model::workload::app::{App, AppLedger, Balance, ClientEv, DevLedger, DevView, Measure, Step, TcpRxStats};
use crate::model::workload::cc::Cwnd;
use crate::model::workload::ctx::Ctx;
use crate::model::workload::net::{rto_after, TCP_IP_HDR};
use crate::model::workload::rcvbuf::RcvBuf;
use crate::model::guest::tso::SizeGoal;
use crate::engine::{Time, round_ns};
use crate::profile::Profile;
use std::collections::VecDeque;

/// The guest's TCP receiver and the remote sender feeding it.
#[derive(Debug)]
pub struct TcpReceiver {
    msg: u32,
    mss: u32,
    /// Guest: the socket's buffer and its autotuning.
    pub buf: RcvBuf,
    /// Guest: bytes received in order (rcv_nxt).
    rcv_nxt: u64,
    /// Guest: bytes read by the application.
    read: u64,
    /// Guest: full segments received since the last ACK.
    unacked: u32,
    /// Guest: the right edge it last advertised (ack + window).
    adv_edge: u64,
    /// Client: next byte to send (snd_nxt).
    snd_nxt: u64,
    /// Client: bytes its application has written into the socket.
    written: u64,
    /// Client: bytes per `write()` (netperf `-m`).
    send_bytes: u64,
    /// Client: its core's cost per `write()` call and per byte written, and per skb.
    call_ns: f64,
    copy_ns: f64,
    skb_ns: f64,
    /// Client: TSO on its NIC, and the size goal it gives against the largest window the
    /// guest has advertised (`tcp_bound_to_half_wnd` uses `max_window`).
    tso: bool,
    goal: SizeGoal,
    max_window: u64,
    /// Client: its kernel corks a small write's push while earlier skbs wait for the NIC
    /// (`client.tcp_autocorking`, 3.14); without, each `write()` pushes its whole segments.
    autocork: bool,
    /// Client: bytes its application wrote ahead while the sender waited for a window or for
    /// TCP small queues, not yet sent: sent as skbs of up to the size goal.
    ahead: u64,
    /// Client: it waited (for a window or TSQ) since it last sent.
    waited: bool,
    /// Client: the right edge it last heard.
    snd_edge: u64,
    /// Right edges, timestamps (TSval) and bytes received of the ACKs between the TX ring and
    /// the client, in order (the path is FIFO, so each arriving ACK is the oldest one sent).
    edges: VecDeque<(u64, u64, u64)>,
    /// Client: bytes the guest has acknowledged receiving (the model's SACKed `snd_una`).
    delivered: u64,
    /// Client: its congestion window.
    pub cwnd: Cwnd,
    /// Client: in fast recovery until this many bytes are acknowledged (`high_seq`).
    recovery_until: Option<u64>,
    /// Client: bytes it knows lost and has not resent.
    lost_bytes: u64,
    /// Client: when an ACK last acknowledged new data (the RTO restarts from there).
    progress_at: Time,
    /// Client: the latest TSval it heard, which its segments echo (`ts_recent`; none yet: MAX).
    ts_recent: u64,
    /// Client: waiting for the window to open.
    pub blocked: bool,
    /// Client: TCP small queues (`client.tsq_limit_bytes`): at most this many of its bytes
    /// wait for the link.
    tsq_limit: u64,
    /// Client: sizes of segments dropped at the host, to resend.
    lost: VecDeque<u32>,
    /// Client: its retransmission timer is armed.
    rto_armed: bool,
    /// Client: timeouts since an ACK last acknowledged new data (`icsk_backoff`): each doubles
    /// the RTO.
    backoff: u32,
    /// Guest cost of sending a pure ACK or window update.
    seg_cost: Time,
    read_ns: f64,
    byte_ns: f64,
    /// Segments the client sent (lifetime).
    pub sent_life: u64,
    /// ACKs (and window updates) handed to the driver (window / lifetime).
    pub acks: u64,
    /// Lifetime count of ACKs handed to the driver.
    pub acks_life: u64,
    /// Segments NAPI received (window).
    pub segments: u64,
    /// Payload bytes the application read (window).
    pub read_bytes: u64,
    /// Windows advertised by the ACKs handed to the driver, summed (window).
    adv_sum: u64,
    /// Segments the client resent (window).
    retransmits: u64,
    /// Retransmission timeouts with segments still to resend (window).
    timeouts: u64,
    /// Congestion windows (segments) at the ACKs the client received, summed, and their count
    /// (window).
    cwnd_sum: u64,
    cwnd_acks: u64,
}

impl TcpReceiver {
    /// A receiver reading `msg` bytes per `recv()` with a fixed `window` byte receive window,
    /// or the profile kernel's autotuned buffer, fed by a client writing `send_bytes` at a time.
    pub fn new(msg: u32, send_bytes: u32, window: Option<u32>, p: &Profile) -> Self {
        let g = &p.guest;
        let mss = p.nic.mtu_bytes.value as u32 - TCP_IP_HDR;
        let buf = RcvBuf::new(window.map(u64::from), mss as u64, p);
        let window = buf.window();
        let c = &p.client;
        TcpReceiver {
            msg,
            mss,
            buf,
            rcv_nxt: 0,
            read: 0,
            unacked: 0,
            adv_edge: window,
            snd_nxt: 0,
            written: 0,
            send_bytes: u64::from(send_bytes.max(1)),
            call_ns: c.send_call_ns.value,
            copy_ns: c.tx_byte_ns.value,
            skb_ns: c.tx_skb_ns.value,
            tso: c.tso.value,
            goal: SizeGoal::new(p, c.tso.value, window),
            max_window: window,
            autocork: c.tcp_autocorking.value,
            ahead: 0,
            waited: false,
            snd_edge: window,
            edges: VecDeque::new(),
            delivered: 0,
            cwnd: Cwnd::new(p.client.tcp_congestion.value, p.client.tcp_slow_start.value, p.client.tcp_init_cwnd.value as u32),
            recovery_until: None,
            lost_bytes: 0,
            progress_at: 0,
            ts_recent: u64::MAX,
            blocked: false,
            tsq_limit: p.client.tsq_limit_bytes.value as u64,
            lost: VecDeque::new(),
            rto_armed: false,
            backoff: 0,
            seg_cost: round_ns(g.tcp_tx_segment_ns.value),
            read_ns: g.tcp_read_ns.value,
            byte_ns: g.tcp_rx_byte_ns.value,
            sent_life: 0,
            acks: 0,
            acks_life: 0,
            segments: 0,
            read_bytes: 0,
            adv_sum: 0,
            retransmits: 0,
            timeouts: 0,
            cwnd_sum: 0,
            cwnd_acks: 0,
        }
    }

    /// Bytes the application has read since the start (lifetime).
    pub fn read_life(&self) -> u64 {
        self.read
    }

    /// Bytes in the socket, not yet read.
    pub fn queued(&self) -> u64 {
        self.rcv_nxt - self.read
    }

    /// Client: segments in flight (RFC 6675's pipe), in MSS.
    fn pipe(&self) -> u64 {
        (self.snd_nxt - self.delivered.min(self.snd_nxt)).saturating_sub(self.lost_bytes).div_ceil(self.mss as u64)
    }

    /// Client: its retransmission timeout, backed off (`rto_after`).
    fn rto_ns(&self) -> Time {
        rto_after(self.backoff)
    }

    /// Client: the congestion window lets one more segment out.
    fn cwnd_open(&self) -> bool {
        self.pipe() < u64::from(self.cwnd.cwnd)
    }

    /// Client: bytes both windows let it send now.
    fn room(&self) -> u64 {
        let rwnd = self.snd_edge.saturating_sub(self.snd_nxt);
        let cwnd = u64::from(self.cwnd.cwnd).saturating_sub(self.pipe()) * u64::from(self.mss);
        rwnd.min(cwnd)
    }

    /// Client: its core's time to send an skb of `bytes` from `snd_nxt` on: the `write()`s
    /// that bring those bytes into the socket, their copy, and the skb's way to the NIC.
    fn send_cost(&mut self, bytes: u32) -> Time {
        let end = self.snd_nxt + u64::from(bytes);
        let calls = end.saturating_sub(self.written).div_ceil(self.send_bytes);
        self.written += calls * self.send_bytes;
        round_ns(calls as f64 * self.call_ns + f64::from(bytes) * self.copy_ns + self.skb_ns).max(1)
    }

    /// Client: the bytes unsent at a push, the most its next skb may carry. With autocorking
    /// the tail grows to the size goal while earlier skbs are in the NIC, which a sender of a
    /// full buffer always has (the model's `u64::MAX`). Without it (before 3.14) each
    /// `write()` ends in `tcp_push`, which sends the unsent whole segments at once: the
    /// writes since the last push that bring at least one MSS (the shorter tail waits for
    /// the next write, `tcp_mss_split_point`) — or what the application wrote ahead while
    /// the sender waited.
    fn pushed(&self) -> u64 {
        if self.autocork {
            return u64::MAX;
        }
        let carry = self.written.saturating_sub(self.snd_nxt);
        let writes = u64::from(self.mss).saturating_sub(carry).div_ceil(self.send_bytes);
        (carry + writes * self.send_bytes).max(self.ahead)
    }

    /// The right edge the guest would advertise now.
    fn edge_now(&self) -> u64 {
        self.rcv_nxt + self.buf.window().saturating_sub(self.queued())
    }

}

/// Its steps: a pure ACK or window update (`softirq` set when NAPI sends it); a `recv()` of
/// `a` bytes.
const ACK_XMIT: u8 = 0;
const TCP_READ: u8 = 1;
/// Its client's events: send the next segment; the retransmission timer fired.
const SEND: u8 = 0;
const RTO: u8 = 1;

/// The ACK step, from softirq or from the application.
fn ack_step(softirq: bool) -> Step {
    Step { softirq, ..Step::new(ACK_XMIT, 0, 0) }
}

impl TcpReceiver {
    /// The client sends its next skb (one MSS, or a TSO skb of whole segments) if the windows
    /// allow, else waits for an ACK.
    fn client_send(g: &mut impl Ctx<Self>) {
        let now = g.now();
        let ovh = g.profile().nic.wire_overhead_bytes.value as u32;
        let r = g.app();
        let mss = r.mss;
        if r.waited && r.room() >= u64::from(mss) {
            // netperf kept writing while its sender waited, until the send buffer was full:
            // autotuning keeps that at twice the congestion window (`tcp_sndbuf_expand`), so
            // about a window's bytes are unsent when it resumes.
            r.waited = false;
            r.ahead = r.ahead.max(u64::from(r.cwnd.cwnd) * u64::from(mss));
        }
        let Some(bytes) = r.goal.full_segments(r.pushed(), r.room()) else {
            r.blocked = true;
            r.waited = true;
            return;
        };
        r.blocked = false;
        let limit = r.tsq_limit;
        if g.client().link_bytes() > limit {
            // TSQ throttled: the sender resumes as its queued segments leave (`tcp_tsq_handler`).
            g.app().waited = true;
            return g.client().wake_below(limit, ClientEv::new(SEND, 0));
        }
        let r = g.app();
        r.ahead = r.ahead.saturating_sub(u64::from(bytes));
        let cost = r.send_cost(bytes);
        let segs = bytes / mss;
        r.snd_nxt += u64::from(bytes);
        r.sent_life += u64::from(segs);
        let at = g.client_cpu(now, cost);
        let wire = mss + TCP_IP_HDR + ovh;
        // Each segment echoes the latest timestamp the client heard (carried in `ack`, which a
        // data segment into the guest does not otherwise use). A TSO skb's frames leave the
        // NIC back to back.
        let ts = g.app().ts_recent;
        for _ in 0..segs {
            g.to_host(at, RxPkt::new(mss, ts, at, 0, Ctl::None), wire);
        }
        g.client_at(at, ClientEv::new(SEND, 0));
    }

    /// A client segment (or a GRO skb of several) was dropped at the tap queue: resend each
    /// segment at the next ACK or the RTO.
    fn lost(g: &mut impl Ctx<Self>, pkt: RxPkt) {
        let now = g.now();
        let r = g.app();
        let segs = u32::from(pkt.segs);
        for i in 0..segs {
            // The client sends whole MSS; a resent one may be shorter only if it was.
            let b = pkt.bytes / segs + u32::from(i < pkt.bytes % segs);
            r.lost.push_back(b);
            r.lost_bytes += u64::from(b);
        }
        if !r.rto_armed {
            r.rto_armed = true;
            let at = now + r.rto_ns();
            g.client_at(at, ClientEv::new(RTO, 0));
        }
    }

    /// The client's retransmission timer fired: resend what is still lost.
    fn rto(g: &mut impl Ctx<Self>) {
        let now = g.now();
        let r = g.app();
        r.rto_armed = false;
        if r.lost.is_empty() {
            return;
        }
        if r.progress_at + r.rto_ns() > now {
            // ACKs still acknowledge new data: the timer restarts from the latest (tcp_rearm_rto).
            r.rto_armed = true;
            let at = r.progress_at + r.rto_ns();
            return g.client_at(at, ClientEv::new(RTO, 0));
        }
        r.timeouts += 1;
        r.backoff += 1;
        r.cwnd.on_timeout();
        r.recovery_until = Some(r.snd_nxt);
        Self::resend(g, now);
    }

    /// Resend the segments the client knows lost, as many as its window lets out (at least
    /// one), on its core and the reverse link, from `now`; a timer covers the rest.
    fn resend(g: &mut impl Ctx<Self>, now: Time) {
        let ovh = g.profile().nic.wire_overhead_bytes.value as u32;
        let mut first = true;
        while !g.app().lost.is_empty() && (first || g.app().cwnd_open()) {
            first = false;
            let r = g.app();
            let bytes = r.lost.pop_front().expect("a lost segment");
            r.lost_bytes -= u64::from(bytes);
            r.sent_life += 1;
            r.retransmits += 1;
            // A resent segment is an skb of its own (`tcp_retransmit_skb`), not written again.
            let cost = round_ns(r.skb_ns).max(1);
            let at = g.client_cpu(now, cost);
            let pkt = RxPkt::new(bytes, g.app().ts_recent, at, 0, Ctl::None);
            g.to_host(at, pkt, bytes + TCP_IP_HDR + ovh);
        }
        let r = g.app();
        if !r.lost.is_empty() && !r.rto_armed {
            r.rto_armed = true;
            let at = now + r.rto_ns();
            g.client_at(at, ClientEv::new(RTO, 0));
        }
    }

    /// A pure ACK (softirq) or window update (application) went through TCP/IP and virtio-net.
    fn ack_xmit_done(g: &mut impl Ctx<Self>, v: u32) {
        let now = g.now();
        let r = g.app();
        r.adv_edge = r.edge_now();
        let ts = r.buf.tsval(now);
        r.edges.push_back((r.adv_edge, ts, r.rcv_nxt));
        r.adv_sum += r.adv_edge - r.rcv_nxt;
        r.acks += 1;
        r.acks_life += 1;
        g.post_tx(v, Buf::new(0, now));
    }

    /// `recv()` returned `bytes`; a read that opened the window enough sends a window update.
    fn read_done(g: &mut impl Ctx<Self>, v: u32, bytes: u32) {
        let now = g.now();
        let r = g.app();
        let n = (bytes as u64).min(r.queued());
        r.read += n;
        r.read_bytes += n;
        // `tcp_recvmsg` adjusts the buffer after its copy (`tcp_rcv_space_adjust`).
        r.buf.copied(now, r.read);
        let (adv, now_wnd) = (r.adv_edge.saturating_sub(r.rcv_nxt), r.buf.window().saturating_sub(r.queued()));
        if now_wnd >= 2 * adv && now_wnd >= r.mss as u64 && r.edge_now() > r.adv_edge {
            let c = r.seg_cost;
            return g.run_step(v, ack_step(false), c);
        }
        g.enter(v);
    }
}

impl App for TcpReceiver {
    /// The receiving application's next step: read, or block in `recv()`.
    fn next(g: &mut impl Ctx<Self>, v: u32) {
        let r = g.app();
        let n = r.queued().min(r.msg as u64) as u32;
        if n == 0 {
            return g.idle(v, None);
        }
        let c = round_ns(r.read_ns + r.byte_ns * n as f64);
        g.run_step(v, Step::new(TCP_READ, n, 0), c);
    }
    fn step_done(g: &mut impl Ctx<Self>, v: u32, s: Step) {
        match s.kind {
            ACK_XMIT => Self::ack_xmit_done(g, v),
            _ => Self::read_done(g, v, s.a),
        }
    }
    fn step_name(s: Step) -> &'static str {
        if s.kind == ACK_XMIT { "ack xmit" } else { "tcp read" }
    }
    /// NAPI received a segment (or a GRO skb) on `v`: queue it; ACK every `delack_segments`. Returns whether
    /// an ACK task was started (else the caller re-enters).
    fn deliver(g: &mut impl Ctx<Self>, v: u32, pkt: RxPkt) -> bool {
        let delack = g.profile().client.delack_segments.value as u32;
        let now = g.now();
        let r = g.app();
        r.rcv_nxt += pkt.bytes as u64;
        r.buf.received(now, pkt.ack);
        // A GRO skb of several segments is ACKed at once (`__tcp_ack_snd_check`: more than
        // one full-sized segment received).
        r.segments += u64::from(pkt.segs);
        r.unacked += u32::from(pkt.segs);
        if r.unacked < delack {
            return false;
        }
        r.unacked = 0;
        let c = r.seg_cost;
        g.run_step(v, ack_step(true), c);
        true
    }
    /// A guest ACK reached the client: it learns the right edge and resumes if it waited.
    fn at_client(g: &mut impl Ctx<Self>, _b: Buf) {
        let rx_ns = round_ns(g.profile().client.rx_packet_ns.value);
        let at = g.client_cpu(g.now(), rx_ns);
        let now = g.now();
        let r = g.app();
        let (edge, ts, acked) = r.edges.pop_front().expect("ACK at the client without a sent ACK");
        // tcp_is_cwnd_limited (as read at 3.6): what was in flight before this ACK filled the
        // window to within tcp_max_burst's 3 segments; only then does the window grow.
        let limited = r.pipe() + 3 >= u64::from(r.cwnd.cwnd);
        r.snd_edge = r.snd_edge.max(edge);
        r.ts_recent = ts;
        let window = edge.saturating_sub(acked);
        if window > r.max_window {
            // A larger window raises the size goal (`tcp_bound_to_half_wnd`).
            r.max_window = window;
            let tso = r.tso;
            let goal = SizeGoal::new(g.profile(), tso, window);
            g.app().goal = goal;
        }
        let r = g.app();
        let newly = acked.saturating_sub(r.delivered);
        r.delivered = r.delivered.max(acked);
        if newly > 0 {
            // An ACK of new data is an RTT sample (timestamps): the backoff is over.
            r.progress_at = now;
            r.backoff = 0;
        }
        if r.recovery_until.is_some_and(|high| r.delivered >= high) {
            r.recovery_until = None;
        }
        if !r.lost.is_empty() {
            // SACK shows the hole: fast retransmit, and the window is cut once per recovery.
            if r.recovery_until.is_none() {
                r.cwnd.on_loss();
                r.recovery_until = Some(r.snd_nxt);
            }
        } else if r.recovery_until.is_none() {
            let segs = newly.div_ceil(r.mss as u64) as u32;
            r.cwnd.on_ack(now, segs, limited);
        }
        r.cwnd_sum += u64::from(r.cwnd.cwnd);
        r.cwnd_acks += 1;
        if !r.lost.is_empty() {
            Self::resend(g, at);
        }
        let r = g.app();
        if r.blocked && r.room() >= u64::from(r.mss) {
            g.client_at(at, ClientEv::new(SEND, 0));
        }
    }
    fn client_event(g: &mut impl Ctx<Self>, e: ClientEv) {
        match e.kind {
            SEND => Self::client_send(g),
            _ => Self::rto(g),
        }
    }
    /// Only data segments are resent; a lost pure ACK is covered by the next one.
    fn tap_drop(g: &mut impl Ctx<Self>, pkt: RxPkt) {
        if pkt.bytes > 0 {
            Self::lost(g, pkt)
        }
    }
    fn start(g: &mut impl Ctx<Self>) {
        g.client_at(0, ClientEv::new(SEND, 0));
    }

    fn sent_life(&self) -> u64 {
        self.acks_life
    }
    fn reset_metrics(&mut self) {
        self.acks = 0;
        self.segments = 0;
        self.read_bytes = 0;
        self.adv_sum = 0;
        self.retransmits = 0;
        self.timeouts = 0;
        self.cwnd_sum = 0;
        self.cwnd_acks = 0;
    }
    fn describe(&self) -> String {
        format!("{self:?}")
    }
    fn progress(&self) -> u64 {
        self.read_life()
    }
    fn retransmission_armed(&self) -> bool {
        self.rto_armed
    }
    /// Segments into the guest, bytes the application read; no per-packet latency. Segments
    /// dropped at the tap are resent, never lost: `loss_pct` is 0 and the resent ones are
    /// counted apart.
    fn measure<'a>(&'a self, _d: DevView<'a>) -> Measure<'a> {
        let b = &self.buf;
        Measure {
            delivered: Some(self.segments),
            payload: Some(self.read_bytes),
            loss_pct: Some(0.0),
            tcp_rx: Some(TcpRxStats {
                windows: [b.first_window, b.max_window, b.window()],
                autotuned: b.tuned(),
                advertised: (self.adv_sum, self.acks),
                retransmits: self.retransmits,
                timeouts: self.timeouts,
                cwnd: (self.cwnd_sum, self.cwnd_acks, self.cwnd.cwnd),
            }),
            ..Default::default()
        }
    }
    /// Every segment the client sent reached the host or is on the reverse link (the guest
    /// sends no other traffic towards itself).
    fn ledger(&self, d: &DevLedger, l: &mut AppLedger) {
        l.tcp_rx_sent = self.sent_life;
        if self.sent_life > 0 {
            l.balances.push(Balance { what: "tcp client sent = arrived + on link", lhs: self.sent_life, rhs: d.rx_arrived + d.rx_on_link });
        }
    }
    fn receives_tcp_data(&self) -> bool {
        true
    }
    /// Data waits in the socket.
    fn ready(&self) -> bool {
        self.queued() > 0
    }
}
