//! `eventpath kvm probe`: measures this host's primitive costs with short testbed runs and writes
//! probe.json and a simulator profile (profile.toml).
use crate::error::Result;
use crate::scenario::Scenario;
use crate::vmm::{self, sys, KickVia, Vm, VmSpec};
use serde_json::{json, Value};
use std::time::Instant;

fn run_toml(text: &str) -> Result<Value> {
    crate::run::run(&Scenario::parse(text)?)
}

fn pins() -> (String, String) {
    if sys::host_cpus() >= 2 {
        ("pin = [0]".into(), "pin = [1]".into())
    } else {
        (String::new(), String::new())
    }
}

fn stream(kick: &str, mode: &str, rate: f64, dur: f64) -> String {
    let (vp, bp) = pins();
    format!(
        "name = \"probe\"\nduration_s = {dur}\nwarmup_s = 0.05\n[backend]\nmode = \"{mode}\"\n{bp}\n[[vm]]\nname = \"vm0\"\nkick = \"{kick}\"\n{vp}\n[[vm.load]]\npattern = \"stream\"\nrate = {rate}\n"
    )
}

fn irq(gap_us: f64, halt: bool, halt_poll: Option<u64>, dur: f64) -> String {
    let (vp, bp) = pins();
    let bp = bp.replace("[1]", "1");
    let hp = halt_poll.map(|n| format!("halt_poll_ns = {n}")).unwrap_or_default();
    format!(
        "name = \"probe\"\nduration_s = {dur}\nwarmup_s = 0.05\n[irqgen]\ngap_us = {gap_us}\n{bp}\n[[vm]]\nname = \"vm0\"\n{vp}\n{hp}\n[[vm.load]]\npattern = \"irq_sink\"\nhalt_when_idle = {halt}\n"
    )
}

fn p(v: &Value, path: &[&str]) -> Value {
    let mut x = v;
    for k in path {
        x = match k.parse::<usize>() {
            Ok(i) if x.is_array() => &x[i],
            _ => &x[*k],
        };
    }
    x.clone()
}

/// Median cost of KVM_SET_GSI_ROUTING moving an MSI between two vCPUs (µs).
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
    Ok(json!({"median": t[t.len() / 2], "p90": t[t.len() * 9 / 10], "samples": n}))
}

/// Runs the probe, writes `out_dir/probe.json` and `out_dir/profile.toml`.
pub fn probe(out_dir: &str, quick: bool) -> Result<String> {
    let dur = if quick { 0.2 } else { 1.0 };
    let mut res = serde_json::Map::new();
    let sat = run_toml(&stream("pio", "exit", 1e6, dur))?;
    res.insert("ioeventfd_pio_kick".into(), json!({
        "guest_cost_us": p(&sat, &["vms", "0", "guest", "kick_cost_us_per_request"]).as_f64(),
        "note": "guest TSC cycles spent in the out instruction (ioeventfd, no userspace exit), saturating stream",
    }));
    let mmio = run_toml(&stream("mmio", "exit", 1e6, dur))?;
    res.insert("ioeventfd_mmio_kick".into(), json!({
        "guest_cost_us": p(&mmio, &["vms", "0", "guest", "kick_cost_us_per_request"]).as_f64(),
    }));
    let poll = run_toml(&stream("pio", "poll", 1e5, dur))?;
    res.insert("polled_ring_request".into(), json!({
        "kicks_per_request": p(&poll, &["vms", "0", "guest", "kicks_per_request"]),
        "request_to_completion_seen_us_p50": p(&poll, &["vms", "0", "latency_us", "p50"]),
        "note": "guest polls its used ring; latency = submit -> guest sees the completion",
    }));
    let inj = run_toml(&irq(100.0, false, None, dur))?;
    res.insert("msi_injection_to_handler".into(), json!({
        "latency_us": p(&inj, &["vms", "0", "latency_us"]),
        "note": "irqfd write -> the CPL3 loop sees the CPL0 handler's count (guest spinning)",
    }));
    let mut halt = serde_json::Map::new();
    for (name, hp) in [("halt_poll_0", Some(0u64)), ("halt_poll_default", None), ("halt_poll_2ms", Some(2_000_000))] {
        for gap in [100.0, 1000.0] {
            let r = run_toml(&irq(gap, true, hp, dur))?;
            halt.insert(format!("{name}_gap_{gap}us"), json!({
                "latency_us": p(&r, &["vms", "0", "latency_us"]),
                "vcpu_cpu_util_pct": p(&r, &["vms", "0", "cpu_util_pct"]),
            }));
        }
    }
    res.insert("hlt_wakeup".into(), Value::Object(halt));
    res.insert("msi_reroute_us".into(), reroute_us(if quick { 50 } else { 400 })?);
    res.insert("exit_to_userspace".into(), json!({"value": null, "note": "not measured by this probe version (see KVM-NOTES: 8.6-9.0 us)"}));
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| t.lines().find(|l| l.starts_with("model name")).map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string()))
        .unwrap_or_else(|| "unknown cpu".into());
    let date = std::process::Command::new("date").arg("-u").arg("+%Y-%m-%d").output().ok().map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string()).unwrap_or_default();
    let probe = json!({"host_cpu": cpu, "date": date, "tsc_hz": sys::tsc_hz(), "quick": quick, "results": res});
    let text = serde_json::to_string_pretty(&probe).expect("json");
    std::fs::create_dir_all(out_dir)?;
    std::fs::write(std::path::Path::new(out_dir).join("probe.json"), &text)?;
    std::fs::write(std::path::Path::new(out_dir).join("profile.toml"), profile_toml(&probe, &cpu, &date))?;
    Ok(text)
}

fn profile_toml(probe: &Value, cpu: &str, date: &str) -> String {
    let r = &probe["results"];
    let src = format!("measured by eventpath kvm probe, {date}, {cpu}");
    let ns = |v: &Value| v.as_f64().map(|us| (us * 1e3).round() as u64);
    let mut out = String::from("# Simulator profile measured by `eventpath kvm probe` on this host.\n# Costs in ns. Format: key = { value = N, unit = \"ns\", source = \"...\" }\n\n[costs]\n");
    let mut put = |k: &str, v: Option<u64>| {
        if let Some(v) = v {
            out.push_str(&format!("{k} = {{ value = {v}, unit = \"ns\", source = \"{src}\" }}\n"));
        }
    };
    put("kick_ioeventfd_pio", ns(&r["ioeventfd_pio_kick"]["guest_cost_us"]));
    put("kick_ioeventfd_mmio", ns(&r["ioeventfd_mmio_kick"]["guest_cost_us"]));
    put("msi_inject_to_handler", ns(&r["msi_injection_to_handler"]["latency_us"]["p50"]));
    put("polled_request_roundtrip", ns(&r["polled_ring_request"]["request_to_completion_seen_us_p50"]));
    put("msi_reroute", ns(&r["msi_reroute_us"]["median"]));
    put("hlt_wakeup_no_poll", ns(&r["hlt_wakeup"]["halt_poll_0_gap_1000us"]["latency_us"]["p50"]));
    put("hlt_wakeup_halt_poll", ns(&r["hlt_wakeup"]["halt_poll_2ms_gap_1000us"]["latency_us"]["p50"]));
    out
}
