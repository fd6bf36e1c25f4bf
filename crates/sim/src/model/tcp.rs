//! The guest's TCP sender for netperf TCP_STREAM (DESIGN §3.5): application `write()`s append
//! to the socket; segments of one MSS leave when a full MSS is queued, or a shorter one when
//! nothing is unacknowledged (Nagle, RFC 896 — netperf does not set TCP_NODELAY); the send
//! window (cwnd, rwnd and the socket buffer, one number here) bounds unacknowledged bytes and,
//! with unsent bytes, what the application may write before it blocks.
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
    write_cost: Time,
    seg_cost: Time,
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
            write_cost: (g.tcp_write_ns.value + g.tcp_tx_byte_ns.value * msg as f64).round() as Time,
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

    /// May the application write another message (sk_stream_memory_free)?
    pub fn can_write(&self) -> bool {
        self.written - self.snd_una + self.msg as u64 <= self.window
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
        if t.can_write() {
            let c = t.write_cost;
            return self.run_task(now, v, Task::Write, c, q);
        }
        self.idle(now, v, None, q)
    }

    /// A `write()` completed: the bytes are in the socket.
    pub(crate) fn write_done(&mut self, now: Time, v: u32, q: &mut EventQueue<Ev>) {
        let vm = self.vcpus[v as usize].vm as usize;
        let t = self.senders[vm].tcp_mut().expect("tcp workload");
        t.written += t.msg as u64;
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
    pub(crate) fn post_tx(&mut self, now: Time, v: u32, vm: usize, b: Buf, q: &mut EventQueue<Ev>) {
        let dev = self.vms[vm].dev;
        let d = &mut self.devs[dev as usize];
        d.txq.add(b);
        if d.txq.free() == 0 {
            self.senders[vm].set_stopped(true);
            d.txq.interrupt_wanted = true;
        }
        if d.txq.notify_enabled {
            d.txq.kicks += 1;
            self.signal_vhost(now, dev, q);
            return self.exit(now, v, ExitReason::IoInstruction, AfterExit::Resume, q);
        }
        self.enter(now, v, q);
    }
}
