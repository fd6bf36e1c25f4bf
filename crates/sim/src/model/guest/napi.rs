//! Guest NAPI for the virtio-net RX queue (DID §5.7: weight 64; AIR §3.2): the RX interrupt
//! disables the queue's interrupts and schedules the poll (softirq, run before the interrupted
//! task resumes); each round receives up to `napi_weight` packets; when the queue is empty the
//! poll completes, re-enables interrupts and re-checks the queue (`virtqueue_poll`), polling on
//! if a packet slipped in. Work woken by an interrupt runs on the vCPU that took it.
//!
//! Softirq processing is bounded as in Linux `net_rx_action`: after `NETDEV_BUDGET` packets in a
//! row the rest is deferred to ksoftirqd, which the guest's CFS shares fairly with the
//! interrupted task; here the task then runs for as long as that softirq run took before polling
//! goes on (or at once if it has nothing to do). Without that bound an overloaded receiver
//! livelocks (Mogul & Ramakrishnan).

/// Linux `net.core.netdev_budget` default: packets per softirq run before deferring.
pub const NETDEV_BUDGET: u32 = 300;

use crate::model::hypervisor::vcpu::Task;
use crate::model::hw::lapic::Vector;
use crate::model::{Ev, Host};
use crate::engine::{EventQueue, Time, round_ns};

/// The NAPI context of one RX queue.
#[derive(Debug, Default)]
pub struct Napi {
    /// Scheduled (softirq pending or polling).
    pub scheduled: bool,
    /// A receive task is running or saved on the vCPU's stack.
    pub running: bool,
    /// vCPU that took the interrupt and polls.
    pub vcpu: u32,
    /// Packets left in this round.
    budget: u32,
    /// The next packet starts a round (pays the per-poll cost).
    round_start: bool,
    /// Packets left in this softirq run.
    softirq_left: u32,
    /// Softirq budget spent with the last packet started.
    exhausted: bool,
    /// When the current softirq run started.
    run_start: Time,
    /// Polling waits (unless the vCPU is otherwise idle) until then.
    defer_until: Time,
    /// Poll rounds (window).
    pub polls: u64,
}

impl Host {
    /// The RX interrupt handler (`skb_recv_done`): disable callbacks, schedule NAPI.
    pub(crate) fn napi_schedule(&mut self, v: u32) {
        let vm = self.vcpus[v as usize].vm as usize;
        let weight = self.profile.guest.napi_weight.value as u32;
        let d = &mut self.devs[self.vms[vm].dev as usize];
        d.rxq.irq.driver_disable();
        if !d.napi.scheduled {
            d.napi = Napi {
                scheduled: true,
                running: false,
                vcpu: v,
                budget: weight,
                round_start: true,
                softirq_left: NETDEV_BUDGET,
                exhausted: false,
                run_start: 0,
                defer_until: 0,
                polls: d.napi.polls,
            };
        }
    }

