//! Building the model from a checked scenario (`Host::build`): its vCPUs and their threads,
//! its devices and their back ends, the scheduler, the port, the clients, and the first
//! events. The one model file that reads the scenario (`scenario::Checked`) and the run's
//! external policies (`run::External`): every layer is handed its own configuration.

use crate::engine::Schedule;
use crate::engine::{round_ns, EventQueue, Time, NS_PER_S};
use crate::metrics::BusyTime;
use crate::model::hw::virtq::Virtq;
use crate::model::hw::wire::{Port, Wire};
use crate::model::hw::device::Device;
use crate::model::hw::{nic_itr, rxq::RxRing, vf};
use crate::model::hypervisor::sched::{self, CpuMask};
use crate::model::hypervisor::ops::Threads;
use crate::model::hypervisor::vcpu::Vcpu;
use crate::model::workload::client::Client;
use crate::model::workload::Sender;
use crate::model::{guest, hw, hypervisor, io, watchdog};
use crate::model::event::Ev;
use crate::model::host::Host;
use crate::model::host::NetDev;
use crate::model::hw::host_nic::NicWork;
use crate::model::host::VmState;
use crate::scenario::{Checked, Workload};
use eventpath_policy::moderation::ModerationConfig;
use std::collections::VecDeque;

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
        let mut routings = Vec::new();
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
            routings.push(hypervisor::routing::IrqRouting::new(router, ids[0], vm.vcpus));
            let dev = vms.iter().map(|v: &VmState| v.ndevs).sum::<u32>();
            let app_turn = (0..vm.vcpus).map(|l| dev + l.min(vm.devices() - 1)).collect();
            let lookbusy = vm.lookbusy.as_ref().map(|l| guest::lookbusy::Lookbusy::new(l, vm.vcpus, &c.profile));
            vms.push(VmState { name: vm.name.clone(), vcpus: ids, dev, ndevs: vm.devices(), app_turn, lookbusy });
        }
        let dev_vm: Vec<u32> = vms.iter().enumerate().flat_map(|(vi, v)| std::iter::repeat_n(vi as u32, v.ndevs as usize)).collect();
        for (dev, &vi) in dev_vm.iter().enumerate() {
            let (vi, home) = (vi as usize, dev as u32 - vms[vi as usize].dev);
            let vm = &s.vm[vi];
            let w = vm.workload.as_ref();
            let tcp = w.is_some_and(Workload::is_tcp);
            let off = vm.net.offloads();
            let virtio = vm.net.kind.has_backend();
            let disk = w.is_some_and(Workload::is_block);
            let nvme = disk && vm.disk.kind == crate::scenario::DiskKind::Nvme;
            let queue_size = match (&c.profile.blk, &c.profile.nvme) {
                (_, Some(n)) if nvme => n.queue_depth.value as u32,
                (Some(b), _) if disk => b.queue_size.value as u32,
                _ => vm.net.queue_size,
            };
            // GRO's 64 KB, and no more than the guest's ring holds as one packet.
            let gro_max = (c.profile.nic.gso_max_size_bytes.value as u32)
                .min(vm.net.queue_size * hw::gro::MERGEABLE_BUF_BYTES);
            devs.push(NetDev {
                vm: vi as u32,
                home,
                txq: Virtq::new(queue_size, vm.net.suppression()),
                // A VF's scheme drives its EITR (`hw/vf.rs`), not a virtqueue's interrupts.
                irqs: io::device::DevIrqs::new(if virtio { &vm.net.moderation } else { &ModerationConfig::None }),
                rxq: RxRing::new(vm.net.queue_size, vm.net.suppression()),
                rx_sock: VecDeque::new(),
                rx_arrived_life: 0,
                tap_drops: 0,
                tap_drops_life: 0,
                guest: guest::netif::NetIf::new(off.gro, vm.net.mtvd.then(|| guest::mtvd::Mtvd::new(vm.vcpus as usize))),
                wire: Wire::new(&c.profile, dev as u32, tcp),
                client: Client::new(&c.profile),
                nic: hw::host_nic::HostNicRx::new(
                    nic_itr::RxItr::for_nic(
                        c.profile.host.nic_itr.value,
                        c.profile.host.nic_rx_itr_ns.value,
                        c.profile.nic.wire_overhead_bytes.value as u32,
                    ),
                    hw::gro::HostGro { enabled: tcp && virtio && off.guest_tso4 && off.host_gro, max_bytes: gro_max },
                    virtio && off.guest_tso4,
                ),
                device: match vm.net.kind {
                    crate::scenario::NetKind::SriovVf => {
                        let sr = c.profile.sriov.as_ref().expect("a checked VF has a profile with [sriov]");
                        Device::SriovVf(vf::Vf::new(vm.net.itr_us, &vm.net.moderation, sr.vf_itr_ns.value, sr.vf_itr_max_ns.value, tcp))
                    }
                    crate::scenario::NetKind::Vdpa => Device::Vdpa(hw::device::Vdpa::new(tcp)),
                    _ if nvme => {
                        let n = c.profile.nvme.as_ref().expect("a checked NVMe disk has a profile with [nvme]");
                        Device::Nvme(hw::nvme::Nvme::new(n, s.seed, &vm.name, home))
                    }
                    _ if disk => Device::VirtioBlk,
                    kind => Device::backed(kind),
                },
            });
            use crate::model::guest::guest_sched::{Beside, Placement};
            let beside = match (vm.guest_cpu_burn, vm.lookbusy.is_some()) {
                (true, _) => Beside::Burn,
                (false, true) => Beside::Lookbusy,
                _ => Beside::Nothing,
            };
            let at = Placement { beside, one_device: vm.devices() == 1 };
            let queue = (home, vm.devices());
            let sender = Sender::new(w, vm.vcpus, at, &c.profile, s.seed, &vm.name, vm.net.offloads(), queue);
            senders.push(sender);
        }
        // The back-end threads come after the vCPU threads.
        // (Under Xen the back ends are dom0's: each VM's pinned to one of dom0's pCPUs in turn.)
        let vm_io: Vec<io::VmIo> = s
            .vm
            .iter()
            .enumerate()
            .map(|(vi, vm)| io::VmIo {
                name: &vm.name,
                kind: vm.net.kind,
                offloads: vm.net.offloads(),
                vhost_pin: vm.net.vhost_pin,
                busyloop_timeout_us: vm.net.busyloop_timeout_us,
                request_stream: matches!(vm.workload, Some(Workload::RequestStream { .. })),
                // Linux's default policy: the node of the CPU that first touches a page, the
                // booting vCPU 0's (where the host scheduler placed its thread).
                memory_node: vm.memory_node.unwrap_or_else(|| c.profile.socket_of(sched.thread_cpu(vms[vi].vcpus[0]))),
                disk: vm.workload.as_ref().is_some_and(Workload::is_block) && vm.disk.kind == crate::scenario::DiskKind::VirtioBlk,
                backed: vm.net.kind.has_backend() && !(vm.workload.as_ref().is_some_and(Workload::is_block) && vm.disk.kind == crate::scenario::DiskKind::Nvme),
            })
            .collect();
        let io = io::Backends::build(&s.host.io, &c.profile, &vm_io, &dev_vm, &dom0, &mut |name, pin| {
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
        // Then each pCPU's kernel thread (`hypervisor/kthread.rs`), pinned to it.
        let linux = !xen && s.host.scheduler == crate::scenario::HostScheduler::Cfs;
        let housekeeping = hypervisor::kthread::Housekeeping::of(&c.profile, linux);
        if housekeeping.kthreads() {
            for cpu in 0..c.pcpus {
                let name = format!("kworker/{cpu}");
                sched.add(0, CpuMask::bit(cpu), rng(&name));
                thread_names.push(name);
            }
        }
        let host_hz = c.profile.sched.tick_hz.value;
        let (io_threads, exitless_io) = (io.threads.len() as u32, io.exitless);
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
            switch_in: vec![crate::engine::Timer::default(); c.pcpus as usize],
            waker: None,
            cosched: c.scenario.vm.iter().map(|vm| hypervisor::cosched::CoSched::new(vm.vcpus)).collect(),
            routing: routings,
            hv: hypervisor::ctx::Setup {
                host_tick_ns: round_ns(NS_PER_S as f64 / host_hz),
                ipi_send_ns: round_ns(c.profile.exit.ipi_send_ns.value),
                io_threads,
                hogs: hogs.len() as u32,
                housekeeping,
                exitless_io,
            },
            // At most the exit's length: the profile check refuses more (`profile::NOT_ABOVE`).
            io_signal_ns: round_ns(c.profile.exit.io_signal_ns.value),
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
        // (So is a back-end thread whose policy runs from the start.)
        // A vCPU thread starts at its VM's boot offset plus its own offset (`[housekeeping]`;
        // each draw from its own stream, so a VM added changes no other's): so each pCPU's
        // runqueue takes its VMs in an order, and at a point of its round, of its own.
        let running: Vec<u32> = (0..host.io.threads.len() as u32).filter(|&t| host.io.starts_running(t)).map(|t| host.io_thread_tid(t)).collect();
        // Both spans together fall in the first half of the warm-up (scaled down where they
        // would not): the paper's VMs started long before its measurement, so none may start
        // inside the window. (Under either host scheduler: how the VMs were started is the
        // host's. A late start is a wake-up under Xen's credit, `domain_unpause`, and a new
        // task's placement under CFS, `wake_up_new_task`.)
        let half = crate::engine::secs_to_ns(s.warmup_s) as f64 / 2.0;
        let hk = c.profile.housekeeping.as_ref();
        let (spread, gap) = hk.map_or((0.0, 0.0), |h| {
            let (a, b) = (h.vm_boot_spread_ns.value, h.vcpu_start_spread_ns.value);
            let fit = if a + b > half { half / (a + b) } else { 1.0 };
            (a * fit, b * fit)
        });
        for (vi, vm) in s.vm.iter().enumerate() {
            let draw = |name: String| crate::engine::Rng::for_component(s.seed, &name).uniform();
            let boot = round_ns(draw(format!("boot:{}", vm.name)) * spread);
            for (j, &t) in host.vms[vi].vcpus.iter().enumerate() {
                let at = boot + round_ns(draw(format!("boot:{}/{j}", vm.name)) * gap);
                if at == 0 {
                    host.sched.start(0, t);
                } else {
                    q.schedule(at, hypervisor::Event::ThreadStart { tid: t });
                }
            }
        }
        for t in running.into_iter().chain(hogs) {
            host.sched.start(0, t);
        }
        host.cx(q).drain(0);
        // Ticks of different pCPUs aligned (Linux since 2.6.37 unless skew_tick=1) or spread
        // over half a tick (`tick_setup_sched_timer`'s skew); a host without housekeeping (or
        // without `tick_skew`: a Xen host's profile), or not scheduled by Linux (Xen's timers
        // are its own), keeps a spread over a whole tick.
        let skew = c.profile.housekeeping.as_ref().filter(|_| linux).and_then(|h| h.tick_skew.as_ref()).map(|k| k.value != 0.0);
        for cpu in 0..c.pcpus {
            let t = host.hv.host_tick_ns;
            let at = match skew {
                Some(false) => t,
                Some(true) => t + t / 2 * cpu as Time / c.pcpus as Time,
                None => t * (cpu as Time + 1) / c.pcpus as Time,
            };
            q.schedule(at, hypervisor::Event::HostTick { cpu });
        }
        // Each kernel thread's timer at its own phase within its period.
        if housekeeping.kthreads() {
            for cpu in 0..c.pcpus {
                let phase = crate::engine::Rng::for_component(s.seed, &format!("kworker/{cpu}")).below(housekeeping.kthread_interval_ns);
                q.schedule(phase.max(1), hypervisor::Event::KthreadWake { cpu });
            }
        }
        let tick = round_ns(NS_PER_S as f64 / host.profile.guest.tick_hz.value);
        for v in 0..host.vcpus.len() as u32 {
            q.schedule(tick / 2, hypervisor::Event::Tick { vcpu: v });
        }
        host
    }

}
