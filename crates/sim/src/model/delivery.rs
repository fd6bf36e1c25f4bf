//! The interrupt-delivery seam (DESIGN §3.3): what a delivery mode does when a vector is raised
//! for a vCPU, at VM entry, and at the guest's EOI. Hardware mechanisms live only in the
//! simulator (DESIGN §2), so the modes are here rather than in `crates/policy`; each is a
//! variant of [`InterruptDelivery`] with its decisions in one `match` per hook, and `irq.rs`
//! carries the decisions out. A new mode (APICv without posting, ELI, DID) adds a variant and
//! its three arms.
//!
//! * `emulated` (software LAPIC, ES2 §2.2; DID §2.2): raising sets the IRR bit; a vCPU running
//!   guest code is kicked out with an IPI (an interrupt-delivery exit) and the vector injected at
//!   entry; one already in the hypervisor gets it at the entry ending its exit (ES2 §3.3); a
//!   halted one is woken. Every EOI exits.
//! * `posted` (APICv posted interrupts, ES2 §3.2; DID §2.4): the vector goes into the PIR and,
//!   if ON was clear, the notification vector is sent: a running vCPU takes it with no exit, one
//!   in the hypervisor syncs the PIR at entry, a halted one is woken by the wake-up vector. EOI
//!   is virtualized.

use super::lapic::{Lapic, Vector};
use super::pi::{PiDesc, Posted};
use crate::scenario::InterruptDelivery;

/// Where the target vCPU is when a vector is raised, as a delivery mode distinguishes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// Running guest code.
    InGuest,
    /// Entering guest mode (within one event): as good as running for a kick.
    Entering,
    /// In the hypervisor (an exit, or woken and not yet running).
    InHypervisor,
    /// Blocked after HLT.
    Halted,
    /// Halted, its thread halt-polling.
    Polling,
}

/// What the host must do after a vector was raised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnRaise {
    /// Nothing now: the vector waits (IRR or PIR) for the next entry, or it coalesced.
    Pend,
    /// Kick the running vCPU out with an IPI: an interrupt-delivery exit, injection at entry.
    KickExit,
    /// The vector is in the vIRR of a running vCPU: accept it now, no exit.
    InjectNow,
    /// Wake the halted vCPU's thread.
    Wake,
    /// The halt-polling thread sees it and resumes the guest.
    PollWake,
}

/// The per-vCPU interrupt controller state every mode uses: the LAPIC (emulated, or the
/// virtual-APIC page) and the posted-interrupt descriptor.
#[derive(Debug, Clone, Default)]
pub struct Apic {
    /// The LAPIC's IRR/ISR.
    pub lapic: Lapic,
    /// The posted-interrupt descriptor (posted mode).
    pub pi: PiDesc,
}

impl Apic {
    /// Interrupts raised and neither accepted nor coalesced: IRR bits plus PIR bits.
    pub fn pending(&self) -> u64 {
        (self.lapic.requested() + self.pi.pending()) as u64
    }

    /// Something would be injected at the next VM entry.
    pub fn has_deliverable(&self) -> bool {
        self.lapic.deliverable().is_some() || self.pi.pending() > 0
    }

    /// Sync the PIR into the IRR (at entry, or on a notification in guest mode); returns how
    /// many raises merged into an already requested vector.
    pub fn sync(&mut self) -> u32 {
        if self.pi.pending() == 0 {
            return 0;
        }
        self.pi.sync_to_irr(&mut self.lapic).1
    }
}

impl InterruptDelivery {
    /// `vec` is raised for a vCPU at `target`: record it in `apic`; returns what the host must
    /// do and whether the raise coalesced with a pending one.
    pub fn raise(self, apic: &mut Apic, vec: Vector, target: Target) -> (OnRaise, bool) {
        match self {
            InterruptDelivery::Emulated => {
                let coalesced = !apic.lapic.raise(vec);
                // KVM 4.4 `__apic_accept_irq`: set IRR, request an event and kick the vCPU,
                // whether or not the vector can be taken now.
                let action = match target {
                    Target::InGuest | Target::Entering => OnRaise::KickExit,
                    Target::InHypervisor => OnRaise::Pend,
                    Target::Halted => OnRaise::Wake,
                    Target::Polling => OnRaise::PollWake,
                };
                (action, coalesced)
            }
            InterruptDelivery::Posted => match apic.pi.post(vec) {
                Posted::Coalesced => (OnRaise::Pend, true),
                Posted::Quiet => (OnRaise::Pend, false), // a notification is already outstanding
                Posted::Notify => {
                    let action = match target {
                        // Notification vector in guest mode: PIR → vIRR by hardware, no exit.
                        Target::InGuest => OnRaise::InjectNow,
                        // Pending in the PIR until the next VM entry syncs it.
                        Target::Entering | Target::InHypervisor => OnRaise::Pend,
                        // The wake-up vector's handler unblocks the vCPU thread.
                        Target::Halted => OnRaise::Wake,
                        // The polling thread sees the PIR's ON bit.
                        Target::Polling => OnRaise::PollWake,
                    };
                    (action, false)
                }
            },
        }
    }

    /// Does the guest's EOI write exit?
    pub fn eoi_exits(self) -> bool {
        match self {
            // ES2 §2.2 step 6: the emulated LAPIC traps the EOI write.
            InterruptDelivery::Emulated => true,
            // EOI virtualization: no exit; the next pending vector is evaluated at once.
            InterruptDelivery::Posted => false,
        }
    }

    /// Does re-arming the LAPIC timer (a TMICT / TSC-deadline write) exit? In both modes:
    /// APICv does not virtualize the timer (DID §5.9).
    pub fn timer_write_exits(self) -> bool {
        true
    }

    /// Its name in summary.json.
    pub fn key(self) -> &'static str {
        match self {
            InterruptDelivery::Emulated => "emulated",
            InterruptDelivery::Posted => "posted",
        }
    }
}
