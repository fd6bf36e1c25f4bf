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
//! interrupt_delivery = "emulated"  # or "posted" (APICv posted interrupts); default emulated
//! [vm.net]
//! queue_size = 256
//! vhost_pin = 1
//! [vm.workload]
//! kind = "udp_stream"
//! message_bytes = 512
//! rate_pps = 100000        # omit to send as fast as the vCPU can
//! ```

mod workload;

pub use workload::Workload;


use crate::error::{describe_toml_error, InputError, InputResult};
use crate::profile::Profile;
use serde::Deserialize;

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
#[derive(Debug, Clone, Deserialize)]
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
    #[serde(default)]
    pub host: HostLayout,
    /// The VMs.
    pub vm: Vec<Vm>,
}

/// Host layout: overrides of the profile's hardware facts.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostLayout {
    /// Number of pCPUs to use (default: all of the profile's cores).
    pub pcpus: Option<u32>,
}

/// One virtual machine.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Vm {
    /// Unique name.
    pub name: String,
    /// Number of vCPUs (≥ 1).
    pub vcpus: u32,
    /// pCPU each vCPU thread is pinned to (one entry per vCPU). Default: vCPU i on pCPU i.
    pub vcpu_pins: Option<Vec<u32>>,
    /// How virtual interrupts reach the vCPUs: `emulated` (software LAPIC, default) or
    /// `posted` (APICv: PIR + notification vector, virtualized EOI).
    #[serde(default)]
    pub interrupt_delivery: InterruptDelivery,
    /// The paravirtual NIC.
    #[serde(default)]
    pub net: Net,
    /// What the VM runs.
    pub workload: Workload,
}

/// Virtual interrupt delivery mode of a VM (ES2 §2.2 vs §3.2; DID §2.2, §2.4).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InterruptDelivery {
    /// Software-emulated LAPIC: IPI kick of a running vCPU (interrupt-delivery exit),
    /// injection at VM entry, every guest EOI exits.
    #[default]
    Emulated,
    /// Posted interrupts: PIR/ON + notification vector, no exit while running, EOI virtualized.
    Posted,
}

/// A virtio-net device served by a vhost thread.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Net {
    /// Descriptors per virtqueue (power of two, 2..=32768, as virtio requires).
    #[serde(default = "default_queue_size")]
    pub queue_size: u32,
    /// pCPU the vhost thread is pinned to. Default: the first pCPU after the VMs' vCPUs.
    pub vhost_pin: Option<u32>,
}

impl Default for Net {
    fn default() -> Self {
        Net { queue_size: default_queue_size(), vhost_pin: None }
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
            message: describe_toml_error(e.path(), e.inner(), text),
        })
    }

    /// Validate against the profile; `origin` names the scenario in errors.
    pub fn check(self, origin: &str) -> InputResult<Checked> {
        let err = |message: String| InputError::Scenario { path: origin.into(), message };
        let profile = Profile::load(&self.profile)?;
        if !(self.duration_s.is_finite() && self.duration_s > 0.0) {
            return Err(err(format!("key `duration_s`: {} is not allowed; expected seconds > 0", self.duration_s)));
        }
        if !(self.warmup_s.is_finite() && self.warmup_s >= 0.0) {
            return Err(err(format!("key `warmup_s`: {} is not allowed; expected seconds ≥ 0", self.warmup_s)));
        }
        let max = profile.pcpus() as u32;
        let pcpus = match self.host.pcpus {
            Some(n) if n == 0 || n > max => {
                return Err(err(format!("key `host.pcpus`: {n} is not allowed; profile {} has 1..={max} cores", profile.name)))
            }
            Some(n) => n,
            None => max,
        };
        if self.vm.is_empty() {
            return Err(err("key `vm`: no VM defined; add at least one [[vm]] table".into()));
        }
        let mut names = std::collections::HashSet::new();
        for (i, vm) in self.vm.iter().enumerate() {
            let key = |k: &str| format!("vm[{i}].{k}");
            if !names.insert(vm.name.as_str()) {
                return Err(err(format!("key `{}`: name \"{}\" is used twice; VM names must be unique", key("name"), vm.name)));
            }
            if vm.vcpus == 0 {
                return Err(err(format!("key `{}`: 0 is not allowed; a VM needs at least 1 vCPU", key("vcpus"))));
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
            vm.workload.check(&key("workload")).map_err(err)?;
        }
        self.check_placement(pcpus).map_err(err)?;
        Ok(Checked { scenario: self, profile, pcpus })
    }
}

impl Scenario {
    /// Every thread (vCPU, vhost) gets a pCPU of its own: the model pins threads 1:1 and has
    /// no host scheduler to share a pCPU yet. Mirrors the default placement of `Host::build`:
    /// vCPU k on pCPU k, then one vhost thread per VM on the next free pCPUs.
    fn check_placement(&self, pcpus: u32) -> Result<(), String> {
        let mut owner: std::collections::HashMap<u32, String> = std::collections::HashMap::new();
        let mut claim = |p: u32, key: String, what: String| -> Result<(), String> {
            if let Some(prev) = owner.get(&p) {
                return Err(format!(
                    "key `{key}`: pCPU {p} already runs {prev}; threads are pinned one per pCPU (a shared pCPU needs the host scheduler, not modelled yet)"
                ));
            }
            owner.insert(p, what);
            Ok(())
        };
        let total_vcpus: u32 = self.vm.iter().map(|v| v.vcpus).sum();
        let (mut k, mut next_free) = (0u32, total_vcpus);
        for (i, vm) in self.vm.iter().enumerate() {
            for j in 0..vm.vcpus {
                let p = vm.vcpu_pins.as_ref().map_or(k % pcpus, |p| p[j as usize]);
                claim(p, format!("vm[{i}].vcpu_pins"), format!("vCPU {j} of {}", vm.name))?;
                k += 1;
            }
        }
        for (i, vm) in self.vm.iter().enumerate() {
            let p = vm.net.vhost_pin.unwrap_or_else(|| {
                let p = next_free % pcpus;
                next_free += 1;
                p
            });
            claim(p, format!("vm[{i}].net.vhost_pin"), format!("the vhost thread of {}", vm.name))?;
        }
        Ok(())
    }
}
