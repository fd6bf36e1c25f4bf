//! Virtio notification coalescing, the device side of `VIRTIO_NET_F_NOTF_COAL` (virtio 1.3
//! §5.1.6.5.6; Linux `VIRTIO_NET_CTRL_NOTF_COAL_{RX,TX}_SET` and `_VQ_SET`, commit 699b045a8e43):
//! per queue, `max_usecs` ("maximum number of usecs to delay a notification") and `max_packets`
//! ("maximum number of packets to receive/send before a notification").
//!
//! The device, asked for a used-buffer notification (the driver's event index said so), starts
//! counting µs and packets at that packet; it notifies when `max_packets` packets have been
//! counted or `max_usecs` have passed since the first, whichever comes first, then waits for
//! the next packet and counts again. The µs limit is a *deadline* from the first packet, not
//! restarted by later ones (as the QEMU device patch's RX timer, armed once per batch).
//!
//! Packets completed while a notification is held reach the moderator through
//! [`InterruptModerator::on_completion`]: the driver's event index does not ask again while
//! it has not been interrupted, so the frame limit is counted from the device's completions.
//!
//! With `max_usecs = 0` or `max_packets = 0` the conditions are met after every packet (the
//! spec's rule): that is no coalescing, and [`NotfCoalConfig::validate`] refuses it — a scenario
//! writes `kind = "none"` instead.

use super::{Completion, InterruptModerator, IrqDecision};
use crate::error::ConfigError;

/// `kind = "notf_coal"` parameters: one queue's coalescing.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields, default))]
pub struct NotfCoalConfig {
    /// Longest delay of a notification after the first packet it covers (≥ 1; default 1000, the
    /// QEMU device patch's RX setting). Unit: µs.
    pub max_usecs: u32,
    /// Packets that make a notification at once (≥ 1; default 10, the QEMU device patch's RX
    /// setting). Unit: packets.
    pub max_frames: u32,
}

impl Default for NotfCoalConfig {
    fn default() -> Self {
        Self { max_usecs: 1000, max_frames: 10 }
    }
}

impl NotfCoalConfig {
    /// Both limits must be ≥ 1: with either at 0 the device notifies after every packet.
    pub fn validate(&self) -> Result<(), ConfigError> {
        const NONE: &str = "at least 1; with 0 the device notifies after every packet (virtio §5.1.6.5.6), which is kind = \"none\"";
        if self.max_usecs == 0 {
            return Err(ConfigError::new("notf_coal.max_usecs", 0, NONE));
        }
        if self.max_frames == 0 {
            return Err(ConfigError::new("notf_coal.max_frames", 0, NONE));
        }
        Ok(())
    }
}

/// Where a queue's coalescing is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CoalState {
    /// No notification held.
    Idle,
    /// A notification is held: `packets` counted since the first, due at `deadline_ns`.
    Counting { packets: u32, deadline_ns: u64 },
}

/// One queue's notification coalescing.
#[derive(Debug, Clone)]
pub struct NotfCoal {
    cfg: NotfCoalConfig,
    state: CoalState,
    /// Notifications sent because the frame limit was reached.
    pub by_frames: u64,
    /// Notifications sent at the µs deadline.
    pub by_usecs: u64,
}

impl NotfCoal {
    /// A queue coalescing with `cfg` (validated by the caller).
    pub fn new(cfg: NotfCoalConfig) -> Self {
        Self { cfg, state: CoalState::Idle, by_frames: 0, by_usecs: 0 }
    }

    /// The parameters in force.
    pub fn config(&self) -> &NotfCoalConfig {
        &self.cfg
    }

    /// New parameters (the driver's `VIRTIO_NET_CTRL_NOTF_COAL_VQ_SET`): they apply from the
    /// next batch; a held notification keeps its deadline but is counted against the new frame
    /// limit from the next packet on.
    pub fn set(&mut self, cfg: NotfCoalConfig) {
        self.cfg = cfg;
    }

    /// Adds `packets` to a held batch: true when the frame limit is reached (the notification
    /// goes now, and the queue is idle again).
    fn count(&mut self, packets: u32) -> bool {
        if let CoalState::Counting { packets: n, deadline_ns } = self.state {
            let n = n.saturating_add(packets);
            if n >= self.cfg.max_frames {
                self.state = CoalState::Idle;
                self.by_frames += 1;
                return true;
            }
            self.state = CoalState::Counting { packets: n, deadline_ns };
        }
        false
    }
}

