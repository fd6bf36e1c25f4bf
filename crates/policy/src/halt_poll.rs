//! KVM halt polling: adaptive `halt_poll_ns` per vCPU (virt/kvm/kvm_main.c).
//!
//! Ports `grow_halt_poll_ns()`, `shrink_halt_poll_ns()` and the decision at the end of
//! `kvm_vcpu_halt()` (Linux ≥ 5.19 shape, where the per-VM maximum clamps `halt_poll_ns` at the
//! start of each halt rather than inside `grow_halt_poll_ns()`):
//!
//! ```text
//! if halt_poll_ns > max: halt_poll_ns = max
//! poll up to halt_poll_ns; then block (unless the wake-up came while polling)
//! if !valid_wakeup:                                   shrink
//! elif max != 0:
//!     if halt_ns <= halt_poll_ns:                      (nothing)
//!     elif halt_poll_ns != 0 && halt_ns > max:         shrink   // long block
//!     elif halt_poll_ns < max && halt_ns < max:        grow     // short halt, poll too small
//! else:                                               halt_poll_ns = 0
//! ```

use crate::error::{at_least, ConfigError};

/// KVM's halt-polling module parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields, default))]
pub struct HaltPollConfig {
    /// `halt_poll_ns`: maximum poll time per halt (x86 `KVM_HALT_POLL_NS_DEFAULT` = 200000).
    /// 0 disables halt polling. Unit: ns.
    pub max_halt_poll_ns: u32,
    /// `halt_poll_ns_grow`: multiplier on growth (default 2); 0 disables growth.
    pub grow: u32,
    /// `halt_poll_ns_grow_start`: first non-zero poll time (default 10000). Unit: ns.
    pub grow_start: u32,
    /// `halt_poll_ns_shrink`: divisor on shrink (default 0 = reset to 0).
    pub shrink: u32,
}

impl Default for HaltPollConfig {
    fn default() -> Self {
        Self { max_halt_poll_ns: 200_000, grow: 2, grow_start: 10_000, shrink: 0 }
    }
}

impl HaltPollConfig {
    /// Checks `grow_start >= 1` (upstream accepts 0 but then never leaves 0 when growing from 0).
    pub fn validate(&self) -> Result<(), ConfigError> {
        at_least("halt_poll.grow_start", self.grow_start, 1)
    }
}

/// How one halt ended, as `kvm_vcpu_halt()` measures it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HaltOutcome {
    /// Total halted time including polling (`cur - start`). Unit: ns.
    pub halt_ns: u64,
    /// The vCPU actually blocked (the wake-up did not come while polling).
    pub waited: bool,
    /// `vcpu_valid_wakeup()`: woken by a real event (not, e.g., a spurious kick).
    pub valid_wakeup: bool,
}

/// Adaptive halt-polling state of one vCPU.
#[derive(Debug, Clone)]
pub struct HaltPoll {
    cfg: HaltPollConfig,
    /// `vcpu->halt_poll_ns`.
    halt_poll_ns: u32,
}

impl HaltPoll {
    /// A vCPU with `halt_poll_ns = 0`.
    pub fn new(cfg: HaltPollConfig) -> Self {
        Self { cfg, halt_poll_ns: 0 }
    }

    /// Current `vcpu->halt_poll_ns`.
    pub fn halt_poll_ns(&self) -> u32 {
        self.halt_poll_ns
    }

    /// Start of `kvm_vcpu_halt()`: clamps to the maximum and returns how long to poll before
    /// blocking (0: block at once).
    pub fn begin_halt(&mut self) -> u32 {
        self.halt_poll_ns = self.halt_poll_ns.min(self.cfg.max_halt_poll_ns);
        self.halt_poll_ns
    }

