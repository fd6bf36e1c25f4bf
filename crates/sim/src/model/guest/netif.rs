//! The guest's side of one network device (issue 46: per-device state owned by the layer it
//! belongs to): its driver's TX queue state and qdisc backlog, the RX queue's NAPI context,
//! the multi-threaded VF driver where the VM runs it, and where the device's MSI-X message
//! last went. The driver (`driver.rs`) and NAPI (`napi.rs`) act on it through their device
//! view (`ctx::DevView`).

use crate::model::guest::mtvd::Mtvd;
use crate::model::guest::napi::Napi;
use crate::model::hw::virtq::Buf;
use std::collections::VecDeque;

/// The guest's state of one device.
#[derive(Debug)]
pub(crate) struct NetIf {
    /// Packets the driver could not place while the TX ring was full: the qdisc backlog
    /// (`dev_queue_xmit` queues while the queue is stopped; `net_tx_action` resumes it).
    pub qdisc: VecDeque<Buf>,
    /// The driver stopped the TX queue (ring full): its writers wait for the TX clean.
    pub tx_stopped: bool,
    /// The RX queue's NAPI context.
    pub napi: Napi,
    /// The guest's GRO (its driver's `napi_gro_receive`, `[vm.net.offload] gro`).
    pub gro: bool,
    /// The multi-threaded VF driver (`[vm.net] mtvd`).
    pub mtvd: Option<Mtvd>,
    /// The vCPU (host-wide) the device's MSI-X message last went to, until the handler there
    /// takes it (a VM with several VFs: which VF an interrupt on a vCPU is for; of a
    /// multi-queue virtio-net device, which queue pair's RX interrupt).
    pub irq_to: Option<u32>,
    /// Likewise for a multi-queue virtio-net queue pair's TX interrupt.
    pub tx_irq_to: Option<u32>,
    /// A TX interrupt's handler added buffers to this queue pair's TX ring and owes its kick
    /// (multi-queue virtio-net: which device the handler's kick is for).
    pub tx_kick_owed: bool,
}

impl NetIf {
    /// A device's guest side, with the guest's GRO on or off and MTVD's threads, if any.
    pub fn new(gro: bool, mtvd: Option<Mtvd>) -> Self {
        NetIf { qdisc: VecDeque::new(), tx_stopped: false, napi: Napi::default(), gro, mtvd, irq_to: None, tx_irq_to: None, tx_kick_owed: false }
    }
}
