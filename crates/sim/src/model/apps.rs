//! The root's glue of the workload seam: each VM's application called through its guest
//! context (`AppCtx`), dispatched statically by kind (`with_app!`).

use crate::engine::{EventQueue, Time};
use crate::model::app_ctx::AppCtx;
use crate::model::hypervisor::ops::Vcpus;
use crate::model::workload::{with_app, App, ClientEv, Sender, Step};
use crate::model::{guest, hw, hypervisor};
use crate::model::event::Ev;
use crate::model::host::Host;

impl Host {
    // The VMs' applications, each called through its guest context (`AppCtx`), dispatched
    // statically by kind (`with_app!`).

    // (`senders` holds one application per device: a VM's, or with several VFs one receiver
    // per VF; `app_of` is a VM's first, which answers for what is the VM's.)

    /// VM `vm`'s application (its first device's).
    pub(crate) fn app_of(&self, vm: usize) -> &Sender {
        &self.senders[self.vms[vm].dev as usize]
    }

    /// The vCPU is free: what does the workload do next? (Of a VM's several receivers, those
    /// homed on `v`, local `i mod vcpus`, take turns: the first after the one that ran last
    /// with work to do, else that one, which idles.)
    pub(crate) fn workload_next(&mut self, now: Time, v: u32, q: &mut EventQueue<Ev>) {
        let vm = self.vcpus[v as usize].vm as usize;
        if self.vms[vm].lookbusy.is_some() {
            let (seen, local) = self.lookbusy_seen(vm, v);
            let lb = self.vms[vm].lookbusy.as_mut().expect("checked above");
            if let Some(cost) = lb.next(now, local, seen) {
                return self.cx(q).run_task(now, v, hypervisor::vcpu::Task::Lookbusy, cost);
            }
        }
        let (first, n) = (self.vms[vm].dev, self.vms[vm].ndevs);
        let local = v - self.vms[vm].vcpus[0];
        let mut dev = first;
        if n > 1 {
            if local >= n {
                return self.cx(q).idle(now, v, None);
            }
            // The devices homed here: first + local + j·vcpus, j < m.
            let vcpus = self.vms[vm].vcpus.len() as u32;
            let m = (n - local).div_ceil(vcpus);
            let last = (self.vms[vm].app_turn[local as usize] - first - local) / vcpus;
            dev = first + local + last * vcpus;
            for k in 1..=m {
                let d = first + local + (last + k) % m * vcpus;
                if self.senders[d as usize].ready() {
                    dev = d;
                    break;
                }
            }
            self.vms[vm].app_turn[local as usize] = dev;
        } else if local != 0 && !self.senders[first as usize].on_every_vcpu() {
            return self.cx(q).idle(now, v, None);
        }
        with_app!(self.senders[dev as usize].kind(), A => A::next(&mut AppCtx::<A>::new(self, q, now, dev), v))
    }

    /// The counters lookbusy's spinner on `v` of VM `vm` reads, and `v`'s local index.
    pub(crate) fn lookbusy_seen(&self, vm: usize, v: u32) -> (guest::lookbusy::Seen, u32) {
        let vc = &self.vcpus[v as usize];
        let vm_busy = self.vms[vm].vcpus.iter().map(|&u| self.vcpus[u as usize].busy_ns_life()).sum();
        let seen = guest::lookbusy::Seen { app: vc.app_ns_life(), cpu: vc.lookbusy_cpu_life, work: vc.lookbusy_work_life, vm_busy };
        (seen, v - self.vms[vm].vcpus[0])
    }

    /// `v`'s application has nothing to run: its VM's lookbusy spinner runs, or sleeps.
    pub(crate) fn lookbusy_idle(&mut self, now: Time, v: u32) -> hypervisor::vcpu::IdleThread {
        use guest::lookbusy::IdleRun;
        use hypervisor::vcpu::IdleThread;
        let vm = self.vcpus[v as usize].vm as usize;
        if self.vms[vm].lookbusy.is_none() {
            return IdleThread::None;
        }
        let (seen, local) = self.lookbusy_seen(vm, v);
        match self.vms[vm].lookbusy.as_mut().expect("checked above").idle(now, local, seen) {
            IdleRun::Run(cost) => IdleThread::Run(cost),
            IdleRun::Sleep(t) => IdleThread::Sleep(t),
        }
    }

