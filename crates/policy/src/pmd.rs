//! A poll-mode (DPDK-style) back end's loop: the production descendant of ELVIS's sidecores
//! (vhost-user served by a poll-mode driver, e.g. OVS-DPDK's PMD threads).
//!
//! A PMD thread owns a dedicated core and a list of queues. Each *iteration* takes up to
//! `burst` packets from every queue in turn (DPDK's `NETDEV_MAX_BURST` = 32) and never asks
//! for a notification: the guest's kicks stay suppressed for good. What it does after an
//! iteration is this machine's decision, by its idle mode:
//!
//! * `busy` — poll again at once: the core is 100 % busy whatever the load.
//! * `sleep` — OVS-DPDK's load-based sleep (`pmd-maxsleep`, dpif-netdev.c `pmd_thread_main`):
//!   when no queue gave at least half a burst (`PMD_SLEEP_THRESH`), sleep the current sleep time
//!   and grow it by 1 µs (`PMD_SLEEP_INC_US`) up to `max_sleep_us`; an iteration with a queue
//!   at or above the threshold resets it to 0. The sleep is a timer: new packets do not end it.
//! * `monitor` — DPDK's power management in monitor mode (`rte_power_monitor`, UMWAIT): after
//!   `empty_polls` consecutive iterations that found nothing, wait until a queue is written
//!   (wake on write), then poll again.
//!
//! ```text
//!            ┌──────────── after_iteration(max packets of a queue) ───────────┐
//!  busy:     PollAgain
//!  sleep:    ≥ burst/2 → sleep := 0, PollAgain;  else Sleep(sleep) if sleep > 0, sleep += 1 µs ≤ max
//!  monitor:  > 0 → empties := 0, PollAgain;  else ++empties ≥ empty_polls → WaitForWork
//! ```

use crate::error::{at_least, ConfigError};

/// What the thread does when its queues give little.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(rename_all = "snake_case"))]
pub enum PmdIdle {
    /// Never idles: poll again at once (DPDK's default).
    Busy,
    /// OVS-DPDK's load-based sleep (`pmd-maxsleep`).
    Sleep,
    /// DPDK power management, monitor mode (UMWAIT on the queues): wake on write.
    Monitor,
}

/// Parameters of a PMD thread.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields, default))]
pub struct PmdConfig {
    /// Packets taken from a queue per look (`NETDEV_MAX_BURST`, default 32). Unit: packets.
    pub burst: u32,
    /// Idle mode (default `busy`).
    pub idle: PmdIdle,
    /// `sleep`: the longest sleep (default 250: OVS-DPDK's pmd power-save cap). Unit: µs.
    pub max_sleep_us: u32,
    /// `monitor`: empty iterations before it waits for a write (DPDK `RTE_PMD_POWER_MGMT`'s
    /// empty-poll threshold, default 512). Unit: iterations.
    pub empty_polls: u32,
}

impl Default for PmdConfig {
    fn default() -> Self {
        Self { burst: 32, idle: PmdIdle::Busy, max_sleep_us: 250, empty_polls: 512 }
    }
}

impl PmdConfig {
    /// Checks the ranges: `burst`, `max_sleep_us` and `empty_polls` at least 1.
    pub fn validate(&self) -> Result<(), ConfigError> {
        at_least("pmd.burst", self.burst, 1)?;
        at_least("pmd.max_sleep_us", self.max_sleep_us, 1)?;
        at_least("pmd.empty_polls", self.empty_polls, 1)
    }
}

/// What the thread does after an iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PmdDecision {
    /// Poll its queues again now.
    PollAgain,
    /// Sleep this long (a timer: packets do not end it), then poll. Unit: ns.
    Sleep {
        /// Length of the sleep.
        ns: u64,
    },
    /// Wait until one of its queues is written (UMWAIT), then poll.
    WaitForWork,
}

/// One PMD thread's idle state.
#[derive(Debug, Clone)]
pub struct PmdThread {
    cfg: PmdConfig,
    /// `sleep`: the sleep the next quiet iteration takes (µs).
    sleep_us: u32,
    /// `monitor`: quiet iterations in a row.
    empties: u32,
}

