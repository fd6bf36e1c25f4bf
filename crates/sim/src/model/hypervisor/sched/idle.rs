//! Processor idle states (C-states): the scheduler's adapter of `eventpath_policy::idle`.
//!
//! A thread woken onto an idle pCPU runs only after the pCPU leaves its idle state, so the
//! wake-up latency depends on how deep the pCPU went: about 1 µs from C1, 80–100 µs from C6
//! on the Xeons of the seeds' testbeds (`intel_idle` tables in the profiles, menu governor); on
//! a nested host (haltpoll governor) a few µs when the outer hypervisor's halt polling catches
//! the wake-up, tens when it had gone to sleep. The state also sets the CPU the woken thread
//! spends for the wake-up (`wake_cpu_ns`). Which state is paid is the policy's decision
//! ([`Governor::wake`]); this file only keeps each pCPU's governor and when it went idle.

use crate::engine::{round_ns, Rng, Time};
use eventpath_policy::idle::{Governor, GovernorKind, HaltpollConfig, IdleState, StateTable};

pub use crate::profile::MAX_CSTATES;

/// The host's idle states and governor, as the profile gives them.
#[derive(Debug, Clone, Copy, Default)]
pub struct CStateTable {
    /// The states, shallowest first.
    pub table: StateTable,
    /// menu or haltpoll.
    pub governor: GovernorKind,
    /// haltpoll's parameters.
    pub haltpoll: HaltpollConfig,
}

impl CStateTable {
    /// A menu-governed table from (exit latency, target residency) pairs, no wake-up CPU.
    pub fn new(states: impl IntoIterator<Item = (u64, u64)>) -> CStateTable {
        let table = StateTable::new(states.into_iter().map(|(e, r)| IdleState { exit_latency_ns: e, target_residency_ns: r, wake_cpu_ns: 0 }));
        CStateTable { table, ..CStateTable::default() }
    }

    /// The profile's `host.cstates`.
    pub fn from_profile(c: &crate::profile::CStates) -> CStateTable {
        let table = StateTable::new(c.states.iter().map(|s| IdleState {
            exit_latency_ns: round_ns(s.exit_latency_ns),
            target_residency_ns: round_ns(s.target_residency_ns),
            wake_cpu_ns: round_ns(s.wake_cpu_ns),
        }));
        CStateTable { table, governor: c.governor, haltpoll: c.haltpoll.unwrap_or_default() }
    }

    /// Number of states (0: idle pCPUs wake without an idle-state cost).
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// True when the profile lists no idle states.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }
}

/// One pCPU's idle bookkeeping: when it went idle, and its governor.
#[derive(Debug, Clone, Copy)]
pub struct IdleHistory {
    /// When the pCPU last went idle.
    pub since: Time,
    gov: Governor,
}

impl Default for IdleHistory {
    fn default() -> Self {
        IdleHistory { since: 0, gov: Governor::new(GovernorKind::Menu, HaltpollConfig::default()) }
    }
}

impl IdleHistory {
    /// A pCPU governed as `t` says.
    pub fn new(t: &CStateTable) -> IdleHistory {
        IdleHistory { since: 0, gov: Governor::new(t.governor, t.haltpoll) }
    }

    /// The pCPU is woken at `now`: the state its idle period is paid from.
    pub fn wake(&mut self, t: &CStateTable, now: Time) -> IdleState {
        let i = self.wake_index(t, now);
        t.table.state(i)
    }

    /// As [`Self::wake`], the state's index.
    pub fn wake_index(&mut self, t: &CStateTable, now: Time) -> usize {
        self.gov.wake(&t.table, now - self.since)
    }
}

/// A thread switched in on an idle pCPU: the delay before it runs (the wake-up IPI and idle
/// exit, `host.thread_wakeup_ns` or, for the expiry of its own timed sleep, `timer_wakeup_ns`,
/// spread by the thread's stream, plus the exit latency of the idle state the governor had
/// chosen) and the CPU it then owes for that state (`wake_cpu_ns`). Every host scheduler charges
/// an idle pCPU's wake-up through this one function; `cstate_wakeups` counts the state left.
pub(super) fn idle_wakeup(p: &super::Params, idle: &mut IdleHistory, rng: &mut Rng, timer: bool, now: Time, cstate_wakeups: &mut [u64; MAX_CSTATES]) -> (Time, Time) {
    let mean = if timer { p.timer_wakeup_ns } else { p.idle_wakeup_ns };
    // The profile bounds the spread by the kick wake-up (`profile::NOT_ABOVE`); a timer
    // wake-up (`host.timer_wakeup_ns`) shorter than it takes the spread only as far as 0.
    let s = p.idle_wakeup_spread_ns.min(mean);
    let wake = round_ns(mean - s + 2.0 * s * rng.uniform());
    if p.cstates.is_empty() {
        return (wake, 0);
    }
    // The governor's decision (eventpath_policy::idle): the state this idle period is paid
    // from, its exit before the thread runs, its CPU after.
    let i = idle.wake_index(&p.cstates, now);
    cstate_wakeups[i] += 1;
    let state = p.cstates.table.state(i);
    (wake + state.exit_latency_ns, state.wake_cpu_ns)
}
