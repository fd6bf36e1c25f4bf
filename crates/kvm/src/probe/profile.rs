//! The probe's simulator profile (profiles/README.md format). It starts from the built-in `es2`
//! profile, marks each of its values "not measured here; from es2 profile: <its source>", and
//! replaces those the probe measures an equivalent of:
//!
//! | profile key | measurement |
//! |---|---|
//! | `cpu.*` | /proc/cpuinfo (model, sockets, cores), TSC frequency |
//! | `exit.io_instruction_ns` | guest cost of one PIO kick through an ioeventfd |
//! | `exit.ept_violation_ns` | guest cost of one MMIO kick through an ioeventfd |
//! | `exit.interrupt_delivery_ns` | MSI injection -> guest handler ran, median, guest spinning |
//! | `host.thread_wakeup_ns` | HLT wake-up (halt_poll_ns = 0, 1 ms gaps): MSI -> halted vCPU runs its handler, median; includes this host's idle-state exit, so the profile lists no `host.cstates` |
//!
//! The result is serialised from an `eventpath_sim::profile::Profile` and re-parsed with
//! `Profile::parse`, so it loads in `eventpath run` whatever keys the profile gains.
use super::report::ProbeReport;
use eventpath_sim::profile::Profile;
use toml::Value;

/// `model name` of the first CPU in /proc/cpuinfo.
pub fn host_cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| t.lines().find(|l| l.starts_with("model name")).map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string()))
        .unwrap_or_else(|| "unknown cpu".into())
}

/// (sockets, cores per socket) from /proc/cpuinfo: distinct `physical id`s, logical CPUs / sockets.
pub fn host_layout() -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |l: &str| l.split(':').nth(1).map(|v| v.trim().to_string());
    let cpus = text.lines().filter(|l| l.starts_with("processor")).count().max(1) as u64;
    let mut ids: Vec<String> = text.lines().filter(|l| l.starts_with("physical id")).filter_map(field).collect();
    ids.sort();
    ids.dedup();
    let sockets = (ids.len() as u64).max(1);
    (sockets, (cpus / sockets).max(1))
}

/// Rewrites every parameter's source in `v` (a serialised profile) as taken from `origin`.
fn mark_unmeasured(v: &mut Value, origin: &str) {
    if let Value::Table(t) = v {
        if let Some(Value::String(src)) = t.get("source").cloned() {
            if t.contains_key("value") && t.contains_key("unit") {
                t.insert("source".into(), Value::String(format!("not measured here; from {origin} profile: {src}")));
                return;
            }
        }
        for (_, x) in t.iter_mut() {
            mark_unmeasured(x, origin);
        }
    }
}

/// Sets parameter `table.key` to `value` (in the profile's unit) with `source`.
fn set(v: &mut Value, table: &str, key: &str, value: f64, source: String) -> Result<(), String> {
    let param = v.get_mut(table).and_then(|t| t.get_mut(key)).and_then(Value::as_table_mut).ok_or(format!("profile has no {table}.{key}"))?;
    param.insert("value".into(), Value::Float(value));
    param.insert("source".into(), Value::String(source));
    Ok(())
}

