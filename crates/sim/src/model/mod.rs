//! The host model: pCPUs, vCPUs, virtio-net devices with vhost threads, the wire, and the
//! guests' workloads. Each concept has its own module; this one wires them to the engine.
//!
//! The paravirtual path of `docs/model.md`: per VM one virtio-net device (TX and RX
//! virtqueues) served by one vhost thread, vCPUs with an emulated or posted-interrupt LAPIC,
//! guest NAPI and TCP/UDP senders, the link and a remote client that ACKs. vCPU threads, vhost
//! threads and CPU hogs run where the host scheduler (`sched/`, a CFS model) puts them, pinned
//! or not (`threads.rs`). Later models (ES2, ELVIS, DID, ...) slot in by replacing a layer
//! behind these types.

mod app_ctx;
mod backend;
mod cx;
pub(crate) mod guest;
pub(crate) mod hw;
pub(crate) mod hypervisor;
#[cfg(debug_assertions)]
mod invariants;
pub(crate) mod io;
mod trace;
mod watchdog;
pub(crate) mod workload;

use crate::engine::{EventQueue, Model, Time, NS_PER_S, round_ns};
use crate::metrics::BusyTime;
use crate::profile::Profile;
use crate::scenario::{Checked, Workload};
use guest::napi::Napi;
use hw::rxq::RxRing;
use workload::client::Client;
use std::collections::VecDeque;
/// The run classes' names (`VmSummary::latency_by_target_state_us`).
pub const RUN_CLASS_KEYS: [&str; 3] = eventpath_policy::routing::RunClass::KEYS;
pub use hypervisor::sched;
pub use io::es2_driver;
pub use hypervisor::vcpu::{Mode as VcpuMode, Vcpu, IPI_KINDS, IRQ_SOURCES};
pub use watchdog::Stall;
use hw::virtq::Virtq;
use hw::wire::{Port, Wire};
use hw::{nic_itr, vf};
use io::moderation;
use eventpath_policy::moderation::ModerationConfig;
use app_ctx::AppCtx;
use hypervisor::irq::Irqs;
use hypervisor::softirq::Softirqs;
use hypervisor::sched::CpuMask;
use hypervisor::threads::Threads;
use hypervisor::vcpu::Vcpus;
use guest::driver::Driver;
use workload::{with_app, App, ClientEv, Sender, Step};

/// Every event of the model. Small and `Copy`: the heap stores them inline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ev {
    /// End of warm-up: start measuring.
    Warmup,
    /// A vCPU finished a piece of guest work (stale if `epoch` moved on).
    GuestDone {
        /// vCPU index (host-wide).
        vcpu: u32,
        /// vCPU work epoch at scheduling time.
        epoch: u32,
    },
    /// A vCPU finished handling an exit and re-enters the guest.
    ExitDone {
        /// vCPU index.
        vcpu: u32,
    },
    /// The thread the scheduler switched in on `cpu` starts running (stale unless `seq` is
    /// the runqueue's current switch number).
    SchedIn {
        /// pCPU.
        cpu: u32,
        /// Switch sequence number.
        seq: u32,
    },
    /// The host's periodic scheduler tick on a pCPU.
    HostTick {
        /// pCPU.
        cpu: u32,
    },
    /// The guest's LAPIC timer fires.
    TimerFire {
        /// vCPU index.
        vcpu: u32,
    },
    /// A packet has left the wire (delivered to the remote client).
    WireDone {
        /// Device index.
        dev: u32,
    },
    /// Periodic guest scheduler tick of a vCPU (its LAPIC timer as a host hrtimer).
    Tick {
        /// vCPU index.
        vcpu: u32,
    },
    /// The oldest packet on the reverse link (client → host) reached the tap socket.
    HostRx {
        /// Device index.
        dev: u32,
    },
    /// An event of device `dev`'s client (its source, a request, a timer), for the VM's
    /// workload to interpret (`workload.rs`).
    /// (The fields of a `workload::ClientEv`, flattened: the event stays 16 bytes, and the
    /// queue's entries 32.)
    Client {
        /// Device index.
        dev: u32,
        /// See `ClientEv`.
        kind: u8,
        /// See `ClientEv`.
        x: u8,
        /// See `ClientEv`.
        a: u32,
        /// See `ClientEv`.
        b: u32,
    },
    /// A halted vCPU's poll window timer fires (`halt.rs`: a restartable `engine::Timer`).
    HaltPollEnd {
        /// vCPU index.
        vcpu: u32,
    },
    /// A queue's moderated interrupt is due (`moderation.rs`).
    IrqDeadline {
        /// Device index.
        dev: u32,
        /// The RX queue (else TX).
        rx: bool,
    },
    /// The client NIC's throttled receive interrupt for device `dev`'s flow (`nic_itr.rs`).
    ClientNicIrq {
        /// Device index.
        dev: u32,
    },
    /// A kick exit's ioeventfd signals the vhost thread, part-way into the exit (`driver.rs`).
    Ioeventfd {
        /// Device index.
        dev: u32,
        /// The kicking vCPU (its pCPU is the waker).
        vcpu: u32,
        /// The RX queue's refill kick (else the TX queue's).
        rx: bool,
    },
    /// An SR-IOV VF's throttled interrupt is due (`vf.rs`).
    VfIrq {
        /// Device index.
        dev: u32,
    },
    /// A back-end thread finished an item, or time it owed (`io/thread.rs`).
    IoStep {
        /// Back-end thread index.
        thread: u32,
    },
    /// A back-end thread's sleep timer fires (`io/thread.rs`: its timed sleep ends).
    IoWake {
        /// Back-end thread index.
        thread: u32,
    },
    /// A back-end thread's spin timer fires: it looks at its rings again (work was seen, or its
    /// spin's window ends).
    IoPoll {
        /// Back-end thread index.
        thread: u32,
    },    /// A timer the host scheduler asked for fires (`sched::Action::Timer`: Xen credit's tick,
    /// slice end and accounting).
    SchedTimer {
        /// pCPU.
        cpu: u32,
    },
    /// A waker set need_resched for a vCPU whose guest idle loop polls with the POLL flag set
    /// (`guest_poll.rs`), instead of sending it a reschedule IPI.
    NeedResched {
        /// vCPU index.
        vcpu: u32,
    },
    /// A call-function IPI leaves its sender's ICR-write exit (`exit.ipi_send_ns` into it) and
    /// is raised at its target.
    CallFunctionIpi {
        /// Target vCPU index.
        vcpu: u32,
    },
    /// The client NIC's transmit side: a frame is through, or the next one starts
    /// (`hw/client_port.rs`: a restartable `engine::Timer`).
    ClientPort,
}

impl Ev {
    /// The kinds' names, indexed by [`Ev::kind`] (the benchmark's events-by-kind census).
    pub const KINDS: [&'static str; 22] = [
        "Warmup", "GuestDone", "ExitDone", "SchedIn", "HostTick", "TimerFire", "WireDone", "Tick",
        "HostRx", "Client", "HaltPollEnd", "IrqDeadline", "ClientNicIrq", "Ioeventfd", "VfIrq", "IoStep", "IoWake", "IoPoll",
        "SchedTimer", "NeedResched", "CallFunctionIpi", "ClientPort",
    ];

