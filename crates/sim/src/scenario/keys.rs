//! Every scenario key with its type, unit, default and meaning: the list `eventpath keys`
//! prints. One source of truth checked against the parser: the tests below set every listed key
//! in a scenario that must parse, and every key the parsed scenario holds must be listed — a key
//! added to the scenario types and not here (or listed and not accepted) fails them.
//!
//! Keys are dotted paths as a scenario file writes them, an array of tables without its index
//! (`vm.net.queue_size` is `queue_size` under `[vm.net]` of each `[[vm]]`). A workload's or a
//! moderation scheme's own keys name their `kind`.

pub use crate::config::key::Key;
use crate::config::key::{joined, k, B, F, I, PCPUS, S};

/// The keys before `[host.io]`.
const HEAD: &[Key] = &[
    k("name", "", S, "", "required", "Name used in outputs (1..=64 characters).", "\"x\""),
    k("profile", "", S, "", "required", "The host: a built-in profile (`eventpath profiles`) or the path of a profile .toml.", "\"es2\""),
    k("seed", "", I, "", "1", "Seed of all random streams (0..2^63 in a file; up to 2^64-1 with --seed).", "1"),
    k("duration_s", "", F, "s", "1.0", "Simulated seconds measured, after the warm-up (1e-6..=86400).", "0.5"),
    k("warmup_s", "", F, "s", "0.1", "Simulated seconds run before measuring.", "0.1"),
    k("profile_overrides", "", "table", "each parameter's own", "none", "Profile parameters replaced for this scenario, nested like the profile ([profile_overrides.exit] eoi_ns = 1500); `eventpath profiles NAME` lists them. The C-state table cannot be overridden.", "{ exit = { eoi_ns = 1500 } }"),
    // [host]
    k("host.pcpus", "", I, "pCPUs", "all of the profile's cores", "pCPUs the host uses (1..=the profile's cores, at most 512).", "4"),
    k("host.idle", "", S, "", "\"menu\"", "What an idle pCPU does: `menu` (cpuidle picks one of the profile's C-states) or `poll` (Linux idle=poll: no C-state exit on wake-up).", "\"poll\""),
    k("host.virtualization", "", S, "", "\"kvm\"", "`kvm`, `bare_metal` (no hypervisor, one VM that is the machine's OS on an `sriov_vf` NIC with the default delivery) or `xen` (Xen: needs a profile with [xen], e.g. hbalance, and scheduler = \"xen_credit\"; dom0 on host.dom0_cpus serves the VMs' xen_pv or xen_e1000 devices).", "\"kvm\""),
    k("host.nic_itr", "", S, "", "the profile's host.nic_itr", "The host NIC driver's receive interrupt throttle: `fixed` (at the profile's host.nic_rx_itr_ns), `ixgbe` or `i40e` (that driver's adaptive ITR).", "\"fixed\""),
    k("host.dom0_cpus", "", PCPUS, "pCPUs", "absent: the host's last xen.dom0_pcpus pCPUs (the profile's)", "virtualization = \"xen\" only: the pCPUs dom0 runs on (netback's threads, QEMU's device models, the NIC's interrupts by default); no guest vCPU may be pinned to one, and unpinned vCPUs stay off them.", "[6, 7]"),
    k("host.nic_irq_cpus", "", PCPUS, "pCPUs", "absent: every pCPU from the last down (irqbalance)", "pCPUs the host NIC's queue interrupts and their softirq work (RX NAPI, TX clean) go to, the queues split over them in order.", "[0]"),
    k("host.scheduler", "", S, "", "\"cfs\"", "The host scheduler: `cfs` (Linux CFS, KVM's host) or `xen_credit` (Xen 4.2's credit scheduler: 30 ms slices, UNDER/OVER/BOOST priorities, credits by weight; hBalance's host). Required (`xen_credit`, never implied) with virtualization = \"xen\".", "\"xen_credit\""),
    k("host.tslice_ms", "", I, "ms", "30 with xen_credit", "Xen's credit time slice (sched_credit_tslice_ms), 1..=1000; only with scheduler = \"xen_credit\".", "10"),
    k("host.cpu_hog.nice", "", I, "", "19 (cfs); absent with xen_credit", "[[host.cpu_hog]], a host thread that never sleeps: its nice value, -20..=19. Refused with xen_credit (Xen has no nice: every thread has weight 256).", "19"),
    k("host.cpu_hog.pins", "", PCPUS, "pCPUs", "absent: every pCPU", "[[host.cpu_hog]]: the pCPUs it may run on.", "[0]"),
];

