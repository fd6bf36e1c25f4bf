//! The model's side of the workload seam: [`AppCtx`], the guest context through which VM
//! `vm`'s application `A` acts (`workload::ctx::Ctx`, whose doc says why it holds the whole
//! host). The field is private to this module, so an application cannot reach around the
//! context; each operation is one call into the layer that owns it (the vCPU model, the
//! driver, the client and the link).

use crate::engine::Schedule;
use crate::model::hw;
use crate::engine::{EventQueue, Time};
use crate::model::hw::client_port::Handed;
use crate::model::hw::lapic::Vector;
use crate::model::hw::rxq::RxPkt;
use crate::model::hw::virtq::{Buf, Virtq};
use crate::model::cx::Cx;
use crate::model::guest::ops::Driver;
use crate::model::hypervisor::ops::{Irqs, Vcpus};
use crate::model::workload::client::{AckAction, Client};
use crate::model::workload::ctx::{Ctx, Ipi};
use crate::model::workload::{ClientEv, Held, Step};
use crate::model::event::Ev;
use crate::model::host::Host;
use crate::profile::Profile;
use eventpath_policy::routing::{InterruptClass, RouteRequest};
use std::marker::PhantomData;

/// Device `dev`'s application of type `A` (in VM `vm`), handling one event at `now`. (A VM
/// has one application, but one with several VFs one receiver per VF.)
pub(crate) struct AppCtx<'a, A> {
    h: &'a mut Host,
    q: &'a mut EventQueue<Ev>,
    now: Time,
    vm: usize,
    /// The application's device (its driver, its client).
    dev: u32,
    app: PhantomData<fn() -> A>,
}

impl<'a, A> AppCtx<'a, A> {
    /// The context of device `dev`'s application for an event at `now`.
    pub(crate) fn new(h: &'a mut Host, q: &'a mut EventQueue<Ev>, now: Time, dev: u32) -> Self {
        let vm = h.devs[dev as usize].vm as usize;
        AppCtx { h, q, now, vm, dev, app: PhantomData }
    }
}

impl<A> AppCtx<'_, A> {
    /// The lower layers' context over the same host and queue.
    fn cx(&mut self) -> Cx<'_> {
        self.h.cx(self.q)
    }
}

