//! TCP connection set-up and close for clients that open a connection per request (ab without
//! `-k`, ab's default; DESIGN §3.6). RFC 793's three-way handshake and FIN exchange, as the
//! two ends of `tcp_rr.rs` see them:
//!
//! ```text
//! client                         guest
//!   SYN  ───────────────────────▶  NAPI: request sock + child socket (tcp_conn_ns);
//!                                  softirq sends the SYN-ACK (tcp_tx_segment_ns)
//!   ◀─────────────────────── SYN-ACK
//!   ACK, request ───────────────▶  server: read, work, write the response
//!   ◀──────────────── response segments, then close(): FIN
//!   (EOF: transaction done) FIN ▶  NAPI: softirq ACKs the FIN (TIME_WAIT)
//!   ◀─────────────────────── ACK
//!   next connection: SYN …
//! ```
//!
//! The transaction ends when the client reads EOF (ab without keep-alive reads until the
//! server closes). Guest control segments are pure TX segments of zero payload, received by
//! the client core at `client.rx_packet_ns` like any segment.
//!
//! A part of the [`TcpServer`] module (`tcp_rr.rs`): the handlers of its connections' control
//! segments at both ends, which its `App` handlers call.

use crate::model::hw::rxq::{Ctl, RxPkt};
use crate::model::hw::virtq::Buf;
use crate::model::workload::app::{ClientEv, Step};
use crate::model::workload::ctx::Ctx;
use super::{ctl_code, TcpServer, CTL_XMIT, REQ};
use crate::engine::Time;

/// The client sends a control packet (SYN, FIN, or a pure ACK) on `conn` at `at`.
pub(super) fn client_send(g: &mut impl Ctx<TcpServer>, at: Time, conn: u32, ctl: Ctl) {
    TcpServer::client_packet(g, at, RxPkt::new(0, 0, at, conn, ctl));
}

/// NAPI received a SYN or a FIN for the server on `v`: the kernel answers from softirq
/// (SYN-ACK, or the ACK of the FIN). Returns true: a task was started.
pub(super) fn guest_rx(g: &mut impl Ctx<TcpServer>, v: u32, pkt: RxPkt) -> bool {
    let c = g.app().seg_ns;
    let reply = if pkt.ctl == Ctl::Syn { Ctl::Syn } else { Ctl::None };
    g.run_step(v, Step::new(CTL_XMIT, pkt.conn, ctl_code(reply) as u64), c);
    true
}

/// A control segment (SYN-ACK, FIN, or the ACK of the client's FIN) went through TCP/IP and
/// virtio-net.
pub(super) fn guest_sent(g: &mut impl Ctx<TcpServer>, v: u32, conn: u32, ctl: Ctl) {
    let now = g.now();
    let local = v - g.vcpu(0);
    let s = g.app();
    if ctl == Ctl::Fin {
        // close() done: the worker is free for the next request.
        let w = s.workers.running(local);
        s.workers.finish(w);
    }
    s.segments += 1;
    s.segments_life += 1;
    s.in_path.push_back((conn, ctl));
    g.post_tx(v, Buf::new(0, now));
}

/// A guest control segment reached the client core (at `at`, after its receive cost).
pub(super) fn client_rx(g: &mut impl Ctx<TcpServer>, at: Time, conn: u32, ctl: Ctl) {
    match ctl {
        Ctl::Syn => {
            // connect() returns: the handshake's ACK, then the request.
            client_send(g, at, conn, Ctl::None);
            TcpServer::client_send_request(g, at, conn);
        }
        Ctl::Fin if g.app().open_loop.is_some() => {
            // httperf: EOF ends the connection (a reply unless it was given up); close().
            let window_start = g.window_start();
            let s = g.app();
            if super::httperf::closed(s, conn) {
                s.complete(conn, at, window_start);
                s.next_pending -= 1;
            }
            client_send(g, at, conn, Ctl::Fin);
        }
        Ctl::Fin => {
            // EOF: the transaction is done; close() sends our FIN, then ab connects again.
            let window_start = g.window_start();
            let next = g.app().complete(conn, at, window_start);
            client_send(g, at, conn, Ctl::Fin);
            g.client_at(next, ClientEv::new(REQ, conn));
        }
        // The ACK of our FIN: the connection is closed.
        Ctl::None => {}
    }
}