    /// This event's kind, an index into [`Ev::KINDS`].
    pub fn kind(&self) -> usize {
        match self {
            Ev::Warmup => 0,
            Ev::GuestDone { .. } => 1,
            Ev::ExitDone { .. } => 2,
            Ev::SchedIn { .. } => 3,
            Ev::HostTick { .. } => 4,
            Ev::TimerFire { .. } => 5,
            Ev::WireDone { .. } => 6,
            Ev::Tick { .. } => 7,
            Ev::HostRx { .. } => 8,
            Ev::Client { .. } => 9,
            Ev::HaltPollEnd { .. } => 10,
            Ev::IrqDeadline { .. } => 11,
            Ev::ClientNicIrq { .. } => 12,
            Ev::Ioeventfd { .. } => 13,
            Ev::VfIrq { .. } => 14,
            Ev::IoStep { .. } => 15,
            Ev::IoWake { .. } => 16,
            Ev::IoPoll { .. } => 17,
            Ev::SchedTimer { .. } => 18,
            Ev::NeedResched { .. } => 19,
            Ev::CallFunctionIpi { .. } => 20,
            Ev::ClientPort => 21,
        }
    }
}

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
    /// Which vCPU its device interrupts go to (`routing.rs`).
    pub routing: hypervisor::routing::IrqRouting,
    /// Its lookbusy spinners (`[vm.lookbusy]`), if any.
    pub lookbusy: Option<guest::lookbusy::Lookbusy>,
}

/// A virtio-net device: TX and RX virtqueues, the vhost thread serving both, the guest's NAPI
/// context, the link, and the remote client at its other end.
pub(crate) struct NetDev {
    pub vm: u32,
    pub txq: Virtq,
    /// Interrupt moderation of each queue (`moderation.rs`).
    pub tx_moderation: moderation::QueueModeration,
    pub rx_moderation: moderation::QueueModeration,
    /// Packets the driver could not place while the TX ring was full: the qdisc backlog
    /// (`dev_queue_xmit` queues while the queue is stopped; `net_tx_action` resumes it).
    pub qdisc: VecDeque<hw::virtq::Buf>,
    /// The driver stopped the TX queue (ring full): its writers wait for the TX clean.
    pub tx_stopped: bool,
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
    pub napi: Napi,
    pub wire: Wire,
    pub client: Client,
    /// When this device's latest frame from the port reached its tap queue.
    pub tap_last: Time,
    /// The host NIC's receive interrupt throttle for this device's flow (its RSS queue).
    pub port_itr: nic_itr::RxItr,
    /// The SR-IOV VF this device is, or the VF holding a vDPA device's queues (else
    /// virtio-net over a back end).
    pub vf: Option<vf::Vf>,
    /// The skbs on their way from the port to the tap, in order: each one frame, or the
    /// frames of one poll that the host's GRO merged (`hw/gro.rs`).
    pub port_skbs: VecDeque<hw::gro::PortSkb>,
    /// The host's GRO for this device's flow.
    pub host_gro: hw::gro::HostGro,
    /// `VIRTIO_NET_F_GUEST_TSO4`: packets reach the guest in mergeable buffers as large as
    /// they are.
    pub guest_tso4: bool,
    /// The guest's GRO (its driver's `napi_gro_receive`).
    pub guest_gro: bool,
    /// The multi-threaded VF driver (`[vm.net] mtvd`).
    pub mtvd: Option<guest::mtvd::Mtvd>,
    /// Its index among its VM's devices (0 but for a VM's second and later VFs): its vector's
    /// affinity and its receiver's vCPU, local vCPU `home mod vcpus` (`[vm.net] vfs`).
    pub home: u32,
    /// The vCPU (host-wide) its MSI-X message last went to, until the handler there takes it
    /// (a VM with several VFs: which VF an interrupt on a vCPU is for).
    pub irq_to: Option<u32>,
}

/// The host NIC's interrupt work for the virtio devices (profile `host.nic_*_ns`, rounded).
#[derive(Debug, Clone, Copy)]
pub(crate) struct NicWork {
    /// Per interrupt of a queue.
    pub irq_ns: Time,
    /// Per frame received for a device.
    pub rx_frame_ns: Time,
    /// Of `rx_frame_ns`, the part paid once per skb handed up the stack: a frame GRO appends
    /// to a held skb costs `rx_frame_ns - rx_skb_ns`.
    pub rx_skb_ns: Time,
    /// Per skb sent for a device (its TX clean).
    pub tx_clean_ns: Time,
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
    pub(crate) switching: Vec<bool>,
    /// The pCPU running the thread that handles the current event (the waker).
    pub(crate) waker: Option<u32>,
    /// Host tick period (ns).
    pub(crate) host_tick_ns: Time,
    /// From a kick exit's start to its ioeventfd signal (ns, at most the exit's length).
    pub(crate) io_signal_ns: Time,
    /// `exit.ipi_send_ns`: when, into its ICR-write exit, a call-function IPI is raised.
    pub(crate) ipi_send_ns: Time,
    /// From a frame's arrival at the port to its write-back in a VF's ring (ns).
    pub(crate) vf_dma_ns: Time,
    /// The host NIC's interrupt work per interrupt, received frame and sent skb.
    pub(crate) nic_work: NicWork,
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

impl Host {
    /// Build the model from a checked scenario and schedule its first events.
    pub fn build(c: &Checked, q: &mut EventQueue<Ev>) -> Host {
        Self::build_with(c, q, crate::run::External::none())
    }

