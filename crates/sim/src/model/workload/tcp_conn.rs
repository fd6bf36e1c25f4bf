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

use crate::model::hw::rxq::{Ctl, RxPkt};
use crate::model::workload::tcp_rr::{ctl_code, TcpServer, CTL_XMIT, REQ};
use crate::model::hw::virtq::Buf;
use crate::model::workload::{App, ClientEv, Step};
use crate::model::{Ev, Host};
use crate::engine::{EventQueue, Time};

impl Host {
    /// The client sends a control packet (SYN, or FIN) on `conn` at `at`.
    pub(crate) fn client_ctl(&mut self, at: Time, dev: u32, conn: u32, ctl: Ctl, q: &mut EventQueue<Ev>) {
        self.client_packet(at, dev, RxPkt { bytes: 0, ack: 0, born: at, conn, ctl }, q);
    }

    /// NAPI received a SYN or a FIN for the server on `v`: the kernel answers from softirq
    /// (SYN-ACK, or the ACK of the FIN). Returns true: a task was started.
    pub(crate) fn server_ctl_rx(&mut self, now: Time, v: u32, pkt: RxPkt, q: &mut EventQueue<Ev>) -> bool {
        let vm = self.vcpus[v as usize].vm as usize;
        let c = TcpServer::state(self, vm).seg_ns;
        let reply = if pkt.ctl == Ctl::Syn { Ctl::Syn } else { Ctl::None };
        self.run_step(now, v, Step::new(CTL_XMIT, pkt.conn, ctl_code(reply) as u64), c, q);
        true
    }

    /// A control segment (SYN-ACK, FIN, or the ACK of the client's FIN) went through TCP/IP
    /// and virtio-net.
    pub(crate) fn ctl_xmit_done(&mut self, now: Time, v: u32, conn: u32, ctl: Ctl, q: &mut EventQueue<Ev>) {
        let vm = self.vcpus[v as usize].vm as usize;
        let local = v - self.vms[vm].vcpus[0];
        let s = TcpServer::state(self, vm);
        if ctl == Ctl::Fin {
            // close() done: the worker is free for the next request.
            let w = s.workers.running(local);
            s.workers.finish(w);
        }
        s.segments += 1;
        s.segments_life += 1;
        s.in_path.push_back((conn, ctl));
        self.post_tx(now, v, vm, Buf::new(0, now), q);
    }

    /// A guest control segment reached the client core (at `at`, after its receive cost).
    pub(crate) fn client_ctl_rx(&mut self, at: Time, dev: u32, conn: u32, ctl: Ctl, q: &mut EventQueue<Ev>) {
        let vm = self.devs[dev as usize].vm as usize;
        match ctl {
            Ctl::Syn => {
                // connect() returns: the handshake's ACK, then the request.
                self.client_ctl(at, dev, conn, Ctl::None, q);
                self.client_send_request(at, dev, conn, q);
            }
            Ctl::Fin => {
                // EOF: the transaction is done; close() sends our FIN, then ab connects again.
                let next = TcpServer::state(self, vm).complete(conn, at);
                self.client_ctl(at, dev, conn, Ctl::Fin, q);
                q.at(next, ClientEv::new(REQ, conn).on(dev));
            }
            // The ACK of our FIN: the connection is closed.
            Ctl::None => {}
        }
    }
}
