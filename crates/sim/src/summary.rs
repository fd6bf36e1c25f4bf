//! The summary.json contract. Keys are stable; a metric that does not apply is `null`
//! (`None`, or a [`Measured`] collection that was not measured), never a made-up zero.
//! Documented in `docs/summary.md`.
//!
//! One set of types for both worlds: the simulator fills every key; the KVM testbed
//! (`eventpath-kvm`, `measure/summary.rs`) leaves what it cannot measure null and adds its own
//! keys through the type parameters ([`Summary`]'s `X` at the top level, `V` in each VM), which
//! serialize flattened into the same object. The simulator's are `()`: it adds nothing.

use serde::{Serialize, Serializer};
use std::collections::BTreeMap;
use std::fmt;
use std::ops::Deref;

/// A list or map the simulator always measures and another world may not: serialized as the
/// collection, or as `null` when not measured. It reads as the collection (empty when not
/// measured).
#[derive(Clone, Default, PartialEq)]
pub struct Measured<T> {
    value: T,
    measured: bool,
}

impl<T> From<T> for Measured<T> {
    fn from(value: T) -> Self {
        Self { value, measured: true }
    }
}

impl<T: Default> Measured<T> {
    /// No such measurement in this run (`null` in summary.json).
    pub fn not_measured() -> Self {
        Self { value: T::default(), measured: false }
    }
}

impl<T> Measured<T> {
    /// The collection, if it was measured.
    pub fn get(&self) -> Option<&T> {
        self.measured.then_some(&self.value)
    }
}

impl<T> Deref for Measured<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T: fmt::Debug> fmt::Debug for Measured<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.get() {
            Some(v) => v.fmt(f),
            None => f.write_str("not measured"),
        }
    }
}

impl<T: Serialize> Serialize for Measured<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.get().serialize(s)
    }
}

/// Throughput of a VM's workload.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Throughput {
    /// Payload Gbit/s.
    pub gbps: Option<f64>,
    /// Packets (datagrams, segments) per second.
    pub pps: Option<f64>,
    /// Application operations (requests, transactions) per second.
    pub ops_per_s: Option<f64>,
}

/// Latency distribution in microseconds.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Latency {
    /// Mean.
    pub mean: Option<f64>,
    /// Median.
    pub p50: Option<f64>,
    /// 90th percentile.
    pub p90: Option<f64>,
    /// 95th percentile (a QoS bound's usual percentile, DID §5.7).
    pub p95: Option<f64>,
    /// 99th percentile.
    pub p99: Option<f64>,
    /// 99.9th percentile.
    pub p999: Option<f64>,
    /// Maximum.
    pub max: Option<f64>,
}