    /// [`Host::build`], with the policies `ext` supplies in place of those the scenario names
    /// (`run::External`, whose checks `ext` has passed).
    pub fn build_with(c: &Checked, q: &mut EventQueue<Ev>, mut ext: crate::run::External) -> Host {
        let s = &c.scenario;
        let mut vms = Vec::new();
        let mut vcpus = Vec::new();
        let mut devs = Vec::new();
        let mut senders = Vec::new();
        let params = sched::Params::from_profile(&c.profile, c.pcpus);
        let mut sched = match s.host.scheduler {
            crate::scenario::HostScheduler::Cfs => sched::Scheduler::Cfs(sched::Sched::new(params, c.pcpus)),
            crate::scenario::HostScheduler::XenCredit => {
                let tslice = s.host.tslice_ms.unwrap_or(sched::credit::DEFAULT_TSLICE_MS);
                sched::Scheduler::Credit(sched::Credit::new(params, sched::CreditParams::new(tslice), c.pcpus))
            }
        };
        let all = CpuMask::first(c.pcpus);
        let xen = s.host.virtualization == crate::scenario::Virtualization::Xen;
        let dom0 = if xen { crate::scenario::xen::dom0_cpus(s, &c.profile, c.pcpus) } else { Vec::new() };
        // Under Xen an unpinned vCPU runs anywhere but on dom0's pCPUs.
        let guests = if xen { CpuMask::of((0..c.pcpus).filter(|p| !dom0.contains(p))) } else { all };
        let mask = |pin: Option<u32>| pin.map_or(all, CpuMask::bit);
        let rng = |name: &str| crate::engine::Rng::for_component(s.seed, &format!("sched:{name}"));
        let mut thread_names = Vec::new();
        let mut credit_groups = Vec::new();
        // Thread ids: every vCPU thread, then every vhost thread, then the hogs (threads.rs).
        for (vi, vm) in s.vm.iter().enumerate() {
            let mut ids = Vec::new();
            for j in 0..vm.vcpus {
                let pin = vm.vcpu_pins.as_ref().map(|p| p[j as usize]);
                ids.push(vcpus.len() as u32);
                let name = format!("vcpu:{}/{j}", vm.name);
                sched.add(0, pin.map_or(guests, CpuMask::bit), rng(&name));
                thread_names.push(name);
                let delivery = match s.host.virtualization {
                    crate::scenario::Virtualization::BareMetal => crate::scenario::InterruptDelivery::Native,
                    crate::scenario::Virtualization::Kvm => vm.interrupt_delivery,
                    // A PV device's only delivery: event channels (the key's default reads so).
                    crate::scenario::Virtualization::Xen if vm.net.kind == crate::scenario::NetKind::XenPv => crate::scenario::InterruptDelivery::Evtchn,
                    crate::scenario::Virtualization::Xen => vm.interrupt_delivery,
                };
                let idle_poll = vm.guest_idle == crate::scenario::GuestIdle::Poll;
                let mut vc = Vcpu::new(vi as u32, delivery, vm.guest_cpu_burn, idle_poll, vm.halt_poll.clone());
                vc.features = vm.apic;
                vc.cpu_caps = c.profile.apic_caps();
                vc.xen = match vm.net.kind {
                    crate::scenario::NetKind::XenPv => hypervisor::vcpu::XenIo::Pv,
                    crate::scenario::NetKind::XenE1000 => hypervisor::vcpu::XenIo::Fv,
                    _ => hypervisor::vcpu::XenIo::None,
                };
                vc.guest_poll = vm.guest_halt_poll.clone().map(hypervisor::guest_poll::GuestPoll::new);
                vcpus.push(vc);
            }
            let router = match ext.take_router(&vm.name) {
                Some(r) => hypervisor::routing::VmRouter::External(r),
                None => {
                    // hBalance's Algorithm 2 pools an SMP VM's credits, under Xen credit only (the
                    // scheduler is told the VM's vCPU threads; a vCPU's thread id is its index).
                    if matches!(vm.interrupt_routing, eventpath_policy::routing::RouterConfig::HBalance) && vm.vcpus > 1 {
                        credit_groups.push(ids.clone());
                    }
                    hypervisor::routing::VmRouter::Builtin(vm.interrupt_routing.build(vm.vcpus as usize).expect("a checked VM has vCPUs"))
                }
            };
            let routing = hypervisor::routing::IrqRouting::new(router, ids[0], vm.vcpus);
            let dev = vms.iter().map(|v: &VmState| v.ndevs).sum::<u32>();
            let app_turn = (0..vm.vcpus).map(|l| dev + l.min(vm.net.devices() - 1)).collect();
            let lookbusy = vm.lookbusy.as_ref().map(|l| guest::lookbusy::Lookbusy::new(l, vm.vcpus, &c.profile));
            vms.push(VmState { name: vm.name.clone(), vcpus: ids, dev, ndevs: vm.net.devices(), routing, app_turn, lookbusy });
        }
        let dev_vm: Vec<u32> = vms.iter().enumerate().flat_map(|(vi, v)| std::iter::repeat_n(vi as u32, v.ndevs as usize)).collect();
        for (dev, &vi) in dev_vm.iter().enumerate() {
            let (vi, home) = (vi as usize, dev as u32 - vms[vi as usize].dev);
            let vm = &s.vm[vi];
            let w = vm.workload.as_ref();
            let tcp = w.is_some_and(Workload::is_tcp);
            let off = vm.net.offloads();
            let virtio = vm.net.kind.has_backend();
            // GRO's 64 KB, and no more than the guest's ring holds as one packet.
            let gro_max = (c.profile.nic.gso_max_size_bytes.value as u32)
                .min(vm.net.queue_size * hw::gro::MERGEABLE_BUF_BYTES);
            devs.push(NetDev {
                vm: vi as u32,
                home,
                irq_to: None,
                txq: Virtq::new(vm.net.queue_size, vm.net.suppression()),
                qdisc: VecDeque::new(),
                tx_stopped: false,
                // A VF's scheme drives its EITR (`hw/vf.rs`), not a virtqueue's interrupts.
                tx_moderation: moderation::QueueModeration::new(if virtio { &vm.net.moderation } else { &ModerationConfig::None }),
                rx_moderation: moderation::QueueModeration::new(if virtio { &vm.net.moderation } else { &ModerationConfig::None }),
                rxq: RxRing::new(vm.net.queue_size, vm.net.suppression()),
                rx_sock: VecDeque::new(),
                rx_arrived_life: 0,
                tap_drops: 0,
                tap_drops_life: 0,
                napi: Napi::default(),
                wire: Wire::new(&c.profile, dev as u32, tcp),
                client: Client::new(&c.profile),
                tap_last: 0,
                port_itr: nic_itr::RxItr::for_nic(
                    c.profile.host.nic_itr.value,
                    c.profile.host.nic_rx_itr_ns.value,
                    c.profile.nic.wire_overhead_bytes.value as u32,
                ),
                vf: match vm.net.kind {
                    crate::scenario::NetKind::SriovVf => {
                        let sr = c.profile.sriov.as_ref().expect("a checked VF has a profile with [sriov]");
                        Some(vf::Vf::new(vm.net.itr_us, &vm.net.moderation, sr.vf_itr_ns.value, sr.vf_itr_max_ns.value, tcp))
                    }
                    crate::scenario::NetKind::Vdpa => Some(vf::Vf::vdpa(tcp)),
                    _ => None,
                },
                port_skbs: VecDeque::new(),
                host_gro: hw::gro::HostGro { enabled: tcp && virtio && off.guest_tso4 && off.host_gro, max_bytes: gro_max },
                guest_tso4: virtio && off.guest_tso4,
                guest_gro: off.gro,
                mtvd: vm.net.mtvd.then(|| guest::mtvd::Mtvd::new(vm.vcpus as usize)),
            });
            let sender = Sender::new(w, vm.vcpus, &c.profile, s.seed, &vm.name, vm.net.offloads());
            senders.push(sender);
        }
        // The back-end threads come after the vCPU threads.
        // (Under Xen the back ends are dom0's: each VM's pinned to one of dom0's pCPUs in turn.)
        let io = io::Backends::build(c, &dev_vm, &dom0, &mut |name, pin| {
            sched.add(0, mask(pin), rng(name));
            thread_names.push(name.to_string());
        });
        if let sched::Scheduler::Credit(cr) = &mut sched {
            cr.set_groups(credit_groups);
        }
        let mut hogs = Vec::new();
        for (h, hog) in s.host.cpu_hog.iter().enumerate() {
            let allowed = hog.pins.as_ref().map_or(all, |ps| CpuMask::of(ps.iter().copied()));
            hogs.push(sched.add(hog.nice.unwrap_or(crate::scenario::DEFAULT_HOG_NICE), allowed, rng(&format!("hog{h}"))));
            thread_names.push(format!("hog{h}"));
        }
        let host_hz = c.profile.sched.tick_hz.value;
        let mut host = Host {
            profile: c.profile.clone(),
            vms,
            vcpus,
            devs,
            io,
            port: Port::new(&c.profile, s.seed, dev_vm.len(), c.client_cores as usize),
            client_cores: vec![0; c.client_cores as usize],
            senders,
            pcpu_busy: vec![BusyTime::default(); c.pcpus as usize],
            window_start: 0,
            sched,
            switching: vec![false; c.pcpus as usize],
            waker: None,
            host_tick_ns: round_ns(NS_PER_S as f64 / host_hz),
            // At most the exit's length: the profile check refuses more (`profile::NOT_ABOVE`).
            io_signal_ns: round_ns(c.profile.exit.io_signal_ns.value),
            ipi_send_ns: round_ns(c.profile.exit.ipi_send_ns.value),
            vf_dma_ns: c.profile.sriov.as_ref().map_or(0, |s| round_ns(s.dma_ns.value)),
            nic_work: NicWork {
                irq_ns: round_ns(c.profile.host.nic_irq_ns.value),
                rx_frame_ns: round_ns(c.profile.host.nic_rx_frame_ns.value),
                rx_skb_ns: round_ns(c.profile.host.nic_rx_skb_ns.value),
                tx_clean_ns: round_ns(c.profile.host.nic_tx_clean_ns.value),
            },
            nic_irq_cpu: {
                // Default: every pCPU, from the last down (irqbalance favours the least loaded
                // cores; the host scheduler fills idle pCPUs from the first).
                // Under Xen the NIC is dom0's: its interrupts go to dom0's pCPUs.
                let every: Vec<u32> = if xen { dom0.clone() } else { (0..c.pcpus).rev().collect() };
                let cpus = s.host.nic_irq_cpus.as_deref().unwrap_or(&every);
                (0..dev_vm.len()).map(|d| cpus[d * cpus.len() / dev_vm.len()]).collect()
            },
            softirqs: hypervisor::softirq::SoftirqCpus::new(c.pcpus as usize),
            thread_names,
            trace: None,
            watchdog: watchdog::Watchdog::default(),
        };
        for (vi, vm) in s.vm.iter().enumerate() {
            let w = vm.workload.as_ref();
            host.watchdog.watch(vi, w.is_some(), w.and_then(watchdog::open_loop_period_ns));
        }
        // The clients' first events (before anything else, in device order).
        for dev in 0..host.devs.len() as u32 {
            host.app_start(dev, q);
        }
        q.at(crate::engine::secs_to_ns(s.warmup_s), Ev::Warmup);
        // Every vCPU thread and hog is runnable from the start; a vCPU enters guest mode when
        // its thread first runs, and the workload decides what it does first.
        // (A PMD polls from the start too.)
        let pmds = (0..host.io.threads.len() as u32).filter(|&t| host.io.starts_running(t)).map(|t| host.io_thread_tid(t));
        for t in (0..host.vcpus.len() as u32).chain(pmds.collect::<Vec<_>>()).chain(hogs) {
            host.sched.start(0, t);
        }
        host.cx(q).drain(0);
        for cpu in 0..c.pcpus {
            // Ticks of different pCPUs are staggered, as their local timers are.
            q.at(host.host_tick_ns * (cpu as Time + 1) / c.pcpus as Time, Ev::HostTick { cpu });
        }
        let tick = round_ns(NS_PER_S as f64 / host.profile.guest.tick_hz.value);
        for v in 0..host.vcpus.len() as u32 {
            q.at(tick / 2, Ev::Tick { vcpu: v });
        }
        host
    }

