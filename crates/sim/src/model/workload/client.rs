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
use crate::engine::{Fired, Time, Timer, round_ns};
use crate::model::hw::client_port::{ClientPort, Handed};
use crate::profile::Profile;
use std::collections::VecDeque;

/// An event of a workload's client (its open-loop source, a request, a timer): the workload's
/// to interpret. Scheduled through [`Ctx::client_at`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientEv {
    /// The workload's event number.
    pub kind: u8,
    /// A small argument (a TCP control flag).
    pub x: u8,
    /// Arguments (a connection, a timer generation, bytes).
    pub a: u32,
    /// Second argument.
    pub b: u32,
}

impl ClientEv {
    /// Event `kind` with argument `a`.
    pub fn new(kind: u8, a: u32) -> Self {
        ClientEv { kind, x: 0, a, b: 0 }
    }
}

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
    /// This device's frames handed to the client's NIC and not yet through it (queued, held
    /// in the socket, or on the wire), in order, with their wire bytes.
    link: VecDeque<(RxPkt, u32)>,
    /// Wire bytes of `link`: what a socket's send buffer or TCP small queues count.
    link_bytes: u64,
    /// When its latest frame handed over is built (a device's frames leave in order).
    last_ready: Time,
    /// A sender waiting for its bytes on the link to fall to a limit, and its event then.
    wake: Option<(u64, ClientEv)>,
    /// Datagrams its NIC queue's full qdisc dropped (lifetime).
    pub qdisc_drops_life: u64,
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
            link: VecDeque::new(),
            link_bytes: 0,
            last_ready: 0,
            wake: None,
            qdisc_drops_life: 0,
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

    /// Hand `pkt` (`wire_bytes` on the wire, a TCP segment if `tcp`) to the client NIC's `port`
    /// at `now`, built by `at`: queued (with the port's event time to schedule, if any), or
    /// dropped by the queue's full qdisc (a datagram; counted).
    pub fn hand(&mut self, now: Time, at: Time, dev: u32, pkt: RxPkt, wire_bytes: u32, tcp: bool, port: &mut ClientPort) -> Handed {
        // A device's frames leave in the order they were handed over.
        self.last_ready = self.last_ready.max(at);
        let h = port.hand(now, dev, wire_bytes, tcp, self.last_ready);
        match h {
            Handed::Dropped => self.qdisc_drops_life += 1,
            Handed::Queued(_) => {
                self.link.push_back((pkt, wire_bytes));
                self.link_bytes += u64::from(wire_bytes);
            }
        }
        h
    }

    /// Its oldest frame is through the client's NIC: it leaves the link, with its wire bytes,
    /// and the sender's event if it waited for the link to drain to its limit.
    pub fn through(&mut self) -> (RxPkt, u32, Option<ClientEv>) {
        let (pkt, wire) = self.link.pop_front().expect("a frame through the client NIC without one handed over");
        self.link_bytes -= u64::from(wire);
        let woken = match self.wake {
            Some((limit, e)) if self.link_bytes <= limit => {
                self.wake = None;
                Some(e)
            }
            _ => None,
        };
        (pkt, wire, woken)
    }

    /// Wire bytes of this device's frames handed over and not yet through the NIC.
    pub fn link_bytes(&self) -> u64 {
        self.link_bytes
    }

    /// A sender blocks until at most `limit` of its bytes wait for the link (a UDP socket's
    /// `SO_SNDBUF`, `sock_alloc_send_pskb`; TCP small queues, `tcp_tsq_handler`): `e` is
    /// scheduled when they do.
    pub fn wake_below(&mut self, limit: u64, e: ClientEv) {
        self.wake = Some((limit, e));
    }

    /// A connection's delayed-ACK timer is armed (its ACK will go when it fires).
    pub fn delack_armed(&self) -> bool {
        self.flows.iter().any(|f| f.delack.armed())
    }

    /// Frames handed over and not yet through the client's NIC.
    pub fn on_link(&self) -> usize {
        self.link.len()
    }

    pub(crate) fn reset_metrics(&mut self) {
        self.acks = 0;
        self.nic.irqs = 0;
    }
}
