//! The guest's TCP sender for netperf TCP_STREAM (DESIGN §3.5): application `write()`s append
//! to the socket; segments of one MSS leave when a full MSS is queued, or a shorter one when
//! nothing is unacknowledged (Nagle, RFC 896 — netperf does not set TCP_NODELAY); the send
//! window (cwnd, rwnd and the socket buffer, one number here) bounds unacknowledged bytes and,
//! with unsent bytes, what the application may write before it blocks. A `write()` larger than
//! the free buffer copies what fits and blocks for the rest (`tcp_sendmsg` →
//! `sk_stream_wait_memory`), woken when a third of the buffer is free (`sk_stream_write_space`).
//!
//! virtio-net in Linux 4.4 orphans the skb at transmit (`skb_orphan` in `start_xmit`), so TX
//! completions do not gate TCP; only ACKs do.

use super::vcpu::{AfterExit, Task};
use super::virtq::Buf;
use super::{Ev, Host};
use crate::engine::{EventQueue, Time};
use crate::metrics::ExitReason;
use crate::profile::Profile;

/// IPv4 (20) + TCP with timestamps (32) header bytes per segment (Linux defaults).
pub const TCP_IP_HDR: u32 = 52;

/// One TCP_STREAM connection's sender state. Sequence numbers are byte counters from 0.
#[derive(Debug)]
pub struct TcpSender {
    msg: u32,
    mss: u32,
    window: u64,
    /// Cost of entering one `write()` call, and per byte copied.
    write_call_ns: f64,
    write_byte_ns: f64,
    seg_cost: Time,
    /// Bytes of the current `write()` still to copy (0: the next write starts afresh).
    write_left: u32,
    /// Bytes the application has written.
    written: u64,
    /// Bytes segmented and handed to the driver (snd_nxt).
    snd_nxt: u64,
    /// Bytes acknowledged (snd_una).
    snd_una: u64,
    /// The driver stopped the queue (TX ring full): waiting for a TX interrupt.
    pub stopped: bool,
    /// Segments handed to the driver (lifetime).
    pub segments_life: u64,
    /// Segments handed to the driver (window).
    pub segments: u64,
    /// ACKs processed (window).
    pub acks: u64,
}

impl TcpSender {
    /// A sender of `msg`-byte writes with send window `window` bytes.
    pub fn new(msg: u32, window: u32, p: &Profile) -> Self {
        let g = &p.guest;
        let mss = p.nic.mtu_bytes.value as u32 - TCP_IP_HDR;
        TcpSender {
            msg,
            mss,
            window: window as u64,
            write_call_ns: g.tcp_write_ns.value,
            write_byte_ns: g.tcp_tx_byte_ns.value,
            write_left: 0,
            seg_cost: g.tcp_tx_segment_ns.value.round() as Time,
            written: 0,
            snd_nxt: 0,
            snd_una: 0,
            stopped: false,
            segments_life: 0,
            segments: 0,
            acks: 0,
        }
    }

    /// The segment to send now, if any (tcp_write_xmit with the Nagle test).
    pub fn next_segment(&self) -> Option<u32> {
        let unsent = self.written - self.snd_nxt;
        let room = self.window - (self.snd_nxt - self.snd_una);
        let full = self.mss as u64;
        if unsent >= full && room >= full {
            Some(self.mss)
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
        Some((bytes as u32, (call + self.write_byte_ns * bytes as f64).round() as Time))
    }

    /// A cumulative ACK for `ack` bytes arrived.
    pub fn on_ack(&mut self, ack: u64) {
        self.acks += 1;
        if ack > self.snd_una {
            self.snd_una = ack.min(self.snd_nxt);
        }
    }


    pub(crate) fn reset_metrics(&mut self) {
        self.segments = 0;
        self.acks = 0;
    }
}

impl Host {
    /// The TCP application's next step on its vCPU: send a ready segment, else write, else
    /// block (window full or queue stopped) by halting.
    pub(crate) fn tcp_next(&mut self, now: Time, v: u32, vm: usize, q: &mut EventQueue<Ev>) {
        let t = self.senders[vm].tcp_mut().expect("tcp workload");
        if t.stopped {
            return self.idle(now, v, None, q);
        }
        if let Some(bytes) = t.next_segment() {
            let c = t.seg_cost;
            return self.run_task(now, v, Task::Xmit { bytes }, c, q);
        }
        if let Some((bytes, cost)) = t.next_write() {
            return self.run_task(now, v, Task::Write { bytes }, cost, q);
        }
        self.idle(now, v, None, q)
    }

