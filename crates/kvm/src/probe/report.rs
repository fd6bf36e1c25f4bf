//! probe.json (docs/kvm.md, "The probe"): what each measurement reports.
use eventpath_sim::summary::Latency;
use super::stats::TrialStats;
use serde::Serialize;
use std::collections::BTreeMap;

/// The whole probe.json.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ProbeReport {
    /// `model name` of the host CPU.
    pub host_cpu: String,
    /// UTC date of the probe (`YYYY-MM-DD`).
    pub date: String,
    /// TSC frequency. Unit: Hz.
    pub tsc_hz: u64,
    /// Logical CPUs of the host.
    pub host_cpus: usize,
    /// Short runs (`--quick`).
    pub quick: bool,
    /// Trials: every measurement was made this many times, one full round after another.
    pub trials: usize,
    /// The outlier rule (`stats::RULE`).
    pub outlier_rule: &'static str,
    /// Parameters written into profile.toml, by profile key (`table.key`).
    pub profile: BTreeMap<String, Exported>,
    /// Measured values the simulator has no profile key for (named here, not in profile.toml).
    pub not_in_profile: BTreeMap<String, Exported>,
    /// Parameters whose trials disagree (the outlier rule): not exported anywhere else.
    pub refused: BTreeMap<String, Refused>,
    /// This host's idle governor and its parameters (the idle curve's context).
    pub host_idle: HostIdle,
    /// The measurements, one entry per trial.
    pub results: Vec<ProbeResults>,
}

/// One exported parameter.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Exported {
    /// The exported value: the median of the trials (in `unit`).
    pub value: f64,
    /// Its unit.
    pub unit: &'static str,
    /// The quantity measured, as the simulator applies it.
    pub measures: String,
    /// Why it is not in profile.toml (`not_in_profile` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why_not_in_profile: Option<&'static str>,
    /// The trials: values, median, min, max, spread.
    #[serde(flatten)]
    pub stats: TrialStats,
}

/// A parameter the outlier rule refused.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Refused {
    /// Why.
    pub reason: String,
    /// Its unit.
    pub unit: &'static str,
    /// The quantity measured.
    pub measures: String,
    /// Whether it would have been written into profile.toml (false: a `not_in_profile` value).
    pub profile_key: bool,
    /// The trials (`null` when none gave a value).
    pub stats: Option<TrialStats>,
}

/// `results`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ProbeResults {
    /// Guest loops that do nothing but notify, by path (`pio_exit_to_userspace`,
    /// `mmio_exit_to_userspace`, `pio_ioeventfd`, `mmio_ioeventfd`).
    pub notification_paths: BTreeMap<&'static str, NotificationPath>,
    /// Guest kick -> a sleeping exit-mode backend thread sees it.
    pub kick_to_backend_handler: KickToBackend,
    /// Kicks of a request stream to an exit-mode backend.
    pub kick_under_load: KickUnderLoad,
    /// A stream to a polling backend.
    pub polled_ring_request: PolledRing,
    /// MSI injection -> the spinning guest noticed.
    pub msi_injection_to_handler: MsiInjection,
    /// MSI -> a halted vCPU ran its handler, by `<halt poll setting>_gap_<gap>us`.
    pub hlt_wakeup: BTreeMap<String, HltWakeup>,
    /// KVM_SET_GSI_ROUTING on an idle VM.
    pub msi_reroute_us: Reroute,
    /// A thread's 10 µs timed sleeps (ES2's joint-thread sleep, as the testbed backend makes them).
    pub timed_sleep: TimedSleep,
    /// Kick -> a sleeping backend thread at idle lengths [`IDLE_GAPS_US`], shortest first: the
    /// wake-up latency and CPU per wake-up as a function of the idle before the wake-up.
    pub idle_curve: Vec<IdleCurvePoint>,
}

/// The idle lengths the probe's idle curve measures (one kick every gap). Unit: µs.
pub const IDLE_GAPS_US: [u64; 4] = [20, 100, 500, 2000];

/// One point of `idle_curve`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct IdleCurvePoint {
    /// One kick every this long (the backend thread idles for the rest). Unit: µs.
    pub gap_us: u64,
    /// The kick (PIO, ioeventfd) and the backend thread it woke.
    pub kick: KickSamples,
}

/// `host_idle`: this host's cpuidle set-up (sysfs), read once.
#[derive(Debug, Clone, Default, Serialize)]
pub struct HostIdle {
    /// /sys/devices/system/cpu/cpuidle/current_governor (empty if unreadable).
    pub governor: String,
    /// /sys/devices/system/cpu/cpuidle/current_driver.
    pub driver: String,
    /// /sys/module/haltpoll/parameters/* (name -> value), where the haltpoll governor is loaded.
    pub haltpoll: BTreeMap<String, String>,
}

