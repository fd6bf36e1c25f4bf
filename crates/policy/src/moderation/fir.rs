//! FIR: fixed interrupt rate, the baseline of the CGR/AIR paper (§4.1).

use crate::error::{at_least, ConfigError};

/// Parameters of a fixed ITR.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields, default))]
pub struct FirConfig {
    /// Interrupts per second at most (`InterruptThrottleRate`; "8,000 Ints/s in Linux", §3.2 and
    /// §4.1). Unit: interrupts/s.
    pub itr: u32,
}

impl Default for FirConfig {
    fn default() -> Self {
        Self { itr: 8000 }
    }
}

impl FirConfig {
    /// Checks `itr >= 1`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        at_least("fir.itr", self.itr, 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::moderation::{InterruptModerator, IrqDecision, ModerationConfig};

    #[test]
    fn fixed_rate_caps_interrupts_per_second() {
        let mut m = ModerationConfig::Fir(FirConfig::default()).build(0).unwrap();
        // One packet every 10 µs for 1 s, firing delayed interrupts at their deadlines.
        let (mut fired, mut deadline) = (0u32, None);
        for i in 0..100_000u64 {
            let now = i * 10_000;
            // The delayed interrupt fires at its own deadline, before this event.
            if let Some(d) = deadline.filter(|&d| now >= d) {
                assert!(m.on_deadline(d));
                fired += 1;
                deadline = None;
            }
            match m.on_event(now, 1, 1500) {
                IrqDecision::FireNow => fired += 1,
                IrqDecision::DelayUntil(d) => deadline = Some(d),
                IrqDecision::Coalesced => {}
            }
        }
        assert!((7990..=8001).contains(&fired), "fired {fired}");
        assert!(FirConfig { itr: 0 }.validate().is_err());
    }
}
