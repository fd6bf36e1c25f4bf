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

/// Which load patterns read each `[[vm.load]]` key (`pattern` and `steps` are checked aside),
/// and what to do instead.
const LOAD_KEYS: [(&str, &[&str], &str); 8] = [
    ("rate", &["stream"], ""),
    ("window", &["closed"], ""),
    ("burst", &["burst"], ""),
    ("gap_us", &["burst", "adversary"], ""),
    ("consume", &["stream", "closed", "burst"], ""),
    ("work_ns", &["stream", "closed", "burst"], ""),
    ("halt_when_idle", &["closed", "irq_sink"], ""),
    ("adversary", &["adversary"], ""),
];

/// Which `host.io.handling` reads each `[backend]` key (the others are read by every handling).
/// The `[host.io]` keys are checked by the simulator's own `IoHandling::check` (`io.rs`).
const BACKEND_KEYS: [(&str, &[&str], &str); 3] = [
    ("pin", &["vhost"], "the es2, elvis and pmd threads run on host.io.cores; give the CPUs there"),
    ("busyloop_us", &["vhost"], ""),
    ("threads", &["vhost", "es2", "pmd"], "ELVIS fills each I/O thread with host.io.devices_per_worker VMs (its prototype's rule, default 7); set that instead"),
];

/// `key` given in `table` although `what` (a pattern or a handling) does not read it.
fn unread(table: &toml::Value, keys: &[(&str, &[&str], &str)], what: &str, prefix: &str, which: &str) -> Result<()> {
    for (key, readers, instead) in keys {
        if let Some(v) = table.get(key).filter(|_| !readers.contains(&what)) {
            let v = if v.is_table() { "{...}".to_string() } else { v.to_string() };
            let instead = if instead.is_empty() { "remove it" } else { instead };
            return Err(bad(&format!("{prefix}{key}"), v, &format!("does nothing with {which} = {what:?} (read by {which} {}); {instead}", readers.join(", "))));
        }
    }
    Ok(())
}

/// `[backend]` keys given in the file that the chosen handling would silently ignore.
pub(super) fn backend_keys_are_read(raw: &toml::Value, s: &Scenario) -> Result<()> {
    match raw.get("backend") {
        Some(b) => unread(b, &BACKEND_KEYS, s.host.io.handling.key(), "backend.", "host.io.handling"),
        None => Ok(()),
    }
}

/// `[[vm.load]]` keys given in the file that the chosen pattern would silently ignore.
pub(super) fn load_keys_are_read(raw: &toml::Value, s: &Scenario) -> Result<()> {
    let vms = raw.get("vm").and_then(|v| v.as_array()).map(Vec::as_slice).unwrap_or_default();
    for (i, (vm, cfg)) in vms.iter().zip(&s.vm).enumerate() {
        let loads = vm.get("load").and_then(|v| v.as_array()).map(Vec::as_slice).unwrap_or_default();
        for (j, (l, lc)) in loads.iter().zip(&cfg.load).enumerate() {
            unread(l, &LOAD_KEYS, &lc.pattern, &format!("vm[{i}].load[{j}]."), "pattern")?;
        }
    }
    Ok(())
}

/// A name (scenario, VM): the simulator's rule, 1..=64 characters without control characters.
fn name(key: &str, v: &str) -> Result<()> {
    eventpath_sim::scenario::limits::check_name(key, v).map_err(Error::Input)
}

impl Scenario {
    /// Range checks (host CPU numbers against this host).
    pub fn validate(&self) -> Result<()> {
        name("name", &self.name)?;
        range("duration_s", self.duration_s, 0.05, 600.0)?;
        range("warmup_s", self.warmup_s, 0.0, 60.0)?;
        self.validate_backend()?;
        self.moderation.validate().map_err(|e| Error::Input(format!("moderation: {e}")))?;
        // The testbed's back end does not yet hand a held notification its completions
        // (`InterruptModerator::on_completion`), so a frame limit would never be counted.
        if let eventpath_policy::moderation::ModerationConfig::NotfCoal(_) | eventpath_policy::moderation::ModerationConfig::GuestDim(_) = self.moderation {
            return Err(Error::Input("moderation.kind: \"notf_coal\" and \"guest_dim\" run in the simulator only; the testbed's back end does not count a held notification's completions yet; choose none, fir, cgr, air or dim".into()));
        }
        // vBalance rebinds a Xen PV guest's event channel from inside the guest; the testbed's
        // guests are KVM guests on MSIs routed by the host, so it would run as running-first.
        if self.routing == eventpath_policy::routing::RouterConfig::VBalance {
            return Err(Error::Input("routing: \"v_balance\" is vBalance's in-guest event-channel rebinding, a Xen PV guest's; the testbed's guests take MSIs routed by KVM: choose fixed, lowest_priority_rr, running_first, es2 or h_balance".into()));
        }
        if self.vm.is_empty() || self.vm.len() > 8 {
            return Err(bad("vm", self.vm.len(), "give 1..=8 [[vm]] tables"));
        }
        for (i, vm) in self.vm.iter().enumerate() {
            name(&format!("vm[{i}].name"), &vm.name)?;
            if let Some(first) = self.vm[..i].iter().position(|o| o.name == vm.name) {
                return Err(bad(&format!("vm[{i}].name"), format!("{:?}", vm.name), &format!("vm[{first}] has that name; VM names must be unique")));
            }
            self.validate_vm(i, vm)?;
        }
        self.validate_io()?;
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

    fn validate_backend(&self) -> Result<()> {
        let b = &self.backend;
        one_of("backend.threads", &b.threads, &["shared", "per_queue"])?;
        for c in &b.pin {
            cpu("backend.pin", *c)?;
        }
        range("backend.service_ns", b.service_ns as f64, 0.0, 1e6)?;
        // The simulator's vhost busy-poll bound (`vm.net.busyloop_timeout_us`, 0..=1 s).
        range("backend.busyloop_us", b.busyloop_us as f64, 0.0, 1e6)
    }

    fn validate_vm(&self, i: usize, vm: &VmCfg) -> Result<()> {
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
            self.validate_load(&format!("vm[{i}].load[{j}]."), vm, l)?;
        }
        Ok(())
    }

