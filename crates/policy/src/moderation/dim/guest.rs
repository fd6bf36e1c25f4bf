//! Virtio-net DIM in the guest (Linux 6.8, `drivers/net/virtio_net.c`: `virtnet_rx_dim_update`,
//! `virtnet_rx_dim_work`): the guest driver runs net DIM on each receive queue and writes the
//! chosen profile to the device's notification coalescing with
//! `VIRTIO_NET_CTRL_NOTF_COAL_VQ_SET` — `max_usecs = profile.usec`, `max_packets =
//! profile.pkts` — when it differs from what the queue has. The driver sets
//! `DIM_CQ_PERIOD_MODE_START_FROM_EQE`, so the profiles are net DIM's RX EQE table, starting at
//! `NET_DIM_DEF_PROFILE_EQE` (1: 8 µs / 256 packets) unless `start_ix` says otherwise.
//!
//! The device side is [`NotfCoal`]; `net_dim()` is fed at each notification sent with the
//! queue's running counters (packets, bytes, notifications), as the driver feeds it from its
//! NAPI poll (`rq->calls` counts the interrupts); a new profile is applied at once (the
//! driver's work item and the control command's round trip without their delay).

use super::{Dim, DimSample, NUM_PROFILES, RX_EQE_PROFILES};
use crate::error::ConfigError;
use crate::moderation::{Completion, InterruptModerator, IrqDecision, NotfCoal, NotfCoalConfig};

/// `kind = "guest_dim"` parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields, default))]
pub struct GuestDimConfig {
    /// Starting profile index, 0..=4 (default 1, `NET_DIM_DEF_PROFILE_EQE`).
    pub start_ix: usize,
}

impl Default for GuestDimConfig {
    fn default() -> Self {
        Self { start_ix: super::DEF_PROFILE_IX }
    }
}

impl GuestDimConfig {
    /// Checks `start_ix`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.start_ix >= NUM_PROFILES {
            return Err(ConfigError::new("guest_dim.start_ix", self.start_ix, format!("must be in 0..={}", NUM_PROFILES - 1)));
        }
        Ok(())
    }
}

/// A profile as the coalescing parameters the driver sends.
fn coalescing(ix: usize) -> NotfCoalConfig {
    let p = RX_EQE_PROFILES[ix.min(NUM_PROFILES - 1)];
    NotfCoalConfig { max_usecs: u32::from(p.usec).max(1), max_frames: u32::from(p.pkts).max(1) }
}

/// Net DIM in the guest driving one queue's notification coalescing.
#[derive(Debug, Clone)]
pub struct GuestDim {
    dim: Dim,
    coal: NotfCoal,
    pkt_ctr: u32,
    byte_ctr: u32,
    event_ctr: u16,
    /// Coalescing commands sent (profile changes).
    pub changes: u64,
}

impl GuestDim {
    /// A queue starting at `cfg.start_ix` (validated by the caller).
    pub fn new(cfg: &GuestDimConfig) -> Self {
        let dim = Dim::new(cfg.start_ix);
        let coal = NotfCoal::new(coalescing(dim.profile_ix()));
        Self { dim, coal, pkt_ctr: 0, byte_ctr: 0, event_ctr: 0, changes: 0 }
    }

    /// The current profile index.
    pub fn profile_ix(&self) -> usize {
        self.dim.profile_ix()
    }

    /// The coalescing the device runs now.
    pub fn coalescing(&self) -> &NotfCoalConfig {
        self.coal.config()
    }

    fn count(&mut self, packets: u32, bytes: u64) {
        self.pkt_ctr = self.pkt_ctr.wrapping_add(packets);
        self.byte_ctr = self.byte_ctr.wrapping_add(bytes as u32);
    }

    /// A notification was sent at `now_ns`: the driver's NAPI poll feeds `net_dim()`, and a new
    /// profile goes to the device (`virtnet_rx_dim_work`).
    fn notified(&mut self, now_ns: u64) {
        self.event_ctr = self.event_ctr.wrapping_add(1);
        let s = DimSample { time_ns: now_ns, pkt_ctr: self.pkt_ctr, byte_ctr: self.byte_ctr, event_ctr: self.event_ctr };
        if let Some(ix) = self.dim.net_dim(s) {
            let want = coalescing(ix);
            if want != *self.coal.config() {
                self.coal.set(want);
                self.changes += 1;
            }
            self.dim.profile_applied();
        }
    }
}

