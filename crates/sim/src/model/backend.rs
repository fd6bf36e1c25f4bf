//! The model's side of the request-handling seam (`io/`): it tells a device's back end of new
//! work, runs the back-end threads' events, carries out what each decides (`io::Next`) on the
//! host scheduler and the event queue, and applies the device's side of every item a back end
//! finishes (`complete`: the used ring, the wire, the guest's interrupt).

use crate::engine::Schedule;
use crate::model::hw;
use crate::model::io;
use crate::model::io::queues::{DevRings, Notice, Work};
use crate::model::io::{Next, Signal, View};
use crate::model::hw::lapic::Vector;
use crate::model::hw::rxq::{RxPkt, RxRing};
use crate::model::hw::virtq::Virtq;
use crate::model::event::Ev;
use crate::model::host::{Host, NetDev};
use crate::model::hypervisor::ops::{Irqs, Threads};
use crate::engine::{EventQueue, Fired, Time};
use std::collections::VecDeque;

impl DevRings for [NetDev] {
    fn tx(&mut self, dev: u32) -> &mut Virtq {
        &mut self[dev as usize].txq
    }
    fn rx(&mut self, dev: u32) -> &mut RxRing {
        &mut self[dev as usize].rxq
    }
    fn sock(&mut self, dev: u32) -> &mut VecDeque<RxPkt> {
        &mut self[dev as usize].rx_sock
    }
}

/// A back end's view of the host at `$now`: the devices' queues, costs and observations.
/// `$t`: the back-end thread asked (its pCPU's socket decides what a VM's memory costs it).
macro_rules! view {
    ($h:ident, $t:expr, $yield_wanted:expr) => {
        View {
            socket: Some($h.profile.socket_of($h.sched.thread_cpu($h.vcpus.len() as u32 + $t))),
            rings: &mut $h.devs[..],
            costs: &$h.io.costs,
            yield_wanted: $yield_wanted,
            dev_vm: &$h.io.dev_vm,
        }
    };
}

impl Host {
    /// A back end's event.
    pub(crate) fn io_event(&mut self, now: Time, e: io::Event, q: &mut EventQueue<Ev>) {
        match e {
            io::Event::IoStep { thread } => self.io_step(now, thread, q),
            io::Event::IoWake { thread } => self.io_wake(now, thread, q),
            io::Event::IoPoll { thread } => self.io_poll(now, thread, q),
            io::Event::IrqDeadline { dev, rx } => self.irq_deadline(now, dev, rx, q),
            // A kick's ioeventfd fires: the back end learns of the queue's new buffers.
            io::Event::Ioeventfd { dev, rx, .. } => self.notify_backend(now, dev, if rx { Notice::RxKick } else { Notice::TxKick }, q),
        }
    }

    /// Thread id of back-end thread `t` (they come right after the vCPU threads).
    pub(crate) fn io_thread_tid(&self, t: u32) -> u32 {
        self.vcpus.len() as u32 + t
    }

    /// Is a preemption of back-end thread `t` pending (it yields between items)?
    fn io_yield_wanted(&self, t: u32) -> bool {
        self.sched.need_resched(self.sched.thread_cpu(self.io_thread_tid(t)))
    }

    /// Back-end thread `t` served an item of device `dev`'s RX ring (else its TX ring): the ring
    /// is `far` when the thread's pCPU is on another socket than the device's home vCPU's, so
    /// that the guest pays for the lines it touched (profile `[numa]`; never without it).
    fn mark_far(&mut self, t: u32, dev: u32, rx: bool) {
        if self.profile.numa.is_none() {
            return;
        }
        let d = &self.devs[dev as usize];
        let vm = &self.vms[d.vm as usize];
        let home = vm.vcpus[(d.home as usize) % vm.vcpus.len()];
        let socket = |tid: u32| self.profile.socket_of(self.sched.thread_cpu(tid));
        let far = socket(self.io_thread_tid(t)) != socket(home);
        let d = &mut self.devs[dev as usize];
        if rx {
            d.rxq.far = far;
        } else {
            d.txq.far = far;
        }
    }

