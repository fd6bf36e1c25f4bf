//! The posted-interrupt descriptor of a vCPU (ES2 §3.2, Fig. 2; DID §2.4): a 256-bit posted
//! interrupt request bitmap (PIR) and the outstanding-notification bit (ON).
//!
//! The device side posts a vector into the PIR; if ON was clear it sets ON and sends the
//! notification vector to the vCPU's pCPU. A vCPU in guest mode has the PIR synced into its
//! virtual IRR by hardware with no exit; a vCPU in the hypervisor gets it synced at the next VM
//! entry (KVM `vmx_sync_pir_to_irr`); a blocked vCPU is woken by the wake-up vector.

use crate::model::hw::lapic::{Lapic, Vector};

/// One PI descriptor.
#[derive(Debug, Clone, Default)]
pub struct PiDesc {
    pir: [u64; 4],
    /// Outstanding notification: a notification was sent and the PIR not yet synced.
    pub on: bool,
}

/// What posting a vector did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Posted {
    /// The bit was already set: coalesced with the pending request.
    Coalesced,
    /// Posted; ON was already set, so no notification was sent.
    Quiet,
    /// Posted and ON set: a notification vector (or wake-up vector) goes out.
    Notify,
}

impl PiDesc {
    /// Post `v` (pi_test_and_set_pir, then pi_test_and_set_on).
    pub fn post(&mut self, v: Vector) -> Posted {
        let (w, b) = ((v as u8 / 64) as usize, v as u8 % 64);
        if self.pir[w] >> b & 1 == 1 {
            return Posted::Coalesced;
        }
        self.pir[w] |= 1 << b;
        if self.on {
            Posted::Quiet
        } else {
            self.on = true;
            Posted::Notify
        }
    }

    /// Move every posted vector into the LAPIC's IRR and clear ON. Returns how many vectors
    /// were moved; a vector already requested in the IRR merges (counted by the caller as
    /// coalesced through the return value `(moved, merged)`).
    pub fn sync_to_irr(&mut self, lapic: &mut Lapic) -> (u32, u32) {
        let (mut moved, mut merged) = (0, 0);
        for w in 0..4 {
            let mut bits = std::mem::take(&mut self.pir[w]);
            while bits != 0 {
                let b = bits.trailing_zeros();
                bits &= bits - 1;
                moved += 1;
                if !lapic.raise_raw((w as u32 * 64 + b) as u8) {
                    merged += 1;
                }
            }
        }
        self.on = false;
        (moved, merged)
    }

    /// Vectors posted and not yet synced.
    pub fn pending(&self) -> u32 {
        self.pir.iter().map(|w| w.count_ones()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notify_once_until_synced() {
        let mut pi = PiDesc::default();
        let mut l = Lapic::default();
        assert_eq!(pi.post(Vector::NetRx), Posted::Notify);
        assert_eq!(pi.post(Vector::NetRx), Posted::Coalesced);
        assert_eq!(pi.post(Vector::Timer), Posted::Quiet);
        assert_eq!(pi.sync_to_irr(&mut l), (2, 0));
        assert!(!pi.on);
        assert_eq!(l.accept(), Some(Vector::Timer));
        assert_eq!(pi.post(Vector::NetRx), Posted::Notify);
    }
}