    /// End of `kvm_vcpu_halt()`: adapts `halt_poll_ns` from the outcome.
    pub fn end_halt(&mut self, o: HaltOutcome) {
        let max = self.cfg.max_halt_poll_ns;
        let cur = self.halt_poll_ns;
        if !o.valid_wakeup {
            self.shrink_halt_poll_ns();
        } else if max != 0 {
            if o.halt_ns <= u64::from(cur) {
                // polled long enough
            } else if cur != 0 && o.halt_ns > u64::from(max) {
                self.shrink_halt_poll_ns();
            } else if cur < max && o.halt_ns < u64::from(max) {
                self.grow_halt_poll_ns();
            }
        } else {
            self.halt_poll_ns = 0;
        }
    }

    /// Port of `grow_halt_poll_ns()` (C `unsigned int` multiplication wraps).
    fn grow_halt_poll_ns(&mut self) {
        if self.cfg.grow == 0 {
            return;
        }
        let mut val = self.halt_poll_ns.wrapping_mul(self.cfg.grow);
        if val < self.cfg.grow_start {
            val = self.cfg.grow_start;
        }
        self.halt_poll_ns = val;
    }

    /// Port of `shrink_halt_poll_ns()`.
    fn shrink_halt_poll_ns(&mut self) {
        // `if (shrink == 0) val = 0; else val /= shrink;`
        let mut val = self.halt_poll_ns.checked_div(self.cfg.shrink).unwrap_or(0);
        if val < self.cfg.grow_start {
            val = 0;
        }
        self.halt_poll_ns = val;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn short(halt_ns: u64) -> HaltOutcome {
        HaltOutcome { halt_ns, waited: true, valid_wakeup: true }
    }

    #[test]
    fn short_halts_grow_from_grow_start_and_clamp_at_max() {
        let mut h = HaltPoll::new(HaltPollConfig::default());
        assert_eq!(h.begin_halt(), 0);
        h.end_halt(short(5_000));
        assert_eq!(h.halt_poll_ns(), 10_000);
        let mut seen = vec![];
        for _ in 0..6 {
            h.begin_halt();
            h.end_halt(short(199_999));
            seen.push(h.halt_poll_ns());
        }
        // 320000 exceeds the maximum; the next halt's start clamps it to 200000, and a halt that
        // ends within the poll window changes nothing.
        assert_eq!(seen, vec![20_000, 40_000, 80_000, 160_000, 320_000, 200_000]);
    }

    #[test]
    fn halt_within_poll_window_keeps_value() {
        let mut h = HaltPoll::new(HaltPollConfig::default());
        h.end_halt(short(1));
        h.end_halt(HaltOutcome { halt_ns: 9_000, waited: false, valid_wakeup: true });
        assert_eq!(h.halt_poll_ns(), 10_000);
    }

    #[test]
    fn long_block_shrinks_to_zero_by_default() {
        let mut h = HaltPoll::new(HaltPollConfig::default());
        h.end_halt(short(1));
        h.end_halt(short(300_000));
        assert_eq!(h.halt_poll_ns(), 0);
    }

    #[test]
    fn shrink_divides_and_drops_below_grow_start() {
        let mut h = HaltPoll::new(HaltPollConfig { shrink: 2, ..Default::default() });
        for _ in 0..3 {
            h.end_halt(short(150_000));
        }
        assert_eq!(h.halt_poll_ns(), 40_000);
        h.end_halt(short(1_000_000));
        assert_eq!(h.halt_poll_ns(), 20_000);
        h.end_halt(HaltOutcome { halt_ns: 1, waited: false, valid_wakeup: false });
        assert_eq!(h.halt_poll_ns(), 10_000);
        h.end_halt(short(1_000_000));
        assert_eq!(h.halt_poll_ns(), 0); // 5000 < grow_start
    }

    #[test]
    fn max_zero_disables_polling() {
        let mut h = HaltPoll::new(HaltPollConfig { max_halt_poll_ns: 0, ..Default::default() });
        h.end_halt(short(1));
        assert_eq!(h.halt_poll_ns(), 0);
        assert_eq!(h.begin_halt(), 0);
    }
}