impl InterruptModerator for NotfCoal {
    fn on_event(&mut self, now_ns: u64, packets: u32, _bytes: u64) -> IrqDecision {
        // The notification asked for covers at least the packet that asked.
        let packets = packets.max(1);
        match self.state {
            CoalState::Idle if packets >= self.cfg.max_frames => {
                self.by_frames += 1;
                IrqDecision::FireNow
            }
            CoalState::Idle => {
                let deadline_ns = now_ns.saturating_add(u64::from(self.cfg.max_usecs) * 1000);
                self.state = CoalState::Counting { packets, deadline_ns };
                IrqDecision::DelayUntil(deadline_ns)
            }
            CoalState::Counting { .. } => {
                if self.count(packets) {
                    IrqDecision::FireNow
                } else {
                    IrqDecision::Coalesced
                }
            }
        }
    }
    fn on_completion(&mut self, _now_ns: u64, packets: u32, _bytes: u64) -> Completion {
        if self.state == CoalState::Idle {
            Completion::Keep
        } else if self.count(packets) {
            Completion::Fire
        } else {
            Completion::Counted
        }
    }
    fn on_deadline(&mut self, now_ns: u64) -> bool {
        match self.state {
            // A deadline of a batch the frame limit already closed is stale.
            CoalState::Counting { deadline_ns, .. } if now_ns >= deadline_ns => {
                self.state = CoalState::Idle;
                self.by_usecs += 1;
                true
            }
            _ => false,
        }
    }
    fn advance(&mut self, _now_ns: u64) {}
    fn allowed_rate(&self) -> Option<u32> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn coal(usecs: u32, frames: u32) -> NotfCoal {
        NotfCoal::new(NotfCoalConfig { max_usecs: usecs, max_frames: frames })
    }

    #[test]
    fn the_first_packet_starts_a_deadline_max_usecs_later() {
        let mut c = coal(1000, 10);
        assert_eq!(c.on_event(5_000, 1, 64), IrqDecision::DelayUntil(1_005_000));
        assert_eq!(c.on_event(6_000, 1, 64), IrqDecision::Coalesced, "later packets do not restart it");
        assert!(!c.on_deadline(1_004_999));
        assert!(c.on_deadline(1_005_000));
        assert_eq!((c.by_usecs, c.by_frames), (1, 0));
        assert!(!c.on_deadline(1_005_000), "once");
    }

    #[test]
    fn max_frames_packets_notify_at_once_and_the_deadline_goes_stale() {
        let mut c = coal(1000, 10);
        assert_eq!(c.on_event(0, 1, 64), IrqDecision::DelayUntil(1_000_000));
        for i in 1..9 {
            assert_eq!(c.on_completion(i * 1000, 1, 64), Completion::Counted, "{} counted", i + 1);
        }
        assert_eq!(c.on_completion(9_000, 1, 64), Completion::Fire, "the tenth packet notifies");
        assert_eq!(c.by_frames, 1);
        assert!(!c.on_deadline(1_000_000), "its deadline is stale");
        // The next batch counts afresh.
        assert_eq!(c.on_event(2_000_000, 1, 64), IrqDecision::DelayUntil(3_000_000));
    }

    #[test]
    fn a_burst_of_max_frames_fires_now() {
        let mut c = coal(1000, 10);
        assert_eq!(c.on_event(0, 12, 64 * 12), IrqDecision::FireNow);
        assert_eq!(coal(1000, 1).on_event(0, 0, 0), IrqDecision::FireNow, "one frame: every packet");
    }

    #[test]
    fn completions_without_a_held_notification_are_not_counted() {
        let mut c = coal(1000, 2);
        assert_eq!(c.on_completion(0, 5, 64), Completion::Keep, "idle: for the next decision");
        assert_eq!(c.on_event(1, 1, 64), IrqDecision::DelayUntil(1_000_001));
    }

    #[test]
    fn zero_frames_or_zero_usecs_is_no_coalescing_and_refused() {
        let e = NotfCoalConfig { max_usecs: 0, max_frames: 0 }.validate().unwrap_err();
        assert_eq!(e.param, "notf_coal.max_usecs");
        assert!(e.to_string().contains("kind = \"none\""), "{e}");
        assert_eq!(NotfCoalConfig { max_usecs: 10, max_frames: 0 }.validate().unwrap_err().param, "notf_coal.max_frames");
        assert!(NotfCoalConfig::default().validate().is_ok());
    }

    #[test]
    fn new_parameters_apply_to_the_held_batch_from_the_next_packet() {
        let mut c = coal(1000, 64);
        c.on_event(0, 1, 64);
        c.set(NotfCoalConfig { max_usecs: 8, max_frames: 2 });
        assert_eq!(c.on_completion(1, 1, 64), Completion::Fire);
        assert_eq!(c.on_event(10, 1, 64), IrqDecision::DelayUntil(8_010));
    }
}
