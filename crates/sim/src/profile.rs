//! Profiles: named cost parameters and hardware facts, loaded from data files.
//!
//! Every value is written as `key = { value = N, unit = "...", source = "..." }` so the file
//! says where each number comes from (a seed's section, a measurement, or a first-principles
//! estimate). Costs never live in code. The built-in profiles are the files in `profiles/`,
//! compiled in so the binary needs no data directory; any other path is read from disk.
//! The format is documented in `profiles/README.md`.

use crate::error::{describe_toml_error, InputError, InputResult};
use eventpath_policy::moderation::NicItrDriver;
use serde::{Deserialize, Serialize};

mod base;

/// One parameter with its unit and provenance.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Param {
    /// The number.
    pub value: f64,
    /// Its unit, checked against the unit the model expects.
    pub unit: String,
    /// Where it comes from.
    pub source: String,
    /// Declared free for calibration (`eventpath calibrate`): the physically defensible range
    /// the fit may choose from; `value` is then the first-principles prior.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub free: Option<Free>,
    /// The plausible range of a value no fit sets (issue 47): what another kernel version, a
    /// cycle count's uncertainty or a datasheet's spread allows, with the reason.
    /// `eventpath sensitivity` screens it; the model reads only `value`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<Range>,
    /// Why a value has no range (issue 47: every value has a range, or is exact): a count or a
    /// setting of the testbed, a constant of the named kernel's code, a protocol's constant.
    /// `eventpath sensitivity` does not screen it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exact: Option<String>,
}

/// A parameter's plausible range: `min <= value <= max`, and why.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Range {
    /// Lowest plausible value.
    pub min: f64,
    /// Highest plausible value.
    pub max: f64,
    /// Where the range comes from.
    pub why: String,
}

/// A free parameter's range (issue 12): `min <= value <= max`, both inside the parameter's
/// allowed bounds.
#[derive(Debug, Clone, Copy, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Free {
    /// Lowest value the fit may choose.
    pub min: f64,
    /// Highest value the fit may choose.
    pub max: f64,
    /// The first-principles prior, once a calibration has replaced `value` by its fit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prior: Option<f64>,
}

/// Which interrupt throttle a NIC's driver runs, with its provenance (`host.nic_itr`,
/// `client.nic_itr`): `fixed` at the ITR key's interval, or the driver's adaptive ITR
/// (`ixgbe`, `i40e`; `eventpath_policy::moderation::nic_itr`) starting there.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ItrChoice {
    /// `fixed`, `ixgbe` or `i40e`.
    pub value: NicItrDriver,
    /// Where the choice comes from (the NIC and its driver).
    pub source: String,
}

/// The client's qdisc on each NIC TX queue, with its provenance (`client.qdisc`): the kernel's
/// `pfifo_fast` or the `fq_codel` distributions set (`hw/client_port.rs`).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct QdiscChoice {
    /// `pfifo_fast` or `fq_codel`.
    pub value: Qdisc,
    /// Where the choice comes from (the client's kernel and distribution).
    pub source: String,
}

/// The client's qdisc on each NIC TX queue (`client.qdisc`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Qdisc {
    /// One FIFO per queue, `txqueuelen` packets.
    PfifoFast,
    /// A flow queue per flow, served in turn; 10,240 packets.
    FqCodel,
}

impl Qdisc {
    /// Every choice as a file names it.
    pub const NAMES: [&'static str; 2] = ["pfifo_fast", "fq_codel"];

    /// The name a file gives it.
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

/// Which receive-buffer autotuning a guest's kernel runs, with its provenance
/// (`guest.tcp_rcvbuf_autotune`; `model/workload/rcvbuf.rs`).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AutotuneChoice {
    /// `off`, `double`, `steps` or `grow`.
    pub value: RcvbufAutotune,
    /// Where the choice comes from (the guest's kernel version).
    pub source: String,
}

/// The versions of Linux's `tcp_rcv_space_adjust` (`model/workload/rcvbuf.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RcvbufAutotune {
    /// `tcp_moderate_rcvbuf = 0`: the buffer stays at `tcp_rmem[1]`.
    Off,
    /// Space = 2 x the bytes copied per RTT; the clamp follows the space (2.6.17 .. 3.x).
    Double,
    /// 2 x copied + 16 MSS, x1.5 or x2 when the rate rose (as read at 4.4).
    Steps,
    /// 2 x copied + 16 MSS plus twice the rise's share, microsecond clock (as read at 6.1).
    Grow,
}

/// A feature a kernel or driver has or lacks, with its provenance (the version it came with).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Switch {
    /// On or off.
    pub value: bool,
    /// Where the choice comes from (the kernel's version, the driver and its defaults).
    pub source: String,
}

/// Whether the client's NIC takes TSO skbs (`client.tso`): on, a bulk sender's skb carries up
/// to `tcp_xmit_size_goal`'s whole segments; off, one MSS.
pub type TsoChoice = Switch;

/// A TCP sender's congestion control (`client.tcp_congestion`; `model/workload/cc.rs`).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CongestionChoice {
    /// `cubic` or `reno`.
    pub value: Congestion,
    /// Where the choice comes from (the kernel's default).
    pub source: String,
}

/// Linux's congestion-avoidance modules the model has (`tcp_cong.c`, `tcp_cubic.c`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Congestion {
    /// CUBIC (`tcp_cubic.c`), the default since Linux 2.6.19.
    Cubic,
    /// NewReno's additive increase and halving (`tcp_reno_cong_avoid`, `tcp_reno_ssthresh`).
    Reno,
}

/// How slow start grows a sender's window (`client.tcp_slow_start`).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SlowStartChoice {
    /// `per_ack` or `per_segment`.
    pub value: SlowStart,
    /// Where the choice comes from (the kernel's version).
    pub source: String,
}

/// The two versions of Linux's `tcp_slow_start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SlowStart {
    /// +1 segment per ACK (`cnt = snd_cwnd` per call; Linux to 3.x).
    PerAck,
    /// + the segments each ACK covers (`tcp_slow_start(tp, acked)`, Linux 4.0 and later).
    PerSegment,
}

/// Host hardware facts.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Cpu {
    /// CPU model name, as the testbed states it.
    pub model: String,
    /// Sockets (NUMA nodes).
    pub sockets: Param,
    /// Physical cores per socket (hyper-threads not counted).
    pub cores_per_socket: Param,
    /// Core clock.
    pub ghz: Param,
    /// The CPU has Intel IPI virtualization (1) or not (0): the tertiary VM-execution control
    /// of Sapphire Rapids and later (KVM uses it from Linux 5.19). Absent: not stated, taken as
    /// 0 — a scenario's `[vm.apic] ipiv` is then refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipiv: Option<Param>,
    /// The CPU has AMD AVIC (1) or not (0). Absent: 0 — `[vm.apic] avic` is then refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub avic: Option<Param>,
    /// The CPU has x2AVIC (1: Zen 4 and later) or not (0), which AVIC for a guest in x2APIC
    /// mode needs. Absent: 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x2avic: Option<Param>,
    /// The CPU has AMD erratum 1235 (1: Family 17h, Zen 1 and 2), for which KVM turns AVIC's
    /// IPI virtualization off (every ICR write exits). Absent: 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub avic_erratum_1235: Option<Param>,
}

/// The physical NIC and link.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Nic {
    /// NIC model name.
    pub model: String,
    /// Line rate.
    pub gbps: Param,
    /// MTU (IP packet size).
    pub mtu_bytes: Param,
    /// Ethernet overhead per frame on the wire: header, FCS, preamble, inter-frame gap.
    pub wire_overhead_bytes: Param,
    /// The qdisc limit in front of the port (`txqueuelen`): UDP frames beyond it are dropped.
    pub txqueuelen_packets: Param,
    /// The largest GSO skb the stack builds for a device with TCP segmentation offload
    /// (`gso_max_size`): the guest's virtio-net device and the host's NIC alike.
    pub gso_max_size_bytes: Param,
}

/// The NIC's SR-IOV side (absent: the NIC has no virtual functions). 82599-class VFs: an L2
/// sorter into per-VF rings, DMA into guest buffers, MSI-X per queue throttled by EITR.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Sriov {
    /// Virtual functions the NIC offers.
    pub max_vfs: Param,
    /// The VF driver's default interrupt throttle interval (ixgbevf's EITR setting).
    pub vf_itr_ns: Param,
    /// The largest interval the EITR register can hold.
    pub vf_itr_max_ns: Param,
    /// The shortest interval the EITR throttles to: the highest interrupt rate the NIC takes.
    pub vf_itr_min_ns: Param,
    /// From a frame's arrival at the port to its descriptor written back in the VF's ring
    /// (L2 sort, DMA, write-back).
    pub dma_ns: Param,
    /// The guest VF driver's MSI-X handler (ixgbevf `ixgbevf_msix_clean_rings`: mask, NAPI
    /// schedule).
    pub vf_irq_ns: Param,
}

/// Xen's hypervisor and dom0 (absent: the profile is a KVM host; `[host] virtualization =
/// "xen"` is then refused). The host's `exit.*` costs are Xen's HVM exits on this machine
/// (an FV guest's); this section holds what Xen's I/O paths add (`docs/model.md`, "Xen's I/O
/// paths").
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Xen {
    /// pCPUs dom0 runs on by default (the host's last ones; `[host] dom0_cpus` overrides).
    pub dom0_pcpus: Param,
    /// A PV guest's hypercall (`EVTCHNOP_send` on a netfront notify, `EVTCHNOP_bind_vcpu`
    /// on a vBalance rebinding): the trap into Xen, its work, the return; on the vCPU.
    pub hypercall_ns: Param,
    /// An event-channel upcall into a running PV vCPU: Xen's IPI traps its pCPU, Xen builds
    /// the upcall's bounce frame and returns into the guest's `xen_hypervisor_callback`
    /// (charged as the interrupt-delivery exit of an `evtchn` vCPU).
    pub evtchn_upcall_ns: Param,
    /// An FV guest's synchronous ioreq to QEMU in dom0, beyond the exit's own cost: Xen's
    /// event to dom0, QEMU woken in dom0, its register emulation, its reply, the vCPU resumed.
    /// The vCPU waits it out (charged as the exit's handling time).
    pub ioreq_ns: Param,
    /// QEMU's e1000 emulation per packet, on its dom0 thread (descriptor walk through the
    /// map cache, the copy, the tap write or the RX descriptor write-back, the IRQ assert).
    pub qemu_e1000_packet_ns: Param,
    /// netback's grant copy per packet (`GNTTABOP_copy` of the frame between dom0 and the
    /// guest, the grant's validation and the ring's response), on its dom0 kernel thread.
    pub netback_packet_ns: Param,
}