/// Per-VM results; `V`: keys a world adds to each VM (the testbed's `guest`).
#[derive(Debug, Clone, Serialize)]
pub struct VmSummary<V = ()> {
    /// VM name.
    pub name: String,
    /// Exits per second keyed by reason (all nine reasons always present).
    pub exits_per_s: BTreeMap<&'static str, Option<f64>>,
    /// Sum over reasons.
    pub exits_total_per_s: Option<f64>,
    /// Exit handling time as % of the VM's vCPU time.
    pub eht_pct: Option<f64>,
    /// Time in guest mode as % of the VM's vCPU time.
    pub tig_pct: Option<f64>,
    /// Virtual interrupts delivered per second (all sources).
    pub interrupts_per_s: Option<f64>,
    /// The same by source: `device` (virtio, VF, MSI), `timer` (the LAPIC timer), `ipi` (another
    /// vCPU's IPI, of either kind). Null where the world does not tell them apart.
    pub interrupts_by_source_per_s: Measured<BTreeMap<&'static str, Option<f64>>>,
    /// The IPIs delivered per second by kind: `reschedule` (a woken thread's), `call_function`
    /// (`smp_call_function_single`). Simulator only (issue 32).
    pub ipis_by_kind_per_s: Measured<BTreeMap<&'static str, Option<f64>>>,
    /// Virtqueue kicks per second.
    pub kicks_per_s: Option<f64>,
    /// Workload throughput.
    pub throughput: Throughput,
    /// Workload latency.
    pub latency_us: Latency,
    /// Packets lost, % of sent.
    pub loss_pct: Option<f64>,
    /// vCPU busy time (guest + exits, not halted) as % of vCPU time, averaged over vCPUs.
    pub cpu_util_pct: Option<f64>,
    /// Share of the window all the VM's vCPU threads were on pCPUs at once, % (null for a
    /// one-vCPU VM): beside `coscheduled_if_independent_pct`, the lock-step gauge (issue 48).
    /// Simulator only.
    pub coscheduled_pct: Option<f64>,
    /// The share independent vCPU threads with the same time on pCPUs would give, % (the
    /// product of each one's share; null for a one-vCPU VM). Simulator only.
    pub coscheduled_if_independent_pct: Option<f64>,
    /// Of the device interrupts routed while one of the VM's vCPUs was running, the share (%)
    /// routed to a running vCPU (null for a one-vCPU VM or when none was routed so): whether
    /// its router finds a running vCPU where one exists (issue 48). Simulator only.
    pub running_target_found_pct: Option<f64>,
    /// Work the guest CPU burn got done as % of vCPU time (null without `guest_cpu_burn`): a
    /// fixed-work program's speed (DID §5.3's WhileLoop) relative to owning the CPU. Simulator only.
    pub guest_burn_pct: Option<f64>,
    /// Time the vCPU threads polled in KVM's halt polling, % of vCPU time (host CPU, not guest
    /// time; null without `[vm.halt_poll]`). Simulator only.
    pub halt_poll_pct: Option<f64>,
    /// Time the guest's idle loop polled (cpuidle-haltpoll), % of vCPU time (guest time; null
    /// without `[vm.guest_halt_poll]`). Simulator only.
    pub guest_halt_poll_pct: Option<f64>,
    /// Interrupt delivery mode: `emulated` or `posted` (added with issue 3).
    pub interrupt_delivery: Option<&'static str>,
    /// Device interrupts raised per second by the state their vCPU was in at that instant:
    /// `guest`, `exit` (in the hypervisor), `halted` (ES2 §3.3; added with issue 3).
    pub device_interrupts_by_target_state_per_s: Measured<BTreeMap<&'static str, Option<f64>>>,
    /// The interrupt-routing policy (`[vm] interrupt_routing`, e.g. `h_balance`); simulator only.
    pub interrupt_routing: Option<String>,
    /// Present only where the routing policy has no effect: on a one-vCPU VM every interrupt
    /// goes to its vCPU and nothing is boosted (issue 31).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupt_routing_note: Option<&'static str>,
    /// Device interrupts per second by the run state of the vCPU the routing sent each to, as
    /// the router saw it: `running`, `runnable` (preempted, waiting in a runqueue), `blocked`
    /// (halted) — hBalance Fig. 14's classes (issue 31). Simulator only.
    pub device_interrupts_by_run_state_per_s: Measured<BTreeMap<&'static str, Option<f64>>>,
    /// Of those, the ones whose default target (the guest's affinity) was not running, by the
    /// run state of the vCPU they went to: what a router did when the guest's choice was away
    /// (issue 48 item 2). Simulator only.
    pub default_target_away_by_run_state_per_s: Measured<BTreeMap<&'static str, Option<f64>>>,
    /// Latency by what was on a pCPU when each event began — `home_running` (the target vCPU),
    /// `other_running` (only another vCPU of the VM), `none_running` — for the interrupt source
    /// (`irq_source`; the testbed's `[irqgen]` VM); null otherwise (issue 15).
    pub latency_by_target_state_us: Measured<BTreeMap<&'static str, Latency>>,
    /// The webbench-like client's results; present only for a `webbench` VM (absent, not null,
    /// elsewhere, so that the summaries of every other workload stay as they were; issue 30).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub web: Option<WebSummary>,
    /// A CPU job's results; present only for a `cpu_job` VM (absent elsewhere; issue 30).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_job: Option<CpuJobSummary>,
    /// The lookbusy spinners' results; present only for a VM with `[vm.lookbusy]` (issue 31).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lookbusy: Option<LookbusySummary>,
    /// The httperf-like client's results; present only for an `http` VM with `rate_rps`
    /// (issue 31).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub httperf: Option<HttperfSummary>,
    /// The SPECweb2009-Banking-like client's results; present only for a `specweb` VM
    /// (issue 31).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub specweb: Option<SpecwebSummary>,
    /// A block workload's results; present only for a `fio` or `filebench` VM (issue 51).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block: Option<BlockSummary>,
    /// The guest's CFS over the application's threads (issue 48 item 3); present only for a
    /// workload of several threads (`tcp_stream` with `streams`, the TCP servers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub guest_threads: Option<GuestThreadsSummary>,
    /// A `tcp_receive` VM's receive window (issue 49); present only for that workload.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tcp_receive: Option<TcpReceiveSummary>,
    /// A TCP request/response VM's client resends (issue 49); present only for those
    /// workloads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tcp_rr: Option<TcpRrSummary>,
    /// Keys this world adds (flattened into the VM's object).
    #[serde(flatten)]
    pub extra: V,
}