    /// Thread id of the back-end thread that serves device `dev`, if one does (not a VF's).
    pub(crate) fn backend_tid(&self, dev: u32) -> Option<u32> {
        self.io.of_dev(dev).map(|(t, _)| self.io_thread_tid(t))
    }

    /// Work for device `dev`'s back end: a kick (its ioeventfd) or a packet on its tap socket.
    pub(crate) fn notify_backend(&mut self, now: Time, dev: u32, n: Notice, q: &mut EventQueue<Ev>) {
        let Some((t, local)) = self.io.of_dev(dev) else { return };
        let s = self.io.threads[t as usize].notice(now, local, n, &mut view!(self, t, false));
        self.io_signal(now, t, s, q);
    }

    /// Work written on device `dev` without a notice (its kicks are off): a thread spinning on
    /// that ring, or waiting for a write to it, sees it.
    pub(crate) fn backend_written(&mut self, now: Time, dev: u32, n: Notice, q: &mut EventQueue<Ev>) {
        let Some((t, _)) = self.io.of_dev(dev) else { return };
        let s = self.io.threads[t as usize].written(now, n);
        self.io_signal(now, t, s, q);
    }

    fn io_signal(&mut self, now: Time, t: u32, s: Signal, q: &mut EventQueue<Ev>) {
        match s {
            Signal::None => {}
            Signal::Wake => {
                let tid = self.io_thread_tid(t);
                self.cx(q).wake_thread(now, tid);
            }
            Signal::EndSpin => q.schedule(now, io::Event::IoPoll { thread: t }),
        }
    }

    /// Thread `t`'s sleep timer fires: its timed sleep ends (`host.timer_wakeup_ns` to run
    /// again from idle), or ends later.
    pub(crate) fn io_wake(&mut self, now: Time, t: u32, q: &mut EventQueue<Ev>) {
        match self.io.threads[t as usize].sleep_over(now) {
            Fired::Expired => {
                let tid = self.io_thread_tid(t);
                self.sched.wake_by_timer(now, tid);
                self.cx(q).drain(now);
            }
            Fired::Reschedule(at) => q.schedule(at, io::Event::IoWake { thread: t }),
            Fired::Idle => {}
        }
    }

    /// Thread `t`'s spin timer fires (its window, or work seen): it goes on.
    pub(crate) fn io_poll(&mut self, now: Time, t: u32, q: &mut EventQueue<Ev>) {
        let yield_wanted = self.io_yield_wanted(t);
        if let Some(n) = self.io.threads[t as usize].spin_over(now, &mut view!(self, t, yield_wanted)) {
            self.io_apply(now, t, n, q);
        }
    }

    /// Thread `t` runs on its pCPU: after a wake-up, or resuming after a preemption.
    pub(crate) fn io_run(&mut self, now: Time, t: u32, wake_cpu: Time, q: &mut EventQueue<Ev>) {
        self.io.threads[t as usize].owe(wake_cpu);
        let yield_wanted = self.io_yield_wanted(t);
        let n = self.io.threads[t as usize].run(now, &mut view!(self, t, yield_wanted));
        self.io_apply(now, t, n, q);
    }

    /// Thread `t`'s item (or owed time) is done: complete the item, let its policy see it, and
    /// go on — or yield between items, as `vhost_worker` does.
    pub(crate) fn io_step(&mut self, now: Time, t: u32, q: &mut EventQueue<Ev>) {
        if let Some(later) = self.io.threads[t as usize].step_due() {
            return q.schedule(now + later, io::Event::IoStep { thread: t });
        }
        self.tr_io_step_end(now, t);
        if let Some((dev, w)) = self.io.threads[t as usize].finish_item() {
            self.mark_far(t, dev, matches!(w, Work::Rx(_)));
            self.complete(now, dev, w, q);
            self.io.threads[t as usize].after_item(now, dev, w, &mut view!(self, t, false));
        }
        if self.io_yield_wanted(t) {
            return self.io_apply(now, t, Next::Yield, q);
        }
        let n = self.io.threads[t as usize].next(now, &mut view!(self, t, false));
        self.io_apply(now, t, n, q);
    }