/// Direct cost of a VM exit by reason: exit + handling + re-entry, charged on the pCPU.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ExitCosts {
    /// PIO/MMIO kick through ioeventfd.
    pub io_instruction_ns: Param,
    /// From the start of that exit to KVM's `eventfd_signal` of the ioeventfd, which wakes the
    /// vhost thread (exit, decode, `kvm_io_bus_write`); at most the exit's length. 0: at its start.
    pub io_signal_ns: Param,
    /// Interrupt-delivery IPI exit (emulated LAPIC).
    pub interrupt_delivery_ns: Param,
    /// EOI write exit (emulated LAPIC).
    pub eoi_ns: Param,
    /// Host interrupt while in guest.
    pub external_interrupt_ns: Param,
    /// TMICT write / timer exit.
    pub timer_ns: Param,
    /// HLT exit (excluding the idle time that follows).
    pub hlt_ns: Param,
    /// EPT violation.
    pub ept_violation_ns: Param,
    /// Interrupt-window exit.
    pub interrupt_window_ns: Param,
    /// ICR write exit: the guest sends an IPI (APIC-access/APIC-write exit, kvm_apic_send_ipi).
    pub ipi_ns: Param,
    /// From the start of that exit to `kvm_apic_send_ipi` delivering the IPI; at most the exit's
    /// length. Applied to call-function and reschedule IPIs (`Irqs::resched_ipis`).
    pub ipi_send_ns: Param,
    /// Any other exit.
    pub other_ns: Param,
    /// Indirect cost of an exit as a multiple of its direct cost: extra guest time the next
    /// guest work needs to refill caches and TLBs that the exit's host code displaced, taken
    /// proportional to how much host work the exit did (charged to guest time, not to EHT; at
    /// most once between two guest runs: the latest exit's).
    pub indirect_per_direct: Param,
}

/// Host kernel costs.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct HostCosts {
    /// From an eventfd signal / vCPU kick to the sleeping thread running on an idle pCPU,
    /// *excluding* the exit from the pCPU's idle state (that is `cstates`).
    pub thread_wakeup_ns: Param,
    /// Half-width of the uniform spread of that wake-up latency.
    pub thread_wakeup_spread_ns: Param,
    /// From the expiry of a thread's own timed sleep (an ES2 joint thread's 10 µs sleeps) to
    /// the thread running on its idle pCPU (timer interrupt, idle exit, switch; no waker's IPI).
    pub timer_wakeup_ns: Param,
    /// A halted vCPU thread, switched in after its wake-up, to its VM entry beyond what a
    /// thread's wake-up and `exit.hlt_ns` already hold (kvm_vcpu_block's return, vcpu_load,
    /// the entry); 0 where those hold it all (a bare-metal host; a nested one pays more).
    pub halt_wakeup_ns: Param,
    /// KVM's default halt polling (`halt_poll_ns`, the module parameter's default of the
    /// profile's host kernel: x86 `KVM_HALT_POLL_NS_DEFAULT`): what a VM without
    /// `[vm.halt_poll]` gets (grow, grow start and shrink at the policy's defaults). Absent or
    /// 0: that kernel does not poll (KVM before Linux 4.0, Xen).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub halt_poll_ns: Option<Param>,
    /// Stock KVM runs its guests with APICv (1) or not (0): kvm_intel's `enable_apicv` at its
    /// default on this CPU (on since Linux 3.9 wherever the CPU has APIC-register
    /// virtualization, virtual-interrupt delivery and posted-interrupt processing, which KVM
    /// takes together: vmx.c `cpu_has_vmx_apicv`). A KVM VM without `interrupt_delivery` gets
    /// `posted` where it is 1. Absent or 0: the emulated LAPIC (older kernels, older CPUs, Xen).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apicv: Option<Param>,
    /// Stock KVM posts assigned devices' interrupts through the IOMMU (1: VT-d posted
    /// interrupts, used by Linux 4.4 and later wherever the IOMMU has the capability and APICv
    /// is on) or not (0). Where APICv is on and this is 0, an assigned device's interrupt still
    /// exits the vCPU it hits (DID §5.9's APICv server): such a VM's stock is `apicv`. Absent: 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vtd_posting: Option<Param>,
    /// Stock KVM turns IPI virtualization on (1) or not (0): kvm_intel's `enable_ipiv` at its
    /// default (true from Linux 5.19, the kernel that brought IPIv), used where the CPU has it
    /// (`cpu.ipiv`) and APICv is on. A VM with `posted` delivery and without `[vm.apic] ipiv`
    /// gets IPIv where this and `cpu.ipiv` are 1. Absent or 0: kernels before 5.19, or IPIv
    /// turned off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipiv: Option<Param>,
    /// A halt-polling vCPU thread that finds an interrupt pending: from the interrupt to the
    /// guest running its handler (the poll loop's exit, the injection, the VM entry); 0 where
    /// `exit.hlt_ns` holds it (a bare-metal host; a nested one pays tens of µs).
    pub halt_poll_wake_ns: Param,
    /// The pCPUs' idle states; an idle pCPU pays the exit latency of the state the idle
    /// governor chose before its woken thread runs. Absent or empty: no idle states (a
    /// measured `thread_wakeup_ns` that already includes them).
    #[serde(default)]
    pub cstates: CStates,
    /// From a frame's arrival at the host NIC to its skb on the tap/macvtap socket queue
    /// (NIC interrupt, host NAPI, bridge); runs on host cores the model does not charge.
    pub nic_rx_ns: Param,
    /// Half-width of the uniform spread of that path's latency per frame (at most `nic_rx_ns`).
    pub nic_rx_spread_ns: Param,
    /// The host NIC's receive interrupt throttle (ITR, ethtool `rx-usecs`): minimum gap between
    /// a queue's interrupts; frames inside it wait and are received together. 0: off. With
    /// an adaptive `nic_itr`, the interval it starts at (inside the driver's range).
    pub nic_rx_itr_ns: Param,
    /// The host NIC driver's throttle: fixed at `nic_rx_itr_ns`, or adaptive from there.
    pub nic_itr: ItrChoice,
    /// The host's transmit path below a kernel back end, per skb, in the back end's own
    /// context: the tap/macvtap side (`tun_get_user`/`macvtap_get_user`: skb allocation,
    /// virtio-net header, hand-off to the bridge or macvlan).
    pub tap_tx_ns: Param,
    /// The rest of that path, per skb: `dev_queue_xmit` (qdisc) and the physical NIC driver's
    /// transmit (descriptors, DMA mapping, the tail write).
    pub dev_xmit_ns: Param,
    /// The host NIC's interrupt work per interrupt of a queue, on the pCPU its IRQ affinity
    /// names (`host.nic_irq_cpus`): the hard IRQ, NAPI scheduling, `net_rx_action`'s poll
    /// entry and completion, the vector's re-enable.
    pub nic_irq_ns: Param,
    /// Per frame the host NIC receives for a virtio device, in that softirq: the driver's RX
    /// clean, GRO, `netif_receive_skb`, the bridge or macvlan, the tap enqueue and the back
    /// end's wake-up. (Its latency is inside `nic_rx_ns`; this is where its CPU goes.)
    pub nic_rx_frame_ns: Param,
    /// Of `nic_rx_frame_ns`, the part paid once per skb handed up the stack
    /// (`netif_receive_skb`, the bridge or macvlan, the tap enqueue and the back end's
    /// wake-up): a frame the host's GRO appends to a held skb pays only the rest.
    pub nic_rx_skb_ns: Param,
    /// Per skb the host NIC sent for a virtio device, in that softirq: the driver's TX clean
    /// (DMA unmap, skb free).
    pub nic_tx_clean_ns: Param,
}

/// The processor idle states of the host (`intel_idle` tables, or a nested host's probed
/// wake-up curve) with their provenance and the governor that picks among them
/// (`eventpath_policy::idle`).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CStates {
    /// Where the table comes from.
    pub source: String,
    /// The idle governor: `menu` (default; the deepest state that fits the predicted idle) or
    /// `haltpoll` (state 0 a poll of an adaptive window, states 1.. the halt's outcomes by the
    /// halt's length: a guest-style host whose halt goes to an outer hypervisor that polls).
    #[serde(default)]
    pub governor: eventpath_policy::idle::GovernorKind,
    /// haltpoll's module parameters (only with `governor = "haltpoll"`; absent: Linux's defaults).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub haltpoll: Option<eventpath_policy::idle::HaltpollConfig>,
    /// Shallowest first (increasing target residency).
    pub states: Vec<CState>,
}

/// One idle state: how long leaving it takes and how long an idle period must be to pay.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CState {
    /// Name (C1, C1E, C3, C6, ...).
    pub name: String,
    /// Worst-case wake-up latency (`exit_latency`).
    pub exit_latency_ns: f64,
    /// Shortest idle period worth entering it (`target_residency`); under haltpoll, for the
    /// halt states, the shortest halt that ends in it (the outer hypervisor's poll window).
    pub target_residency_ns: f64,
    /// CPU per wake-up from this state: what the woken thread spends, beyond a wake-up from
    /// a shallow state, before its first work (charged as its run time). Absent: 0.
    #[serde(default)]
    pub wake_cpu_ns: f64,
}

