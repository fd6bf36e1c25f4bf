//! A CPU-bound guest job (`kind = "cpu_job"`; CGR/AIR §5.6's NPB FT, run single-threaded): one
//! thread on the VM's vCPU 0 that needs `work_ms` of guest CPU and then exits. Its metric is its
//! completion time, from the run's start to its last instruction.
//!
//! The job runs as the application's steps of at most [`BURN_CHUNK_NS`] — a modelling
//! granularity, not a cost: a step cut short by an exit, an interrupt handler, softirq work or
//! the host descheduling the vCPU is saved with the work it still needs and resumed, and it pays
//! the cache refill the vCPU owes after an exit (`vcpu.rs`) like any guest task. So what slows
//! the job is what slows a real one: its own guest's interrupts and softirqs, the exits they
//! cost, and the pCPU time other VMs' vCPUs and the host's threads take (CGR/AIR Fig. 13).
//! Nothing is planted: the job only asks for CPU.

use crate::engine::{round_ns, Time};
use crate::model::hypervisor::vcpu::BURN_CHUNK_NS;
use crate::model::workload::app::{App, DevView, JobState, Measure, Step};
use crate::model::workload::ctx::Ctx;

/// Its one step: compute for `b` ns.
const RUN: u8 = 0;

/// The job's state.
#[derive(Debug)]
pub struct CpuJob {
    /// The CPU work it needs (ns).
    work: Time,
    /// The work still to do (ns).
    left: Time,
    /// When it finished (ns from the run's start).
    finished_at: Option<Time>,
    /// Steps completed (lifetime: the watchdog's progress).
    steps: u64,
}

impl CpuJob {
    /// A job of `work_ms` ms of CPU.
    pub fn new(work_ms: f64) -> Self {
        let work = round_ns(work_ms * 1e6).max(1);
        CpuJob { work, left: work, finished_at: None, steps: 0 }
    }
}

impl App for CpuJob {
    /// Compute the next chunk, or (done) sleep for good.
    fn next(g: &mut impl Ctx<Self>, v: u32) {
        let left = g.app().left;
        if left == 0 {
            return g.idle(v, None);
        }
        let chunk = left.min(BURN_CHUNK_NS);
        g.run_step(v, Step::new(RUN, 0, chunk), chunk)
    }

    fn step_done(g: &mut impl Ctx<Self>, v: u32, s: Step) {
        let now = g.now();
        let j = g.app();
        j.left -= s.b;
        j.steps += 1;
        if j.left == 0 {
            j.finished_at = Some(now);
        }
        g.enter(v)
    }

    fn step_name(_s: Step) -> &'static str {
        "cpu job"
    }
    fn sent_life(&self) -> u64 {
        0
    }
    /// Its completion time counts from the run's start, warm-up or not.
    fn reset_metrics(&mut self) {}
    fn describe(&self) -> String {
        format!("cpu job {} of {} ns left, finished at {:?}", self.left, self.work, self.finished_at)
    }
    fn progress(&self) -> u64 {
        self.steps
    }
    fn finished(&self) -> bool {
        self.left == 0
    }
    fn measure<'a>(&'a self, _d: DevView<'a>) -> Measure<'a> {
        let job = JobState { work_ns: self.work, done_ns: self.work - self.left, finished_at: self.finished_at };
        Measure { job: Some(job), ..Default::default() }
    }
}