/// The keys after `[host.io]`.
const TAIL: &[Key] = &[
    // [client]
    k("client.cores", "", I, "cores", "one per VM (per VF of a VM with several, `vm.net.vfs`)", "Cores of the remote client machine; device i's flow (VM i's, when no VM has several VFs) runs on core i mod cores (fewer cores than flows: they share), 1..=1024.", "1"),
    k("client.nic_itr", "", S, "", "the profile's client.nic_itr", "The client NIC driver's receive interrupt throttle: `fixed`, `ixgbe` or `i40e`.", "\"fixed\""),
    k("client.tso", "", B, "", "the profile's client.tso", "TSO on the client's NIC (ethtool -K tso): a bulk TCP sender into a guest (tcp_receive) sends skbs of up to 45 whole segments, cut into frames by the NIC (true), or one MSS per skb (false).", "false"),
    k("client.tcp_autocorking", "", B, "", "the profile's client.tcp_autocorking", "The client kernel's TCP autocorking (net.ipv4.tcp_autocorking, Linux 3.14): a bulk TCP sender into a guest (tcp_receive) lets a small write join the tail skb while earlier ones wait for the NIC (true), or pushes each write()'s whole segments at once (false).", "false"),
    k("client.qdisc", "", S, "", "the profile's client.qdisc", "The qdisc on each of the client NIC's TX queues (a flow's queue is its client core's): `pfifo_fast` (one FIFO of nic.txqueuelen_packets; the kernel's default) or `fq_codel` (a queue per flow served in turn, 10,240 packets; distributions' default since systemd 217). A full queue drops a datagram and holds a TCP segment in its socket.", "\"fq_codel\""),
    // [[vm]]
    k("vm.name", "", S, "", "required", "[[vm]], one per VM: its unique name.", "\"vm0\""),
    k("vm.vcpus", "", I, "vCPUs", "required", "Number of vCPUs, 1..=288 (KVM_MAX_VCPUS).", "2"),
    k("vm.vcpu_pins", "", PCPUS, "pCPUs", "absent: unpinned, placed by the host scheduler", "The pCPU each vCPU thread is pinned to, one entry per vCPU.", "[0, 1]"),
    k("vm.memory_node", "", I, "node", "absent: the node of the pCPU its vCPU 0 is first placed on (first touch)", "The memory node (socket) holding the VM's memory; a back end on another socket's pCPU pays the profile's [numa] costs per packet. Nodes beyond 0 need a profile with [numa] (elvis).", "0"),
    k("vm.interrupt_delivery", "", S, "", "the profile's stock host's: \"posted\" under KVM where host.apicv = 1 (es2: Linux 4.4; modern: 6.1), \"apicv\" there for an assigned device (VF, vDPA, NVMe) where host.vtd_posting = 0 (es2's Ivy Bridge-EP), else \"emulated\"; \"evtchn\" on a xen_pv device", "How interrupts reach the vCPUs: `emulated` (software LAPIC), `apicv` (EOI virtualized), `posted` (CPU and VT-d posted interrupts), `eli` (ELI exitless) and `did` (DID), these two for an sriov_vf or with handling = elvis; under Xen, `evtchn` (event channels: pending bit and upcall, no EOI) is a xen_pv device's only mode and its default (`emulated` written there is refused), and a xen_e1000 device has `emulated` only.", "\"posted\""),
    k("vm.apic.ipiv", "", B, "", "the stock host's: true on a posted VM where host.ipiv = 1 and cpu.ipiv = 1 (modern), else false", "[vm.apic]: Intel IPI virtualization (KVM, Linux 5.19): a vCPU's unicast reschedule IPI no longer exits on its ICR write (the CPU posts it to the target). Needs interrupt_delivery = \"posted\" and a profile whose cpu.ipiv = 1 (of the built-in profiles only modern's CPU, a Sapphire Rapids, has it); on by default where the profile's kernel turns it on (host.ipiv = 1: Linux 5.19+), false turns it off.", "true"),
    k("vm.apic.pv_eoi", "", B, "", "false", "[vm.apic]: KVM PV EOI (KVM_FEATURE_PV_EOI): the guest skips the EOI write, and its exit, when KVM flagged at entry that nothing else was pending or in service. Only with interrupt_delivery = \"emulated\" (elsewhere the EOI does not exit so).", "true"),
    k("vm.apic.pv_ipi", "", B, "", "false", "[vm.apic]: KVM PV IPI (KVM_HC_SEND_IPI): a multi-destination IPI send (apic->send_IPI_mask) is one hypercall exit (counted as `ipi`) instead of one ICR-write exit per destination. Only beside a guest that sends such IPIs: workload kind = \"ipi_pingpong\" with targets > 1; refused elsewhere, saying why (single-destination reschedule IPIs keep their ICR write).", "true"),
    k("vm.apic.pv_sched_yield", "", B, "", "false", "[vm.apic]: KVM PV sched yield (KVM_HC_SCHED_YIELD, Linux 5.3): after a multi-destination call-function IPI (kvm_smp_send_call_func_ipi) the guest yields to the first destination its steal-time record shows preempted: one hypercall exit (counted as `other`) in which the host scheduler yields the sender's thread to that vCPU's (CFS yield_to: next and skip buddies, within the wake-up granularity). Only beside workload kind = \"ipi_pingpong\" with targets > 1; refused elsewhere and under Xen.", "true"),
    k("vm.apic.avic", "", B, "", "false", "[vm.apic]: AMD AVIC (KVM svm/avic.c): a unicast IPI to a running target (IsRunning: its thread on its pCPU) no longer exits its sender; to a target not running (blocked, preempted, woken but not yet on its pCPU) the sender takes an AVIC_INCOMPLETE_IPI exit (counted as `ipi`) whose handler wakes it; with cpu.avic_erratum_1235 = 1 (Zen 1/2) KVM turns IPI virtualization off and every ICR write exits. Device interrupts and EOIs as `posted`. Needs interrupt_delivery = \"posted\" and a profile whose cpu.avic = 1 (no built-in profile's CPU, all Intel, has it); not with ipiv.", "true"),
    k("vm.apic.x2apic", "", B, "", "false", "[vm.apic]: the guest runs its LAPIC in x2APIC mode (x2APIC in its CPUID). Only with avic = true, where it needs a profile whose cpu.x2avic = 1 (KVM inhibits AVIC for an x2APIC guest without x2AVIC: APICV_INHIBIT_REASON_X2APIC).", "true"),
    k("vm.guest_cpu_burn", "", B, "", "false", "Run a lowest-priority busy loop on every vCPU beside the workload: the vCPUs never halt.", "false"),
    k("vm.lookbusy.util_pct", "", F, "%", "absent: no [vm.lookbusy]", "[vm.lookbusy]: lookbusy 1.4's CPU load (`-c`), one nice-0 spinner per vCPU beside the workload: busy for this % of each cycle, asleep (the vCPU may halt) the rest, its busy count steered by the guest's whole utilization as lookbusy's feedback does; in (0, 100]. Not with guest_cpu_burn. Reported as vms[].lookbusy.", "50.0"),
    k("vm.lookbusy.period_ms", "", F, "ms", "100", "[vm.lookbusy]: the spinner's cycle, [1, 10000] (lookbusy 1.4 calibrates its busy count against 100 ms and sleeps the rest; not a lookbusy option).", "100.0"),
    k("vm.guest_idle", "", S, "", "\"halt\"", "The guest's idle loop: `halt` (an exit unless bare metal) or `poll` (Linux idle=poll: spins in guest mode).", "\"halt\""),
    k("vm.interrupt_routing", "", S, "", "\"fixed\"", "Which vCPU a device interrupt goes to: `fixed` (the programmed vCPU 0), `lowest_priority_rr`, `running_first`, `es2` (ES2 §4.3 redirection), `h_balance` (hBalance Algorithm 1), `v_balance` (vBalance: the guest rebinds its xen_pv event channel to a running vCPU, one hypercall per move; xen_pv only). On a one-vCPU VM allowed and without effect (the summary's `interrupt_routing_note` says so).", "\"fixed\""),
    k("vm.halt_poll.max_halt_poll_ns", "", I, "ns", "the profile's host.halt_poll_ns", "[vm.halt_poll] (absent: the profile's host kernel's default, host.halt_poll_ns — stock KVM polls since Linux 4.0 — or none where it has none; 0 disables): KVM's halt_poll_ns, the longest poll per halt.", "200000"),
    k("vm.halt_poll.grow", "", I, "factor", "2", "[vm.halt_poll]: halt_poll_ns_grow, the multiplier on growth; 0 disables growth.", "2"),
    k("vm.halt_poll.grow_start", "", I, "ns", "10000", "[vm.halt_poll]: halt_poll_ns_grow_start, the first non-zero poll time (at least 1).", "10000"),
    k("vm.halt_poll.shrink", "", I, "divisor", "0", "[vm.halt_poll]: halt_poll_ns_shrink, the divisor on shrink; 0 resets to 0.", "0"),
    k("vm.guest_halt_poll.guest_halt_poll_ns", "", I, "ns", "200000", "[vm.guest_halt_poll] (absent: the idle guest halts at once): the guest's cpuidle-haltpoll driver; the longest poll in guest mode before HLT (at least 1). Turns KVM's halt polling off (MSR_KVM_POLL_CONTROL), so not with [vm.halt_poll].", "200000"),
    k("vm.guest_halt_poll.grow", "", I, "factor", "2", "[vm.guest_halt_poll]: guest_halt_poll_grow, the multiplier on growth.", "2"),
    k("vm.guest_halt_poll.shrink", "", I, "divisor", "2", "[vm.guest_halt_poll]: guest_halt_poll_shrink, the divisor on shrink; 0 resets to 0.", "2"),
    k("vm.guest_halt_poll.grow_start_ns", "", I, "ns", "50000", "[vm.guest_halt_poll]: guest_halt_poll_grow_start, the first non-zero poll limit (at least 1).", "50000"),
    k("vm.guest_halt_poll.allow_shrink", "", B, "", "true", "[vm.guest_halt_poll]: guest_halt_poll_allow_shrink.", "true"),
    // [vm.disk]
    k("vm.disk.kind", "", S, "", "\"virtio_blk\"", "A block workload's (fio, filebench) disk: `virtio_blk` (a request queue per vCPU its jobs use, served by the host's back end over a RAM disk; profile [blk]) or `nvme` (an NVMe-like device assigned to the VM: a submission/completion queue pair per vCPU its jobs use, doorbells without exits, an MSI-X vector per queue delivered as an assigned device's under every delivery mode; profile [nvme]).", "\"nvme\""),
    // [vm.net]
    k("vm.net.kind", "", S, "", "\"virtio\"", "The VM's NIC: `virtio` (virtio-net served by a host thread), `sriov_vf` (an SR-IOV VF assigned to the VM; the profile needs [sriov]) or `vdpa` (virtio-net's driver on the queues of a VF of the NIC: no back-end thread, doorbell writes to a mapped page without an exit, no EITR; the profile needs [sriov]); under virtualization = \"xen\" (and only there) `xen_pv` (netfront/netback over event channels) or `xen_e1000` (QEMU's emulated e1000 in dom0).", "\"virtio\""),
    k("vm.net.itr_us", "", "float or \"dynamic\"", "µs", "absent: the profile's sriov.vf_itr_ns", "sriov_vf only: the VF's interrupt throttle (EITR), an interval (0 < value <= sriov.vf_itr_max_ns), or \"dynamic\" (ixgbevf's adaptive throttle); not with [vm.net.moderation], which drives the EITR instead.", "\"dynamic\""),
    k("vm.net.mtvd", "", B, "", "false", "sriov_vf on a VM of 2 or more vCPUs: the multi-threaded VF driver (CGR/AIR/MTVD paper §4.4): NAPI dispatches each packet round robin to kernel threads, one per vCPU, which take it up the stack.", "true"),
    k("vm.net.vfs", "", I, "VFs", "1", "sriov_vf only: SR-IOV VFs assigned to the VM (CGR/AIR/MTVD Fig. 5), 1..=the profile's sriov.max_vfs; each its own device (rings, MSI-X vector with affinity vCPU i mod vcpus, EITR, client flow). More than 1 only with workload tcp_receive or udp_receive (one receiver per VF) and without mtvd.", "1"),
    k("vm.net.queues", "", I, "queue pairs", "1", "virtio with handling = vhost only: multi-queue virtio-net (mq=on, the tap's queues), 1..=the VM's vcpus; each queue pair its own device (TX and RX rings, a vhost-net worker, an MSI-X vector per queue with affinity vCPU i mod vcpus, a client flow). More than 1 only with workload tcp_receive or udp_receive (one receiver per queue pair, its flow steered to its own vCPU's queue). Absent: 1, QEMU's and libvirt's default.", "4"),
    k("vm.net.queue_size", "", I, "descriptors", "256", "Descriptors per virtqueue: a power of two in 2..=32768 (a VF: 64..=4096).", "256"),
    k("vm.net.vhost_pin", "", I, "pCPU", "absent: unpinned", "handling = vhost: the pCPU the device's vhost thread is pinned to.", "1"),
    k("vm.net.busyloop_timeout_us", "", I, "µs", "0", "handling = vhost: vhost-net busy polling (busyloop_timeout), 0..=1000000; 0 is off.", "0"),
    k("vm.net.event_idx", "", B, "", "true (virtio)", "virtio only: notification suppression by event indices (VIRTIO_RING_F_EVENT_IDX); false: the rings' flags only.", "true"),
    k("vm.net.offload.csum", "", B, "", "true (virtio)", "[vm.net.offload], virtio only: VIRTIO_NET_F_CSUM, the guest does not checksum what it sends.", "true"),
    k("vm.net.offload.guest_csum", "", B, "", "true (virtio)", "[vm.net.offload]: VIRTIO_NET_F_GUEST_CSUM, the host does not checksum what it delivers.", "true"),
    k("vm.net.offload.host_tso4", "", B, "", "true (virtio)", "[vm.net.offload]: VIRTIO_NET_F_HOST_TSO4, the guest sends TSO skbs; requires csum.", "true"),
    k("vm.net.offload.guest_tso4", "", B, "", "true (virtio)", "[vm.net.offload]: VIRTIO_NET_F_GUEST_TSO4, the guest takes GSO skbs in mergeable RX buffers (what the host's GRO merged reaches it whole); requires guest_csum.", "true"),
    k("vm.net.offload.host_gro", "", B, "", "true (virtio)", "[vm.net.offload]: the host NIC's GRO for this device's frames; without guest_tso4 it changes nothing (the host cuts the skb back).", "true"),
    k("vm.net.offload.gro", "", B, "", "true (virtio)", "[vm.net.offload]: the guest's own GRO (a netdev feature, not negotiated): one flow's run of data packets in a poll goes up as one skb.", "true"),
    // [vm.net.moderation]
    k("vm.net.moderation.kind", "", S, "", "\"none\"", "[vm.net.moderation]: the device's interrupt moderation, `none` (every interrupt fires at once), `fir`, `cgr`, `air`, `dim` (on a virtio queue, or the host driving an SR-IOV VF's EITR; not with net.itr_us) or `notf_coal` and `guest_dim` (virtio only), with the scheme's keys below.", "\"none\""),
    k("vm.net.moderation.itr", "fir", I, "interrupts/s", "8000", "FIR: at most this many interrupts per second (CGR/AIR paper §4.1: Linux's 8,000).", "8000"),
    k("vm.net.moderation.timeslice_ns", "cgr", I, "ns", "100000000", "CGR: the interval traffic is measured over (§4.2: 100 ms).", "100000000"),
    k("vm.net.moderation.full_bulk_min_bytes", "cgr", F, "bytes", "1200", "CGR: smallest average packet of full bulk traffic (§4.2).", "1200.0"),
    k("vm.net.moderation.intermediate_min_bytes", "cgr", F, "bytes", "300", "CGR: smallest average packet of intermediate bulk traffic (§4.2).", "300.0"),
    k("vm.net.moderation.critical_max_pps", "cgr", F, "packets/s", "20000", "CGR: small-packet traffic below this rate is latency critical (our choice).", "20000.0"),
    k("vm.net.moderation.itr_full_bulk", "cgr", I, "interrupts/s", "4000", "CGR: the rate of full bulk traffic (§4.2).", "4000"),
    k("vm.net.moderation.itr_intermediate", "cgr", I, "interrupts/s", "8000", "CGR: the rate of intermediate bulk traffic (§4.2).", "8000"),
    k("vm.net.moderation.itr_latency_sensitive", "cgr", I, "interrupts/s", "20000", "CGR: the rate of latency-sensitive traffic (§4.2).", "20000"),
    k("vm.net.moderation.itr_latency_critical", "cgr", I, "interrupts/s", "100000", "CGR: the rate of latency-critical traffic (§4.2).", "100000"),
    k("vm.net.moderation.initial_itr", "cgr", I, "interrupts/s", "8000", "CGR: the rate before the first timeslice closes.", "8000"),
    k("vm.net.moderation.interval_ns", "air", I, "ns", "100000000", "AIR: the measurement interval (not given by the paper; our choice, CGR's timeslice).", "100000000"),
    k("vm.net.moderation.k", "air", I, "packets", "512", "AIR: k, packets per interrupt, the VF RX ring (ixgbevf's default).", "512"),
    k("vm.net.moderation.c_cycles_per_s", "air", F, "cycles/s", "the profile's: cpu.ghz x 1e9 (one core)", "AIR: C, the CPU capacity of the VM (§4.3.3: one core's cycles); > 0.", "2.6e9"),
    k("vm.net.moderation.c_pkt_cycles", "air", F, "cycles", "the profile's: guest.tcp_rx_segment_ns (a TCP workload) or guest.udp_rx_packet_ns x cpu.ghz", "AIR: C_pkt, the CPU cost of one received packet; > 0.", "3000.0"),
    k("vm.net.moderation.c_int_cycles", "air", F, "cycles", "the profile's: (exit.interrupt_delivery_ns + exit.eoi_ns + guest.virtio_irq_ns + guest.napi_poll_ns) x cpu.ghz", "AIR: C_int, the CPU cost of one interrupt (an emulated LAPIC's, the paper's KVM setting); > 0.", "9000.0"),
    k("vm.net.moderation.offset", "air", F, "interrupts/s", "1000", "AIR: added to the target rate before the clamps (not given; our choice).", "1000.0"),
    k("vm.net.moderation.threshold", "air", F, "interrupts/s", "500", "AIR: the smallest change applied (not given; our choice).", "500.0"),
    k("vm.net.moderation.i_min", "air", F, "interrupts/s", "956", "AIR: I_min, the lowest rate the VF supports (ixgbe's IXGBE_MIN_INT_RATE).", "956.0"),
    k("vm.net.moderation.initial_rate", "air", I, "interrupts/s", "8000", "AIR: the rate before the first interval closes.", "8000"),
    k("vm.net.moderation.profiles", "dim", S, "", "\"rx_eqe\"", "DIM: Linux net DIM's profile table, `rx_eqe`, `rx_cqe`, `tx_eqe` or `tx_cqe`.", "\"rx_eqe\""),
    k("vm.net.moderation.start_ix", "dim", I, "", "1", "DIM: the starting profile index, 0..=4 (NET_DIM_DEF_PROFILE_*).", "1"),
    k("vm.net.moderation.start_ix", "guest_dim", I, "", "1", "Guest DIM (virtio only; Linux 6.8 virtio-net): the starting profile of net DIM's RX EQE table, 0..=4 (NET_DIM_DEF_PROFILE_EQE), written to the device's notification coalescing as max_usecs/max_packets.", "1"),
    k("vm.net.moderation.max_usecs", "notf_coal", I, "µs", "1000", "NOTF_COAL (virtio only): the longest a queue's notification waits after the first packet it covers (>= 1; QEMU device patch's RX value).", "1000"),
    k("vm.net.moderation.max_frames", "notf_coal", I, "packets", "10", "NOTF_COAL: packets that make the notification at once (>= 1; QEMU device patch's RX value; 0 in either key is no coalescing: use kind = \"none\").", "10"),
    // [vm.workload]
    k("vm.workload.kind", "", S, "", "absent: no application (the vCPUs idle, or run the CPU burn)", "[vm.workload]: what the VM runs, one of the kinds below (`packet_gen` is udp_receive).", "\"udp_stream\""),
    k("vm.workload.message_bytes", "udp_stream", I, "bytes", "required", "netperf UDP_STREAM from the guest: payload per datagram, 1..=65507.", "512"),
    k("vm.workload.rate_pps", "udp_stream", F, "datagrams/s", "absent: as fast as the vCPU can", "Open-loop send rate.", "100000.0"),
    k("vm.workload.message_bytes", "udp_receive", I, "bytes", "required", "netperf UDP_STREAM to the guest: payload per datagram, 1..=65507.", "512"),
    k("vm.workload.rate_pps", "udp_receive", F, "datagrams/s", "unpaced", "The client's send rate (> 0); absent, it sends as fast as its core (client.send_call_ns + bytes x client.tx_byte_ns + client.tx_skb_ns per IP fragment) and its send buffer allow, as netperf UDP_STREAM does.", "100000.0"),
    k("vm.workload.request_bytes", "udp_rr", I, "bytes", "required", "netperf UDP_RR: request payload, 1..=65507.", "64"),
    k("vm.workload.response_bytes", "udp_rr", I, "bytes", "required", "Response payload, 1..=65507.", "64"),
    k("vm.workload.interval_us", "udp_rr", F, "µs", "absent: the next request when the reply arrives", "A request every interval_us (ping-like open loop).", "100.0"),
    k("vm.workload.bytes", "ping", I, "bytes", "56", "ping from the client, answered by the guest kernel: ICMP payload (ping -s), 1..=65507.", "56"),
    k("vm.workload.interval_us", "ping", F, "µs", "absent: the next request when the reply arrives", "Time between echo requests (ping -i).", "1000.0"),
    k("vm.workload.message_bytes", "udp_ping", I, "bytes", "required", "A fixed-rate ping from the guest to an echo server: payload per datagram, 1..=65507.", "64"),
    k("vm.workload.interval_us", "udp_ping", F, "µs", "required", "Time between sends (open loop).", "1000.0"),
    k("vm.workload.interval_us", "cyclictest", F, "µs", "required", "cyclictest: time between timer wake-ups of its thread (DID runs 1000).", "1000.0"),
    k("vm.workload.rate", "request_stream", F, "requests/s", "one of rate and window is required", "The KVM testbed's guest: open-loop rate of 64-byte requests into the TX queue, 1..=1e8.", "10000.0"),
    k("vm.workload.window", "request_stream", I, "requests", "one of rate and window is required", "Requests outstanding (closed loop), 1..=4096.", "8"),
    k("vm.workload.consume", "request_stream", S, "", "\"poll\"", "How the guest sees completions: `poll` (its loop polls the used ring) or `irq` (on the device's interrupts).", "\"poll\""),
    k("vm.workload.interval_us", "irq_source", F, "µs", "required", "The testbed's interrupt generator: mean time between MSIs (each gap uniform in 0.5..1.5 x).", "100.0"),
    k("vm.workload.vcpu", "irq_source", I, "", "0", "The vCPU the interrupts are aimed at (then routed by interrupt_routing).", "0"),
    k("vm.workload.message_bytes", "tcp_stream", I, "bytes", "required", "netperf TCP_STREAM from the guest: bytes per write(), 1..=1048576.", "16384"),
    k("vm.workload.window_bytes", "tcp_stream", I, "bytes", "4194304", "Send window per connection, 65536..=1073741824.", "4194304"),
    k("vm.workload.streams", "tcp_stream", I, "threads", "1", "netperf threads, each with its own connection, 1..=64; thread s runs on vCPU s mod vcpus.", "1"),
    k("vm.workload.message_bytes", "tcp_receive", I, "bytes", "required", "netperf TCP_STREAM to the guest: bytes per recv(), 1..=1048576.", "16384"),
    k("vm.workload.send_bytes", "tcp_receive", I, "bytes", "16384", "Bytes per client write() (netperf -m), 1..=1048576; each write costs the client's core client.send_call_ns.", "64"),
    k("vm.workload.window_bytes", "tcp_receive", I, "bytes", "autotuned", "A fixed guest receive window (SO_RCVBUF, as netperf -S sets it: no autotuning), 65536..=1073741824; absent, the buffer starts at the profile kernel's tcp_rmem[1] and autotunes up to its tcp_rmem[2].", "4194304"),
    k("vm.workload.request_bytes", "tcp_rr", I, "bytes", "required", "netperf TCP_RR: request payload, 1..=14480 (the initial window).", "64"),
    k("vm.workload.response_bytes", "tcp_rr", I, "bytes", "required", "Response payload, 1..=1048576.", "64"),
    k("vm.workload.concurrency", "tcp_rr", I, "transactions", "1", "Transactions in flight (connections), 1..=1024.", "1"),
    k("vm.workload.concurrency", "memcached", I, "requests", "required", "memcached with a memaslap-like client: outstanding requests (one per connection), 1..=1024.", "16"),
    k("vm.workload.get_ratio", "memcached", F, "fraction", "0.9", "Fraction of gets, 0..=1.", "0.9"),
    k("vm.workload.value_bytes", "memcached", I, "bytes", "1024", "Value size, 1..=14000.", "1024"),
    k("vm.workload.key_bytes", "memcached", I, "bytes", "64", "Key size, 1..=250.", "64"),
    k("vm.workload.rate_rps", "memcached", F, "requests/s", "absent: closed loop", "Offered rate: each connection's requests are due at Poisson times (mutilate -q-like; latency counts from when due).", "10000.0"),
    k("vm.workload.threads", "memcached", I, "threads", "4", "memcached worker threads (-t), 1..=64; connection c is served by thread c mod threads.", "4"),
    k("vm.workload.concurrency", "http", I, "requests", "required", "A web server with an ab-like client: outstanding requests (ab -c), 1..=1024.", "8"),
    k("vm.workload.file_bytes", "http", I, "bytes", "required", "Size of the served file, 1..=1048576.", "4096"),
    k("vm.workload.server", "http", S, "", "\"apache\"", "`apache` or `nginx` (they differ in per-request CPU).", "\"nginx\""),
    k("vm.workload.keepalive", "http", B, "", "false", "Reuse connections (ab -k); false: a TCP connection per request.", "false"),
    k("vm.workload.workers", "http", I, "threads", "absent: one per vCPU, as `workers = vcpus` (nginx's worker_processes auto, a prefork Apache)", "Server workers, 1..=64; worker w is homed on vCPU w mod vcpus.", "2"),
    k("vm.workload.worker_ports", "http", B, "", "false", "Each worker listens on its own port (connection c to worker c mod workers); false: one shared socket.", "false"),
    k("vm.workload.clients", "webbench", I, "clients", "required", "A web server with a webbench-like client: concurrent clients, each a closed loop of HTTP/1.0 GETs (a connection per request), 1..=8192.", "1000"),
    k("vm.workload.file_bytes", "webbench", I, "bytes", "45", "Size of the page, 1..=1048576 (default: a stock Apache 2.2 index.html).", "45"),
    k("vm.workload.timeout_ms", "webbench", I, "ms", "1000", "A request not done this long after it was sent is abandoned and its client counted failed (a failed client stops), 1..=600000.", "1000"),
    k("vm.workload.server", "webbench", S, "", "\"apache\"", "`apache` or `nginx` (they differ in per-request CPU).", "\"apache\""),
    k("vm.workload.workers", "webbench", I, "processes", "absent: one per vCPU, as `workers = vcpus` (nginx's worker_processes auto, a prefork Apache)", "Server workers (Apache processes) sharing one listening socket, 1..=256; worker w is homed on vCPU w mod vcpus.", "5"),
    k("vm.workload.to_vcpu", "ipi_pingpong", I, "", "1", "kvm-unit-tests' IPI round trip (x86/vmexit.c `ipi`): vCPU 0 sends a call-function IPI to this vCPU (1..vcpus) and spins until its handler ran; the latency is the round trip. Not with [vm.guest_halt_poll].", "1"),
    k("vm.workload.targets", "ipi_pingpong", I, "vCPUs", "1", "How many vCPUs, from to_vcpu on, the one call-function IPI goes to (smp_call_function_many -> apic->send_IPI_mask: one ICR write per destination, or one KVM_HC_SEND_IPI hypercall with [vm.apic] pv_ipi); the sender waits for every handler. 1..=vcpus - to_vcpu.", "3"),
    k("vm.workload.interval_us", "ipi_pingpong", F, "µs", "absent: back to back", "Time between round trips (the sender idles meanwhile).", "100.0"),
    k("vm.workload.rate_rps", "httperf", F, "connections/s", "required", "A web server with an httperf-like open-loop client (--rate): a new connection at fixed intervals, each one HTTP/1.0 GET closed by the server, whatever became of the earlier ones; [1, 1e6]. Reported as vms[].httperf.", "2000.0"),
    k("vm.workload.file_bytes", "httperf", I, "bytes", "required", "Size of the served file, 1..=1048576.", "4096"),
    k("vm.workload.timeout_ms", "httperf", I, "ms", "1000", "httperf --timeout: a reply not complete this long after its SYN is an error (client-timo), 1..=600000 (default declared: RFC 6298's initial RTO).", "1000"),
    k("vm.workload.server", "httperf", S, "", "\"apache\"", "`apache` or `nginx` (they differ in per-request CPU).", "\"apache\""),
    k("vm.workload.workers", "httperf", I, "processes", "absent: one per vCPU, as `workers = vcpus` (nginx's worker_processes auto, a prefork Apache)", "Server workers sharing one listening socket, 1..=256; worker w is homed on vCPU w mod vcpus.", "4"),
    k("vm.workload.sessions", "specweb", I, "sessions", "required", "A web server with a SPECweb2009-Banking-like client: simultaneous user sessions on persistent HTTPS connections, each request, whole response, think, 1..=4096. Reported as vms[].specweb.", "200"),
    k("vm.workload.think_ms", "specweb", F, "ms", "10000", "Mean of the exponential think time between a response and the session's next request (its own seeded stream), [0, 600000]; the default is a declared prior (SPECweb2009's design document was not at hand).", "10000.0"),
    k("vm.workload.heavy_pct", "specweb", F, "%", "40", "Heavy requests (dynamic account pages with back-end queries), % of all, [0, 100]; the rest are light (declared prior: about half of Banking's 16 operations are such pages).", "40.0"),
    k("vm.workload.light_cpu_us", "specweb", F, "µs", "the profile's app.specweb_light_ns", "Server CPU of a light request, TLS work folded in, (0, 1e6]: replaces the profile's cost.", "200.0"),
    k("vm.workload.heavy_cpu_us", "specweb", F, "µs", "the profile's app.specweb_heavy_ns", "Server CPU of a heavy request (PHP, back-end reply processing, TLS), (0, 1e6]: replaces the profile's cost.", "2000.0"),
    k("vm.workload.light_bytes", "specweb", I, "bytes", "4096", "Response body of a light request, 1..=1048576.", "4096"),
    k("vm.workload.heavy_bytes", "specweb", I, "bytes", "16384", "Response body of a heavy request, 1..=1048576.", "16384"),
    k("vm.workload.workers", "specweb", I, "processes", "2 per vCPU", "Apache worker processes sharing one listening socket, 1..=256; worker w is homed on vCPU w mod vcpus.", "8"),
    k("vm.workload.rw", "fio", S, "", "\"randread\"", "fio's `rw`: `randread`, `randwrite`, `randrw`, `read`, `write` or `rw`, on the VM's disk ([vm.disk]: virtio-blk over a host RAM disk by default, or an assigned NVMe-like device; a request queue per vCPU its jobs use). On a RAM disk reads and writes cost the same, an NVMe disk serves them for the profile's nvme.read_ns and nvme.write_ns; offsets do not matter on either: it sets what each request is and is counted as (vms[].block.read_iops / write_iops).", "\"randrw\""),
    k("vm.workload.block_bytes", "fio", I, "bytes", "4096", "fio's `bs`: bytes per O_DIRECT request, a multiple of 512 in 512..=1048576.", "4096"),
    k("vm.workload.iodepth", "fio", I, "requests", "1", "fio's `iodepth`: requests each job keeps in flight, 1..=256 (1: a synchronous job that sleeps until each completion).", "16"),
    k("vm.workload.numjobs", "fio", I, "jobs", "1", "fio's `numjobs`: threads, 1..=64; job j runs on vCPU j mod queues, the disk having min(numjobs, vcpus) request queues, each its own back-end thread and interrupt.", "4"),
    k("vm.workload.rwmixread", "fio", F, "%", "50 (fio's)", "fio's `rwmixread`: reads, % of a mixed job's requests (rw = randrw or rw only), [0, 100].", "70.0"),
    k("vm.workload.request_timer", "fio", B, "", "true", "A timer armed before each request and cleared after it: two LAPIC timer writes per request, exits unless the delivery passes them through (DID §5.6's reading of fio).", "false"),
    k("vm.workload.readers", "filebench", I, "threads", "4", "filebench-like random I/O (ELVIS §4.5): reading threads, 0..=64, each one synchronous O_DIRECT request at a time on the VM's virtio-blk disk over a host RAM disk.", "4"),
    k("vm.workload.writers", "filebench", I, "threads", "4", "Writing threads, 0..=64 (at least one thread in all).", "4"),
    k("vm.workload.block_bytes", "filebench", I, "bytes", "4096", "Bytes per request, a multiple of 512 in 512..=1048576.", "4096"),
    k("vm.workload.work_ms", "cpu_job", F, "ms", "required", "A CPU-bound job (NPB FT-like) on vCPU 0: the guest CPU it needs, ms at the vCPU's full speed, > 0 and <= 1e7; its completion time is the metric.", "200.0"),
];

