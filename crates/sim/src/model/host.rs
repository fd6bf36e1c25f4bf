//! The host model's state (DESIGN §2: the model root): its VMs, vCPUs, devices, back ends,
//! port, clients and applications, the scheduler, and the run's bookkeeping. Each field is a
//! part of a layer (`hw/`, `hypervisor/`, `io/`, `guest/`, `workload/`); the root's files
//! dispatch the events to them (`mod.rs`), build them (`build.rs`) and glue their steps
//! (`port.rs`, `apps.rs`, `backend.rs`, `cx.rs`).

use crate::engine::Time;
use crate::metrics::BusyTime;
use crate::model::hw::rxq::RxRing;
use crate::model::hw::virtq::Virtq;
use crate::model::hw::wire::{Port, Wire};
use crate::model::workload::client::Client;
use crate::model::workload::Sender;
use crate::model::hypervisor::sched;
use crate::model::hypervisor::vcpu::Vcpu;
use crate::model::{guest, hw, hypervisor, io, trace, watchdog};
use crate::profile::Profile;
use std::collections::VecDeque;

/// One VM's devices and results bookkeeping.
pub(crate) struct VmState {
    pub name: String,
    /// Host-wide indices of this VM's vCPUs.
    pub vcpus: Vec<u32>,
    /// Its first device (index into `Host::devs`): its virtio-net device or its first VF.
    pub dev: u32,
    /// Its number of devices (`[vm.net] vfs`; 1 but for a VM with several VFs), which have
    /// consecutive indices from `dev`.
    pub ndevs: u32,
    /// Per local vCPU: the device whose application ran there last (of several homed there).
    pub app_turn: Vec<u32>,
    /// Its lookbusy spinners (`[vm.lookbusy]`), if any.
    pub lookbusy: Option<guest::lookbusy::Lookbusy>,
}

/// One VM network device and its flow, each part owned by its layer: the rings and the tap
/// socket, the queues' moderation (`io/`), the host NIC's side and the link (`hw/`), the
/// device's kind (`hw/device.rs`), the guest's side (`guest/netif.rs`), and the remote client
/// at the link's other end (`workload/`).
pub(crate) struct NetDev {
    pub vm: u32,
    pub txq: Virtq,
    /// Interrupt moderation of each queue (`io/device.rs`).
    pub irqs: io::device::DevIrqs,
    pub rxq: RxRing,
    /// Packets on the tap socket waiting for the vhost RX handler.
    pub rx_sock: VecDeque<hw::rxq::RxPkt>,
    /// Packets that arrived at the host for this device (lifetime).
    pub rx_arrived_life: u64,
    /// Packets dropped because the tap queue was full (window: of the packets sent in the
    /// window, so that a loss rate over the window's sends stays a fraction; lifetime).
    pub tap_drops: u64,
    /// Lifetime count of tap drops.
    pub tap_drops_life: u64,
    /// The guest's side of the device: its driver's queue state, NAPI, MTVD
    /// (`guest/netif.rs`).
    pub guest: guest::netif::NetIf,
    pub wire: Wire,
    pub client: Client,
    /// The host NIC's side of its flow: the receive queue's throttle, the host's GRO, the
    /// skbs on their way from the port (`hw/host_nic.rs`).
    pub nic: hw::host_nic::HostNicRx,
    /// Its kind, with the state only that kind has (`hw/device.rs`): a backed device, or the
    /// NIC's queue pair an SR-IOV VF or a vDPA device is.
    pub device: hw::device::Device,
    /// Its index among its VM's devices (0 but for a VM's second and later VFs): its vector's
    /// affinity and its receiver's vCPU, local vCPU `home mod vcpus` (`[vm.net] vfs`).
    pub home: u32,
}

/// The whole simulated host.
pub struct Host {
    pub(crate) profile: Profile,
    pub(crate) vms: Vec<VmState>,
    pub(crate) vcpus: Vec<Vcpu>,
    pub(crate) devs: Vec<NetDev>,
    /// The back-end threads that serve the devices' queues (`io/`: vhost-net workers, ES2
    /// joint threads, ELVIS I/O cores or PMDs) and which serves each device.
    pub(crate) io: io::Backends,
    /// The host's physical NIC port, shared by every device (one link per direction).
    pub(crate) port: Port,
    /// The client machine's cores: when each is free. Device `d`'s flow runs on core
    /// `d mod len` (`client.cores`).
    pub(crate) client_cores: Vec<Time>,
    pub(crate) senders: Vec<Sender>,
    /// Busy time of each pCPU (guest, exits, host threads).
    pub(crate) pcpu_busy: Vec<BusyTime>,
    /// Start of the measurement window.
    pub(crate) window_start: Time,
    /// The host scheduler.
    pub(crate) sched: sched::Scheduler,
    /// Per pCPU: a thread is being switched in (its `SchedIn` is pending).
    pub(crate) switch_in: Vec<crate::engine::Timer>,
    /// The pCPU running the thread that handles the current event (the waker).
    pub(crate) waker: Option<u32>,
    /// Per VM: which vCPU its device interrupts go to (`hypervisor/routing.rs`).
    pub(crate) routing: Vec<hypervisor::routing::IrqRouting>,
    /// Per VM: the time all its vCPUs were on pCPUs at once (`hypervisor/cosched.rs`).
    pub(crate) cosched: Vec<hypervisor::cosched::CoSched>,
    /// The hypervisor's fixed parameters (host tick, IPI timing, the back-end threads).
    pub(crate) hv: hypervisor::ctx::Setup,
    /// From a kick exit's start to its ioeventfd signal (ns, at most the exit's length).
    pub(crate) io_signal_ns: Time,
    /// From a frame's arrival at the port to its write-back in a VF's ring (ns).
    pub(crate) vf_dma_ns: Time,
    /// The host NIC's interrupt work per interrupt, received frame and sent skb.
    pub(crate) nic_work: hw::host_nic::NicWork,
    /// Per device: the pCPU its NIC queue's interrupts go to (`host.nic_irq_cpus`).
    pub(crate) nic_irq_cpu: Vec<u32>,
    /// The pCPUs' host interrupt work (`hypervisor/softirq.rs`).
    pub(crate) softirqs: hypervisor::softirq::SoftirqCpus,
    /// Names of the scheduler's threads, by thread id.
    pub(crate) thread_names: Vec<String>,
    /// Timeline recording (`eventpath trace`), off unless asked for.
    pub(crate) trace: Option<Box<trace::Tracing>>,
    /// Liveness watchdog: flows that stopped making progress.
    pub(crate) watchdog: watchdog::Watchdog,
}