    /// A `write()` copy completed: the bytes are in the socket.
    pub(crate) fn write_done(&mut self, now: Time, v: u32, bytes: u32, q: &mut EventQueue<Ev>) {
        let vm = self.vcpus[v as usize].vm as usize;
        let t = self.senders[vm].tcp_mut().expect("tcp workload");
        t.written += bytes as u64;
        let left = if t.write_left == 0 { t.msg } else { t.write_left };
        t.write_left = left - bytes;
        self.enter(now, v, q);
    }

    /// A segment went through TCP/IP and virtio-net `start_xmit`.
    pub(crate) fn xmit_done(&mut self, now: Time, v: u32, bytes: u32, q: &mut EventQueue<Ev>) {
        let vm = self.vcpus[v as usize].vm as usize;
        let t = self.senders[vm].tcp_mut().expect("tcp workload");
        t.snd_nxt += bytes as u64;
        t.segments += 1;
        t.segments_life += 1;
        self.post_tx(now, v, vm, Buf { bytes, born: now }, q);
    }

    /// virtio-net `start_xmit` tail: add the buffer to the TX ring, stop the queue if the ring
    /// is full (and ask for a TX interrupt), kick if the device has notifications enabled.
    /// A packet sent while the queue is stopped — by another vCPU's worker, a control segment
    /// or an ACK — waits in the qdisc until the TX interrupt wakes the queue (`tx_irq`).
    pub(crate) fn post_tx(&mut self, now: Time, v: u32, vm: usize, b: Buf, q: &mut EventQueue<Ev>) {
        let dev = self.vms[vm].dev;
        let d = &mut self.devs[dev as usize];
        if d.txq.free() == 0 || !d.qdisc.is_empty() {
            d.qdisc.push_back(b);
            self.senders[vm].set_stopped(true);
            d.txq.want_interrupt();
            return self.enter(now, v, q);
        }
        d.txq.add(b);
        if d.txq.free() == 0 {
            self.senders[vm].set_stopped(true);
            d.txq.want_interrupt();
        }
        if d.txq.kick_prepare() {
            return self.kick_tx(now, v, dev, q);
        }
        self.enter(now, v, q);
    }

    /// The driver notifies the device of new TX buffers: an I/O-instruction exit.
    pub(crate) fn kick_tx(&mut self, now: Time, v: u32, dev: u32, q: &mut EventQueue<Ev>) {
        self.devs[dev as usize].txq.kicks += 1;
        self.signal_vhost(now, dev, q);
        self.exit(now, v, ExitReason::IoInstruction, AfterExit::Resume, q)
    }

    /// TX interrupt (`skb_xmit_done` → `netif_wake_subqueue`; then `net_tx_action` runs the
    /// qdisc): reclaimed space takes the backlog; the queue stays stopped while the ring fills
    /// again. Returns whether the device must be kicked for buffers added here.
    pub(crate) fn tx_irq(&mut self, v: u32) -> bool {
        let vm = self.vcpus[v as usize].vm as usize;
        let d = &mut self.devs[self.vms[vm].dev as usize];
        d.txq.irq.driver_disable(); // skb_xmit_done: virtqueue_disable_cb
        let mut added = false;
        while d.txq.free() > 0 {
            let Some(b) = d.qdisc.pop_front() else { break };
            d.txq.add(b);
            added = true;
        }
        let full = d.txq.free() == 0;
        if full {
            d.txq.want_interrupt();
        }
        self.senders[vm].set_stopped(full);
        added && d.txq.kick_prepare()
    }
}
