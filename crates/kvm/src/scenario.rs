//! Testbed scenario files (TOML). Every table denies unknown keys; every value is range-checked
//! with a message naming the key, the value and what is allowed. See docs/kvm.md for the keys.
use crate::error::{Error, Result};
use crate::vmm::layout::{MAX_QSIZE, MAX_VCPUS};
use eventpath_policy::elvis::ElvisConfig;
use eventpath_policy::moderation::ModerationConfig;
use eventpath_policy::routing::RouterConfig;
use serde::Deserialize;

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
    /// Backend threads.
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

/// Backend threads.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BackendCfg {
    /// "exit" | "poll" | "perceptive" | "optimistic" | "elvis".
    pub mode: String,
    /// "shared" (one thread for every queue of every VM) | "per_queue".
    pub threads: String,
    /// Host CPUs for the backend threads (round robin); empty: not pinned.
    pub pin: Vec<usize>,
    /// Host processing per request, ns (0..=1e6).
    pub service_ns: u64,
    /// ES2 perceptive quota (requests per turn, >= 1).
    pub quota: u32,
    /// ES2 optimistic max_poll_count (>= 1).
    pub max_poll_count: u32,
    /// vhost busyloop_timeout, µs (exit mode).
    pub busyloop_us: u32,
    /// ELVIS scheduler parameters (mode = "elvis"; policy `ElvisConfig`, all optional).
    pub elvis: ElvisConfig,
}

