//! An NVMe-like device assigned to a VM (`[vm.disk] kind = "nvme"`, issue 51; Linux
//! `drivers/nvme/host/pci.c` in the guest, VFIO in the host): one submission/completion queue
//! pair per request queue of the disk, each with its own MSI-X vector.
//!
//! The guest's driver writes each command into the submission queue in its own memory and then
//! the queue's tail doorbell (`nvme_queue_rq`, one write per batch at `nvme_commit_rqs`): an MMIO
//! store to the controller's BAR, which VFIO maps into the guest, so no exit and no host thread.
//! The controller fetches commands while one of its `nvme.units` is free (its channels and dies
//! in parallel) and serves each for a shifted-exponential time of mean `nvme.read_ns` or
//! `nvme.write_ns` (plus `nvme.byte_ns` per byte beyond 4 KB), then posts the completion entry
//! and signals the queue's vector. NVMe's interrupt coalescing (Set Features 08h) is off by
//! default, so every completion sends a message; a message whose vector is still pending in the
//! vCPU's IRR (or PIR) merges into it, and the handler (`nvme_irq`) takes every entry it finds.
//! The message reaches the vCPU as an assigned device's interrupt: what it costs (an
//! external-interrupt exit and an injection, a VT-d posted interrupt, DID's direct delivery) is
//! the VM's delivery mode's, as for an SR-IOV VF.
//!
//! The submission queue is the device's [`Virtq`] (its descriptors are the commands, its
//! `avail`/`used` the queue's tail and the completions' head); a request's direction rides in
//! its buffer's flow as [`WRITE`].

use crate::engine::{round_ns, Rng, Schedule, Time};
use crate::model::hw::event::Event;
use crate::model::hw::virtq::{Buf, Virtq};
use crate::profile::NvmeDev;

/// A block request's flow bit saying it writes (the rest of the flow is its job).
pub const WRITE: u16 = 1 << 15;

/// Bytes a command's mean service covers; beyond them the link's per-byte transfer adds up.
const BASE_BYTES: u32 = 4096;

/// One queue pair's controller side.
#[derive(Debug)]
pub(crate) struct Nvme {
    /// Commands in service: when each completes, and the command.
    serving: Vec<(Time, Buf)>,
    units: usize,
    read_ns: f64,
    write_ns: f64,
    cv: f64,
    byte_ns: f64,
    rng: Rng,
}

impl Nvme {
    /// Queue pair `queue` of VM `vm_name`'s device, with the profile's `[nvme]`.
    pub fn new(p: &NvmeDev, seed: u64, vm_name: &str, queue: u32) -> Self {
        Nvme {
            serving: Vec::new(),
            units: p.units.value as usize,
            read_ns: p.read_ns.value,
            write_ns: p.write_ns.value,
            cv: p.service_cv.value,
            byte_ns: p.byte_ns.value,
            rng: Rng::for_component(seed, &format!("vm:{vm_name}/nvme{queue}")),
        }
    }

    /// A command's service time: a shifted exponential of the direction's mean and the
    /// profile's spread (a floor of `(1 - cv) x mean`, an exponential of `cv x mean` above it).
    fn service_ns(&mut self, b: &Buf) -> Time {
        let mean = if b.flow & WRITE != 0 { self.write_ns } else { self.read_ns };
        let spread = if self.cv > 0.0 { self.rng.exp_ns(mean * self.cv) as f64 } else { 0.0 };
        let link = self.byte_ns * f64::from(b.bytes.saturating_sub(BASE_BYTES));
        round_ns(mean * (1.0 - self.cv) + spread + link).max(1)
    }

    /// The tail doorbell was written (or a unit came free): the controller fetches commands
    /// from submission queue `sq` of device `dev` while a unit is free, each completing at its
    /// `NvmeDone`.
    pub fn fetch(&mut self, now: Time, dev: u32, sq: &mut Virtq, q: &mut impl Schedule<Event>) {
        while self.serving.len() < self.units {
            let Some(b) = sq.take() else { return };
            let done = now + self.service_ns(&b);
            self.serving.push((done, b));
            q.schedule(done, Event::NvmeDone { dev });
        }
    }

    /// A command's service ended at `now` (its `NvmeDone`): the command, its unit free.
    pub fn done(&mut self, now: Time) -> Buf {
        let i = self.serving.iter().position(|&(t, _)| t == now).expect("an NvmeDone for a command in service");
        self.serving.swap_remove(i).1
    }

    /// Commands in service.
    pub fn serving(&self) -> usize {
        self.serving.len()
    }
}
