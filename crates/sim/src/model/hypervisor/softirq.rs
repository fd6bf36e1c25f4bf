//! Host kernel work in interrupt context on a pCPU — the host NIC's interrupt, its RX NAPI and
//! TX clean for the virtio devices (`host.nic_irq_ns`, `host.nic_rx_frame_ns`,
//! `host.nic_tx_clean_ns`) — charged where the kernel runs it: on the pCPU the NIC queue's IRQ
//! affinity names (`host.nic_irq_cpus`), taking that pCPU from whatever runs there. A vCPU in
//! guest mode takes an external-interrupt exit that lasts the work longer (VMX exits on every
//! host interrupt; the handler and the softirq run before the VM entry); a back-end thread's step
//! under way ends that much later; an idle pCPU spends it without a thread. Work that lands
//! while a vCPU is already in host mode or a thread is being switched in is counted, its delay
//! not modelled (short next to the exits it would lengthen). A pCPU runs its interrupt work one
//! piece after another ([`SoftirqCpus`]), which keeps its count within the window; the thread
//! there is charged each piece's own time.

use crate::engine::Time;
use crate::metrics::ExitReason;
use crate::model::hypervisor::ctx::Machine;
use crate::model::hypervisor::threads::{Kind, Threads};
use crate::model::hypervisor::vcpu::{AfterExit, Mode, Vcpus};

/// Each pCPU's host interrupt work: when the work in hand ends, and how much ran.
#[derive(Debug)]
pub(crate) struct SoftirqCpus {
    until: Vec<Time>,
    /// Work charged since the window began (ns), per pCPU.
    charged: Vec<Time>,
}

impl SoftirqCpus {
    /// `pcpus` pCPUs with no work.
    pub fn new(pcpus: usize) -> Self {
        SoftirqCpus { until: vec![0; pcpus], charged: vec![0; pcpus] }
    }

    /// `ns` of work arrives on `cpu` at `now`: it runs after the work in hand; returns when it
    /// ends.
    pub fn run(&mut self, now: Time, cpu: u32, ns: Time) -> Time {
        let c = cpu as usize;
        self.until[c] = self.until[c].max(now) + ns;
        self.charged[c] += ns;
        self.until[c]
    }

    /// The measurement window starts: count from zero.
    pub fn reset_metrics(&mut self) {
        self.charged.iter_mut().for_each(|c| *c = 0);
    }

    /// Work that ran on `cpu` in the window up to `now` (what is still to run is not counted).
    pub fn ns(&self, cpu: u32, now: Time) -> Time {
        let c = cpu as usize;
        self.charged[c] - self.until[c].saturating_sub(now).min(self.charged[c])
    }
}

/// Host interrupt work on the pCPUs, for every [`Machine`].
pub(crate) trait Softirqs {
    /// `ns` of host interrupt work runs on `cpu` from `now`.
    fn host_irq_work(&mut self, now: Time, cpu: u32, ns: Time);
}

impl<M: Machine> Softirqs for M {
    fn host_irq_work(&mut self, now: Time, cpu: u32, ns: Time) {
        if ns == 0 {
            return;
        }
        // Counted where it runs; the thread there loses this piece's time (work already in
        // hand took its share when it came).
        let end = self.softirqs().run(now, cpu, ns);
        self.tr_softirq(cpu, end - ns, end);
        let Some(t) = self.sched_ref().current(cpu) else { return };
        if self.parts().switching[cpu as usize] {
            return;
        }
        match self.kind(t) {
            Kind::Vcpu(v) => {
                if let Mode::Guest { .. } = self.vcpu_ref(v).mode {
                    self.exit_for(now, v, ExitReason::ExternalInterrupt, AfterExit::Resume, ns);
                }
            }
            Kind::Io(t) => self.io_interrupted(t, ns),
            Kind::Hog(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::SoftirqCpus;

    #[test]
    fn work_on_a_pcpu_runs_after_the_work_in_hand_and_other_pcpus_are_apart() {
        let mut s = SoftirqCpus::new(2);
        assert_eq!(s.run(1_000, 0, 500), 1_500, "an idle pCPU runs it at once");
        assert_eq!(s.run(1_200, 0, 300), 1_800, "it waits for the work in hand");
        assert_eq!(s.run(1_200, 1, 300), 1_500, "another pCPU's work is its own");
        assert_eq!(s.run(5_000, 0, 100), 5_100, "after a gap it starts when it arrives");
    }

    #[test]
    fn the_window_counts_what_ran_in_it_and_not_what_is_still_to_run() {
        let mut s = SoftirqCpus::new(1);
        s.run(0, 0, 400);
        s.reset_metrics();
        s.run(1_000, 0, 600);
        assert_eq!(s.ns(0, 1_300), 300, "half of it has run by 1.3 us");
        assert_eq!(s.ns(0, 2_000), 600);
    }
}