/// A TCP receiver's window: fixed (`window_bytes`) or autotuned by the guest's kernel.
#[derive(Debug, Clone, Serialize)]
pub struct TcpReceiveSummary {
    /// Whether the kernel autotuned it (no `window_bytes`, `tcp_moderate_rcvbuf` on).
    pub autotuned: bool,
    /// The window it started at, bytes.
    pub window_initial_bytes: u64,
    /// Its largest window, bytes.
    pub window_max_bytes: u64,
    /// Its window at the run's end, bytes.
    pub window_end_bytes: u64,
    /// The mean window its ACKs advertised in the measured window (bytes, per ACK: the free
    /// space each announced); null without an ACK.
    pub window_mean_bytes: Option<f64>,
    /// Segments the client resent per second (each dropped at the host's tap queue or the
    /// VF's full ring, resent at the next ACK or at the retransmission timeout).
    pub retransmits_per_s: f64,
    /// Retransmission timeouts per second that found segments still to resend.
    pub timeouts_per_s: f64,
    /// The client's mean congestion window at the ACKs it received in the window (segments);
    /// null without an ACK.
    pub cwnd_mean_segments: Option<f64>,
    /// Its congestion window at the run's end (segments).
    pub cwnd_end_segments: u32,
}

/// What the client of a TCP request/response server resent.
#[derive(Debug, Clone, Serialize)]
pub struct TcpRrSummary {
    /// Request segments, SYNs and FINs resent per second, each after its retransmission
    /// timeout (a segment dropped at the host's tap queue or a VF's full ring).
    pub retransmits_per_s: f64,
    /// The most consecutive timeouts one connection reached in the window: its RTO was its
    /// initial one (200 ms; a SYN's `client.tcp_syn_rto_ns`) × 2^n.
    pub rto_backoff_max: u8,
}

/// A webbench-like client's results (CGR/AIR §5.3's two metrics).
#[derive(Debug, Clone, Serialize)]
pub struct WebSummary {
    /// Its clients.
    pub clients: u32,
    /// Pages completed per minute of the measured window (CGR/AIR's throughput unit).
    pub requests_per_min: Option<f64>,
    /// Clients whose request timed out, over the whole run (a failed client stops).
    pub failed_clients: u64,
}

