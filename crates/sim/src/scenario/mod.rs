//! Scenario files: what to simulate. TOML, strict (unknown keys are errors), every value range
//! checked with a message naming the key, the value and what is allowed.
//!
//! ```toml
//! name = "udp-send"
//! profile = "es2"          # built-in name or path to a profile .toml
//! seed = 1
//! duration_s = 1.0
//! warmup_s = 0.1
//!
//! [[vm]]
//! name = "vm0"
//! vcpus = 1
//! vcpu_pins = [0]          # pCPU of each vCPU thread
//! interrupt_delivery = "emulated"  # apicv, posted, eli, did (eventpath_policy::delivery)
//! [vm.net]
//! queue_size = 256
//! vhost_pin = 1
//! [vm.workload]
//! kind = "udp_stream"
//! message_bytes = 512
//! rate_pps = 100000        # omit to send as fast as the vCPU can
//! ```

pub mod keys;
mod layout;
pub mod xen;
mod resolve;
mod too_large;

pub use crate::config::{de, limits};
pub use crate::config::{Consume, Es2Switch, Handling, HttpServer, InterruptDelivery, IoHandling, Lookbusy, NetKind, Offload, VfItr, Workload};
use crate::config::workload;

use crate::error::{describe_json_error, describe_toml_error, policy_error, InputError, InputResult};
use crate::profile::Profile;
use eventpath_policy::moderation::NicItrDriver;
use serde::{Deserialize, Serialize};

fn default_seed() -> u64 {
    1
}
fn default_duration() -> f64 {
    1.0
}
fn default_warmup() -> f64 {
    0.1
}
fn default_queue_size() -> u32 {
    256
}

/// A whole scenario.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Name used in outputs.
    pub name: String,
    /// Profile: built-in name or path.
    pub profile: String,
    /// Seed of all random streams.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Simulated seconds measured (after warm-up).
    #[serde(default = "default_duration")]
    pub duration_s: f64,
    /// Simulated seconds run before measuring.
    #[serde(default = "default_warmup")]
    pub warmup_s: f64,
    /// Host layout overrides.
    #[serde(default, deserialize_with = "de::table")]
    pub host: HostLayout,
    /// The remote client machine (`[client]`).
    #[serde(default, deserialize_with = "de::table")]
    pub client: ClientMachine,
    /// The VMs.
    #[serde(deserialize_with = "de::tables")]
    pub vm: Vec<Vm>,
    /// Profile parameters replaced for this scenario, nested like the profile
    /// (`[profile_overrides.exit]` `eoi_ns = 1500`): a value in the parameter's unit.
    /// For sensitivity studies (`eventpath sweep --param profile_overrides.exit.eoi_ns=...`)
    /// without writing a profile file.
    #[serde(default, deserialize_with = "de::table")]
    pub profile_overrides: toml::Table,
}

/// Host layout: overrides of the profile's hardware facts, and host-only threads.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct HostLayout {
    /// Number of pCPUs to use (default: all of the profile's cores; at most 512).
    pub pcpus: Option<u32>,
    /// CPU hogs: host threads that always want to run (`[[host.cpu_hog]]`).
    #[serde(default, deserialize_with = "de::tables")]
    pub cpu_hog: Vec<CpuHog>,
    /// What an idle pCPU does: `menu` (default: the cpuidle governor picks one of the
    /// profile's C-states, `host.cstates`) or `poll` (Linux `idle=poll`: the idle loop spins,
    /// so a woken thread pays no C-state exit).
    #[serde(default, deserialize_with = "de::variant")]
    pub idle: IdlePolicy,
    /// `kvm` (default), `bare_metal` (no hypervisor; one VM, which is the machine's OS, on an
    /// `sriov_vf` NIC; its delivery mode must be left at the default) or `xen` (Xen with dom0 on
    /// its own pCPUs; needs a profile with `[xen]` and `scheduler = "xen_credit"`; its VMs'
    /// devices are `xen_pv` or `xen_e1000`).
    #[serde(default, deserialize_with = "de::variant")]
    pub virtualization: Virtualization,
    /// The host scheduler of the vCPU, back-end and hog threads: `cfs` (default: Linux CFS,
    /// KVM's host) or `xen_credit` (Xen 4.2's credit scheduler, hBalance's host).
    #[serde(default, deserialize_with = "de::variant")]
    pub scheduler: HostScheduler,
    /// Xen's credit time slice in ms (`sched_credit_tslice_ms`, 1..=1000; default 30): only
    /// with `scheduler = "xen_credit"`.
    pub tslice_ms: Option<u32>,
    /// Which threads serve the virtio queues (`[host.io]`, `io.rs`): stock vhost-net (default),
    /// ES2's joint threads, or ELVIS's I/O cores.
    #[serde(default, deserialize_with = "de::table")]
    pub io: IoHandling,
    /// The host NIC driver's receive interrupt throttle, replacing the profile's
    /// `host.nic_itr`: `fixed` (at `host.nic_rx_itr_ns`), `ixgbe` or `i40e` (that driver's
    /// adaptive ITR, starting there). Default: the profile's.
    #[serde(default, deserialize_with = "de::variant_opt")]
    pub nic_itr: Option<NicItrDriver>,
    /// The host NIC's IRQ affinity: the pCPUs its queues' interrupts (and their softirq work:
    /// RX NAPI, TX clean) go to, the devices' queues split over them in order, in contiguous
    /// groups (with two I/O cores, the first half of the VMs' queues on the first). Default:
    /// every pCPU from the last down (irqbalance spreading the queues' vectors, favouring the
    /// least loaded cores, where the host scheduler fills idle pCPUs from the first). ELVIS and
    /// Baseline with affinity put them on the I/O cores (ELVIS §4.2).
    pub nic_irq_cpus: Option<Vec<u32>>,
    /// `virtualization = "xen"` only: the pCPUs dom0 runs on (its back ends: netback's kernel
    /// threads, QEMU's device models), which no vCPU of a guest may be pinned to. Default: the
    /// host's last `xen.dom0_pcpus` pCPUs (the profile's).
    pub dom0_cpus: Option<Vec<u32>>,
}

