//! Request handling (DESIGN §2's first seam): the host threads that serve the virtio queues.
//!
//! Every back end runs on one I/O-thread mechanism (`thread.rs`) and differs only in its
//! policy — the adapter that drives its `eventpath_policy` state machines:
//!
//! | `[host.io] handling` | threads | policy |
//! |---|---|---|
//! | `vhost` (default) | one per device, woken by kicks (`vhost.rs`) | `vhost::VhostHandler` (+ busy polling) |
//! | `es2` | joint threads of `combining_level` devices (`es2.rs`) | `es2::{JointThread, PerceptiveHandler, OptimisticTx}` |
//! | `elvis` | one per I/O core (`elvis.rs`) | `elvis::ElvisScheduler` |
//! | `pmd` | one per dedicated core, polling in bursts (`pmd.rs`) | `pmd::PmdThread` |
//!
//! A back end sees only the devices' queues (`queues.rs`: [`queues::DevRings`], the items it
//! takes and their costs) and a few observations in its [`View`]; it returns what its thread
//! does next ([`thread::Next`]) and the items it finished, which the model applies (the used
//! ring, the wire, the interrupt). The seam is `seam.rs`; the registry of back ends
//! `policy.rs`. Adding a back end: its policy in `crates/policy`; its file here — the adapter
//! implementing [`seam::Backend`] and its `threads` (which devices each of its threads serves)
//! — registered by one line each in `policy.rs`'s `Policy`, `each!` and `shared_threads` (and
//! its `mod` line here); its `Handling` variant and keys in `config/io.rs`; a test; an example.
//! Nothing under `guest/` or in the model root names a back end (`tests/backends.rs`).

pub(crate) mod device;
mod elvis;
mod es2;
pub mod es2_driver;
mod policy;
pub(crate) mod seam;
pub(crate) mod event;
pub(crate) use event::Event;
pub(crate) mod moderation;
mod pmd;
pub(crate) mod queues;
pub(crate) mod thread;
mod vhost;

use crate::config::{Handling, IoHandling, NetKind, Offload};
use crate::profile::Profile;
use policy::{shared_threads, Policy};
use queues::Costs;
use seam::Backend;
pub(crate) use seam::View;
pub(crate) use thread::{IoThread, Next, Signal};

/// The back-end threads of a host and which thread serves each device.
pub(crate) struct Backends {
    pub threads: Vec<IoThread>,
    /// Per device: (thread, index among its devices); None: no back-end thread serves it (an
    /// SR-IOV VF).
    by_dev: Vec<Option<(u32, u32)>>,
    /// The back end interrupts the guest as an assigned device would (ELVIS's I/O cores with
    /// ELI, ELVIS §2.2): virtio vectors are `AssignedDevice` to the delivery policy.
    pub exitless: bool,
    pub costs: Costs,
    /// Each device's VM.
    pub dev_vm: Vec<u32>,
    /// Each thread's VM where it is one VM's own (a vhost worker), else None (a shared one).
    thread_vm: Vec<Option<u32>>,
}

/// What the back ends need to know of a VM (the build's view of its scenario entry).
pub(crate) struct VmIo<'a> {
    pub name: &'a str,
    pub kind: NetKind,
    pub offloads: Offload,
    pub vhost_pin: Option<u32>,
    pub busyloop_timeout_us: u32,
    /// Its workload is the testbed's request stream (its guest answers each completion).
    pub request_stream: bool,
    /// The node its memory is on (`vm.memory_node` or first touch).
    pub memory_node: u32,
    /// Its device is a virtio-blk disk (a block workload's).
    pub disk: bool,
    /// Its devices are served by a back end (not an SR-IOV VF, a vDPA device or an assigned
    /// NVMe-like disk).
    pub backed: bool,
}