    /// Carry out what thread `t` does next.
    fn io_apply(&mut self, now: Time, t: u32, n: Next, q: &mut EventQueue<Ev>) {
        match n {
            Next::Step(at) => {
                self.io.threads[t as usize].step_started();
                self.tr_io_step(now, t);
                q.schedule(at, io::Event::IoStep { thread: t })
            }
            Next::Spin(event) => {
                self.tr_io_spin(now, t);
                if let Some(at) = event {
                    q.schedule(at, io::Event::IoPoll { thread: t });
                }
            }
            Next::Yield => {
                let cpu = self.sched.thread_cpu(self.io_thread_tid(t));
                self.io.threads[t as usize].off_cpu(now);
                self.tr_io_off(now, t);
                self.cx(q).leave_cpu(now, cpu, false);
            }
            Next::Sleep(timed) => {
                let cpu = self.sched.thread_cpu(self.io_thread_tid(t));
                self.io.threads[t as usize].off_cpu(now);
                self.tr_io_off(now, t);
                if let Some(at) = timed {
                    q.schedule(at, io::Event::IoWake { thread: t });
                }
                self.cx(q).leave_cpu(now, cpu, true);
            }
        }
    }

    /// The device's side of an item a back end finished: TX hands the buffer to the wire and
    /// returns it to the used ring; RX puts the filled buffer in the used ring. Either may
    /// interrupt the guest if it asked.
    pub(crate) fn complete(&mut self, now: Time, dev: u32, w: Work, q: &mut EventQueue<Ev>) {
        let d = &mut self.devs[dev as usize];
        match w {
            Work::Tx(b) => {
                let due = d.irqs.completed(now, false, b.bytes as u64);
                let interrupt = d.txq.put_used();
                self.app_tx_used(now, dev, b, q);
                let d = &mut self.devs[dev as usize];
                // A disk's request completes in place; a NIC's frame goes on the link.
                if !matches!(d.device, hw::device::Device::VirtioBlk) {
                    if let Some(arrive) = d.wire.send(now, b, &mut self.port.tx) {
                        q.schedule(arrive, hw::Event::WireDone { dev });
                    }
                }
                if d.irqs.raise(now, dev, false, due, interrupt, q) {
                    self.device_irq(now, dev, Vector::NetTx, q);
                }
            }
            Work::Rx(pkt) => {
                let due = d.irqs.completed(now, true, pkt.bytes as u64);
                let interrupt = d.rxq.put_used(pkt);
                if d.irqs.raise(now, dev, true, due, interrupt, q) {
                    self.device_irq(now, dev, Vector::NetRx, q);
                }
            }
        }
    }

    /// A queue's held interrupt is due.
    pub(crate) fn irq_deadline(&mut self, now: Time, dev: u32, rx: bool, q: &mut EventQueue<Ev>) {
        if self.devs[dev as usize].irqs.deadline(now, rx) {
            self.device_irq(now, dev, if rx { Vector::NetRx } else { Vector::NetTx }, q);
        }
    }

    /// Raise device `dev`'s interrupt `vec` on the vCPU its VM's routing picks.
    fn device_irq(&mut self, now: Time, dev: u32, vec: Vector, q: &mut EventQueue<Ev>) {
        let d = &mut self.devs[dev as usize];
        if vec == Vector::NetRx {
            d.rxq.interrupts += 1;
        } else {
            d.txq.interrupts += 1;
        }
        let (vm, home) = (d.vm as usize, d.home);
        // Queue pair i's vectors have vCPU i as their affinity (`virtnet_set_affinity`); a
        // one-queue device's, vCPU 0.
        let req = crate::model::hypervisor::routing::IrqRouting::device_request(dev, vec);
        let req = eventpath_policy::routing::RouteRequest { dest: home as usize % self.vms[vm].vcpus.len(), ..req };
        let target = self.route_irq(now, vm, req, q);
        if self.vms[vm].ndevs > 1 {
            // Which queue pair's interrupt a handler on `target` serves (one LAPIC vector per
            // direction in the model).
            let g = &mut self.devs[dev as usize].guest;
            *(if vec == Vector::NetRx { &mut g.irq_to } else { &mut g.tx_irq_to }) = Some(target);
        }
        self.cx(q).raise_irq(now, target, vec);
    }
}