const N: usize = HEAD.len() + crate::config::io::KEYS.len() + TAIL.len();
static ALL: [Key; N] = joined(&[HEAD, crate::config::io::KEYS, TAIL]);

/// Every key, in the order a scenario file is usually written (`[host.io]`'s from
/// `config/io.rs`, each back end's beside its variant).
pub const KEYS: &[Key] = &ALL;

/// The workload kinds and moderation schemes the list names, in its order.
pub fn kinds(prefix: &str) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for key in KEYS.iter().filter(|x| !x.kind.is_empty() && x.key.starts_with(prefix)) {
        if !out.contains(&key.kind) {
            out.push(key.kind);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;
    use std::collections::BTreeSet;

    fn value(example: &str) -> toml::Value {
        let t: toml::Table = toml::from_str(&format!("v = {example}")).unwrap_or_else(|e| panic!("example {example}: {e}"));
        t["v"].clone()
    }

    /// Set the dotted `key` in `t`; `vm` and `cpu_hog` are arrays of one table.
    fn set(t: &mut toml::Table, key: &str, v: toml::Value) {
        let Some((head, rest)) = key.split_once('.') else {
            t.insert(key.into(), v);
            return;
        };
        let array = matches!(head, "vm" | "cpu_hog");
        let e = t.entry(head).or_insert_with(|| {
            let one = toml::Value::Table(toml::Table::new());
            if array { toml::Value::Array(vec![one]) } else { one }
        });
        let sub = match e {
            toml::Value::Array(a) => a[0].as_table_mut().unwrap(),
            toml::Value::Table(t) => t,
            other => panic!("{key}: {other} is not a table"),
        };
        set(sub, rest, v);
    }

    /// The dotted keys a parsed scenario holds (an unset optional key too: serialized as null).
    fn flatten(prefix: &str, v: &Value, out: &mut BTreeSet<String>) {
        match v {
            Value::Object(m) if prefix != "profile_overrides" => {
                for (k, x) in m {
                    flatten(&if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") }, x, out);
                }
            }
            Value::Array(a) if a.first().is_some_and(Value::is_object) => flatten(prefix, &a[0], out),
            _ => {
                out.insert(prefix.to_string());
            }
        }
    }

    const KINDLESS: [&str; 2] = ["vm.workload.kind", "vm.net.moderation.kind"];

    /// A scenario setting every listed key of workload `w` and moderation scheme `m` and every
    /// key of no kind: it parses, and the keys it holds are exactly the listed ones.
    fn check(w: &str, m: &str) {
        let mine: Vec<&Key> = KEYS
            .iter()
            .filter(|x| if x.key.starts_with("vm.workload.") { x.kind == w } else if x.key.starts_with("vm.net.moderation.") { x.kind == m } else { true })
            .filter(|x| !KINDLESS.contains(&x.key))
            .chain(KEYS.iter().filter(|x| KINDLESS.contains(&x.key)))
            .collect();
        let mut t = toml::Table::new();
        for x in &mine {
            set(&mut t, x.key, value(x.example));
        }
        set(&mut t, "vm.workload.kind", toml::Value::String(w.into()));
        set(&mut t, "vm.net.moderation.kind", toml::Value::String(m.into()));
        let text = toml::to_string(&t).unwrap();
        let sc = super::super::Scenario::from_toml("keys", &text).unwrap_or_else(|e| panic!("kind {w}, {m}: a listed key is not accepted: {e}\n{text}"));
        let mut got = BTreeSet::new();
        flatten("", &serde_json::to_value(&sc).unwrap(), &mut got);
        let listed: BTreeSet<String> = mine.iter().map(|x| x.key.to_string()).collect();
        let unlisted: Vec<_> = got.difference(&listed).collect();
        let unread: Vec<_> = listed.difference(&got).collect();
        assert!(unlisted.is_empty(), "kind {w}, {m}: keys the parser accepts that `eventpath keys` does not list: {unlisted:?}");
        assert!(unread.is_empty(), "kind {w}, {m}: listed keys the scenario does not hold: {unread:?}");
    }

    #[test]
    fn every_listed_key_is_accepted_and_every_accepted_key_listed() {
        for w in kinds("vm.workload.") {
            check(w, "none");
        }
        for m in kinds("vm.net.moderation.") {
            check("udp_stream", m);
        }
    }

    #[test]
    fn every_workload_kind_and_moderation_scheme_is_listed() {
        let names = super::super::de::allowed_names::<super::super::Workload>();
        let enum_kinds: BTreeSet<&str> = names.split('`').skip(1).step_by(2).filter(|n| *n != "packet_gen").collect();
        let listed: BTreeSet<&str> = kinds("vm.workload.").into_iter().collect();
        assert_eq!(enum_kinds, listed, "workload kinds ({names})");
        let schemes: BTreeSet<&str> = eventpath_policy::moderation::ModerationConfig::KINDS.into_iter().filter(|k| *k != "none").collect();
        assert_eq!(schemes, kinds("vm.net.moderation.").into_iter().collect());
    }

    #[test]
    fn each_key_is_listed_once_with_its_meaning() {
        let mut seen = BTreeSet::new();
        for x in KEYS {
            assert!(seen.insert((x.key, x.kind)), "{} ({}) listed twice", x.key, x.kind);
            assert!(!x.meaning.is_empty() && x.meaning.ends_with('.'), "{}: meaning", x.key);
            assert!(!x.default.is_empty(), "{}: default", x.key);
        }
    }
}