impl<A: Held> Ctx<A> for AppCtx<'_, A> {
    fn app(&mut self) -> &mut A {
        A::held(&mut self.h.senders[self.dev as usize])
    }
    fn now(&self) -> Time {
        self.now
    }
    fn profile(&self) -> &Profile {
        &self.h.profile
    }
    fn window_start(&self) -> Time {
        self.h.window_start
    }

    fn vcpu(&self, local: u32) -> u32 {
        self.h.vms[self.vm].vcpus[local as usize]
    }
    fn vcpu_count(&self) -> u32 {
        self.h.vms[self.vm].vcpus.len() as u32
    }
    fn on_cpu(&self, v: u32) -> bool {
        self.h.sched.current(self.h.sched.thread_cpu(v)) == Some(v)
    }

    fn steal_ns(&self, v: u32) -> Time {
        // vCPU v is host thread v.
        self.h.sched.run_and_delay(self.now, v).1
    }

    fn run_step(&mut self, v: u32, s: Step, cost: Time) {
        let (now, dev) = (self.now, self.dev);
        self.h.vcpus[v as usize].app_step_began(now, cost);
        self.cx().run_step(now, v, Step { dev, ..s }, cost)
    }
    fn enter(&mut self, v: u32) {
        let now = self.now;
        self.cx().enter(now, v)
    }
    fn idle(&mut self, v: u32, until: Option<Time>) {
        let now = self.now;
        self.cx().idle(now, v, until)
    }
    fn paced_send(&mut self, v: u32, stopped: bool, next_at: f64, send: Step, cost: Time) {
        let (now, dev) = (self.now, self.dev);
        self.cx().paced_send(now, v, stopped, next_at, Step { dev, ..send }, cost)
    }
    fn cut_step(&mut self, v: u32, kind: u8) {
        self.h.vcpus[v as usize].app_step_ended(self.now);
        if self.h.vcpus[v as usize].cut_app_step(self.now, kind) {
            self.h.workload_next(self.now, v, self.q)
        }
    }
    fn send_ipi(&mut self, from: u32, to: u32, kind: Ipi) -> bool {
        let now = self.now;
        match kind {
            Ipi::Reschedule => self.cx().resched_ipis(now, from, std::iter::once(to)),
            Ipi::CallFunction => self.cx().call_function(now, from, to),
        }
    }

    fn call_function_many(&mut self, from: u32, to: &[u32]) -> Option<bool> {
        let now = self.now;
        self.cx().call_function_many(now, from, to)
    }

    fn sched_yield(&mut self, from: u32, to: &[u32]) -> bool {
        let now = self.now;
        self.cx().sched_yield(now, from, to)
    }

    fn post_tx(&mut self, v: u32, b: Buf) {
        let (now, dev) = (self.now, self.dev);
        self.cx().post_tx(now, v, dev, b)
    }
    fn timer_write(&mut self, v: u32) {
        let now = self.now;
        let exits = self.h.vcpus[v as usize].delivery.timer_write_exits();
        let mut cx = self.cx();
        if exits {
            cx.exit(now, v, crate::metrics::ExitReason::Timer, crate::model::hypervisor::vcpu::AfterExit::Resume)
        } else {
            cx.enter(now, v)
        }
    }
    fn txq(&mut self) -> &mut Virtq {
        &mut self.h.devs[self.dev as usize].txq
    }
    fn set_tx_stopped(&mut self, stopped: bool) {
        let dev = self.dev;
        self.cx().set_tx_stopped(dev, stopped);
    }
    fn notify_tx(&mut self, v: u32) {
        let (now, dev) = (self.now, self.dev);
        self.cx().notify_tx(now, v, dev)
    }

    fn route_device_irq(&mut self, home: u32) -> u32 {
        // The device's TX source number, as the routing of its own interrupts keys it.
        let req = RouteRequest { irq: self.dev * 2, class: InterruptClass::Device, dest: home as usize };
        let (now, vm) = (self.now, self.vm);
        // The workload asks for a VM-local vCPU; the routing answers host-wide.
        self.h.route_irq(now, vm, req, self.q) - self.h.vms[vm].vcpus[0]
    }
    fn raise_msi(&mut self, local: u32) {
        let (now, v) = (self.now, self.vcpu(local));
        self.cx().raise_irq(now, v, Vector::Msi)
    }

    fn client(&mut self) -> &mut Client {
        &mut self.h.devs[self.dev as usize].client
    }
    fn client_cpu(&mut self, at: Time, ns: Time) -> Time {
        self.h.client_cpu(at, self.dev, ns)
    }
    fn client_receive(&mut self, bytes: u32, segs: u16, flow: u16) -> AckAction {
        let n = self.h.client_cores.len();
        let core = &mut self.h.client_cores[self.dev as usize % n];
        self.h.devs[self.dev as usize].client.receive(self.now, bytes, segs, flow, core)
    }
    fn to_host(&mut self, at: Time, pkt: RxPkt, wire_bytes: u32) -> bool {
        let (now, dev) = (self.now, self.dev);
        let d = &mut self.h.devs[dev as usize];
        let tcp = d.wire.is_tcp();
        match d.client.hand(now, at, dev, pkt, wire_bytes, tcp, &mut self.h.port.rx) {
            Handed::Dropped => false,
            Handed::Queued(t) => {
                if let Some(t) = t {
                    self.q.schedule(t, hw::Event::ClientPort);
                }
                true
            }
        }
    }
    fn client_at(&mut self, at: Time, e: ClientEv) {
        self.q.at(at, Ev::Client { dev: self.dev, kind: e.kind, x: e.x, a: e.a, b: e.b });
    }
}