    /// Reset every metric at the end of warm-up.
    fn start_window(&mut self, now: Time) {
        self.window_start = now;
        for v in &mut self.vcpus {
            v.reset_metrics(now);
        }
        for t in &mut self.io.threads {
            t.reset_metrics(now);
        }
        for d in &mut self.devs {
            d.wire.reset_metrics(now);
            d.txq.reset_metrics();
            d.rxq.reset_metrics();
            d.napi.polls = 0;
            d.client.reset_metrics();
            d.tap_drops = 0;
            d.tx_moderation.delayed = 0;
            d.rx_moderation.delayed = 0;
        }
        for s in self.senders.iter_mut() {
            s.reset_metrics();
        }
        for vm in &mut self.vms {
            vm.routing.routed = [0; 3];
        }
        for b in &mut self.pcpu_busy {
            b.reset(now);
        }
        self.sched.reset_metrics(now);
        self.softirqs.reset_metrics();
    }

    /// The lower layers' context over this host for one event (`cx.rs`).
    pub(crate) fn cx<'a>(&'a mut self, q: &'a mut EventQueue<Ev>) -> cx::Cx<'a> {
        cx::Cx::new(self, q)
    }

    /// The pCPU whose thread handles event `ev` (the waker of anything it wakes).
    fn event_cpu(&self, ev: &Ev) -> Option<u32> {
        match *ev {
            Ev::GuestDone { vcpu, .. }
            | Ev::ExitDone { vcpu }
            | Ev::Tick { vcpu }
            | Ev::TimerFire { vcpu }
            | Ev::Ioeventfd { vcpu, .. } => Some(self.sched.thread_cpu(vcpu)),
            Ev::IoStep { thread } | Ev::IoPoll { thread } => Some(self.sched.thread_cpu(self.io_thread_tid(thread))),
            Ev::SchedIn { cpu, .. } | Ev::HostTick { cpu } | Ev::SchedTimer { cpu } => Some(cpu),
            _ => None,
        }
    }
}

impl Model for Host {
    type Event = Ev;

