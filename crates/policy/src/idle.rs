//! The idle governor: which idle state an idle CPU's wake-up is paid from (drivers/cpuidle).
//!
//! A thread woken onto an idle CPU runs only after the CPU leaves its idle state, so the
//! wake-up costs what that state costs: its exit latency, and CPU the woken side spends
//! because of it. Which state that is depends on the length of the idle period, through the
//! governor:
//!
//! - **menu** (drivers/cpuidle/governors/menu.c, a bare-metal host): when the CPU goes idle it
//!   predicts the idle period from the recent ones (`get_typical_interval`) and enters the
//!   deepest state whose target residency fits the prediction ([`Menu`]).
//! - **haltpoll** (drivers/cpuidle/governors/haltpoll.c with the cpuidle-haltpoll driver, a
//!   guest-style host such as a nested hypervisor): state 0 is a poll loop of up to an adaptive
//!   `poll_limit_ns`; when it times out the CPU halts, which is an exit to the outer
//!   hypervisor. The outer hypervisor then halt-polls for its own window before it really
//!   sleeps, so how long the halt lasted decides the halt's wake-up cost *after the fact*:
//!   states 1.. of the table are the halt's outcomes, the deepest whose target residency the
//!   halt's length reached ([`Haltpoll`]).
//!
//! The caller (the simulator's scheduler, `sched/idle.rs`) reports each finished idle period
//! with [`Governor::wake`] and gets the state index to charge.

use crate::error::{at_least, ConfigError};

/// Most idle states a table may list.
pub const MAX_STATES: usize = 8;

/// Recent idle periods menu remembers (menu.c `INTERVALS`).
const INTERVALS: usize = 8;

/// One idle state as the governor and the wake-up see it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IdleState {
    /// From the wake-up signal to the CPU executing again (`exit_latency`). Unit: ns.
    pub exit_latency_ns: u64,
    /// Shortest idle period (menu: predicted; haltpoll's halt states: the halt's actual length)
    /// for which this state is the one entered (`target_residency`). Unit: ns.
    pub target_residency_ns: u64,
    /// CPU the woken thread spends because its CPU left this state (beyond a wake-up from the
    /// shallowest one): refilled caches, a nested host's exits. Unit: ns.
    pub wake_cpu_ns: u64,
}

/// A CPU's idle states, shallowest first.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StateTable {
    states: [IdleState; MAX_STATES],
    n: usize,
}

impl StateTable {
    /// A table from states listed shallowest first (at most [`MAX_STATES`] are kept).
    pub fn new(states: impl IntoIterator<Item = IdleState>) -> StateTable {
        let mut t = StateTable::default();
        for s in states.into_iter().take(MAX_STATES) {
            t.states[t.n] = s;
            t.n += 1;
        }
        t
    }

    /// Number of states (0: idle CPUs wake without an idle-state cost).
    pub fn len(&self) -> usize {
        self.n
    }

    /// True when the table lists no state.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// State `i`.
    pub fn state(&self, i: usize) -> IdleState {
        self.states[i]
    }

    /// The deepest state in `from..` whose target residency does not exceed `ns` (`from` when
    /// none fits): menu.c's loop over the states, and the outer hypervisor's halt outcome.
    pub fn deepest_fit(&self, from: usize, ns: u64) -> usize {
        (from + 1..self.n).rev().find(|&i| self.states[i].target_residency_ns <= ns).unwrap_or(from)
    }
}

/// Which governor a host's idle CPUs use.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(rename_all = "lowercase"))]
pub enum GovernorKind {
    /// menu.c: the deepest state that fits the predicted idle period (a bare-metal host).
    #[default]
    Menu,
    /// haltpoll.c: poll up to an adaptive window, then halt to the outer hypervisor.
    Haltpoll,
}

/// The haltpoll governor's module parameters (/sys/module/haltpoll/parameters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields, default))]
pub struct HaltpollConfig {
    /// `guest_halt_poll_ns`: the longest poll window (default 200000; 0: never poll). Unit: ns.
    pub guest_halt_poll_ns: u32,
    /// `guest_halt_poll_grow`: multiplier when the window grows (default 2).
    pub grow: u32,
    /// `guest_halt_poll_grow_start`: the first non-zero window (default 50000). Unit: ns.
    pub grow_start_ns: u32,
    /// `guest_halt_poll_shrink`: divisor when the window shrinks (default 2; 0: reset to 0).
    pub shrink: u32,
    /// `guest_halt_poll_allow_shrink` (default true).
    pub allow_shrink: bool,
}

impl Default for HaltpollConfig {
    fn default() -> Self {
        HaltpollConfig { guest_halt_poll_ns: 200_000, grow: 2, grow_start_ns: 50_000, shrink: 2, allow_shrink: true }
    }
}

impl HaltpollConfig {
    /// Checks `grow_start_ns >= 1`: a window grown from 0 with a 0 start never leaves 0 (the
    /// kernel refuses it since "cpuidle-haltpoll: ensure grow start value is nonzero").
    pub fn validate(&self) -> Result<(), ConfigError> {
        at_least("host.cstates.haltpoll.grow_start_ns", self.grow_start_ns, 1)
    }
}

/// `x / n`, with one 64-bit division where `x` fits (what it almost always does: eight idle
/// periods of under 2^61 ns each), not the 128-bit division's library call.
#[inline]
fn div_n(x: u128, n: u64) -> u128 {
    if x <= u64::MAX as u128 { ((x as u64) / n) as u128 } else { x / n as u128 }
}

/// menu's memory of one CPU: its recent idle periods.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Menu {
    intervals: [u64; INTERVALS],
    filled: usize,
    next: usize,
}

