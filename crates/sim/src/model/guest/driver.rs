//! The guest's virtio-net driver on the TX side, shared by every workload: `start_xmit` (post a
//! buffer, stop the queue when the ring fills, kick when the device wants it), the qdisc
//! backlog while the queue is stopped, and the TX interrupt that wakes it; an SR-IOV VF's
//! driver (ixgbevf) on the same side: its descriptor posts, its TX clean, its vector's unmask;
//! an assigned NVMe-like disk's doorbell and completion interrupt.

use crate::engine::Schedule;
use crate::model::io;
use crate::engine::Time;
use crate::metrics::ExitReason;
use crate::model::guest::ctx::Kernel;
use crate::model::hypervisor::ctx::HvRead;
use crate::model::hypervisor::ctx::Trace;
use crate::model::guest::ops::{Driver, NapiOps};
use crate::model::hw::lapic::Vector;
use crate::model::hw::virtq::Buf;
use crate::model::hw::device::Device;
use crate::model::hypervisor::ops::{Irqs, Vcpus};
use crate::model::hypervisor::vcpu::{AfterExit, Step};
use crate::model::io::queues::Notice;


impl<K: Kernel> Driver for K {
    fn post_tx(&mut self, now: Time, v: u32, dev: u32, b: Buf) {
        let d = self.net(dev);
        if d.device.is_assigned() {
            // ixgbevf_xmit_frame: a full descriptor ring stops the queue until the TX clean.
            if d.txq.free() == 0 || !d.qdisc.is_empty() {
                d.qdisc.push_back(b);
                self.set_tx_stopped(dev, true);
                return self.enter(now, v);
            }
            self.vf_tx(now, dev, b);
            if self.net(dev).txq.free() == 0 {
                self.set_tx_stopped(dev, true);
            }
            return self.enter(now, v);
        }
        if d.txq.free() == 0 || !d.qdisc.is_empty() {
            d.qdisc.push_back(b);
            d.txq.want_interrupt();
            self.set_tx_stopped(dev, true);
            return self.enter(now, v);
        }
        d.txq.add(b);
        if d.txq.free() == 0 {
            d.txq.want_interrupt();
            self.set_tx_stopped(dev, true);
        }
        self.notify_tx(now, v, dev)
    }

    fn notify_tx(&mut self, now: Time, v: u32, dev: u32) {
        if matches!(*self.net(dev).device, Device::Nvme(_)) {
            // nvme_queue_rq / nvme_commit_rqs: the submission queue's tail doorbell, an MMIO
            // store to the BAR VFIO maps into the guest: no exit (counted as the queue's kick).
            self.net(dev).txq.kicks += 1;
            self.trace(now, Trace::Kick { v, dev, rx: false, exit: false });
            self.vf_tail_written(now, dev);
            return self.enter(now, v);
        }
        if self.net(dev).txq.kick_prepare() {
            return self.kick_tx(now, v, dev);
        }
        self.trace(now, Trace::Kick { v, dev, rx: false, exit: false });
        self.backend_written(now, dev, Notice::TxKick);
        self.enter(now, v);
    }

    fn paced_send(&mut self, now: Time, v: u32, stopped: bool, next_at: f64, send: Step, cost: Time) {
        if stopped {
            return self.idle(now, v, None);
        }
        let due = next_at.ceil() as Time;
        if due > now {
            return self.idle(now, v, Some(due));
        }
        self.run_step(now, v, send, cost)
    }

    fn kick_tx(&mut self, now: Time, v: u32, dev: u32) {
        self.net(dev).txq.kicks += 1;
        self.kick_exit(now, v, dev, false)
    }

    fn kick_exit(&mut self, now: Time, v: u32, dev: u32, rx: bool) {
        self.trace(now, Trace::Kick { v, dev, rx, exit: true });
        let kind = &*self.net(dev).device;
        let (xen_pv, xen_e1000) = (matches!(kind, Device::XenPv), matches!(kind, Device::XenE1000));
        if xen_pv {
            // netfront's notify: an EVTCHNOP_send hypercall (no VM exit: the trap into Xen,
            // counted with the "other" exits); Xen sets dom0's pending bit and netback's thread
            // is woken at once.
            self.ioeventfd(now, dev, rx);
            return self.exit(now, v, ExitReason::Other, AfterExit::Resume);
        }
        // Xen FV: the doorbell write (TDT/RDT) is a synchronous ioreq to QEMU in dom0; the
        // vCPU waits its round trip (`xen.ioreq_ns`, on top of the exit), QEMU's per-packet
        // work is its dom0 thread's.
        let ioreq = match (xen_e1000, &self.profile().xen) {
            (true, Some(x)) => crate::engine::round_ns(x.ioreq_ns.value),
            _ => 0,
        };
        let signal = self.io_signal_ns();
        if signal == 0 {
            self.ioeventfd(now, dev, rx);
        } else {
            self.kq().schedule(now + signal, io::Event::Ioeventfd { dev, vcpu: v, rx });
        }
        self.exit_for(now, v, ExitReason::IoInstruction, AfterExit::Resume, ioreq)
    }