/// A CPU job's results.
#[derive(Debug, Clone, Serialize)]
pub struct CpuJobSummary {
    /// The CPU work it needs, ms.
    pub work_ms: f64,
    /// It finished within the run.
    pub finished: bool,
    /// Its completion time, ms from the run's start; null if it had not finished.
    pub completion_ms: Option<f64>,
    /// The work it got done, % of `work_ms` (100 when finished).
    pub done_pct: f64,
}

/// A VM's lookbusy spinners (`[vm.lookbusy]`).
#[derive(Debug, Clone, Serialize)]
pub struct LookbusySummary {
    /// The utilization asked of each vCPU (`util_pct`), %.
    pub target_pct: f64,
    /// The spinners' cycle, ms.
    pub period_ms: f64,
    /// The spinners' guest CPU time, % of the VM's vCPU time (vCPUs × the window): what they
    /// achieved.
    pub util_pct: Option<f64>,
}

/// An httperf-like open-loop client (`http` with `rate_rps`).
#[derive(Debug, Clone, Serialize)]
pub struct HttperfSummary {
    /// The offered rate: new connections per second (`--rate`).
    pub rate_rps: f64,
    /// Connections opened in the window, per second.
    pub conn_rate_per_s: Option<f64>,
    /// Replies completed in the window, per second (httperf's reply rate).
    pub reply_rate_per_s: Option<f64>,
    /// Requests that timed out in the window (httperf's `client-timo` errors).
    pub errors: u64,
    /// Those errors, % of the window's outcomes (replies + errors: a connection opened in the
    /// warm-up may time out in the window).
    pub error_pct: Option<f64>,
}

/// A block workload's results (`kind = "fio"` / `"filebench"`, issue 51): IOPS is the VM's
/// `throughput.ops_per_s`, completion latency its `latency_us`.
#[derive(Debug, Clone, Serialize)]
pub struct BlockSummary {
    /// Reads completed in the window, per second.
    pub read_iops: Option<f64>,
    /// Writes completed in the window, per second.
    pub write_iops: Option<f64>,
    /// Bytes read and written per second, in MB/s (10^6 bytes).
    pub bandwidth_mb_s: Option<f64>,
    /// The disk's request queues (one per vCPU its jobs use).
    pub queues: u32,
    /// The disk (`[vm.disk] kind`): `virtio_blk` or `nvme`.
    pub device: &'static str,
}

/// A SPECweb2009-Banking-like session mix (`kind = "specweb"`).
#[derive(Debug, Clone, Serialize)]
pub struct SpecwebSummary {
    /// Simultaneous user sessions.
    pub sessions: u32,
    /// Requests finished in the window (SPECweb's "total finished requests" over it).
    pub finished_requests: u64,
    /// Those per second.
    pub requests_per_s: Option<f64>,
    /// Mean response time (request sent to the last byte of its response), ms.
    pub response_time_mean_ms: Option<f64>,
    /// The response time's 95th percentile, ms.
    pub response_time_p95_ms: Option<f64>,
    /// Finished requests by operation class (`light`, `heavy`).
    pub finished_by_class: BTreeMap<&'static str, u64>,
}

/// The guest scheduler's work on an application's threads (window).
#[derive(Debug, Clone, Serialize)]
pub struct GuestThreadsSummary {
    /// Application threads (netperf threads, server workers).
    pub threads: u32,
    /// Switches from one thread to another, burners included, per second.
    pub switches_per_s: Option<f64>,
    /// Moves of a thread to another vCPU per second, by cause: `wakeup`
    /// (`select_task_rq_fair`), `idle_balance`, `nohz_balance`, `periodic_balance`.
    pub migrations_per_s: BTreeMap<&'static str, Option<f64>>,
}

/// One host I/O thread.
#[derive(Debug, Clone, Serialize)]
pub struct IoThreadSummary {
    /// Thread name.
    pub name: String,
    /// Busy % of the measured time.
    pub util_pct: Option<f64>,
    /// % of polls that found no work (null for a thread that never polls).
    pub empty_poll_pct: Option<f64>,
    /// % of its items (packets, buffers) of a VM whose memory is on another node than the
    /// pCPU it served them on (null: a profile without `[numa]`, or no items; issue 48).
    pub remote_items_pct: Option<f64>,
    /// % of its busy time that was remote-memory cost (null likewise).
    pub remote_busy_pct: Option<f64>,
}