    fn handle(&mut self, now: Time, ev: Ev, q: &mut EventQueue<Ev>) {
        self.waker = self.event_cpu(&ev);
        match ev {
            Ev::Warmup => self.start_window(now),
            Ev::GuestDone { vcpu, epoch } => self.cx(q).guest_done(now, vcpu, epoch),
            Ev::ExitDone { vcpu } => self.cx(q).exit_done(now, vcpu),
            Ev::SchedIn { cpu, seq } => self.cx(q).sched_in(now, cpu, seq),
            Ev::HostTick { cpu } => self.cx(q).host_tick(now, cpu),
            Ev::TimerFire { vcpu } => self.cx(q).timer_fire(now, vcpu),
            Ev::WireDone { dev } => self.wire_done(now, dev, q),
            Ev::Tick { vcpu } => self.cx(q).tick(now, vcpu),
            Ev::HostRx { dev } => self.host_rx(now, dev, q),
            Ev::Client { dev, kind, x, a, b } => self.app_client_event(now, dev, workload::ClientEv { kind, x, a, b }, q),
            Ev::IrqDeadline { dev, rx } => self.irq_deadline(now, dev, rx, q),
            Ev::HaltPollEnd { vcpu } => self.cx(q).halt_poll_end(now, vcpu),
            Ev::NeedResched { vcpu } => self.cx(q).need_resched(now, vcpu),
            Ev::CallFunctionIpi { vcpu } => self.cx(q).raise_irq(now, vcpu, hw::lapic::Vector::CallFunction),
            Ev::ClientNicIrq { dev } => self.client_nic_irq(now, dev, q),
            Ev::Ioeventfd { dev, rx, .. } => self.cx(q).ioeventfd(now, dev, rx),
            Ev::VfIrq { dev } => {
                if self.devs[dev as usize].vf.as_mut().expect("a VF device").deadline(now) {
                    self.vf_interrupt(now, dev, q);
                }
            }
            Ev::IoStep { thread } => self.io_step(now, thread, q),
            Ev::IoWake { thread } => self.io_wake(now, thread, q),
            Ev::IoPoll { thread } => self.io_poll(now, thread, q),
            Ev::SchedTimer { cpu } => self.cx(q).sched_timer(now, cpu),
            Ev::ClientPort => self.client_port(now, q),
        }
        #[cfg(debug_assertions)]
        self.check_invariants();
    }
}

impl Host {
    /// A packet reached the client's NIC: received now if it interrupts at once, else held
    /// for the throttled interrupt (`client_nic_irq`).
    fn wire_done(&mut self, now: Time, dev: u32, q: &mut EventQueue<Ev>) {
        let (b, next) = self.port.tx.finish(now, dev);
        if let Some((next, t)) = next {
            q.at(t, Ev::WireDone { dev: next });
        }
        if self.devs[dev as usize].vf.is_some() {
            // The NIC writes back the VF's TX descriptor and fetches those that waited for room.
            self.devs[dev as usize].txq.put_used();
            self.vf_cause(now, dev, q);
            let d = &mut self.devs[dev as usize];
            vf::fetch(now, dev, &mut d.txq, &mut d.wire, &mut self.port.tx, q);
        }
        let d = &mut self.devs[dev as usize];
        d.wire.arrive(now, b);
        let wire_bytes = d.wire.wire_bytes(&b);
        if d.vf.is_none() {
            // The host NIC's TX ring completed it (a VF's frames are not the PF queue's); its
            // TX clean runs in the queue's softirq.
            d.port_itr.on_tx(wire_bytes, b.segs);
            let (cpu, ns) = (self.nic_irq_cpu[dev as usize], self.nic_work.tx_clean_ns);
            self.cx(q).host_irq_work(now, cpu, ns);
        }
        let d = &mut self.devs[dev as usize];
        match d.client.nic.receive(now, wire_bytes, b.segs) {
            nic_itr::Arrival::Now => self.app_at_client(now, dev, b, q),
            nic_itr::Arrival::Wait(t) => {
                d.client.held.push_back(b);
                q.at(t, Ev::ClientNicIrq { dev });
            }
            nic_itr::Arrival::Join => d.client.held.push_back(b),
        }
    }

    /// The client NIC's throttled interrupt: one NAPI poll receives every held frame, GRO
    /// merging the flow's segments, so a TCP receiver decides on one ACK for the batch (only
    /// the TCP stream's receiver defers; for every other workload the batch end is a no-op).
    fn client_nic_irq(&mut self, now: Time, dev: u32, q: &mut EventQueue<Ev>) {
        let c = &mut self.devs[dev as usize].client;
        if !c.nic.deadline(now) {
            return;
        }
        c.begin_batch();
        while let Some(b) = self.devs[dev as usize].client.held.pop_front() {
            self.app_at_client(now, dev, b, q);
        }
        if self.devs[dev as usize].client.end_batch() {
            self.app_client_batch_done(now, dev, q);
        }
    }

    /// Run `ns` of device `dev`'s client work on its client core from `now`; returns when done.
    pub(crate) fn client_cpu(&mut self, now: Time, dev: u32, ns: Time) -> Time {
        let n = self.client_cores.len();
            let core = &mut self.client_cores[dev as usize % n];
        self.devs[dev as usize].client.cpu(now, ns, core)
    }

    /// The client NIC's transmit side's event: a frame may be through (it reaches the host's
    /// port now, and its sender may resume), and the next may start.
    fn client_port(&mut self, now: Time, q: &mut EventQueue<Ev>) {
        let (done, next) = self.port.rx.fired(now);
        if let Some(t) = next {
            q.at(t, Ev::ClientPort);
        }
        let Some(dev) = done else { return };
        let (pkt, wire_bytes, woken) = self.devs[dev as usize].client.through();
        if let Some(e) = woken {
            q.at(now, Ev::Client { dev, kind: e.kind, x: e.x, a: e.a, b: e.b });
        }
        self.to_tap(now, dev, pkt, wire_bytes, q);
    }

    /// Frame `pkt` (`wire_bytes` on the wire) for device `dev` reached the host's port at
    /// `arrive`: schedule its arrival on the tap queue after the host's receive path (a VF's:
    /// in its RX ring after the NIC's L2 sort and DMA).
    fn to_tap(&mut self, arrive: Time, dev: u32, pkt: hw::rxq::RxPkt, wire_bytes: u32, q: &mut EventQueue<Ev>) {
        let d = &mut self.devs[dev as usize];
        if d.vf.is_some() {
            // No tap, no host path: the frame waits for the DMA in order.
            d.port_skbs.push_back(hw::gro::PortSkb { opened: false, irq: arrive, pkt });
            return q.at(arrive + self.vf_dma_ns, Ev::HostRx { dev });
        }
        // Its NIC's TX ring sent it, the host NIC's RX ring will receive it (both count it for
        // an adaptive ITR).
        d.client.nic.on_tx(wire_bytes, 1);
        let irqs = d.port_itr.irqs;
        let irq = d.port_itr.irq_for(arrive, wire_bytes);
        let opened = d.port_itr.irqs != irqs;
        if d.host_gro.joins(d.port_skbs.back(), irq, &pkt) {
            // GRO appends it to the skb its poll holds: it reaches the tap with that skb.
            return hw::gro::merge(&mut d.port_skbs.back_mut().expect("joined").pkt, &pkt);
        }
        d.port_skbs.push_back(hw::gro::PortSkb { opened, irq, pkt });
        let at = self.port.rx_path.deliver(irq, &mut d.tap_last);
        q.at(at, Ev::HostRx { dev });
    }