    /// A workload's step finished on vCPU `v`.
    pub(crate) fn app_step_done(&mut self, now: Time, v: u32, s: Step, q: &mut EventQueue<Ev>) {
        self.vcpus[v as usize].app_step_ended(now);
        with_app!(self.senders[s.dev as usize].kind(), A => A::step_done(&mut AppCtx::<A>::new(self, q, now, s.dev), v, s))
    }

    /// The name of step `s` in a timeline.
    pub(crate) fn app_step_name(&self, s: Step) -> &'static str {
        with_app!(self.senders[s.dev as usize].kind(), A => A::step_name(s))
    }

    /// NAPI on vCPU `v` received `pkt` of device `dev` for its application; returns whether a
    /// step started.
    pub(crate) fn app_deliver(&mut self, now: Time, v: u32, dev: u32, pkt: hw::rxq::RxPkt, q: &mut EventQueue<Ev>) -> bool {
        with_app!(self.senders[dev as usize].kind(), A => A::deliver(&mut AppCtx::<A>::new(self, q, now, dev), v, pkt))
    }

    /// A frame of device `dev` reached the client.
    pub(crate) fn app_at_client(&mut self, now: Time, dev: u32, b: hw::virtq::Buf, q: &mut EventQueue<Ev>) {
        with_app!(self.senders[dev as usize].kind(), A => A::at_client(&mut AppCtx::<A>::new(self, q, now, dev), b))
    }

    /// The client NIC's poll of device `dev`'s frames ended a batch.
    pub(crate) fn app_client_batch_done(&mut self, now: Time, dev: u32, q: &mut EventQueue<Ev>) {
        with_app!(self.senders[dev as usize].kind(), A => A::client_batch_done(&mut AppCtx::<A>::new(self, q, now, dev)))
    }

    /// Device `dev`'s client event.
    pub(crate) fn app_client_event(&mut self, now: Time, dev: u32, e: ClientEv, q: &mut EventQueue<Ev>) {
        with_app!(self.senders[dev as usize].kind(), A => A::client_event(&mut AppCtx::<A>::new(self, q, now, dev), e))
    }

    /// Device `dev` used TX buffer `b`.
    pub(crate) fn app_tx_used(&mut self, now: Time, dev: u32, b: hw::virtq::Buf, q: &mut EventQueue<Ev>) {
        with_app!(self.senders[dev as usize].kind(), A => A::tx_used(&mut AppCtx::<A>::new(self, q, now, dev), b))
    }

    /// A packet device `dev`'s client sent was dropped at the tap queue.
    pub(crate) fn app_tap_drop(&mut self, now: Time, dev: u32, pkt: hw::rxq::RxPkt, q: &mut EventQueue<Ev>) {
        with_app!(self.senders[dev as usize].kind(), A => A::tap_drop(&mut AppCtx::<A>::new(self, q, now, dev), pkt))
    }

    /// The run starts: device `dev`'s client's first events.
    pub(crate) fn app_start(&mut self, dev: u32, q: &mut EventQueue<Ev>) {
        with_app!(self.senders[dev as usize].kind(), A => A::start(&mut AppCtx::<A>::new(self, q, 0, dev)))
    }

    /// Device `dev`'s TX interrupt handler ran on vCPU `v` (of a VM of several devices, for
    /// each whose interrupt came to `v`).
    pub(crate) fn app_tx_interrupt(&mut self, _now: Time, v: u32, dev: u32) {
        let vm = self.devs[dev as usize].vm as usize;
        let local = v - self.vms[vm].vcpus[0];
        self.senders[dev as usize].tx_interrupt(local)
    }

    /// VM `vm`'s handler of a call-function IPI ran its function on vCPU `v`.
    pub(crate) fn app_ipi_handled(&mut self, now: Time, v: u32, vm: usize, q: &mut EventQueue<Ev>) {
        let (local, dev) = (v - self.vms[vm].vcpus[0], self.vms[vm].dev);
        with_app!(self.senders[dev as usize].kind(), A => A::ipi_handled(&mut AppCtx::<A>::new(self, q, now, dev), local))
    }

    /// VM `vm`'s handler of an `Msi` vector ran on vCPU `v`.
    pub(crate) fn app_msi_handled(&mut self, now: Time, v: u32, vm: usize) {
        let local = v - self.vms[vm].vcpus[0];
        self.senders[self.vms[vm].dev as usize].msi_handled(now, local, self.window_start)
    }
}