/// One host thread as the host scheduler ran it (added with the host scheduler, issue 3).
#[derive(Debug, Clone, Serialize)]
pub struct ThreadSummary {
    /// Thread name: `vcpu:<vm>/<i>`, `vhost-<vm>`, `hog<i>`.
    pub name: String,
    /// % of the measured time it ran on each pCPU (switch-in cost included).
    pub pcpu_pct: Vec<f64>,
    /// Moves to another pCPU per second (added with issue 9).
    pub migrations_per_s: f64,
}

/// Host-wide results.
#[derive(Debug, Clone, Serialize)]
pub struct HostSummary {
    /// Busy % of each pCPU: a thread ran there, or host interrupt work ran on it without one
    /// (as `/proc/stat` counts irq and softirq time on an otherwise idle CPU).
    pub pcpu_util_pct: Vec<f64>,
    /// % of each pCPU spent on host interrupt work (the host NIC's interrupts, RX NAPI and TX
    /// clean), whether it held up a thread there or ran on an idle pCPU (inside `pcpu_util_pct` either way).
    pub pcpu_softirq_pct: Measured<Vec<f64>>,
    /// Host I/O threads.
    pub io_threads: Vec<IoThreadSummary>,
    /// Every scheduled host thread and where it ran (added with the host scheduler).
    pub threads: Measured<Vec<ThreadSummary>>,
    /// Context switches per second, all pCPUs (added with the host scheduler).
    pub context_switches_per_s: Option<f64>,
    /// Thread migrations between pCPUs per second (added with the host scheduler).
    pub migrations_per_s: Option<f64>,
    /// The same by cause: `wakeup` (placement at wake-up), `idle_balance`, `nohz_balance`,
    /// `periodic_balance` (added with issue 9).
    pub migrations_by_cause_per_s: Measured<BTreeMap<&'static str, f64>>,
    /// Wake-ups placed on the waker's pCPU by `wake_affine`, per second (added with the host
    /// scheduler).
    pub wake_affine_per_s: Option<f64>,
    /// Threads woken onto an idle pCPU per second, by the idle state (C-state) the pCPU left;
    /// empty when the profile lists no idle states.
    pub idle_wakeups_by_cstate_per_s: Measured<BTreeMap<String, f64>>,
}

/// The whole summary; `X`: keys a world adds at the top level (the testbed's `kvm_stats`,
/// `counters`, `series`), `V`: keys it adds to each VM.
#[derive(Debug, Clone, Serialize)]
pub struct Summary<X = (), V = ()> {
    /// Scenario name.
    pub scenario: String,
    /// Seed used.
    pub seed: Option<u64>,
    /// Profile name.
    pub profile: Option<String>,
    /// Measured simulated seconds (warm-up excluded).
    pub sim_seconds: f64,
    /// Wall-clock seconds the run took (the only field that differs between identical runs).
    pub wall_seconds: f64,
    /// Events handled, warm-up included.
    pub events: Option<u64>,
    /// Per-VM results.
    pub vms: Vec<VmSummary<V>>,
    /// Host results.
    pub host: HostSummary,
    /// Flows the liveness watchdog saw stop making progress while their threads got to run
    /// (`model/watchdog.rs`). Empty in a healthy run: an entry is a model bug, not a result.
    pub stalled_flows: Measured<Vec<StalledFlow>>,
    /// Keys this world adds (flattened into the top-level object).
    #[serde(flatten)]
    pub extra: X,
}