/// The host's idle loop (Linux `cpuidle`), a boot-time setting hosts tuned for latency change.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IdlePolicy {
    /// The menu governor over the profile's C-states (a distribution kernel's default).
    #[default]
    Menu,
    /// `idle=poll`: no C-states; the idle loop polls for work.
    Poll,
}

/// The remote client machine that runs every VM's peer (netperf, memaslap, ab; DESIGN §3.2).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ClientMachine {
    /// Cores of the client machine that serve the VMs' flows. Each VM's flow is steered to
    /// one core (RSS and one peer process per flow): VM `i` runs on core `i mod cores`, so with
    /// fewer cores than VMs, VMs share a core and the client can saturate (ELVIS §4). Default:
    /// one core per VM (a client that is never the bottleneck beyond its per-flow core). A VM
    /// with several VFs (`[vm.net] vfs`) has a flow per VF: flows are numbered by device, and
    /// the default is a core per flow.
    pub cores: Option<u32>,
    /// The client NIC driver's receive interrupt throttle, replacing the profile's
    /// `client.nic_itr` (`fixed`, `ixgbe`, `i40e`). Default: the profile's.
    #[serde(default, deserialize_with = "de::variant_opt")]
    pub nic_itr: Option<NicItrDriver>,
    /// The qdisc on each of the client NIC's TX queues, replacing the profile's `client.qdisc`
    /// (`pfifo_fast`, `fq_codel`). Default: the profile's.
    #[serde(default, deserialize_with = "de::variant_opt")]
    pub qdisc: Option<crate::profile::Qdisc>,
    /// TSO on the client's NIC (ethtool `-K tso`), replacing the profile's `client.tso`: a bulk
    /// TCP sender into a guest sends skbs of up to 45 segments (on) or one MSS (off). Default:
    /// the profile's.
    pub tso: Option<bool>,
    /// The client kernel's TCP autocorking (`net.ipv4.tcp_autocorking`), replacing the
    /// profile's `client.tcp_autocorking`: a small write's push waits while earlier skbs are in
    /// the NIC (on) or sends its whole segments at once (off). Default: the profile's.
    pub tcp_autocorking: Option<bool>,
}

/// A CPU hog's nice value where the scenario gives none (the lowest priority).
pub const DEFAULT_HOG_NICE: i32 = 19;

/// A host thread that never sleeps (a CPU burn), scheduled by the host scheduler.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CpuHog {
    /// Nice value, −20..=19; default 19 (lowest priority) under CFS. Xen's credit scheduler
    /// has no nice (every thread has its default weight): refused there.
    pub nice: Option<i32>,
    /// pCPUs it may run on (its affinity mask); default all.
    pub pins: Option<Vec<u32>>,
}

/// `[vm.apic]` as written: every feature a switch, `ipiv` kept absent (None) until
/// [`Scenario::check`] gives it the stock host's value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ApicWritten {
    /// Intel IPI virtualization; None: the stock host's.
    pub ipiv: Option<bool>,
    /// KVM PV EOI.
    pub pv_eoi: bool,
    /// KVM PV IPIs.
    pub pv_ipi: bool,
    /// KVM PV sched yield.
    pub pv_sched_yield: bool,
    /// AMD AVIC.
    pub avic: bool,
    /// The guest's x2APIC mode (matters only to AVIC).
    pub x2apic: bool,
}

impl ApicWritten {
    /// The features the VM runs with: as written, `ipiv` absent taking `stock_ipiv`.
    pub fn resolve(self, stock_ipiv: bool) -> eventpath_policy::delivery::features::ApicFeatures {
        eventpath_policy::delivery::features::ApicFeatures {
            ipiv: self.ipiv.unwrap_or(stock_ipiv && !self.avic),
            pv_eoi: self.pv_eoi,
            pv_ipi: self.pv_ipi,
            pv_sched_yield: self.pv_sched_yield,
            avic: self.avic,
            x2apic: self.x2apic,
        }
    }
}