/// `timed_sleep`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TimedSleep {
    /// The sleep asked for. Unit: µs.
    pub asked_us: f64,
    /// Wall time per sleep, call to return. Unit: µs.
    pub wall_us_per_sleep: Option<f64>,
    /// The thread's CPU time per sleep. Unit: µs.
    pub cpu_us_per_sleep: Option<f64>,
    /// Sleeps timed.
    pub sleeps: u64,
    /// What is measured.
    pub note: &'static str,
}

/// One notification path.
#[derive(Debug, Clone, Default, Serialize)]
pub struct NotificationPath {
    /// Guest TSC around the notifying instruction per notification. Unit: µs.
    pub guest_cost_us_per_notification: Option<f64>,
    /// Notifications per second of one vCPU.
    pub notifications_per_s: Option<f64>,
    /// KVM exits per notification.
    pub kvm_exits_per_notification: Option<f64>,
    /// Notifications made.
    pub notifications: f64,
    /// What the path is.
    pub note: &'static str,
}

/// `kick_to_backend_handler`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct KickToBackend {
    /// PIO kicks through an ioeventfd.
    pub pio_ioeventfd: KickSamples,
    /// MMIO kicks through an ioeventfd.
    pub mmio_ioeventfd: KickSamples,
    /// What is measured.
    pub note: &'static str,
}

/// Kick -> backend latency of one path.
#[derive(Debug, Clone, Default, Serialize)]
pub struct KickSamples {
    /// Its distribution. Unit: µs.
    pub latency_us: Latency,
    /// Kicks timed.
    pub samples: u64,
    /// Kicks made.
    pub kicks: u64,
    /// Guest TSC around each kick instruction, per kick (each wakes the backend). Unit: µs.
    pub guest_cost_us_per_kick: Option<f64>,
    /// The backend thread's wake-ups: kick eventfd reads that found a count.
    pub backend_wakeups: u64,
    /// The backend thread's CPU time (/proc/self/task/TID/schedstat) over the window, divided by
    /// its wake-ups. Unit: µs.
    pub backend_cpu_us_per_wakeup: Option<f64>,
    /// The backend thread's mean idle before a wake-up: (window - its CPU time) / its kick
    /// wake-ups (its <= 200/s 5 ms poll timeouts not counted apart). Unit: µs.
    pub backend_idle_us_per_wakeup: Option<f64>,
}

/// `kick_under_load`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct KickUnderLoad {
    /// Offered requests per second.
    pub offered_per_s: f64,
    /// Guest TSC around each kick instruction, per kick. Unit: µs.
    pub guest_cost_us_per_kick: Option<f64>,
    /// Kicks per request (event-index suppression merges kicks while the backend is busy).
    pub kicks_per_request: Option<f64>,
    /// Requests completed per second.
    pub requests_per_s: Option<f64>,
    /// Kicks made.
    pub kicks: u64,
    /// What is measured.
    pub note: &'static str,
}

/// `polled_ring_request`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PolledRing {
    /// Kicks per request (0: the backend polls).
    pub kicks_per_request: Option<f64>,
    /// Requests completed per second.
    pub requests_per_s: Option<f64>,
    /// Submit -> the guest sees the completion. Unit: µs.
    pub request_to_completion_seen_us: Latency,
    /// The guest loop's own time per request (submit, publish, reap, record). Unit: ns.
    pub guest_ns_per_request: Option<f64>,
    /// The backend's own time per request (ring check that found it -> used entry). Unit: ns.
    pub backend_ns_per_request: Option<f64>,
    /// What is measured.
    pub note: &'static str,
}

/// `msi_injection_to_handler`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct MsiInjection {
    /// irqfd write -> the guest noticed. Unit: µs.
    pub latency_us: Latency,
    /// Injections timed.
    pub samples: Option<u64>,
    /// The injections made while the target vCPU was seen running (its guest heartbeat
    /// advancing): the delivery to a running vCPU, without waits for a descheduled one. Unit: µs.
    pub vcpu_running_latency_us: Latency,
    /// Injections in `vcpu_running_latency_us`.
    pub vcpu_running_samples: u64,
    /// What is measured.
    pub note: &'static str,
}

/// One `hlt_wakeup` run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct HltWakeup {
    /// MSI -> the halted vCPU ran its handler. Unit: µs.
    pub latency_us: Latency,
    /// The vCPU thread's CPU use (halt polling shows here). Unit: %.
    pub vcpu_cpu_util_pct: Option<f64>,
    /// KVM `halt_exits`.
    pub halt_exits: Option<u64>,
    /// KVM `halt_successful_poll`.
    pub halt_successful_poll: Option<u64>,
    /// KVM `halt_attempted_poll`.
    pub halt_attempted_poll: Option<u64>,
}

/// `msi_reroute_us`. Unit: µs.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Reroute {
    /// Median.
    pub median: f64,
    /// 90th percentile.
    pub p90: f64,
    /// Re-routes timed.
    pub samples: usize,
    /// Conditions.
    pub note: &'static str,
}