    /// At VM entry: run the next NAPI step on `v` if its poll is pending. Returns whether a
    /// task (or an exit) was started. `force`: the vCPU has nothing else to run (ksoftirqd runs
    /// even when deferred).
    pub(crate) fn napi_next(&mut self, now: Time, v: u32, force: bool, q: &mut EventQueue<Ev>) -> bool {
        let vm = self.vcpus[v as usize].vm as usize;
        let weight = self.profile.guest.napi_weight.value as u32;
        let (poll_ns, pkt_ns) = (self.profile.guest.napi_poll_ns.value, self.profile.guest.tcp_rx_ack_ns.value);
        let (udp_pkt_ns, udp_byte_ns) = (self.profile.guest.udp_rx_packet_ns.value, self.profile.guest.udp_rx_byte_ns.value);
        let (tcp_seg_ns, tcp_byte_ns) = (self.profile.guest.tcp_rx_segment_ns.value, self.profile.guest.tcp_rx_byte_ns.value);
        let conn_ns = self.profile.guest.tcp_conn_ns.value;
        let tcp_data = self.senders[vm].receives_tcp_data();
        let dev = self.vms[vm].dev;
        let d = &mut self.devs[dev as usize];
        let n = &mut d.napi;
        if !n.scheduled || n.running || n.vcpu != v {
            return false;
        }
        if n.exhausted {
            n.exhausted = false;
            n.defer_until = now + (now - n.run_start);
        }
        if now < n.defer_until && !force {
            return false;
        }
        if n.budget == 0 {
            // Round over with work left: net_rx_action polls again.
            n.budget = weight;
            n.round_start = true;
        }
        if d.rxq.used.is_empty() {
            // napi_complete + virtqueue_enable_cb_prepare, then the virtqueue_poll re-check.
            d.rxq.enable_interrupts();
            n.polls += 1;
            n.scheduled = false;
            if d.vf.is_some() {
                // ixgbevf: napi_complete, then unmask the vector (EIMS); refills were tail writes.
                self.vf_unmask(now, v, dev, q);
                return false;
            }
            if d.rxq.kick_prepare() {
                // try_fill_recv refilled a ring the device had run dry of: kick it.
                d.rxq.kicks += 1;
                self.kick_exit(now, v, dev, true, q);
                return true;
            }
            return false;
        }
        if n.round_start && d.vf.is_some() {
            // ixgbevf_poll cleans the TX ring first in every round, not only at completion:
            // under a receive flood that never completes, sends would otherwise stop for good.
            self.vf_tx_clean(now, v, dev, q);
        }
        let d = &mut self.devs[dev as usize];
        let n = &mut d.napi;
        let front = *d.rxq.used.front().expect("non-empty");
        let mut cost = if front.ctl == crate::model::hw::rxq::Ctl::Syn {
            // A connection request: request sock, then the child socket and accept().
            pkt_ns + conn_ns
        } else if front.bytes == 0 {
            pkt_ns
        } else if tcp_data {
            tcp_seg_ns + tcp_byte_ns * front.bytes as f64
        } else {
            udp_pkt_ns + udp_byte_ns * front.bytes as f64
        };
        if n.round_start {
            n.round_start = false;
            n.polls += 1;
            cost += poll_ns;
        }
        n.running = true;
        n.budget -= 1;
        if n.softirq_left == NETDEV_BUDGET {
            n.run_start = now;
        }
        n.softirq_left -= 1;
        if n.softirq_left == 0 {
            n.softirq_left = NETDEV_BUDGET;
            n.exhausted = true;
        }
        self.run_task(now, v, Task::NapiRx, round_ns(cost), q);
        true
    }

    /// One packet received: refill its buffer, hand the ACK to TCP.
    pub(crate) fn napi_rx_done(&mut self, now: Time, v: u32, q: &mut EventQueue<Ev>) {
        let vm = self.vcpus[v as usize].vm as usize;
        let dev = self.vms[vm].dev as usize;
        self.napi_polled_life[dev] += 1;
        let d = &mut self.devs[dev];
        d.napi.running = false;
        let pkt = d.rxq.poll_and_refill().expect("NAPI receive without a used buffer");
        if let Some(vf) = &mut d.vf {
            vf.on_rx(pkt.bytes);
        } else if self.io.polls_rx {
            // The refill is a write to the RX ring: a back end polling it (a PMD) sees it.
            self.backend_written(now, dev as u32, crate::model::io::queues::Notice::RxKick, q);
        }
        self.wake_app(now, v, q);
        if self.app_deliver(now, v, vm, pkt, q) {
            return;
        }
        self.enter(now, v, q);
    }

    /// NAPI on vCPU `v` is handing a packet to the VM's application thread (`try_to_wake_up`
    /// across CPUs): if that thread's vCPU is another one, halted (or halting) or running only
    /// the guest's CPU burn, it gets a reschedule IPI (the sender's ICR write is not charged:
    /// its softirq carries on).
    pub(crate) fn wake_app(&mut self, now: Time, v: u32, q: &mut EventQueue<Ev>) {
        let vm = self.vcpus[v as usize].vm as usize;
        let app = self.vms[vm].vcpus[0];
        if app != v && !self.senders[vm].on_every_vcpu() && self.vcpus[app as usize].wants_resched_ipi() {
            self.raise_irq(now, app, Vector::Resched, q);
        }
    }
}
