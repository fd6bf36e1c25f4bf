//! The guest image (built by build.rs from guest/*.c, *.S) and the mirror of its control blocks.
pub mod ctl;
pub mod hist;

use crate::error::{Error, Result};
use crate::vmm::cpu::ImageEntries;
use crate::vmm::layout::*;
use crate::vmm::memory::GuestMem;

/// The flat guest binary, linked at IMAGE_ADDR.
pub static IMAGE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/guest.bin"));
const MAGIC: u64 = 0x4854_4150_5456_4545;

/// Parses the image header (magic and entry points, guest/entry.S).
pub fn entries(image: &[u8]) -> Result<ImageEntries> {
    let q = |i: usize| -> u64 {
        image.get(i * 8..i * 8 + 8).map(|b| u64::from_le_bytes(b.try_into().unwrap())).unwrap_or(0)
    };
    if q(0) != MAGIC {
        return Err(Error::Kvm("guest image header magic missing".into()));
    }
    Ok(ImageEntries { start: q(1), irq: q(2), gp: q(3), fault_stubs: q(4), fault_stub_size: q(5) / 32 })
}

/// Copies the image into guest RAM and writes the global control block.
pub fn load(mem: &GuestMem, nvcpus: u64) -> Result<ImageEntries> {
    if IMAGE.len() as u64 > IMAGE_MAX {
        return Err(Error::Kvm("guest image too large".into()));
    }
    mem.write_bytes(IMAGE_ADDR, IMAGE)?;
    mem.store_u64(GLOBAL_CTL_ADDR, MAGIC)?;
    mem.store_u64(GLOBAL_CTL_ADDR + 24, nvcpus)?;
    entries(IMAGE)
}

#[cfg(test)]
mod tests {
    #[test]
    fn image_header_names_entries_inside_the_image() {
        let e = super::entries(super::IMAGE).unwrap();
        let end = super::IMAGE_ADDR + super::IMAGE.len() as u64;
        for a in [e.start, e.irq, e.gp, e.fault_stubs] {
            assert!(a >= super::IMAGE_ADDR && a < end, "{a:#x}");
        }
        assert_eq!(e.fault_stub_size, 8);
    }
}