/// Host scheduler (CFS) tunables and costs. The three CFS times are Linux's *unscaled*
/// defaults; the model scales them by 1 + log2(min(ncpus, 8)) as `update_sysctl` does.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SchedCosts {
    /// `sysctl_sched_latency` before scaling: the period in which every runnable thread runs once.
    pub latency_ns: Param,
    /// `sysctl_sched_min_granularity` before scaling: the shortest slice.
    pub min_granularity_ns: Param,
    /// `sysctl_sched_wakeup_granularity` before scaling: the vruntime lead a woken thread needs
    /// to preempt the running one.
    pub wakeup_granularity_ns: Param,
    /// Host CONFIG_HZ: the scheduler tick.
    pub tick_hz: Param,
    /// Direct cost of switching from one thread to another on a pCPU.
    pub context_switch_ns: Param,
    /// Extra cost of a thread's first run after it moved to another pCPU (cache refill).
    pub migration_ns: Param,
    /// Minimum interval between periodic load balancing of a pCPU (`sd->min_interval`).
    pub balance_interval_ns: Param,
    /// `sd->busy_factor`: a busy pCPU balances this many times less often.
    pub busy_factor: Param,
    /// `sysctl_sched_migration_cost`: cache-hotness threshold of load balancing (`task_hot`)
    /// and the average idle time below which a pCPU does not idle-balance.
    pub migration_cost_ns: Param,
}

/// Host I/O thread (vhost) costs.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Vhost {
    /// Per transmitted packet: descriptor fetch, copy set-up, hand-off to the NIC path.
    pub tx_packet_ns: Param,
    /// Per transmitted byte (copy).
    pub tx_byte_ns: Param,
    /// Per received packet: socket dequeue, copy into the guest's RX buffer, used-ring update.
    pub rx_packet_ns: Param,
    /// Per received byte (copy).
    pub rx_byte_ns: Param,
    /// Packets handled before the handler yields (vhost-net weight).
    pub weight_packets: Param,
    /// Bytes handled before the handler yields, whichever limit comes first (vhost-net's byte
    /// weight); 0: no byte limit.
    pub weight_bytes: Param,
    /// One look at a virtqueue that finds it empty, by a thread that polls it (ES2's polling
    /// handlers, ELVIS's poll queue): the ring index read from another core and the handler
    /// dispatch. A look that finds work is paid by the packets' costs.
    pub poll_ns: Param,
    /// An I/O thread that serves several VMs moving from one VM's queue to another's: "a change
    /// of page table" (ELVIS §3), so that it can reach the other guest's rings.
    pub queue_switch_ns: Param,
    /// CPU a back-end thread (vhost, shared I/O thread) spends after each wake-up before its
    /// first item: back from its wait, reading the eventfd; 0 where `sched.context_switch_ns`,
    /// charged at every switch-in, holds it (a bare-metal host; a nested one pays more).
    pub wakeup_ns: Param,
    /// The same for a shared I/O thread back from one of its own timed sleeps (ES2's 10 µs
    /// sleeps): arming the timer, its expiry, the switches; 0 where `sched.context_switch_ns`
    /// holds it (a nested host pays tens of µs: its timer programming exits to the hypervisor).
    pub timed_sleep_ns: Param,
}

/// Guest kernel costs.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Guest {
    /// Per UDP datagram sent: syscall, UDP/IP, virtio-net xmit.
    pub udp_tx_packet_ns: Param,
    /// Per byte sent (copy from user).
    pub udp_tx_byte_ns: Param,
    /// Per TCP `write()`: syscall, skb append, tcp_push (Nagle check).
    pub tcp_write_ns: Param,
    /// Per byte written (copy from user).
    pub tcp_tx_byte_ns: Param,
    /// Per TCP skb transmitted (one segment, or a TSO skb of many): tcp_transmit_skb, IP
    /// output, virtio-net start_xmit.
    pub tcp_tx_segment_ns: Param,
    /// Per byte checksummed in software (`csum_partial`): a guest TX skb where the device has
    /// no checksum offload (`[vm.net.offload] csum = false`), and the host's tap path for a
    /// guest without `guest_csum`.
    pub csum_byte_ns: Param,
    /// Per received ACK in NAPI: netif_receive_skb, IP, tcp_ack, RX buffer refill.
    pub tcp_rx_ack_ns: Param,
    /// Per TCP data segment received in NAPI: IP, tcp_v4_rcv, socket enqueue, RX buffer refill.
    pub tcp_rx_segment_ns: Param,
    /// Per TCP payload byte the application receives: `copy_to_user` in its recv() (charged
    /// once, in the reader's step; NAPI does not touch the payload, whose checksum the device
    /// verifies).
    pub tcp_rx_byte_ns: Param,
    /// Per data packet the guest's GRO appends to a held skb (instead of
    /// `tcp_rx_segment_ns`): the driver's receive of its buffer, the GRO flow match and
    /// append, the buffer's refill.
    pub gro_segment_ns: Param,
    /// Per receive buffer of a packet beyond its first (mergeable RX buffers, a GSO skb into
    /// the guest): the driver's `virtqueue_get_buf`, the page frag added to the skb, the
    /// buffer's refill.
    pub rx_buffer_ns: Param,
    /// MTVD's dispatcher (`[vm.net] mtvd`): handing one received packet to a worker thread's
    /// queue on another vCPU (the queue's lock, the list add, the wake-up check), charged to
    /// the NAPI poll instead of the stack's receive, which the worker pays.
    pub rx_dispatch_ns: Param,
    /// Per TCP connection a server accepts and closes, beyond its packets: request sock on the
    /// SYN, child socket, `accept()`, `close()`, TIME_WAIT (charged on the SYN).
    pub tcp_conn_ns: Param,
    /// Per `read()`/`recv()` of a request by a TCP server application (syscall, dequeue, copy set-up).
    pub tcp_read_ns: Param,
    /// Per UDP datagram received in NAPI: IP/UDP receive, socket enqueue, RX buffer refill.
    pub udp_rx_packet_ns: Param,
    /// Per UDP byte received in NAPI.
    pub udp_rx_byte_ns: Param,
    /// Per `recvfrom()` of one datagram by the application (syscall, copy set-up).
    pub udp_recv_ns: Param,
    /// UDP socket receive buffer (rmem_default), charged per datagram as payload + skb overhead.
    pub udp_rcvbuf_bytes: Param,
    /// TCP receive-buffer autotuning of the guest's kernel (`tcp_moderate_rcvbuf` and its
    /// `tcp_rcv_space_adjust`).
    pub tcp_rcvbuf_autotune: AutotuneChoice,
    /// `tcp_rmem[1]`: a TCP socket's initial receive buffer, bytes of memory.
    pub tcp_rmem_default_bytes: Param,
    /// `tcp_rmem[2]`: the largest receive buffer autotuning may reach.
    pub tcp_rmem_max_bytes: Param,
    /// `tcp_adv_win_scale`: a buffer of `s` bytes advertises `s - s >> scale` (a negative
    /// scale: `s >> -scale`).
    pub tcp_adv_win_scale: Param,
    /// Per NAPI poll round (virtnet_poll entry/exit, napi_complete, re-enable callbacks).
    pub napi_poll_ns: Param,
    /// Packets per NAPI poll round (the NAPI weight).
    pub napi_weight: Param,
    /// Periodic scheduler tick of a busy vCPU (CONFIG_HZ); stopped while idle (NO_HZ).
    pub tick_hz: Param,
    /// Guest timer interrupt handler (tick or hrtimer).
    pub timer_irq_ns: Param,
    /// Guest virtio-net interrupt handler (vring_interrupt, schedule the queue's work).
    pub virtio_irq_ns: Param,
    /// Waking a task blocked in the guest and switching to it, up to its return to user space.
    pub task_wakeup_ns: Param,
    /// Per request of the KVM testbed's guest loop (`request_stream`): build a descriptor,
    /// publish, reap its completion, record its latency.
    pub request_ns: Param,
}

/// The remote client machine.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Client {
    /// Client CPU per received packet (its receive path); one core, FIFO.
    pub rx_packet_ns: Param,
    /// The client NIC's receive interrupt throttle (ITR, ethtool `rx-usecs`): minimum gap
    /// between a queue's interrupts; frames inside it are received by one NAPI poll and GRO
    /// merges a flow's segments (one ACK decision per batch). 0: off, no batching. With an
    /// adaptive `nic_itr`, the interval it starts at (inside the driver's range).
    pub rx_itr_ns: Param,
    /// The client NIC driver's throttle: fixed at `rx_itr_ns`, or adaptive from there.
    pub nic_itr: ItrChoice,
    /// The qdisc on each of the client NIC's TX queues (`hw/client_port.rs`).
    pub qdisc: QdiscChoice,
    /// Full-sized segments received per delayed ACK.
    pub delack_segments: Param,
    /// Delayed-ACK timeout for a segment left unacknowledged.
    pub delack_timeout_ns: Param,
    /// Client CPU per request of a closed-loop load generator (memaslap, ab, netperf TCP_RR):
    /// build the request, send() through its TCP stack; on the same core as its receive path.
    pub request_ns: Param,
    /// Socket send buffer of an open-loop UDP source: it blocks while this many of its bytes
    /// wait for the link.
    pub udp_sndbuf_bytes: Param,
    /// TCP small queues of a bulk TCP sender on the client: it stops queueing segments while
    /// this many of its bytes wait for the link (Linux `tcp_limit_output_bytes`).
    pub tsq_limit_bytes: Param,
    /// A closed-loop UDP request/response client resends its request after this long without
    /// the response.
    pub udp_rr_timeout_ns: Param,
    /// A load generator that forks a process per client (webbench) starts them this far apart:
    /// client `c`'s first request goes out `c` times this after the first's.
    pub fork_ns: Param,
    /// The client kernel's initial retransmission timeout of a SYN (`TCP_TIMEOUT_INIT`): a SYN
    /// lost at a full ring is resent this long after it went out (3 s to Linux 3.0, 1 s since
    /// 3.1's RFC 6298 change).
    pub tcp_syn_rto_ns: Param,
    /// The congestion control of a bulk TCP sender into the guest (`tcp_receive`'s client).
    pub tcp_congestion: CongestionChoice,
    /// How its slow start grows the window.
    pub tcp_slow_start: SlowStartChoice,
    /// Its initial congestion window, segments (`TCP_INIT_CWND`: 10 since 2.6.39; RFC 3390's 3
    /// before, for a 1,448-byte MSS).
    pub tcp_init_cwnd: Param,
    /// A bulk sender's CPU per `write()`/`send()` call (netperf `-m`): the system call and the
    /// socket's per-call work (`model/workload/tcp_rx.rs`, `udp_rx.rs`).
    pub send_call_ns: Param,
    /// Its CPU per byte written: the copy into the socket's skbs.
    pub tx_byte_ns: Param,
    /// Its CPU per skb sent down the stack to the NIC (a TSO skb of many segments, one MSS
    /// without TSO, one IP fragment of a datagram).
    pub tx_skb_ns: Param,
    /// TSO on the client's NIC (`SizeGoal`, `model/guest/tso.rs`).
    pub tso: TsoChoice,
    /// The client kernel's TCP autocorking (`net.ipv4.tcp_autocorking`, Linux 3.14): a small
    /// write's push waits while the socket's earlier skbs are still in the qdisc or the NIC,
    /// so its bytes join the tail skb up to the size goal; without it each `write()` pushes
    /// its whole segments at once (`model/workload/tcp_rx.rs`).
    pub tcp_autocorking: Switch,
}