/// A flow that made no progress for a whole watch window (at least 50 ms) although none of its
/// threads was kept waiting for a pCPU (added with issue 9).
#[derive(Debug, Clone, Serialize)]
pub struct StalledFlow {
    /// VM name.
    pub vm: String,
    /// Simulated seconds from the start (warm-up included) of its last progress.
    pub stalled_from_s: f64,
    /// When the watchdog saw the stall.
    pub detected_s: f64,
    /// When it made progress again; null if it never did.
    pub recovered_s: Option<f64>,
    /// The flow's event path when the stall was seen (vCPU modes, rings, I/O thread): what to
    /// put in a bug report.
    pub state: String,
}

impl Latency {
    /// Summarize a histogram of nanosecond values in microseconds.
    pub fn from_histogram(h: &crate::metrics::Histogram) -> Latency {
        Self::from_histogram_in(h, |ns| ns / 1000.0)
    }

    /// Summarize a histogram of values in any unit; `to_us` converts one to microseconds.
    pub fn from_histogram_in(h: &crate::metrics::Histogram, to_us: impl Fn(f64) -> f64) -> Latency {
        let us = |v: Option<f64>| v.map(&to_us);
        Latency {
            mean: us(h.mean()),
            p50: us(h.quantile(0.5)),
            p90: us(h.quantile(0.9)),
            p95: us(h.quantile(0.95)),
            p99: us(h.quantile(0.99)),
            p999: us(h.quantile(0.999)),
            max: us(h.max().map(|m| m as f64)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_collection_not_measured_is_null_and_reads_empty() {
        let m: Measured<Vec<u32>> = Measured::not_measured();
        assert_eq!(serde_json::to_string(&m).unwrap(), "null");
        assert!(m.is_empty() && m.get().is_none());
        assert_eq!(format!("{m:?}"), "not measured");
        let m = Measured::from(vec![1, 2]);
        assert_eq!(serde_json::to_string(&m).unwrap(), "[1,2]");
        assert_eq!((m[1], m.get().map(Vec::len)), (2, Some(2)));
        assert_eq!(format!("{m:?}"), "[1, 2]");
    }

    #[test]
    fn a_worlds_extra_keys_are_flattened_and_the_simulators_add_none() {
        #[derive(Serialize)]
        struct Extra {
            counters: u32,
        }
        fn vm<V>(extra: V) -> VmSummary<V> {
            VmSummary {
            name: "vm0".into(),
            exits_per_s: BTreeMap::new(),
            exits_total_per_s: None,
            eht_pct: None,
            tig_pct: None,
            interrupts_per_s: None,
            interrupts_by_source_per_s: Measured::not_measured(),
            ipis_by_kind_per_s: Measured::not_measured(),
            kicks_per_s: None,
            throughput: Throughput::default(),
            latency_us: Latency::default(),
            loss_pct: None,
            cpu_util_pct: None,
            coscheduled_pct: None,
            coscheduled_if_independent_pct: None,
            running_target_found_pct: None,
            guest_burn_pct: None,
            halt_poll_pct: None,
            guest_halt_poll_pct: None,
            interrupt_delivery: None,
            device_interrupts_by_target_state_per_s: Measured::not_measured(),
            interrupt_routing: None,
            interrupt_routing_note: None,
            device_interrupts_by_run_state_per_s: Measured::not_measured(),
            default_target_away_by_run_state_per_s: Measured::not_measured(),
            latency_by_target_state_us: Measured::not_measured(),
            web: None,
            cpu_job: None,
            lookbusy: None,
            httperf: None,
            specweb: None,
            block: None,
            guest_threads: None,
            tcp_receive: None,
            tcp_rr: None,
            extra,
            }
        }
        let sim = serde_json::to_value(vm(())).unwrap();
        let keys = |v: &serde_json::Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        assert_eq!(keys(&sim).len(), 25);
        let bed = serde_json::to_value(vm(Extra { counters: 3 })).unwrap();
        assert_eq!(bed["counters"], 3);
        assert_eq!(keys(&bed).len(), 26);
        assert!(bed["device_interrupts_by_target_state_per_s"].is_null());
    }
}
