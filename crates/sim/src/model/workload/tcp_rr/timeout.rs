//! The webbench-like client's time-outs (`kind = "webbench"`; CGR/AIR §5.3's "failed clients").
//! Each client arms a timer when it sends a request (its SYN: the request opens a connection of
//! its own) and disarms it when the response is complete (the server's FIN). A request not done
//! within `timeout_ms` is abandoned and its client counted failed, and a failed client stops:
//! what arrives for it later (a SYN-ACK, response segments, a FIN) is received by the client's
//! core and dropped, and it sends nothing more, not even retransmissions. Why stop rather than
//! retry: the paper counts failed *clients* (at most one per client), and a client that kept
//! retrying into an overloaded server would hide the overload it met.
//!
//! The server does not learn of the abandonment: a request already in its queue is still
//! served (an Apache worker writes into a socket the client has reset and finds out only then),
//! so an overloaded server keeps paying for work nobody waits for — the cost of the overload.
//!
//! Per client: one [`Timer`] (at most one event in the queue however often it is re-armed)
//! and a flag, allocated once at the start: nothing per request but the timer's event.

use crate::engine::{Fired, Time, Timer};
use crate::model::workload::app::ClientEv;
use crate::model::workload::ctx::Ctx;
use super::{TcpServer, TIMEOUT};

/// The clients' time-out state.
#[derive(Debug)]
pub(crate) struct Timeouts {
    /// A request's time-out (ns).
    limit: Time,
    /// Per client: its request's timer.
    timers: Vec<Timer>,
    /// Per client: it failed (and stopped).
    failed: Vec<bool>,
    /// Clients failed (lifetime: a failed client stays failed).
    pub(crate) failed_n: u64,
}

impl Timeouts {
    /// `clients` clients whose requests time out after `limit` ns.
    pub(crate) fn new(clients: u32, limit: Time) -> Self {
        Timeouts { limit, timers: vec![Timer::default(); clients as usize], failed: vec![false; clients as usize], failed_n: 0 }
    }

    /// Has client `conn` failed?
    pub(crate) fn failed(&self, conn: u32) -> bool {
        self.failed[conn as usize]
    }

    /// Clients that have not failed.
    pub(crate) fn live(&self) -> u64 {
        self.timers.len() as u64 - self.failed_n
    }
}

/// Client `conn` sent its request at `sent`: arm its time-out.
pub(super) fn arm(g: &mut impl Ctx<TcpServer>, conn: u32, sent: Time) {
    let Some(t) = g.app().timeouts.as_mut() else { return };
    let deadline = sent + t.limit;
    if let Some(at) = t.timers[conn as usize].arm(deadline) {
        g.client_at(at, ClientEv::new(TIMEOUT, conn));
    }
}

/// Client `conn`'s request completed: disarm its time-out.
pub(super) fn disarm(s: &mut TcpServer, conn: u32) {
    if let Some(t) = s.timeouts.as_mut() {
        t.timers[conn as usize].cancel();
    }
}

/// Client `conn`'s time-out event fired: fail the client if its request is still not done.
pub(super) fn fired(g: &mut impl Ctx<TcpServer>, conn: u32) {
    let now = g.now();
    let Some(t) = g.app().timeouts.as_mut() else { return };
    match t.timers[conn as usize].fired(now) {
        Fired::Expired => {
            t.failed[conn as usize] = true;
            t.failed_n += 1;
        }
        Fired::Reschedule(at) => g.client_at(at, ClientEv::new(TIMEOUT, conn)),
        Fired::Idle => {}
    }
}