    /// A packet reached the device: on the tap socket, queue it (or drop it, queue full) and
    /// wake the back end for its RX handler; a VF's NIC writes it into the VF's RX ring (or
    /// drops it: no descriptor posted) and sets the queue's interrupt cause.
    fn host_rx(&mut self, now: Time, dev: u32, q: &mut EventQueue<Ev>) {
        let skb = self.devs[dev as usize].port_skbs.pop_front().expect("an skb on its way to the tap");
        if self.devs[dev as usize].vf.is_none() {
            // The host NIC's softirq received its frames (and its interrupt, if it opened one)
            // on the queue's pCPU; it reached the tap as that work ended (its latency is
            // nic_rx_ns). Frames GRO appended pay only their per-frame part.
            let w = self.nic_work;
            let merged = Time::from(skb.pkt.segs - 1);
            let ns = w.rx_frame_ns + merged * (w.rx_frame_ns - w.rx_skb_ns) + if skb.opened { w.irq_ns } else { 0 };
            let cpu = self.nic_irq_cpu[dev as usize];
            self.cx(q).host_irq_work(now, cpu, ns);
        }
        let mut pkt = skb.pkt;
        let d = &mut self.devs[dev as usize];
        // Only a TCP skb the host's GRO built can outgrow one buffer: the model's UDP datagram
        // (up to 64 KB) stands for its IP fragments, each a frame of one buffer.
        pkt.bufs = if d.host_gro.enabled { hw::gro::buffers(pkt.bytes, d.guest_tso4) } else { 1 };
        let segs = u64::from(pkt.segs);
        d.rx_arrived_life += segs;
        let room = match d.vf {
            Some(_) => d.rxq.posted > 0,
            None => d.rx_sock.len() < workload::net::TAP_QUEUE_PACKETS,
        };
        if !room {
            d.tap_drops += segs * u64::from(pkt.born >= self.window_start);
            d.tap_drops_life += segs;
            return self.app_tap_drop(now, dev, pkt, q);
        }
        if let Some(vf) = d.vf.as_mut() {
            vf.written_back(now, pkt.segs.into(), pkt.bytes.into());
            d.rxq.take(&pkt);
            d.rxq.put_used(pkt);
            return self.vf_cause(now, dev, q);
        }
        if d.rx_sock.is_empty() {
            d.rxq.head_bufs = u32::from(pkt.bufs);
        }
        d.rx_sock.push_back(pkt);
        self.notify_backend(now, dev, io::queues::Notice::RxPacket, q);
    }

    /// A write-back of VF device `dev` set its queue's interrupt cause (`hw/vf.rs`).
    fn vf_cause(&mut self, now: Time, dev: u32, q: &mut EventQueue<Ev>) {
        if self.devs[dev as usize].vf.as_mut().expect("a VF device").cause(now, dev, q) {
            self.vf_interrupt(now, dev, q);
        }
    }

    /// The vCPU (host-wide) VM `vm`'s router sends `req` to, told the vCPUs' credit priorities
    /// first (Xen credit only); a boost it asks for is carried out before the interrupt is raised,
    /// so that the wake-up it causes keeps the `SMP_BOOST` (`routing.rs`).
    pub(crate) fn route_irq(&mut self, now: Time, vm: usize, req: eventpath_policy::routing::RouteRequest, q: &mut EventQueue<Ev>) -> u32 {
        let sched = &self.sched;
        let (target, boost, rebind) = self.vms[vm].routing.decide(req, |v| sched.credit_priority(v));
        if rebind {
            self.vcpus[target as usize].rebind_owed = true;
        }
        if boost {
            use hypervisor::threads::Threads;
            self.cx(q).smp_boost(now, target);
        }
        target
    }

    /// VF device `dev`'s MSI-X message: the vector masks itself and goes to the vCPU the VM's
    /// routing picks, as an assigned interrupt.
    /// (A VM's VF `i` has its own vector, whose affinity is local vCPU `i mod vcpus`.)
    fn vf_interrupt(&mut self, now: Time, dev: u32, q: &mut EventQueue<Ev>) {
        let d = &mut self.devs[dev as usize];
        d.vf.as_mut().expect("a VF device").fire(now);
        d.rxq.interrupts += 1;
        let (vm, home) = (d.vm as usize, d.home);
        let req = eventpath_policy::routing::RouteRequest { dest: home as usize, ..hypervisor::routing::IrqRouting::device_request(dev, hw::lapic::Vector::Vf) };
        let target = self.route_irq(now, vm, req, q);
        self.devs[dev as usize].irq_to = Some(target);
        self.cx(q).raise_irq(now, target, hw::lapic::Vector::Vf);
    }

    // The VMs' applications, each called through its guest context (`AppCtx`), dispatched
    // statically by kind (`with_app!`).

    // (`senders` holds one application per device: a VM's, or with several VFs one receiver
    // per VF; `app_of` is a VM's first, which answers for what is the VM's.)

    /// VM `vm`'s application (its first device's).
    pub(crate) fn app_of(&self, vm: usize) -> &Sender {
        &self.senders[self.vms[vm].dev as usize]
    }

    /// The vCPU is free: what does the workload do next? (Of a VM's several receivers, those
    /// homed on `v`, local `i mod vcpus`, take turns: the first after the one that ran last
    /// with work to do, else that one, which idles.)
    pub(crate) fn workload_next(&mut self, now: Time, v: u32, q: &mut EventQueue<Ev>) {
        let vm = self.vcpus[v as usize].vm as usize;
        if self.vms[vm].lookbusy.is_some() {
            let (seen, local) = self.lookbusy_seen(vm, v);
            let lb = self.vms[vm].lookbusy.as_mut().expect("checked above");
            if let Some(cost) = lb.next(now, local, seen) {
                return self.cx(q).run_task(now, v, hypervisor::vcpu::Task::Lookbusy, cost);
            }
        }
        let (first, n) = (self.vms[vm].dev, self.vms[vm].ndevs);
        let local = v - self.vms[vm].vcpus[0];
        let mut dev = first;
        if n > 1 {
            if local >= n {
                return self.cx(q).idle(now, v, None);
            }
            // The devices homed here: first + local + j·vcpus, j < m.
            let vcpus = self.vms[vm].vcpus.len() as u32;
            let m = (n - local).div_ceil(vcpus);
            let last = (self.vms[vm].app_turn[local as usize] - first - local) / vcpus;
            dev = first + local + last * vcpus;
            for k in 1..=m {
                let d = first + local + (last + k) % m * vcpus;
                if self.senders[d as usize].ready() {
                    dev = d;
                    break;
                }
            }
            self.vms[vm].app_turn[local as usize] = dev;
        } else if local != 0 && !self.senders[first as usize].on_every_vcpu() {
            return self.cx(q).idle(now, v, None);
        }
        with_app!(self.senders[dev as usize].kind(), A => A::next(&mut AppCtx::<A>::new(self, q, now, dev), v))
    }

    /// The counters lookbusy's spinner on `v` of VM `vm` reads, and `v`'s local index.
    fn lookbusy_seen(&self, vm: usize, v: u32) -> (guest::lookbusy::Seen, u32) {
        let vc = &self.vcpus[v as usize];
        let vm_busy = self.vms[vm].vcpus.iter().map(|&u| self.vcpus[u as usize].busy_ns_life()).sum();
        let seen = guest::lookbusy::Seen { app: vc.app_ns_life(), cpu: vc.lookbusy_cpu_life, work: vc.lookbusy_work_life, vm_busy };
        (seen, v - self.vms[vm].vcpus[0])
    }

