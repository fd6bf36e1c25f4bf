//! Range and consistency checks of a parsed scenario: every refusal is one line naming the key,
//! the value and what is allowed.
use super::*;

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