/// One virtual machine.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Vm {
    /// Unique name.
    pub name: String,
    /// Number of vCPUs (≥ 1).
    pub vcpus: u32,
    /// pCPU each vCPU thread is pinned to (one entry per vCPU). Default: unpinned, placed
    /// by the host scheduler on any pCPU.
    pub vcpu_pins: Option<Vec<u32>>,
    /// The memory node (socket) its memory is on (issue 48 item 5). Default: the node of the
    /// pCPU its vCPU 0 is placed on first (Linux's default policy allocates a page on the node
    /// of the CPU that first touches it, the booting vCPU's).
    #[serde(default)]
    pub memory_node: Option<u32>,
    /// How interrupts reach the vCPUs (`eventpath_policy::delivery`), as the VM runs:
    /// `emulated` (software LAPIC), `apicv` (EOI virtualized only), `posted` (CPU and VT-d
    /// posted interrupts), `eli` (ELI/ELVIS exitless, needs an `sriov_vf`), `did` (DID),
    /// `evtchn` (Xen event channels: a `xen_pv` device's only mode and its default). Set by
    /// [`Scenario::check`] from [`Vm::interrupt_delivery_written`] or, absent, the profile's
    /// stock host's (`layout::default_delivery`: `host.apicv`, `host.vtd_posting`);
    /// what a scenario file or `scenario.resolved.toml` shows.
    #[serde(skip_deserializing)]
    pub interrupt_delivery: InterruptDelivery,
    /// The `interrupt_delivery` key as the scenario wrote it (None: absent). Kept apart from
    /// the mode run so that a written value that means nothing on the device (`emulated` on a
    /// `xen_pv` device, whose default is `evtchn`) is refused instead of read as the default.
    #[serde(rename = "interrupt_delivery", default, deserialize_with = "de::variant_opt", skip_serializing)]
    pub interrupt_delivery_written: Option<InterruptDelivery>,
    /// Optional APIC features on top of the delivery mode (`[vm.apic]`,
    /// `eventpath_policy::delivery::features`), as the VM runs: `ipiv` (Intel IPI
    /// virtualization: `posted` and a profile with `cpu.ipiv = 1`), `avic` (AMD AVIC: `posted`
    /// and `cpu.avic = 1`; `x2apic` with it needs `cpu.x2avic = 1`), `pv_eoi` (KVM PV EOI:
    /// `emulated`), `pv_ipi` (only beside an `ipi_pingpong` with `targets` > 1, the one
    /// multi-destination sender), `pv_sched_yield` (KVM PV sched yield: the same); all refused
    /// under Xen. Set by [`Scenario::check`] from [`Vm::apic_written`]: a feature not written is
    /// off, except `ipiv`, which is the stock host's on a `posted` VM (`host.ipiv` and
    /// `cpu.ipiv`: Linux 5.19+ on a CPU with IPIv).
    #[serde(skip_deserializing)]
    pub apic: eventpath_policy::delivery::features::ApicFeatures,
    /// The `[vm.apic]` table as the scenario wrote it (`ipiv` None: absent).
    #[serde(rename = "apic", default, deserialize_with = "de::table", skip_serializing)]
    pub apic_written: ApicWritten,
    /// Run a CPU burn (a busy loop at the lowest guest priority, like a SCHED_IDLE or nice-19
    /// `while(1)`) on every vCPU beside the workload: the vCPU never halts, and any other guest
    /// work runs before the burn continues. Default false.
    #[serde(default)]
    pub guest_cpu_burn: bool,
    /// The guest's idle loop: `halt` (default) or `poll` (Linux `idle=poll`).
    #[serde(default, deserialize_with = "de::variant")]
    pub guest_idle: GuestIdle,
    /// Which vCPU a device interrupt goes to (`eventpath_policy::routing`): `fixed` (default:
    /// the vCPU the guest programmed, vCPU 0), `lowest_priority_rr` (logical destination mode:
    /// the next vCPU for every interrupt), `running_first` (the first running vCPU from the
    /// programmed one), `es2` (ES2 §4.3 redirection to online vCPUs), `h_balance` (hBalance
    /// Algorithm 1). Timer interrupts and IPIs are never redirected.
    #[serde(default, deserialize_with = "de::variant")]
    pub interrupt_routing: eventpath_policy::routing::RouterConfig,
    /// KVM halt polling (`[vm.halt_poll]`, `eventpath_policy::halt_poll`: `max_halt_poll_ns`
    /// [200000], `grow` [2], `grow_start` [10000], `shrink` [0]). Absent: a halting vCPU blocks
    /// at once.
    #[serde(default, deserialize_with = "de::table_opt")]
    pub halt_poll: Option<eventpath_policy::halt_poll::HaltPollConfig>,
    /// Guest halt polling (`[vm.guest_halt_poll]`, `eventpath_policy::guest_haltpoll`: the
    /// guest's cpuidle-haltpoll driver with `guest_halt_poll_ns` [200000], `grow` [2], `shrink`
    /// [2], `grow_start_ns` [50000], `allow_shrink` [true]). Absent: the idle guest halts at once.
    #[serde(default, deserialize_with = "de::table_opt")]
    pub guest_halt_poll: Option<eventpath_policy::idle::HaltpollConfig>,
    /// A lookbusy-like CPU load beside the workload (`[vm.lookbusy]`, `model::guest::lookbusy`):
    /// one spinner thread per vCPU, busy for `util_pct` % of each `period_ms` cycle. Absent:
    /// none.
    #[serde(default, deserialize_with = "de::table_opt", skip_serializing_if = "Option::is_none")]
    pub lookbusy: Option<Lookbusy>,
    /// The paravirtual NIC.
    #[serde(default, deserialize_with = "de::table")]
    pub net: Net,
    /// A block workload's disk (`[vm.disk]`). Default: a virtio-blk disk over a host RAM disk.
    #[serde(default, deserialize_with = "de::table", skip_serializing_if = "Disk::is_default")]
    pub disk: Disk,
    /// What the VM runs. Absent: no application — its vCPUs idle (halt), or run only the CPU
    /// burn with `guest_cpu_burn` (ES2 §6.3's background VMs).
    #[serde(default, deserialize_with = "workload::by_kind_opt", serialize_with = "workload::ser_by_kind_opt")]
    pub workload: Option<Workload>,
}

impl Vm {
    /// The devices (queues with their own back end, interrupt and application) the VM has:
    /// a block workload's disk has a request queue per vCPU its jobs use (min(jobs, vCPUs):
    /// blk-mq's hardware queue per CPU where the device offers one, `num-queues` = vCPUs since
    /// QEMU 5.2); a NIC its VFs or queue pairs (`Net::devices`).
    pub fn devices(&self) -> u32 {
        match &self.workload {
            Some(w) if w.is_block() => (w.block_jobs().len() as u32).clamp(1, self.vcpus.max(1)),
            _ => self.net.devices(),
        }
    }
}

