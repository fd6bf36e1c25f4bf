//! The interrupt-delivery seam (DESIGN §3.3), the simulator's adapter of
//! `eventpath_policy::delivery`: the policy decides, per mode, which path a raised vector takes
//! (software LAPIC and injection at entry, the posted-interrupt descriptor, or the core's own
//! LAPIC) and whether the vCPU exits for it, for its EOI and for its timer writes; this module
//! keeps the hardware state those paths write — the LAPIC's IRR/ISR, the PIR and ON bit, and
//! which vectors were injected by software (ELI's injection mode, DID Fig. 3c), and whether the
//! guest has interrupts off because a handler is in progress (the policy's interrupt window) —
//! and `irq.rs` carries the decisions out.

use crate::model::hw::lapic::{Lapic, Vector};
use crate::model::hw::pi::{PiDesc, Posted};
use eventpath_policy::delivery::{Path, Source};

/// The per-vCPU interrupt controller state every mode uses: the LAPIC (emulated, the
/// virtual-APIC page under APICv, or the core's own under ELI/DID), the posted-interrupt
/// descriptor, and the vectors injected by software.
#[derive(Debug, Clone, Default)]
pub struct Apic {
    /// The LAPIC's IRR/ISR.
    pub lapic: Lapic,
    /// The posted-interrupt descriptor (posted mode).
    pub pi: PiDesc,
    /// Vectors recorded by software injection and not yet completed by EOI (256 bits).
    injected: [u64; 4],
    /// The guest's RFLAGS.IF is clear: a handler was started (the interrupt gate cleared IF)
    /// and has not returned (`iret`). One at a time: nothing nests into a handler.
    irqs_off: bool,
}

/// What recording a raised vector did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    /// New: the mode's action follows (an exit, a wake-up, taking it now).
    New,
    /// Posted while a notification was already outstanding: it waits for that one.
    Quiet,
    /// Merged into the same vector already requested in the PIR or a hardware IRR: nothing
    /// follows.
    Coalesced,
    /// Merged into the same vector already requested in the software IRR: the hypervisor still
    /// kicks (KVM `__apic_accept_irq` sets IRR and kicks the vCPU whether or not the vector
    /// was already pending).
    CoalescedKick,
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

    /// Record `vec` on the path the delivery mode chose.
    pub fn record(&mut self, vec: Vector, path: Path) -> Recorded {
        match path {
            Path::Injected | Path::Direct => {
                if path == Path::Injected {
                    let v = vec as u8;
                    self.injected[(v / 64) as usize] |= 1 << (v % 64);
                }
                match (self.lapic.raise(vec), path) {
                    (true, _) => Recorded::New,
                    (false, Path::Injected) => Recorded::CoalescedKick,
                    (false, _) => Recorded::Coalesced,
                }
            }
            Path::Posted => match self.pi.post(vec) {
                Posted::Notify => Recorded::New,
                Posted::Quiet => Recorded::Quiet,
                Posted::Coalesced => Recorded::Coalesced,
            },
        }
    }

    /// Start the deliverable vector's handler: IRR → ISR, and IF clear until its `iret`.
    pub fn accept(&mut self) -> Option<Vector> {
        let v = self.lapic.accept()?;
        self.irqs_off = true;
        Some(v)
    }

    /// A handler is in progress (IF clear): nothing is delivered until its `iret`.
    pub fn irqs_off(&self) -> bool {
        self.irqs_off
    }

    /// The handler returns (`iret`): IF is set again.
    pub fn iret(&mut self) {
        self.irqs_off = false;
    }

    /// How the vector the guest would take now was recorded: `Injected` if by software,
    /// otherwise `Direct` (the core's LAPIC, or a posted vector synced into the vIRR: either
    /// way the hardware delivers it).
    pub fn deliverable_path(&self) -> Option<Path> {
        let v = self.lapic.deliverable()? as u8;
        let soft = self.injected[(v / 64) as usize] >> (v % 64) & 1 == 1;
        Some(if soft { Path::Injected } else { Path::Direct })
    }

    /// ELI's injection mode: a software-injected vector is pending or in service.
    pub fn injection_mode(&self) -> bool {
        self.injected.iter().any(|&w| w != 0)
    }

    /// The guest's EOI: complete the highest in-service vector; it is no longer injected.
    pub fn eoi(&mut self) {
        if let Some(v) = self.lapic.eoi() {
            let v = v as u8;
            self.injected[(v / 64) as usize] &= !(1 << (v % 64));
        }
    }
}

/// Where a vector comes from, as the delivery policy distinguishes it. `exitless_io`: virtio
/// interrupts come from an ELVIS I/O core, whose IPI the guest takes as an assigned device's
/// (ELVIS §2.2: exitless interrupts by ELI).
pub fn source_of(vec: Vector, exitless_io: bool) -> Source {
    match vec {
        Vector::NetTx | Vector::NetRx if exitless_io => Source::AssignedDevice,
        Vector::NetTx | Vector::NetRx | Vector::Msi => Source::VirtualDevice,
        Vector::Vf => Source::AssignedDevice,
        Vector::Timer => Source::Timer,
        Vector::Resched | Vector::CallFunction => Source::Ipi,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_started_handler_keeps_interrupts_off_until_its_iret() {
        let mut a = Apic::default();
        a.record(Vector::NetRx, Path::Injected);
        assert!(!a.irqs_off());
        assert_eq!(a.accept(), Some(Vector::NetRx));
        assert!(a.irqs_off(), "the interrupt gate clears IF");
        a.eoi();
        assert!(a.irqs_off(), "EOI is not the iret");
        a.iret();
        assert!(!a.irqs_off());
        assert_eq!(a.accept(), None, "nothing pending: IF stays set");
        assert!(!a.irqs_off());
    }

    #[test]
    fn an_injected_vector_holds_injection_mode_until_its_eoi() {
        let mut a = Apic::default();
        assert_eq!(a.record(Vector::Vf, Path::Direct), Recorded::New);
        assert!(!a.injection_mode(), "a direct vector is the hardware's");
        assert_eq!(a.record(Vector::Timer, Path::Injected), Recorded::New);
        assert!(a.injection_mode());
        assert_eq!(a.deliverable_path(), Some(Path::Injected), "the timer is above the VF's class");
        a.accept();
        a.eoi();
        assert!(!a.injection_mode());
        assert_eq!(a.deliverable_path(), Some(Path::Direct));
        assert_eq!(a.record(Vector::NetRx, Path::Posted), Recorded::New);
        assert_eq!(a.record(Vector::NetTx, Path::Posted), Recorded::Quiet);
        assert_eq!(a.record(Vector::NetTx, Path::Posted), Recorded::Coalesced);
    }
}