impl Default for BackendCfg {
    fn default() -> Self {
        Self { mode: "exit".into(), threads: "shared".into(), pin: vec![], service_ns: 0, quota: 4, max_poll_count: 1000, busyloop_us: 0, elvis: ElvisConfig::default() }
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

fn bad(key: &str, v: impl std::fmt::Display, allowed: &str) -> Error {
    Error::Input(format!("{key} = {v}: {allowed}"))
}

fn one_of(key: &str, v: &str, allowed: &[&str]) -> Result<()> {
    if allowed.contains(&v) {
        Ok(())
    } else {
        Err(bad(key, format!("{v:?}"), &format!("allowed: {}", allowed.join(", "))))
    }
}

fn range(key: &str, v: f64, lo: f64, hi: f64) -> Result<()> {
    if v.is_finite() && v >= lo && v <= hi {
        Ok(())
    } else {
        Err(bad(key, v, &format!("must be in {lo}..={hi}")))
    }
}

impl Scenario {
    /// Parses and validates a scenario file's text.
    pub fn parse(text: &str) -> Result<Scenario> {
        // One line naming the key and the line, formatted as the simulator's scenarios are.
        let s: Scenario = serde_path_to_error::deserialize(toml::Deserializer::new(text)).map_err(|e| {
            let msg = eventpath_sim::error::describe_toml_error(e.path(), e.inner(), text);
            let hint = if msg.contains("unknown field `profile`") {
                " (this looks like a simulator scenario: run it with `eventpath run`)"
            } else {
                ""
            };
            Error::Input(format!("{msg}{hint}"))
        })?;
        s.validate()?;
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

    /// Range checks (host CPU numbers against this host).
    pub fn validate(&self) -> Result<()> {
        let ncpu = crate::vmm::sys::host_cpus();
        let cpu = |key: &str, c: usize| {
            if c < ncpu {
                Ok(())
            } else {
                Err(bad(key, c, &format!("this host has CPUs 0..={}", ncpu - 1)))
            }
        };
        range("duration_s", self.duration_s, 0.05, 600.0)?;
        range("warmup_s", self.warmup_s, 0.0, 60.0)?;
        let b = &self.backend;
        one_of("backend.mode", &b.mode, &["exit", "poll", "perceptive", "optimistic", "elvis"])?;
        b.elvis.validate().map_err(|e| Error::Input(format!("backend.{e}")))?;
        one_of("backend.threads", &b.threads, &["shared", "per_queue"])?;
        for c in &b.pin {
            cpu("backend.pin", *c)?;
        }
        range("backend.service_ns", b.service_ns as f64, 0.0, 1e6)?;
        range("backend.quota", b.quota as f64, 1.0, 1e6)?;
        range("backend.max_poll_count", b.max_poll_count as f64, 1.0, 1e9)?;
        self.moderation.validate().map_err(|e| Error::Input(format!("moderation: {e}")))?;
        if self.vm.is_empty() || self.vm.len() > 8 {
            return Err(bad("vm", self.vm.len(), "give 1..=8 [[vm]] tables"));
        }
        for (i, vm) in self.vm.iter().enumerate() {
            let k = |f: &str| format!("vm[{i}].{f}");
            range(&k("vcpus"), vm.vcpus as f64, 1.0, MAX_VCPUS as f64)?;
            if !vm.pin.is_empty() && vm.pin.len() as u64 != vm.vcpus {
                return Err(bad(&k("pin"), format!("{:?}", vm.pin), "give one host CPU per vCPU, or none"));
            }
            for c in &vm.pin {
                cpu(&k("pin"), *c)?;
            }
            if let Some(ns) = vm.halt_poll_ns {
                range(&k("halt_poll_ns"), ns as f64, 0.0, 1e9)?;
            }
            one_of(&k("kick"), &vm.kick, &["pio", "mmio"])?;
            if !vm.queue_size.is_power_of_two() || !(2..=MAX_QSIZE).contains(&vm.queue_size) {
                return Err(bad(&k("queue_size"), vm.queue_size, "a power of two in 2..=1024"));
            }
            if vm.load.len() as u64 > vm.vcpus {
                return Err(bad(&k("load"), vm.load.len(), "at most one [[vm.load]] per vCPU"));
            }
            for (j, l) in vm.load.iter().enumerate() {
                let k = |f: &str| format!("vm[{i}].load[{j}].{f}");
                one_of(&k("pattern"), &l.pattern, &["stream", "closed", "burst", "spin", "irq_sink", "adversary", "kick_loop", "exit_loop"])?;
                range(&k("rate"), l.rate, 1.0, 1e8)?;
                range(&k("window"), l.window as f64, 1.0, vm.queue_size as f64)?;
                range(&k("burst"), l.burst as f64, 1.0, vm.queue_size as f64)?;
                range(&k("gap_us"), l.gap_us, 0.0, 1e7)?;
                one_of(&k("consume"), &l.consume, &["poll", "irq"])?;
                range(&k("work_ns"), l.work_ns as f64, 0.0, 1e7)?;
                for a in &l.adversary {
                    one_of(&k("adversary"), a, &ADVERSARY_KINDS)?;
                }
                if !l.steps.is_empty() && l.pattern != "stream" {
                    return Err(bad(&k("steps"), format!("{} step(s)", l.steps.len()), &format!("only a \"stream\" load has steps (pattern = {:?})", l.pattern)));
                }
                let mut prev = -1.0;
                for (n, st) in l.steps.iter().enumerate() {
                    let k = |f: &str| format!("vm[{i}].load[{j}].steps[{n}].{f}");
                    if !(st.at_s.is_finite() && st.at_s >= 0.0 && st.at_s < self.duration_s) {
                        return Err(bad(&k("at_s"), st.at_s, &format!("must be in 0..duration_s ({})", self.duration_s)));
                    }
                    if st.at_s <= prev {
                        return Err(bad(&k("at_s"), st.at_s, &format!("must be after the previous step's at_s ({prev})")));
                    }
                    prev = st.at_s;
                    range(&k("rate"), st.rate, 1.0, 1e8)?;
                }
            }
        }
        if let Some(g) = &self.irqgen {
            range("irqgen.gap_us", g.gap_us, 1.0, 1e6)?;
            let vm = self.vm.get(g.vm).ok_or_else(|| bad("irqgen.vm", g.vm, &format!("must be < {}", self.vm.len())))?;
            range("irqgen.vcpu", g.vcpu as f64, 0.0, (vm.vcpus - 1) as f64)?;
            if let Some(c) = g.pin {
                cpu("irqgen.pin", c)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: &str = r#"
name = "t"
[[vm]]
name = "a"
[[vm.load]]
pattern = "stream"
rate = 1000
"#;

    #[test]
    fn minimal_scenario_parses_with_defaults() {
        let s = Scenario::parse(OK).unwrap();
        assert_eq!(s.backend.mode, "exit");
        assert_eq!(s.vm[0].queue_size, 256);
    }

    #[test]
    fn errors_name_key_value_and_what_is_allowed() {
        let e = Scenario::parse(&OK.replace("rate = 1000", "rate = 0")).unwrap_err().to_string();
        assert_eq!(e, "vm[0].load[0].rate = 0: must be in 1..=100000000");
        let e = Scenario::parse(&OK.replace("rate = 1000", "rate = 1000\nbogus = 1")).unwrap_err().to_string();
        assert!(e.contains("unknown field `bogus`"), "{e}");
        let e = Scenario::parse(&OK.replace("pattern = \"stream\"", "pattern = \"wave\"")).unwrap_err().to_string();
        assert!(e.contains("vm[0].load[0].pattern = \"wave\": allowed: stream"), "{e}");
        let e = Scenario::parse(&OK.replace("name = \"a\"", "name = \"a\"\npin = [4096]")).unwrap_err().to_string();
        assert!(e.contains("vm[0].pin"), "{e}");
        let e = Scenario::parse(&OK.replace("rate = 1000", "rate = \"fast\"")).unwrap_err().to_string();
        assert!(e.contains("rate"), "{e}");
        let e = Scenario::parse(&format!("{OK}\n[moderation]\nkind = \"fir\"\nitr = 0\n")).unwrap_err().to_string();
        assert!(e.contains("fir.itr = 0"), "{e}");
    }

    #[test]
    fn routing_accepts_the_documented_spelling() {
        for (name, want) in [("h_balance", RouterConfig::HBalance), ("hbalance", RouterConfig::HBalance), ("es2", RouterConfig::Es2)] {
            let s = Scenario::parse(&format!("routing = \"{name}\"\n{OK}")).unwrap();
            assert_eq!(s.routing, want);
        }
        let e = Scenario::parse(&format!("routing = \"round_robin\"\n{OK}")).unwrap_err().to_string();
        assert!(e.contains("round_robin") && e.contains("h_balance"), "{e}");
    }

    #[test]
    fn parse_errors_are_one_line_with_the_line_number() {
        let sim = "name = \"x\"\nprofile = \"es2\"\n[[vm]]\nname = \"a\"\n";
        let e = Scenario::parse(sim).unwrap_err().to_string();
        assert!(!e.contains('\n') && e.contains("line 2") && e.contains("unknown field `profile`"), "{e}");
        assert!(e.contains("eventpath run"), "{e}");
        for garbage in ["**not toml** at all\n", "\u{0}\u{1}\u{2}", "name = \"x\"\n[[vm]]\nname = 3\n"] {
            let e = Scenario::parse(garbage).unwrap_err().to_string();
            assert!(!e.contains('\n') && e.contains("line "), "{e:?}");
        }
    }

    #[test]
    fn elvis_mode_and_its_parameters_are_validated() {
        let t = format!("{OK}\n[backend]\nmode = \"elvis\"\n[backend.elvis]\nmax_work = 32\n");
        let s = Scenario::parse(&t).unwrap();
        assert_eq!(s.backend.elvis.max_work, 32);
        assert_eq!(s.backend.elvis.min_work, 8);
        let e = Scenario::parse(&t.replace("max_work = 32", "max_work = 4\nmin_work = 5")).unwrap_err().to_string();
        assert!(e.contains("backend.elvis.min_work = 5"), "{e}");
        let e = Scenario::parse(&t.replace("max_work = 32", "max_wrk = 4")).unwrap_err().to_string();
        assert!(e.contains("unknown field `max_wrk`"), "{e}");
    }

    #[test]
    fn dim_moderation_kind_is_parsed_and_validated() {
        let t = format!("{OK}\n[moderation]\nkind = \"dim\"\nprofiles = \"rx_cqe\"\n");
        let s = Scenario::parse(&t).unwrap();
        assert!(matches!(s.moderation, ModerationConfig::Dim(ref c) if c.profiles == "rx_cqe" && c.start_ix == 1));
        let e = Scenario::parse(&t.replace("rx_cqe", "rx")).unwrap_err().to_string();
        assert!(e.contains("dim.profiles = \"rx\": allowed: rx_eqe, rx_cqe, tx_eqe, tx_cqe"), "{e}");
        let e = Scenario::parse(&format!("{t}start_ix = 7\n")).unwrap_err().to_string();
        assert!(e.contains("dim.start_ix = 7: must be in 0..=4"), "{e}");
        let e = Scenario::parse(&format!("{t}itr = 7\n")).unwrap_err().to_string();
        assert!(e.contains("unknown field `itr`"), "{e}");
        let e = Scenario::parse(&t.replace("\"dim\"", "\"napi\"")).unwrap_err().to_string();
        assert!(e.contains("moderation.kind = \"napi\": allowed: none, fir, cgr, air, dim"), "{e}");
        let s = Scenario::parse(&format!("{OK}\n[moderation]\nkind = \"fir\"\nitr = 2000\n")).unwrap();
        assert!(matches!(s.moderation, ModerationConfig::Fir(ref c) if c.itr == 2000));
    }

    #[test]
    fn load_steps_are_validated() {
        let t = OK.replace("rate = 1000", "rate = 1000\nsteps = [{at_s = 0.1, rate = 5000}, {at_s = 0.3, rate = 100}]");
        let s = Scenario::parse(&t).unwrap();
        assert_eq!(s.vm[0].load[0].steps.len(), 2);
        let e = Scenario::parse(&t.replace("at_s = 0.3", "at_s = 0.05")).unwrap_err().to_string();
        assert_eq!(e, "vm[0].load[0].steps[1].at_s = 0.05: must be after the previous step's at_s (0.1)");
        let e = Scenario::parse(&t.replace("at_s = 0.3", "at_s = 0.5")).unwrap_err().to_string();
        assert_eq!(e, "vm[0].load[0].steps[1].at_s = 0.5: must be in 0..duration_s (0.5)");
        let e = Scenario::parse(&t.replace("rate = 5000", "rate = 0")).unwrap_err().to_string();
        assert_eq!(e, "vm[0].load[0].steps[0].rate = 0: must be in 1..=100000000");
        let e = Scenario::parse(&t.replace("rate = 5000", "rate = 5000, when = 1")).unwrap_err().to_string();
        assert!(e.contains("unknown field `when`"), "{e}");
        let e = Scenario::parse(&t.replace("pattern = \"stream\"", "pattern = \"closed\"")).unwrap_err().to_string();
        assert!(e.contains("vm[0].load[0].steps = 2 step(s): only a \"stream\" load has steps"), "{e}");
    }
}