/// The host scheduler (`[host] scheduler`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HostScheduler {
    /// Linux CFS (`kernel/sched/fair.c`), KVM's host scheduler.
    #[default]
    Cfs,
    /// Xen 4.2's credit scheduler (`xen/common/sched_credit.c`).
    XenCredit,
}

impl HostScheduler {
    /// Its name in a scenario.
    pub fn name(self) -> &'static str {
        match self {
            HostScheduler::Cfs => "cfs",
            HostScheduler::XenCredit => "xen_credit",
        }
    }
}

/// What the host runs under its guests (`[host] virtualization`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Virtualization {
    /// KVM: every VM behind its delivery mode.
    #[default]
    Kvm,
    /// No hypervisor: the one "VM" is the machine's own OS, its NIC an SR-IOV port used
    /// directly; interrupts, EOIs, timers and HLT cost no exits (DID §5's bare-metal rows).
    BareMetal,
    /// Xen (hBalance's host): the credit scheduler, dom0 on its own pCPUs serving the guests'
    /// PV (netfront/netback) or FV (QEMU's e1000) devices.
    Xen,
}

/// What a guest's idle loop does (`[vm] guest_idle`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GuestIdle {
    /// HLT (an exit unless bare metal).
    #[default]
    Halt,
    /// Linux `idle=poll`: the idle loop spins in guest mode, so HLT never exits and the
    /// vCPU never blocks (DID §5.1); the tick stops while idle (NO_HZ).
    Poll,
}



/// A block workload's disk (`[vm.disk]`; issue 51).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Disk {
    /// `virtio_blk` (default: a request queue per vCPU its jobs use, served by a host back end,
    /// over a host RAM disk) or `nvme` (an NVMe-like device assigned to the VM: a submission and
    /// completion queue pair per vCPU its jobs use, a doorbell write without an exit, an MSI-X
    /// vector per queue delivered as an assigned device's; the profile's `[nvme]`).
    #[serde(default, deserialize_with = "de::variant")]
    pub kind: DiskKind,
}

impl Disk {
    fn is_default(&self) -> bool {
        *self == Disk::default()
    }
}

/// What a block workload's disk is (`[vm.disk] kind`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DiskKind {
    /// virtio-blk over a host RAM disk, served by a back end (`host.io.handling`).
    #[default]
    VirtioBlk,
    /// An NVMe-like device assigned to the VM (VFIO): no back end.
    Nvme,
}

impl DiskKind {
    /// Its name in a scenario.
    pub fn key(self) -> &'static str {
        match self {
            DiskKind::VirtioBlk => "virtio_blk",
            DiskKind::Nvme => "nvme",
        }
    }
}

/// A virtio-net device served by a vhost thread.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Net {
    /// `virtio` (default), `sriov_vf`, or under Xen `xen_pv` or `xen_e1000`.
    #[serde(default, deserialize_with = "de::variant")]
    pub kind: NetKind,
    /// A VF's interrupt throttle (its EITR register): an interval in µs, at most one interrupt
    /// per interval (0 < value <= the profile's `sriov.vf_itr_max_ns`), or `"dynamic"`, the
    /// driver's adaptive throttle (`eventpath_policy::moderation::ixgbevf_itr`, ixgbevf's
    /// `rx-usecs` 1). Absent: a fixed interval of `sriov.vf_itr_ns` of the profile. Only for
    /// `kind = "sriov_vf"`.
    #[serde(default, deserialize_with = "vf_itr", serialize_with = "ser_vf_itr")]
    pub itr_us: Option<VfItr>,
    /// Descriptors per virtqueue (power of two, 2..=32768, as virtio requires).
    #[serde(default = "default_queue_size")]
    pub queue_size: u32,
    /// pCPU the vhost thread is pinned to. Default: unpinned, placed by the host scheduler.
    pub vhost_pin: Option<u32>,
    /// vhost-net busy polling (Linux `busyloop_timeout`, µs, 0..=1000000): how long the vhost
    /// thread polls an empty TX ring, kicks disabled, before it sleeps. Default 0 (off, as
    /// upstream). Only for virtio.
    #[serde(default)]
    pub busyloop_timeout_us: u32,
    /// Notification suppression by event indices (`VIRTIO_RING_F_EVENT_IDX`, which Linux
    /// vhost-net offers and virtio-net accepts): default true. false: the rings' flags only
    /// (`VRING_USED_F_NO_NOTIFY` / `VRING_AVAIL_F_NO_INTERRUPT`), a device without the feature.
    /// Only for virtio.
    pub event_idx: Option<bool>,
    /// Device-side interrupt moderation of both queues (`eventpath_policy::moderation`,
    /// `[vm.net.moderation] kind = "none" | "fir" | "cgr" | "air" | "dim"` with the scheme's keys):
    /// default none, every interrupt the driver asks for fires at once.
    #[serde(default, deserialize_with = "de::moderation")]
    pub moderation: eventpath_policy::moderation::ModerationConfig,
    /// The virtio-net offload features negotiated (`[vm.net.offload]`); absent: all on, as
    /// Linux's vhost-net offers and virtio-net accepts them. Only for virtio (a VF's offloads
    /// are its NIC's: ixgbevf turns TSO and checksums on).
    pub offload: Option<Offload>,
    /// The multi-threaded VF driver (MTVD, CGR/AIR/MTVD paper §4.4, Fig. 7): the VF driver's
    /// NAPI poll only dispatches each received packet, round robin, to a pool of kernel threads,
    /// one bound to each of the VM's vCPUs, which take it up the stack. Default false: NAPI
    /// takes every packet up the stack on the vCPU that took the interrupt. Only for
    /// `kind = "sriov_vf"` on a VM of two or more vCPUs.
    #[serde(default)]
    pub mtvd: bool,
    /// SR-IOV VFs assigned to the VM (CGR/AIR/MTVD paper §3.2, Fig. 5: one VM with 1 to 4
    /// VFs): each its own device, with its own rings, MSI-X vector, EITR throttle (and host
    /// moderation controller, the same scheme for each), remote client and flow; VF `i`'s vector
    /// has vCPU `i mod vcpus` as its affinity. Absent: 1. Only for `kind = "sriov_vf"`,
    /// 1..=the profile's `sriov.max_vfs`, and only with a receive workload (`tcp_receive`,
    /// `udp_receive`), which runs one receiver per VF.
    pub vfs: Option<u32>,
    /// Multi-queue virtio-net (`mq=on`, QEMU's `queues` on the tap; VIRTIO 1.1 §5.1.6.5.5):
    /// queue pairs, each its own device here, with its own TX and RX rings, its own vhost-net
    /// worker (QEMU opens one vhost device per queue pair), its own client flow, and an MSI-X
    /// vector per queue whose affinity is vCPU `i mod vcpus` (the guest driver's
    /// `virtnet_set_affinity`: queue pair i to the i-th online CPU). Absent: 1, QEMU's and
    /// libvirt's default. Only for `kind = "virtio"`, 1..=the VM's vCPUs (the Linux driver uses
    /// `min(max_queue_pairs, num_online_cpus)`), with vhost-net handling, and more than 1 only
    /// with a receive workload (`tcp_receive`, `udp_receive`), one receiver per queue pair: the
    /// tap steers each flow to the queue its receiver transmits its ACKs on (tun's automatic
    /// flow steering), the queue of its own vCPU (XPS).
    pub queues: Option<u32>,
}


