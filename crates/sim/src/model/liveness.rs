//! The liveness watchdog's look at the host (`watchdog.rs` judges): each flow's progress, its
//! threads' effort and waits, whether it owes work or waits on a timer, and the state of its
//! event path for a bug report, gathered from the parts that own them. Called from pCPU 0's
//! host tick and at the run's end.

use crate::model::host::Host;
use crate::model::watchdog::{Effort, Progress};
use crate::engine::Time;

impl Host {
    /// The monotone progress count of VM `vm`'s flow: packets its event path carried to the
    /// client or into the guest's NAPI, and what its application completed. (A datagram that
    /// then finds the socket buffer full, or a request still incomplete, still moved.)
    /// (A VM of several VFs: its devices' flows together.)
    fn flow_progress(&self, vm: usize) -> Progress {
        let mut p = Progress { count: 0, sent: 0, sending: false };
        for d in self.vms[vm].dev..self.vms[vm].dev + self.vms[vm].ndevs {
            let dev = &self.devs[d as usize];
            let moved = dev.wire.delivered_life + dev.guest.napi.received_life;
            let in_device = if dev.device.is_assigned() { 0 } else { dev.txq.in_device() };
            let waiting = dev.guest.qdisc.len() as u64 + dev.txq.pending() as u64 + in_device + self.port.tx.in_flight(d) as u64;
            p.count += moved + self.senders[d as usize].progress();
            p.sent += dev.wire.delivered_life;
            // A disk's requests waiting in its ring are no frames to deliver: its progress is
            // its completions.
            p.sending |= waiting > 0 && !dev.device.is_disk();
        }
        p
    }

    /// Is VM `vm`'s flow waiting on its own configured throttle: an interrupt its device's
    /// moderation (`[vm.net.moderation]`) or its VF's EITR holds until a deadline? Such a flow
    /// is paced by its configuration (FIR at 1 interrupt/s moves once a second), not stuck.
    fn flow_throttled(&self, vm: usize) -> bool {
        let vs = &self.vms[vm];
        self.devs[vs.dev as usize..(vs.dev + vs.ndevs) as usize]
            .iter()
            .any(|d| d.irqs.held() || d.device.assigned_ref().is_some_and(|v| v.armed))
    }

    /// A one-line picture of VM `vm`'s event path: vCPU modes, rings, the I/O thread.
    fn flow_state(&self, vm: usize) -> String {
        let d = &self.devs[self.vms[vm].dev as usize];
        let vcpus: Vec<String> = self.vms[vm]
            .vcpus
            .iter()
            .map(|&v| {
                let vc = &self.vcpus[v as usize];
                format!("{:?} thread {:?} on {} irqs pending {}", vc.mode, self.sched.thread_state(v), self.sched.thread_cpu(v), vc.irqs_pending())
            })
            .collect();
        let backend = self.backend_tid(self.vms[vm].dev).map(|t| format!("{:?}", self.sched.thread_state(t)));
        format!(
            "vcpus [{}]; tx ring free {} pending {} qdisc {} on port {} kicks {} irq wanted {}; rx posted {} used {} sock {} kicks {} irq wanted {}; napi {:?}; back end running {} thread {:?}; client link {} frames {} B, to tap {}; sender {}",
            vcpus.join("; "),
            d.txq.free(),
            d.txq.pending(),
            d.guest.qdisc.len(),
            self.port.tx.in_flight(self.vms[vm].dev),
            d.txq.kick.device_enabled(),
            d.txq.irq.driver_enabled(),
            d.rxq.posted,
            d.rxq.used.len(),
            d.rx_sock.len(),
            d.rxq.kick.device_enabled(),
            d.rxq.irq.driver_enabled(),
            (d.guest.napi.scheduled, d.guest.napi.running),
            self.io.of_dev(self.vms[vm].dev).is_some_and(|(t, _)| self.io.threads[t as usize].running),
            backend,
            d.client.on_link(),
            d.client.link_bytes(),
            d.nic.skbs.len(),
            self.app_of(vm).describe(),
        )
    }

