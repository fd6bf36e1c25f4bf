//! Workload behaviours: what a guest application does on its vCPU. The data lives in
//! `scenario::Workload`; here is the small behaviour each kind needs (TCP in `tcp.rs`).

use super::tcp::TcpSender;
use super::tcp_rr::TcpServer;
use super::tcp_rx::TcpReceiver;
use super::udp_rx::UdpReceiver;
use super::vcpu::Task;
use super::virtq::Buf;
use super::{Ev, Host};
use crate::engine::{EventQueue, Rng, Time, NS_PER_S};
use crate::profile::Profile;
use crate::scenario::Workload;

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
    fn new(message_bytes: u32, rate_pps: Option<f64>, p: &Profile, seed: u64, vm_name: &str) -> Self {
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
            cost: cost.round() as Time,
            sent: 0,
            sent_life: 0,
            _rng: rng,
        }
    }
}

/// The application of a VM.
#[derive(Debug)]
pub enum Sender {
    /// netperf UDP_STREAM.
    Udp(UdpSender),
    /// netperf TCP_STREAM.
    Tcp(TcpSender),
    /// netperf UDP_STREAM towards the guest.
    UdpRx(UdpReceiver),
    /// A TCP request/response server: netperf TCP_RR, memcached, a web server.
    Server(TcpServer),
    /// netperf TCP_STREAM towards the guest.
    TcpRx(TcpReceiver),
    /// No application (`[vm.workload]` absent): the vCPUs idle or run the guest CPU burn.
    Idle,
}

impl Sender {
    /// Behaviour for `w` in VM `vm_name`.
    pub fn new(w: &Workload, vcpus: u32, p: &Profile, seed: u64, vm_name: &str) -> Self {
        match *w {
            Workload::TcpReceive { message_bytes, window_bytes } => {
                Sender::TcpRx(TcpReceiver::new(message_bytes, window_bytes, p))
            }
            Workload::TcpRr { .. } | Workload::Memcached { .. } | Workload::Http { .. } => {
                Sender::Server(TcpServer::new(w, vcpus, p, seed, vm_name))
            }
            Workload::UdpStream { message_bytes, rate_pps } => {
                Sender::Udp(UdpSender::new(message_bytes, rate_pps, p, seed, vm_name))
            }
            Workload::TcpStream { message_bytes, window_bytes } => {
                Sender::Tcp(TcpSender::new(message_bytes, window_bytes, p))
            }
            Workload::UdpReceive { message_bytes, rate_pps } => {
                Sender::UdpRx(UdpReceiver::new(message_bytes, Some(rate_pps), None, p))
            }
            Workload::UdpRr { request_bytes, response_bytes, interval_us } => Sender::UdpRx(UdpReceiver::new(
                request_bytes,
                interval_us.map(|i| 1e6 / i),
                Some(response_bytes),
                p,
            )),
        }
    }

    /// The application's state in a few words (diagnostics).
    pub fn describe(&self) -> String {
        match self {
            Sender::Udp(u) => format!("udp stopped {}", u.stopped),
            Sender::Tcp(t) => format!("{t:?}"),
            Sender::UdpRx(r) => format!("udp rx queued {} reply {:?}", r.queued(), r.reply),
            Sender::Server(s) => format!("server stopped {} issued {} done {} next pending {}", s.stopped, s.issued_life, s.ops_life, s.next_pending),
            Sender::TcpRx(r) => format!("{r:?}"),
            Sender::Idle => "idle".into(),
        }
    }

    /// No application runs (the VM only idles or burns CPU).
    pub fn is_idle(&self) -> bool {
        matches!(self, Sender::Idle)
    }

    /// The TCP sender, if this is one.
    pub fn tcp_mut(&mut self) -> Option<&mut TcpSender> {
        match self {
            Sender::Tcp(t) => Some(t),
            _ => None,
        }
    }

    /// The TCP stream receiver, if this is one.
    pub fn tcp_rx_mut(&mut self) -> Option<&mut TcpReceiver> {
        match self {
            Sender::TcpRx(r) => Some(r),
            _ => None,
        }
    }

    /// The TCP stream receiver, if this is one.
    pub fn tcp_rx(&self) -> Option<&TcpReceiver> {
        match self {
            Sender::TcpRx(r) => Some(r),
            _ => None,
        }
    }

