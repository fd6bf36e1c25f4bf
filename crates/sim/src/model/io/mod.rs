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
//! ring, the wire, the interrupt). Adding a back end: its policy in `crates/policy`; its file
//! here — the adapter implementing [`Backend`] and its `threads` (which devices each of its
//! threads serves) — registered by one line each in [`Policy`], `each!` and
//! [`shared_threads`]; its `Handling` variant and keys in `config/io.rs`; a test; an example.
//! Nothing under `guest/` or in the model root names a back end (`tests/backends.rs`).

pub(crate) mod device;
mod elvis;
mod es2;
pub mod es2_driver;
pub(crate) mod event;
pub(crate) use event::Event;
pub(crate) mod moderation;
mod pmd;
pub(crate) mod queues;
pub(crate) mod thread;
mod vhost;

use crate::engine::Time;
use crate::config::{Handling, IoHandling, NetKind, Offload};
use crate::profile::Profile;
use queues::{Costs, DevRings, Notice, Work};
pub(crate) use thread::{IoThread, Next, Signal};

/// What a back end sees besides its queues, at the moment it is asked.
pub(crate) struct View<'a, R: DevRings + ?Sized> {
    /// The devices' queues.
    pub rings: &'a mut R,
    /// What its steps cost.
    pub costs: &'a Costs,
    /// Another thread wants its pCPU (`need_resched`).
    pub yield_wanted: bool,
    /// Each device's VM (a move between VMs' queues costs a page-table switch).
    pub dev_vm: &'a [u32],
}

/// How a turn serves its queue (set by the policy when the turn starts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TurnMode {
    /// A vhost worker's handler loop over its device's two queues.
    Vhost,
    /// ES2 perceptive TX handler (Algorithm 1).
    Perceptive,
    /// ES2 optimistic TX handler in polling mode (Algorithm 2).
    OptimisticPoll,
    /// A regular vhost handler (kick- or packet-driven) of a joint thread.
    Regular,
    /// An ELVIS turn on a queue that is polled (`true`) or notified.
    Elvis(bool),
    /// A PMD's look at one queue (up to a burst).
    Pmd,
    /// A scheduled handler with nothing to do (a stale entry): the turn ends at once.
    Nothing,
}

/// One turn: a queue of one of the thread's devices.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Turn {
    /// The device's index among the thread's devices.
    pub local: usize,
    /// The RX queue (else TX).
    pub rx: bool,
    /// Items taken so far.
    pub taken: u32,
    pub mode: TurnMode,
}

/// What the policy says the thread does next.
pub(crate) enum Decision {
    Turn(Turn),
    /// Spin on its rings (a busy PMD that found nothing) until then or until work is seen.
    Spin(Option<Time>),
    /// Sleep until `until` (or until woken); a notice wakes it if `notice`, work written
    /// without one if `write`.
    Sleep { until: Option<Time>, notice: bool, write: bool },
}

/// What a turn does next.
pub(crate) enum Take {
    /// Process this item, which costs this long.
    Item(Work, Time),
    /// Spin on the rings until then (or until work is seen), keeping the pCPU.
    Spin(Option<Time>),
    /// The turn is over.
    End,
}

