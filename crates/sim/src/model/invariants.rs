//! Consistency of a vCPU's mode with its thread's scheduling state, checked after every event
//! in debug builds (tests): a violation is a model bug caught where it starts, not where it
//! later panics or silently stalls a stream.
//!
//! | vCPU mode | its thread |
//! |---|---|
//! | `Guest` (running guest code) | the current thread of its pCPU, switched in |
//! | `Exit` | current (handling the exit) or queued (preempted at the exit's end) |
//! | `Halted` | sleeping |
//! | `Waking` | queued, or current while being switched in |
//! | `Entering` | never between events: an entry always ends in a task or an exit |

use super::sched::State;
use super::vcpu::Mode;
use super::Host;

impl Host {
    /// Panic with a description if any vCPU's mode disagrees with its thread's state.
    pub(crate) fn check_invariants(&self) {
        for (v, vc) in self.vcpus.iter().enumerate() {
            let th = &self.sched.threads[v];
            let cpu = th.cpu as usize;
            let current = self.sched.rqs[cpu].curr == Some(v as u32);
            let ok = match vc.mode {
                Mode::Guest { .. } => th.state == State::Running && current && !self.switching[cpu],
                Mode::Exit { .. } => th.state == State::Running || th.state == State::Queued,
                Mode::Halted => th.state == State::Sleeping,
                Mode::Waking => th.state == State::Queued || (th.state == State::Running && self.switching[cpu]),
                Mode::Entering => false,
            };
            assert!(ok, "vCPU {v} in {:?} but its thread is {:?} on pCPU {cpu} (current: {current}, switching: {})",
                vc.mode, th.state, self.switching[cpu]);
        }
    }
}
