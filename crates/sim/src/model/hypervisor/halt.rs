//! HLT handling: KVM halt polling, the simulator's adapter of `eventpath_policy::halt_poll` (the
//! adaptive `halt_poll_ns` the KVM testbed reproduces too). `[vm.halt_poll]` turns it on (KVM's
//! defaults: up to 200 µs, grow ×2 from 10 µs, shrink to 0); without it a halting vCPU blocks at
//! once, as before.
//!
//! `kvm_vcpu_halt`: after the HLT exit the vCPU thread polls for up to `halt_poll_ns`, staying on
//! its pCPU (busy, though the guest is halted), while it is the only runnable thread there
//! (`single_task_running() && !need_resched()`). An interrupt that arrives meanwhile resumes the
//! guest at once — no wake-up, no idle-state exit; otherwise the thread blocks. Each halt's
//! outcome (its length, whether it blocked) grows or shrinks the poll time.

use crate::model::hypervisor::vcpu::Mode;
use crate::model::{Ev, Host};
use crate::engine::{round_ns, EventQueue, Time};
use eventpath_policy::halt_poll::HaltOutcome;

impl Host {
    /// The vCPU halts (nothing pending at the end of its HLT exit): poll, or block.
    pub(crate) fn halt(&mut self, now: Time, v: u32, q: &mut EventQueue<Ev>) {
        let cpu = self.cpu_of(v);
        let alone = self.sched.nr_running(cpu) == 1 && !self.should_yield(cpu);
        let vc = &mut self.vcpus[v as usize];
        vc.halt_start = Some(now);
        let poll = match vc.halt_poll.as_mut() {
            Some(hp) if alone => hp.begin_halt(),
            _ => 0,
        };
        if poll == 0 {
            return self.block(now, v, q);
        }
        vc.poll_gen = vc.poll_gen.wrapping_add(1);
        vc.mode = Mode::Polling;
        vc.busy.set(now, false);
        vc.halt_polls += 1;
        q.at(now + poll as Time, Ev::HaltPollEnd { vcpu: v, gen: vc.poll_gen });
    }

    /// kvm_vcpu_block: the vCPU thread sleeps until an interrupt wakes it.
    fn block(&mut self, now: Time, v: u32, q: &mut EventQueue<Ev>) {
        self.vcpus[v as usize].mode = Mode::Halted;
        let cpu = self.cpu_of(v);
        self.leave_cpu(now, cpu, true, q);
    }

    /// The poll window of vCPU `v` ended (stale unless `gen` is current): block.
    pub(crate) fn halt_poll_end(&mut self, now: Time, v: u32, gen: u32, q: &mut EventQueue<Ev>) {
        let vc = &self.vcpus[v as usize];
        if vc.mode == Mode::Polling && vc.poll_gen == gen {
            self.block(now, v, q);
        }
    }

    /// Another thread wants the polling vCPU's pCPU: it stops polling and blocks.
    pub(crate) fn halt_poll_yield(&mut self, now: Time, v: u32, q: &mut EventQueue<Ev>) {
        self.block(now, v, q);
    }

    /// An interrupt reached the polling vCPU: the guest resumes with it, after
    /// `host.halt_poll_wake_ns` (no wake-up, no idle-state exit).
    pub(crate) fn halt_poll_wake(&mut self, now: Time, v: u32, q: &mut EventQueue<Ev>) {
        let resume = round_ns(self.profile.host.halt_poll_wake_ns.value);
        let vc = &mut self.vcpus[v as usize];
        vc.busy.set(now, true);
        vc.halt_polls_successful += 1;
        self.end_halt(now, v, false);
        if resume > 0 {
            // The rest of the HLT exit, as host time of the vCPU thread (not another exit).
            self.vcpus[v as usize].mode = Mode::Exit { then: crate::model::hypervisor::vcpu::AfterExit::Resume };
            return q.at(now + resume, Ev::ExitDone { vcpu: v });
        }
        self.enter(now, v, q);
    }

    /// The halt of vCPU `v` ended (`waited`: it had blocked): adapt its poll time.
    pub(crate) fn end_halt(&mut self, now: Time, v: u32, waited: bool) {
        let vc = &mut self.vcpus[v as usize];
        if let (Some(start), Some(hp)) = (vc.halt_start.take(), vc.halt_poll.as_mut()) {
            hp.end_halt(HaltOutcome { halt_ns: now - start, waited, valid_wakeup: true });
        }
    }
}
