//! The interrupt-delivery seam (DESIGN §3.3), the simulator's adapter of
//! `eventpath_policy::delivery`: the policy decides, per mode, which path a raised vector takes
//! (software LAPIC and injection at entry, the posted-interrupt descriptor, or the core's own
//! LAPIC) and whether the vCPU exits for it, for its EOI and for its timer writes; this module
//! keeps the hardware state those paths write — the LAPIC's IRR/ISR, the PIR and ON bit, and
//! which vectors were injected by software (ELI's injection mode, DID Fig. 3c) — and `irq.rs`
//! carries the decisions out.

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
        Vector::Resched => Source::Ipi,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_injected_vector_holds_injection_mode_until_its_eoi() {
        let mut a = Apic::default();
        assert_eq!(a.record(Vector::Vf, Path::Direct), Recorded::New);
        assert!(!a.injection_mode(), "a direct vector is the hardware's");
        assert_eq!(a.record(Vector::Timer, Path::Injected), Recorded::New);
        assert!(a.injection_mode());
        a.lapic.accept();
        a.eoi();
        assert!(!a.injection_mode());
        assert_eq!(a.record(Vector::NetRx, Path::Posted), Recorded::New);
        assert_eq!(a.record(Vector::NetTx, Path::Posted), Recorded::Quiet);
        assert_eq!(a.record(Vector::NetTx, Path::Posted), Recorded::Coalesced);
    }
}
