//! cyclictest in the guest (DID §5.1, §5.4): a thread at the highest priority sleeps until its
//! next deadline (`clock_nanosleep`, one every `interval_us`), which the guest programs on its
//! LAPIC timer (a TMICT write); the timer interrupt's handler wakes the thread, which records its
//! *interrupt invocation latency* — from the timer's expiry to the thread running in user space
//! — and sleeps again. Each step of that path costs what the VM's delivery mode says: the TMICT
//! write and the timer interrupt exit under KVM and posting, the EOI exits under the emulated
//! LAPIC, nothing under DID (DID §5.4: "at least three VM exits" per timer operation in KVM).

use crate::model::workload::app::{App, DevView, Measure, Step};
use crate::model::workload::ctx::Ctx;
use crate::engine::{Time, round_ns};
use crate::metrics::Histogram;
use crate::profile::Profile;

/// Its one step: the woken thread's way back to user space.
const WAKE: u8 = 0;

/// The cyclictest thread.
#[derive(Debug)]
pub struct Cyclictest {
    interval: Time,
    /// The pending deadline.
    next_at: Time,
    wake_cost: Time,
    /// Timer expiry → thread running (ns).
    latency: Histogram,
    /// Wake-ups (window / lifetime).
    loops: u64,
    loops_life: u64,
}

impl Cyclictest {
    /// A thread waking every `interval_us`.
    pub fn new(interval_us: f64, p: &Profile) -> Self {
        let interval = round_ns(interval_us * 1e3).max(1);
        Cyclictest {
            interval,
            next_at: interval,
            wake_cost: round_ns(p.guest.task_wakeup_ns.value),
            latency: Histogram::new(),
            loops: 0,
            loops_life: 0,
        }
    }
}

impl App for Cyclictest {
    /// Due: the woken thread runs; else it sleeps until its deadline (the LAPIC timer).
    fn next(g: &mut impl Ctx<Self>, v: u32) {
        let now = g.now();
        let c = g.app();
        if now >= c.next_at {
            let cost = c.wake_cost;
            return g.run_step(v, Step::new(WAKE, 0, 0), cost);
        }
        let at = c.next_at;
        g.idle(v, Some(at))
    }

    fn step_done(g: &mut impl Ctx<Self>, v: u32, _s: Step) {
        let now = g.now();
        let window_start = g.window_start();
        let c = g.app();
        if c.next_at >= window_start {
            c.latency.record(now - c.next_at);
        }
        c.loops += 1;
        c.loops_life += 1;
        // cyclictest's absolute deadlines: the next one after now (an overrun skips).
        while c.next_at <= now {
            c.next_at += c.interval;
        }
        g.enter(v)
    }

    fn step_name(_s: Step) -> &'static str {
        "cyclictest wake-up"
    }
    fn sent_life(&self) -> u64 {
        0
    }
    fn reset_metrics(&mut self) {
        self.loops = 0;
        self.latency.clear();
    }
    fn describe(&self) -> String {
        format!("cyclictest loops {} next {}", self.loops_life, self.next_at)
    }
    fn progress(&self) -> u64 {
        self.loops_life
    }
    /// Wake-ups as operations, their invocation latency.
    fn measure<'a>(&'a self, _d: DevView<'a>) -> Measure<'a> {
        Measure { latency: Some(&self.latency), ops: Some(self.loops), ..Default::default() }
    }
}