/// Guest server applications: CPU per request beyond the kernel's TCP path.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct App {
    /// memcached get: parse, hash the key, look up the item, build the response iovec.
    pub memcached_get_ns: Param,
    /// memcached set: parse, allocate a slab item, copy the value, hash and LRU link.
    pub memcached_set_ns: Param,
    /// Apache, one static-file request: parse headers, map to the file, open/stat,
    /// build headers, log.
    pub http_request_ns: Param,
    /// nginx, one static-file request (event loop, open-file cache, sendfile).
    pub nginx_request_ns: Param,
    /// A SPECweb2009-Banking-like light request's server CPU (static page or image over a
    /// kept-alive HTTPS connection: TLS records and the web server's handling).
    pub specweb_light_ns: Param,
    /// A heavy one's (a dynamic PHP page built from a back-end reply, TLS included).
    pub specweb_heavy_ns: Param,
}

/// A complete profile.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Short name (`es2`, `elvis`, ...).
    pub name: String,
    /// One line: what testbed this is.
    pub description: String,
    /// Where the testbed is described.
    pub source: String,
    /// CPU facts.
    pub cpu: Cpu,
    /// NIC facts.
    pub nic: Nic,
    /// Exit costs.
    pub exit: ExitCosts,
    /// Host kernel costs.
    pub host: HostCosts,
    /// Host scheduler.
    pub sched: SchedCosts,
    /// vhost costs.
    pub vhost: Vhost,
    /// Guest costs.
    pub guest: Guest,
    /// Remote client.
    pub client: Client,
    /// Guest server applications (added with the TCP request/response workloads).
    pub app: App,
    /// SR-IOV virtual functions of the NIC, if it has them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sriov: Option<Sriov>,
    /// Xen's hypervisor and dom0, if the profile is a Xen host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xen: Option<Xen>,
    /// The host kernel's own work on every pCPU and the order its VMs started in (issue 48:
    /// hosts as they run, not in lock-step). Absent: a perfectly quiet host whose VMs all
    /// start at 0 (a probed profile, whose testbed twins start that way).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub housekeeping: Option<Housekeeping>,
    /// What a back end pays for a VM's memory on another socket (issue 48 item 5:
    /// `model/io/queues.rs`). Absent: one memory distance (a one-socket host, or a profile
    /// that declares no remote cost; its `vm.memory_node` is refused above node 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numa: Option<Numa>,
    /// A VM's virtio-blk disk over a host RAM disk (issue 51: the block workloads, fio and
    /// filebench). Absent: the profile has no block device (its block workloads are refused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blk: Option<Blk>,
    /// An NVMe-like device a block workload's VM may have assigned (`[vm.disk] kind = "nvme"`;
    /// issue 51). Absent: the profile has no such device (the key is refused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvme: Option<NvmeDev>,
}

/// The NVMe-like device's service (`[nvme]`, `model/hw/nvme.rs`): how long the controller
/// takes to serve one command, how many it serves at once, how deep each queue is.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NvmeDev {
    /// Mean service time of a read command (the media's read and the data's DMA to the host
    /// for a 4 KB block; a larger block adds `byte_ns` per byte beyond 4 KB).
    pub read_ns: Param,
    /// Mean service time of a write command (into the controller's power-protected write
    /// buffer).
    pub write_ns: Param,
    /// The coefficient of variation of a command's service time (a shifted exponential of
    /// that mean and this spread; 0: every command takes the mean).
    pub service_cv: Param,
    /// The PCIe link's transfer per byte beyond a 4 KB block.
    pub byte_ns: Param,
    /// Commands the controller serves at once (its channels and dies in parallel): the device's
    /// IOPS ceiling is `units / read_ns`.
    pub units: Param,
    /// Entries per I/O submission queue (Linux nvme's `io_queue_depth`, capped by the
    /// controller's CAP.MQES).
    pub queue_depth: Param,
}

/// The virtio-blk disk's costs (`[blk]`, `model/workload/fio.rs`, `io/queues.rs`): what the
/// guest pays per request, what its back end pays per request by kind, and the RAM disk's own
/// work and copy.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Blk {
    /// The guest's submission of one O_DIRECT request (the application's own work for it, the
    /// system call, the block layer, virtio-blk's `queue_rq`).
    pub submit_ns: Param,
    /// The guest's completion of one request (virtblk_done's per-request work, the request's
    /// end, the system call's return into the application); the thread's wake-up is
    /// `guest.task_wakeup_ns`.
    pub complete_ns: Param,
    /// QEMU's virtio-blk serving one request in its event loop (vhost handling: the stock
    /// back end, mainline Linux having no in-kernel vhost-blk), the host system call into the
    /// backing device included.
    pub qemu_request_ns: Param,
    /// An in-kernel back end serving one request (ELVIS's I/O cores).
    pub kernel_request_ns: Param,
    /// A poll-mode user-space target serving one request (SPDK's vhost-user-blk; PMD handling).
    pub spdk_request_ns: Param,
    /// The RAM disk's own work per request (its page lookups).
    pub ramdisk_request_ns: Param,
    /// The RAM disk's copy between its pages and guest memory, per byte.
    pub ramdisk_byte_ns: Param,
    /// Descriptors per request queue (QEMU's `queue-size` default at the profile's version).
    pub queue_size: Param,
}

/// Remote-memory costs (`[numa]`): the pCPUs of socket `s` are `s × cpu.cores_per_socket`
/// onwards, each socket one memory node. A back end's item of a VM whose memory is on another
/// node than the back end's pCPU pays, beyond its local cost, `ring_lines_per_packet` dependent
/// accesses at `remote_line_ns` each and, per 64-byte line of the packet it copies from or to
/// guest memory, `remote_copy_line_ns`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Numa {
    /// One dependent cache-line access served from the other socket (its memory, or a line
    /// its cache holds), over a local one.
    pub remote_line_ns: Param,
    /// Such accesses a back end makes per packet in the guest's rings (virtqueue indices,
    /// ring entries, descriptors, the used element).
    pub ring_lines_per_packet: Param,
    /// One 64-byte line of a copy between guest memory on the other socket and local memory,
    /// over the same line copied locally (a streaming copy: bandwidth, not latency, bound).
    pub remote_copy_line_ns: Param,
}

impl Numa {
    /// What `pkts` packets of `bytes` in all cost one side of a ring beyond their local cost
    /// when their lines come from the other socket: each packet's ring accesses, its
    /// payload's 64-byte lines and one line of headers (the virtio-net header and the frame's).
    pub fn cross_ns(&self, pkts: u32, bytes: u32) -> f64 {
        f64::from(pkts) * self.ring_lines_per_packet.value * self.remote_line_ns.value
            + self.remote_copy_line_ns.value * f64::from(bytes.div_ceil(64) + pkts)
    }
}

/// The host's housekeeping and start order (`[housekeeping]`; `model/hypervisor/kthread.rs`,
/// `model/build.rs`).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
///
/// The first four keys are a Linux host's (its tick and kernel threads), used only on a host
/// scheduled by CFS: a Xen host's profile (one with `[xen]`) leaves them out, as its guests'
/// pCPUs run no Linux (Xen's timers are its own; dom0's kernel threads run on dom0's pCPUs),
/// and every other profile must give them. The two spreads apply under either scheduler.
pub struct Housekeeping {
    /// The host tick's own work on a pCPU that runs a thread (`tick_sched_timer`:
    /// `update_process_times`, `scheduler_tick`, the RCU check, the timer softirq's raise);
    /// a vCPU in guest mode takes it as an external-interrupt exit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tick_ns: Option<Param>,
    /// Ticks of different pCPUs offset from each other (1: `tick_setup_sched_timer` spreads
    /// them over half a tick, Linux before 2.6.37 or `skew_tick=1`) or aligned (0: the
    /// default since 2.6.37).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tick_skew: Option<Param>,
    /// Each pCPU's per-CPU kernel threads (kworker, watchdog) wake on average this far apart
    /// on a busy pCPU, each at its own phase; 0: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kthread_interval_ns: Option<Param>,
    /// What one such wake-up runs on its pCPU (beside the two context switches it causes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kthread_ns: Option<Param>,
    /// The VMs start at offsets drawn uniformly over this span, each from its own random
    /// stream. Both spans together fall in the first half of the warm-up (scaled down where they do not fit): a
    /// scenario without one starts every thread at 0.
    pub vm_boot_spread_ns: Param,
    /// Each of a VM's vCPU threads starts at the VM's offset plus its own draw over this span
    /// (by the time a workload runs, each has slept and woken at its own guest's timers).
    pub vcpu_start_spread_ns: Param,
}

impl Housekeeping {
    /// The Linux host's keys, by name (absent in a Xen host's profile).
    pub fn linux_keys(&self) -> [(&'static str, Option<&Param>, &'static str); 4] {
        [
            ("housekeeping.tick_ns", self.tick_ns.as_ref(), "ns"),
            ("housekeeping.tick_skew", self.tick_skew.as_ref(), "bool"),
            ("housekeeping.kthread_interval_ns", self.kthread_interval_ns.as_ref(), "ns"),
            ("housekeeping.kthread_ns", self.kthread_ns.as_ref(), "ns"),
        ]
    }
}

