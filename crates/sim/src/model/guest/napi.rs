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

use crate::engine::{Time, round_ns};
use crate::model::guest::ctx::Kernel;
use crate::model::hypervisor::ctx::HvRead;
use crate::model::guest::driver::Driver;
use crate::model::hw::device::Device;
use crate::model::hw::gro;
use crate::model::hw::rxq::{Ctl, RxPkt, RxRing};
use crate::model::guest::mtvd::MtvdOps;
use crate::model::hypervisor::ops::{Irqs, Vcpus};
use crate::model::hypervisor::vcpu::Task;
use crate::model::io::queues::Notice;

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
    /// Packets the receive under way takes off the ring (more than one when GRO merges them).
    merging: u32,
    /// Data was delivered while the softirq started a step of its own (TCP's ACK): the reader's
    /// wake-up (`sk_data_ready`) is raised when that step is done.
    wake_due: bool,
    /// Poll rounds (window).
    pub polls: u64,
    /// Frames received (lifetime, for conservation; a GRO skb counts its frames).
    pub received_life: u64,
    /// When its latest poll round began (several polls on one vCPU take turns by it).
    round_at: Time,
}

/// What NAPI does next on a vCPU (`Napi::next`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NapiStep {
    /// Nothing now: not scheduled on this vCPU, a receive under way, or deferred to ksoftirqd.
    Wait,
    /// The ring was empty: the poll completed and re-enabled the queue's interrupts
    /// (`napi_complete` + `virtqueue_enable_cb_prepare`); the driver's re-check or unmask follows.
    Complete,
    /// Receive the ring's next packet (`Napi::start_receive`); a VF's driver cleans its TX ring
    /// first when a round begins (`ixgbevf_poll`).
    Receive {
        /// A poll round begins here.
        round_start: bool,
    },
}

impl Napi {
    /// The RX interrupt on vCPU `v` (`skb_recv_done` → `napi_schedule`): a poll with `weight`
    /// packets per round, unless one is scheduled already.
    pub(crate) fn schedule(&mut self, v: u32, weight: u32) {
        if !self.scheduled {
            *self = Napi {
                scheduled: true,
                running: false,
                vcpu: v,
                budget: weight,
                round_start: true,
                softirq_left: NETDEV_BUDGET,
                exhausted: false,
                run_start: 0,
                defer_until: 0,
                merging: 0,
                wake_due: false,
                polls: self.polls,
                received_life: self.received_life,
                round_at: self.round_at,
            };
        }
    }

    /// At `now`, vCPU `v` could run NAPI (`force`: it has nothing else to run, so ksoftirqd runs
    /// even when deferred): what the poll does with `rxq`.
    pub(crate) fn next(&mut self, now: Time, v: u32, force: bool, weight: u32, rxq: &mut RxRing) -> NapiStep {
        if !self.scheduled || self.running || self.vcpu != v {
            return NapiStep::Wait;
        }
        if self.exhausted {
            // The softirq run spent its budget: the interrupted task gets as long again.
            self.exhausted = false;
            self.defer_until = now + (now - self.run_start);
        }
        if now < self.defer_until && !force {
            return NapiStep::Wait;
        }
        if self.budget == 0 {
            // Round over with work left: net_rx_action polls again.
            self.budget = weight;
            self.round_start = true;
        }
        if rxq.used.is_empty() {
            rxq.enable_interrupts();
            self.polls += 1;
            self.scheduled = false;
            return NapiStep::Complete;
        }
        NapiStep::Receive { round_start: self.round_start }
    }

    /// On vCPU `v`, a round of this poll is under way with weight left: it goes on before
    /// another poll scheduled there gets its turn (`net_rx_action`'s poll list).
    pub(crate) fn mid_round(&self, v: u32) -> bool {
        self.scheduled && self.vcpu == v && !self.round_start && self.budget > 0
    }

    /// A receive of this poll is under way on vCPU `v` (running or saved on its stack).
    pub(crate) fn receiving_on(&self, v: u32) -> bool {
        self.running && self.vcpu == v
    }

    /// Packets this poll may still take in one receive: its round's and its softirq run's
    /// budget left.
    pub(crate) fn room(&self) -> u32 {
        self.budget.min(self.softirq_left).max(1)
    }

    /// The receive of `pkts` packets (one, or a GRO run, at most [`Napi::room`]) costing
    /// `cost` ns starts at `now`; returns its cost with the round's per-poll cost `poll_ns` if
    /// a round begins with it.
    pub(crate) fn start_receive(&mut self, now: Time, mut cost: f64, poll_ns: f64, pkts: u32) -> f64 {
        debug_assert!(pkts >= 1 && pkts <= self.room());
        if self.round_start {
            self.round_start = false;
            self.polls += 1;
            self.round_at = now;
            cost += poll_ns;
        }
        self.running = true;
        self.merging = pkts;
        self.budget -= pkts;
        if self.softirq_left == NETDEV_BUDGET {
            self.run_start = now;
        }
        self.softirq_left -= pkts;
        if self.softirq_left == 0 {
            self.softirq_left = NETDEV_BUDGET;
            self.exhausted = true;
        }
        cost
    }