    /// `v`'s application has nothing to run: its VM's lookbusy spinner runs, or sleeps.
    pub(crate) fn lookbusy_idle(&mut self, now: Time, v: u32) -> hypervisor::vcpu::IdleThread {
        use guest::lookbusy::IdleRun;
        use hypervisor::vcpu::IdleThread;
        let vm = self.vcpus[v as usize].vm as usize;
        if self.vms[vm].lookbusy.is_none() {
            return IdleThread::None;
        }
        let (seen, local) = self.lookbusy_seen(vm, v);
        match self.vms[vm].lookbusy.as_mut().expect("checked above").idle(now, local, seen) {
            IdleRun::Run(cost) => IdleThread::Run(cost),
            IdleRun::Sleep(t) => IdleThread::Sleep(t),
        }
    }

    /// A workload's step finished on vCPU `v`.
    pub(crate) fn app_step_done(&mut self, now: Time, v: u32, s: Step, q: &mut EventQueue<Ev>) {
        self.vcpus[v as usize].app_step_ended(now);
        with_app!(self.senders[s.dev as usize].kind(), A => A::step_done(&mut AppCtx::<A>::new(self, q, now, s.dev), v, s))
    }

    /// The name of step `s` in a timeline.
    pub(crate) fn app_step_name(&self, s: Step) -> &'static str {
        with_app!(self.senders[s.dev as usize].kind(), A => A::step_name(s))
    }

    /// NAPI on vCPU `v` received `pkt` of device `dev` for its application; returns whether a
    /// step started.
    pub(crate) fn app_deliver(&mut self, now: Time, v: u32, dev: u32, pkt: hw::rxq::RxPkt, q: &mut EventQueue<Ev>) -> bool {
        with_app!(self.senders[dev as usize].kind(), A => A::deliver(&mut AppCtx::<A>::new(self, q, now, dev), v, pkt))
    }

    /// A frame of device `dev` reached the client.
    pub(crate) fn app_at_client(&mut self, now: Time, dev: u32, b: hw::virtq::Buf, q: &mut EventQueue<Ev>) {
        with_app!(self.senders[dev as usize].kind(), A => A::at_client(&mut AppCtx::<A>::new(self, q, now, dev), b))
    }

    /// The client NIC's poll of device `dev`'s frames ended a batch.
    fn app_client_batch_done(&mut self, now: Time, dev: u32, q: &mut EventQueue<Ev>) {
        with_app!(self.senders[dev as usize].kind(), A => A::client_batch_done(&mut AppCtx::<A>::new(self, q, now, dev)))
    }

    /// Device `dev`'s client event.
    fn app_client_event(&mut self, now: Time, dev: u32, e: ClientEv, q: &mut EventQueue<Ev>) {
        with_app!(self.senders[dev as usize].kind(), A => A::client_event(&mut AppCtx::<A>::new(self, q, now, dev), e))
    }

    /// Device `dev` used TX buffer `b`.
    pub(crate) fn app_tx_used(&mut self, now: Time, dev: u32, b: hw::virtq::Buf, q: &mut EventQueue<Ev>) {
        with_app!(self.senders[dev as usize].kind(), A => A::tx_used(&mut AppCtx::<A>::new(self, q, now, dev), b))
    }

    /// A packet device `dev`'s client sent was dropped at the tap queue.
    pub(crate) fn app_tap_drop(&mut self, now: Time, dev: u32, pkt: hw::rxq::RxPkt, q: &mut EventQueue<Ev>) {
        with_app!(self.senders[dev as usize].kind(), A => A::tap_drop(&mut AppCtx::<A>::new(self, q, now, dev), pkt))
    }

    /// The run starts: device `dev`'s client's first events.
    fn app_start(&mut self, dev: u32, q: &mut EventQueue<Ev>) {
        with_app!(self.senders[dev as usize].kind(), A => A::start(&mut AppCtx::<A>::new(self, q, 0, dev)))
    }

    /// VM `vm`'s TX interrupt handler ran on vCPU `v` (a virtio VM: one device).
    pub(crate) fn app_tx_interrupt(&mut self, _now: Time, v: u32, vm: usize) {
        let local = v - self.vms[vm].vcpus[0];
        self.senders[self.vms[vm].dev as usize].tx_interrupt(local)
    }

    /// VM `vm`'s handler of a call-function IPI ran its function on vCPU `v`.
    pub(crate) fn app_ipi_handled(&mut self, now: Time, v: u32, vm: usize, q: &mut EventQueue<Ev>) {
        let (local, dev) = (v - self.vms[vm].vcpus[0], self.vms[vm].dev);
        with_app!(self.senders[dev as usize].kind(), A => A::ipi_handled(&mut AppCtx::<A>::new(self, q, now, dev), local))
    }

    /// VM `vm`'s handler of an `Msi` vector ran on vCPU `v`.
    pub(crate) fn app_msi_handled(&mut self, now: Time, v: u32, vm: usize) {
        let local = v - self.vms[vm].vcpus[0];
        self.senders[self.vms[vm].dev as usize].msi_handled(now, local, self.window_start)
    }
}