/// Longest time any one parameter may give, ns: a second. No single operation, latency or
/// timer of the model comes near it (the longest, the 40 ms delayed-ACK timeout, is 25x
/// shorter), and a bounded cost keeps every `now + cost` far inside u64 nanoseconds.
const MAX_NS: f64 = 1e9;

/// Most idle states (`host.cstates.states`) a profile may list.
pub const MAX_CSTATES: usize = eventpath_policy::idle::MAX_STATES;

/// The range a profile parameter may take, with the reason shown in the error.
struct Bounds {
    lo: f64,
    hi: f64,
    whole: bool,
    why: &'static str,
}

impl Bounds {
    /// By key where a parameter has its own physical range, else by unit. Every bound is what
    /// a real system can have; a value outside would make the model divide by zero, wrap a
    /// counter, or schedule events 0 ns apart (a run that never ends).
    fn of(key: &str, unit: &str) -> Bounds {
        let b = |lo, hi, whole, why| Bounds { lo, hi, whole, why };
        match key {
            "cpu.sockets" => b(1.0, 16.0, true, "the largest servers have 16 sockets"),
            "cpu.cores_per_socket" => b(1.0, 512.0, true, "cores of one CPU package"),
            "cpu.ipiv" | "cpu.avic" | "cpu.x2avic" => b(0.0, 1.0, true, "a CPU feature: 0 (absent) or 1 (present)"),
            "cpu.avic_erratum_1235" => b(0.0, 1.0, true, "a CPU erratum: 0 (absent) or 1 (present)"),
            "nic.mtu_bytes" => b(68.0, 65535.0, true, "IPv4's minimum MTU (RFC 791) to the largest IP packet"),
            "nic.wire_overhead_bytes" => b(0.0, 1024.0, true, "framing bytes per packet; Ethernet's are 38"),
            "nic.gso_max_size_bytes" => b(1500.0, 524288.0, true, "GSO_MAX_SIZE 64 KiB to BIG TCP's 512 KiB"),
            "sched.min_granularity_ns" => b(1.0, MAX_NS, true, "CFS's shortest slice; a 0 ns slice never ends a turn"),
            "sched.busy_factor" => b(1.0, 1024.0, true, "sd->busy_factor; Linux uses 16-32"),
            "vhost.poll_ns" => b(1.0, MAX_NS, false, "a look at a ring reads memory; 0 ns would let a polling thread loop at one instant"),
            "vhost.weight_packets" | "guest.napi_weight" => b(1.0, 1e6, true, "packets per handler turn; Linux uses 64-256"),
            "client.delack_segments" => b(1.0, 1024.0, true, "segments per delayed ACK; Linux ACKs every 2nd"),
            "nic.txqueuelen_packets" => b(1.0, 1e6, true, "the qdisc limit; Linux's default is 1000"),
            "host.halt_poll_ns" => b(0.0, 4_294_967_295.0, true, "halt_poll_ns, an unsigned int of ns; 0 does not poll"),
            "host.apicv" | "host.vtd_posting" | "host.ipiv" => b(0.0, 1.0, true, "a stock kernel setting: 0 (off) or 1 (on)"),
            "sriov.max_vfs" => b(1.0, 256.0, true, "PCIe SR-IOV: at most 256 functions per device"),
            "sriov.vf_itr_ns" | "sriov.vf_itr_max_ns" | "sriov.vf_itr_min_ns" => b(1.0, MAX_NS, false, "an interrupt interval; 0 would not throttle"),
            "guest.tcp_rmem_default_bytes" | "guest.tcp_rmem_max_bytes" => b(4096.0, 2_147_483_647.0, true, "a TCP socket's buffer: at least a page, at most the largest int"),
            "guest.tcp_adv_win_scale" => b(-31.0, 31.0, true, "Linux's tcp_adv_win_scale range"),
            "guest.udp_rcvbuf_bytes" => b(2304.0, 2_147_483_647.0, true, "Linux SOCK_MIN_RCVBUF to the largest int"),
            "client.udp_sndbuf_bytes" => b(1.0, 2_147_483_647.0, true, "a socket buffer; Linux's default is 212992"),
            "client.tsq_limit_bytes" => b(1.0, 2_147_483_647.0, true, "a per-socket byte limit; Linux's default is 262144"),
            "client.udp_rr_timeout_ns" => b(1.0, MAX_NS, true, "a resend timer; 0 ns would resend at one instant forever"),
            "client.fork_ns" => b(0.0, 1e9, true, "a fork() of the client's load generator"),
            "client.tcp_init_cwnd" => b(1.0, 1024.0, true, "segments in the first window; Linux uses 3 or 10"),
            "client.tx_skb_ns" => b(1.0, MAX_NS, false, "an skb's way to the NIC; 0 ns would let an unpaced sender loop at one instant"),
            "client.tcp_syn_rto_ns" => b(1e6, 120e9, true, "an RTO: at least a millisecond, at most Linux's TCP_RTO_MAX of 120 s"),
            "xen.dom0_pcpus" => b(1.0, 511.0, true, "dom0 needs a pCPU and leaves one to the guests"),
            "housekeeping.tick_skew" => b(0.0, 1.0, true, "0 (aligned ticks) or 1 (skewed)"),
            "housekeeping.kthread_interval_ns" => b(0.0, 60e9, false, "0 (none) to a minute"),
            "housekeeping.kthread_ns" => b(0.0, 500_000.0, false, "a kernel work item of up to half a millisecond (its thread wakes at most every millisecond)"),
            "housekeeping.tick_ns" => b(0.0, 50_000.0, false, "a tick's own work, at most half the shortest tick period (10 kHz)"),
            "housekeeping.vm_boot_spread_ns" => b(0.0, 10e9, false, "VMs started within ten seconds"),
            "numa.remote_line_ns" => b(0.0, 1000.0, false, "a remote access costs at most a microsecond more than a local one"),
            "numa.remote_copy_line_ns" => b(0.0, 200.0, false, "a 64-byte line copied across sockets at no less than 0.3 GB/s"),
            "numa.ring_lines_per_packet" => b(0.0, 64.0, false, "ring accesses of one packet"),
            "blk.queue_size" => b(2.0, 32768.0, true, "a split virtqueue of 2 to 32768 descriptors (VIRTIO 1.1 §2.6)"),
            "nvme.queue_depth" => b(2.0, 65536.0, true, "an NVMe I/O queue of 2 to 65536 entries (NVMe 1.4 CAP.MQES)"),
            "nvme.units" => b(1.0, 4096.0, true, "commands served at once: at least one"),
            "nvme.service_cv" => b(0.0, 1.0, false, "a shifted exponential's spread: 0 (constant) to 1 (exponential)"),
            "nvme.read_ns" | "nvme.write_ns" => b(1.0, 1e8, false, "a command's service: more than nothing, under 100 ms"),
            _ => match unit {
                "ns" => b(0.0, MAX_NS, false, "at most a second"),
                // A tick ≤ 100 µs apart would cost more than it measures; Linux CONFIG_HZ is
                // 100..=1000, and a 0 ns tick period would never let simulated time advance.
                "Hz" => b(1.0, 10_000.0, true, "CONFIG_HZ is 100..=1000; 10 kHz is a 100 µs tick"),
                "GHz" => b(0.1, 10.0, false, "a CPU clock"),
                "Gbit/s" => b(1.0, 1000.0, false, "1 GbE to 800 GbE"),
                "ratio" => b(0.0, 100.0, false, "a multiple of a cost"),
                "bytes" => b(0.0, 2_147_483_647.0, true, "a kernel buffer size is an int"),
                _ => b(0.0, 1e6, true, "a count"),
            },
        }
    }
}

/// Parameters bounded by another of the profile: (key, its bound's key, why). The model reads
/// each pair as one quantity, so a value beyond its bound is refused, never clamped.
pub const NOT_ABOVE: [(&str, &str, &str); 5] = [
    ("exit.io_signal_ns", "exit.io_instruction_ns", "the ioeventfd is signalled within the kick's exit"),
    ("exit.ipi_send_ns", "exit.ipi_ns", "the IPI is sent within the ICR write's exit"),
    ("host.thread_wakeup_spread_ns", "host.thread_wakeup_ns", "the half-width of the wake-up's uniform spread; a wider one would make a wake-up take negative time"),
    ("host.nic_rx_spread_ns", "host.nic_rx_ns", "the half-width of the path's uniform spread; a wider one would make a frame arrive before it was sent"),
    ("host.nic_rx_skb_ns", "host.nic_rx_frame_ns", "the part of a frame's receive work paid once per skb"),
];

/// Refuse an array where the profile has a table (serde's derived structs would read
/// `ghz = [2.3, "GHz", "..."]` positionally): the only array of a profile is
/// `host.cstates.states`.
fn no_positional_tables(prefix: &str, t: &toml::Table) -> Result<(), String> {
    for (k, v) in t {
        let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
        match v {
            toml::Value::Table(sub) => no_positional_tables(&key, sub)?,
            toml::Value::Array(items) if key == "host.cstates.states" && items.iter().all(toml::Value::is_table) => {}
            toml::Value::Array(_) if key == "host.cstates.states" => {
                return Err(format!("key `{key}`: expected an array of tables ({{ name, exit_latency_ns, target_residency_ns, wake_cpu_ns }}), found another value in it"))
            }
            toml::Value::Array(_) => return Err(format!("key `{key}`: expected a table ({{ value, unit, source }} or a [section]), found an array")),
            _ => {}
        }
    }
    Ok(())
}

/// The built-in profiles: (name, file contents).
pub const BUILTIN: &[(&str, &str)] = &[
    ("es2", include_str!("../../../profiles/es2.toml")),
    ("elvis", include_str!("../../../profiles/elvis.toml")),
    ("did", include_str!("../../../profiles/did.toml")),
    ("sriov", include_str!("../../../profiles/sriov.toml")),
    ("hbalance", include_str!("../../../profiles/hbalance.toml")),
    ("modern", include_str!("../../../profiles/modern.toml")),
];