/// `itr_us` as a scenario writes it.
fn ser_vf_itr<S: serde::Serializer>(v: &Option<VfItr>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        None => s.serialize_none(),
        Some(VfItr::Fixed(us)) => s.serialize_f64(*us),
        Some(VfItr::Dynamic) => s.serialize_str("dynamic"),
    }
}

/// `itr_us`: a number of µs or `"dynamic"`.
fn vf_itr<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<VfItr>, D::Error> {
    use serde::de::Error;
    match toml::Value::deserialize(d)? {
        toml::Value::Float(f) => Ok(Some(VfItr::Fixed(f))),
        toml::Value::Integer(i) => Ok(Some(VfItr::Fixed(i as f64))),
        toml::Value::String(s) if s == "dynamic" => Ok(Some(VfItr::Dynamic)),
        other => Err(D::Error::custom(format!("{other} is not allowed; expected an interval in µs or \"dynamic\""))),
    }
}

impl Default for Net {
    fn default() -> Self {
        Net {
            kind: NetKind::Virtio,
            itr_us: None,
            queue_size: default_queue_size(),
            vhost_pin: None,
            busyloop_timeout_us: 0,
            event_idx: None,
            moderation: Default::default(),
            offload: None,
            mtvd: false,
            vfs: None,
            queues: None,
        }
    }
}

impl Net {
    /// The offloads in effect: the table's, else all on (a VF: TSO and checksums by its NIC).
    pub fn offloads(&self) -> Offload {
        self.offload.unwrap_or_default()
    }

    /// The number of devices the VM has: its VFs (`vfs`, default 1), or its virtio-net queue
    /// pairs (`queues`, default 1).
    pub fn devices(&self) -> u32 {
        self.vfs.or(self.queues).unwrap_or(1)
    }

    /// The suppression scheme the device and driver use.
    pub fn suppression(&self) -> eventpath_policy::notify::Suppression {
        if self.event_idx.unwrap_or(true) {
            eventpath_policy::notify::Suppression::EventIdx
        } else {
            eventpath_policy::notify::Suppression::Flags
        }
    }
}

/// A scenario checked against its profile, ready to build a model from.
#[derive(Debug, Clone)]
pub struct Checked {
    /// The scenario as parsed, with run options applied.
    pub scenario: Scenario,
    /// Its profile.
    pub profile: Profile,
    /// pCPUs of the host.
    pub pcpus: u32,
    /// Cores of the client machine (`client.cores`, default one per device's flow: per VM, or
    /// per VF of a VM with several).
    pub client_cores: u32,
}

/// `[profile_overrides]` as (dotted key, value) pairs: sections are tables, parameters numbers.
fn flatten_overrides(prefix: &str, t: &toml::Table) -> Result<Vec<(String, f64)>, String> {
    let mut out = Vec::new();
    for (k, v) in t {
        let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
        if key == "host.cstates" || key.starts_with("host.cstates.") {
            return Err(format!(
                "key `profile_overrides.{key}`: the C-state table cannot be overridden in a scenario; write a profile file with its own [host.cstates] (profiles/README.md) and name it in `profile`, or set [host] idle = \"poll\" for no C-states"
            ));
        }
        match v {
            toml::Value::Table(sub) => out.extend(flatten_overrides(&key, sub)?),
            toml::Value::Integer(i) if !prefix.is_empty() => out.push((key, *i as f64)),
            toml::Value::Float(f) if !prefix.is_empty() => out.push((key, *f)),
            other if prefix.is_empty() => {
                return Err(format!(
                    "key `profile_overrides.{key}`: {} is not allowed; expected a table of the section's parameters ([profile_overrides.{key}] with KEY = value)",
                    shown(other)
                ))
            }
            other => {
                return Err(format!("key `profile_overrides.{key}`: {} is not allowed; expected a number in the parameter's unit", shown(other)))
            }
        }
    }
    Ok(out)
}