impl Menu {
    /// Record a finished idle period (ns).
    pub fn record(&mut self, ns: u64) {
        self.intervals[self.next] = ns;
        self.next = (self.next + 1) % INTERVALS;
        self.filled = (self.filled + 1).min(INTERVALS);
    }

    /// The predicted idle period (ns); `u64::MAX` before any history (deepest state).
    ///
    /// menu.c `get_typical_interval` (4.4): the mean of the recent periods counts as typical
    /// when it exceeds six standard deviations (with at least 3/4 of the samples kept) or the
    /// deviation is at most 20 µs; otherwise the largest periods are dropped and the test
    /// repeated until only 3/4 of them remain. When none is typical Linux uses the next timer
    /// event scaled by a learned correction factor; this uses the mean of all recent periods
    /// (what that factor converges to). The iowait multiplier and PM QoS are not modelled.
    pub fn predict(&self) -> u64 {
        if self.filled == 0 {
            return u64::MAX;
        }
        let all = &self.intervals[..self.filled];
        let mut thresh = u64::MAX;
        loop {
            let (mut n, mut sum, mut max) = (0u64, 0u128, 0u64);
            for &x in all.iter().filter(|&&x| x <= thresh) {
                n += 1;
                sum += x as u128;
                max = max.max(x);
            }
            let avg = div_n(sum, n) as u64;
            let var = div_n(all.iter().filter(|&&x| x <= thresh).map(|&x| (x.abs_diff(avg) as u128).pow(2)).sum::<u128>(), n);
            // Exactly `var as f64` (both round the same integer to nearest).
            let stddev = if var <= u64::MAX as u128 { (var as u64) as f64 } else { var as f64 }.sqrt() as u64;
            if (avg > 6 * stddev && n * 4 >= self.filled as u64 * 3) || stddev <= 20_000 {
                return avg;
            }
            if n * 4 <= self.filled as u64 * 3 || max == 0 {
                return (all.iter().map(|&x| x as u128).sum::<u128>() / self.filled as u128) as u64;
            }
            thresh = max - 1;
        }
    }

    /// The state menu enters for the next idle period: the deepest that fits the prediction.
    pub fn select(&self, t: &StateTable) -> usize {
        t.deepest_fit(0, self.predict())
    }
}

/// haltpoll's state of one CPU: its adaptive poll window (`dev->poll_limit_ns`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Haltpoll {
    cfg: HaltpollConfig,
    poll_limit_ns: u64,
}

impl Haltpoll {
    /// A CPU as `haltpoll_enable_device` leaves it: window 0 (its first idle halts at once).
    pub fn new(cfg: HaltpollConfig) -> Haltpoll {
        Haltpoll { cfg, poll_limit_ns: 0 }
    }

    /// The current poll window (ns).
    pub fn poll_limit_ns(&self) -> u64 {
        self.poll_limit_ns
    }

    /// `adjust_poll_limit` (Linux 6.9 shape, with "do not shrink guest poll_limit_ns below
    /// grow_start"): a halt of `block_ns` longer than the window but within
    /// `guest_halt_poll_ns` grows it (×grow, at least grow_start, at most guest_halt_poll_ns);
    /// a halt past `guest_halt_poll_ns` shrinks it (÷shrink, to 0 below grow_start).
    pub fn adjust(&mut self, block_ns: u64) {
        let max = self.cfg.guest_halt_poll_ns as u64;
        let start = self.cfg.grow_start_ns as u64;
        if block_ns > self.poll_limit_ns && block_ns <= max {
            self.poll_limit_ns = (self.poll_limit_ns * self.cfg.grow as u64).max(start).min(max);
        } else if block_ns > max && self.cfg.allow_shrink {
            let val = if self.cfg.shrink == 0 { 0 } else { self.poll_limit_ns / self.cfg.shrink as u64 };
            self.poll_limit_ns = if val < start { 0 } else { val };
        }
    }

    /// One idle period of `idle_ns` ended. `haltpoll_select` polls first unless the window is 0
    /// (the poll after a halt, and again after a poll that saw its event); a poll that times out
    /// halts (`poll_time_limit`), and `haltpoll_reflect` adjusts the window by the halt's
    /// length. Returns the state paid: 0 if the wake-up came while polling, else the halt
    /// outcome among states 1.. that the halt's length reached.
    pub fn wake(&mut self, t: &StateTable, idle_ns: u64) -> usize {
        let poll = self.poll_limit_ns;
        if poll > 0 && idle_ns <= poll {
            return 0;
        }
        let block_ns = idle_ns - poll.min(idle_ns);
        self.adjust(block_ns);
        t.deepest_fit(1.min(t.len().saturating_sub(1)), block_ns)
    }
}

/// One CPU's governor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Governor {
    /// menu, with its history.
    Menu(Menu),
    /// haltpoll, with its window.
    Haltpoll(Haltpoll),
}

impl Governor {
    /// A fresh governor of `kind` (`cfg` is haltpoll's).
    pub fn new(kind: GovernorKind, cfg: HaltpollConfig) -> Governor {
        match kind {
            GovernorKind::Menu => Governor::Menu(Menu::default()),
            GovernorKind::Haltpoll => Governor::Haltpoll(Haltpoll::new(cfg)),
        }
    }

    /// An idle period of `idle_ns` ended with a wake-up: the state it is paid from (menu: the
    /// one chosen from the prediction made when it began), the governor updated.
    pub fn wake(&mut self, t: &StateTable, idle_ns: u64) -> usize {
        match self {
            Governor::Menu(m) => {
                let s = m.select(t);
                m.record(idle_ns);
                s
            }
            Governor::Haltpoll(h) => h.wake(t, idle_ns),
        }
    }
}

#[cfg(test)]
#[path = "idle_tests.rs"]
mod tests;