impl Backends {
    /// The back end `io` asks for, with the profile's costs, for the VMs `vms`. `add(name, pin)` registers each thread with
    /// the host scheduler, in order; a thread whose policy runs from the start (a PMD's) is started
    /// ([`Self::starts_running`]).
    /// `dev_vm` gives each device's VM (a VM's devices are consecutive; only a VM of several
    /// VFs or of several virtio-net queue pairs has more than one, and a VF has no back end).
    pub fn build(io: &IoHandling, profile: &Profile, vms: &[VmIo], dev_vm: &[u32], dom0: &[u32], add: &mut dyn FnMut(&str, Option<u32>)) -> Backends {
        let vhost = vhost::config(profile, 0);
        let mut threads = Vec::new();
        let mut by_dev = vec![None; dev_vm.len()];
        // Each VM's first device (a virtio VM's only one).
        let first: Vec<u32> = (0..vms.len() as u32).map(|vm| dev_vm.iter().position(|&v| v == vm).expect("a device per VM") as u32).collect();
        let offloads = || dev_vm.iter().map(|&vm| vms[vm as usize].offloads);
        let nodes = || dev_vm.iter().map(|&vm| vms[vm as usize].memory_node).collect();
        // Per device, whether it is a disk's request queue and under which back end.
        let disks = |h: Handling| dev_vm.iter().map(|&vm| vms[vm as usize].disk.then_some(h)).collect::<Vec<_>>();
        if io.handling == Handling::Vhost {
            // One worker per device (per queue pair of a multi-queue virtio-net device: QEMU
            // opens a vhost-net device for each), pinned where its VM says. (A VF VM's one
            // worker never wakes: it is kept so that the threads' ids and placement stay what
            // they were.)
            let mut thread_vm = Vec::new();
            for (i, vm) in vms.iter().enumerate() {
                // Under Xen, dom0's back end: netback's kernel thread or QEMU's device model,
                // each VM's pinned to one of dom0's pCPUs in turn.
                let (name, pin) = match vm.kind {
                    NetKind::XenPv => (format!("netback-{}", vm.name), Some(dom0[i % dom0.len()])),
                    NetKind::XenE1000 => (format!("qemu-{}", vm.name), Some(dom0[i % dom0.len()])),
                    // A disk's: QEMU's virtio-blk in its event loop (an iothread's, per queue).
                    _ if vm.disk => (format!("iothread-{}", vm.name), vm.vhost_pin),
                    _ => (format!("vhost-{}", vm.name), vm.vhost_pin),
                };
                let cfg = vhost::config(profile, vm.busyloop_timeout_us);
                let own: Vec<u32> = (0..dev_vm.len() as u32).filter(|&d| dev_vm[d as usize] == i as u32).collect();
                let served = if vm.backed { own.clone() } else { vec![] };
                for (q, &d) in served.iter().enumerate().skip(1) {
                    debug_assert_eq!(d, first[i] + q as u32);
                }
                for q in 0..served.len().max(1) {
                    let name = if q == 0 { name.clone() } else { format!("{name}.q{q}") };
                    add(&name, pin);
                    let devs = served.get(q).map(|&d| vec![d]).unwrap_or_default();
                    if let Some(&d) = devs.first() {
                        by_dev[d as usize] = Some((threads.len() as u32, 0));
                    }
                    thread_vm.push(Some(i as u32));
                    threads.push(IoThread::new(name, devs, Policy::Vhost(vhost::VhostIo::new(cfg.clone()))));
                }
            }
            let extra = dev_vm
                .iter()
                .map(|&vm| match (vms[vm as usize].kind, profile.xen.as_ref()) {
                    (NetKind::XenPv, Some(x)) => x.netback_packet_ns.value,
                    (NetKind::XenE1000, Some(x)) => x.qemu_e1000_packet_ns.value,
                    _ => 0.0,
                })
                .collect();
            let costs = Costs::new(profile, offloads(), true).with_packet_extra(extra).with_numa(profile, nodes()).with_disks(profile, disks(Handling::Vhost));
            return Backends { threads, by_dev, exitless: false, costs, dev_vm: dev_vm.to_vec(), thread_vm };
        }
        // Every device with a back end (a disk's every request queue; a NIC has one here).
        let virtio: Vec<u32> = (0..dev_vm.len() as u32).filter(|&d| vms[dev_vm[d as usize] as usize].backed).collect();
        let cores = io.cores.clone().unwrap_or_default();
        // A request stream's guest answers each completion as it would a packet (ES2).
        let replies = |d: u32| vms[dev_vm[d as usize] as usize].request_stream;
        for (g, (name, devs, policy)) in shared_threads(io, &vhost, &virtio, &replies).into_iter().enumerate() {
            for (local, &d) in devs.iter().enumerate() {
                by_dev[d as usize] = Some((g as u32, local as u32));
            }
            // The threads pinned to the I/O cores in turn.
            let pin = (!cores.is_empty()).then(|| cores[g % cores.len()]);
            add(&name, pin);
            let mut th = IoThread::new(name, devs, policy);
            if th.policy.runs_from_start() {
                th.start();
            }
            threads.push(th);
        }
        let kernel_path = threads.iter().all(|t| t.policy.kernel_path());
        let thread_vm = vec![None; threads.len()];
        Backends {
            threads,
            by_dev,
            exitless: io.handling == Handling::Elvis,
            costs: Costs::new(profile, offloads(), kernel_path).with_numa(profile, nodes()).with_disks(profile, disks(io.handling)),
            dev_vm: dev_vm.to_vec(),
            thread_vm,
        }
    }

    /// The thread serving device `dev` and the device's index among its devices, if any.
    pub fn of_dev(&self, dev: u32) -> Option<(u32, usize)> {
        self.by_dev[dev as usize].map(|(t, l)| (t, l as usize))
    }

    /// Does thread `t` run from the start (a PMD polls from the start)?
    pub fn starts_running(&self, t: u32) -> bool {
        self.threads[t as usize].wake_pending
    }

    /// The VM whose own thread `t` is (a vhost worker: one per VM, or per queue pair of a
    /// multi-queue device, in order), or `None` for a thread shared by the host's VMs (ES2,
    /// ELVIS, PMD).
    pub fn vm_of_thread(&self, t: u32) -> Option<u32> {
        self.thread_vm[t as usize]
    }
}