    /// The receive finished: how many packets it takes off the ring.
    pub(crate) fn received(&mut self) -> u32 {
        self.running = false;
        std::mem::take(&mut self.merging)
    }
}

/// The guest's per-packet receive costs up the stack (`profile.guest`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct StackCosts {
    ack_ns: f64,
    conn_ns: f64,
    tcp_segment_ns: f64,
    tcp_byte_ns: f64,
    udp_packet_ns: f64,
    udp_byte_ns: f64,
}

impl StackCosts {
    pub(crate) fn of(g: &crate::profile::Guest) -> Self {
        StackCosts {
            ack_ns: g.tcp_rx_ack_ns.value,
            conn_ns: g.tcp_conn_ns.value,
            tcp_segment_ns: g.tcp_rx_segment_ns.value,
            tcp_byte_ns: g.tcp_rx_byte_ns.value,
            udp_packet_ns: g.udp_rx_packet_ns.value,
            udp_byte_ns: g.udp_rx_byte_ns.value,
        }
    }
}

/// What taking one packet `p` up the stack costs (ns), the driver's receive included; `tcp`:
/// the application receives TCP data.
pub(crate) fn stack_cost(p: &RxPkt, tcp: bool, c: &StackCosts) -> f64 {
    if p.ctl == Ctl::Syn {
        // A connection request: request sock, then the child socket and accept().
        c.ack_ns + c.conn_ns
    } else if p.bytes == 0 {
        c.ack_ns
    } else if tcp {
        c.tcp_segment_ns + c.tcp_byte_ns * f64::from(p.bytes)
    } else {
        c.udp_packet_ns + c.udp_byte_ns * f64::from(p.bytes)
    }
}

/// NAPI's operations, for every [`Kernel`].
pub(crate) trait NapiOps {
    /// The RX interrupt handler of device `dev` (`skb_recv_done`): disable callbacks,
    /// schedule NAPI.
    fn napi_schedule(&mut self, v: u32, dev: u32);

    /// At VM entry: run the next NAPI step on `v` if its poll is pending. Returns whether a
    /// task (or an exit) was started. `force`: the vCPU has nothing else to run (ksoftirqd runs
    /// even when deferred).
    fn napi_next(&mut self, now: Time, v: u32, force: bool) -> bool;

    /// [`NapiOps::napi_next`] for device `dev`'s poll.
    fn napi_next_dev(&mut self, now: Time, v: u32, force: bool, dev: u32) -> bool;

    /// One packet received: refill its buffer, hand the ACK to TCP.
    fn napi_rx_done(&mut self, now: Time, v: u32);

