//! MTVD at work (CGR/AIR/MTVD paper §4.4): the poll's dispatcher hands each packet to the
//! VM's other vCPUs' threads in turn, wakes those asleep once per poll round, and each thread
//! takes its packets up the stack at NAPI's cost and wakes the reader. The dispatcher's and
//! the threads' state is `mtvd.rs`, which says why it is modelled so.

use crate::engine::{round_ns, Time};
use crate::model::guest::ctx::Kernel;
use crate::model::guest::napi::{stack_cost, StackCosts};
use crate::model::guest::ops::{MtvdOps, NapiOps};
use crate::model::hw::rxq::RxPkt;
use crate::model::hypervisor::ctx::HvRead;
use crate::model::hypervisor::ops::{Irqs, Vcpus};
use crate::model::hypervisor::vcpu::Task;

/// vCPU `v`'s thread: its index among its VM's vCPUs.
fn thread_of<K: Kernel>(k: &K, v: u32) -> (usize, u32, usize) {
    let vm = k.vcpu_ref(v).vm as usize;
    let w = k.vm_vcpus(vm).iter().position(|&u| u == v).expect("a vCPU of its VM");
    (vm, k.dev_of(vm), w)
}

impl<K: Kernel> MtvdOps for K {
    fn mtvd_dispatch(&mut self, v: u32, pkt: RxPkt) {
        let (_, dev, from) = thread_of(self, v);
        self.net(dev).mtvd.as_mut().expect("an MTVD device").dispatch(pkt, from);
    }

    fn mtvd_wake(&mut self, now: Time, v: u32) -> bool {
        let vm = self.vcpu_ref(v).vm as usize;
        let dev = self.dev_of(vm);
        let Some(n) = self.net(dev).mtvd.as_ref().map(|m| m.queues.len()) else { return false };
        // The workers to wake (at most a VM's vCPUs: one per vCPU), on the stack.
        let mut to = [0u32; crate::config::limits::MAX_VCPUS_PER_VM as usize];
        let mut k = 0;
        for w in 0..n {
            if !self.net(dev).mtvd.as_ref().expect("checked above").waiting(w) {
                continue;
            }
            let u = self.vm_vcpus(vm)[w];
            if u != v && self.vcpu_ref(u).wants_resched_ipi() {
                to[k] = u;
                k += 1;
            }
        }
        // One exit for the round's wake-ups, as before `[vm.apic]` (each is its own
        // try_to_wake_up in Linux; see docs/model.md); none where the CPU virtualizes them.
        self.resched_ipis(now, v, to[..k].iter().copied())
    }

    fn mtvd_next(&mut self, now: Time, v: u32) -> bool {
        // Every VM entry asks: a VM without MTVD answers before any search.
        let vm = self.vcpu_ref(v).vm as usize;
        if self.net(self.dev_of(vm)).mtvd.is_none() {
            return false;
        }
        let (vm, dev, w) = thread_of(self, v);
        let tcp_data = self.app_receives_tcp_data(vm);
        let costs = StackCosts::of(&self.profile().guest);
        let Some(m) = self.net(dev).mtvd.as_mut() else { return false };
        if std::mem::take(&mut m.wake_due[w]) && self.wake_app(now, v, dev) {
            return true;
        }
        let Some(pkt) = self.net(dev).mtvd.as_mut().expect("checked above").start(w) else { return false };
        let cost = stack_cost(&pkt, tcp_data, &costs);
        self.run_task(now, v, Task::Backlog, round_ns(cost));
        true
    }

    fn mtvd_done(&mut self, now: Time, v: u32) {
        let (vm, dev, w) = thread_of(self, v);
        let pkt = self.net(dev).mtvd.as_mut().expect("an MTVD device").done(w);
        let data = pkt.bytes > 0 && self.app_receives_tcp_data(vm);
        if self.app_deliver(now, v, dev, pkt) {
            self.net(dev).mtvd.as_mut().expect("an MTVD device").wake_due[w] = data;
            return;
        }
        if self.wake_app(now, v, dev) {
            return;
        }
        self.enter(now, v);
    }
}