/// A TOML value as an error message shows it: short.
fn shown(v: &toml::Value) -> String {
    let s = v.to_string();
    if s.chars().count() <= 40 {
        s
    } else {
        format!("{}...", s.chars().take(37).collect::<String>())
    }
}

impl Scenario {
    /// Read and parse a scenario file.
    pub fn from_file(path: &str) -> InputResult<Scenario> {
        let text = std::fs::read_to_string(path).map_err(|e| InputError::ScenarioUnreadable {
            path: path.into(),
            reason: match e.kind() {
                std::io::ErrorKind::NotFound => "no such file".into(),
                _ => e.to_string(),
            },
        })?;
        Self::from_toml(path, &text)
    }

    /// Parse scenario text; `origin` names it in errors.
    pub fn from_toml(origin: &str, text: &str) -> InputResult<Scenario> {
        let de = toml::Deserializer::new(text);
        serde_path_to_error::deserialize(de).map_err(|e| InputError::Scenario {
            path: origin.into(),
            message: too_large::integer_too_large(e.inner(), text).unwrap_or_else(|| describe_toml_error(e.path(), e.inner(), text)),
        })
    }

    /// Parse a scenario given as JSON text (a Python dict); `origin` names it in errors, which
    /// are formatted as a file's are.
    pub fn from_json(origin: &str, text: &str) -> InputResult<Scenario> {
        let mut de = serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(&mut de)
            .map_err(|e| InputError::Scenario { path: origin.into(), message: describe_json_error(e.path(), e.inner()) })
    }

