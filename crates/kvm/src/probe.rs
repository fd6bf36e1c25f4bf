//! `eventpath kvm probe`: measures this host's primitive costs with short testbed runs and writes
//! probe.json and a simulator profile (profile.toml, see [`profile`]).
//!
//! Every cost is measured per event of its own kind: the notification paths with guest loops
//! that do nothing but notify (`kick_loop`, `exit_loop`), so that "guest cost per notification"
//! is the guest's TSC cycles around the instruction divided by the notifications made, and the
//! throughput is notifications per second of one vCPU.
pub mod profile;

use crate::error::Result;
use crate::scenario::Scenario;
use crate::vmm::{self, sys, KickVia, Vm, VmSpec};
use serde_json::{json, Value};
use std::time::Instant;

fn run_toml(text: &str) -> Result<Value> {
    Ok(serde_json::to_value(crate::run::run(&Scenario::parse(text)?)?).expect("summary serializes"))
}

fn pins() -> (String, String) {
    if sys::host_cpus() >= 2 {
        ("pin = [0]".into(), "pin = [1]".into())
    } else {
        (String::new(), String::new())
    }
}

fn header(dur: f64) -> String {
    format!("name = \"probe\"\nduration_s = {dur}\nwarmup_s = 0.05\n")
}

fn stream(kick: &str, mode: &str, rate: f64, dur: f64) -> String {
    let (vp, bp) = pins();
    format!(
        "{}[backend]\nmode = \"{mode}\"\n{bp}\n[[vm]]\nname = \"vm0\"\nkick = \"{kick}\"\n{vp}\n[[vm.load]]\npattern = \"stream\"\nrate = {rate}\n",
        header(dur)
    )
}

/// A vCPU that does nothing but notify: `kick_loop` (ioeventfd) or `exit_loop` (userspace exit).
fn notify_loop(pattern: &str, kick: &str, dur: f64) -> String {
    let (vp, _) = pins();
    format!("{}[[vm]]\nname = \"vm0\"\nkick = \"{kick}\"\n{vp}\n[[vm.load]]\npattern = \"{pattern}\"\n", header(dur))
}

fn irq(gap_us: f64, halt: bool, halt_poll: Option<u64>, dur: f64) -> String {
    let (vp, bp) = pins();
    let bp = bp.replace("[1]", "1");
    let hp = halt_poll.map(|n| format!("halt_poll_ns = {n}")).unwrap_or_default();
    format!(
        "{}[irqgen]\ngap_us = {gap_us}\n{bp}\n[[vm]]\nname = \"vm0\"\n{vp}\n{hp}\n[[vm.load]]\npattern = \"irq_sink\"\nhalt_when_idle = {halt}\n",
        header(dur)
    )
}

/// One request every `gap_us` to an exit-mode backend that sleeps in poll(2) between them.
fn sparse_kicks(kick: &str, gap_us: f64, dur: f64) -> String {
    let (vp, bp) = pins();
    format!(
        "{}[backend]\nmode = \"exit\"\n{bp}\n[[vm]]\nname = \"vm0\"\nkick = \"{kick}\"\n{vp}\n[[vm.load]]\npattern = \"burst\"\nburst = 1\ngap_us = {gap_us}\n",
        header(dur)
    )
}

/// `v[path...]` (numeric parts index arrays).
pub fn p(v: &Value, path: &[&str]) -> Value {
    let mut x = v;
    for k in path {
        x = match k.parse::<usize>() {
            Ok(i) if x.is_array() => &x[i],
            _ => &x[*k],
        };
    }
    x.clone()
}

/// Median cost of KVM_SET_GSI_ROUTING moving an MSI between two vCPUs (µs), VM idle.
fn reroute_us(n: usize) -> Result<Value> {
    let kvm = vmm::open_kvm()?;
    let vm = Vm::new(&kvm, VmSpec { name: "probe".into(), vcpus: 2, queues: 1, kick: KickVia::Pio, halt_poll_ns: None, extra_msis: 0 })?;
    let mut t = Vec::new();
    for i in 0..n {
        let t0 = Instant::now();
        vm.set_route(0, (i % 2) as u64 ^ 1)?;
        t.push(t0.elapsed().as_secs_f64() * 1e6);
    }
    t.sort_by(f64::total_cmp);
    Ok(json!({"median": t[t.len() / 2], "p90": t[t.len() * 9 / 10], "samples": n,
              "note": "VM created but not running; see experiment 4 for the cost while the vCPUs' CPU is saturated"}))
}

/// One notification path: guest cost per notification, notifications/s, KVM exits per one.
fn notify_path(pattern: &str, kick: &str, dur: f64, note: &str) -> Result<Value> {
    let r = run_toml(&notify_loop(pattern, kick, dur))?;
    let kicks = p(&r, &["vms", "0", "guest", "kicks"]).as_f64().unwrap_or(0.0);
    let exits = p(&r, &["kvm_stats", "0", "vcpus", "0", "exits"]).as_f64();
    Ok(json!({
        "guest_cost_us_per_notification": p(&r, &["vms", "0", "guest", "kick_cost_us_per_kick"]),
        "notifications_per_s": p(&r, &["vms", "0", "kicks_per_s"]),
        "kvm_exits_per_notification": exits.filter(|_| kicks > 0.0).map(|e| e / kicks),
        "notifications": kicks,
        "note": note,
    }))
}