/// A back end's policy adapter (DESIGN §2's request-handling seam), one per back end in its
/// own file: what its thread does with a notice, what it does next, what a turn takes, what a
/// finished item means to it — and the few properties by which the I/O-thread mechanism
/// (`thread.rs`) treats it, whose defaults are a polling thread's. Dispatched statically
/// through [`Policy`], no vtable per item.
pub(crate) trait Backend {
    /// Work of kind `n` arrived for the thread's device `local` (`dev`).
    fn notice<R: DevRings + ?Sized>(&mut self, now: Time, local: usize, dev: u32, n: Notice, v: &mut View<'_, R>);
    /// What the thread does next: a turn at one of its devices' queues, a spin, a sleep.
    fn decide<R: DevRings + ?Sized>(&mut self, now: Time, devs: &[u32], v: &mut View<'_, R>) -> Decision;
    /// What the turn does next: an item, a spin, or the turn's end.
    fn take<R: DevRings + ?Sized>(&mut self, now: Time, turn: Turn, dev: u32, v: &mut View<'_, R>) -> Take;
    /// An item of the turn was completed; true: the turn ends.
    fn after_item<R: DevRings + ?Sized>(&mut self, now: Time, turn: Turn, dev: u32, w: Work, v: &mut View<'_, R>) -> bool;
    /// Work of kind `n` written without a notice: does the thread see it (spinning,
    /// monitoring)?
    fn sees_write(&self, _n: Notice) -> bool {
        false
    }
    /// A look that found nothing costs `poll_ns` (threads that poll pay it over and over).
    fn empty_look_costs(&self) -> bool {
        true
    }
    /// It checks `need_resched` between turns.
    fn yields_between_turns(&self) -> bool {
        true
    }
    /// Its own count of looks and empty looks, where it keeps one.
    fn polls(&self) -> Option<(u64, u64)> {
        None
    }
    /// Start a measurement window.
    fn reset_metrics(&mut self) {}
    /// Its thread runs from the start, as if woken (a PMD polls from the start).
    fn runs_from_start(&self) -> bool {
        false
    }
    /// It hands TX buffers to the host's network stack (not a PMD, whose own driver writes
    /// the NIC: its per-packet cost is `vhost.tx_packet_ns` alone).
    fn kernel_path(&self) -> bool {
        true
    }
}

/// The back ends: the policy behind a thread. (A back end is its file and one line here and
/// in `each!` and [`shared_threads`].)
pub(crate) enum Policy {
    Vhost(vhost::VhostIo),
    Es2(es2::Es2Io),
    Elvis(elvis::ElvisIo),
    Pmd(pmd::PmdIo),
}

macro_rules! each {
    ($self:ident, $p:ident => $e:expr) => {
        match $self {
            Policy::Vhost($p) => $e,
            Policy::Es2($p) => $e,
            Policy::Elvis($p) => $e,
            Policy::Pmd($p) => $e,
        }
    };
}

/// The threads of a back end that serves the host's backed devices `devs` (each VM's first)
/// from shared threads, each a group of devices (ES2's joint threads, ELVIS's I/O cores'
/// workers, PMDs): per thread its name, its devices and its policy.
fn shared_threads(io: &IoHandling, vhost: &eventpath_policy::vhost::VhostConfig, devs: &[u32], replies: &dyn Fn(u32) -> bool) -> Vec<(String, Vec<u32>, Policy)> {
    match io.handling {
        Handling::Es2 => es2::threads(io, vhost, devs, replies),
        Handling::Elvis => elvis::threads(io, devs),
        Handling::Pmd => pmd::threads(io, devs),
        Handling::Vhost => unreachable!("vhost-net: a worker per device"),
    }
}

impl Backend for Policy {
    fn notice<R: DevRings + ?Sized>(&mut self, now: Time, local: usize, dev: u32, n: Notice, v: &mut View<'_, R>) {
        each!(self, p => p.notice(now, local, dev, n, v))
    }
    fn decide<R: DevRings + ?Sized>(&mut self, now: Time, devs: &[u32], v: &mut View<'_, R>) -> Decision {
        each!(self, p => p.decide(now, devs, v))
    }
    fn take<R: DevRings + ?Sized>(&mut self, now: Time, turn: Turn, dev: u32, v: &mut View<'_, R>) -> Take {
        each!(self, p => p.take(now, turn, dev, v))
    }
    fn after_item<R: DevRings + ?Sized>(&mut self, now: Time, turn: Turn, dev: u32, w: Work, v: &mut View<'_, R>) -> bool {
        each!(self, p => p.after_item(now, turn, dev, w, v))
    }
    fn sees_write(&self, n: Notice) -> bool {
        each!(self, p => p.sees_write(n))
    }
    fn empty_look_costs(&self) -> bool {
        each!(self, p => p.empty_look_costs())
    }
    fn yields_between_turns(&self) -> bool {
        each!(self, p => p.yields_between_turns())
    }
    fn polls(&self) -> Option<(u64, u64)> {
        each!(self, p => p.polls())
    }
    fn reset_metrics(&mut self) {
        each!(self, p => p.reset_metrics())
    }
    fn runs_from_start(&self) -> bool {
        each!(self, p => p.runs_from_start())
    }
    fn kernel_path(&self) -> bool {
        each!(self, p => p.kernel_path())
    }
}

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
}

impl Backends {
    /// The back end `io` asks for, with the profile's costs, for the VMs `vms`. `add(name, pin)` registers each thread with
    /// the host scheduler, in order; a thread whose policy runs from the start (a PMD's) is started
    /// ([`Self::starts_running`]).
    /// `dev_vm` gives each device's VM (a VM's devices are consecutive; only a VM of several
    /// VFs has more than one, and a VF has no back end).
    pub fn build(io: &IoHandling, profile: &Profile, vms: &[VmIo], dev_vm: &[u32], dom0: &[u32], add: &mut dyn FnMut(&str, Option<u32>)) -> Backends {
        let vhost = vhost::config(profile, 0);
        let mut threads = Vec::new();
        let mut by_dev = vec![None; dev_vm.len()];
        // Each VM's first device (a virtio VM's only one).
        let first: Vec<u32> = (0..vms.len() as u32).map(|vm| dev_vm.iter().position(|&v| v == vm).expect("a device per VM") as u32).collect();
        let offloads = || dev_vm.iter().map(|&vm| vms[vm as usize].offloads);
        if io.handling == Handling::Vhost {
            // One worker per device, pinned where its VM says. (A VF's never wakes: it is kept
            // so that the threads' ids and placement stay what they were.)
            for (i, vm) in vms.iter().enumerate() {
                // Under Xen, dom0's back end: netback's kernel thread or QEMU's device model,
                // each VM's pinned to one of dom0's pCPUs in turn.
                let (name, pin) = match vm.kind {
                    NetKind::XenPv => (format!("netback-{}", vm.name), Some(dom0[i % dom0.len()])),
                    NetKind::XenE1000 => (format!("qemu-{}", vm.name), Some(dom0[i % dom0.len()])),
                    _ => (format!("vhost-{}", vm.name), vm.vhost_pin),
                };
                add(&name, pin);
                let cfg = vhost::config(profile, vm.busyloop_timeout_us);
                let d = first[i];
                let (devs, serves) = if vm.kind.has_backend() { (vec![d], true) } else { (vec![], false) };
                if serves {
                    by_dev[d as usize] = Some((threads.len() as u32, 0));
                }
                threads.push(IoThread::new(name, devs, Policy::Vhost(vhost::VhostIo::new(cfg))));
            }
            let extra = dev_vm
                .iter()
                .map(|&vm| match (vms[vm as usize].kind, profile.xen.as_ref()) {
                    (NetKind::XenPv, Some(x)) => x.netback_packet_ns.value,
                    (NetKind::XenE1000, Some(x)) => x.qemu_e1000_packet_ns.value,
                    _ => 0.0,
                })
                .collect();
            let costs = Costs::new(profile, offloads(), true).with_packet_extra(extra);
            return Backends { threads, by_dev, exitless: false, costs, dev_vm: dev_vm.to_vec() };
        }
        let virtio: Vec<u32> = (0..vms.len()).filter(|&vm| vms[vm].kind.has_backend()).map(|vm| first[vm]).collect();
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
        Backends { threads, by_dev, exitless: io.handling == Handling::Elvis, costs: Costs::new(profile, offloads(), kernel_path), dev_vm: dev_vm.to_vec() }
    }

    /// The thread serving device `dev` and the device's index among its devices, if any.
    pub fn of_dev(&self, dev: u32) -> Option<(u32, usize)> {
        self.by_dev[dev as usize].map(|(t, l)| (t, l as usize))
    }

    /// Does thread `t` run from the start (a PMD polls from the start)?
    pub fn starts_running(&self, t: u32) -> bool {
        self.threads[t as usize].wake_pending
    }

    /// The VM whose own thread `t` is (a vhost worker: one per VM, in order), or `None` for a
    /// thread shared by the host's VMs (ES2, ELVIS, PMD).
    pub fn vm_of_thread(&self, t: u32) -> Option<u32> {
        matches!(self.threads[t as usize].policy, Policy::Vhost(_)).then_some(t)
    }
}
