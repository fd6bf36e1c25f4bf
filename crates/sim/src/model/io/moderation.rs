//! Device-side interrupt moderation, the simulator's adapter of `eventpath_policy::moderation`
//! (FIR, CGR, AIR, net DIM, NOTF_COAL — the moderators the KVM testbed drives too): each queue
//! of a virtio device has one. When the notification gate says the driver wants an interrupt,
//! the moderator decides: fire now, or arm a deadline (the ITR's minimum gap, NOTF_COAL's
//! max_usecs) into which later requests coalesce. It sees every completion exactly once: with
//! the next decision, or — NOTF_COAL's frame limit, while it holds an interrupt — as it
//! completes (`on_completion`, which may fire the held interrupt then), so CGR's and AIR's
//! traffic windows measure the whole stream. Default `none`: every wanted interrupt
//! fires at once.

use crate::engine::Time;
use eventpath_policy::moderation::{Completion, InterruptModerator, IrqDecision, ModerationConfig, Moderator};

/// What becomes of an interrupt the driver wants (`QueueModeration::wanted`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wanted {
    /// Raise it now.
    Fire,
    /// Hold it: its queue's deadline event is due at this time (`Ev::IrqDeadline`).
    Arm(Time),
    /// Hold it: it coalesces into the deadline already armed.
    Coalesced,
}

/// One queue's moderator and the completions it has not yet seen.
#[derive(Debug)]
pub struct QueueModeration {
    moderator: Moderator,
    packets: u32,
    bytes: u64,
    /// Interrupts it delayed or coalesced (window).
    pub delayed: u64,
    /// An interrupt is held until its deadline (the throttle paces the queue).
    pub(crate) held: bool,
}

impl QueueModeration {
    /// The moderator `cfg` describes (validated with the scenario).
    pub fn new(cfg: &ModerationConfig) -> Self {
        QueueModeration { moderator: cfg.build(0).expect("validated with the scenario"), packets: 0, bytes: 0, delayed: 0, held: false }
    }

    /// A completion of `bytes` left the queue at `now`: true when it fires the held interrupt
    /// now (the caller raises it).
    pub fn completed(&mut self, now: Time, bytes: u64) -> bool {
        if self.held {
            match self.moderator.on_completion(now, 1, bytes) {
                Completion::Fire => {
                    self.held = false;
                    return true;
                }
                Completion::Counted => return false,
                Completion::Keep => {}
            }
        }
        self.packets = self.packets.saturating_add(1);
        self.bytes += bytes;
        false
    }

    /// The driver wants an interrupt at `now` (its notification gate said so): the moderator,
    /// having seen every completion since it last decided, fires it or holds it.
    pub fn wanted(&mut self, now: Time) -> Wanted {
        let (p, b) = (std::mem::take(&mut self.packets), std::mem::take(&mut self.bytes));
        let w = match self.moderator.on_event(now, p, b) {
            IrqDecision::FireNow => return Wanted::Fire,
            IrqDecision::DelayUntil(t) => Wanted::Arm(t.max(now)),
            IrqDecision::Coalesced => Wanted::Coalesced,
        };
        self.delayed += 1;
        self.held = true;
        w
    }

    /// The queue's deadline came at `now`: whether the held interrupt fires.
    /// A deadline that does not fire is stale (NOTF_COAL's frame limit sent the notification
    /// before it; a new batch may be held since): the queue's hold is left as it is.
    pub fn deadline(&mut self, now: Time) -> bool {
        let fired = self.moderator.on_deadline(now);
        if fired {
            self.held = false;
        }
        fired
    }
}
