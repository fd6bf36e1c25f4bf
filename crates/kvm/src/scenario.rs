//! Testbed scenario files (TOML). Every table denies unknown keys; every value is range-checked
//! with a message naming the key, the value and what is allowed. See docs/kvm.md for the keys.
use crate::error::{Error, Result};
use crate::vmm::layout::{MAX_QSIZE, MAX_VCPUS};
use eventpath_policy::moderation::ModerationConfig;
use eventpath_policy::routing::RouterConfig;
use serde::Deserialize;

pub use eventpath_sim::scenario::{Es2Switch, Handling, IoHandling};

mod check;
mod io;
#[cfg(test)]
mod tests;

/// A whole scenario.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Name in summary.json.
    pub name: String,
    /// Measured duration, seconds (0.05..=600).
    #[serde(default = "d_duration")]
    pub duration_s: f64,
    /// Warm-up before measuring, seconds (0..=60).
    #[serde(default = "d_warmup")]
    pub warmup_s: f64,
    /// `[host]`: only `[host.io]` here (the simulator's other host keys describe a simulated
    /// machine; this one is real).
    #[serde(default)]
    pub host: HostCfg,
    /// The testbed's own back-end keys (thread layout, vhost pinning and busy polling).
    #[serde(default)]
    pub backend: BackendCfg,
    /// Interrupt moderation of every device (policy `ModerationConfig`, `kind = "none" | "fir" |
    /// "cgr" | "air" | "dim"`).
    #[serde(default, deserialize_with = "moderation")]
    pub moderation: ModerationConfig,
    /// Interrupt routing (policy `RouterConfig`: "fixed", "lowest_priority_rr", "running_first",
    /// "es2", "h_balance").
    #[serde(default)]
    pub routing: RouterConfig,
    /// How a routing decision reaches KVM: "gsi_routing" (rewrite the MSI's GSI route with
    /// KVM_SET_GSI_ROUTING, default) | "irqfd_per_vcpu" (one irqfd per vCPU with a fixed route,
    /// the sender writes the chosen vCPU's).
    #[serde(default)]
    pub reroute: Reroute,
    /// Optional interrupt generator.
    pub irqgen: Option<IrqGenCfg>,
    /// The VMs.
    pub vm: Vec<VmCfg>,
}

/// `[moderation]`: an unknown `kind` is named with the kinds allowed; other errors say where.
fn moderation<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<ModerationConfig, D::Error> {
    use serde::de::Error;
    let v = toml::Value::deserialize(d)?;
    let kind = v.get("kind").and_then(|k| k.as_str()).unwrap_or("none");
    if !ModerationConfig::KINDS.contains(&kind) {
        return Err(D::Error::custom(format!("moderation.kind = {kind:?}: allowed: {}", ModerationConfig::KINDS.join(", "))));
    }
    ModerationConfig::deserialize(v).map_err(|e| D::Error::custom(format!("moderation: {}", e.message())))
}

fn d_duration() -> f64 {
    0.5
}
fn d_warmup() -> f64 {
    0.1
}

/// The defaults a scenario file gets, with no name and no VM (which a file must give).
impl Default for Scenario {
    fn default() -> Self {
        Self {
            name: String::new(),
            duration_s: d_duration(),
            warmup_s: d_warmup(),
            host: HostCfg::default(),
            backend: BackendCfg::default(),
            moderation: ModerationConfig::default(),
            routing: RouterConfig::default(),
            reroute: Reroute::default(),
            irqgen: None,
            vm: vec![],
        }
    }
}

/// How an MSI is moved to another vCPU.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reroute {
    /// KVM_SET_GSI_ROUTING rewrites the source's route (costs 15-92 µs idle, ms when the vCPUs'
    /// host CPU is saturated: see docs/kvm.md, experiment 4).
    #[default]
    GsiRouting,
    /// One pre-routed irqfd per (source, vCPU); moving costs nothing.
    IrqfdPerVcpu,
}

/// `[host]` of a testbed scenario.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostCfg {
    /// `[host.io]`: how the back end serves the queues — the simulator's own type
    /// (`eventpath_sim::scenario::IoHandling`: `handling = "vhost" | "es2" | "elvis" | "pmd"`
    /// and each policy's keys), so that one table means the same in both worlds. `cores` pins
    /// the es2, elvis and pmd threads (round robin); vhost threads take `backend.pin`.
    #[serde(default)]
    pub io: IoHandling,
}

/// `[backend]`: what only the testbed has. Which keys each handling reads: `scenario/check.rs`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BackendCfg {
    /// "shared" (one thread for every queue of every VM) | "per_queue" (one thread per queue).
    pub threads: String,
    /// handling = "vhost": host CPUs of its threads (round robin); empty: not pinned. (The
    /// simulator pins a vhost thread per VM, `[vm.net] vhost_pin`; the other handlings' threads
    /// run on `host.io.cores` in both worlds.)
    pub pin: Vec<usize>,
    /// Host processing per request, ns (0..=1e6), spun by the back end.
    pub service_ns: u64,
    /// handling = "vhost": vhost-net's busyloop_timeout, µs (0..=1e6). The simulator's key is
    /// per VM (`[vm.net] busyloop_timeout_us`); here a vhost thread may serve several VMs.
    pub busyloop_us: u32,
}

impl Default for BackendCfg {
    fn default() -> Self {
        Self { threads: "shared".into(), pin: vec![], service_ns: 0, busyloop_us: 0 }
    }
}

/// The interrupt generator.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IrqGenCfg {
    /// Mean gap between injections, µs (1..=1e6); each gap is uniform in [0.5, 1.5] x gap_us,
    /// independent of whether earlier interrupts were handled (open loop).
    pub gap_us: f64,
    /// Index of the VM it targets.
    #[serde(default)]
    pub vm: usize,
    /// Programmed destination vCPU.
    #[serde(default)]
    pub vcpu: usize,
    /// Host CPU of the generator thread.
    pub pin: Option<usize>,
}

