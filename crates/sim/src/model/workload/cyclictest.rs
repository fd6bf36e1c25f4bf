//! cyclictest in the guest (DID §5.1, §5.4): a thread at the highest priority sleeps until its
//! next deadline (`clock_nanosleep`, one every `interval_us`), which the guest programs on its
//! LAPIC timer (a TMICT write); the timer interrupt's handler wakes the thread, which records its
//! *interrupt invocation latency* — from the timer's expiry to the thread running in user space
//! — and sleeps again. Each step of that path costs what the VM's delivery mode says: the TMICT
//! write and the timer interrupt exit under KVM and posting, the EOI exits under the emulated
//! LAPIC, nothing under DID (DID §5.4: "at least three VM exits" per timer operation in KVM).

use crate::model::workload::{App, Measure, state_in, Sender, Step};
use crate::model::{Ev, Host, NetDev};
use crate::engine::{EventQueue, Time, round_ns};
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
    state_in!(Cyclic);

    /// Due: the woken thread runs; else it sleeps until its deadline (the LAPIC timer).
    fn next(h: &mut Host, now: Time, v: u32, vm: usize, q: &mut EventQueue<Ev>) {
        let c = Self::state(h, vm);
        if now >= c.next_at {
            let cost = c.wake_cost;
            return h.run_step(now, v, Step::new(WAKE, 0, 0), cost, q);
        }
        let at = c.next_at;
        h.idle(now, v, Some(at), q)
    }

    fn step_done(h: &mut Host, now: Time, v: u32, vm: usize, _s: Step, q: &mut EventQueue<Ev>) {
        let c = Self::state(h, vm);
        c.latency.record(now - c.next_at);
        c.loops += 1;
        c.loops_life += 1;
        // cyclictest's absolute deadlines: the next one after now (an overrun skips).
        while c.next_at <= now {
            c.next_at += c.interval;
        }
        h.enter(now, v, q)
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
    fn measure<'a>(&'a self, _d: &'a NetDev) -> Measure<'a> {
        Measure { latency: Some(&self.latency), ops: Some(self.loops), ..Default::default() }
    }
}
