//! The remote peer of a VM's flow on the client machine (DESIGN §3.2): the flow's client core
//! (shared with other VMs' flows when `client.cores` < VMs; `Host::client_cores`) receives each
//! segment in FIFO order, and a TCP receiver that sends a delayed ACK for every `delack_segments` segments
//! (RFC 1122 §4.2.3.2) or when the delayed-ACK timer expires. ACKs travel back on the reverse
//! link direction to the host NIC.
//!
//! The client's NIC throttles its receive interrupts (`client.rx_itr_ns`, `nic_itr.rs`): frames
//! that arrive within the gap wait for the next interrupt and are received by one NAPI poll, in
//! which GRO merges a flow's segments into one — so the TCP receiver decides on its ACK once per
//! batch (`Client::end_batch`), and a batch of two or more full segments is ACKed by one ACK
//! (Linux `__tcp_ack_snd_check`: more than one full frame unacknowledged).

use crate::model::hw::nic_itr::RxItr;
use crate::model::hw::rxq::RxPkt;
use crate::model::hw::virtq::Buf;
use crate::model::hw::wire::Link;
use crate::engine::{Fired, Time, Timer, round_ns};
use crate::profile::Profile;
use std::collections::VecDeque;

/// What the receiver does after a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckAction {
    /// Nothing yet.
    None,
    /// Send a cumulative ACK at the given time.
    Ack(Time, u64),
    /// Schedule the delayed-ACK timer's event at this time (`delack_fired` then).
    Arm(Time),
}

/// One client socket's frames handed to the link and not yet through it: what its send buffer
/// (a UDP socket's `SO_SNDBUF`) or TCP small queues (`tcp_limit_output_bytes`) count, per
/// socket, so that one flow's backlog does not block another's sender.
#[derive(Debug, Default)]
pub struct SockBacklog {
    /// When each frame is through, and its wire bytes; oldest first (the link is FIFO).
    frames: VecDeque<(Time, u32)>,
    bytes: u64,
}

impl SockBacklog {
    /// A frame of `wire_bytes` the socket handed to the link is through at `through`.
    pub fn add(&mut self, through: Time, wire_bytes: u32) {
        self.frames.push_back((through, wire_bytes));
        self.bytes += u64::from(wire_bytes);
    }

    /// The earliest time from `now` at which at most `limit` of its bytes still wait: `now`
    /// if already so, else when enough of its oldest frames are through (the socket's sender
    /// blocks until then: `sock_alloc_send_pskb`, `tcp_small_queue_check`).
    pub fn below(&mut self, now: Time, limit: u64) -> Time {
        while let Some(&(t, b)) = self.frames.front() {
            if t > now {
                break;
            }
            self.frames.pop_front();
            self.bytes -= u64::from(b);
        }
        let mut excess = self.bytes.saturating_sub(limit);
        for &(t, b) in &self.frames {
            if excess <= u64::from(b) {
                return if excess == 0 { now } else { t };
            }
            excess -= u64::from(b);
        }
        now
    }
}

/// The TCP receiver of one of the client's connections (one per netperf thread).
#[derive(Debug, Default)]
struct FlowRx {
    rcv_nxt: u64,
    unacked: u32,
    /// The delayed-ACK timer (one event in the queue at most, however often it is re-armed).
    delack: Timer,
}

/// The client and its TCP receivers.
#[derive(Debug)]
pub struct Client {
    rx_ns: Time,
    delack_n: u32,
    delack_timeout: Time,
    /// Per connection of the VM's TCP stream (one unless it has several netperf threads).
    flows: Vec<FlowRx>,
    /// This client's packets on the shared reverse link (client → host), in order.
    rev: VecDeque<RxPkt>,
    /// Client CPU per packet sent (open-loop source), ns.
    pub tx_ns: Time,
    /// ACKs sent (window).
    pub acks: u64,
    /// The client NIC's receive interrupt throttle for this flow's queue.
    pub nic: RxItr,
    /// Frames that reached the client's NIC and wait for its next interrupt, oldest first.
    pub held: VecDeque<Buf>,
    /// A NAPI poll is receiving a batch: ACK decisions wait for its end.
    in_batch: bool,
    /// When the client's core finished the batch's latest segment.
    batch_done: Time,
}

impl Client {
    /// A client with the profile's CPU and TCP parameters.
    pub fn new(p: &Profile) -> Self {
        Client {
            rx_ns: round_ns(p.client.rx_packet_ns.value),
            delack_n: p.client.delack_segments.value as u32,
            delack_timeout: round_ns(p.client.delack_timeout_ns.value),
            flows: vec![FlowRx::default()],
            rev: VecDeque::new(),
            tx_ns: round_ns(p.client.rx_packet_ns.value),
            acks: 0,
            nic: RxItr::for_nic(p.client.nic_itr.value, p.client.rx_itr_ns.value, p.nic.wire_overhead_bytes.value as u32),
            held: VecDeque::new(),
            in_batch: false,
            batch_done: 0,
        }
    }