/// Conservation ledger of one VM and the host (DESIGN §6), from lifetime counters.
///
/// "Per VM" lines are per device's flow: a VM's, or each of its VFs' (`[vm.net] vfs`, whose
/// devices follow one another: index = the VM's first device + the VF's index), so that the
/// identities close per device. Without several VFs, device `i` is VM `i`.
#[derive(Debug, Clone, Default)]
pub struct Conservation {
    /// Per VM: packets the guest handed to its driver.
    pub sent: Vec<u64>,
    /// Per VM: packets delivered to the client.
    pub delivered: Vec<u64>,
    /// Per VM: packets dropped (UDP frames at the host port's full qdisc; the guest's TX path
    /// stops the queue instead of dropping).
    pub dropped: Vec<u64>,
    /// Per VM: packets in the qdisc backlog, the TX ring, vhost's hands, or on the wire.
    pub in_flight: Vec<u64>,
    /// Per vCPU: interrupts raised.
    pub irq_raised: Vec<u64>,
    /// Per vCPU: interrupts accepted by the guest (handled or being handled).
    pub irq_handled: Vec<u64>,
    /// Per vCPU: interrupts coalesced into a pending one.
    pub irq_coalesced: Vec<u64>,
    /// Per vCPU: interrupts pending (IRR + PIR).
    pub irq_pending: Vec<u64>,
    /// Per device: packets (ACKs or datagrams) that reached the host from the client.
    pub rx_arrived: Vec<u64>,
    /// Per device: of those, dropped at the tap queue.
    pub rx_tap_dropped: Vec<u64>,
    /// Per device: of those, on the tap socket, in vhost's hands, or in the used ring.
    pub rx_queued: Vec<u64>,
    /// Per device: of those, received by the guest's NAPI.
    pub rx_polled: Vec<u64>,
    /// Per device: packets the client sent that are still on the reverse link.
    pub rx_on_link: Vec<u64>,
    /// Per VM: of `in_flight`, packets on the shared TX link.
    pub tx_on_link: Vec<u64>,
    /// Host: packets handed to the shared TX link (= Σ delivered + Σ tx_on_link).
    pub port_tx_packets: u64,
    /// Host: packets handed to the shared RX link (= Σ rx_arrived + Σ rx_on_link).
    pub port_rx_packets: u64,
    /// Host: hBalance `SMP_BOOST`s the scheduler carried out in the window (a debug counter:
    /// always 0 under CFS, which carries none out).
    pub smp_boosts: u64,
    /// Per VM (UDP receive): datagrams the client sent.
    pub udp_rx_sent: Vec<u64>,
    /// Per VM (UDP receive): datagrams the application received.
    pub udp_rx_received: Vec<u64>,
    /// Per VM (UDP receive): datagrams dropped at the socket.
    pub udp_rx_sock_dropped: Vec<u64>,
    /// Per VM (UDP receive): datagrams waiting in the socket.
    pub udp_rx_in_socket: Vec<u64>,
    /// Per VM (TCP request/response): requests the client issued.
    pub rr_issued: Vec<u64>,
    /// Per VM (TCP request/response): transactions completed at the client.
    pub rr_completed: Vec<u64>,
    /// Per VM (TCP request/response): the client's concurrency (issued + next_pending −
    /// completed is one transaction in flight per connection, so it equals this).
    pub rr_concurrency: Vec<u64>,
    /// Per VM (TCP request/response): completed connections whose next request waits for the
    /// client's core.
    pub rr_next_pending: Vec<u64>,
    /// Per VM (TCP receive stream): segments the client sent (= packets that reached the host
    /// + those on the reverse link, less the guest-bound ACK traffic, which is none).
    pub tcp_rx_sent: Vec<u64>,
    /// Per vCPU (host-wide): requests a TCP server worker served there (lifetime).
    pub rr_served_by_vcpu: Vec<u64>,
    /// Per VM: the identities its workload vouches for (`App::ledger`), checked with the
    /// host's.
    pub workload_balances: Vec<Vec<workload::app::Balance>>,
    /// Per pCPU: busy ns in the window.
    pub pcpu_busy_ns: Vec<u64>,
    /// Per pCPU: run time of the threads (vCPUs, vhost, hogs) on it, in the window.
    pub pcpu_thread_ns: Vec<u64>,
    /// Window length (ns).
    pub window_ns: u64,
    /// Per host thread: its longest single wait for a pCPU over the run (ns).
    pub thread_longest_wait_ns: Vec<u64>,
    /// The longest CFS may keep a runnable thread waiting, when every thread weighs the same
    /// (None: weights differ); a longer wait is starvation.
    pub starvation_bound_ns: Option<u64>,
}

impl Host {
    /// The conservation ledger at time `now`.
    pub fn conservation(&self, now: Time) -> Conservation {
        let mut c = Conservation { window_ns: now - self.window_start, ..Default::default() };
        for (i, d) in self.devs.iter().enumerate() {
            let vm = &self.vms[d.vm as usize];
            c.sent.push(self.senders[i].sent_life());
            c.delivered.push(d.wire.delivered_life);
            c.dropped.push(d.wire.dropped_life);
            // A VF's descriptors in the NIC's hands are its frames on the link.
            let in_device = if d.vf.is_some() { 0 } else { d.txq.in_device() };
            let on_link = self.port.tx.in_flight(i as u32) as u64;
            c.in_flight.push(d.qdisc.len() as u64 + d.txq.pending() as u64 + in_device + on_link);
            c.tx_on_link.push(on_link);
            c.rx_arrived.push(d.rx_arrived_life);
            c.rx_tap_dropped.push(d.tap_drops_life);
            // Frames (a GRO skb counts its own): on the tap socket and in the ring. Those on
            // their way to the tap are still the client's, on the reverse link.
            let in_sock = d.rx_sock.iter().map(|p| u64::from(p.segs)).sum::<u64>();
            c.rx_queued.push(in_sock + d.rxq.queued_segs());
            let on_link = d.client.on_link() as u64 + d.port_skbs.iter().map(|s| u64::from(s.pkt.segs)).sum::<u64>();
            c.rx_on_link.push(on_link);
            let dl = workload::DevLedger {
                rx_arrived: d.rx_arrived_life,
                rx_tap_dropped: d.tap_drops_life,
                // Frames NAPI took off the ring that an MTVD thread has not yet taken up.
                rx_queued: *c.rx_queued.last().expect("pushed above") + d.mtvd.as_ref().map_or(0, |m| m.queued_segs()),
                rx_on_link: on_link,
                rx_client_dropped: d.client.qdisc_drops_life,
            };
            let l = self.senders[i].ledger(&dl);
            c.udp_rx_sent.push(l.udp_rx[0]);
            c.udp_rx_received.push(l.udp_rx[1]);
            c.udp_rx_sock_dropped.push(l.udp_rx[2]);
            c.udp_rx_in_socket.push(l.udp_rx[3]);
            c.rr_issued.push(l.rr[0]);
            c.rr_completed.push(l.rr[1]);
            c.rr_concurrency.push(l.rr[2]);
            c.rr_next_pending.push(l.rr[3]);
            // Per vCPU: a VM's once (from its first device's application).
            match l.served_by_vcpu {
                Some(s) => c.rr_served_by_vcpu.extend(s),
                None if i as u32 == vm.dev => c.rr_served_by_vcpu.extend(vm.vcpus.iter().map(|_| 0)),
                None => {}
            }
            c.tcp_rx_sent.push(l.tcp_rx_sent);
            c.workload_balances.push(l.balances);
        }
        c.port_tx_packets = self.port.tx.packets_life;
        c.port_rx_packets = self.port.rx.packets_life;
        c.smp_boosts = self.sched.smp_boosts();
        for v in &self.vcpus {
            c.irq_raised.push(v.ledger.raised);
            c.irq_handled.push(v.ledger.accepted);
            c.irq_coalesced.push(v.ledger.coalesced);
            c.irq_pending.push(v.irqs_pending());
        }
        c.rx_polled = self.devs.iter().map(|d| d.napi.received_life).collect();
        c.pcpu_busy_ns = self.pcpu_busy.iter().map(|b| b.busy_ns(now)).collect();
        c.pcpu_thread_ns = (0..self.pcpu_busy.len() as u32).map(|p| self.sched.busy_ns(now, p)).collect();
        c.thread_longest_wait_ns = (0..self.thread_names.len() as u32).map(|t| self.sched.longest_wait(now, t)).collect();
        c.starvation_bound_ns = self.sched.starvation_bound_ns(self.host_tick_ns);
        c
    }
}

#[cfg(test)]
mod tests {
    /// The event queue's hot path moves `Entry { key: u128, ev: Ev }`: an event of 16 bytes
    /// keeps each entry at 32 (one more byte makes it 48 and the heap measurably slower).
    #[test]
    fn an_event_fits_in_sixteen_bytes() {
        assert!(std::mem::size_of::<super::Ev>() <= 16, "{}", std::mem::size_of::<super::Ev>());
    }
}
