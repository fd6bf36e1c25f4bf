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
//! * [`notf_coal`]: virtio notification coalescing (`VIRTIO_NET_F_NOTF_COAL`'s device side:
//!   max µs / max packets per queue);
//! * [`dim::guest`]: virtio-net DIM in the guest (Linux 6.8), net DIM's profiles written to the
//!   device's notification coalescing;
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
pub mod notf_coal;
mod throttle;
mod window;

pub use air::{Air, AirConfig, AirControl};
pub use cgr::{Cgr, CgrConfig, CgrControl, TrafficClass};
pub use dim::guest::{GuestDim, GuestDimConfig};
pub use dim::{DimConfig, DimModerator};
pub use fir::FirConfig;
pub use nic_itr::{AdaptiveItr, NicItrDriver};
pub use notf_coal::{NotfCoal, NotfCoalConfig};
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

/// What a scheme did with a completion while it held an interrupt
/// ([`InterruptModerator::on_completion`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completion {
    /// Not counted: hand it to the next decision.
    Keep,
    /// Counted; the interrupt stays held.
    Counted,
    /// Counted, and the held interrupt fires now.
    Fire,
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
    /// Counts completions (`packets`, `bytes`) at `now_ns` without asking for an interrupt: how
    /// a scheme runs as a *rate controller* over a throttle it does not own — the CGR/AIR
    /// paper's host-side controller reading a VF's traffic and writing its EITR (§4.2, §4.3:
    /// "setInterruptRate") — and reports the rate through [`Self::allowed_rate`]. A fixed rate
    /// measures nothing (default).
    fn observe(&mut self, now_ns: u64, packets: u32, bytes: u64) {
        let _ = (now_ns, packets, bytes);
    }
    /// A completion (`packets`, `bytes`) at `now_ns` while this scheme holds an interrupt. The
    /// driver's event index does not ask again before it is interrupted, so a limit on packets
    /// must count completions as they come: notification coalescing's frame limit does
    /// ([`Completion::Counted`], or [`Completion::Fire`] when it fires the held interrupt now).
    /// Default: [`Completion::Keep`], the caller hands it to the next [`Self::on_event`].
    fn on_completion(&mut self, now_ns: u64, packets: u32, bytes: u64) -> Completion {
        let _ = (now_ns, packets, bytes);
        Completion::Keep
    }
    /// The throttle this scheme controls (not its own) sent an interrupt at `now_ns`: a scheme
    /// that measures per interrupt (net DIM's event counter) counts it. Default: nothing.
    fn fired(&mut self, now_ns: u64) {
        let _ = now_ns;
    }
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
    /// Virtio notification coalescing (virtio devices only).
    NotfCoal(NotfCoalConfig),
    /// Virtio-net DIM in the guest driving the notification coalescing (virtio devices only).
    GuestDim(GuestDimConfig),
}

impl ModerationConfig {
    /// The `kind` of each scheme, as a scenario names it.
    pub const KINDS: [&'static str; 7] = ["none", "fir", "cgr", "air", "dim", "notf_coal", "guest_dim"];

    /// Checks the chosen scheme's parameters.
    pub fn validate(&self) -> Result<(), ConfigError> {
        match self {
            ModerationConfig::None => Ok(()),
            ModerationConfig::Fir(c) => c.validate(),
            ModerationConfig::Cgr(c) => c.validate(),
            ModerationConfig::Air(c) => c.validate(),
            ModerationConfig::Dim(c) => c.validate(),
            ModerationConfig::NotfCoal(c) => c.validate(),
            ModerationConfig::GuestDim(c) => c.validate(),
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
            ModerationConfig::NotfCoal(c) => Moderator::NotfCoal(NotfCoal::new(c.clone())),
            ModerationConfig::GuestDim(c) => Moderator::GuestDim(GuestDim::new(c)),
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
    /// See [`NotfCoal`].
    NotfCoal(NotfCoal),
    /// See [`GuestDim`].
    GuestDim(GuestDim),
}

impl Moderator {
    fn inner(&mut self) -> &mut dyn InterruptModerator {
        match self {
            Moderator::None(m) => m,
            Moderator::Fir(m) => m,
            Moderator::Cgr(m) => m,
            Moderator::Air(m) => m,
            Moderator::Dim(m) => m,
            Moderator::NotfCoal(m) => m,
            Moderator::GuestDim(m) => m,
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
            Moderator::NotfCoal(m) => m.allowed_rate(),
            Moderator::GuestDim(m) => m.allowed_rate(),
        }
    }
    fn observe(&mut self, now_ns: u64, packets: u32, bytes: u64) {
        self.inner().observe(now_ns, packets, bytes)
    }
    fn fired(&mut self, now_ns: u64) {
        self.inner().fired(now_ns)
    }
    fn on_completion(&mut self, now_ns: u64, packets: u32, bytes: u64) -> Completion {
        self.inner().on_completion(now_ns, packets, bytes)
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

    /// AIR as the paper's host-side controller (§4.3): fed by `observe`, its rate follows the
    /// load (Î = 1e9 / (100·100 + 10_000) = 50_000/s, as in air.rs's tests).
    #[test]
    fn a_scheme_as_rate_controller_follows_the_traffic_it_observes() {
        let cfg = AirConfig { k: 100, c_cycles_per_s: Some(1e9), c_pkt_cycles: Some(100.0), c_int_cycles: Some(10_000.0), ..Default::default() };
        let mut m = ModerationConfig::Air(cfg).build(0).unwrap();
        // 100 k packets/s of 1000 B for 100 ms: B = 1e8 B/s, I = 1e8 / (100·1000) + 1000 = 2000.
        for i in 0..10_000u64 {
            m.observe(i * 10_000, 1, 1000);
        }
        m.observe(100_000_000, 0, 0);
        assert_eq!(m.allowed_rate(), Some(2000));
        // Ten times the load: I = 1e9 / 1e5 + 1000 = 11_000.
        for i in 0..100_000u64 {
            m.observe(100_000_000 + i * 1000, 1, 1000);
        }
        m.observe(200_000_000, 0, 0);
        assert_eq!(m.allowed_rate(), Some(11_000));
        // A fixed rate observes nothing.
        let mut f = ModerationConfig::Fir(FirConfig { itr: 3000 }).build(0).unwrap();
        f.observe(0, 1000, 1_000_000);
        f.fired(1);
        assert_eq!(f.allowed_rate(), Some(3000));
    }

    /// Net DIM as a rate controller: fed by `observe` and told of each interrupt by `fired`,
    /// it leaves its starting profile.
    #[test]
    fn dim_as_rate_controller_counts_interrupts_it_is_told_of() {
        let mut m = ModerationConfig::Dim(DimConfig::default()).build(0).unwrap();
        let mut t = 0;
        // A load that keeps rising: each measurement is better than the last.
        for i in 0..20_000u32 {
            t += 20_000;
            let p = 1 + i / 500;
            m.observe(t, p, u64::from(p) * 1500);
            m.fired(t);
        }
        let Moderator::Dim(d) = &m else { unreachable!() };
        assert!(d.changes > 0, "net_dim applied no profile");
    }

    #[test]
    fn no_moderation_always_fires() {
        let mut m = NoModeration;
        assert_eq!(m.on_event(0, 1, 64), IrqDecision::FireNow);
        assert_eq!(m.on_event(0, 1, 64), IrqDecision::FireNow);
    }
}