    /// What the threads a flow needs (its VM's vCPUs and its device's I/O thread) have done.
    fn flow_effort(&mut self, now: Time, vm: usize, items: &[Time]) -> Effort {
        let backend = self.backend_tid(self.vms[vm].dev);
        let vcpus = &self.vms[vm].vcpus;
        let max_wait = vcpus.iter().copied().chain(backend).map(|t| self.sched.take_max_wait(now, t)).max().unwrap_or(0);
        // A turn of its back end (for any queue it serves) is as long as a wait for a pCPU: the
        // flow behind it waits as long (a configured per-byte cost can make a turn that its
        // weight bounds last seconds), slow by configuration, not stalled.
        let item = self.io.of_dev(self.vms[vm].dev).map_or(0, |(t, _)| items[t as usize]);
        // So is the backlog of its client's core: a saturated client (`client.cores` shared
        // by heavy flows) sends the flow's next request only when it gets to it.
        let vs = &self.vms[vm];
        let n = self.client_cores.len();
        let client = (vs.dev..vs.dev + vs.ndevs).map(|d| self.client_cores[d as usize % n].saturating_sub(now)).max().unwrap_or(0);
        // And a long application step (a 20 ms request on a shared vCPU) of its vCPUs.
        let steps = self.vms[vm].vcpus.iter().map(|&v| self.vcpus[v as usize].take_app_step(now)).max().unwrap_or(0);
        let max_wait = max_wait.max(item).max(client).max(steps);
        let vcpus = &self.vms[vm].vcpus;
        Effort {
            max_wait,
            guest: vcpus.iter().map(|&v| (self.vcpus[v as usize].guest_ns_life, self.vcpus[v as usize].irq_ns_life)).collect(),
            delay: vcpus.iter().map(|&v| self.sched.run_and_delay(now, v).1).sum(),
        }
    }

    /// Check every flow (called from pCPU 0's host tick).
    pub(crate) fn watchdog_tick(&mut self, now: Time) {
        if !self.watchdog.due(now) {
            return;
        }
        self.check_flows(now, false);
    }

    /// The run ends at `now`: the last check of every flow, with the end's window for a flow
    /// that owes work ([`END_WINDOW_NS`]).
    pub fn watchdog_end(&mut self, now: Time) {
        self.check_flows(now, true);
    }

    fn check_flows(&mut self, now: Time, end: bool) {
        // Each back end's longest turn since the last check (one back end serves several VMs).
        let items: Vec<Time> = self.io.threads.iter_mut().map(|t| t.take_longest_turn(now)).collect();
        for vm in self.watchdog.watched() {
            {
                let (count, effort) = (self.flow_progress(vm), self.flow_effort(now, vm, &items));
                let vs = &self.vms[vm];
                let senders = &self.senders[vs.dev as usize..(vs.dev + vs.ndevs) as usize];
                // The client's delayed-ACK timer (40 ms) or TCP's RTO will fire.
                let rto = senders.iter().any(|s| s.retransmission_armed())
                    || self.devs[vs.dev as usize..(vs.dev + vs.ndevs) as usize].iter().any(|d| d.client.delack_armed());
                // A finished workload (a done CPU job, a web client whose clients all failed)
                // owes no progress: treated like a flow waiting on a timer; so are users who
                // all think (SPECweb's sessions wait on their think timers).
                // So does a VM not yet booted (a vCPU thread not yet started: `Event::ThreadStart`).
                let booting = vs.vcpus.iter().any(|&v| self.sched.thread_state(v) == crate::model::hypervisor::sched::State::Sleeping && self.sched.run_and_delay(now, v).0 == 0);
                let timer = rto || booting || self.flow_throttled(vm) || senders.iter().all(|s| s.finished() || s.thinking());
                let before = self.watchdog.stalls.len();
                self.watchdog.observe(vm, now, count, timer, effort, end);
                if self.watchdog.stalls.len() > before {
                    self.watchdog.stalls[before].state = self.flow_state(vm);
                }
            }
        }
    }
}
