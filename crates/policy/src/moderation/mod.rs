//! Device-side interrupt moderation: how often a device (paravirtual backend or SR-IOV VF) may
//! interrupt, and whether a given interrupt fires now or is delayed.
//!
//! Every scheme is a [`Throttle`] (the NIC's ITR: at most one interrupt per `1/rate` seconds;
//! an interrupt asked for earlier is *delayed* to that deadline and further requests coalesce into
//! it) plus a rate controller that may change the rate from traffic observed in fixed windows:
//!
//! * [`fir`]: fixed rate (baseline, CGR/AIR paper §4.1; Linux default 8000/s);
//! * [`cgr`]: coarse-grained classes by average packet size (§4.2);
//! * [`air`]: the adaptive model and Algorithm 1 (§4.3);
//! * [`dim`]: Linux net DIM (lib/dim/net_dim.c), whose profile sets the throttle's rate;
//! * [`ixgbevf_itr`]: the SR-IOV VF driver's own dynamic throttle (ixgbevf's default);
//! * [`nic_itr`]: a physical NIC's receive throttle as its driver runs it — fixed, or the
//!   adaptive ITR of ixgbe ([`ixgbe_itr`], shared with ixgbevf) or i40e ([`i40e_itr`]).
//!
//! All implement [`InterruptModerator`]; [`ModerationConfig::build`] makes any of them.

pub mod air;
pub mod cgr;
pub mod dim;
pub mod fir;
pub mod i40e_itr;
pub mod ixgbe_itr;
pub mod ixgbevf_itr;
pub mod nic_itr;
mod throttle;
mod window;

pub use air::{Air, AirConfig, AirControl};
pub use cgr::{Cgr, CgrConfig, CgrControl, TrafficClass};
pub use dim::{DimConfig, DimModerator};
pub use fir::FirConfig;
pub use nic_itr::{AdaptiveItr, NicItrDriver};
pub use throttle::Throttle;
pub use window::{Window, WindowControl, WindowSample, Windowed};

use crate::error::ConfigError;

/// Whether an interrupt the device wants to raise fires now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IrqDecision {
    /// Raise the interrupt now.
    FireNow,
    /// Too early: a delayed interrupt is armed for `deadline_ns`; call
    /// [`InterruptModerator::on_deadline`] then.
    DelayUntil(u64),
    /// A delayed interrupt is already armed; this event coalesces into it.
    Coalesced,
}

/// A moderation scheme: observations at time `now_ns` in, interrupt decisions out.
pub trait InterruptModerator {
    /// The device has new completions (`packets`, `bytes`) to signal at `now_ns`.
    fn on_event(&mut self, now_ns: u64, packets: u32, bytes: u64) -> IrqDecision;
    /// The armed deadline came; returns true when the delayed interrupt fires now.
    fn on_deadline(&mut self, now_ns: u64) -> bool;
    /// Closes elapsed measurement windows without an event (e.g. from a periodic tick).
    fn advance(&mut self, now_ns: u64);
    /// The currently allowed rate in interrupts per second (`None`: unlimited).
    fn allowed_rate(&self) -> Option<u32>;
}

/// No moderation: every event interrupts.
#[derive(Debug, Clone, Default)]
pub struct NoModeration;

impl InterruptModerator for NoModeration {
    fn on_event(&mut self, _now_ns: u64, _packets: u32, _bytes: u64) -> IrqDecision {
        IrqDecision::FireNow
    }
    fn on_deadline(&mut self, _now_ns: u64) -> bool {
        false
    }
    fn advance(&mut self, _now_ns: u64) {}
    fn allowed_rate(&self) -> Option<u32> {
        None
    }
}

/// Which scheme a device uses (scenario-file form).
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)
)]
pub enum ModerationConfig {
    /// [`NoModeration`].
    #[default]
    None,
    /// Fixed ITR.
    Fir(FirConfig),
    /// Coarse-grained rate control.
    Cgr(CgrConfig),
    /// Adaptive rate control.
    Air(AirConfig),
    /// Linux net DIM's profiles as a rate.
    Dim(DimConfig),
}