    /// Validate against the profile; `origin` names the scenario in errors.
    pub fn check(mut self, origin: &str) -> InputResult<Checked> {
        let err = |message: String| InputError::Scenario { path: origin.into(), message };
        limits::check_name("key `name`", &self.name).map_err(err)?;
        limits::check_duration("key `duration_s`", self.duration_s).map_err(err)?;
        limits::check_warmup("key `warmup_s`", self.warmup_s).map_err(err)?;
        let overrides = flatten_overrides("", &self.profile_overrides).map_err(err)?;
        let mut profile = Profile::load(&self.profile)?;
        // The scenario's NIC drivers first: `[profile_overrides]` values are checked against them.
        let drivers = [("host.nic_itr", self.host.nic_itr, &mut profile.host.nic_itr), ("client.nic_itr", self.client.nic_itr, &mut profile.client.nic_itr)];
        for (key, driver, choice) in drivers {
            if let Some(d) = driver {
                choice.source = format!("{key} = \"{}\" in scenario {origin} (profile: \"{}\")", d.name(), choice.value.name());
                choice.value = d;
            }
        }
        if let Some(q) = self.client.qdisc {
            profile.client.qdisc.source = format!("client.qdisc = \"{}\" in scenario {origin} (profile: \"{}\")", q.name(), profile.client.qdisc.value.name());
            profile.client.qdisc.value = q;
        }
        let switches = [("client.tso", self.client.tso, &mut profile.client.tso), ("client.tcp_autocorking", self.client.tcp_autocorking, &mut profile.client.tcp_autocorking)];
        for (key, given, switch) in switches {
            if let Some(t) = given {
                switch.source = format!("{key} = {t} in scenario {origin} (profile: {})", switch.value);
                switch.value = t;
            }
        }
        if let Err(m) = profile.check_nic_itr() {
            // Only a scenario's driver can fail here (a profile file is checked at load).
            let (key, d) = if m.contains("host.") { ("host.nic_itr", profile.host.nic_itr.value) } else { ("client.nic_itr", profile.client.nic_itr.value) };
            let rest = m.trim_start_matches("key `").replacen("`:", ":", 1);
            return Err(err(format!("key `{key}`: \"{}\" is not allowed with profile {}'s {rest}", d.name(), profile.name)));
        }
        let mut profile = profile.with_overrides(&overrides, origin).map_err(err)?;
        for vm in &mut self.vm {
            layout::fill_from_profile(vm, &profile);
            let stock = layout::default_delivery(vm, &profile, self.host.virtualization);
            vm.interrupt_delivery = vm.interrupt_delivery_written.unwrap_or(stock);
            vm.apic = vm.apic_written.resolve(layout::stock_ipiv(vm, &profile, self.host.virtualization));
        }
        if self.host.idle == IdlePolicy::Poll {
            // `idle=poll` bypasses cpuidle: the profile's C-states are never entered.
            profile.host.cstates.states.clear();
            profile.host.cstates.source = "none: scenario sets host.idle = \"poll\" (Linux idle=poll)".into();
        }
        // The profile's core count is bounded at load (cpu.sockets × cpu.cores_per_socket).
        let max = u32::try_from(profile.pcpus()).unwrap_or(u32::MAX);
        let pcpus = match self.host.pcpus {
            Some(n) if n == 0 || n > max => {
                return Err(err(format!("key `host.pcpus`: {n} is not allowed; profile {} has 1..={max} cores", profile.name)))
            }
            Some(n) => n,
            None => max,
        };
        if pcpus > limits::MAX_PCPUS {
            let most = limits::MAX_PCPUS;
            return Err(err(match self.host.pcpus {
                Some(_) => format!("key `host.pcpus`: {pcpus} is not allowed; the model supports 1..={most} pCPUs"),
                None => format!(
                    "key `host.pcpus`: absent, so all {pcpus} cores of profile {} (cpu.sockets x cpu.cores_per_socket), more than the model supports (1..={most} pCPUs); set host.pcpus to at most {most}",
                    profile.name
                ),
            }));
        }
        if self.host.cpu_hog.len() > limits::MAX_CPU_HOGS {
            return Err(err(format!(
                "key `host.cpu_hog`: {} hogs are not allowed; expected at most {}",
                self.host.cpu_hog.len(),
                limits::MAX_CPU_HOGS
            )));
        }
        let credit = self.host.scheduler == HostScheduler::XenCredit;
        match self.host.tslice_ms {
            Some(ms) if !credit => {
                return Err(err(format!(
                    "key `host.tslice_ms`: {ms} is not allowed with host.scheduler = \"cfs\"; it is Xen's credit time slice: set scheduler = \"xen_credit\" or omit the key"
                )))
            }
            Some(ms) if !limits::TSLICE_MS_RANGE.contains(&ms) => {
                return Err(err(format!("key `host.tslice_ms`: {ms} is not allowed; expected 1..=1000 ms (Xen's XEN_SYSCTL_CSCHED_TSLICE_MIN..=MAX)")))
            }
            _ => {}
        }
        if credit && self.host.virtualization == Virtualization::BareMetal {
            return Err(err("key `host.scheduler`: \"xen_credit\" is not allowed with host.virtualization = \"bare_metal\" (no hypervisor); use \"cfs\" or omit the key".into()));
        }
        for (h, hog) in self.host.cpu_hog.iter().enumerate() {
            match hog.nice {
                Some(n) if credit => {
                    return Err(err(format!(
                        "key `host.cpu_hog[{h}].nice`: {n} is not allowed with host.scheduler = \"xen_credit\"; Xen's credit scheduler has no nice (every thread has weight 256): omit the key"
                    )))
                }
                Some(n) if !(-20..=19).contains(&n) => {
                    return Err(err(format!("key `host.cpu_hog[{h}].nice`: {n} is not allowed; expected -20..=19")));
                }
                _ => {}
            }
            if let Some(pins) = &hog.pins {
                if pins.is_empty() {
                    return Err(err(format!("key `host.cpu_hog[{h}].pins`: [] is not allowed; give at least one pCPU or omit the key")));
                }
                if let Some(&p) = pins.iter().find(|&&p| p >= pcpus) {
                    return Err(err(format!(
                        "key `host.cpu_hog[{h}].pins`: pCPU {p} does not exist; the host has pCPUs 0..={}",
                        pcpus - 1
                    )));
                }
            }
        }
        if let Some(cpus) = &self.host.nic_irq_cpus {
            if cpus.is_empty() {
                return Err(err("key `host.nic_irq_cpus`: [] is not allowed; give at least one pCPU or omit the key".into()));
            }
            if let Some(&p) = cpus.iter().find(|&&p| p >= pcpus) {
                return Err(err(format!("key `host.nic_irq_cpus`: pCPU {p} does not exist; the host has pCPUs 0..={}", pcpus - 1)));
            }
        }
        if self.vm.is_empty() {
            return Err(err("key `vm`: no VM defined; add at least one [[vm]] table".into()));
        }
        if self.vm.len() > limits::MAX_VMS {
            return Err(err(limits::too_many_vms(self.vm.len(), pcpus)));
        }
        let total_vcpus: u64 = self.vm.iter().map(|v| v.vcpus as u64).sum();
        let mut names = std::collections::HashSet::new();
        for (i, vm) in self.vm.iter().enumerate() {
            let key = |k: &str| format!("vm[{i}].{k}");
            limits::check_name(&format!("key `{}`", key("name")), &vm.name).map_err(err)?;
            if !names.insert(vm.name.as_str()) {
                return Err(err(format!("key `{}`: name \"{}\" is used twice; VM names must be unique", key("name"), vm.name)));
            }
            if vm.vcpus == 0 {
                return Err(err(format!("key `{}`: 0 is not allowed; a VM needs at least 1 vCPU", key("vcpus"))));
            }
            if vm.vcpus > limits::MAX_VCPUS_PER_VM {
                return Err(err(format!(
                    "key `{}`: {} is not allowed; expected 1..={} vCPUs (KVM_MAX_VCPUS)",
                    key("vcpus"),
                    vm.vcpus,
                    limits::MAX_VCPUS_PER_VM
                )));
            }
            if total_vcpus > limits::MAX_VCPUS_TOTAL {
                return Err(err(format!(
                    "key `vm`: {total_vcpus} vCPUs in all are not allowed; expected at most {} over all VMs",
                    limits::MAX_VCPUS_TOTAL
                )));
            }
            if let Some(pins) = &vm.vcpu_pins {
                if pins.len() != vm.vcpus as usize {
                    return Err(err(format!(
                        "key `{}`: {} entries given; expected one pCPU per vCPU ({})",
                        key("vcpu_pins"), pins.len(), vm.vcpus
                    )));
                }
                for (j, &p) in pins.iter().enumerate() {
                    if p >= pcpus {
                        return Err(err(format!(
                            "key `{}[{j}]`: pCPU {p} does not exist; the host has pCPUs 0..={}",
                            key("vcpu_pins"), pcpus - 1
                        )));
                    }
                }
            }
            if let Some(n) = vm.memory_node {
                let nodes = if profile.numa.is_some() { profile.cpu.sockets.value as u32 } else { 1 };
                if n >= nodes {
                    return Err(err(format!(
                        "key `{}`: node {n} does not exist; profile {} has {} (one per socket: nodes 0..={}{})",
                        key("memory_node"), profile.name, if nodes == 1 { "one memory node".to_string() } else { format!("{nodes} memory nodes") }, nodes - 1,
                        if profile.numa.is_none() && profile.cpu.sockets.value > 1.0 { "; it declares no [numa] costs, so its sockets are one memory distance" } else { "" }
                    )));
                }
            }
            if let Some(p) = vm.net.vhost_pin {
                if p >= pcpus {
                    return Err(err(format!(
                        "key `{}`: pCPU {p} does not exist; the host has pCPUs 0..={}",
                        key("net.vhost_pin"), pcpus - 1
                    )));
                }
            }
            let q = vm.net.queue_size;
            if !(2..=32768).contains(&q) || !q.is_power_of_two() {
                return Err(err(format!(
                    "key `{}`: {q} is not allowed; expected a power of two in 2..=32768",
                    key("net.queue_size")
                )));
            }
            layout::check_device(vm, &key, &profile, self.host.virtualization, self.host.io.handling).map_err(err)?;
            layout::check_used(vm, &key, &self.host).map_err(err)?;
            if let Some(w) = &vm.workload {
                w.check(&key("workload")).map_err(err)?;
                if let Workload::IrqSource { vcpu, .. } = w {
                    if *vcpu >= vm.vcpus {
                        return Err(err(format!(
                            "key `{}`: vCPU {vcpu} does not exist; the VM has vCPUs 0..={}",
                            key("workload.vcpu"),
                            vm.vcpus.saturating_sub(1)
                        )));
                    }
                }
                if let Workload::IpiPingpong { to_vcpu, targets, .. } = w {
                    if *to_vcpu == 0 || *to_vcpu >= vm.vcpus {
                        return Err(err(format!(
                            "key `{}`: {to_vcpu} is not allowed; the IPI goes from vCPU 0 to another vCPU of the VM, 1..={} (a VM of at least 2 vCPUs)",
                            key("workload.to_vcpu"),
                            vm.vcpus.saturating_sub(1)
                        )));
                    }
                    if let Some(n) = *targets {
                        let most = vm.vcpus - to_vcpu;
                        if n == 0 || n > most {
                            return Err(err(format!(
                                "key `{}`: {n} is not allowed; the IPI goes to vCPUs {to_vcpu}.. of the VM's {}, so 1..={most}",
                                key("workload.targets"),
                                vm.vcpus
                            )));
                        }
                    }
                    if vm.guest_halt_poll.is_some() {
                        return Err(err(format!(
                            "key `{}`: the guest's halt polling sets the POLL flag, for which Linux sends no call-function IPI (send_call_function_single_ipi), and the model does not run the function from the idle loop; remove [{}] or use another workload",
                            key("guest_halt_poll"),
                            key("guest_halt_poll")
                        )));
                    }
                }
            }
            if let Some(h) = &vm.halt_poll {
                h.validate().map_err(|e| err(policy_error(&key("halt_poll"), &e)))?;
            }
            if let Some(h) = &vm.guest_halt_poll {
                eventpath_policy::guest_haltpoll::check(h).map_err(|e| err(policy_error(&key("guest_halt_poll"), &e)))?;
            }
            vm.net.moderation.validate().map_err(|e| err(policy_error(&key("net.moderation"), &e)))?;
        }
        for vm in &mut self.vm {
            layout::default_halt_poll(vm, &profile, self.host.virtualization);
        }
        xen::check(&self, &profile, pcpus).map_err(err)?;
        let pins: Vec<(usize, &[u32])> = self.vm.iter().enumerate().filter_map(|(i, v)| v.vcpu_pins.as_deref().map(|p| (i, p))).collect();
        self.host.io.check(pcpus, &pins).map_err(err)?;
        let vf_vms = self.vm.iter().filter(|v| v.net.kind.in_vf()).count();
        let vfs: u32 = self.vm.iter().filter(|v| v.net.kind.in_vf()).map(|v| v.devices()).sum();
        if let Some(sr) = &profile.sriov {
            if vfs as f64 > sr.max_vfs.value {
                let what = if vfs as usize == vf_vms {
                    format!("key `vm`: {vfs} VMs with net.kind = \"sriov_vf\" or \"vdpa\" are not allowed")
                } else {
                    format!("key `vm.net.vfs`: {vfs} VFs in all are not allowed")
                };
                return Err(err(format!("{what}; the {} of profile {} offers {} VFs", profile.nic.model, profile.name, sr.max_vfs.value)));
            }
        }
        if self.host.virtualization == Virtualization::BareMetal && self.host.io.handling != Handling::Vhost {
            return Err(err(format!(
                "key `host.io.handling`: \"{}\" is not allowed on a bare-metal host: it has no hypervisor I/O threads (its NIC is used directly); remove the key",
                self.host.io.handling.key()
            )));
        }
        if vf_vms == self.vm.len() && self.host.io.handling != Handling::Vhost {
            // An SR-IOV VF has no back end: a request handling that serves no device would be
            // accepted and ignored.
            return Err(err(format!(
                "key `host.io.handling`: \"{}\" has no effect here: every VM's [vm.net] kind is \"sriov_vf\" or \"vdpa\" (a hardware data path has no back end); omit [host.io] or give a VM a virtio device",
                self.host.io.handling.key()
            )));
        }
        if self.host.virtualization == Virtualization::BareMetal && self.vm.len() != 1 {
            return Err(err(format!(
                "key `host.virtualization`: bare_metal runs one OS, but {} [[vm]] tables are given; keep one",
                self.vm.len()
            )));
        }
        let client_cores = match self.client.cores {
            Some(n) if n == 0 || n > 1024 => {
                return Err(err(format!("key `client.cores`: {n} is not allowed; expected 1..=1024 cores")))
            }
            Some(n) => n,
            // One core per device's flow (a VM with several VFs has a flow per VF).
            None => self.vm.iter().map(|v| v.devices()).sum::<u32>().max(1),
        };
        Ok(Checked { scenario: self, profile, pcpus, client_cores })
    }
}
