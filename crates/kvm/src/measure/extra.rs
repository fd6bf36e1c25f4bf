//! The keys the testbed adds to the simulator's summary.json types (`eventpath_sim::summary`):
//! `kvm_stats`, `counters` and `series` at the top level, `guest` in each VM. docs/kvm.md says
//! what each means here.
use crate::backend::CounterValues;
use eventpath_sim::summary::{Latency, Summary};
use serde::Serialize;
use std::collections::BTreeMap;

/// The testbed's summary.json: the simulator's types with the testbed's keys added.
pub type TestbedSummary = Summary<TestbedKeys, GuestKeys>;

/// Top-level keys only the testbed has.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TestbedKeys {
    /// Raw KVM binary-statistics deltas, one entry per VM.
    pub kvm_stats: Vec<KvmStats>,
    /// Backend, guest-error and generator counters.
    pub counters: Counters,
    /// Time series sampled over the measured window.
    pub series: Vec<SeriesData>,
    /// Each vCPU and backend thread's moves to another CPU (the kernel's `se.nr_migrations`);
    /// their sum is `host.migrations_per_s`.
    pub thread_migrations: Vec<ThreadMigrations>,
}

/// `thread_migrations[]`: one thread's migrations over the measured window.
#[derive(Debug, Clone, Serialize)]
pub struct ThreadMigrations {
    /// `vcpu:<vm>/<i>` (the simulator's name for a vCPU thread) or the backend thread's name.
    pub name: String,
    /// Moves to another CPU per second (null: the kernel gives no count, no
    /// `CONFIG_SCHED_DEBUG`). Unit: 1/s.
    pub migrations_per_s: Option<f64>,
}

/// One VM's KVM statistics over the measured window.
#[derive(Debug, Clone, Serialize)]
pub struct KvmStats {
    /// VM name.
    pub vm: String,
    /// VM-wide statistics by KVM's name.
    pub vm_stats: BTreeMap<String, u64>,
    /// Per vCPU, statistics by KVM's name.
    pub vcpus: Vec<BTreeMap<String, u64>>,
}

/// `counters`: what the backend threads and the interrupt generator counted.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Counters {
    /// Backend counters summed over threads (identities in `backend/mod.rs`).
    pub backend: CounterValues,
    /// The same per backend thread.
    pub per_thread: Vec<ThreadCounters>,
    /// Interrupts written to irqfds.
    pub interrupts_sent: u64,
    /// Interrupts delayed or merged by moderation.
    pub interrupts_coalesced: u64,
    /// Requests completed per interrupt sent.
    pub completions_per_interrupt: Option<f64>,
    /// Ring checks.
    pub polls: u64,
    /// Ring checks that found nothing.
    pub empty_polls: u64,
    /// MSI re-routes, backend and generator.
    pub routing_changes: u64,
    /// Bad guest requests by kind.
    pub guest_errors: BTreeMap<&'static str, u64>,
    /// The interrupt generator's results (null without `[irqgen]`).
    pub irqgen: Option<IrqGenCounters>,
    /// TSC frequency. Unit: Hz.
    pub tsc_hz: u64,
    /// Guest kick instruction -> a sleeping backend thread woken by it.
    pub kick_to_backend: LatencySamples,
}

/// One backend thread's counters.
#[derive(Debug, Clone, Serialize)]
pub struct ThreadCounters {
    /// Thread name.
    pub name: String,
    /// Its counters over the window.
    pub counters: CounterValues,
}

/// A latency distribution with its sample count.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LatencySamples {
    /// Values recorded.
    pub samples: u64,
    /// Their distribution. Unit: µs.
    pub latency_us: Latency,
}

/// `counters.irqgen`.
#[derive(Debug, Clone, Serialize)]
pub struct IrqGenCounters {
    /// Injections whose latency was recorded.
    pub samples: u64,
    /// Injections sent while recording.
    pub sent: u64,
    /// Latency by the run state seen at injection: `home_running`, `other_running`,
    /// `none_running`.
    pub by_run_state: BTreeMap<&'static str, LatencySamples>,
    /// Injections not noticed within 50 ms.
    pub lost: u64,
    /// MSI re-routes.
    pub route_changes: u64,
    /// Mean time in KVM_SET_GSI_ROUTING per re-route. Unit: µs.
    pub reroute_us_mean: Option<f64>,
}

/// One time series (`series[]`).
#[derive(Debug, Clone, Serialize)]
pub struct SeriesData {
    /// `<vm>.vcpu<i>.offered_rate`, `<vm>.interrupts_per_s`, `<vm>.completions_per_s`,
    /// `<vm>.q<i>.allowed_irq_rate`.
    pub name: String,
    /// Sample times from the start of the measured window. Unit: s.
    pub t_s: Vec<f64>,
    /// Values (null where undefined).
    pub value: Vec<Option<f64>>,
}

/// Keys only the testbed has in each VM.
#[derive(Debug, Clone, Serialize)]
pub struct GuestKeys {
    /// What the guest itself counted.
    pub guest: GuestCounters,
}

/// `vms[].guest`: the guest's counters over the window.
#[derive(Debug, Clone, Serialize)]
pub struct GuestCounters {
    /// Requests put in the avail ring.
    pub requests_submitted: u64,
    /// Completions consumed.
    pub requests_completed: u64,
    /// Requests not submitted because the ring was full.
    pub requests_dropped_ring_full: u64,
    /// Notifications made.
    pub kicks: u64,
    /// Notifications the device's event index made unnecessary.
    pub kicks_suppressed: u64,
    /// Kicks per submitted request.
    pub kicks_per_request: Option<f64>,
    /// KVM exits per completed request.
    pub exits_per_request: Option<f64>,
    /// Guest time around kick instructions per submitted request. Unit: µs.
    pub kick_cost_us_per_request: Option<f64>,
    /// The same per kick. Unit: µs.
    pub kick_cost_us_per_kick: Option<f64>,
    /// The guest loop's time in turns that submitted or reaped (kicks and halts excluded) per
    /// completed request: its own cost of a request. Unit: ns.
    pub work_ns_per_request: Option<f64>,
    /// Interrupts the CPL0 handler ran for.
    pub interrupts_handled: u64,
    /// HLT instructions.
    pub halts: u64,
    /// Malformed requests the adversary load wrote.
    pub garbage_requests_sent: u64,
    /// Latencies recorded.
    pub latency_samples: u64,
}
