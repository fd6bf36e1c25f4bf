//! Net DIM as an interrupt moderator: [`Dim`] (which picks a coalescing *profile index*) driving
//! a [`Throttle`], so that a device drives it like FIR/CGR/AIR.
//!
//! Mapping (ours; the kernel applies a profile to NIC coalescing registers, which a paravirtual
//! device does not have):
//! * a profile `(usec, pkts)` becomes a [`Throttle`] at `1e6 / usec` interrupts/s
//!   ([`profile_rate`]): at most one interrupt per `usec`, counted from the previous interrupt,
//!   later completions coalescing into the armed one (the NIC's "period" as an ITR; the EQE/CQE
//!   distinction of when the period restarts is not modelled);
//! * `pkts` (the frame-count limit, 32-256 in every table) is not applied: a completion burst
//!   bigger than it would only interrupt earlier than `usec`, and a guest ring of 256 rarely holds
//!   that many between two interrupts at these rates;
//! * `net_dim()` is fed at every interrupt sent with the device's running counters (completions,
//!   bytes, interrupts), as a driver calls it from its NAPI poll; a returned profile is applied at
//!   once (`profile_applied()`), the driver's work item without the delay.

use super::{Dim, DimProfile, DimSample, DEF_PROFILE_IX, NUM_PROFILES, RX_CQE_PROFILES, RX_EQE_PROFILES, TX_CQE_PROFILES, TX_EQE_PROFILES};
use crate::error::ConfigError;
use crate::moderation::{InterruptModerator, IrqDecision, Throttle};

/// Profile tables by scenario name.
pub const TABLES: [(&str, [DimProfile; NUM_PROFILES]); 4] =
    [("rx_eqe", RX_EQE_PROFILES), ("rx_cqe", RX_CQE_PROFILES), ("tx_eqe", TX_EQE_PROFILES), ("tx_cqe", TX_CQE_PROFILES)];

/// `kind = "dim"` parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields, default))]
pub struct DimConfig {
    /// Profile table: "rx_eqe" (default) | "rx_cqe" | "tx_eqe" | "tx_cqe".
    pub profiles: String,
    /// Starting profile index, 0..=4 (default 1, `NET_DIM_DEF_PROFILE_*`).
    pub start_ix: usize,
}

impl Default for DimConfig {
    fn default() -> Self {
        Self { profiles: "rx_eqe".into(), start_ix: DEF_PROFILE_IX }
    }
}

impl DimConfig {
    /// The chosen table, or an error naming the key, value and what is allowed.
    pub fn table(&self) -> Result<[DimProfile; NUM_PROFILES], ConfigError> {
        TABLES.iter().find(|t| t.0 == self.profiles).map(|t| t.1).ok_or_else(|| {
            ConfigError::new("dim.profiles", format!("{:?}", self.profiles), format!("allowed: {}", TABLES.map(|t| t.0).join(", ")))
        })
    }

    /// Checks both keys.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.table()?;
        if self.start_ix >= NUM_PROFILES {
            return Err(ConfigError::new("dim.start_ix", self.start_ix, format!("must be in 0..={}", NUM_PROFILES - 1)));
        }
        Ok(())
    }
}

/// Interrupts/s of a profile: one per `usec`.
pub fn profile_rate(p: DimProfile) -> u32 {
    (1_000_000 / u32::from(p.usec.max(1))).max(1)
}

/// DIM driving a [`Throttle`].
#[derive(Debug, Clone)]
pub struct DimModerator {
    dim: Dim,
    table: [DimProfile; NUM_PROFILES],
    throttle: Throttle,
    pkt_ctr: u32,
    byte_ctr: u32,
    event_ctr: u16,
    /// Profile changes applied.
    pub changes: u64,
}

impl DimModerator {
    /// A moderator from a config (validated here).
    pub fn new(cfg: &DimConfig) -> Result<Self, ConfigError> {
        cfg.validate()?;
        let table = cfg.table()?;
        let dim = Dim::new(cfg.start_ix);
        let throttle = Throttle::new(profile_rate(table[dim.profile_ix()]));
        Ok(Self { dim, table, throttle, pkt_ctr: 0, byte_ctr: 0, event_ctr: 0, changes: 0 })
    }

    /// Current profile index.
    pub fn profile_ix(&self) -> usize {
        self.dim.profile_ix()
    }

    /// An interrupt was sent at `now_ns`: feed `net_dim()` and apply a new profile at once.
    fn count_interrupt(&mut self, now_ns: u64) {
        self.event_ctr = self.event_ctr.wrapping_add(1);
        let s = DimSample { time_ns: now_ns, pkt_ctr: self.pkt_ctr, byte_ctr: self.byte_ctr, event_ctr: self.event_ctr };
        if let Some(ix) = self.dim.net_dim(s) {
            self.throttle.set_rate(profile_rate(self.table[ix.min(NUM_PROFILES - 1)]));
            self.dim.profile_applied();
            self.changes += 1;
        }
    }
}

