//! Interrupt routing, the simulator's adapter of `eventpath_policy::routing` (the routers the KVM
//! testbed drives too): each VM's router hears every run-state change of its vCPUs (running in
//! guest mode, runnable on a runqueue, blocked after HLT) and picks the vCPU of each device
//! interrupt (`[vm] interrupt_routing`; default `fixed`, the guest's own affinity: vCPU 0).
//!
//! The guest's application thread stays on its vCPU (vCPU 0 for the stream and receive
//! workloads). When an interrupt routed elsewhere makes work for it — data in its socket, room in
//! the TX queue — while its vCPU is halted, the guest wakes it as Linux's `try_to_wake_up` does
//! across CPUs: a reschedule IPI (vector 0xfd on the target; the sender's ICR write is charged
//! only for the web server's workers, `workers.rs`).

use crate::model::hw::lapic::Vector;
use crate::model::{Ev, Host};
use crate::engine::{EventQueue, Time};
use eventpath_policy::routing::{InterruptClass, InterruptRouter, RouteRequest, RunState};

impl Host {
    /// The vCPU (host-wide) that device `dev`'s interrupt `vec` goes to.
    pub(crate) fn route_device_irq(&mut self, dev: u32, vec: Vector) -> u32 {
        let vm = &mut self.vms[self.devs[dev as usize].vm as usize];
        let irq = dev * 2 + (vec == Vector::NetRx) as u32;
        let d = vm.router.route(RouteRequest { irq, class: InterruptClass::Device, dest: 0 });
        vm.vcpus[d.target % vm.vcpus.len()]
    }

    /// vCPU `v`'s thread changed run state: tell its VM's router.
    pub(crate) fn vcpu_run_state(&mut self, v: u32, state: RunState) {
        let vm = &mut self.vms[self.vcpus[v as usize].vm as usize];
        let local = (v - vm.vcpus[0]) as usize;
        vm.router.on_run_state(local, state);
    }

    /// NAPI on vCPU `v` is handing a packet to the VM's application thread. If that thread's
    /// vCPU is another one, halted (or halting) or running only the guest's CPU burn, the socket's wake-up sends it a reschedule IPI
    /// (the sender's ICR write is not charged: its softirq carries on).
    pub(crate) fn wake_app(&mut self, now: Time, v: u32, q: &mut EventQueue<Ev>) {
        let vm = self.vcpus[v as usize].vm as usize;
        let app = self.vms[vm].vcpus[0];
        if app != v && !self.senders[vm].on_every_vcpu() && self.vcpus[app as usize].wants_resched_ipi() {
            self.raise_irq(now, app, Vector::Resched, q);
        }
    }

    /// A TX interrupt on vCPU `v` woke the queue: the writers that halted on it elsewhere — the
    /// application's vCPU, or every server worker's — get a reschedule IPI (their ICR write is
    /// not charged: the EOI or kick exit of `v` follows).
    pub(crate) fn wake_writers(&mut self, now: Time, v: u32, q: &mut EventQueue<Ev>) {
        let vm = self.vcpus[v as usize].vm as usize;
        let writers: Vec<u32> = if self.senders[vm].on_every_vcpu() {
            self.vms[vm].vcpus.clone()
        } else {
            vec![self.vms[vm].vcpus[0]]
        };
        for u in writers {
            if u != v && self.vcpus[u as usize].wants_resched_ipi() {
                self.raise_irq(now, u, Vector::Resched, q);
            }
        }
    }
}
