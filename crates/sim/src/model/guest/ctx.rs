//! The guest kernel's context: what its virtio-net and ixgbevf drivers (`driver.rs`) and NAPI
//! (`napi.rs`) may touch — the hypervisor below it whole (a [`Machine`]: its vCPUs run the
//! kernel's tasks, take its kick exits and its IPIs), its VM's device (rings, queue state,
//! NAPI context), the back end behind the rings, and the application above it only through
//! named calls (a packet handed up, the TX queue's state, a handler's news).
//!
//! A trait here, implemented by the model root (`model/cx.rs`) beside the hypervisor's
//! [`Machine`]: the guest kernel imports nothing above it. Its operations are the extension
//! traits [`crate::model::guest::driver::Driver`] and [`crate::model::guest::napi::NapiOps`],
//! implemented for every `Kernel`.

use crate::engine::{Schedule, Time};
use crate::model::io;
use crate::model::hw::rxq::RxPkt;
use crate::model::hypervisor::ctx::Machine;
use crate::model::io::queues::Notice;
use crate::model::guest::mtvd::Mtvd;
use crate::model::guest::napi::Napi;
use crate::model::hw::rxq::RxRing;
use crate::model::hw::device::Device;
use crate::model::hw::virtq::{Buf, Virtq};
use std::collections::VecDeque;

/// A device as its guest driver sees it: the rings, the driver's own queue state and NAPI
/// context (`netif.rs`), and the device's kind (a VF's or vDPA device's state is its own).
pub(crate) struct DevView<'a> {
    /// The TX virtqueue (a VF's TX descriptor ring).
    pub txq: &'a mut Virtq,
    /// Packets waiting while the TX queue is stopped (the qdisc backlog).
    pub qdisc: &'a mut VecDeque<Buf>,
    /// The driver stopped the TX queue (ring full).
    pub tx_stopped: &'a mut bool,
    /// The RX ring.
    pub rxq: &'a mut RxRing,
    /// The RX queue's NAPI context.
    pub napi: &'a mut Napi,
    /// Its kind (`hw/device.rs`): a backed device, or the NIC's queue pair (a VF, vDPA).
    pub device: &'a mut Device,
    /// The multi-threaded VF driver's dispatcher and threads, if the VM runs it.
    pub mtvd: &'a mut Option<Mtvd>,
    /// The guest's GRO is on (`[vm.net.offload] gro`).
    pub guest_gro: bool,
    /// Its index among the VM's devices: its vector's affinity and its reader's vCPU (local
    /// `home mod vcpus`).
    pub home: u32,
    /// The vCPU its MSI-X message last went to, until a handler there takes it.
    pub irq_to: &'a mut Option<u32>,
    /// The vCPU its TX queue's interrupt last went to (multi-queue virtio-net).
    pub tx_irq_to: &'a mut Option<u32>,
    /// Its TX ring's kick is owed by a TX interrupt's handler (multi-queue virtio-net).
    pub tx_kick_owed: &'a mut bool,
}

/// What the guest kernel may do (see the module doc). vCPUs are host-wide indices; `vm` is the
/// VM's index, `dev` its device's.
pub(crate) trait Kernel: Machine {
    /// The VM's vCPUs (host-wide indices, local order).
    fn vm_vcpus(&self, vm: usize) -> &[u32];
    /// The VM's (first) device.
    fn dev_of(&self, vm: usize) -> u32;
    /// The VM's devices: the first and how many (more than one only for several VFs, whose
    /// indices are consecutive).
    fn vm_devs(&self, vm: usize) -> (u32, u32);
    /// Device `dev` as its driver sees it.
    fn net(&mut self, dev: u32) -> DevView<'_>;
    /// The event queue, on which the guest's driver schedules a back end's events (a kick's
    /// ioeventfd signal).
    type KQ: Schedule<io::Event>;
    /// The queue to schedule them on.
    fn kq(&mut self) -> &mut Self::KQ;
    /// The driver wrote assigned device `dev`'s TX tail register or submission-queue doorbell
    /// (MMIO, no exit): the NIC fetches the descriptors its queue for the device has room for
    /// (`hw::vf::fetch`); an NVMe-like controller, the commands it has units free for
    /// (`hw::nvme`).
    fn vf_tail_written(&mut self, now: Time, dev: u32);
    /// From a kick exit's start to its ioeventfd signal (ns).
    fn io_signal_ns(&self) -> Time;

    // The back end behind the rings.

    /// Signal the back end serving `dev` (a kick's ioeventfd).
    fn notify_backend(&mut self, now: Time, dev: u32, n: Notice);
    /// The guest wrote one of `dev`'s rings without a kick: a back end watching that ring sees
    /// it (which back ends do is theirs to say, `io::Backend::sees_write`).
    fn backend_written(&mut self, now: Time, dev: u32, n: Notice);

    // The VM's application, above.

    /// The application's threads run on every vCPU (a server's workers), not one vCPU alone.
    fn app_on_every_vcpu(&self, vm: usize) -> bool;
    /// The application receives TCP data (its receive costs are TCP's).
    fn app_receives_tcp_data(&self, vm: usize) -> bool;
    /// The driver stopped or woke device `dev`'s TX queue.
    fn app_set_stopped(&mut self, dev: u32, stopped: bool);
    /// NAPI on `v` received `pkt` of device `dev` for the application reading it; returns
    /// whether a step started.
    fn app_deliver(&mut self, now: Time, v: u32, dev: u32, pkt: RxPkt) -> bool;
    /// The TX interrupt's handler ran on `v` for device `dev`'s queue.
    fn app_tx_interrupt(&mut self, now: Time, v: u32, dev: u32);
}
