//! Workload behaviours: what a guest application does on its vCPU. The data lives in
//! `scenario::Workload`; here is the small behaviour each kind needs.

use super::lapic::Vector;
use super::vcpu::Task;
use super::virtq::Buf;
use super::{Ev, Host};
use crate::engine::{EventQueue, Rng, Time, NS_PER_S};
use crate::metrics::ExitReason;
use crate::profile::Profile;
use crate::scenario::Workload;

/// netperf UDP_STREAM sender: one datagram per send, open loop at a rate or as fast as the
/// vCPU and the ring allow. Blocks (the driver stops the queue) when the TX ring is full.
#[derive(Debug)]
pub struct Sender {
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
    /// Per-component random stream (first-send phase).
    _rng: Rng,
}

impl Sender {
    /// Behaviour for `w` in VM `vm_name`.
    pub fn new(w: &Workload, p: &Profile, seed: u64, vm_name: &str) -> Self {
        let Workload::UdpStream { message_bytes, rate_pps } = *w;
        let mut rng = Rng::for_component(seed, &format!("vm:{vm_name}/workload"));
        let interval = rate_pps.map(|r| NS_PER_S as f64 / r);
        // Random phase so that several VMs at the same rate do not send in lockstep.
        let next_at = interval.map_or(0.0, |i| rng.uniform() * i);
        let cost = p.guest.udp_tx_packet_ns.value + p.guest.udp_tx_byte_ns.value * message_bytes as f64;
        Sender { bytes: message_bytes, interval, next_at, stopped: false, cost: cost.round() as Time, sent: 0, _rng: rng }
    }

    pub(crate) fn reset_metrics(&mut self) {
        self.sent = 0;
    }
}

impl Host {
    /// The vCPU is free: what does the workload do next?
    pub(crate) fn workload_next(&mut self, now: Time, v: u32, q: &mut EventQueue<Ev>) {
        let vm = self.vcpus[v as usize].vm as usize;
        let Some(s) = self.senders[vm].as_ref() else { return self.idle(now, v, None, q) };
        if s.stopped || v != self.vms[vm].vcpus[0] {
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
        let dev = self.vms[vm].dev;
        let s = self.senders[vm].as_mut().expect("send without a sender");
        s.sent += 1;
        if let Some(i) = s.interval {
            s.next_at += i;
        }
        let d = &mut self.devs[dev as usize];
        d.txq.add(Buf { bytes: s.bytes, born: now });
        if d.txq.free() == 0 {
            // start_xmit: ring full → netif_stop_queue and ask for an interrupt on completion.
            s.stopped = true;
            d.txq.interrupt_wanted = true;
        }
        if d.txq.notify_enabled {
            d.txq.kicks += 1;
            let wake = self.profile.host.thread_wakeup_ns.value.round() as Time;
            q.at(now + wake, Ev::VhostWake { dev });
            return self.exit(now, v, ExitReason::IoInstruction, super::vcpu::AfterExit::Resume, q);
        }
        self.enter(now, v, q);
    }

    /// Guest-side effect of a handled interrupt.
    pub(crate) fn irq_handled(&mut self, _now: Time, v: u32, vec: Vector) {
        if vec == Vector::NetTx {
            let vm = self.vcpus[v as usize].vm as usize;
            if let Some(s) = self.senders[vm].as_mut() {
                // free_old_xmit_skbs reclaimed space: netif_wake_queue.
                s.stopped = false;
            }
        }
    }
}
