//! The guest's receive path, as its NET_RX softirq runs it (`net_rx_action`): the RX
//! interrupt schedules NAPI; each poll round receives up to the weight, the guest's GRO
//! merging a flow's run into one skb up the stack; a VF's poll cleans its TX ring first; the
//! poll completes and re-enables the queue's interrupts (or unmasks the VF's vector), and the
//! reader on another vCPU is woken. The NAPI context's own state machine is `napi.rs`.

use crate::engine::{round_ns, Time};
use crate::model::guest::ctx::Kernel;
use crate::model::guest::napi::{stack_cost, NapiStep, StackCosts};
use crate::model::guest::ops::{Driver, MtvdOps, NapiOps};
use crate::model::hw::device::Device;
use crate::model::hw::gro;
use crate::model::hw::rxq::Ctl;
use crate::model::hypervisor::ctx::HvRead;
use crate::model::hypervisor::ops::{Irqs, Vcpus};
use crate::model::hypervisor::vcpu::Task;
use crate::model::io::queues::Notice;

impl<K: Kernel> NapiOps for K {
    fn napi_schedule(&mut self, v: u32, dev: u32) {
        let weight = self.profile().guest.napi_weight.value as u32;
        let d = self.net(dev);
        d.rxq.irq.driver_disable();
        d.napi.schedule(v, weight);
    }

    fn napi_next(&mut self, now: Time, v: u32, force: bool) -> bool {
        let vm = self.vcpu_ref(v).vm as usize;
        let (first, n) = self.vm_devs(vm);
        if n == 1 {
            return self.napi_next_dev(now, v, force, first);
        }
        // Several VFs: one softirq at a time on a vCPU (a receive under way finishes first);
        // the polls scheduled here take turns as on `net_rx_action`'s list: a round under way
        // goes on, else the poll whose last round began longest ago (then the lowest index).
        let devs = first..first + n;
        if devs.clone().any(|d| self.net(d).napi.receiving_on(v)) {
            return false;
        }
        if let Some(d) = devs.clone().find(|&d| self.net(d).napi.mid_round(v)) {
            if self.napi_next_dev(now, v, force, d) {
                return true;
            }
        }
        let mut tried = 0u64;
        loop {
            let mut best: Option<(Time, u32)> = None;
            for d in devs.clone() {
                let napi = &*self.net(d).napi;
                if tried & (1 << (d - first)) == 0 && napi.scheduled && napi.vcpu == v && best.is_none_or(|(t, _)| napi.round_at < t) {
                    best = Some((napi.round_at, d));
                }
            }
            let Some((_, d)) = best else { return false };
            tried |= 1 << (d - first);
            if self.napi_next_dev(now, v, force, d) {
                return true;
            }
        }
    }