impl InterruptModerator for GuestDim {
    fn on_event(&mut self, now_ns: u64, packets: u32, bytes: u64) -> IrqDecision {
        self.count(packets, bytes);
        let d = self.coal.on_event(now_ns, packets, bytes);
        if d == IrqDecision::FireNow {
            self.notified(now_ns);
        }
        d
    }
    fn on_completion(&mut self, now_ns: u64, packets: u32, bytes: u64) -> Completion {
        let c = self.coal.on_completion(now_ns, packets, bytes);
        if c != Completion::Keep {
            self.count(packets, bytes);
        }
        if c == Completion::Fire {
            self.notified(now_ns);
        }
        c
    }
    fn on_deadline(&mut self, now_ns: u64) -> bool {
        let fire = self.coal.on_deadline(now_ns);
        if fire {
            self.notified(now_ns);
        }
        fire
    }
    fn advance(&mut self, _now_ns: u64) {}
    fn allowed_rate(&self) -> Option<u32> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_at_the_eqe_default_profile_as_coalescing() {
        let g = GuestDim::new(&GuestDimConfig::default());
        assert_eq!(g.profile_ix(), 1);
        assert_eq!(*g.coalescing(), NotfCoalConfig { max_usecs: 8, max_frames: 256 });
        assert_eq!(GuestDimConfig { start_ix: 5 }.validate().unwrap_err().to_string(), "guest_dim.start_ix = 5: must be in 0..=4");
    }

    /// Drives `g` with one packet every `gap_ns` for `n` packets, firing deadlines in time.
    fn drive(g: &mut GuestDim, t0: u64, gap_ns: u64, n: u64) -> u64 {
        let mut deadline = None;
        let mut t = t0;
        for _ in 0..n {
            t += gap_ns;
            if let Some(d) = deadline.filter(|&d| t >= d) {
                g.on_deadline(d);
                deadline = None;
            }
            if deadline.is_some() {
                if g.on_completion(t, 1, 1500) == Completion::Fire {
                    deadline = None;
                }
            } else if let IrqDecision::DelayUntil(d) = g.on_event(t, 1, 1500) {
                deadline = Some(d);
            }
        }
        t
    }

    /// net DIM's documented walk (Documentation/networking/net_dim.rst): the first measurement
    /// with traffic leaves parking on top and steps left (towards lower latency) from the
    /// default; the profile chosen becomes the device's coalescing.
    #[test]
    fn first_traffic_leaves_parking_and_steps_left_to_profile_0() {
        let mut g = GuestDim::new(&GuestDimConfig::default());
        // 64 notifications (DIM_NEVENTS) make the first measurement; a packet every 20 µs
        // under an 8 µs coalescing is one notification per packet.
        drive(&mut g, 0, 20_000, 200);
        assert_eq!(g.profile_ix(), 0, "stepped left");
        assert_eq!(*g.coalescing(), NotfCoalConfig { max_usecs: 1, max_frames: 256 });
        assert!(g.changes >= 1);
    }

    /// A load that keeps growing keeps DIM moving: over many measurements it visits more than
    /// one profile, each applied as the device's coalescing.
    #[test]
    fn profiles_drive_the_coalescing_as_the_load_changes() {
        let mut g = GuestDim::new(&GuestDimConfig { start_ix: 2 });
        let mut seen = std::collections::BTreeSet::new();
        let mut t = 0;
        for gap in [50_000, 20_000, 5_000, 2_000, 1_000, 500, 200, 5_000, 50_000] {
            t = drive(&mut g, t, gap, 5_000);
            seen.insert(g.profile_ix());
            assert_eq!(*g.coalescing(), coalescing(g.profile_ix()));
        }
        assert!(seen.len() >= 2, "profiles visited: {seen:?}");
    }
}