/// One VM.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VmCfg {
    /// Name in summary.json.
    pub name: String,
    /// vCPUs (1..=8).
    #[serde(default = "one")]
    pub vcpus: u64,
    /// Host CPU per vCPU (same length as vcpus), empty: not pinned.
    #[serde(default)]
    pub pin: Vec<usize>,
    /// KVM halt_poll_ns for this VM; absent: the host default.
    pub halt_poll_ns: Option<u64>,
    /// "pio" | "mmio" kicks.
    #[serde(default = "d_kick")]
    pub kick: String,
    /// Virtqueue size (power of two, 2..=1024).
    #[serde(default = "d_qsize")]
    pub queue_size: u64,
    /// Load per vCPU in order; vCPUs without an entry spin.
    #[serde(default)]
    pub load: Vec<LoadCfg>,
}

/// The defaults a `[[vm]]` table gets, with no name (which a file must give).
impl Default for VmCfg {
    fn default() -> Self {
        Self { name: String::new(), vcpus: one(), pin: vec![], halt_poll_ns: None, kick: d_kick(), queue_size: d_qsize(), load: vec![] }
    }
}

fn one() -> u64 {
    1
}
fn d_kick() -> String {
    "pio".into()
}
fn d_qsize() -> u64 {
    256
}

/// What one vCPU does.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LoadCfg {
    /// "stream" | "closed" | "burst" | "spin" | "irq_sink" | "adversary" | "kick_loop" (kick
    /// every iteration through the VM's ioeventfd) | "exit_loop" (PIO/MMIO exit to userspace).
    pub pattern: String,
    /// stream: requests per second (1..=1e8).
    pub rate: f64,
    /// closed: outstanding requests (1..=queue_size).
    pub window: u64,
    /// burst: requests per burst (1..=queue_size).
    pub burst: u64,
    /// burst: gap between bursts, µs; adversary: gap between garbage requests, µs.
    pub gap_us: f64,
    /// "poll" the used ring or consume after "irq".
    pub consume: String,
    /// Halt when waiting (closed loop with consume = "irq", irq_sink).
    pub halt_when_idle: bool,
    /// Guest work per completion, ns.
    pub work_ns: u64,
    /// adversary: kinds of garbage (default: all six).
    pub adversary: Vec<String>,
    /// stream: rate changes during the run (`{at_s, rate}`, at_s from the start of the measured
    /// window, increasing, < duration_s).
    pub steps: Vec<StepCfg>,
}

/// One load step: from `at_s` seconds after the measured window starts, the stream's rate is
/// `rate` requests/s.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepCfg {
    /// Seconds after the start of the measured window (0..duration_s).
    pub at_s: f64,
    /// New rate, requests per second (1..=1e8).
    pub rate: f64,
}

impl Default for LoadCfg {
    fn default() -> Self {
        Self {
            pattern: "spin".into(),
            rate: 10_000.0,
            window: 1,
            burst: 8,
            gap_us: 100.0,
            consume: "poll".into(),
            halt_when_idle: false,
            work_ns: 0,
            adversary: ADVERSARY_KINDS.iter().map(|s| s.to_string()).collect(),
            steps: vec![],
        }
    }
}

/// Garbage kinds the adversary can write, in guest order (guest.c adversary_one).
pub const ADVERSARY_KINDS: [&str; 6] =
    ["head_out_of_range", "addr_out_of_range", "huge_length", "chain_loop", "next_out_of_range", "avail_idx_jump"];

impl Scenario {
    /// Parses and validates a scenario file's text.
    pub fn parse(text: &str) -> Result<Scenario> {
        // One line naming the key and the line, formatted as the simulator's scenarios are.
        let s: Scenario = serde_path_to_error::deserialize(toml::Deserializer::new(text)).map_err(|e| {
            let msg = eventpath_sim::error::describe_toml_error(e.path(), e.inner(), text);
            let hint = if msg.contains("unknown field `profile`") {
                " (this looks like a simulator scenario: run it with `eventpath run`)"
            } else if msg.contains("key `backend.") && ["mode", "quota", "max_poll_count", "elvis"].iter().any(|k| msg.contains(&format!("unknown field `{k}`"))) {
                // The keys before issue 27, which [host.io] replaced.
                " (the back end is chosen by [host.io] now, the simulator's table: mode \"exit\" -> handling = \"vhost\"; \"perceptive\" / \"optimistic\" -> handling = \"es2\" with switch, quota, poll_count; \"elvis\" -> handling = \"elvis\" with its keys; \"poll\" -> handling = \"pmd\" with cores; docs/kvm.md)"
            } else {
                ""
            };
            Error::Input(format!("{msg}{hint}"))
        })?;
        // Parsed already: the same text gives the same table. `[backend]` keys the handling does
        // not read are named before `[host.io]` is checked: a CPU in backend.pin that belongs
        // in host.io.cores is the likelier mistake than a missing core.
        let raw: toml::Value = toml::from_str(text).map_err(|e| Error::Input(e.message().to_string()))?;
        check::backend_keys_are_read(&raw, &s)?;
        s.validate()?;
        check::load_keys_are_read(&raw, &s)?;
        Ok(s)
    }

    /// Reads and parses a file; errors name the file.
    pub fn load(path: &str) -> Result<Scenario> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::Input(format!("cannot read scenario {path}: {e}")))?;
        Self::parse(&text).map_err(|e| match e {
            Error::Input(m) => Error::Input(format!("testbed scenario {path}: {m}")),
            other => other,
        })
    }
}