impl InterruptModerator for DimModerator {
    fn on_event(&mut self, now_ns: u64, packets: u32, bytes: u64) -> IrqDecision {
        self.pkt_ctr = self.pkt_ctr.wrapping_add(packets);
        self.byte_ctr = self.byte_ctr.wrapping_add(bytes as u32);
        let d = self.throttle.on_event(now_ns, packets, bytes);
        if d == IrqDecision::FireNow {
            self.count_interrupt(now_ns);
        }
        d
    }
    fn on_deadline(&mut self, now_ns: u64) -> bool {
        let fire = self.throttle.on_deadline(now_ns);
        if fire {
            self.count_interrupt(now_ns);
        }
        fire
    }
    fn advance(&mut self, _now_ns: u64) {}
    fn allowed_rate(&self) -> Option<u32> {
        self.throttle.allowed_rate()
    }
    fn observe(&mut self, _now_ns: u64, packets: u32, bytes: u64) {
        self.pkt_ctr = self.pkt_ctr.wrapping_add(packets);
        self.byte_ctr = self.byte_ctr.wrapping_add(bytes as u32);
    }
    fn fired(&mut self, now_ns: u64) {
        self.count_interrupt(now_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_maps_to_one_interrupt_per_usec() {
        assert_eq!(profile_rate(RX_EQE_PROFILES[0]), 1_000_000);
        assert_eq!(profile_rate(RX_EQE_PROFILES[1]), 125_000);
        assert_eq!(profile_rate(RX_EQE_PROFILES[4]), 3_906);
        assert_eq!(profile_rate(DimProfile { usec: 0, pkts: 1 }), 1_000_000);
        let m = DimModerator::new(&DimConfig::default()).unwrap();
        assert_eq!(m.allowed_rate(), Some(125_000));
    }

    #[test]
    fn start_ix_and_table_pick_the_first_rate() {
        let m = DimModerator::new(&DimConfig { profiles: "tx_cqe".into(), start_ix: 4 }).unwrap();
        assert_eq!((m.profile_ix(), m.allowed_rate()), (4, Some(1_000_000 / 64)));
    }

    #[test]
    fn config_errors_name_key_value_and_allowed() {
        let e = DimModerator::new(&DimConfig { profiles: "rx".into(), ..Default::default() }).unwrap_err();
        assert_eq!(e.to_string(), "dim.profiles = \"rx\": allowed: rx_eqe, rx_cqe, tx_eqe, tx_cqe");
        let e = DimModerator::new(&DimConfig { start_ix: 5, ..Default::default() }).unwrap_err();
        assert_eq!(e.to_string(), "dim.start_ix = 5: must be in 0..=4");
    }

    #[test]
    fn net_dim_is_fed_only_when_an_interrupt_is_sent() {
        // Events 1 µs apart against an 8 µs period: the first fires, the next is delayed, the rest
        // coalesce; only the fired ones count as DIM events.
        let mut m = DimModerator::new(&DimConfig::default()).unwrap();
        assert_eq!(m.on_event(0, 1, 64), IrqDecision::FireNow);
        assert_eq!(m.on_event(1_000, 1, 64), IrqDecision::DelayUntil(8_000));
        assert_eq!(m.on_event(2_000, 1, 64), IrqDecision::Coalesced);
        assert_eq!(m.event_ctr, 1);
        assert!(m.on_deadline(8_000));
        assert_eq!((m.event_ctr, m.pkt_ctr, m.byte_ctr), (2, 3, 192));
    }

    #[test]
    fn steady_traffic_makes_dim_change_profile_through_the_throttle() {
        // 100k completions/s of 64 B, an interrupt wanted for each: DIM measures every 64
        // interrupts and moves off its starting profile at some point.
        let mut m = DimModerator::new(&DimConfig::default()).unwrap();
        let mut t = 0u64;
        let mut deadline = None;
        for _ in 0..200_000 {
            t += 10_000;
            if let Some(d) = deadline {
                if t >= d {
                    deadline = None;
                    m.on_deadline(t);
                }
            }
            if let IrqDecision::DelayUntil(d) = m.on_event(t, 1, 64) {
                deadline = Some(d);
            }
        }
        assert!(m.changes > 0);
        assert_eq!(m.allowed_rate(), Some(profile_rate(RX_EQE_PROFILES[m.profile_ix()])));
    }
}
