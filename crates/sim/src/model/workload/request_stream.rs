//! The KVM testbed's guest as a workload (`request_stream`; the simulator twin of
//! `crates/kvm/guest/guest.c`'s stream and closed loops, docs/kvm.md): no network stack — the
//! application's loop on vCPU 0 writes requests straight into the TX virtqueue and spins.
//!
//! Each loop turn publishes every request that is due (open loop: one each `1/rate`, at most 64
//! a turn, as the guest's loop does; closed loop: up to `window` outstanding) with one
//! `avail->idx` store and kicks only when `vring_need_event` says the device asked for it
//! (`notify.rs`, the event-index rule the testbed's guest and Linux use). The back end serves
//! each request as a vhost TX item; its used entry is the completion. The guest consumes
//! completions by polling (`consume = "poll"`: the spinning loop sees a used entry at once, its
//! used_event parked so the device never interrupts) or on interrupts (`consume = "irq"`:
//! used_event at its next completion; the NetTx vector's handler lets the loop reap, then it
//! re-arms). Latency = request published → completion reaped by the loop. Between turns the
//! loop spins (a `SPIN` step, cut short by a completion it must react to); it never halts.
//! Guest cost per request: `guest.request_ns` (build the descriptor, publish, reap, record).

use crate::model::hw::virtq::Buf;
use crate::model::workload::app::{pct, App, DevView, Measure, Step};
use crate::model::workload::ctx::Ctx;
use crate::engine::{Time, NS_PER_S, round_ns};
use crate::metrics::Histogram;
use crate::profile::Profile;
use std::collections::VecDeque;

/// Steps: publish `a` requests; spin until the next request is due.
const SUBMIT: u8 = 0;
const SPIN: u8 = 1;

/// The guest loop publishes at most this many due requests a turn (guest.c's stream loop).
const BATCH_MAX: u32 = 64;
/// Bytes per request buffer (guest.c's BUFFER_SIZE).
pub const REQUEST_BYTES: u32 = 64;
/// A closed loop with nothing to do spins in chunks of this much (a modelling granularity; any
/// completion cuts the chunk short).
const SPIN_CHUNK_NS: Time = 1_000_000;

/// The testbed guest's request stream on one device.
#[derive(Debug)]
pub struct RequestStream {
    /// ns between requests (open loop), or None (closed loop).
    period: Option<f64>,
    /// Requests kept outstanding (closed loop).
    window: u32,
    /// Completions arrive by interrupt (else the loop polls the used ring).
    consume_irq: bool,
    /// Guest ns per request.
    request_ns: f64,
    /// When the next request is due (open loop, ns).
    next_due: f64,
    /// Requests published and not yet reaped.
    outstanding: u32,
    /// Completions the device has written and the loop has not reaped: when each was published.
    used: VecDeque<Time>,
    /// An interrupt came since the loop last reaped (irq mode).
    irq_seen: bool,
    /// used_event asks for an interrupt at the next completion (irq mode).
    armed: bool,
    /// The driver stopped the queue (ring full; only a full ring stops it).
    stopped: bool,
    /// Requests published (window / lifetime), reaped (window / lifetime), not published for
    /// want of a free descriptor (window).
    pub submitted: u64,
    submitted_life: u64,
    completed: u64,
    completed_life: u64,
    dropped: u64,
    /// Publish → reap (ns).
    latency: Histogram,
}

impl RequestStream {
    /// `rate` requests/s (open loop) or `window` outstanding (closed loop).
    pub fn new(rate: Option<f64>, window: u32, consume_irq: bool, p: &Profile) -> Self {
        RequestStream {
            period: rate.map(|r| NS_PER_S as f64 / r),
            window,
            consume_irq,
            request_ns: p.guest.request_ns.value,
            next_due: 0.0,
            outstanding: 0,
            used: VecDeque::new(),
            irq_seen: false,
            armed: false,
            stopped: false,
            submitted: 0,
            submitted_life: 0,
            completed: 0,
            completed_life: 0,
            dropped: 0,
            latency: Histogram::new(),
        }
    }

