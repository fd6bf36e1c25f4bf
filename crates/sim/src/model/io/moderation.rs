//! Device-side interrupt moderation, the simulator's adapter of `eventpath_policy::moderation`
//! (FIR, CGR, AIR — the moderators the KVM testbed drives too): each queue of a device has one.
//! When the notification gate says the driver wants an interrupt, the moderator decides: fire
//! now, or arm a deadline (the ITR's minimum gap) into which later requests coalesce. It sees
//! every completion since it last decided (packets, bytes), so CGR's and AIR's traffic windows
//! measure the whole stream. Default `none`: every wanted interrupt fires at once.

use crate::model::hw::lapic::Vector;
use crate::model::{Ev, Host};
use crate::engine::{EventQueue, Time};
use eventpath_policy::moderation::{InterruptModerator, IrqDecision, ModerationConfig, Moderator};

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

    /// A completion of `bytes` left the queue.
    pub fn completed(&mut self, bytes: u64) {
        self.packets = self.packets.saturating_add(1);
        self.bytes += bytes;
    }

    /// The driver wants an interrupt now: fire, or the deadline to fire at (None: coalesced
    /// into one already armed).
    fn decide(&mut self, now: Time) -> Result<(), Option<Time>> {
        let (p, b) = (std::mem::take(&mut self.packets), std::mem::take(&mut self.bytes));
        match self.moderator.on_event(now, p, b) {
            IrqDecision::FireNow => Ok(()),
            IrqDecision::DelayUntil(t) => Err(Some(t)),
            IrqDecision::Coalesced => Err(None),
        }
    }
}

impl Host {
    /// Device `dev` would interrupt the guest with `vec` (its driver asked): through the queue's
    /// moderator.
    pub(crate) fn moderated_irq(&mut self, now: Time, dev: u32, vec: Vector, q: &mut EventQueue<Ev>) {
        let rx = vec == Vector::NetRx;
        let d = &mut self.devs[dev as usize];
        let m = if rx { &mut d.rx_moderation } else { &mut d.tx_moderation };
        match m.decide(now) {
            Ok(()) => self.device_irq(now, dev, vec, q),
            Err(deadline) => {
                m.delayed += 1;
                m.held = true;
                if let Some(t) = deadline {
                    q.at(t.max(now), Ev::IrqDeadline { dev, rx });
                }
            }
        }
    }

    /// A queue's delayed interrupt is due.
    pub(crate) fn irq_deadline(&mut self, now: Time, dev: u32, rx: bool, q: &mut EventQueue<Ev>) {
        let d = &mut self.devs[dev as usize];
        let m = if rx { &mut d.rx_moderation } else { &mut d.tx_moderation };
        m.held = false;
        if m.moderator.on_deadline(now) {
            self.device_irq(now, dev, if rx { Vector::NetRx } else { Vector::NetTx }, q);
        }
    }

    /// Raise device `dev`'s interrupt `vec` on the vCPU its router picks.
    fn device_irq(&mut self, now: Time, dev: u32, vec: Vector, q: &mut EventQueue<Ev>) {
        let d = &mut self.devs[dev as usize];
        if vec == Vector::NetRx {
            d.rxq.interrupts += 1;
        } else {
            d.txq.interrupts += 1;
        }
        let target = self.route_device_irq(dev, vec);
        self.raise_irq(now, target, vec, q);
    }
}