    /// The TCP server, if this is one.
    pub fn server_mut(&mut self) -> Option<&mut TcpServer> {
        match self {
            Sender::Server(s) => Some(s),
            _ => None,
        }
    }

    /// The TCP server, if this is one.
    pub fn server(&self) -> Option<&TcpServer> {
        match self {
            Sender::Server(s) => Some(s),
            _ => None,
        }
    }

    /// The UDP receiver, if this is one.
    pub fn udp_rx_mut(&mut self) -> Option<&mut UdpReceiver> {
        match self {
            Sender::UdpRx(r) => Some(r),
            _ => None,
        }
    }

    /// The UDP receiver, if this is one.
    pub fn udp_rx(&self) -> Option<&UdpReceiver> {
        match self {
            Sender::UdpRx(r) => Some(r),
            _ => None,
        }
    }

    /// Packets handed to the driver in the window.
    pub fn sent(&self) -> u64 {
        match self {
            Sender::Udp(u) => u.sent,
            Sender::Tcp(t) => t.segments,
            Sender::UdpRx(r) => r.replies,
            Sender::Server(s) => s.segments,
            Sender::TcpRx(r) => r.acks,
            Sender::Idle => 0,
        }
    }

    /// Packets handed to the driver since the start (conservation).
    pub fn sent_life(&self) -> u64 {
        match self {
            Sender::Udp(u) => u.sent_life,
            Sender::Tcp(t) => t.segments_life,
            Sender::UdpRx(r) => r.replies_life,
            Sender::Server(s) => s.segments_life,
            Sender::TcpRx(r) => r.acks_life,
            Sender::Idle => 0,
        }
    }

    /// Stop or wake the driver's queue.
    pub fn set_stopped(&mut self, s: bool) {
        match self {
            Sender::Udp(u) => u.stopped = s,
            Sender::Tcp(t) => t.stopped = s,
            Sender::Server(v) => v.stopped = s,
            Sender::UdpRx(_) | Sender::TcpRx(_) | Sender::Idle => {}
        }
    }

    pub(crate) fn reset_metrics(&mut self) {
        match self {
            Sender::Udp(u) => u.sent = 0,
            Sender::Tcp(t) => t.reset_metrics(),
            Sender::UdpRx(r) => r.reset_metrics(),
            Sender::Server(s) => s.reset_metrics(),
            Sender::TcpRx(r) => r.reset_metrics(),
            Sender::Idle => {}
        }
    }
}

impl Host {
    /// The vCPU is free: what does the workload do next?
    pub(crate) fn workload_next(&mut self, now: Time, v: u32, q: &mut EventQueue<Ev>) {
        let vm = self.vcpus[v as usize].vm as usize;
        if let Sender::Server(_) = self.senders[vm] {
            // Server threads run on every vCPU: each serves the requests woken on it.
            return self.server_next(now, v, vm, q);
        }
        if v != self.vms[vm].vcpus[0] {
            return self.idle(now, v, None, q);
        }
        let s = match &self.senders[vm] {
            Sender::Tcp(_) => return self.tcp_next(now, v, vm, q),
            Sender::UdpRx(_) => return self.udp_recv_next(now, v, vm, q),
            Sender::Server(_) => unreachable!("handled above"),
            Sender::TcpRx(_) => return self.tcp_recv_next(now, v, vm, q),
            Sender::Idle => return self.idle(now, v, None, q),
            Sender::Udp(s) => s,
        };
        if s.stopped {
            return self.idle(now, v, None, q);
        }
        let due = s.next_at.ceil() as Time;
        if due > now {
            return self.idle(now, v, Some(due), q);
        }
        let cost = s.cost;
        self.run_task(now, v, Task::Send, cost, q);
    }

    /// One datagram went through the guest stack: post it, kick if allowed, stop if full.
    pub(crate) fn send_done(&mut self, now: Time, v: u32, q: &mut EventQueue<Ev>) {
        let vm = self.vcpus[v as usize].vm as usize;
        let Sender::Udp(s) = &mut self.senders[vm] else { unreachable!("UDP send without a UDP sender") };
        s.sent += 1;
        s.sent_life += 1;
        if let Some(i) = s.interval {
            s.next_at += i;
        }
        let b = Buf { bytes: s.bytes, born: now };
        self.post_tx(now, v, vm, b, q);
    }

}
