//! Host interrupt work taking a pCPU from its thread (`softirq.rs` keeps each pCPU's work in
//! hand and says why it is charged so): a vCPU in guest mode takes an external-interrupt exit
//! that lasts the work longer; a back-end thread's step under way ends that much later (the
//! I/O layer's: returned for the root to apply); an idle pCPU spends it without a thread (busy all the same: `host.pcpu_util_pct` counts it).

use crate::engine::Time;
use crate::metrics::ExitReason;
use crate::model::hypervisor::ctx::{HvOwn, HvRead, Machine, Trace, OWN};
use crate::model::hypervisor::ops::{Kind, Threads, Vcpus};
use crate::model::hypervisor::vcpu::{AfterExit, Mode};

/// Host interrupt work on the pCPUs, for every [`Machine`].
pub(crate) trait Softirqs {
    /// `ns` of host interrupt work runs on `cpu` from `now`. A back-end thread it takes the
    /// pCPU from is the I/O layer's to delay: returned (the thread and the time it lost) for
    /// the root to apply (`IoThread::interrupted`).
    #[must_use]
    fn host_irq_work(&mut self, now: Time, cpu: u32, ns: Time) -> Option<(u32, Time)>;
}

impl<M: Machine> Softirqs for M {
    fn host_irq_work(&mut self, now: Time, cpu: u32, ns: Time) -> Option<(u32, Time)> {
        if ns == 0 {
            return None;
        }
        // Counted where it runs; the thread there loses this piece's time (work already in
        // hand took its share when it came), or ksoftirqd's share of it.
        let current = self.sched_ref().current(cpu);
        let (end, held) = self.softirqs().run(now, cpu, ns, current.is_none());
        self.trace(end - ns, Trace::Softirq { cpu, end });
        let t = current?;
        if self.parts(OWN).switch_in[cpu as usize].armed() {
            return None;
        }
        match self.kind(t) {
            Kind::Vcpu(v) => {
                if let Mode::Guest { .. } = self.vcpu_ref(v).mode {
                    if self.vcpu_ref(v).delivery.virtualized() {
                        self.exit_for(now, v, ExitReason::ExternalInterrupt, AfterExit::Resume, held);
                    } else {
                        self.paused(now, v, held);
                    }
                }
            }
            Kind::Io(t) => return Some((t, held)),
            Kind::Hog(_) | Kind::Kthread(_) => {}
        }
        None
    }
}
