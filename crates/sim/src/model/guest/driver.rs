//! The guest's virtio-net driver on the TX side, shared by every workload: `start_xmit` (post a
//! buffer, stop the queue when the ring fills, kick when the device wants it), the qdisc
//! backlog while the queue is stopped, and the TX interrupt that wakes it; an SR-IOV VF's
//! driver (ixgbevf) on the same side: its descriptor posts, its TX clean, its vector's unmask.

use crate::model::hypervisor::vcpu::AfterExit;
use crate::model::hw::virtq::Buf;
use crate::model::hw::vf;
use crate::model::hypervisor::vcpu::Step;
use crate::model::hw::lapic::Vector;
use crate::model::{Ev, Host};
use crate::engine::{EventQueue, Time};
use crate::metrics::ExitReason;

impl Host {
    /// virtio-net `start_xmit` tail: add the buffer to the TX ring, stop the queue if the ring
    /// is full (and ask for a TX interrupt), kick if the device has notifications enabled.
    /// A packet sent while the queue is stopped — by another vCPU's worker, a control segment
    /// or an ACK — waits in the qdisc until the TX interrupt wakes the queue (`tx_irq`).
    pub(crate) fn post_tx(&mut self, now: Time, v: u32, vm: usize, b: Buf, q: &mut EventQueue<Ev>) {
        let dev = self.vms[vm].dev;
        let d = &mut self.devs[dev as usize];
        if d.vf.is_some() {
            // ixgbevf_xmit_frame: a full descriptor ring stops the queue until the TX clean.
            if d.txq.free() == 0 || !d.qdisc.is_empty() {
                d.qdisc.push_back(b);
                self.set_tx_stopped(vm, true);
                return self.enter(now, v, q);
            }
            self.vf_tx(now, dev, b, q);
            if self.devs[dev as usize].txq.free() == 0 {
                self.set_tx_stopped(vm, true);
            }
            return self.enter(now, v, q);
        }
        if d.txq.free() == 0 || !d.qdisc.is_empty() {
            d.qdisc.push_back(b);
            d.txq.want_interrupt();
            self.set_tx_stopped(vm, true);
            return self.enter(now, v, q);
        }
        d.txq.add(b);
        if d.txq.free() == 0 {
            d.txq.want_interrupt();
            self.set_tx_stopped(vm, true);
        }
        if self.devs[dev as usize].txq.kick_prepare() {
            return self.kick_tx(now, v, dev, q);
        }
        // No kick: a back end spinning on the ring (vhost busy polling, a PMD) sees it anyway.
        self.backend_written(now, dev, crate::model::io::queues::Notice::TxKick, q);
        self.enter(now, v, q);
    }

    /// A paced sender's turn on `v`: halt while its queue is stopped (the TX interrupt wakes
    /// it), sleep until its next send is due (`next_at`, ns), else run its `send` step.
    pub(crate) fn paced_send(&mut self, now: Time, v: u32, stopped: bool, next_at: f64, send: Step, cost: Time, q: &mut EventQueue<Ev>) {
        if stopped {
            return self.idle(now, v, None, q);
        }
        let due = next_at.ceil() as Time;
        if due > now {
            return self.idle(now, v, Some(due), q);
        }
        self.run_step(now, v, send, cost, q)
    }

    /// The driver notifies the device of new TX buffers: a kick.
    pub(crate) fn kick_tx(&mut self, now: Time, v: u32, dev: u32, q: &mut EventQueue<Ev>) {
        self.devs[dev as usize].txq.kicks += 1;
        self.kick_exit(now, v, dev, false, q)
    }

    /// A kick: an I/O-instruction exit in which KVM's ioeventfd signals the vhost thread
    /// `exit.io_signal_ns` after the exit began (at most at its end), not at its start.
    /// `rx`: the RX queue's refill kick (else TX's).
    pub(crate) fn kick_exit(&mut self, now: Time, v: u32, dev: u32, rx: bool, q: &mut EventQueue<Ev>) {
        let signal = self.io_signal_ns;
        if signal == 0 {
            self.ioeventfd(now, dev, rx, q);
        } else {
            q.at(now + signal, Ev::Ioeventfd { dev, vcpu: v, rx });
        }
        self.exit(now, v, ExitReason::IoInstruction, AfterExit::Resume, q)
    }

