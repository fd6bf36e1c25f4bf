//! The guest's TCP sender for netperf TCP_STREAM (DESIGN §3.5): application `write()`s append
//! to the socket; an skb of whole MSS segments up to the size goal (one MSS, or with TSO up to
//! 45 of them: `guest/tso.rs`) leaves when a full MSS is queued, or a shorter one when
//! nothing is unacknowledged (Nagle, RFC 896 — netperf does not set TCP_NODELAY); the send
//! window (cwnd, rwnd and the socket buffer, one number here) bounds unacknowledged bytes and,
//! with unsent bytes, what the application may write before it blocks. A `write()` larger than
//! the free buffer copies what fits and blocks for the rest (`tcp_sendmsg` →
//! `sk_stream_wait_memory`), woken when a third of the buffer is free (`sk_stream_write_space`).
//!
//! virtio-net in Linux 4.4 orphans the skb at transmit (`skb_orphan` in `start_xmit`), so TX
//! completions do not gate TCP; only ACKs do.
//!
//! The era's TCP (issue 49 item 3), per guest kernel: pushing each write's whole segments is
//! what a kernel before autocorking (3.14: elvis's 3.1, did's 3.6, hbalance's 3.10, sriov's
//! 2.6.32) does. A 3.14+ guest (es2's 4.4) corks a write while its socket's skbs below TCP
//! (`sk_wmem_alloc`) exceed the tail's own, and TCP small queues (3.6) cap the same bytes; an
//! orphaning driver drops an skb from that count when it takes it, so only skbs the qdisc holds
//! while the queue is stopped count — and then the model's guest sends nothing and its tail
//! grows to the size goal, which is autocorking's effect. So neither needs a switch here. Not
//! modelled: `tcp_tso_autosize` (3.12), a goal of 1 ms at the pacing rate (2 × cwnd × MSS /
//! srtt in slow start, 4.4): below the 64 KB GSO limit only when srtt exceeds window × 2 ms /
//! 64 KB, 128 ms for the default 4 MB window; and a non-orphaning guest (virtio-net with napi-tx,
//! a VF's driver), whose TX completions would gate TSQ.

use crate::model::workload::client::AckAction;
use crate::model::hw::rxq::{Ctl, RxPkt};
use crate::model::hw::virtq::Buf;
use crate::model::guest::guest_sched::{GuestSched, Placement};
use crate::model::workload::app::{pct, App, ClientEv, DevView, Measure, Step};
use crate::model::workload::ctx::{Ctx, Ipi};
use crate::model::guest::tso::SizeGoal;
use crate::model::workload::net::TCP_IP_HDR;
use crate::engine::{Time, round_ns};
use crate::profile::Profile;
use crate::config::Offload;

/// One TCP_STREAM connection's sender state. Sequence numbers are byte counters from 0.
#[derive(Debug)]
pub struct TcpSender {
    msg: u32,
    goal: SizeGoal,
    window: u64,
    /// Cost of entering one `write()` call, and per byte copied.
    write_call_ns: f64,
    write_byte_ns: f64,
    seg_cost: Time,
    /// Per byte of an skb checksummed by the guest (0: the device offloads it).
    csum_byte_ns: f64,
    /// Bytes of the current `write()` still to copy (0: the next write starts afresh).
    write_left: u32,
    /// Bytes the application has written.
    written: u64,
    /// Bytes segmented and handed to the driver (snd_nxt).
    snd_nxt: u64,
    /// Bytes acknowledged (snd_una).
    snd_una: u64,
    /// skbs handed to the driver (lifetime).
    pub segments_life: u64,
    /// skbs handed to the driver (window).
    pub segments: u64,
    /// ACKs processed (window).
    pub acks: u64,
}

impl TcpSender {
    /// A sender of `msg`-byte writes with send window `window` bytes, through a device with
    /// offloads `off`.
    pub fn new(msg: u32, window: u32, p: &Profile, off: Offload) -> Self {
        let g = &p.guest;
        TcpSender {
            msg,
            goal: SizeGoal::new(p, off.host_tso4, u64::from(window)),
            csum_byte_ns: if off.csum { 0.0 } else { g.csum_byte_ns.value },
            window: window as u64,
            write_call_ns: g.tcp_write_ns.value,
            write_byte_ns: g.tcp_tx_byte_ns.value,
            write_left: 0,
            seg_cost: round_ns(g.tcp_tx_segment_ns.value),
            written: 0,
            snd_nxt: 0,
            snd_una: 0,
            segments_life: 0,
            segments: 0,
            acks: 0,
        }
    }

    /// The skb to send now, if any (tcp_write_xmit with the Nagle test).
    pub fn next_segment(&self) -> Option<u32> {
        let unsent = self.written - self.snd_nxt;
        let room = self.window - (self.snd_nxt - self.snd_una);
        let in_flight = self.snd_nxt - self.snd_una;
        if let Some(bytes) = self.goal.full_segments(unsent, room) {
            (!self.goal.should_defer(unsent, room, in_flight)).then_some(bytes)
        } else if unsent > 0 && self.snd_nxt == self.snd_una && room >= unsent {
            Some(unsent as u32)
        } else {
            None
        }
    }

