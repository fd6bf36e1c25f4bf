//! The model root's side of the lower layers' contexts: [`Cx`], through which the hypervisor
//! (`hypervisor::ctx::Machine`) and the guest kernel (`guest::ctx::Kernel`) act on the host.
//! Each method is one field or one call into the layer that owns it; the calls upward that
//! remain (what the guest runs at a VM entry, what a finished task means, the workload's part)
//! are made here, so neither layer names one above it. What the hypervisor hands up at the end
//! of an event (`hypervisor::ops::Up`: a back-end thread's turn, a finished guest task, the TX
//! kick after a handler) is applied here ([`Cx::apply_up`]); the time host interrupt work takes
//! from a back-end thread, in `port.rs`.
//!
//! Why one value holds the whole host: a VM entry runs guest work, which exits into the
//! hypervisor, which may enter the guest again — the call chain crosses the layers both ways
//! within one event, so no split of the host's fields could be handed out for its length
//! (the workloads' `AppCtx` says the same).

use crate::engine::{EventQueue, Time};
use crate::model::guest::ctx::{DevView, Kernel};
use crate::model::guest::ops::Driver;
use crate::model::guest::ops::MtvdOps;
use crate::model::guest::ops::NapiOps;
use crate::model::hw::lapic::Vector;
use crate::model::hw::vf;
use crate::model::hw::rxq::RxPkt;
use crate::model::hypervisor::ctx::{Machine, Own, Parts, Seen, Trace};
use crate::model::hypervisor::ops::{Threads, Up};
use crate::model::hypervisor::vcpu::Task;
use crate::model::io::queues::Notice;
use crate::model::event::Ev;
use crate::model::host::Host;
use crate::model::host::NetDev;

/// The host and the event queue, for one event's handling.
pub(crate) struct Cx<'a> {
    h: &'a mut Host,
    q: &'a mut EventQueue<Ev>,
}

impl<'a> Cx<'a> {
    /// The context of `h` for an event that schedules into `q`.
    pub(crate) fn new(h: &'a mut Host, q: &'a mut EventQueue<Ev>) -> Self {
        Cx { h, q }
    }
}

impl Cx<'_> {
    /// Carry out what a hypervisor event's handling handed up (`hypervisor::ops::Up`), in the
    /// order it would have been called: a back-end thread's run, a finished guest task's owner,
    /// the driver's TX kick — then the pCPU's poke that follows a switch-in.
    pub(crate) fn apply_up(&mut self, now: Time, up: Up) {
        match up {
            Up::None => {}
            Up::IoRun { thread, wake_cpu, cpu } => {
                self.h.io_run(now, thread, wake_cpu, self.q);
                self.poke(now, cpu);
            }
            Up::TaskDone { v, task } => match task {
                Task::App(s) => self.h.app_step_done(now, v, s, self.q),
                Task::NapiRx => self.napi_rx_done(now, v),
                Task::Backlog => self.mtvd_done(now, v),
                Task::Irq(_) | Task::Burn | Task::Lookbusy => unreachable!("the hypervisor ends its handlers, the burn and the spinner"),
            },
            Up::IoHeld { thread, held } => self.h.io.threads[thread as usize].interrupted(held),
            Up::KickTx { v, poke } => {
                let vm = &self.h.vms[self.h.vcpus[v as usize].vm as usize];
                let (first, n) = (vm.dev, vm.ndevs);
                if n == 1 {
                    self.kick_tx(now, v, first);
                } else {
                    // The queue pairs whose TX interrupt's handler added buffers: the first's
                    // kick is the exit; another's (two queues' TX interrupts on one vCPU at
                    // once, which their affinities make rare) rides on it (its ioeventfd).
                    let owed: Vec<u32> = (first..first + n).filter(|&d| std::mem::take(&mut self.h.devs[d as usize].guest.tx_kick_owed)).collect();
                    for &d in owed.iter().skip(1) {
                        self.h.devs[d as usize].txq.kicks += 1;
                        self.ioeventfd(now, d, false);
                    }
                    self.kick_tx(now, v, owed.first().copied().unwrap_or(first));
                }
                if let Some(cpu) = poke {
                    self.poke(now, cpu);
                }
            }
        }
    }
}

