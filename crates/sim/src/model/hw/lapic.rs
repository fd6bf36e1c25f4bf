//! The emulated local APIC of a vCPU: IRR and ISR bitmaps over the vectors the model uses,
//! priority by vector number, and EOI completing the highest in-service vector (SDM 10.8).

/// Interrupt vectors the model raises. The discriminant is the x86 vector number, so the
/// LAPIC's "higher vector, higher priority" rule applies as on hardware.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Vector {
    /// virtio-net TX queue MSI-X vector (Linux assigns device vectors from 0x21 up).
    NetTx = 0x21,
    /// virtio-net RX queue MSI-X vector (same priority class as TX: one masks the other).
    NetRx = 0x22,
    /// An SR-IOV VF's MSI-X vector (ixgbevf: one per queue pair; same class as virtio's).
    Vf = 0x23,
    /// An MSI with no driver work behind it: the KVM testbed's interrupt generator (`irq_source`);
    /// its handler counts it and EOIs.
    Msi = 0x24,
    /// LAPIC timer (Linux LOCAL_TIMER_VECTOR 0xec).
    Timer = 0xec,
    /// Call-function IPI from another vCPU (Linux CALL_FUNCTION_SINGLE_VECTOR 0xfb,
    /// `smp_call_function_single`; kvm-unit-tests' `on_cpu`): its handler runs the function.
    CallFunction = 0xfb,
    /// Reschedule IPI from another vCPU (Linux RESCHEDULE_VECTOR 0xfd).
    Resched = 0xfd,
}

impl Vector {
    fn from_u8(v: u8) -> Vector {
        match v {
            0x21 => Vector::NetTx,
            0x22 => Vector::NetRx,
            0x23 => Vector::Vf,
            0x24 => Vector::Msi,
            0xec => Vector::Timer,
            0xfb => Vector::CallFunction,
            0xfd => Vector::Resched,
            _ => unreachable!("vector {v:#x} is never raised"),
        }
    }
}

/// IRR/ISR state of one LAPIC (256 vectors as four 64-bit words).
#[derive(Debug, Clone, Default)]
pub struct Lapic {
    irr: [u64; 4],
    isr: [u64; 4],
}

fn highest(bits: &[u64; 4]) -> Option<u8> {
    (0..4).rev().find(|&w| bits[w] != 0).map(|w| (w as u32 * 64 + 63 - bits[w].leading_zeros()) as u8)
}

impl Lapic {
    /// Set the vector's IRR bit. Returns false if it was already pending (the interrupt is
    /// coalesced, as on hardware).
    pub fn raise(&mut self, v: Vector) -> bool {
        self.raise_raw(v as u8)
    }

    /// [`Lapic::raise`] by vector number (used when syncing a PIR).
    pub fn raise_raw(&mut self, v: u8) -> bool {
        let (w, b) = ((v / 64) as usize, v % 64);
        let was = self.irr[w] >> b & 1 == 1;
        self.irr[w] |= 1 << b;
        !was
    }

    /// The vector the guest would take now: the highest IRR vector whose priority class is
    /// above the highest in-service vector's.
    pub fn deliverable(&self) -> Option<Vector> {
        let irr = highest(&self.irr)?;
        match highest(&self.isr) {
            Some(isr) if irr >> 4 <= isr >> 4 => None,
            _ => Some(Vector::from_u8(irr)),
        }
    }

    /// Accept the deliverable vector: IRR → ISR (done at VM entry by injection).
    pub fn accept(&mut self) -> Option<Vector> {
        let v = self.deliverable()?;
        let (w, b) = ((v as u8 / 64) as usize, v as u8 % 64);
        self.irr[w] &= !(1 << b);
        self.isr[w] |= 1 << b;
        Some(v)
    }

    /// EOI: complete the highest in-service vector.
    pub fn eoi(&mut self) -> Option<Vector> {
        let v = highest(&self.isr)?;
        self.isr[(v / 64) as usize] &= !(1 << (v % 64));
        Some(Vector::from_u8(v))
    }

    /// Vectors requested and not yet accepted (IRR bits set).
    pub fn requested(&self) -> u32 {
        self.irr.iter().map(|w| w.count_ones()).sum()
    }

    /// Vectors in service (ISR bits set): accepted and not yet completed by EOI.
    pub fn in_service(&self) -> u32 {
        self.isr.iter().map(|w| w.count_ones()).sum()
    }

    /// True if any interrupt is requested or in service.
    pub fn busy(&self) -> bool {
        self.irr.iter().chain(&self.isr).any(|&w| w != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn higher_vector_preempts_and_eoi_completes_highest() {
        let mut l = Lapic::default();
        assert!(l.raise(Vector::NetTx));
        assert!(!l.raise(Vector::NetTx), "second raise coalesces");
        assert_eq!(l.accept(), Some(Vector::NetTx));
        assert_eq!(l.deliverable(), None);
        l.raise(Vector::Timer);
        assert_eq!(l.accept(), Some(Vector::Timer), "timer class is above the device's");
        assert_eq!(l.eoi(), Some(Vector::Timer));
        assert_eq!(l.eoi(), Some(Vector::NetTx));
        assert!(!l.busy());
    }

    #[test]
    fn lower_vector_waits_for_eoi() {
        let mut l = Lapic::default();
        l.raise(Vector::Timer);
        l.accept();
        l.raise(Vector::NetTx);
        assert_eq!(l.deliverable(), None);
        l.eoi();
        assert_eq!(l.deliverable(), Some(Vector::NetTx));
    }
}