impl PmdThread {
    /// A thread that has just started polling.
    pub fn new(cfg: &PmdConfig) -> Self {
        Self { cfg: cfg.clone(), sleep_us: 0, empties: 0 }
    }

    /// Packets taken from a queue per look.
    pub fn burst(&self) -> u32 {
        self.cfg.burst
    }

    /// An iteration over its queues ended; `max_queue_packets` is the most packets any one
    /// queue gave in it.
    pub fn after_iteration(&mut self, max_queue_packets: u32) -> PmdDecision {
        match self.cfg.idle {
            PmdIdle::Busy => PmdDecision::PollAgain,
            PmdIdle::Sleep => {
                if max_queue_packets >= self.cfg.burst / 2 {
                    self.sleep_us = 0;
                    return PmdDecision::PollAgain;
                }
                let now = self.sleep_us;
                self.sleep_us = (self.sleep_us + 1).min(self.cfg.max_sleep_us);
                if now == 0 {
                    PmdDecision::PollAgain
                } else {
                    PmdDecision::Sleep { ns: u64::from(now) * 1000 }
                }
            }
            PmdIdle::Monitor => {
                if max_queue_packets > 0 {
                    self.empties = 0;
                    return PmdDecision::PollAgain;
                }
                self.empties += 1;
                if self.empties >= self.cfg.empty_polls {
                    self.empties = 0;
                    PmdDecision::WaitForWork
                } else {
                    PmdDecision::PollAgain
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use PmdDecision::{PollAgain, Sleep, WaitForWork};

    fn thread(idle: PmdIdle) -> PmdThread {
        PmdThread::new(&PmdConfig { idle, max_sleep_us: 3, empty_polls: 2, ..PmdConfig::default() })
    }

    #[test]
    fn defaults_are_dpdk_and_ovs_values() {
        let c = PmdConfig::default();
        assert_eq!((c.burst, c.idle, c.max_sleep_us, c.empty_polls), (32, PmdIdle::Busy, 250, 512));
        assert!(PmdConfig { burst: 0, ..c.clone() }.validate().is_err());
        assert!(PmdConfig { max_sleep_us: 0, ..c.clone() }.validate().is_err());
        assert!(PmdConfig { empty_polls: 0, ..c }.validate().is_err());
    }

    #[test]
    fn busy_never_idles() {
        let mut t = thread(PmdIdle::Busy);
        for _ in 0..1000 {
            assert_eq!(t.after_iteration(0), PollAgain);
        }
    }

    #[test]
    fn sleep_grows_one_microsecond_per_quiet_iteration_up_to_the_cap() {
        let mut t = thread(PmdIdle::Sleep);
        let got: Vec<_> = (0..6).map(|_| t.after_iteration(15)).collect();
        let us = |n: u64| Sleep { ns: n * 1000 };
        assert_eq!(got, vec![PollAgain, us(1), us(2), us(3), us(3), us(3)]);
    }

    #[test]
    fn half_a_burst_from_any_queue_resets_the_sleep() {
        let mut t = thread(PmdIdle::Sleep);
        t.after_iteration(0);
        t.after_iteration(0);
        assert_eq!(t.after_iteration(16), PollAgain);
        assert_eq!(t.after_iteration(0), PollAgain, "the sleep starts again from 0");
        assert_eq!(t.after_iteration(0), Sleep { ns: 1000 });
    }

    #[test]
    fn monitor_waits_for_a_write_after_enough_empty_iterations() {
        let mut t = thread(PmdIdle::Monitor);
        assert_eq!(t.after_iteration(0), PollAgain);
        assert_eq!(t.after_iteration(0), WaitForWork);
        assert_eq!(t.after_iteration(0), PollAgain, "the count starts over after a wait");
        assert_eq!(t.after_iteration(1), PollAgain);
        assert_eq!(t.after_iteration(0), PollAgain, "a packet resets the count");
        assert_eq!(t.after_iteration(0), WaitForWork);
    }
}
