//! The httperf-like open-loop client (`kind = "httperf"`; hBalance §6.1.3, httperf 0.9's
//! `--rate`, `--num-calls=1`, `--timeout`). A part of [`TcpServer`] (`tcp_rr.rs`).
//!
//! httperf creates a new connection every 1/rate seconds (fixed inter-arrival times, its
//! default `--period` is deterministic), whatever became of the earlier ones: the offered load
//! does not back off when the server slows (an open loop). Each connection sends one HTTP/1.0
//! GET and ends when the server closes it. A connection whose reply has not completed
//! `timeout` after its SYN is given up and counted an error (httperf's `client-timo`); the
//! server does not learn of it (as with webbench, `timeout.rs`) and still serves what reached
//! it, so an overloaded server keeps paying for replies nobody reads.
//!
//! Connections are slots of the server's connection table, taken from a free list when one
//! opens and returned when its server's FIN reaches the client (for a given-up connection
//! too: a slot is reused only once both ends are done with it), or when a given-up
//! connection's SYN was lost and its retransmission is due (the server never saw it). The
//! table holds rate × (time-out + 1 s) connections, at most [`MAX_SLOTS`]: an arrival that
//! finds none free is an error too (httperf's `fd-unavail`, its descriptors exhausted).
//! Everything is allocated at the start: nothing per connection but the timer's event.

use super::{TcpServer, OL_ARRIVE, OL_TIMEOUT};
use crate::engine::{Fired, Time, Timer, NS_PER_S};
use crate::model::workload::app::ClientEv;
use crate::model::workload::ctx::Ctx;

/// The most connections in flight: httperf's default descriptor limit is the shell's
/// (`ulimit -n`, often 1024); a harness raises it, and this bounds the table's memory.
pub(crate) const MAX_SLOTS: u32 = 65_536;

/// The open-loop client's state.
#[derive(Debug)]
pub(crate) struct OpenLoop {
    /// The fixed gap between two connections (ns, exact: 1/rate).
    gap: f64,
    /// When the next connection opens (ns, exact).
    next_at: f64,
    /// A reply's time-out (ns).
    limit: Time,
    /// Free slots (a stack).
    free: Vec<u32>,
    /// Per slot: its time-out timer, and whether it was given up.
    timers: Vec<Timer>,
    abandoned: Vec<bool>,
    /// Window counters: connections opened, replies, time-outs, arrivals without a slot.
    pub(crate) opened: u64,
    pub(crate) timeouts: u64,
    pub(crate) no_slot: u64,
    /// Lifetime: arrivals, connections opened, closed (slot returned), no slot.
    pub(crate) arrivals_life: u64,
    pub(crate) opened_life: u64,
    pub(crate) closed_life: u64,
    pub(crate) no_slot_life: u64,
}

impl OpenLoop {
    /// The table size for `rate` connections per second with `timeout_ms` time-outs.
    pub(crate) fn slots(rate: f64, timeout_ms: u32) -> u32 {
        let s = (rate * (f64::from(timeout_ms) / 1000.0 + 1.0)).ceil();
        (s as u32).clamp(1, MAX_SLOTS)
    }

    /// The client of `rate` connections per second over `slots` slots.
    pub(crate) fn new(rate: f64, timeout_ms: u32, slots: u32) -> Self {
        OpenLoop {
            gap: NS_PER_S as f64 / rate,
            next_at: 0.0,
            limit: Time::from(timeout_ms) * 1_000_000,
            free: (0..slots).rev().collect(),
            timers: vec![Timer::default(); slots as usize],
            abandoned: vec![false; slots as usize],
            opened: 0,
            timeouts: 0,
            no_slot: 0,
            arrivals_life: 0,
            opened_life: 0,
            closed_life: 0,
            no_slot_life: 0,
        }
    }

    /// Connections open (slots in use).
    pub(crate) fn in_use(&self) -> u64 {
        (self.timers.len() - self.free.len()) as u64
    }

    /// The window restarts.
    pub(crate) fn reset_metrics(&mut self) {
        self.opened = 0;
        self.timeouts = 0;
        self.no_slot = 0;
    }
}

/// The first connection opens at the run's start.
pub(super) fn start(g: &mut impl Ctx<TcpServer>) {
    g.client_at(0, ClientEv::new(OL_ARRIVE, 0));
}

/// A connection is due: take a slot and open it, and schedule the next one.
pub(super) fn arrive(g: &mut impl Ctx<TcpServer>) {
    let Some(o) = g.app().open_loop.as_mut() else { return };
    o.arrivals_life += 1;
    o.next_at += o.gap;
    let next = o.next_at.round() as Time;
    let slot = o.free.pop();
    match slot {
        Some(_) => {
            o.opened += 1;
            o.opened_life += 1;
        }
        None => {
            o.no_slot += 1;
            o.no_slot_life += 1;
        }
    }
    g.client_at(next, ClientEv::new(OL_ARRIVE, 0));
    if let Some(conn) = slot {
        let o = g.app().open_loop.as_mut().expect("checked above");
        o.abandoned[conn as usize] = false;
        TcpServer::client_request(g, conn);
    }
}

/// Connection `conn`'s SYN went out at `sent`: arm its time-out.
pub(super) fn arm(g: &mut impl Ctx<TcpServer>, conn: u32, sent: Time) {
    let Some(o) = g.app().open_loop.as_mut() else { return };
    let deadline = sent + o.limit;
    if let Some(at) = o.timers[conn as usize].arm(deadline) {
        g.client_at(at, ClientEv::new(OL_TIMEOUT, conn));
    }
}

/// Connection `conn`'s time-out event fired: give it up if its reply is still not complete.
pub(super) fn fired(g: &mut impl Ctx<TcpServer>, conn: u32) {
    let now = g.now();
    let Some(o) = g.app().open_loop.as_mut() else { return };
    match o.timers[conn as usize].fired(now) {
        Fired::Expired => {
            o.abandoned[conn as usize] = true;
            o.timeouts += 1;
        }
        Fired::Reschedule(at) => g.client_at(at, ClientEv::new(OL_TIMEOUT, conn)),
        Fired::Idle => {}
    }
}

/// The server's FIN on `conn` reached the client: the connection is done (a reply, unless it
/// was given up) and its slot free. Returns whether it was a reply.
pub(super) fn closed(s: &mut TcpServer, conn: u32) -> bool {
    let o = s.open_loop.as_mut().expect("an open-loop connection");
    o.timers[conn as usize].cancel();
    o.free.push(conn);
    o.closed_life += 1;
    !o.abandoned[conn as usize]
}

/// A given-up connection's SYN retransmission is due: the server never saw it, so the slot is
/// free now. Returns whether that was so (the caller then sends nothing).
pub(super) fn drop_lost_syn(s: &mut TcpServer, conn: u32) -> bool {
    let Some(o) = s.open_loop.as_mut() else { return false };
    if !o.abandoned[conn as usize] {
        return false;
    }
    o.free.push(conn);
    o.closed_life += 1;
    true
}