    /// The next copy of the application's `write()`, if the buffer has room for it: (bytes,
    /// guest ns). The rest of a write that fits copies at once; a larger one waits for a third
    /// of the buffer and copies what fits.
    pub fn next_write(&self) -> Option<(u32, Time)> {
        let free = self.window - (self.written - self.snd_una);
        let left = if self.write_left == 0 { self.msg } else { self.write_left } as u64;
        if free < left.min(self.window / 3).max(1) {
            return None;
        }
        let bytes = left.min(free);
        let call = if self.write_left == 0 { self.write_call_ns } else { 0.0 };
        Some((bytes as u32, round_ns(call + self.write_byte_ns * bytes as f64)))
    }

    /// A cumulative ACK for `ack` bytes arrived.
    pub fn on_ack(&mut self, ack: u64) {
        self.acks += 1;
        if ack > self.snd_una {
            self.snd_una = ack.min(self.snd_nxt);
        }
    }

    /// It has something to do: a segment to send (unless the driver's queue is `stopped`) or
    /// a write that fits.
    fn runnable(&self, stopped: bool) -> bool {
        (!stopped && self.next_segment().is_some()) || self.next_write().is_some()
    }
}

/// netperf TCP_STREAM with one or more threads (`streams`), each writing to a connection of
/// its own through the VM's one virtio-net device (ES2 §6.3.1: "four concurrent Netperf
/// threads ... to fully load its four vCPUs"). Thread `s` starts on vCPU `s % vcpus`; the
/// guest's CFS (`guest_sched.rs`) places it from then on and shares each vCPU between the
/// threads on it.
#[derive(Debug)]
pub struct TcpStreams {
    /// Per thread: its connection's sender.
    pub s: Vec<TcpSender>,
    /// The guest's run queues for the threads.
    sched: GuestSched,
    /// The driver stopped the queue (TX ring full): waiting for a TX interrupt.
    pub stopped: bool,
}

impl TcpStreams {
    /// `streams` threads of `msg`-byte writes, each with send window `window` bytes, in a VM
    /// of `vcpus` vCPUs.
    pub fn new(msg: u32, window: u32, streams: u32, vcpus: u32, at: Placement, p: &Profile, off: Offload) -> Self {
        TcpStreams {
            s: (0..streams).map(|_| TcpSender::new(msg, window, p, off)).collect(),
            // A thread's work appears with its ACKs and with the driver's queue waking: each
            // pick looks at every thread (at most 64).
            sched: GuestSched::new(streams, vcpus, at, p).lazy_wakes(),
            stopped: false,
        }
    }
}

/// Its steps: one `write()` (or the part that fits; `a` = bytes), one segment's transmit
/// through TCP/IP and virtio-net (`a` = payload bytes).
const WRITE: u8 = 0;
const XMIT: u8 = 1;
/// Its client's event: the delayed-ACK timer's event.
const DELACK: u8 = 0;

impl TcpStreams {
    /// Carry out the client's answer to a segment or timer of connection `flow`: arm its
    /// delayed-ACK timer, or put its ACK on the reverse link.
    fn client_action(g: &mut impl Ctx<Self>, flow: u16, a: AckAction) {
        match a {
            AckAction::None => {}
            AckAction::Arm(at) => g.client_at(at, ClientEv::new(DELACK, u32::from(flow))),
            AckAction::Ack(at, ack) => {
                let pkt = RxPkt::new(0, ack, at, u32::from(flow), Ctl::None);
                let wire = TCP_IP_HDR + g.profile().nic.wire_overhead_bytes.value as u32;
                g.to_host(at, pkt, wire);
            }
        }
    }
}

impl App for TcpStreams {
    /// The guest scheduler's thread sends a ready segment, else writes; with no thread able to
    /// (windows full, or the queue stopped) the vCPU halts.
    fn next(g: &mut impl Ctx<Self>, v: u32) {
        let local = v - g.vcpu(0);
        let now = g.now();
        crate::model::workload::ctx::sync_steal(g, |t: &mut Self| &mut t.sched);
        let t = g.app();
        // A stopped driver queue stops transmits, not `write()`s: the bytes wait in the socket
        // and leave as larger skbs when the queue wakes (up to the size goal with TSO).
        let stopped = t.stopped;
        let picked = t.sched.pick(now, local, |i| t.s[i as usize].runnable(stopped));
        // Reschedule IPIs its decisions ask for; an ICR write that exits ends here (VM entry
        // asks again).
        while let Some(k) = g.app().sched.take_kick() {
            let to = g.vcpu(k);
            if g.send_ipi(v, to, Ipi::Reschedule) {
                return;
            }
        }
        let Some(i) = picked else { return g.idle(v, None) };
        let switch = g.app().sched.take_switch(local);
        let st = &g.app().s[i as usize];
        let (step, cost) = match st.next_segment().filter(|_| !stopped) {
            Some(bytes) => {
                let local = st.seg_cost + round_ns(st.csum_byte_ns * f64::from(bytes));
                // Its descriptor, ring entries and buffer, last touched by a back end on
                // another socket (profile `[numa]`).
                let far = g.txq().far;
                let cross = g.profile().numa.as_ref().filter(|_| far).map_or(0, |n| round_ns(n.cross_ns(1, bytes)));
                (Step::new(XMIT, bytes, u64::from(i)), local + cross)
            }
            None => {
                let (bytes, cost) = st.next_write().expect("a runnable thread has a segment or a write");
                (Step::new(WRITE, bytes, u64::from(i)), cost)
            }
        };
        g.run_step(v, step, cost + switch)
    }