    /// Run `ns` of work on the client machine's `core` (FIFO: when that core is free) from
    /// `now`; returns when it is done.
    pub fn cpu(&mut self, now: Time, ns: Time, core: &mut Time) -> Time {
        *core = (*core).max(now) + ns;
        *core
    }

    /// Connections of the TCP stream (`n` netperf threads), each with its own receiver.
    pub fn set_flows(&mut self, n: usize) {
        self.flows.resize_with(n.max(1), FlowRx::default);
    }

    /// Connections whose receivers the client keeps.
    pub fn flows(&self) -> usize {
        self.flows.len()
    }

    /// `segs` segments (a TSO skb's frames, back to back) of `bytes` of connection `flow`
    /// arrived at `now`; the client's `core` receives each frame.
    pub fn receive(&mut self, now: Time, bytes: u32, segs: u16, flow: u16, core: &mut Time) -> AckAction {
        let done = self.cpu(now, self.rx_ns * Time::from(segs), core);
        let f = &mut self.flows[flow as usize];
        f.rcv_nxt += bytes as u64;
        f.unacked += u32::from(segs);
        if self.in_batch {
            self.batch_done = done;
            return AckAction::None;
        }
        self.ack_check(flow, done)
    }

    /// A NAPI poll starts receiving a batch of frames (GRO on): hold ACK decisions.
    pub fn begin_batch(&mut self) {
        self.in_batch = true;
    }

    /// The batch is received: returns whether one was open (then [`Client::batch_ack`] for
    /// each connection).
    pub fn end_batch(&mut self) -> bool {
        std::mem::take(&mut self.in_batch)
    }

    /// After a batch: TCP sees connection `flow`'s GRO'd segments at once and decides on one
    /// ACK.
    pub fn batch_ack(&mut self, flow: u16) -> AckAction {
        if self.flows[flow as usize].unacked == 0 {
            return AckAction::None;
        }
        self.ack_check(flow, self.batch_done)
    }

    fn ack_check(&mut self, flow: u16, done: Time) -> AckAction {
        let (n, timeout) = (self.delack_n, self.delack_timeout);
        let f = &mut self.flows[flow as usize];
        if f.unacked >= n {
            return self.ack(flow, done);
        }
        if !f.delack.armed() {
            if let Some(at) = f.delack.arm(done + timeout) {
                return AckAction::Arm(at);
            }
        }
        AckAction::None
    }

    /// Connection `flow`'s delayed-ACK timer event fired at `now`: ACK if the timer expired,
    /// re-schedule if it was re-armed for later, nothing if it was cancelled.
    pub fn delack_fired(&mut self, now: Time, flow: u16) -> AckAction {
        let f = &mut self.flows[flow as usize];
        match f.delack.fired(now) {
            Fired::Expired if f.unacked > 0 => self.ack(flow, now),
            Fired::Reschedule(at) => AckAction::Arm(at),
            _ => AckAction::None,
        }
    }

    fn ack(&mut self, flow: u16, at: Time) -> AckAction {
        let f = &mut self.flows[flow as usize];
        f.unacked = 0;
        f.delack.cancel();
        self.acks += 1;
        AckAction::Ack(at, f.rcv_nxt)
    }

    /// Put a packet of `wire_bytes` on the shared reverse `link` at `at`; returns when it
    /// reaches the host NIC. The link is FIFO, so this client's packets arrive in order
    /// ([`Client::arrive_at_host`]).
    pub fn send_to_host(&mut self, at: Time, pkt: RxPkt, wire_bytes: u32, link: &mut Link) -> Time {
        let done = link.serialize(at, wire_bytes);
        self.rev.push_back(pkt);
        done
    }

    /// The packet this client put on the reverse link last (the one just sent).
    pub fn last_sent(&self) -> Option<&RxPkt> {
        self.rev.back()
    }

    /// The oldest packet on the reverse link reached the host.
    pub fn arrive_at_host(&mut self) -> RxPkt {
        self.rev.pop_front().expect("host arrival without a packet on the reverse link")
    }

    /// Packets on the reverse link.
    pub fn rev_in_flight(&self) -> usize {
        self.rev.len()
    }

    pub(crate) fn reset_metrics(&mut self) {
        self.acks = 0;
        self.nic.irqs = 0;
    }
}