    fn validate_load(&self, at: &str, vm: &VmCfg, l: &LoadCfg) -> Result<()> {
        let k = |f: &str| format!("{at}{f}");
        one_of(&k("pattern"), &l.pattern, &["stream", "closed", "burst", "spin", "irq_sink", "adversary", "kick_loop", "exit_loop"])?;
        range(&k("rate"), l.rate, 1.0, 1e8)?;
        // A key is held to the ring only where the pattern reads it: the default burst (8) of a
        // stream on a 2- or 4-entry ring is never used (issue 45, kvm-queue-size-2-unread-burst).
        let ring = format!("must be in 1..={} (vm.queue_size = {})", vm.queue_size, vm.queue_size);
        if l.pattern == "closed" && !(1..=vm.queue_size).contains(&l.window) {
            return Err(bad(&k("window"), l.window, &ring));
        }
        if l.pattern == "burst" && !(1..=vm.queue_size).contains(&l.burst) {
            return Err(bad(&k("burst"), l.burst, &format!("{ring}; a burst is submitted at once, so it must fit the ring: give a smaller burst or a larger queue_size")));
        }
        range(&k("gap_us"), l.gap_us, 0.0, 1e7)?;
        one_of(&k("consume"), &l.consume, &["poll", "irq"])?;
        range(&k("work_ns"), l.work_ns as f64, 0.0, 1e7)?;
        for a in &l.adversary {
            one_of(&k("adversary"), a, &ADVERSARY_KINDS)?;
        }
        if l.pattern == "adversary" && l.adversary.is_empty() {
            // The guest would look for a kind to send for ever.
            return Err(bad(&k("adversary"), "[]", &format!("give at least one of {}", ADVERSARY_KINDS.join(", "))));
        }
        if l.halt_when_idle && !(l.pattern == "irq_sink" || (l.pattern == "closed" && l.consume == "irq")) {
            let why = if l.pattern == "closed" { "a closed loop halts only with consume = \"irq\" (an interrupt wakes it)" } else { "only an \"irq_sink\" or a \"closed\" load with consume = \"irq\" halts" };
            return Err(bad(&k("halt_when_idle"), true, &format!("{why} (pattern = {:?}, consume = {:?})", l.pattern, l.consume)));
        }
        if !l.steps.is_empty() && l.pattern != "stream" {
            return Err(bad(&k("steps"), format!("{} step(s)", l.steps.len()), &format!("only a \"stream\" load has steps (pattern = {:?})", l.pattern)));
        }
        let mut prev = -1.0;
        for (n, st) in l.steps.iter().enumerate() {
            let k = |f: &str| format!("{at}steps[{n}].{f}");
            if !(st.at_s.is_finite() && st.at_s >= 0.0 && st.at_s < self.duration_s) {
                return Err(bad(&k("at_s"), st.at_s, &format!("must be in 0..duration_s ({})", self.duration_s)));
            }
            if st.at_s <= prev {
                return Err(bad(&k("at_s"), st.at_s, &format!("must be after the previous step's at_s ({prev})")));
            }
            prev = st.at_s;
            range(&k("rate"), st.rate, 1.0, 1e8)?;
        }
        Ok(())
    }
}

/// A host CPU id this process may use (its affinity mask: a `taskset` or a cpuset narrows it).
pub(super) fn cpu(key: &str, c: usize) -> Result<()> {
    let allowed = crate::vmm::sys::allowed_cpus();
    if allowed.contains(&c) {
        Ok(())
    } else {
        Err(bad(key, c, &format!("not a CPU this process may run on; allowed CPUs: {}", crate::vmm::sys::cpu_list(&allowed))))
    }
}
