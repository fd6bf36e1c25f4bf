//! Mirror of `struct vcpu_ctl` (guest/ctl.h): every field a u64, same order, so `offset_of!`
//! gives the guest's offsets. Access goes through [`CtlView`] (checked atomic loads/stores).
use crate::vmm::layout::{vcpu_ctl, ADV_KINDS, HIST_BUCKETS};
use crate::vmm::memory::GuestMem;

/// Layout of one vCPU's control block.
#[repr(C)]
#[allow(missing_docs)]
pub struct VcpuCtl {
    pub role: u64, pub queue: u64, pub qsize: u64, pub kick: u64, pub consume: u64, pub halt_idle: u64,
    pub period_tsc: u64, pub window: u64, pub burst: u64, pub gap_tsc: u64, pub work_tsc: u64, pub adv_mask: u64,
    pub param_reserved: [u64; 4],
    pub heartbeat: u64, pub submitted: u64, pub completed: u64, pub dropped: u64, pub kicks: u64,
    pub kicks_suppressed: u64, pub halts: u64, pub irq_seen: u64, pub irq_seen_tsc: u64, pub kick_cycles: u64,
    pub reap_rounds: u64, pub started: u64,
    pub last_kick_tsc: u64, pub work_cycles: u64, pub state_reserved: [u64; 2],
    pub adv_sent: [u64; ADV_KINDS as usize],
    pub lat_count: u64, pub lat_sum: u64, pub lat_max: u64, pub lat_reserved: u64,
    pub hist: [u64; HIST_BUCKETS as usize],
}

/// Field offset in `VcpuCtl`.
#[macro_export]
macro_rules! ctl_off {
    ($f:ident) => {
        std::mem::offset_of!($crate::guest::ctl::VcpuCtl, $f) as u64
    };
}

/// Checked access to vCPU `i`'s control block.
#[derive(Clone, Copy)]
pub struct CtlView<'a> {
    mem: &'a GuestMem,
    base: u64,
}

impl<'a> CtlView<'a> {
    /// View of vCPU `i`.
    pub fn new(mem: &'a GuestMem, i: u64) -> Self {
        Self { mem, base: vcpu_ctl(i) }
    }
    /// Reads the u64 at field offset `off` (0 if the guest's layout were ever out of range).
    pub fn get(&self, off: u64) -> u64 {
        self.mem.load_u64(self.base + off).unwrap_or(0)
    }
    /// Writes a parameter.
    pub fn set(&self, off: u64, v: u64) {
        let _ = self.mem.store_u64(self.base + off, v);
    }
    /// The latency record (bucket counts, sum, max; TSC cycles).
    pub fn latencies(&self) -> crate::guest::hist::GuestLatencies {
        crate::guest::hist::GuestLatencies {
            counts: (0..HIST_BUCKETS).map(|b| self.get(crate::ctl_off!(hist) + 8 * b)).collect(),
            sum: self.get(crate::ctl_off!(lat_sum)),
            max: self.get(crate::ctl_off!(lat_max)),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn control_block_fits_its_stride() {
        assert!(std::mem::size_of::<super::VcpuCtl>() as u64 <= crate::vmm::layout::VCPU_CTL_STRIDE);
        assert_eq!(crate::ctl_off!(heartbeat), 16 * 8);
        assert_eq!(crate::ctl_off!(adv_sent), 32 * 8);
        assert_eq!(crate::ctl_off!(hist), 44 * 8);
    }
}
