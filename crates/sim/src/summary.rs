//! The summary.json contract. Keys are stable; a metric that does not apply is `null`
//! (`None`), never a made-up zero. Documented in `docs/summary.md`.

use serde::Serialize;
use std::collections::BTreeMap;

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
    /// 99th percentile.
    pub p99: Option<f64>,
    /// 99.9th percentile.
    pub p999: Option<f64>,
    /// Maximum.
    pub max: Option<f64>,
}

/// Per-VM results.
#[derive(Debug, Clone, Serialize)]
pub struct VmSummary {
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
    /// Virtual interrupts delivered per second.
    pub interrupts_per_s: Option<f64>,
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
    /// Interrupt delivery mode: `emulated` or `posted` (added with issue 3).
    pub interrupt_delivery: &'static str,
    /// Device interrupts raised per second by the state their vCPU was in at that instant:
    /// `guest`, `exit` (in the hypervisor), `halted` (ES2 §3.3; added with issue 3).
    pub device_interrupts_by_target_state_per_s: BTreeMap<&'static str, Option<f64>>,
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
    /// Busy % of each pCPU.
    pub pcpu_util_pct: Vec<f64>,
    /// Host I/O threads.
    pub io_threads: Vec<IoThreadSummary>,
    /// Every scheduled host thread and where it ran (added with the host scheduler).
    pub threads: Vec<ThreadSummary>,
    /// Context switches per second, all pCPUs (added with the host scheduler).
    pub context_switches_per_s: Option<f64>,
    /// Thread migrations between pCPUs per second (added with the host scheduler).
    pub migrations_per_s: Option<f64>,
    /// The same by cause: `wakeup` (placement at wake-up), `idle_balance`, `nohz_balance`,
    /// `periodic_balance` (added with issue 9).
    pub migrations_by_cause_per_s: BTreeMap<&'static str, f64>,
    /// Wake-ups placed on the waker's pCPU by `wake_affine`, per second (added with the host
    /// scheduler).
    pub wake_affine_per_s: Option<f64>,
    /// Threads woken onto an idle pCPU per second, by the idle state (C-state) the pCPU left;
    /// empty when the profile lists no idle states.
    pub idle_wakeups_by_cstate_per_s: BTreeMap<String, f64>,
}

/// The whole summary.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// Scenario name.
    pub scenario: String,
    /// Seed used.
    pub seed: u64,
    /// Profile name.
    pub profile: String,
    /// Measured simulated seconds (warm-up excluded).
    pub sim_seconds: f64,
    /// Wall-clock seconds the run took (the only field that differs between identical runs).
    pub wall_seconds: f64,
    /// Events handled, warm-up included.
    pub events: u64,
    /// Per-VM results.
    pub vms: Vec<VmSummary>,
    /// Host results.
    pub host: HostSummary,
    /// Flows the liveness watchdog saw stop making progress while their threads got to run
    /// (`model/watchdog.rs`). Empty in a healthy run: an entry is a model bug, not a result.
    pub stalled_flows: Vec<StalledFlow>,
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
        let us = |v: Option<f64>| v.map(|x| x / 1000.0);
        Latency {
            mean: us(h.mean()),
            p50: us(h.quantile(0.5)),
            p90: us(h.quantile(0.9)),
            p99: us(h.quantile(0.99)),
            p999: us(h.quantile(0.999)),
            max: us(h.max().map(|m| m as f64)),
        }
    }
}