impl ModerationConfig {
    /// The `kind` of each scheme, as a scenario names it.
    pub const KINDS: [&'static str; 5] = ["none", "fir", "cgr", "air", "dim"];

    /// Checks the chosen scheme's parameters.
    pub fn validate(&self) -> Result<(), ConfigError> {
        match self {
            ModerationConfig::None => Ok(()),
            ModerationConfig::Fir(c) => c.validate(),
            ModerationConfig::Cgr(c) => c.validate(),
            ModerationConfig::Air(c) => c.validate(),
            ModerationConfig::Dim(c) => c.validate(),
        }
    }

    /// Validates and builds the moderator; `now_ns` starts its measurement windows.
    pub fn build(&self, now_ns: u64) -> Result<Moderator, ConfigError> {
        self.validate()?;
        Ok(match self {
            ModerationConfig::None => Moderator::None(NoModeration),
            ModerationConfig::Fir(c) => Moderator::Fir(Throttle::new(c.itr)),
            ModerationConfig::Cgr(c) => Moderator::Cgr(Cgr::new(c.clone(), now_ns)),
            ModerationConfig::Air(c) => Moderator::Air(Air::new(c.clone(), now_ns)),
            ModerationConfig::Dim(c) => Moderator::Dim(DimModerator::new(c)?),
        })
    }
}

/// Any moderator, dispatched without boxing.
#[derive(Debug, Clone)]
pub enum Moderator {
    /// See [`NoModeration`].
    None(NoModeration),
    /// A fixed-rate [`Throttle`].
    Fir(Throttle),
    /// See [`Cgr`].
    Cgr(Cgr),
    /// See [`Air`].
    Air(Air),
    /// See [`DimModerator`].
    Dim(DimModerator),
}

impl Moderator {
    fn inner(&mut self) -> &mut dyn InterruptModerator {
        match self {
            Moderator::None(m) => m,
            Moderator::Fir(m) => m,
            Moderator::Cgr(m) => m,
            Moderator::Air(m) => m,
            Moderator::Dim(m) => m,
        }
    }
}

impl InterruptModerator for Moderator {
    fn on_event(&mut self, now_ns: u64, packets: u32, bytes: u64) -> IrqDecision {
        self.inner().on_event(now_ns, packets, bytes)
    }
    fn on_deadline(&mut self, now_ns: u64) -> bool {
        self.inner().on_deadline(now_ns)
    }
    fn advance(&mut self, now_ns: u64) {
        self.inner().advance(now_ns)
    }
    fn allowed_rate(&self) -> Option<u32> {
        match self {
            Moderator::None(m) => m.allowed_rate(),
            Moderator::Fir(m) => m.allowed_rate(),
            Moderator::Cgr(m) => m.allowed_rate(),
            Moderator::Air(m) => m.allowed_rate(),
            Moderator::Dim(m) => m.allowed_rate(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_each_scheme() {
        assert_eq!(ModerationConfig::None.build(0).unwrap().allowed_rate(), None);
        assert_eq!(ModerationConfig::Fir(FirConfig::default()).build(0).unwrap().allowed_rate(), Some(8000));
        assert_eq!(ModerationConfig::Cgr(CgrConfig::default()).build(0).unwrap().allowed_rate(), Some(8000));
        assert_eq!(ModerationConfig::Dim(DimConfig::default()).build(0).unwrap().allowed_rate(), Some(125_000));
        let bad = DimConfig { start_ix: 9, ..Default::default() };
        assert_eq!(ModerationConfig::Dim(bad).build(0).unwrap_err().param, "dim.start_ix");
        // AIR's cost constants must come from a profile.
        let e = ModerationConfig::Air(AirConfig::default()).build(0).unwrap_err();
        assert_eq!(e.param, "air.c_cycles_per_s");
    }

    #[test]
    fn no_moderation_always_fires() {
        let mut m = NoModeration;
        assert_eq!(m.on_event(0, 1, 64), IrqDecision::FireNow);
        assert_eq!(m.on_event(0, 1, 64), IrqDecision::FireNow);
    }
}