/// Runs the probe, writes `out_dir/probe.json` and `out_dir/profile.toml`; returns probe.json.
pub fn probe(out_dir: &str, quick: bool) -> Result<String> {
    let dur = if quick { 0.15 } else { 0.5 };
    let mut res = serde_json::Map::new();
    let mut paths = serde_json::Map::new();
    for (name, pattern, kick, note) in [
        ("pio_exit_to_userspace", "exit_loop", "pio", "out to a port with no ioeventfd: KVM_EXIT_IO, the vCPU thread re-enters"),
        ("mmio_exit_to_userspace", "exit_loop", "mmio", "write to unbacked MMIO: KVM_EXIT_MMIO, the vCPU thread re-enters"),
        ("pio_ioeventfd", "kick_loop", "pio", "out to the ioeventfd port: no userspace exit"),
        ("mmio_ioeventfd", "kick_loop", "mmio", "write to the ioeventfd MMIO address: no userspace exit"),
    ] {
        paths.insert(name.into(), notify_path(pattern, kick, dur, note)?);
    }
    res.insert("notification_paths".into(), Value::Object(paths));
    let mut k2b = serde_json::Map::new();
    for kick in ["pio", "mmio"] {
        let r = run_toml(&sparse_kicks(kick, 200.0, dur))?;
        k2b.insert(format!("{kick}_ioeventfd"), json!({
            "latency_us": p(&r, &["counters", "kick_to_backend", "latency_us"]),
            "samples": p(&r, &["counters", "kick_to_backend", "samples"]),
            "kicks": p(&r, &["vms", "0", "guest", "kicks"]),
        }));
    }
    k2b.insert("note".into(), json!("guest TSC just before the kick instruction -> the exit-mode backend thread back from poll(2) with that kick's eventfd (shared TSC; one request every 200 us, so the thread is asleep: includes the exit, eventfd signal and the thread's wake-up)"));
    res.insert("kick_to_backend_handler".into(), Value::Object(k2b));
    let poll = run_toml(&stream("pio", "poll", 1e5, dur))?;
    res.insert("polled_ring_request".into(), json!({
        "kicks_per_request": p(&poll, &["vms", "0", "guest", "kicks_per_request"]),
        "requests_per_s": p(&poll, &["vms", "0", "throughput", "ops_per_s"]),
        "request_to_completion_seen_us": p(&poll, &["vms", "0", "latency_us"]),
        "note": "stream at 100 k/s, backend thread polls, guest polls its used ring; latency = submit -> guest sees the completion",
    }));
    let inj = run_toml(&irq(100.0, false, None, dur))?;
    res.insert("msi_injection_to_handler".into(), json!({
        "latency_us": p(&inj, &["vms", "0", "latency_us"]),
        "samples": p(&inj, &["counters", "irqgen", "samples"]),
        "note": "irqfd write -> the CPL3 loop sees the CPL0 handler's count (guest spinning, open-loop injections every 100 us +- 50 %)",
    }));
    let mut halt = serde_json::Map::new();
    for (name, hp) in [("halt_poll_0", Some(0u64)), ("halt_poll_default", None), ("halt_poll_2ms", Some(2_000_000))] {
        for gap in [100.0, 1000.0] {
            let r = run_toml(&irq(gap, true, hp, dur))?;
            let st = p(&r, &["kvm_stats", "0", "vcpus", "0"]);
            halt.insert(format!("{name}_gap_{gap}us"), json!({
                "latency_us": p(&r, &["vms", "0", "latency_us"]),
                "vcpu_cpu_util_pct": p(&r, &["vms", "0", "cpu_util_pct"]),
                "halt_exits": st["halt_exits"], "halt_successful_poll": st["halt_successful_poll"],
                "halt_attempted_poll": st["halt_attempted_poll"],
            }));
        }
    }
    res.insert("hlt_wakeup".into(), Value::Object(halt));
    res.insert("msi_reroute_us".into(), reroute_us(if quick { 50 } else { 400 })?);
    let cpu = profile::host_cpu_model();
    let date = std::process::Command::new("date").arg("-u").arg("+%Y-%m-%d").output().ok().map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string()).unwrap_or_default();
    let probe = json!({"host_cpu": cpu, "date": date, "tsc_hz": sys::tsc_hz(), "host_cpus": sys::host_cpus(), "quick": quick, "results": res});
    let text = serde_json::to_string_pretty(&probe).expect("json");
    let toml = profile::profile_toml(&probe).map_err(crate::Error::Kvm)?;
    std::fs::create_dir_all(out_dir)?;
    std::fs::write(std::path::Path::new(out_dir).join("probe.json"), &text)?;
    std::fs::write(std::path::Path::new(out_dir).join("profile.toml"), toml)?;
    Ok(text)
}
