//! netperf UDP_STREAM from the guest: one datagram per `sendto()`, open loop at a rate or as
//! fast as the vCPU and the ring allow; the application blocks (the driver stops the queue)
//! while the TX ring is full.

use crate::model::hw::virtq::Buf;
use crate::model::workload::app::{pct, App, DevView, Measure, Step};
use crate::model::workload::ctx::Ctx;
use crate::engine::{Rng, Time, NS_PER_S, round_ns};
use crate::profile::Profile;

/// Its one step: the send path of one datagram.
const SEND: u8 = 0;

/// netperf UDP_STREAM sender: one datagram per send, open loop at a rate or as fast as the
/// vCPU and the ring allow. Blocks (the driver stops the queue) when the TX ring is full.
#[derive(Debug)]
pub struct UdpSender {
    bytes: u32,
    /// ns between sends, if rate-limited.
    interval: Option<f64>,
    /// When the next send is due (rate-limited).
    next_at: f64,
    /// The driver stopped the queue: waiting for a TX interrupt.
    pub stopped: bool,
    /// Guest cost of one send.
    cost: Time,
    /// Datagrams handed to the driver (window).
    pub sent: u64,
    /// Datagrams handed to the driver (lifetime, for conservation).
    pub sent_life: u64,
    /// Per-component random stream (first-send phase).
    _rng: Rng,
}

impl UdpSender {
    pub(crate) fn new(message_bytes: u32, rate_pps: Option<f64>, p: &Profile, seed: u64, vm_name: &str) -> Self {
        let mut rng = Rng::for_component(seed, &format!("vm:{vm_name}/workload"));
        let interval = rate_pps.map(|r| NS_PER_S as f64 / r);
        // Random phase so that several VMs at the same rate do not send in lockstep.
        let next_at = interval.map_or(0.0, |i| rng.uniform() * i);
        let cost = p.guest.udp_tx_packet_ns.value + p.guest.udp_tx_byte_ns.value * message_bytes as f64;
        UdpSender {
            bytes: message_bytes,
            interval,
            next_at,
            stopped: false,
            cost: round_ns(cost),
            sent: 0,
            sent_life: 0,
            _rng: rng,
        }
    }
}

impl App for UdpSender {
    fn next(g: &mut impl Ctx<Self>, v: u32) {
        let s = g.app();
        let (stopped, next_at, cost) = (s.stopped, s.next_at, s.cost);
        g.paced_send(v, stopped, next_at, Step::new(SEND, 0, 0), cost);
    }

    /// One datagram went through the guest stack: post it, kick if allowed, stop if full.
    fn step_done(g: &mut impl Ctx<Self>, v: u32, _s: Step) {
        let now = g.now();
        let s = g.app();
        s.sent += 1;
        s.sent_life += 1;
        if let Some(i) = s.interval {
            s.next_at += i;
        }
        let b = Buf::new(s.bytes, now);
        g.post_tx(v, b);
    }

    fn step_name(_s: Step) -> &'static str {
        "udp send"
    }

    fn sent_life(&self) -> u64 {
        self.sent_life
    }
    fn set_stopped(&mut self, stopped: bool) {
        self.stopped = stopped;
    }
    fn reset_metrics(&mut self) {
        self.sent = 0;
    }
    fn describe(&self) -> String {
        format!("udp stopped {}", self.stopped)
    }

    /// What reached the client; send → last bit on the wire. The guest's TX path stops its
    /// queue instead of dropping; datagrams are dropped only at the host port's full queue.
    fn measure<'a>(&'a self, d: DevView<'a>) -> Measure<'a> {
        Measure {
            delivered: Some(d.wire.delivered),
            payload: Some(d.wire.payload_bytes),
            latency: Some(&d.wire.latency),
            loss_pct: pct(d.wire.dropped, self.sent),
            ops: None,
            by_run_class: None,
            ..Default::default()
        }
    }
}
