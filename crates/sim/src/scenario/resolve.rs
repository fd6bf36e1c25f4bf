//! The scenario as it runs, every default filled in: what an output directory records
//! (`scenario.resolved.toml`), so that running that file again gives the same summary.
//!
//! Filled in: every key with a default value, where the scenario's layout reads it — the host's
//! pCPUs, the client's cores, both NIC drivers' throttles (the profile's), a virtio device's
//! event indices and offloads, a hog's nice (cfs) or the credit slice (xen_credit), the chosen `[host.io]` mode's parameters (only its own: the other
//! modes' keys are refused by [`Scenario::check`]), AIR's costs (from the profile). Left absent:
//! keys whose absence is itself the setting (`vcpu_pins`, `vhost_pin`, `nic_irq_cpus`,
//! `[host.io] cores` and `stuck_us`, `[vm.halt_poll]`, a workload's open-loop rate or
//! `workers`): each documented as "absent: ..." in `eventpath keys`.

use super::{Checked, HostScheduler, Offload, Scenario};

/// `v` without its null entries (an unset optional key), recursively: the form a scenario
/// file or dict gives.
pub fn without_nulls(v: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::Object(m) => Value::Object(m.into_iter().filter(|(_, x)| !x.is_null()).map(|(k, x)| (k, without_nulls(x))).collect()),
        Value::Array(a) => Value::Array(a.into_iter().map(without_nulls).collect()),
        other => other,
    }
}

impl Checked {
    /// The scenario as it runs (run options applied, every default filled in; see the module
    /// doc) in the form a scenario dict takes. A profile given as a path is made absolute, so
    /// that the result runs from any directory.
    pub fn resolved(&self) -> serde_json::Value {
        let mut s: Scenario = self.scenario.clone();
        s.host.pcpus = Some(self.pcpus);
        s.client.cores = Some(self.client_cores);
        s.host.nic_itr = Some(self.profile.host.nic_itr.value);
        s.client.nic_itr = Some(self.profile.client.nic_itr.value);
        s.client.qdisc = Some(self.profile.client.qdisc.value);
        s.client.tso = Some(self.profile.client.tso.value);
        s.client.tcp_autocorking = Some(self.profile.client.tcp_autocorking.value);
        s.host.io = s.host.io.resolved();
        match s.host.scheduler {
            HostScheduler::Cfs => s.host.cpu_hog.iter_mut().for_each(|h| _ = h.nice.get_or_insert(super::DEFAULT_HOG_NICE)),
            HostScheduler::XenCredit => _ = s.host.tslice_ms.get_or_insert(crate::config::limits::DEFAULT_TSLICE_MS),
        }
        for vm in &mut s.vm {
            if vm.net.kind.has_backend() {
                vm.net.event_idx.get_or_insert(true);
                // (A disk has no offloads: a block workload's VM refuses the key.)
                if !vm.workload.as_ref().is_some_and(crate::config::Workload::is_block) {
                    vm.net.offload.get_or_insert_with(Offload::default);
                }
            }
        }
        if !crate::profile::BUILTIN.iter().any(|(n, _)| *n == s.profile) {
            if let Ok(abs) = std::fs::canonicalize(&s.profile) {
                s.profile = abs.to_string_lossy().into_owned();
            }
        }
        without_nulls(serde_json::to_value(&s).expect("a scenario serializes"))
    }

    /// [`Checked::resolved`] as a scenario file, with a header saying what it is. A seed beyond
    /// TOML's integers (2^63 and up, given with `--seed`) cannot be written: the file leaves
    /// it out and its header gives the `--seed` to run it with.
    pub fn resolved_toml(&self) -> String {
        let mut v = self.resolved();
        let mut head = String::from(
            "# The scenario as eventpath ran it, every default filled in: `eventpath run` on this file\n# gives the same summary.json (wall_seconds aside).\n",
        );
        if self.scenario.seed > i64::MAX as u64 {
            v.as_object_mut().expect("a scenario is a table").remove("seed");
            head += &format!("# Its seed {} is beyond TOML's integers: run it with --seed {}.\n", self.scenario.seed, self.scenario.seed);
        }
        head + &toml::to_string(&v).expect("a resolved scenario is TOML")
    }
}

#[cfg(test)]
mod tests {
    use super::super::Scenario;

    fn checked(text: &str) -> super::Checked {
        Scenario::from_toml("t", text).unwrap().check("t").unwrap()
    }

    /// The resolved file parses, checks and resolves to itself (a fixed point), for every
    /// example scenario.
    #[test]
    fn resolved_scenarios_are_accepted_and_a_fixed_point() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples");
        let mut n = 0;
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_none_or(|x| x != "toml") {
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap();
            let Ok(sc) = Scenario::from_toml("x", &text) else { continue };
            let Ok(c) = sc.check("x") else { continue };
            let once = c.resolved_toml();
            let again = checked(&once);
            assert_eq!(again.resolved_toml(), once, "{}", p.display());
            n += 1;
        }
        assert!(n >= 5, "only {n} examples resolved");
    }

    #[test]
    fn defaults_are_filled_where_the_layout_reads_them() {
        let c = checked(
            r#"name = "x"
profile = "es2"
[host.io]
handling = "es2"
switch = "optimistic"
[[vm]]
name = "vm0"
vcpus = 1
[vm.net.moderation]
kind = "air"
[vm.workload]
kind = "tcp_stream"
message_bytes = 1024
"#,
        );
        let v = c.resolved();
        assert_eq!(v["seed"], 1);
        assert_eq!(v["duration_s"], 1.0);
        assert_eq!(v["host"]["pcpus"], c.pcpus);
        assert_eq!(v["host"]["io"]["poll_count"], 1000);
        assert!(v["host"]["io"].get("quota").is_none(), "the perceptive switch's key is not the optimistic's");
        assert!(v["host"]["io"].get("max_work").is_none(), "ELVIS's keys are refused with es2");
        assert_eq!(v["vm"][0]["net"]["event_idx"], true);
        assert_eq!(v["vm"][0]["workload"]["kind"], "tcp_stream");
        assert_eq!(v["vm"][0]["workload"]["streams"], 1);
        assert!(v["vm"][0]["net"]["moderation"]["c_int_cycles"].as_f64().unwrap() > 0.0, "AIR's costs from the profile");
        assert!(v["vm"][0].get("vcpu_pins").is_none(), "absent is the setting: unpinned");
    }

    #[test]
    fn a_seed_beyond_toml_integers_is_left_to_the_command_line() {
        let mut sc = Scenario::from_toml("t", "name = \"x\"\nprofile = \"es2\"\n[[vm]]\nname = \"a\"\nvcpus = 1\n").unwrap();
        sc.seed = u64::MAX;
        let t = sc.check("t").unwrap().resolved_toml();
        assert!(t.contains(&format!("--seed {}", u64::MAX)) && !t.contains("\nseed ="), "{t}");
    }
}