fn quote(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

/// Writes a serialised profile in the documented layout: top-level strings, then one `[table]`
/// per group with `key = { value = N, unit = "...", source = "..." }` lines.
fn render(v: &Value) -> String {
    let mut out = String::new();
    let top = v.as_table().expect("profile is a table");
    for (k, x) in top {
        if let Value::String(s) = x {
            out.push_str(&format!("{k} = {}\n", quote(s)));
        }
    }
    for (name, x) in top {
        let Value::Table(t) = x else { continue };
        out.push_str(&format!("\n[{name}]\n"));
        for (k, e) in t {
            match e {
                Value::Table(param) => {
                    let num = match param.get("value") {
                        Some(Value::Integer(i)) => *i as f64,
                        Some(Value::Float(f)) => *f,
                        _ => f64::NAN,
                    };
                    let unit = param.get("unit").and_then(Value::as_str).unwrap_or("");
                    let src = param.get("source").and_then(Value::as_str).unwrap_or("");
                    out.push_str(&format!("{k} = {{ value = {}, unit = {}, source = {} }}\n", Value::Float(num), quote(unit), quote(src)));
                }
                other => out.push_str(&format!("{k} = {other}\n")),
            }
        }
    }
    out
}

/// profile.toml text from the probe's report.
pub fn profile_toml(probe: &ProbeReport) -> Result<String, String> {
    let base = Profile::load("es2").map_err(|e| e.to_string())?;
    let mut v = Value::try_from(&base).map_err(|e| format!("serialising es2: {e}"))?;
    // The measured HLT wake-up below already includes this host's idle-state exit, so the
    // es2 C-state table (an Ivy Bridge's) does not carry over.
    if let Some(Value::Table(h)) = v.get_mut("host") {
        h.remove("cstates");
    }
    mark_unmeasured(&mut v, "es2");
    let date = &probe.date;
    let cpu = probe.host_cpu.clone();
    let src = |what: &str| format!("measured by eventpath kvm probe on {date}, {cpu}: {what}");
    let t = v.as_table_mut().expect("table");
    t.insert("name".into(), Value::String("kvm-probe".into()));
    t.insert("description".into(), Value::String(format!("this host ({cpu}), nested KVM, measured by eventpath kvm probe on {date}")));
    t.insert("source".into(), Value::String("eventpath kvm probe (docs/kvm.md); keys it cannot measure come from the es2 profile".into()));
    if let Some(Value::Table(c)) = t.get_mut("cpu") {
        c.insert("model".into(), Value::String(cpu.clone()));
    }
    let (sockets, cores) = host_layout();
    set(&mut v, "cpu", "sockets", sockets as f64, src("distinct `physical id` in /proc/cpuinfo"))?;
    set(&mut v, "cpu", "cores_per_socket", cores as f64, src("logical CPUs in /proc/cpuinfo / sockets"))?;
    if probe.tsc_hz > 0 {
        set(&mut v, "cpu", "ghz", (probe.tsc_hz as f64 / 1e7).round() / 100.0, src("TSC frequency"))?;
    }
    let r = &probe.results;
    let ns = |us: Option<f64>| us.filter(|x| x.is_finite() && *x > 0.0).map(|us| (us * 1e3).round());
    let guest_cost = |path: &str| r.notification_paths.get(path).and_then(|p| p.guest_cost_us_per_notification);
    let measured = [
        ("exit", "io_instruction_ns", ns(guest_cost("pio_ioeventfd")),
         "guest cost of one PIO kick through an ioeventfd (out instruction, no userspace exit)"),
        ("exit", "ept_violation_ns", ns(guest_cost("mmio_ioeventfd")),
         "guest cost of one MMIO kick through an ioeventfd (includes this host's MMIO emulation)"),
        ("exit", "interrupt_delivery_ns", ns(r.msi_injection_to_handler.latency_us.p50),
         "MSI injection (irqfd) -> guest handler ran, median, guest spinning at CPL3 (includes the emulated CPL0 handler)"),
        ("host", "thread_wakeup_ns", ns(r.hlt_wakeup.get("halt_poll_0_gap_1000us").and_then(|h| h.latency_us.p50)),
         "HLT wake-up: MSI -> halted vCPU thread runs its handler, median, halt_poll_ns = 0, 1 ms gaps"),
    ];
    for (table, key, value, what) in measured {
        if let Some(x) = value {
            set(&mut v, table, key, x, src(what))?;
        }
    }
    let text = format!(
        "# Simulator profile written by `eventpath kvm probe` (format: profiles/README.md).\n\
         # Measured keys say \"measured by eventpath kvm probe\"; the others come from es2.\n\n{}",
        render(&v)
    );
    Profile::parse("profile.toml", &text).map_err(|e| format!("exported profile does not load: {e}"))?;
    Ok(text)
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