    /// A kick's ioeventfd fires: the back end learns of the queue's new buffers.
    pub(crate) fn ioeventfd(&mut self, now: Time, dev: u32, rx: bool, q: &mut EventQueue<Ev>) {
        let n = if rx { crate::model::io::queues::Notice::RxKick } else { crate::model::io::queues::Notice::TxKick };
        self.notify_backend(now, dev, n, q)
    }

    /// TX interrupt (`skb_xmit_done` → `netif_wake_subqueue`; then `net_tx_action` runs the
    /// qdisc): reclaimed space takes the backlog; the queue stays stopped while the ring fills
    /// again. Returns whether the device must be kicked for buffers added here, and whether a
    /// stopped queue was woken (its writers elsewhere need waking).
    pub(crate) fn tx_irq(&mut self, v: u32) -> (bool, bool) {
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
        let kick = added && d.txq.kick_prepare();
        (kick, self.set_tx_stopped(vm, full) && !full)
    }

    /// The driver stops (`netif_tx_stop_queue`) or wakes its TX queue; the VM's workload sees
    /// it. Returns whether the queue was stopped before.
    pub(crate) fn set_tx_stopped(&mut self, vm: usize, stopped: bool) -> bool {
        let d = &mut self.devs[self.vms[vm].dev as usize];
        let was = std::mem::replace(&mut d.tx_stopped, stopped);
        self.senders[vm].set_stopped(stopped);
        was
    }

    /// A TX interrupt on vCPU `v` woke the queue (`netif_wake_queue`): the writers that halted
    /// on it elsewhere — the application's vCPU, or every server worker's — get a reschedule
    /// IPI (their ICR write is not charged: the EOI or kick exit of `v` follows).
    pub(crate) fn wake_writers(&mut self, now: Time, v: u32, q: &mut EventQueue<Ev>) {
        let vm = self.vcpus[v as usize].vm as usize;
        let all = self.senders[vm].on_every_vcpu();
        let n = if all { self.vms[vm].vcpus.len() } else { 1 };
        for i in 0..n {
            let u = self.vms[vm].vcpus[i];
            if u != v && self.vcpus[u as usize].wants_resched_ipi() {
                self.raise_irq(now, u, Vector::Resched, q);
            }
        }
    }

    /// ixgbevf: the driver posts a TX descriptor and writes the tail (MMIO to the VF's BAR,
    /// no exit); the NIC fetches what its queue for the VF has room for (`hw/vf.rs`).
    fn vf_tx(&mut self, now: Time, dev: u32, b: Buf, q: &mut EventQueue<Ev>) {
        let d = &mut self.devs[dev as usize];
        d.vf.as_mut().expect("a VF device").on_tx(b.bytes);
        d.txq.add(b);
        vf::fetch(now, dev, &mut d.txq, &mut d.wire, &mut self.port.tx, q);
    }

    /// The NAPI poll's TX clean on vCPU `v` (`ixgbevf_clean_tx_irq`, first in
    /// `ixgbevf_poll`): the descriptors the NIC wrote back are reclaimed, so send the qdisc's
    /// backlog and wake a stopped queue — and the writers that halted on it on other vCPUs,
    /// whichever of the interrupt or a poll round's clean finds the room.
    pub(crate) fn vf_tx_clean(&mut self, now: Time, v: u32, dev: u32, q: &mut EventQueue<Ev>) {
        let vm = self.devs[dev as usize].vm as usize;
        while self.devs[dev as usize].txq.free() > 0 {
            let Some(b) = self.devs[dev as usize].qdisc.pop_front() else { break };
            self.vf_tx(now, dev, b, q);
        }
        let full = self.devs[dev as usize].txq.free() == 0;
        if self.set_tx_stopped(vm, full) && !full {
            self.wake_writers(now, v, q);
        }
    }

    /// NAPI completed with the RX ring empty: its last round's TX clean, then unmask the
    /// vector (the RX refills were tail writes). Write-backs while the vector was masked raise
    /// no interrupt of their own: each poll round's clean is what finds them.
    pub(crate) fn vf_unmask(&mut self, now: Time, v: u32, dev: u32, q: &mut EventQueue<Ev>) {
        self.vf_tx_clean(now, v, dev, q);
        self.devs[dev as usize].vf.as_mut().expect("a VF device").unmask();
    }
}
