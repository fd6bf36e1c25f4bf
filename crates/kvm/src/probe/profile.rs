//! The probe's simulator profile (profiles/README.md format). It starts from the built-in `es2`
//! profile, marks each of its values "not measured here; from es2 profile: <its source>", and
//! replaces those the probe measures as the simulator applies them ([`super::export`] says which
//! measurement each key is, and why): `cpu.*` from /proc/cpuinfo and the TSC, and the accepted
//! entries of probe.json's `profile` (`exit.io_instruction_ns`, `exit.interrupt_delivery_ns`,
//! `host.thread_wakeup_ns`, `host.thread_wakeup_spread_ns`), each with the median, min, max and
//! spread of its trials in its `source`. A parameter the outlier rule refused keeps es2's value,
//! its source says so, and a header comment names it; the header also lists the measured values
//! that have no key here (probe.json `not_in_profile`). `host.cstates` is dropped: the measured
//! wake-up already includes this host's idle-state exit.
//!
//! The result is serialised from an `eventpath_sim::profile::Profile` and re-parsed with
//! `Profile::parse`, so it loads in `eventpath run` whatever keys the profile gains.
use super::report::ProbeReport;
use super::stats;
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

/// This host's KVM runs its guests with APICv (1.0) or not (0.0), and where that was read:
/// kvm_intel's `enable_apicv` or kvm_amd's `avic` module parameter (Y or 1), else 0 (another
/// KVM module, such as this project's nested `kvm_pvm`, has neither; KVM-NOTES: no APICv).
fn host_apicv() -> (f64, String) {
    for p in ["/sys/module/kvm_intel/parameters/enable_apicv", "/sys/module/kvm_amd/parameters/avic"] {
        if let Ok(t) = std::fs::read_to_string(p) {
            let on = matches!(t.trim(), "Y" | "1");
            return (if on { 1.0 } else { 0.0 }, format!("{p} = {}", t.trim()));
        }
    }
    (0.0, "no kvm_intel enable_apicv or kvm_amd avic module parameter (a KVM module without APICv or AVIC)".into())
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
                // A parameter with a number (a choice such as `nic_itr = { value = "i40e" }` is
                // written as it is).
                Value::Table(param) if matches!(param.get("value"), Some(Value::Integer(_) | Value::Float(_))) => {
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

/// `host.cstates` from the idle curve (probe.json `not_in_profile.idle_curve_*`): one state per
/// point whose three values were accepted, from the shortest idle (the base that
/// `host.thread_wakeup_ns` and `vhost.wakeup_ns` were read from, so it must be accepted too):
/// exit latency and CPU per wake-up beyond the base's, entered from the geometric mean of its
/// and the previous point's idle (the nearest point by ratio). On a haltpoll host (sysfs) the
/// table opens with the guest's poll state and the points are the halt's outcomes, which the
/// outer hypervisor's halt polling decides by the halt's length; elsewhere menu picks them from
/// the predicted idle. None when fewer than two points remain.
fn idle_table(probe: &ProbeReport) -> Option<Value> {
    use super::export::CURVE_NAMES;
    use super::report::IDLE_GAPS_US;
    let get = |k: &str| probe.not_in_profile.get(k).map(|e| e.value);
    let pts: Vec<(u64, f64, f64, f64)> = CURVE_NAMES
        .iter()
        .zip(IDLE_GAPS_US)
        .filter_map(|((l, c, i), g)| Some((g, get(l)?, get(c)?, get(i)?)))
        .collect();
    let base_ok = ["host.thread_wakeup_ns", "vhost.wakeup_ns"].iter().all(|k| probe.profile.contains_key(*k));
    let &(g0, l0, c0, i0) = pts.first().filter(|p| p.0 == IDLE_GAPS_US[0] && base_ok)?;
    let state = |name: String, exit: f64, res: f64, cpu: f64| {
        let mut t = toml::Table::new();
        t.insert("name".into(), Value::String(name));
        t.insert("exit_latency_ns".into(), Value::Float(exit.max(0.0).round()));
        t.insert("target_residency_ns".into(), Value::Float(res.round()));
        t.insert("wake_cpu_ns".into(), Value::Float(cpu.max(0.0).round()));
        Value::Table(t)
    };
    let mut states = vec![state(format!("idle~{:.0}us", i0 / 1e3), 0.0, 0.0, 0.0)];
    let (mut prev_idle, mut prev_res) = (i0, 0.0);
    for &(_, l, c, i) in &pts[1..] {
        let res = (prev_idle * i).sqrt();
        if res > prev_res {
            states.push(state(format!("idle~{:.0}us", i / 1e3), l - l0, res, c - c0));
            (prev_idle, prev_res) = (i, res);
        }
    }
    if states.len() < 2 {
        return None;
    }
    let hi = &probe.host_idle;
    let curve = format!(
        "measured by eventpath kvm probe on {}, {}: the idle curve, a guest PIO kick -> the backend thread asleep in poll(2) runs, one kick every {:?} us (backend idle per wake-up measured), medians of {} trials (probe.json not_in_profile idle_curve_*); state i: exit_latency_ns = its kick -> run p50 minus the shortest idle's ({:.0} ns, in host.thread_wakeup_ns), wake_cpu_ns = its backend CPU per wake-up minus the shortest idle's ({:.0} ns, in vhost.wakeup_ns), target_residency_ns = geometric mean of its and the previous point's idle (its nearest idles by ratio); shortest point kick every {g0} us",
        probe.date, probe.host_cpu, IDLE_GAPS_US, probe.trials, l0, c0
    );
    let mut t = toml::Table::new();
    if hi.governor == "haltpoll" {
        let num = |k: &str, d: u32| hi.haltpoll.get(k).and_then(|v| v.parse().ok()).unwrap_or(d);
        let d = eventpath_policy::idle::HaltpollConfig::default();
        let mut hp = toml::Table::new();
        hp.insert("guest_halt_poll_ns".into(), Value::Integer(num("guest_halt_poll_ns", d.guest_halt_poll_ns) as i64));
        hp.insert("grow".into(), Value::Integer(num("guest_halt_poll_grow", d.grow) as i64));
        hp.insert("grow_start_ns".into(), Value::Integer(num("guest_halt_poll_grow_start", d.grow_start_ns).max(1) as i64));
        hp.insert("shrink".into(), Value::Integer(num("guest_halt_poll_shrink", d.shrink) as i64));
        let allow = hi.haltpoll.get("guest_halt_poll_allow_shrink").map_or(d.allow_shrink, |v| v != "N");
        hp.insert("allow_shrink".into(), Value::Boolean(allow));
        states.insert(0, state("poll".into(), 0.0, 0.0, 0.0));
        t.insert("source".into(), Value::String(format!(
            "{curve}. Governor haltpoll and its parameters from /sys/devices/system/cpu/cpuidle/current_governor and /sys/module/haltpoll/parameters ({:?}): state 0 is the guest's poll (cpuidle poll_idle: the waker sets need_resched and skips its IPI; not measured here, costed as the shortest halt's wake-up, an upper bound), the others the halt's outcomes by its length: this host halts to its outer hypervisor, whose halt polling wakes a short halt fast and a long one slowly",
            hi.haltpoll
        )));
        t.insert("governor".into(), Value::String("haltpoll".into()));
        t.insert("haltpoll".into(), Value::Table(hp));
    } else {
        let g = if hi.governor.is_empty() { "unreadable".to_string() } else { hi.governor.clone() };
        t.insert("source".into(), Value::String(format!("{curve}. Governor menu (this host's: {g}), which picks the point whose idle the predicted idle reaches")));
        t.insert("governor".into(), Value::String("menu".into()));
    }
    t.insert("states".into(), Value::Array(states));
    Some(Value::Table(t))
}

/// overlay.toml text: only what the probe measured, over the built-in profile `base` (its
/// hardware, kernel and every other cost), for a host that is not this testbed (issue 50 item
/// 4: `kvm probe` on a production host, its numbers on `modern`'s layout). Unlike profile.toml
/// it sets none of the testbed's first-principles zeros (no host network stack, no post-exit
/// slowdown): those describe this tiny guest's testbed, not a production host. Each measured
/// value's range is its trials' spread (min..max), or `exact` where every trial agreed.
pub fn overlay_toml(probe: &ProbeReport, base: &str) -> Result<String, String> {
    let b = Profile::load(base).map_err(|e| e.to_string())?;
    let bv = Value::try_from(&b).map_err(|e| format!("serialising {base}: {e}"))?;
    let (date, cpu, n) = (&probe.date, &probe.host_cpu, probe.trials);
    let mut v = toml::Table::new();
    v.insert("base".into(), Value::String(base.into()));
    v.insert("name".into(), Value::String(format!("{base}+probe")));
    v.insert("description".into(), Value::String(format!("{} — with the costs eventpath kvm probe measured on {cpu} on {date}", b.description)));
    v.insert("source".into(), Value::String(format!("eventpath kvm probe (docs/kvm.md) over the {base} profile: measured keys say \"measured by\", every other is {base}'s")));
    for (key, e) in &probe.profile {
        let (table, k) = key.split_once('.').ok_or(format!("bad profile key {key}"))?;
        let unit = bv.get(table).and_then(|t| t.get(k)).and_then(|p| p.get("unit")).and_then(Value::as_str)
            .ok_or(format!("profile {base} has no {key}"))?;
        let st = &e.stats;
        let mut param = toml::Table::new();
        param.insert("value".into(), Value::Float(e.value));
        param.insert("unit".into(), Value::String(unit.into()));
        if st.min < st.max {
            let mut r = toml::Table::new();
            r.insert("min".into(), Value::Float(st.min.min(e.value)));
            r.insert("max".into(), Value::Float(st.max.max(e.value)));
            r.insert("why".into(), Value::String(format!("the spread of the probe's {n} trials")));
            param.insert("range".into(), Value::Table(r));
        } else {
            param.insert("exact".into(), Value::String(format!("measured: the probe's {n} trials agreed")));
        }
        param.insert("source".into(), Value::String(format!("measured by eventpath kvm probe on {date}, {cpu}: {}; median of {n} trials", e.measures)));
        let t = v.entry(table.to_string()).or_insert_with(|| Value::Table(toml::Table::new()));
        t.as_table_mut().expect("a section").insert(k.into(), Value::Table(param));
    }
    let head = format!("# Overlay written by `eventpath kvm probe`: the costs it measured here over the {base} profile\n\
                        # (change `base` to put them on another; docs/check-host.md). Keys it refused are left out.\n");
    // Top-level strings, then a `[section]` per table with one inline table per parameter
    // (render() writes value, unit and source only; these carry their range too).
    let mut body = String::new();
    for (k, x) in &v {
        if let Value::String(s) = x {
            body.push_str(&format!("{k} = {}\n", quote(s)));
        }
    }
    for (name, x) in &v {
        let Value::Table(t) = x else { continue };
        body.push_str(&format!("\n[{name}]\n"));
        for (k, p) in t {
            body.push_str(&format!("{k} = {p}\n"));
        }
    }
    let text = format!("{head}\n{body}");
    let dir = std::env::temp_dir().join(format!("eventpath-overlay-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let path = dir.join("overlay.toml");
    std::fs::write(&path, &text).map_err(|e| e.to_string())?;
    let loaded = Profile::load(path.to_str().unwrap_or("overlay.toml"));
    let _ = std::fs::remove_dir_all(&dir);
    loaded.map_err(|e| format!("exported overlay does not load: {e}"))?;
    Ok(text)
}

/// profile.toml text from the probe's report.
pub fn profile_toml(probe: &ProbeReport) -> Result<String, String> {
    let base = Profile::load("es2").map_err(|e| e.to_string())?;
    let mut v = Value::try_from(&base).map_err(|e| format!("serialising es2: {e}"))?;
    // The es2 C-state table (an Ivy Bridge's) does not carry over: this host's idle states are
    // its measured idle curve where the probe took one, else none (the measured thread
    // wake-up includes this host's idle-state exit).
    let table = idle_table(probe);
    if let Some(Value::Table(h)) = v.get_mut("host") {
        h.remove("cstates");
        if let Some(t) = table {
            h.insert("cstates".into(), t);
        }
    }
    mark_unmeasured(&mut v, "es2");
    // The probe's exit costs are end to end on a guest whose working set is a few cache lines
    // (guest TSC around the kick; injection -> handler ran): there is no separate post-exit
    // slowdown to add, and es2's calibrated one (a Linux guest's, ES2's host) does not carry over.
    set(
        &mut v,
        "exit",
        "indirect_per_direct",
        0.0,
        "first principles for this host's testbed guest: the probe measures each exit end to end (the guest's TSC around the kick, injection -> handler), and the guest's loop touches a few cache lines, so no post-exit slowdown is added (es2's calibrated 1.4x belongs to a Linux guest on ES2's host)".into(),
    )?;
    if let Some(Value::Table(p)) = v.get_mut("exit").and_then(|t| t.get_mut("indirect_per_direct")) {
        p.remove("free");
    }
    set(
        &mut v,
        "vhost",
        "queue_switch_ns",
        0.0,
        "first principles for this host's testbed: its back end is one user thread with every VM's memory mapped in its own address space, so moving to another VM's queue changes no page table (es2's 250 ns is a vhost kernel thread's switch of mm, ELVIS §3)".into(),
    )?;
    // The testbed's back end answers its guest's requests itself: no tap, no bridge, no
    // physical NIC below it, so the host network path's stages cost nothing there (its
    // measured vhost.tx_packet_ns is the whole per-request cost).
    for key in ["tap_tx_ns", "dev_xmit_ns", "nic_irq_ns", "nic_rx_frame_ns", "nic_rx_skb_ns", "nic_tx_clean_ns"] {
        set(&mut v, "host", key, 0.0, "first principles for this host's testbed: its back end hands its guest's requests to no host network stack (no tap or macvtap, no bridge, no physical NIC); vhost.tx_packet_ns is measured whole".into())?;
    }
    let date = &probe.date;
    let cpu = probe.host_cpu.clone();
    let src = |what: &str| format!("measured by eventpath kvm probe on {date}, {cpu}: {what}");
    // Stock delivery follows this host's KVM, not es2's: APICv as its module reports it; no
    // VT-d posting (the testbed assigns no device, and a nested KVM has no IOMMU to post with).
    let (apicv, how) = host_apicv();
    set(&mut v, "host", "apicv", apicv, src(&how))?;
    set(&mut v, "host", "vtd_posting", 0.0, src("none: the testbed assigns no device to its guest, so no IOMMU posts its interrupts"))?;
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
    let n = probe.trials;
    for (key, e) in &probe.profile {
        let (table, k) = key.split_once('.').ok_or(format!("bad profile key {key}"))?;
        let st = &e.stats;
        let aside = if st.set_aside.is_empty() { String::new() } else { format!(", trial(s) {:?} set aside", st.set_aside) };
        let what = format!(
            "{}; median of {n} trials, min {}, max {}, spread max/min {:.2}{aside}",
            e.measures,
            stats::show(st.min, e.unit),
            stats::show(st.max, e.unit),
            st.spread
        );
        set(&mut v, table, k, e.value, src(&what))?;
    }
    for (key, r) in probe.refused.iter().filter(|(_, r)| r.profile_key) {
        let (table, k) = key.split_once('.').ok_or(format!("bad profile key {key}"))?;
        let param = v.get_mut(table).and_then(|t| t.get_mut(k)).and_then(Value::as_table_mut).ok_or(format!("profile has no {key}"))?;
        let old = param.get("source").and_then(Value::as_str).unwrap_or("").to_string();
        let rest = old.strip_prefix("not measured here; ").unwrap_or(&old);
        param.insert("source".into(), Value::String(format!("not measured here (the probe refused its measurement: {}; see probe.json refused); {rest}", r.reason)));
    }
    let mut head = String::from(
        "# Simulator profile written by `eventpath kvm probe` (format: profiles/README.md).\n\
         # Measured keys say \"measured by eventpath kvm probe\"; the others come from es2.\n",
    );
    if !probe.refused.is_empty() {
        head.push_str("# REFUSED by the outlier rule (trials disagree; not written here, see probe.json `refused`):\n");
        for (k, r) in &probe.refused {
            head.push_str(&format!("#   {k}: {}\n", r.reason));
        }
    }
    if !probe.not_in_profile.is_empty() {
        head.push_str("# Measured, with no key in this format (probe.json `not_in_profile`):\n");
        for (k, e) in &probe.not_in_profile {
            head.push_str(&format!("#   {k} = {} ({} .. {} over {n} trials)\n", stats::show(e.value, e.unit), stats::show(e.stats.min, e.unit), stats::show(e.stats.max, e.unit)));
        }
    }
    let text = format!("{head}\n{}", render(&v));
    Profile::parse("profile.toml", &text).map_err(|e| format!("exported profile does not load: {e}"))?;
    Ok(text)
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