/// The built-in profiles' calibration targets (`eventpath calibrate`): (name, file contents).
pub const CALIBRATION: &[(&str, &str)] = &[
    ("es2", include_str!("../../../profiles/calibration/es2.toml")),
    ("elvis", include_str!("../../../profiles/calibration/elvis.toml")),
    ("did", include_str!("../../../profiles/calibration/did.toml")),
    ("sriov", include_str!("../../../profiles/calibration/sriov.toml")),
];

impl Profile {
    /// Load a built-in profile by name, or a profile file by path (anything with a `/` or
    /// ending in `.toml`).
    pub fn load(name_or_path: &str) -> InputResult<Profile> {
        if let Some((name, text)) = BUILTIN.iter().find(|(n, _)| *n == name_or_path) {
            return Self::builtin(name, text);
        }
        if name_or_path.contains('/') || name_or_path.ends_with(".toml") {
            let text = std::fs::read_to_string(name_or_path).map_err(|e| InputError::Profile {
                name: name_or_path.into(),
                message: format!("cannot read file: {e}"),
            })?;
            return Self::parse_in(name_or_path, &text, std::path::Path::new(name_or_path).parent());
        }
        let known: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
        Err(InputError::Profile {
            name: name_or_path.into(),
            message: format!("unknown profile; built-in profiles are {} (or give a path to a .toml file)", known.join(", ")),
        })
    }