impl Machine for Cx<'_> {
    type Q = EventQueue<Ev>;
    #[inline]
    fn parts(&mut self, _: Own) -> Parts<'_, EventQueue<Ev>> {
        let h = &mut *self.h;
        Parts {
            vcpus: &mut h.vcpus,
            sched: &mut h.sched,
            switch_in: &mut h.switch_in,
            softirqs: &mut h.softirqs,
            pcpu_busy: &mut h.pcpu_busy,
            routing: &mut h.routing,
            cosched: &mut h.cosched,
            profile: &h.profile,
            q: self.q,
        }
    }
    #[inline]
    fn seen(&self) -> Seen<'_> {
        let h = &*self.h;
        Seen { vcpus: &h.vcpus, sched: &h.sched, profile: &h.profile, setup: &h.hv, waker: h.waker }
    }

    fn guest_softirq(&mut self, now: Time, v: u32, force: bool) -> bool {
        self.napi_next(now, v, force) || self.mtvd_next(now, v)
    }
    fn guest_next(&mut self, now: Time, v: u32) {
        self.h.workload_next(now, v, self.q)
    }
    fn guest_idle_thread(&mut self, now: Time, v: u32) -> crate::model::hypervisor::vcpu::IdleThread {
        self.h.lookbusy_idle(now, v)
    }
    fn guest_handled(&mut self, now: Time, v: u32, vec: Vector) -> bool {
        let vm = self.h.vcpus[v as usize].vm as usize;
        match vec {
            // A workload's own interrupt sources (an MSI device's vector, a call-function IPI):
            // their handlers are the workload's; every other vector's, the guest kernel's.
            Vector::Msi => self.h.app_msi_handled(now, v, vm),
            Vector::CallFunction => self.h.app_ipi_handled(now, v, vm, self.q),
            _ => return self.irq_handled(now, v, vec),
        }
        false
    }


    #[inline]
    fn trace(&mut self, now: Time, e: Trace) {
        if self.h.trace.is_some() {
            self.h.trace_event(now, e)
        }
    }
}

impl Kernel for Cx<'_> {
    fn vm_vcpus(&self, vm: usize) -> &[u32] {
        &self.h.vms[vm].vcpus
    }
    fn dev_of(&self, vm: usize) -> u32 {
        self.h.vms[vm].dev
    }
    fn vm_devs(&self, vm: usize) -> (u32, u32) {
        (self.h.vms[vm].dev, self.h.vms[vm].ndevs)
    }
    fn net(&mut self, dev: u32) -> DevView<'_> {
        view(&mut self.h.devs[dev as usize])
    }
    type KQ = EventQueue<Ev>;
    fn kq(&mut self) -> &mut EventQueue<Ev> {
        self.q
    }
    fn vf_tail_written(&mut self, now: Time, dev: u32) {
        let d = &mut self.h.devs[dev as usize];
        if let crate::model::hw::device::Device::Nvme(n) = &mut d.device {
            return n.fetch(now, dev, &mut d.txq, self.q);
        }
        vf::fetch(now, dev, &mut d.txq, &mut d.wire, &mut self.h.port.tx, self.q);
    }
    fn io_signal_ns(&self) -> Time {
        self.h.io_signal_ns
    }

    fn notify_backend(&mut self, now: Time, dev: u32, n: Notice) {
        self.h.notify_backend(now, dev, n, self.q)
    }
    fn backend_written(&mut self, now: Time, dev: u32, n: Notice) {
        self.h.backend_written(now, dev, n, self.q)
    }

    fn app_on_every_vcpu(&self, vm: usize) -> bool {
        self.h.app_of(vm).on_every_vcpu()
    }
    fn app_receives_tcp_data(&self, vm: usize) -> bool {
        self.h.app_of(vm).receives_tcp_data()
    }
    fn app_set_stopped(&mut self, dev: u32, stopped: bool) {
        self.h.senders[dev as usize].set_stopped(stopped)
    }
    fn app_deliver(&mut self, now: Time, v: u32, dev: u32, pkt: RxPkt) -> bool {
        self.h.app_deliver(now, v, dev, pkt, self.q)
    }
    fn app_tx_interrupt(&mut self, now: Time, v: u32, dev: u32) {
        self.h.app_tx_interrupt(now, v, dev)
    }
}

/// Device `d` as its guest driver sees it.
fn view(d: &mut NetDev) -> DevView<'_> {
    DevView {
        txq: &mut d.txq,
        qdisc: &mut d.guest.qdisc,
        tx_stopped: &mut d.guest.tx_stopped,
        rxq: &mut d.rxq,
        napi: &mut d.guest.napi,
        device: &mut d.device,
        mtvd: &mut d.guest.mtvd,
        guest_gro: d.guest.gro,
        home: d.home,
        irq_to: &mut d.guest.irq_to,
        tx_irq_to: &mut d.guest.tx_irq_to,
        tx_kick_owed: &mut d.guest.tx_kick_owed,
    }
}