    fn ioeventfd(&mut self, now: Time, dev: u32, rx: bool) {
        let n = if rx { Notice::RxKick } else { Notice::TxKick };
        self.notify_backend(now, dev, n)
    }

    fn irq_handled(&mut self, now: Time, v: u32, vec: Vector) -> bool {
        let vm = self.vcpu_ref(v).vm as usize;
        match vec {
            Vector::NetTx => {
                let mut kick = false;
                let (first, n) = self.vm_devs(vm);
                for dev in first..first + n {
                    if n > 1 && !self.took_irq(v, dev, false) {
                        continue;
                    }
                    let (k, woke) = self.tx_irq(dev);
                    kick |= k;
                    if k && n > 1 {
                        *self.net(dev).tx_kick_owed = true;
                    }
                    // A disk's completion wakes the job that waits for it on its queue's vCPU
                    // (the bio's end, try_to_wake_up: a reschedule IPI where the interrupt was
                    // routed to another vCPU).
                    if woke || matches!(*self.net(dev).device, Device::VirtioBlk) {
                        self.wake_writers(now, v, dev);
                    }
                    self.app_tx_interrupt(now, v, dev);
                }
                return kick;
            }
            Vector::NetRx => {
                let (first, n) = self.vm_devs(vm);
                for dev in first..first + n {
                    if n == 1 || self.took_irq(v, dev, true) {
                        self.napi_schedule(v, dev);
                    }
                }
            }
            Vector::Vf => {
                // ixgbevf: one vector per queue pair; NAPI cleans TX and receives RX. Of a VM's
                // several VFs, each whose message came to this vCPU (each VF's own vector; the
                // model's LAPIC has one VF vector, so the handler serves all of them).
                let (first, n) = self.vm_devs(vm);
                for dev in first..first + n {
                    let d = self.net(dev);
                    if n > 1 && *d.irq_to != Some(v) {
                        continue;
                    }
                    *d.irq_to = None;
                    if matches!(*d.device, Device::Nvme(_)) {
                        // nvme_irq: the completion queue's new entries end their requests; the
                        // job waiting for one is woken (a reschedule IPI if it is elsewhere).
                        self.wake_writers(now, v, dev);
                        self.app_tx_interrupt(now, v, dev);
                        continue;
                    }
                    self.vf_tx_clean(now, v, dev);
                    self.napi_schedule(v, dev);
                }
            }
            // The workload's own interrupt sources: the root hands them to it (`cx.rs`).
            Vector::Msi | Vector::CallFunction => unreachable!("a workload's vector, not the driver's"),
            Vector::Timer | Vector::Resched => {}
        }
        false
    }

    fn took_irq(&mut self, v: u32, dev: u32, rx: bool) -> bool {
        let d = self.net(dev);
        let to = if rx { d.irq_to } else { d.tx_irq_to };
        let mine = *to == Some(v);
        if mine {
            *to = None;
        }
        mine
    }

    fn tx_irq(&mut self, dev: u32) -> (bool, bool) {
        let d = self.net(dev);
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
        (kick, self.set_tx_stopped(dev, full) && !full)
    }

    fn set_tx_stopped(&mut self, dev: u32, stopped: bool) -> bool {
        let was = std::mem::replace(self.net(dev).tx_stopped, stopped);
        self.app_set_stopped(dev, stopped);
        was
    }

    fn wake_writers(&mut self, now: Time, v: u32, dev: u32) {
        let vm = self.vcpu_ref(v).vm as usize;
        let every = self.app_on_every_vcpu(vm);
        let home = self.net(dev).home as usize % self.vm_vcpus(vm).len();
        let writers = if every { 0..self.vm_vcpus(vm).len() } else { home..home + 1 };
        for i in writers {
            let u = self.vm_vcpus(vm)[i];
            if u != v && self.vcpu_ref(u).wants_resched_ipi() {
                self.resched(now, u);
            }
        }
    }

    fn vf_tx(&mut self, now: Time, dev: u32, b: Buf) {
        let d = self.net(dev);
        let doorbell = matches!(d.device, Device::Vdpa(_));
        d.device.assigned().expect("a VF device").on_tx(b.bytes);
        if doorbell {
            // vDPA: virtqueue_notify to the mapped doorbell page, a posted MMIO write.
            d.txq.kicks += 1;
        }
        d.txq.add(b);
        self.vf_tail_written(now, dev);
    }

    fn vf_tx_clean(&mut self, now: Time, v: u32, dev: u32) {
        while self.net(dev).txq.free() > 0 {
            let Some(b) = self.net(dev).qdisc.pop_front() else { break };
            self.vf_tx(now, dev, b);
        }
        let full = self.net(dev).txq.free() == 0;
        if self.set_tx_stopped(dev, full) && !full {
            self.wake_writers(now, v, dev);
        }
    }

    fn vf_unmask(&mut self, now: Time, v: u32, dev: u32) {
        self.vf_tx_clean(now, v, dev);
        self.net(dev).device.assigned().expect("a VF device").unmask();
    }
}
