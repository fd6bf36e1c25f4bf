//! KVM binary statistics (KVM_GET_STATS_FD, `_IO(KVMIO, 0xce)`) of a VM or vCPU fd.
//!
//! The fd is read with `pread`: a header, descriptors (each with a name), then the data block.
//! Readable while the vCPU runs (KVM-NOTES). Only cumulative/instant u64 scalars are kept.
use std::collections::BTreeMap;
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::fs::FileExt;

vmm_sys_util::ioctl_io_nr!(KVM_GET_STATS_FD, 0xAE, 0xce);

/// An open statistics fd and its parsed descriptors.
pub struct StatsFd {
    file: File,
    data_offset: u64,
    /// (name, offset in the data block, number of u64 values)
    descs: Vec<(String, u64, u64)>,
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes(b[at..at + 4].try_into().unwrap())
}

impl StatsFd {
    /// Opens the stats fd of a VM or vCPU fd.
    pub fn open(fd: &impl AsRawFd) -> std::io::Result<StatsFd> {
        // SAFETY: KVM_GET_STATS_FD takes no argument and returns a new fd or -1.
        let r = unsafe { libc::ioctl(fd.as_raw_fd(), KVM_GET_STATS_FD() as _) };
        if r < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `r` is a fresh fd that nothing else owns.
        let file = unsafe { File::from_raw_fd(r) };
        let mut h = [0u8; 24];
        file.read_exact_at(&mut h, 0)?;
        let (name_size, num_desc, desc_offset, data_offset) =
            (u32_at(&h, 4) as usize, u32_at(&h, 8) as usize, u32_at(&h, 16) as u64, u32_at(&h, 20) as u64);
        let dsize = 16 + name_size;
        let mut d = vec![0u8; dsize * num_desc];
        file.read_exact_at(&mut d, desc_offset)?;
        let mut descs = Vec::new();
        for i in 0..num_desc {
            let b = &d[i * dsize..(i + 1) * dsize];
            let flags = u32_at(b, 0);
            let size = u16::from_ne_bytes([b[6], b[7]]) as u64;
            let offset = u32_at(b, 8) as u64;
            let name: String = b[16..].iter().take_while(|c| **c != 0).map(|c| *c as char).collect();
            // type: bits 0-3 (0 cumulative, 1 instant, 2 peak); histograms (3, 4) are skipped.
            if flags & 0xF <= 2 && size >= 1 {
                descs.push((name, offset, size.min(1)));
            }
        }
        Ok(StatsFd { file, data_offset, descs })
    }

    /// Reads every scalar statistic.
    pub fn read(&self) -> BTreeMap<String, u64> {
        let mut out = BTreeMap::new();
        for (name, off, _) in &self.descs {
            let mut v = [0u8; 8];
            if self.file.read_exact_at(&mut v, self.data_offset + off).is_ok() {
                out.insert(name.clone(), u64::from_ne_bytes(v));
            }
        }
        out
    }
}

/// `after - before` per name (saturating: instant values can go down).
pub fn delta(before: &BTreeMap<String, u64>, after: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    after.iter().map(|(k, v)| (k.clone(), v.saturating_sub(*before.get(k).unwrap_or(&0)))).collect()
}