    fn napi_next_dev(&mut self, now: Time, v: u32, force: bool, dev: u32) -> bool {
        let vm = self.vcpu_ref(v).vm as usize;
        let g = &self.profile().guest;
        let weight = g.napi_weight.value as u32;
        let poll_ns = g.napi_poll_ns.value;
        let tcp_seg_ns = g.tcp_rx_segment_ns.value;
        let (gro_ns, buf_ns, dispatch_ns) = (g.gro_segment_ns.value, g.rx_buffer_ns.value, g.rx_dispatch_ns.value);
        let costs = StackCosts::of(g);
        let gro_max = self.profile().nic.gso_max_size_bytes.value as u32;
        let tcp_data = self.app_receives_tcp_data(vm);
        let d = self.net(dev);
        if d.napi.vcpu == v && std::mem::take(&mut d.napi.wake_due) && self.wake_app(now, v, dev) {
            return true;
        }
        let d = self.net(dev);
        let round_start = match d.napi.next(now, v, force, weight, d.rxq) {
            NapiStep::Wait => return false,
            NapiStep::Complete => {
                if d.device.is_assigned() {
                    // ixgbevf: napi_complete, then unmask the vector (EIMS); refills were tail
                    // writes. MTVD's threads are woken for what this poll handed them. A vDPA
                    // device's refills end in one doorbell write (try_fill_recv's kick, to the
                    // mapped page: no exit) and virtqueue_enable_cb.
                    if let Device::Vdpa(vdpa) = d.device {
                        if d.napi.received_life > vdpa.rx_rung_at {
                            vdpa.rx_rung_at = d.napi.received_life;
                            d.rxq.kicks += 1;
                        }
                    }
                    self.vf_unmask(now, v, dev);
                    return self.mtvd_wake(now, v);
                }
                // The virtqueue_poll re-check: try_fill_recv refilled a ring the device had
                // run dry of: kick it.
                if d.rxq.kick_prepare() {
                    d.rxq.kicks += 1;
                    self.kick_exit(now, v, dev, true);
                    return true;
                }
                return false;
            }
            NapiStep::Receive { round_start } => round_start,
        };
        // A new round: MTVD's threads are woken for what the last one handed them (an IPI
        // exit, after which the round begins).
        if round_start && d.mtvd.is_some() && self.mtvd_wake(now, v) {
            return true;
        }
        let d = self.net(dev);
        if round_start && d.device.is_assigned() {
            // ixgbevf_poll cleans the TX ring first in every round, not only at completion:
            // under a receive flood that never completes, sends would otherwise stop for good.
            self.vf_tx_clean(now, v, dev);
        }
        let d = self.net(dev);
        let front = *d.rxq.used.front().expect("non-empty");
        let mut pkts = 1;
        let mut run_bytes = front.bytes;
        let cost = if d.mtvd.is_some() {
            // MTVD: the driver's descriptor work and the hand-over; a thread takes it up the
            // stack (`mtvd.rs`), one packet at a time (no GRO before the dispatch).
            buf_ns + dispatch_ns
        } else if tcp_data && front.bytes > 0 && front.ctl != Ctl::Syn {
            // The guest's GRO takes the run of this flow's data at the ring's head as one skb
            // up the stack: each packet after the first costs its driver receive and the merge,
            // each buffer after a packet's first its frag (`receive_mergeable`). The payload's
            // copy is the reader's, per byte, however the frames were merged.
            let limit = if d.guest_gro { d.napi.room() } else { 1 };
            let run = gro::guest_run(d.rxq.used.iter(), gro_max, limit);
            pkts = run.pkts;
            run_bytes = run.bytes as u32;
            tcp_seg_ns + gro_ns * f64::from(pkts - 1) + buf_ns * run.extra_bufs as f64
        } else {
            stack_cost(&front, tcp_data, &costs)
        };
        // The used ring's lines and the packets' buffers, which the back end wrote from another
        // socket (profile `[numa]`).
        let far = d.rxq.far;
        let cross = self.profile().numa.as_ref().filter(|_| far).map_or(0.0, |n| n.cross_ns(pkts, run_bytes));
        let d = self.net(dev);
        let cost = d.napi.start_receive(now, cost + cross, poll_ns, pkts);
        self.run_task(now, v, Task::NapiRx, round_ns(cost));
        true
    }

    fn napi_rx_done(&mut self, now: Time, v: u32) {
        let vm = self.vcpu_ref(v).vm as usize;
        let (first, n) = self.vm_devs(vm);
        // The poll whose receive this was (a VM's only device, or the one receiving on `v`).
        let dev = if n == 1 { first } else { (first..first + n).find(|&d| self.net(d).napi.receiving_on(v)).expect("a receive under way") };
        let d = self.net(dev);
        let pkts = d.napi.received();
        let mut pkt = d.rxq.poll_and_refill().expect("NAPI receive without a used buffer");
        if let Some(vf) = d.device.assigned() {
            vf.on_rx(pkt.bytes);
        }
        for _ in 1..pkts {
            let next = d.rxq.poll_and_refill().expect("a GRO run of used packets");
            if let Some(vf) = d.device.assigned() {
                vf.on_rx(next.bytes);
            }
            gro::merge(&mut pkt, &next);
        }
        d.napi.received_life += u64::from(pkt.segs);
        if !d.device.is_assigned() {
            // The refill is a write to the RX ring: a back end that watches it sees it.
            self.backend_written(now, dev, Notice::RxKick);
        }
        if self.net(dev).mtvd.is_some() {
            self.mtvd_dispatch(v, pkt);
            return self.enter(now, v);
        }
        // TCP data wakes its reader; an ICMP echo answered here wakes nobody.
        let data = pkt.bytes > 0 && self.app_receives_tcp_data(vm);
        if self.app_deliver(now, v, dev, pkt) {
            // The softirq went on with a step of its own (TCP's ACK); Linux wakes the reader
            // before it (`sk_data_ready`, then `__tcp_ack_snd_check`): the wake-up follows the
            // step here, before NAPI's next packet. (A reader left asleep with its socket
            // full never reads again: the stream stalls.)
            self.net(dev).napi.wake_due = data;
            return;
        }
        if self.wake_app(now, v, dev) {
            return;
        }
        self.enter(now, v);
    }

    fn wake_app(&mut self, now: Time, v: u32, dev: u32) -> bool {
        let vm = self.vcpu_ref(v).vm as usize;
        let home = self.net(dev).home as usize;
        let vcpus = self.vm_vcpus(vm);
        let app = vcpus[home % vcpus.len()];
        if app == v || self.app_on_every_vcpu(vm) || !self.vcpu_ref(app).wants_resched_ipi() {
            return false;
        }
        self.resched_ipis(now, v, std::iter::once(app))
    }
}
