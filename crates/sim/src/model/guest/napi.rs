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

use crate::engine::Time;
use crate::model::hw::rxq::{Ctl, RxPkt, RxRing};

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
    pub(in crate::model::guest) wake_due: bool,
    /// Poll rounds (window).
    pub polls: u64,
    /// Frames received (lifetime, for conservation; a GRO skb counts its frames).
    pub received_life: u64,
    /// When its latest poll round began (several polls on one vCPU take turns by it).
    pub(in crate::model::guest) round_at: Time,
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
    udp_packet_ns: f64,
    udp_byte_ns: f64,
}

impl StackCosts {
    pub(crate) fn of(g: &crate::profile::Guest) -> Self {
        StackCosts {
            ack_ns: g.tcp_rx_ack_ns.value,
            conn_ns: g.tcp_conn_ns.value,
            tcp_segment_ns: g.tcp_rx_segment_ns.value,
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
        // The payload is not touched here (the device checksums it): the copy to user space
        // is the reader's (`tcp_rx_byte_ns` per byte in its recv()).
        c.tcp_segment_ns
    } else {
        c.udp_packet_ns + c.udp_byte_ns * f64::from(p.bytes)
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
