//! A backed device's side of what its back end finished (issue 46: the device side of the
//! request-handling seam, owned by the I/O layer): each queue's interrupt moderator decides
//! whether a completion interrupts the guest now, later (its deadline, `IrqDeadline`), or not
//! at all. The model root applies the rest — the used ring's buffer to the wire, the interrupt
//! to the vCPU the VM's routing picks.

use crate::engine::{Schedule, Time};
use crate::model::io::event::Event;
use crate::model::io::moderation::{QueueModeration, Wanted};
use eventpath_policy::moderation::ModerationConfig;

/// A device's two queues' interrupt moderators (`moderation.rs`).
#[derive(Debug)]
pub(crate) struct DevIrqs {
    /// The TX queue's.
    pub tx: QueueModeration,
    /// The RX queue's.
    pub rx: QueueModeration,
}

impl DevIrqs {
    /// Both queues moderated as `cfg` says (`none` for an assigned device, whose NIC throttles
    /// its own vector).
    pub fn new(cfg: &ModerationConfig) -> Self {
        DevIrqs { tx: QueueModeration::new(cfg), rx: QueueModeration::new(cfg) }
    }

    fn queue(&mut self, rx: bool) -> &mut QueueModeration {
        if rx {
            &mut self.rx
        } else {
            &mut self.tx
        }
    }

    /// An item of `bytes` completed on the RX (`rx`) or TX queue at `now`: whether it fires the
    /// queue's held interrupt now. Its ring is told next; then [`Self::raise`] decides.
    pub fn completed(&mut self, now: Time, rx: bool, bytes: u64) -> bool {
        self.queue(rx).completed(now, bytes)
    }

    /// After a completion of device `dev`'s queue: it fired the held interrupt (`due`), or the
    /// ring asks for one (`interrupt`, its notification gate). Whether the device interrupts
    /// now; a deadline the moderator arms is scheduled on `q`.
    pub fn raise(&mut self, now: Time, dev: u32, rx: bool, due: bool, interrupt: bool, q: &mut impl Schedule<Event>) -> bool {
        if due {
            return true;
        }
        if !interrupt {
            return false;
        }
        match self.queue(rx).wanted(now) {
            Wanted::Fire => true,
            Wanted::Arm(t) => {
                q.schedule(t, Event::IrqDeadline { dev, rx });
                false
            }
            Wanted::Coalesced => false,
        }
    }

    /// The queue's held interrupt is due at `now`: whether it fires.
    pub fn deadline(&mut self, now: Time, rx: bool) -> bool {
        self.queue(rx).deadline(now)
    }

    /// An interrupt is held until a deadline (the throttle paces the device).
    pub fn held(&self) -> bool {
        self.rx.held || self.tx.held
    }

    /// Start a measurement window.
    pub fn reset_metrics(&mut self) {
        self.tx.delayed = 0;
        self.rx.delayed = 0;
    }
}