    fn step_done(g: &mut impl Ctx<Self>, v: u32, s: Step) {
        let now = g.now();
        let flow = s.b as u16;
        let t = &mut g.app().s[flow as usize];
        let bytes = s.a;
        if s.kind == WRITE {
            // The bytes are in the socket.
            t.written += bytes as u64;
            let left = if t.write_left == 0 { t.msg } else { t.write_left };
            t.write_left = left - bytes;
            return g.enter(v);
        }
        t.snd_nxt += bytes as u64;
        t.segments += 1;
        t.segments_life += 1;
        let segs = t.goal.segs(bytes);
        g.post_tx(v, Buf { flow, segs, ..Buf::new(bytes, now) });
    }

    fn step_name(s: Step) -> &'static str {
        if s.kind == WRITE { "tcp write" } else { "xmit" }
    }

    /// An ACK reached the guest: it opens its connection's window. A thread it makes runnable
    /// is woken as `sk_stream_write_space` wakes it (not `WF_SYNC`), from this vCPU; placed on
    /// another vCPU that must be told, a reschedule IPI goes there, whose ICR write is an exit
    /// of the sender.
    fn deliver(g: &mut impl Ctx<Self>, v: u32, pkt: RxPkt) -> bool {
        let (now, local) = (g.now(), v - g.vcpu(0));
        crate::model::workload::ctx::sync_steal(g, |t: &mut Self| &mut t.sched);
        let t = g.app();
        let i = pkt.conn as usize;
        t.s[i].on_ack(pkt.ack);
        // One thread: the guest's receive path wakes the application's vCPU (`net_rx.rs`), and
        // its next pick wakes the thread.
        if t.s.len() == 1 || !t.s[i].runnable(t.stopped) {
            return false;
        }
        match t.sched.wake(now, i as u32, Some(local), false) {
            Some(k) => {
                let to = g.vcpu(k);
                g.send_ipi(v, to, Ipi::Reschedule)
            }
            None => false,
        }
    }

    /// A segment reached the client, which ACKs (delayed ACKs) from its core.
    fn at_client(g: &mut impl Ctx<Self>, b: Buf) {
        let a = g.client_receive(b.bytes, b.segs, b.flow);
        Self::client_action(g, b.flow, a);
    }

    /// A batch received by one NAPI poll: TCP decides one ACK per connection.
    fn client_batch_done(g: &mut impl Ctx<Self>) {
        for flow in 0..g.client().flows() as u16 {
            let a = g.client().batch_ack(flow);
            Self::client_action(g, flow, a);
        }
    }

    fn client_event(g: &mut impl Ctx<Self>, e: ClientEv) {
        debug_assert_eq!(e.kind, DELACK);
        let flow = e.a as u16;
        let now = g.now();
        let a = g.client().delack_fired(now, flow);
        Self::client_action(g, flow, a);
    }

    /// Each thread's connection has its receiver at the client.
    fn start(g: &mut impl Ctx<Self>) {
        let n = g.app().s.len();
        g.client().set_flows(n);
    }

    fn sent_life(&self) -> u64 {
        self.s.iter().map(|t| t.segments_life).sum()
    }
    fn set_stopped(&mut self, stopped: bool) {
        self.stopped = stopped;
    }
    fn reset_metrics(&mut self) {
        self.sched.reset_metrics();
        for t in &mut self.s {
            t.segments = 0;
            t.acks = 0;
        }
    }
    fn on_every_vcpu(&self) -> bool {
        self.s.len() > 1
    }
    fn describe(&self) -> String {
        format!("{self:?}")
    }

    /// What reached the client; segment sent → last bit on the wire.
    fn measure<'a>(&'a self, d: DevView<'a>) -> Measure<'a> {
        Measure {
            delivered: Some(d.wire.frames),
            payload: Some(d.wire.payload_bytes),
            latency: Some(&d.wire.latency),
            loss_pct: pct(d.wire.dropped, self.s.iter().map(|t| t.segments).sum()),
            ops: None,
            by_run_class: None,
            guest_threads: Some(self.sched.counts()),
            ..Default::default()
        }
    }
}
