//! The multi-threaded VF driver (MTVD; CGR/AIR/MTVD paper §4.4, Fig. 7; `[vm.net] mtvd`).
//!
//! A VF driver's NAPI runs on the one vCPU that took its interrupt, so a VM receives at most
//! what one vCPU can take up the stack (§3.3: ~5.6 Gbit/s at one full core). MTVD gives the
//! driver a thread pool — kernel threads each bound to a vCPU — and a dispatcher: the poll
//! takes each packet off the RX ring (the driver's descriptor work, `guest.rx_buffer_ns`) and
//! hands it over (`guest.rx_dispatch_ns`) to the threads in turn (§4.4's round robin,
//! packet `i` to thread `i mod N`); the thread takes it up the stack (IP, TCP or UDP, the
//! socket) at the cost NAPI would have paid, and wakes the reader. The threads are those of
//! the VM's *other* vCPUs than the one polling (the reading of Fig. 7: the work is
//! handed away from the interrupted vCPU, which keeps the interrupts, the poll and the
//! dispatch); §4.4 does not say whether the polling CPU's own thread takes a share.
//!
//! The dispatcher wakes a thread asleep on a halted vCPU with a reschedule IPI (the sender's ICR
//! write exits unless the delivery mode virtualizes it) once per poll round, when the round's
//! packets are handed out — at the round's end or the poll's completion — as Linux RPS sends
//! its IPIs at the end of `net_rx_action`, not one per packet (§4.4 does not say when its
//! threads are woken; one IPI per packet would wake a thread for every few packets). One exit
//! is charged for the IPIs of a round, however many threads it wakes. The threads run at the priority of
//! the guest's receive work (after NAPI, before the application's steps), as ksoftirqd does;
//! a thread on the dispatcher's own vCPU runs when the poll is done or deferred. The packets
//! of one flow reach the socket out of order across threads; the model's TCP receiver counts
//! bytes, so the out-of-order queue's cost and the duplicate ACKs Linux would send are not
//! modelled (docs/model.md).

use crate::model::hw::rxq::RxPkt;
use std::collections::VecDeque;

/// The dispatcher's and the thread pool's state of one VF.
#[derive(Debug)]
pub struct Mtvd {
    /// Per thread (thread `w` bound to the VM's vCPU `w`): the packets handed to it, in order.
    pub(in crate::model::guest) queues: Vec<VecDeque<RxPkt>>,
    /// Packets dispatched so far: the next goes to thread `next mod N`.
    next: u64,
    /// Per thread: a packet's receive is under way (or saved on its vCPU).
    running: Vec<bool>,
    /// Per thread: data was delivered while the socket started a step of its own (TCP's ACK):
    /// the reader's wake-up is raised when that step is done (as `Napi` does).
    pub(in crate::model::guest) wake_due: Vec<bool>,
    /// Packets (frames) the threads took up the stack (lifetime).
    pub processed_life: u64,
}

impl Mtvd {
    /// A pool of threads for a VM of `vcpus` vCPUs (at least 2), one bound to each.
    pub fn new(vcpus: usize) -> Self {
        assert!(vcpus >= 2, "MTVD needs another vCPU (checked with the scenario)");
        let threads = vcpus;
        Mtvd {
            queues: vec![VecDeque::new(); threads],
            next: 0,
            running: vec![false; threads],
            wake_due: vec![false; threads],
            processed_life: 0,
        }
    }

    /// The poll on vCPU `from` (its index in the VM) hands `pkt` to the next of the other
    /// vCPUs' threads in turn: that thread's index, and whether it was asleep (nothing
    /// queued, nothing under way) and needs waking.
    pub fn dispatch(&mut self, pkt: RxPkt, from: usize) -> (usize, bool) {
        let k = (self.next % (self.queues.len() as u64 - 1)) as usize;
        let w = if k >= from { k + 1 } else { k };
        self.next += 1;
        let asleep = self.queues[w].is_empty() && !self.running[w];
        self.queues[w].push_back(pkt);
        (w, asleep)
    }

    /// Thread `w` starts its next packet, if it is free and has one: a copy of that packet.
    pub fn start(&mut self, w: usize) -> Option<RxPkt> {
        if self.running[w] {
            return None;
        }
        let pkt = *self.queues[w].front()?;
        self.running[w] = true;
        Some(pkt)
    }

    /// Thread `w`'s receive finished: the packet it took up the stack.
    pub fn done(&mut self, w: usize) -> RxPkt {
        self.running[w] = false;
        let pkt = self.queues[w].pop_front().expect("an MTVD receive without a queued packet");
        self.processed_life += u64::from(pkt.segs);
        pkt
    }

    /// Thread `w` has packets handed to it and none under way (it needs to run).
    pub(in crate::model::guest) fn waiting(&self, w: usize) -> bool {
        !self.queues[w].is_empty() && !self.running[w]
    }

    /// Frames handed over and not yet taken up the stack.
    pub fn queued_segs(&self) -> u64 {
        self.queues.iter().flatten().map(|p| u64::from(p.segs)).sum()
    }
}



#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::hw::rxq::Ctl;

    fn pkt(bytes: u32) -> RxPkt {
        RxPkt::new(bytes, 0, 0, 0, Ctl::None)
    }

    #[test]
    fn packets_go_round_robin_to_the_other_vcpus_and_only_a_sleeping_thread_is_woken() {
        let mut m = Mtvd::new(3);
        assert_eq!(m.dispatch(pkt(1), 1), (0, true), "the polling vCPU 1 keeps none");
        assert_eq!(m.dispatch(pkt(2), 1), (2, true));
        assert_eq!(m.dispatch(pkt(3), 1), (0, false), "thread 0 has a packet queued: awake");
        assert_eq!(m.queued_segs(), 3);
        assert_eq!(m.start(0).map(|p| p.bytes), Some(1));
        assert!(m.start(0).is_none(), "one receive at a time per thread");
        assert_eq!(m.done(0).bytes, 1);
        assert_eq!(m.start(0).map(|p| p.bytes), Some(3), "in dispatch order");
        assert_eq!(m.done(0).bytes, 3);
        assert!(m.start(0).is_none());
        assert_eq!(m.dispatch(pkt(5), 1), (2, false), "thread 2 still holds packet 2");
        assert_eq!(m.dispatch(pkt(6), 1), (0, true), "thread 0 drained its queue: asleep again");
        assert_eq!(m.dispatch(pkt(7), 0), (2, false), "a poll on vCPU 0 hands to 1 and 2 in turn");
        assert_eq!(m.dispatch(pkt(8), 0), (1, true));
        assert_eq!(m.processed_life, 2);
    }
}
