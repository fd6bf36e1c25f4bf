//! Consistency of a vCPU's mode with its thread's scheduling state, checked after every event
//! in debug builds (tests): a violation is a model bug caught where it starts, not where it
//! later panics or silently stalls a stream.
//!
//! | vCPU mode | its thread |
//! |---|---|
//! | `Guest` (running guest code) | the current thread of its pCPU, switched in |
//! | `Exit` | current (handling the exit) or queued (preempted at the exit's end) |
//! | `Halted` | sleeping |
//! | `Polling` | current, switched in (it polls on its pCPU) |
//! | `Waking` | queued, or current while being switched in |
//! | `Entering` | never between events: an entry always ends in a task or an exit |
//!
//! And a back-end thread sleeps exactly when it is neither in its loop nor being woken.

use crate::model::hypervisor::sched::State;
use crate::model::hypervisor::vcpu::Mode;
use crate::model::host::Host;

impl Host {
    /// Panic with a description if any vCPU's mode disagrees with its thread's state.
    pub(crate) fn check_invariants(&self) {
        for (v, vc) in self.vcpus.iter().enumerate() {
            let (state, cpu) = (self.sched.thread_state(v as u32), self.sched.thread_cpu(v as u32) as usize);
            let current = self.sched.current(cpu as u32) == Some(v as u32);
            let ok = match vc.mode {
                Mode::Guest { .. } => state == State::Running && current && !self.switch_in[cpu].armed(),
                Mode::Exit { .. } => state == State::Running || state == State::Queued,
                Mode::Halted => state == State::Sleeping,
                Mode::Polling => state == State::Running && current && !self.switch_in[cpu].armed(),
                // (Sleeping: a vCPU thread not yet started, `Event::ThreadStart`, has never run.)
                Mode::Waking => state == State::Queued || (state == State::Running && self.switch_in[cpu].armed())
                    || (state == State::Sleeping && self.sched.run_and_delay(0, v as u32).0 == 0),
                Mode::Entering => false,
            };
            assert!(ok, "vCPU {v} in {:?} but its thread is {:?} on pCPU {cpu} (current: {current}, switching: {})",
                vc.mode, state, self.switch_in[cpu].armed());
        }
        // A back-end thread asleep has no wake-up under way and is not in its loop; one with a
        // wake-up under way is on a runqueue (else the wake-up was lost for good).
        for (t, th) in self.io.threads.iter().enumerate() {
            let state = self.sched.thread_state(self.io_thread_tid(t as u32));
            let ok = match state {
                State::Sleeping => !th.running && !th.wake_pending,
                State::Queued | State::Running => th.running || th.wake_pending,
            };
            assert!(ok, "back-end thread {}: thread {state:?}, in loop {}, wake-up pending {}", th.name, th.running, th.wake_pending);
        }
    }
}