    /// A built-in profile, parsed and checked once per process: its text is compiled in, so
    /// every later load is a copy of the first (a matrix or a calibration loads it per run,
    /// and parsing it was a millisecond or more of each run's few).
    fn builtin(name: &'static str, text: &'static str) -> InputResult<Profile> {
        static PARSED: std::sync::OnceLock<std::sync::Mutex<Vec<(&'static str, Profile)>>> = std::sync::OnceLock::new();
        let cache = PARSED.get_or_init(Default::default);
        let mut cache = cache.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, p)) = cache.iter().find(|(n, _)| *n == name) {
            return Ok(p.clone());
        }
        let p = Self::parse(name, text)?;
        cache.push((name, p.clone()));
        Ok(p)
    }

    /// Parse and check a profile's text (a `base = ...` in it read relative to the current
    /// directory).
    pub fn parse(name: &str, text: &str) -> InputResult<Profile> {
        Self::parse_in(name, text, None)
    }

    /// [`Profile::parse`] of a file in `dir`: a `base = "..."` path is read relative to it
    /// (`profile/base.rs`).
    fn parse_in(name: &str, text: &str, dir: Option<&std::path::Path>) -> InputResult<Profile> {
        let merged = base::resolve(name, text, dir, 0).map_err(|message| InputError::Profile { name: name.into(), message })?;
        let text = merged.as_deref().unwrap_or(text);
        let de = toml::Deserializer::new(text);
        let p: Profile = serde_path_to_error::deserialize(de).map_err(|e| InputError::Profile {
            name: name.into(),
            message: describe_toml_error(e.path(), e.inner(), text),
        })?;
        let doc: toml::Table = toml::from_str(text).map_err(|e| InputError::Profile { name: name.into(), message: e.message().into() })?;
        no_positional_tables("", &doc).map_err(|message| InputError::Profile { name: name.into(), message })?;
        p.check().map_err(|message| InputError::Profile { name: name.into(), message })?;
        Ok(p)
    }

    /// Replace parameters' values for one scenario. `overrides` maps dotted keys as
    /// [`Profile::params`] names them (`exit.eoi_ns`) to values in the parameter's unit;
    /// each replaced parameter's `source` records the old value, and the result is checked like
    /// a profile file. Errors name the key (as `profile_overrides.KEY`) and what is allowed.
    pub fn with_overrides(self, overrides: &[(String, f64)], origin: &str) -> Result<Profile, String> {
        if overrides.is_empty() {
            return Ok(self);
        }
        let known: Vec<&str> = self.params().iter().map(|(k, _, _)| *k).collect();
        let mut doc = toml::Value::try_from(&self).map_err(|e| format!("profile {}: {e}", self.name))?;
        for (key, v) in overrides {
            if !known.contains(&key.as_str()) {
                let section = key.split('.').next().unwrap_or("");
                let near: Vec<&str> = known.iter().copied().filter(|k| k.split('.').next() == Some(section)).collect();
                let hint = if near.is_empty() {
                    "sections are cpu, nic, exit, host, sched, vhost, guest, client, app".to_string()
                } else {
                    format!("`{section}` has {}", near.join(", "))
                };
                return Err(format!("key `profile_overrides.{key}`: profile {} has no such parameter; {hint}", self.name));
            }
            let param = key.split('.').try_fold(&mut doc, |node, part| node.get_mut(part)).and_then(|n| n.as_table_mut());
            let param = param.expect("every key of params() is a table in the serialized profile");
            let old = param.get("value").and_then(toml::Value::as_float).unwrap_or(f64::NAN);
            param.insert("value".into(), toml::Value::Float(*v));
            param.remove("free"); // a what-if value is not a prior: its free range goes with it
            param.remove("range"); // nor a plausible value: a what-if may leave the range
            param.remove("exact"); // nor a fact
            param.insert("source".into(), toml::Value::String(format!("override in scenario {origin} (profile {}: {old})", self.name)));
        }
        let p: Profile = doc.try_into().map_err(|e| format!("profile {}: {e}", self.name))?;
        p.check().map_err(|m| m.replacen("key `", "key `profile_overrides.", 1))?;
        Ok(p)
    }

    /// The values a parameter (dotted key as [`Profile::params`] names it, with its unit) may
    /// take; a profile or override outside is rejected naming the range and why.
    pub fn param_range(key: &str, unit: &str) -> std::ops::RangeInclusive<f64> {
        let b = Bounds::of(key, unit);
        b.lo..=b.hi
    }

    /// Every parameter with its dotted key and the unit the model expects.
    pub fn params(&self) -> Vec<(&'static str, &Param, &'static str)> {
        let (c, n, x, v, g) = (&self.cpu, &self.nic, &self.exit, &self.vhost, &self.guest);
        let mut p = vec![
            ("cpu.sockets", &c.sockets, "count"),
            ("cpu.cores_per_socket", &c.cores_per_socket, "count"),
            ("cpu.ghz", &c.ghz, "GHz"),
            ("nic.gbps", &n.gbps, "Gbit/s"),
            ("nic.mtu_bytes", &n.mtu_bytes, "bytes"),
            ("nic.wire_overhead_bytes", &n.wire_overhead_bytes, "bytes"),
            ("nic.txqueuelen_packets", &n.txqueuelen_packets, "packets"),
            ("nic.gso_max_size_bytes", &n.gso_max_size_bytes, "bytes"),
            ("exit.io_instruction_ns", &x.io_instruction_ns, "ns"),
            ("exit.io_signal_ns", &x.io_signal_ns, "ns"),
            ("exit.interrupt_delivery_ns", &x.interrupt_delivery_ns, "ns"),
            ("exit.eoi_ns", &x.eoi_ns, "ns"),
            ("exit.external_interrupt_ns", &x.external_interrupt_ns, "ns"),
            ("exit.timer_ns", &x.timer_ns, "ns"),
            ("exit.hlt_ns", &x.hlt_ns, "ns"),
            ("exit.ept_violation_ns", &x.ept_violation_ns, "ns"),
            ("exit.interrupt_window_ns", &x.interrupt_window_ns, "ns"),
            ("exit.ipi_ns", &x.ipi_ns, "ns"),
            ("exit.ipi_send_ns", &x.ipi_send_ns, "ns"),
            ("exit.other_ns", &x.other_ns, "ns"),
            ("exit.indirect_per_direct", &x.indirect_per_direct, "ratio"),
            ("host.thread_wakeup_ns", &self.host.thread_wakeup_ns, "ns"),
            ("host.thread_wakeup_spread_ns", &self.host.thread_wakeup_spread_ns, "ns"),
            ("host.timer_wakeup_ns", &self.host.timer_wakeup_ns, "ns"),
            ("host.halt_wakeup_ns", &self.host.halt_wakeup_ns, "ns"),
            ("host.halt_poll_wake_ns", &self.host.halt_poll_wake_ns, "ns"),
            ("host.nic_rx_ns", &self.host.nic_rx_ns, "ns"),
            ("host.nic_rx_spread_ns", &self.host.nic_rx_spread_ns, "ns"),
            ("host.nic_rx_itr_ns", &self.host.nic_rx_itr_ns, "ns"),
            ("host.tap_tx_ns", &self.host.tap_tx_ns, "ns"),
            ("host.dev_xmit_ns", &self.host.dev_xmit_ns, "ns"),
            ("host.nic_irq_ns", &self.host.nic_irq_ns, "ns"),
            ("host.nic_rx_frame_ns", &self.host.nic_rx_frame_ns, "ns"),
            ("host.nic_rx_skb_ns", &self.host.nic_rx_skb_ns, "ns"),
            ("host.nic_tx_clean_ns", &self.host.nic_tx_clean_ns, "ns"),
            ("sched.latency_ns", &self.sched.latency_ns, "ns"),
            ("sched.min_granularity_ns", &self.sched.min_granularity_ns, "ns"),
            ("sched.wakeup_granularity_ns", &self.sched.wakeup_granularity_ns, "ns"),
            ("sched.tick_hz", &self.sched.tick_hz, "Hz"),
            ("sched.context_switch_ns", &self.sched.context_switch_ns, "ns"),
            ("sched.migration_ns", &self.sched.migration_ns, "ns"),
            ("sched.balance_interval_ns", &self.sched.balance_interval_ns, "ns"),
            ("sched.busy_factor", &self.sched.busy_factor, "count"),
            ("sched.migration_cost_ns", &self.sched.migration_cost_ns, "ns"),
            ("vhost.tx_packet_ns", &v.tx_packet_ns, "ns"),
            ("vhost.tx_byte_ns", &v.tx_byte_ns, "ns"),
            ("vhost.rx_packet_ns", &v.rx_packet_ns, "ns"),
            ("vhost.rx_byte_ns", &v.rx_byte_ns, "ns"),
            ("vhost.weight_packets", &v.weight_packets, "packets"),
            ("vhost.weight_bytes", &v.weight_bytes, "bytes"),
            ("vhost.poll_ns", &v.poll_ns, "ns"),
            ("vhost.queue_switch_ns", &v.queue_switch_ns, "ns"),
            ("vhost.wakeup_ns", &v.wakeup_ns, "ns"),
            ("vhost.timed_sleep_ns", &v.timed_sleep_ns, "ns"),
            ("guest.udp_tx_packet_ns", &g.udp_tx_packet_ns, "ns"),
            ("guest.udp_tx_byte_ns", &g.udp_tx_byte_ns, "ns"),
            ("guest.tcp_write_ns", &g.tcp_write_ns, "ns"),
            ("guest.tcp_tx_byte_ns", &g.tcp_tx_byte_ns, "ns"),
            ("guest.tcp_tx_segment_ns", &g.tcp_tx_segment_ns, "ns"),
            ("guest.csum_byte_ns", &g.csum_byte_ns, "ns"),
            ("guest.tcp_rx_ack_ns", &g.tcp_rx_ack_ns, "ns"),
            ("guest.tcp_rx_segment_ns", &g.tcp_rx_segment_ns, "ns"),
            ("guest.tcp_rx_byte_ns", &g.tcp_rx_byte_ns, "ns"),
            ("guest.gro_segment_ns", &g.gro_segment_ns, "ns"),
            ("guest.rx_buffer_ns", &g.rx_buffer_ns, "ns"),
            ("guest.rx_dispatch_ns", &g.rx_dispatch_ns, "ns"),
            ("guest.tcp_read_ns", &g.tcp_read_ns, "ns"),
            ("guest.tcp_conn_ns", &g.tcp_conn_ns, "ns"),
            ("guest.udp_rx_packet_ns", &g.udp_rx_packet_ns, "ns"),
            ("guest.udp_rx_byte_ns", &g.udp_rx_byte_ns, "ns"),
            ("guest.udp_recv_ns", &g.udp_recv_ns, "ns"),
            ("guest.udp_rcvbuf_bytes", &g.udp_rcvbuf_bytes, "bytes"),
            ("guest.tcp_rmem_default_bytes", &g.tcp_rmem_default_bytes, "bytes"),
            ("guest.tcp_rmem_max_bytes", &g.tcp_rmem_max_bytes, "bytes"),
            ("guest.tcp_adv_win_scale", &g.tcp_adv_win_scale, "shift"),
            ("guest.napi_poll_ns", &g.napi_poll_ns, "ns"),
            ("guest.napi_weight", &g.napi_weight, "packets"),
            ("guest.tick_hz", &g.tick_hz, "Hz"),
            ("guest.timer_irq_ns", &g.timer_irq_ns, "ns"),
            ("guest.virtio_irq_ns", &g.virtio_irq_ns, "ns"),
            ("guest.task_wakeup_ns", &g.task_wakeup_ns, "ns"),
            ("guest.request_ns", &g.request_ns, "ns"),
            ("client.rx_packet_ns", &self.client.rx_packet_ns, "ns"),
            ("client.rx_itr_ns", &self.client.rx_itr_ns, "ns"),
            ("client.delack_segments", &self.client.delack_segments, "segments"),
            ("client.delack_timeout_ns", &self.client.delack_timeout_ns, "ns"),
            ("client.request_ns", &self.client.request_ns, "ns"),
            ("client.udp_sndbuf_bytes", &self.client.udp_sndbuf_bytes, "bytes"),
            ("client.tsq_limit_bytes", &self.client.tsq_limit_bytes, "bytes"),
            ("client.udp_rr_timeout_ns", &self.client.udp_rr_timeout_ns, "ns"),
            ("client.fork_ns", &self.client.fork_ns, "ns"),
            ("client.tcp_syn_rto_ns", &self.client.tcp_syn_rto_ns, "ns"),
            ("client.tcp_init_cwnd", &self.client.tcp_init_cwnd, "segments"),
            ("client.send_call_ns", &self.client.send_call_ns, "ns"),
            ("client.tx_byte_ns", &self.client.tx_byte_ns, "ns"),
            ("client.tx_skb_ns", &self.client.tx_skb_ns, "ns"),
            ("app.memcached_get_ns", &self.app.memcached_get_ns, "ns"),
            ("app.memcached_set_ns", &self.app.memcached_set_ns, "ns"),
            ("app.http_request_ns", &self.app.http_request_ns, "ns"),
            ("app.nginx_request_ns", &self.app.nginx_request_ns, "ns"),
            ("app.specweb_light_ns", &self.app.specweb_light_ns, "ns"),
            ("app.specweb_heavy_ns", &self.app.specweb_heavy_ns, "ns"),
        ];
        let mut at = 3;
        for (k, f) in [("cpu.ipiv", &c.ipiv), ("cpu.avic", &c.avic), ("cpu.x2avic", &c.x2avic), ("cpu.avic_erratum_1235", &c.avic_erratum_1235)] {
            if let Some(f) = f {
                p.insert(at, (k, f, "bool"));
                at += 1;
            }
        }
        // The host kernel's optional stock settings, after host.halt_wakeup_ns in this order.
        let mut at = p.iter().position(|(k, _, _)| *k == "host.halt_wakeup_ns").expect("listed above") + 1;
        let h = &self.host;
        for (k, f, unit) in [("host.halt_poll_ns", &h.halt_poll_ns, "ns"), ("host.apicv", &h.apicv, "bool"), ("host.vtd_posting", &h.vtd_posting, "bool"), ("host.ipiv", &h.ipiv, "bool")] {
            if let Some(f) = f {
                p.insert(at, (k, f, unit));
                at += 1;
            }
        }
        if let Some(v) = &self.sriov {
            p.extend([
                ("sriov.max_vfs", &v.max_vfs, "count"),
                ("sriov.vf_itr_ns", &v.vf_itr_ns, "ns"),
                ("sriov.vf_itr_max_ns", &v.vf_itr_max_ns, "ns"),
                ("sriov.vf_itr_min_ns", &v.vf_itr_min_ns, "ns"),
                ("sriov.dma_ns", &v.dma_ns, "ns"),
                ("sriov.vf_irq_ns", &v.vf_irq_ns, "ns"),
            ]);
        }
        if let Some(h) = &self.housekeeping {
            p.extend(h.linux_keys().into_iter().filter_map(|(k, v, u)| v.map(|v| (k, v, u))));
            p.extend([
                ("housekeeping.vm_boot_spread_ns", &h.vm_boot_spread_ns, "ns"),
                ("housekeeping.vcpu_start_spread_ns", &h.vcpu_start_spread_ns, "ns"),
            ]);
        }
        if let Some(n) = &self.numa {
            p.extend([
                ("numa.remote_line_ns", &n.remote_line_ns, "ns"),
                ("numa.ring_lines_per_packet", &n.ring_lines_per_packet, "count"),
                ("numa.remote_copy_line_ns", &n.remote_copy_line_ns, "ns"),
            ]);
        }
        if let Some(k) = &self.blk {
            p.extend([
                ("blk.submit_ns", &k.submit_ns, "ns"),
                ("blk.complete_ns", &k.complete_ns, "ns"),
                ("blk.qemu_request_ns", &k.qemu_request_ns, "ns"),
                ("blk.kernel_request_ns", &k.kernel_request_ns, "ns"),
                ("blk.spdk_request_ns", &k.spdk_request_ns, "ns"),
                ("blk.ramdisk_request_ns", &k.ramdisk_request_ns, "ns"),
                ("blk.ramdisk_byte_ns", &k.ramdisk_byte_ns, "ns"),
                ("blk.queue_size", &k.queue_size, "descriptors"),
            ]);
        }
        if let Some(n) = &self.nvme {
            p.extend([
                ("nvme.read_ns", &n.read_ns, "ns"),
                ("nvme.write_ns", &n.write_ns, "ns"),
                ("nvme.service_cv", &n.service_cv, "ratio"),
                ("nvme.byte_ns", &n.byte_ns, "ns"),
                ("nvme.units", &n.units, "count"),
                ("nvme.queue_depth", &n.queue_depth, "commands"),
            ]);
        }
        if let Some(x) = &self.xen {
            p.extend([
                ("xen.dom0_pcpus", &x.dom0_pcpus, "count"),
                ("xen.hypercall_ns", &x.hypercall_ns, "ns"),
                ("xen.evtchn_upcall_ns", &x.evtchn_upcall_ns, "ns"),
                ("xen.ioreq_ns", &x.ioreq_ns, "ns"),
                ("xen.qemu_e1000_packet_ns", &x.qemu_e1000_packet_ns, "ns"),
                ("xen.netback_packet_ns", &x.netback_packet_ns, "ns"),
            ]);
        }
        p
    }

    fn check(&self) -> Result<(), String> {
        crate::config::limits::check_name("key `name`", &self.name)?;
        for (key, p, unit) in self.params() {
            if p.unit != unit {
                return Err(format!("key `{key}`: unit \"{}\" is not allowed; expected \"{unit}\"", p.unit));
            }
            let b = Bounds::of(key, unit);
            if !(p.value.is_finite() && b.lo <= p.value && p.value <= b.hi) || (b.whole && p.value.fract() != 0.0) {
                let what = if b.whole { "a whole number" } else { "a number" };
                return Err(format!(
                    "key `{key}`: value {} is not allowed; expected {what} in {}..={} {unit} ({})",
                    crate::error::num(p.value),
                    b.lo,
                    b.hi,
                    b.why
                ));
            }
            if let Some(r) = &p.range {
                if !(r.min.is_finite() && r.max.is_finite() && b.lo <= r.min && r.max <= b.hi && r.min <= r.max) {
                    return Err(format!(
                        "key `{key}.range`: {}..={} is not allowed; expected finite bounds, min <= max, in {}..={} {unit} ({})",
                        crate::error::num(r.min),
                        crate::error::num(r.max),
                        b.lo,
                        b.hi,
                        b.why
                    ));
                }
                if !(r.min <= p.value && p.value <= r.max) {
                    return Err(format!(
                        "key `{key}`: value {} is not allowed outside its range {}..={}; expected a value inside it (or a wider range with its reason)",
                        crate::error::num(p.value),
                        crate::error::num(r.min),
                        crate::error::num(r.max)
                    ));
                }
                if p.free.is_some() {
                    return Err(format!("key `{key}.range`: a free parameter's range is its `free` table; remove `range`"));
                }
                if r.why.trim().is_empty() {
                    return Err(format!("key `{key}.range.why`: expected the range's reason"));
                }
            }
            if let Some(why) = &p.exact {
                if p.range.is_some() || p.free.is_some() {
                    return Err(format!("key `{key}.exact`: an exact value has no range; remove `exact` or its range"));
                }
                if why.trim().is_empty() {
                    return Err(format!("key `{key}.exact`: expected why the value is exact"));
                }
            }
            if let Some(f) = p.free {
                if !(f.min.is_finite() && f.max.is_finite() && b.lo <= f.min && f.max <= b.hi) {
                    return Err(format!(
                        "key `{key}.free`: range {}..={} is not allowed; expected finite bounds in {}..={} {unit} ({})",
                        crate::error::num(f.min),
                        crate::error::num(f.max),
                        b.lo,
                        b.hi,
                        b.why
                    ));
                }
                if f.min > f.max {
                    return Err(format!(
                        "key `{key}.free`: min {} > max {} is not allowed; expected min <= max",
                        crate::error::num(f.min),
                        crate::error::num(f.max)
                    ));
                }
                if let Some(prior) = f.prior {
                    if !(prior.is_finite() && f.min <= prior && prior <= f.max) {
                        return Err(format!(
                            "key `{key}.free.prior`: {} is not allowed; expected a value in {}..={}",
                            crate::error::num(prior),
                            crate::error::num(f.min),
                            crate::error::num(f.max)
                        ));
                    }
                }
                if !(f.min <= p.value && p.value <= f.max) {
                    return Err(format!(
                        "key `{key}`: prior value {} is not allowed outside its free range {}..={}; expected a prior inside the range",
                        crate::error::num(p.value),
                        crate::error::num(f.min),
                        crate::error::num(f.max)
                    ));
                }
            }
        }
        let value = |key: &str| self.params().iter().find(|(k, _, _)| *k == key).map_or(f64::NAN, |(_, p, _)| p.value);
        for (key, bound, why) in NOT_ABOVE {
            let (v, b) = (value(key), value(bound));
            if v > b {
                return Err(format!(
                    "key `{key}`: value {} is not allowed; expected at most {bound} ({} ns): {why}",
                    crate::error::num(v),
                    crate::error::num(b)
                ));
            }
        }
        self.check_nic_itr()?;
        self.check_housekeeping()?;
        self.check_cstates()
    }

    /// A per-CPU kernel thread wakes at most every millisecond (its work, at most half a
    /// millisecond by its bounds, so ends before its next wake-up).
    fn check_housekeeping(&self) -> Result<(), String> {
        let Some(h) = &self.housekeeping else { return Ok(()) };
        if self.xen.is_none() {
            if let Some((key, _, _)) = h.linux_keys().into_iter().find(|(_, v, _)| v.is_none()) {
                return Err(format!(
                    "key `{key}`: missing; a Linux host's `[housekeeping]` gives tick_ns, tick_skew, kthread_interval_ns and kthread_ns (only a Xen host's profile, one with `[xen]`, leaves them out)"
                ));
            }
        }
        let every = h.kthread_interval_ns.as_ref().map_or(0.0, |p| p.value);
        if every != 0.0 && every < 1e6 {
            return Err(format!("key `housekeeping.kthread_interval_ns`: value {} is not allowed; expected 0 (none) or at least 1000000 ns (a kernel thread sleeps between its wake-ups)", crate::error::num(every)));
        }
        Ok(())
    }

    /// An adaptive ITR's start (and its free range) must lie in its driver's range, or be 0
    /// (off): the drivers never run an interval outside it.
    pub fn check_nic_itr(&self) -> Result<(), String> {
        let nics = [
            ("host.nic_rx_itr_ns", "host.nic_itr", &self.host.nic_rx_itr_ns, self.host.nic_itr.value),
            ("client.rx_itr_ns", "client.nic_itr", &self.client.rx_itr_ns, self.client.nic_itr.value),
        ];
        for (key, driver_key, p, driver) in nics {
            let Some((lo, hi)) = driver.range_ns() else { continue };
            let (lo, hi) = (lo as f64, hi as f64);
            let expected = || {
                format!(
                    "expected 0 (off) or an interval in {lo}..={hi} ns: {driver_key} = \"{}\" moves between these (or set {driver_key} to \"fixed\")",
                    driver.name()
                )
            };
            if p.value != 0.0 && !(lo <= p.value && p.value <= hi) {
                return Err(format!("key `{key}`: value {} is not allowed as an adaptive ITR's start; {}", crate::error::num(p.value), expected()));
            }
            if let Some(f) = p.free {
                if f.min < lo || f.max > hi {
                    return Err(format!(
                        "key `{key}.free`: range {}..={} is not allowed for an adaptive ITR's start; {}",
                        crate::error::num(f.min),
                        crate::error::num(f.max),
                        expected()
                    ));
                }
            }
        }
        Ok(())
    }

    fn check_cstates(&self) -> Result<(), String> {
        let states = &self.host.cstates.states;
        if states.len() > MAX_CSTATES {
            return Err(format!("key `host.cstates.states`: {} states are not allowed; expected at most {}", states.len(), MAX_CSTATES));
        }
        let mut last = -1.0;
        for (i, c) in states.iter().enumerate() {
            for (k, v) in [("exit_latency_ns", c.exit_latency_ns), ("target_residency_ns", c.target_residency_ns), ("wake_cpu_ns", c.wake_cpu_ns)] {
                if !(v.is_finite() && (0.0..=MAX_NS).contains(&v)) {
                    return Err(format!(
                        "key `host.cstates.states[{i}].{k}`: value {v} is not allowed; expected a number in 0..={MAX_NS} ns (at most a second)"
                    ));
                }
            }
            if c.target_residency_ns < last {
                return Err(format!("key `host.cstates.states[{i}]`: states must be listed shallowest first (increasing target_residency_ns)"));
            }
            last = c.target_residency_ns;
        }
        self.check_governor()
    }

    /// A haltpoll table needs its poll state and a halt state; haltpoll's parameters belong
    /// to it alone (never accepted and ignored).
    fn check_governor(&self) -> Result<(), String> {
        use eventpath_policy::idle::GovernorKind;
        let c = &self.host.cstates;
        match (c.governor, &c.haltpoll) {
            (GovernorKind::Menu, Some(_)) => {
                Err("key `host.cstates.haltpoll`: not allowed with governor = \"menu\"; expected it only with governor = \"haltpoll\"".into())
            }
            (GovernorKind::Haltpoll, hp) => {
                if c.states.len() < 2 {
                    return Err(format!(
                        "key `host.cstates.states`: {} states are not allowed with governor = \"haltpoll\"; expected at least 2 (the poll state, then the halt's outcomes)",
                        c.states.len()
                    ));
                }
                hp.unwrap_or_default().validate().map_err(|e| format!("key `{}`: value {} is not allowed; {}", e.param, e.value, e.allowed))
            }
            (GovernorKind::Menu, None) => Ok(()),
        }
    }

    /// KVM's default halt polling of the profile's host kernel (`host.halt_poll_ns`), if it
    /// polls by default: the `[vm.halt_poll]` a VM that says nothing gets.
    pub fn default_halt_poll(&self) -> Option<eventpath_policy::halt_poll::HaltPollConfig> {
        let ns = self.host.halt_poll_ns.as_ref().map_or(0.0, |p| p.value);
        (ns > 0.0).then(|| eventpath_policy::halt_poll::HaltPollConfig { max_halt_poll_ns: ns as u32, ..Default::default() })
    }

    /// Stock KVM's APICv (`host.apicv = 1`) and VT-d posting (`host.vtd_posting = 1`); each
    /// absent is 0.
    pub fn stock_posting(&self) -> (bool, bool) {
        (flag(&self.host.apicv), flag(&self.host.vtd_posting))
    }

    /// The CPU has IPI virtualization (`cpu.ipiv = 1`; absent is 0).
    pub fn has_ipiv(&self) -> bool {
        flag(&self.cpu.ipiv)
    }

    /// Stock KVM uses IPI virtualization on this host: the kernel turns it on (`host.ipiv = 1`)
    /// and the CPU has it (`cpu.ipiv = 1`); each absent is 0.
    pub fn stock_ipiv(&self) -> bool {
        flag(&self.host.ipiv) && self.has_ipiv()
    }

    /// What the CPU offers the `[vm.apic]` features (`cpu.ipiv`, `cpu.avic`, `cpu.x2avic`,
    /// `cpu.avic_erratum_1235`; each absent is 0).
    pub fn apic_caps(&self) -> eventpath_policy::delivery::features::CpuCaps {
        eventpath_policy::delivery::features::CpuCaps {
            ipiv: flag(&self.cpu.ipiv),
            avic: flag(&self.cpu.avic),
            x2avic: flag(&self.cpu.x2avic),
            avic_erratum_1235: flag(&self.cpu.avic_erratum_1235),
        }
    }

    /// The socket (memory node) of pCPU `cpu`.
    pub fn socket_of(&self, cpu: u32) -> u32 {
        cpu / (self.cpu.cores_per_socket.value as u32).max(1)
    }

    /// Number of pCPUs the profile's host has.
    pub fn pcpus(&self) -> usize {
        (self.cpu.sockets.value * self.cpu.cores_per_socket.value) as usize
    }
}

/// An optional 0/1 parameter (a CPU feature, a stock kernel setting) is on: present and 1.
fn flag(p: &Option<Param>) -> bool {
    p.as_ref().is_some_and(|p| p.value == 1.0)
}