    /// NAPI on vCPU `v` handed a packet of device `dev` to the application thread reading it
    /// (`try_to_wake_up` across CPUs; device `dev`'s reader's vCPU is local `home mod vcpus`,
    /// vCPU 0 but for a VM's later VFs): if that thread's vCPU is another one, halted (or halting) or running only
    /// the guest's CPU burn, it gets a reschedule IPI, and the sender's ICR write exits (as a
    /// server worker's wake-up does, `resched_ipi`); its softirq goes on after the exit.
    /// Returns whether that exit was started.
    fn wake_app(&mut self, now: Time, v: u32, dev: u32) -> bool;
}

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
        let (tcp_seg_ns, tcp_byte_ns) = (g.tcp_rx_segment_ns.value, g.tcp_rx_byte_ns.value);
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
        let cost = if d.mtvd.is_some() {
            // MTVD: the driver's descriptor work and the hand-over; a thread takes it up the
            // stack (`mtvd.rs`), one packet at a time (no GRO before the dispatch).
            buf_ns + dispatch_ns
        } else if tcp_data && front.bytes > 0 && front.ctl != Ctl::Syn {
            // The guest's GRO takes the run of this flow's data at the ring's head as one skb
            // up the stack: each packet after the first costs its driver receive and the merge,
            // each buffer after a packet's first its frag (`receive_mergeable`).
            let limit = if d.guest_gro { d.napi.room() } else { 1 };
            let run = gro::guest_run(d.rxq.used.iter(), gro_max, limit);
            pkts = run.pkts;
            tcp_seg_ns + gro_ns * f64::from(pkts - 1) + buf_ns * run.extra_bufs as f64 + tcp_byte_ns * run.bytes as f64
        } else {
            stack_cost(&front, tcp_data, &costs)
        };
        let cost = d.napi.start_receive(now, cost, poll_ns, pkts);
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
        let not_running = u32::from(!self.is_running(app));
        self.resched(now, app) && self.ipi_sent(now, v, not_running)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::hw::rxq::{Ctl, RxPkt};
    use eventpath_policy::notify::Suppression;

    /// A ring with `n` received packets waiting in its used ring.
    fn ring(n: u32) -> RxRing {
        let mut r = RxRing::new(n.max(256), Suppression::EventIdx);
        for _ in 0..n {
            let p = RxPkt::new(100, 0, 0, 0, Ctl::None);
            r.take(&p);
            r.put_used(p);
        }
        r
    }

    /// Receive one packet as the model does: next, then the receive, then its end.
    fn receive(n: &mut Napi, now: Time, r: &mut RxRing) -> NapiStep {
        let step = n.next(now, 0, false, 2, r);
        if let NapiStep::Receive { .. } = step {
            n.start_receive(now, 1000.0, 500.0, 1);
            r.used.pop_front();
            n.received();
        }
        step
    }

    #[test]
    fn an_unscheduled_or_busy_poll_waits_and_another_vcpu_never_polls() {
        let mut r = ring(1);
        let mut n = Napi::default();
        assert_eq!(n.next(0, 0, false, 2, &mut r), NapiStep::Wait);
        n.schedule(0, 2);
        assert_eq!(n.next(0, 1, false, 2, &mut r), NapiStep::Wait, "only the vCPU that took the interrupt polls");
        assert_eq!(n.next(0, 0, false, 2, &mut r), NapiStep::Receive { round_start: true });
        n.start_receive(0, 1000.0, 500.0, 1);
        assert_eq!(n.next(0, 0, false, 2, &mut r), NapiStep::Wait, "one receive at a time");
    }

    #[test]
    fn a_round_pays_its_poll_cost_once_and_a_new_round_starts_after_weight_packets() {
        let mut r = ring(3);
        let mut n = Napi::default();
        n.schedule(0, 2);
        assert_eq!(n.next(0, 0, false, 2, &mut r), NapiStep::Receive { round_start: true });
        assert_eq!(n.start_receive(0, 1000.0, 500.0, 1), 1500.0);
        n.received();
        r.used.pop_front();
        assert_eq!(n.next(0, 0, false, 2, &mut r), NapiStep::Receive { round_start: false });
        assert_eq!(n.start_receive(0, 1000.0, 500.0, 1), 1000.0);
        n.received();
        r.used.pop_front();
        // Weight 2 spent with work left: net_rx_action polls again, a new round.
        assert_eq!(receive(&mut n, 0, &mut r), NapiStep::Receive { round_start: true });
        assert_eq!(n.polls, 2);
    }

    #[test]
    fn a_gro_run_spends_one_budget_unit_per_packet_it_merges() {
        let mut r = ring(3);
        let mut n = Napi::default();
        n.schedule(0, 2);
        assert!(matches!(n.next(0, 0, false, 2, &mut r), NapiStep::Receive { round_start: true }));
        assert_eq!(n.room(), 2);
        n.start_receive(0, 1000.0, 500.0, 2);
        assert_eq!(n.received(), 2, "the receive takes both packets off the ring");
        r.used.pop_front();
        r.used.pop_front();
        assert_eq!(n.next(0, 0, false, 2, &mut r), NapiStep::Receive { round_start: true }, "the round's weight is spent");
    }

    #[test]
    fn an_empty_ring_completes_the_poll_and_a_second_interrupt_schedules_no_second_poll() {
        let mut r = ring(1);
        let mut n = Napi::default();
        n.schedule(0, 2);
        n.schedule(1, 2);
        assert_eq!(n.vcpu, 0, "already scheduled: the second interrupt joins the poll");
        assert!(matches!(receive(&mut n, 0, &mut r), NapiStep::Receive { .. }));
        assert_eq!(n.next(0, 0, false, 2, &mut r), NapiStep::Complete);
        assert!(!n.scheduled);
        assert_eq!(n.next(0, 0, false, 2, &mut r), NapiStep::Wait);
    }

    #[test]
    fn a_spent_softirq_budget_defers_the_rest_unless_the_vcpu_has_nothing_else() {
        let mut r = ring(NETDEV_BUDGET + 1);
        let mut n = Napi::default();
        n.schedule(0, NETDEV_BUDGET + 1);
        for i in 0..NETDEV_BUDGET {
            assert!(matches!(n.next(i as Time * 10 + 100, 0, false, NETDEV_BUDGET + 1, &mut r), NapiStep::Receive { .. }));
            n.start_receive(i as Time * 10 + 100, 1000.0, 500.0, 1);
            r.used.pop_front();
            n.received();
        }
        // The run began at 100 and ends at 3,100: the interrupted task gets as long again.
        assert_eq!(n.next(3_100, 0, false, NETDEV_BUDGET + 1, &mut r), NapiStep::Wait);
        assert_eq!(n.next(6_099, 0, false, NETDEV_BUDGET + 1, &mut r), NapiStep::Wait);
        assert!(matches!(n.next(6_099, 0, true, NETDEV_BUDGET + 1, &mut r), NapiStep::Receive { .. }), "ksoftirqd on an idle vCPU");
    }
}