    /// Reap every completion the loop may see now: all of them when polling; in irq mode all
    /// of them once an interrupt came (the guest's NAPI-like loop: reap, re-enable, re-check).
    /// Returns whether the irq-mode loop must (re-)arm used_event: after a reap, and at its
    /// start (guest.c writes used_event = 0: "interrupt at the first completion").
    fn reap(&mut self, now: Time, window_start: Time) -> bool {
        if self.consume_irq && !self.irq_seen {
            return self.consume_irq && !std::mem::replace(&mut self.armed, true);
        }
        self.irq_seen = false;
        while let Some(born) = self.used.pop_front() {
            if born >= window_start {
                self.latency.record(now - born);
            }
            self.completed += 1;
            self.completed_life += 1;
            self.outstanding -= 1;
        }
        self.consume_irq
    }

    /// Requests to publish now, given `free` descriptors.
    fn due(&mut self, now: Time, free: u32) -> u32 {
        match self.period {
            Some(period) => {
                let mut n = 0;
                while now as f64 >= self.next_due && n < BATCH_MAX {
                    self.next_due += period;
                    n += 1;
                }
                if now as f64 >= self.next_due {
                    // Fell far behind: skip (guest.c resets its clock).
                    self.next_due = now as f64 + period;
                }
                let published = n.min(free);
                self.dropped += u64::from(n - published);
                published
            }
            None => (self.window - self.outstanding).min(free),
        }
    }
}

impl App for RequestStream {
    /// Reap, publish what is due, else spin until it is.
    fn next(g: &mut impl Ctx<Self>, v: u32) {
        let (now, window_start) = (g.now(), g.window_start());
        let free = g.txq().free();
        if g.app().reap(now, window_start) {
            g.txq().want_interrupt();
        }
        let s = g.app();
        let n = if s.stopped { 0 } else { s.due(now, free) };
        if n > 0 {
            let cost = round_ns(s.request_ns * f64::from(n)).max(1);
            return g.run_step(v, Step::new(SUBMIT, n, 0), cost);
        }
        let until = match s.period {
            Some(_) if !s.stopped => (round_ns(s.next_due).saturating_sub(now)).clamp(1, SPIN_CHUNK_NS),
            _ => SPIN_CHUNK_NS,
        };
        g.run_step(v, Step::new(SPIN, 0, 0), until)
    }

    fn step_done(g: &mut impl Ctx<Self>, v: u32, s: Step) {
        if s.kind == SPIN {
            return g.enter(v);
        }
        let now = g.now();
        let st = g.app();
        st.submitted += u64::from(s.a);
        st.submitted_life += u64::from(s.a);
        st.outstanding += s.a;
        let txq = g.txq();
        for _ in 0..s.a {
            txq.add(Buf::new(REQUEST_BYTES, now));
        }
        if txq.free() == 0 {
            txq.want_interrupt();
            g.set_tx_stopped(true);
        }
        g.notify_tx(v)
    }

    fn step_name(s: Step) -> &'static str {
        if s.kind == SUBMIT { "publish requests" } else { "spin" }
    }

    /// The device used a request: the polling loop sees it at once (its spin step ends, running
    /// or cut short and saved); an irq-mode loop waits for the interrupt.
    fn tx_used(g: &mut impl Ctx<Self>, b: Buf) {
        let s = g.app();
        s.used.push_back(b.born);
        if !s.consume_irq {
            let v = g.vcpu(0);
            g.cut_step(v, SPIN);
        }
    }

    /// The TX interrupt's handler ran: the loop reaps at its next turn (and re-arms).
    fn tx_interrupt(&mut self, _local: u32) {
        self.irq_seen = true;
        self.armed = false;
    }

    fn sent_life(&self) -> u64 {
        self.submitted_life
    }
    fn set_stopped(&mut self, stopped: bool) {
        self.stopped = stopped;
    }
    fn reset_metrics(&mut self) {
        self.submitted = 0;
        self.completed = 0;
        self.dropped = 0;
        self.latency.clear();
    }
    fn describe(&self) -> String {
        format!(
            "requests published {} reaped {} outstanding {} used-unreaped {} stopped {}",
            self.submitted_life, self.completed_life, self.outstanding, self.used.len(), self.stopped
        )
    }
    fn progress(&self) -> u64 {
        self.completed_life
    }

    /// Completions reaped, publish → reap latency, requests not published (no descriptor).
    fn measure<'a>(&'a self, _d: DevView<'a>) -> Measure<'a> {
        Measure {
            delivered: Some(self.completed),
            payload: Some(self.completed * u64::from(REQUEST_BYTES)),
            latency: Some(&self.latency),
            loss_pct: pct(self.dropped, self.submitted + self.dropped),
            ops: Some(self.completed),
            by_run_class: None,
            ..Default::default()
        }
    }
}
