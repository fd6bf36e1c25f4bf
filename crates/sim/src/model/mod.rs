//! The host model: pCPUs, vCPUs, virtio-net devices with vhost threads, the wire, and the
//! guests' workloads. Each concept has its own module; this one wires them to the engine.
//!
//! This is the first slice of the paravirtual path (one TX queue per VM, pinned threads, the
//! emulated LAPIC). Later models (host scheduler, RX, posted interrupts, ES2, ELVIS, DID, ...)
//! slot in by replacing a layer behind these types.

mod lapic;
mod vcpu;
mod vhost;
mod virtq;
mod wire;
mod workload;

use crate::engine::{EventQueue, Model, Time};
use crate::metrics::BusyTime;
use crate::profile::Profile;
use crate::scenario::Checked;
pub use vcpu::Vcpu;
use vhost::Vhost;
use virtq::Virtq;
use wire::Wire;
use workload::Sender;

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
    /// A halted vCPU's thread is running again (after a wake-up).
    VcpuWoken {
        /// vCPU index.
        vcpu: u32,
    },
    /// The guest's LAPIC timer fires.
    TimerFire {
        /// vCPU index.
        vcpu: u32,
    },
    /// A vhost thread starts running after an eventfd signal.
    VhostWake {
        /// Device index.
        dev: u32,
    },
    /// A vhost thread finished one descriptor.
    VhostDone {
        /// Device index.
        dev: u32,
    },
    /// A packet has left the wire (delivered to the remote client).
    WireDone {
        /// Device index.
        dev: u32,
    },
}

/// One VM's devices and results bookkeeping.
pub(crate) struct VmState {
    pub name: String,
    /// Host-wide indices of this VM's vCPUs.
    pub vcpus: Vec<u32>,
    /// Its virtio-net device (index into `Host::devs`).
    pub dev: u32,
}

/// A virtio-net device: TX virtqueue, the vhost thread serving it, and the link it sends on.
pub(crate) struct NetDev {
    pub vm: u32,
    pub txq: Virtq,
    pub vhost: Vhost,
    pub wire: Wire,
}

/// The whole simulated host.
pub struct Host {
    pub(crate) profile: Profile,
    pub(crate) vms: Vec<VmState>,
    pub(crate) vcpus: Vec<Vcpu>,
    pub(crate) devs: Vec<NetDev>,
    pub(crate) senders: Vec<Option<Sender>>,
    /// Busy time of each pCPU (guest, exits, host threads).
    pub(crate) pcpu_busy: Vec<BusyTime>,
    /// Start of the measurement window.
    pub(crate) window_start: Time,
}

impl Host {
    /// Build the model from a checked scenario and schedule its first events.
    pub fn build(c: &Checked, q: &mut EventQueue<Ev>) -> Host {
        let s = &c.scenario;
        let mut vms = Vec::new();
        let mut vcpus = Vec::new();
        let mut devs = Vec::new();
        let mut senders = Vec::new();
        let mut next_free_pcpu = 0u32;
        for vm in &s.vm {
            next_free_pcpu += vm.vcpus;
        }
        for (vi, vm) in s.vm.iter().enumerate() {
            let mut ids = Vec::new();
            for j in 0..vm.vcpus {
                // Default placement: host-wide vCPU k on pCPU k.
                let pcpu = vm.vcpu_pins.as_ref().map_or(vcpus.len() as u32 % c.pcpus, |p| p[j as usize]);
                ids.push(vcpus.len() as u32);
                vcpus.push(Vcpu::new(vi as u32, pcpu));
            }
            let vhost_pcpu = vm.net.vhost_pin.unwrap_or_else(|| {
                let p = next_free_pcpu % c.pcpus;
                next_free_pcpu += 1;
                p
            });
            let dev = devs.len() as u32;
            devs.push(NetDev {
                vm: vi as u32,
                txq: Virtq::new(vm.net.queue_size),
                vhost: Vhost::new(format!("vhost-{}", vm.name), vhost_pcpu),
                wire: Wire::new(&c.profile),
            });
            let sender = Sender::new(&vm.workload, &c.profile, s.seed, &vm.name);
            senders.push(Some(sender));
            vms.push(VmState { name: vm.name.clone(), vcpus: ids, dev });
        }
        let mut host = Host {
            profile: c.profile.clone(),
            vms,
            vcpus,
            devs,
            senders,
            pcpu_busy: vec![BusyTime::default(); c.pcpus as usize],
            window_start: 0,
        };
        q.at(crate::engine::secs_to_ns(s.warmup_s), Ev::Warmup);
        // Every vCPU starts in guest mode; the workload decides what it does first.
        for v in 0..host.vcpus.len() as u32 {
            host.vcpus[v as usize].busy.set(0, true);
            let p = host.vcpus[v as usize].pcpu;
            host.set_pcpu_busy(0, p, true);
            host.enter(0, v, q);
        }
        host
    }

    /// Reset every metric at the end of warm-up.
    fn start_window(&mut self, now: Time) {
        self.window_start = now;
        for v in &mut self.vcpus {
            v.reset_metrics(now);
        }
        for d in &mut self.devs {
            d.vhost.reset_metrics(now);
            d.wire.reset_metrics();
            d.txq.reset_metrics();
        }
        for s in self.senders.iter_mut().flatten() {
            s.reset_metrics();
        }
        for b in &mut self.pcpu_busy {
            b.reset(now);
        }
    }

    /// Mark pCPU `p` busy or idle (time conservation: busy + idle = window).
    pub(crate) fn set_pcpu_busy(&mut self, now: Time, p: u32, busy: bool) {
        self.pcpu_busy[p as usize].set(now, busy);
    }
}

impl Model for Host {
    type Event = Ev;

    fn handle(&mut self, now: Time, ev: Ev, q: &mut EventQueue<Ev>) {
        match ev {
            Ev::Warmup => self.start_window(now),
            Ev::GuestDone { vcpu, epoch } => self.guest_done(now, vcpu, epoch, q),
            Ev::ExitDone { vcpu } => self.exit_done(now, vcpu, q),
            Ev::VcpuWoken { vcpu } => self.vcpu_woken(now, vcpu, q),
            Ev::TimerFire { vcpu } => self.timer_fire(now, vcpu, q),
            Ev::VhostWake { dev } => self.vhost_wake(now, dev, q),
            Ev::VhostDone { dev } => self.vhost_done(now, dev, q),
            Ev::WireDone { dev } => self.wire_done(now, dev),
        }
    }
}
