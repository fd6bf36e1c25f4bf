//! summary.json in the simulator's contract (see docs/kvm.md for what each key means here).
use crate::backend::CounterValues;
use crate::backend::irqgen::IrqGenResult;
use crate::guest::hist::GuestLatencies;
use eventpath_sim::metrics::Histogram;
use crate::scenario::{Scenario, VmCfg};
use crate::vmm::layout::BUFFER_SIZE;
use crate::vmm::sys::{tsc_hz, tsc_to_ns};
use crate::vmm::Vm;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Everything read at one instant.
#[derive(Default)]
pub struct Snapshot {
    /// TSC at the snapshot.
    pub t_tsc: u64,
    /// /proc/stat per CPU (busy, total).
    pub cpu_times: Vec<(u64, u64)>,
    /// Per VM, per vCPU: the first 44 u64 of the control block.
    pub vcpu_ctl: Vec<Vec<Vec<u64>>>,
    /// Per VM, per vCPU: latency histogram.
    pub hists: Vec<Vec<GuestLatencies>>,
    /// Per VM, per vCPU: CPL0 interrupt counter.
    pub irq_counts: Vec<Vec<u64>>,
    /// Per VM, per vCPU: KVM stats.
    pub kvm_vcpu: Vec<Vec<BTreeMap<String, u64>>>,
    /// Per VM: KVM VM stats.
    pub kvm_vm: Vec<BTreeMap<String, u64>>,
    /// Per VM, per vCPU: thread CPU ns.
    pub vcpu_cpu_ns: Vec<Vec<u64>>,
    /// Per backend thread: name, counters, CPU ns.
    pub backends: Vec<(String, CounterValues, u64)>,
}

/// A VM of the run.
pub struct VmRun {
    /// The VM.
    pub vm: Arc<Vm>,
    /// Its scenario table.
    pub cfg: VmCfg,
    /// Its index.
    pub index: usize,
}

fn field(name: &str) -> usize {
    use crate::ctl_off;
    (match name {
        "submitted" => ctl_off!(submitted),
        "completed" => ctl_off!(completed),
        "dropped" => ctl_off!(dropped),
        "kicks" => ctl_off!(kicks),
        "kicks_suppressed" => ctl_off!(kicks_suppressed),
        "halts" => ctl_off!(halts),
        "irq_seen" => ctl_off!(irq_seen),
        "kick_cycles" => ctl_off!(kick_cycles),
        "heartbeat" => ctl_off!(heartbeat),
        _ => ctl_off!(adv_sent),
    } / 8) as usize
}

/// Latency object in µs from a histogram in TSC ticks (all null when empty).
pub fn latency_us(h: &Histogram) -> Value {
    let us = |t: Option<f64>| t.map(|t| tsc_to_ns(t as u64) / 1e3);
    json!({
        "mean": us(h.mean()), "p50": us(h.quantile(0.5)), "p90": us(h.quantile(0.9)),
        "p99": us(h.quantile(0.99)), "p999": us(h.quantile(0.999)),
        "max": us(h.max().map(|m| m as f64)),
    })
}

fn d(m: &BTreeMap<String, u64>, b: &BTreeMap<String, u64>, k: &str) -> u64 {
    m.get(k).copied().unwrap_or(0).saturating_sub(b.get(k).copied().unwrap_or(0))
}

/// Builds summary.json.
pub fn build(
    s: &Scenario,
    runs: &[VmRun],
    a: &Snapshot,
    b: &Snapshot,
    secs: f64,
    wall: f64,
    gen: Option<IrqGenResult>,
) -> Value {
    let per_s = |n: u64| n as f64 / secs;
    let backends: Vec<(String, CounterValues, f64)> = a
        .backends
        .iter()
        .zip(&b.backends)
        .map(|(x, y)| (x.0.clone(), y.1.since(&x.1), (y.2.saturating_sub(x.2)) as f64 / 1e9))
        .collect();
    let tot = backends.iter().fold(CounterValues::default(), |acc, x| acc.plus(&x.1));
    let mut vms_json = Vec::new();
    let mut kvm_json = Vec::new();
    for r in runs {
        let v = r.index;
        let n = r.cfg.vcpus as usize;
        let sum = |f: &str| -> u64 { (0..n).map(|i| b.vcpu_ctl[v][i][field(f)].saturating_sub(a.vcpu_ctl[v][i][field(f)])).sum() };
        let kv = |k: &str| -> u64 { (0..n).map(|i| d(&b.kvm_vcpu[v][i], &a.kvm_vcpu[v][i], k)).sum() };
        let mut hist = Histogram::new();
        for i in 0..n {
            hist.merge(&b.hists[v][i].since(&a.hists[v][i]));
        }
        let is_gen_vm = s.irqgen.as_ref().is_some_and(|g| g.vm == v);
        if let (true, Some(g)) = (is_gen_vm, &gen) {
            hist = g.hist.clone();
        }
        let completed = sum("completed");
        let submitted = sum("submitted");
        let dropped = sum("dropped");
        let kicks = sum("kicks");
        let irqs: u64 = (0..n).map(|i| b.irq_counts[v][i] - a.irq_counts[v][i]).sum();
        let (io, mmio, irq_exits, hlt, win, exits) =
            (kv("io_exits"), kv("mmio_exits"), kv("irq_exits"), kv("halt_exits"), kv("irq_window_exits"), kv("exits"));
        // io_exits never counts on some hosts (KVM-NOTES): fall back to the guest's PIO kick count.
        let io_instr = if io > 0 { io } else if r.cfg.kick == "pio" { kicks } else { 0 };
        // ioeventfd MMIO kicks take KVM's fast MMIO path, which `mmio_exits` does not count.
        let ept = if mmio > 0 { mmio } else if r.cfg.kick == "mmio" { kicks } else { 0 };
        let known = io_instr + ept + irq_exits + hlt + win + irqs; // irqs: one EOI exit each
        let cpu_ns: u64 = (0..n).map(|i| b.vcpu_cpu_ns[v][i].saturating_sub(a.vcpu_cpu_ns[v][i])).sum();
        let streamish = r.cfg.load.iter().any(|l| matches!(l.pattern.as_str(), "stream" | "burst"));
        vms_json.push(json!({
            "name": r.cfg.name,
            "exits_per_s": {
                "io_instruction": per_s(io_instr),
                "interrupt_delivery": null,
                "eoi": per_s(irqs),
                "external_interrupt": per_s(irq_exits),
                "timer": null,
                "hlt": per_s(hlt),
                "ept_violation": per_s(ept),
                "interrupt_window": per_s(win),
                // ICR writes are not a KVM stat of their own: counted in `other`.
                "ipi": null,
                "other": per_s(exits.saturating_sub(known)),
            },
            "exits_total_per_s": per_s(exits),
            "eht_pct": null,
            "tig_pct": null,
            "interrupts_per_s": per_s(irqs),
            "kicks_per_s": per_s(kicks),
            "throughput": if completed > 0 || submitted > 0 { json!({
                "gbps": completed as f64 * BUFFER_SIZE as f64 * 8.0 / secs / 1e9,
                "pps": per_s(completed),
                "ops_per_s": per_s(completed),
            }) } else { json!({"gbps": null, "pps": null, "ops_per_s": null}) },
            "latency_us": latency_us(&hist),
            "loss_pct": if streamish && submitted + dropped > 0 { json!(dropped as f64 * 100.0 / (submitted + dropped) as f64) } else { Value::Null },
            "cpu_util_pct": cpu_ns as f64 / 1e9 / secs * 100.0 / n as f64,
            "guest": {
                "requests_submitted": submitted,
                "requests_completed": completed,
                "requests_dropped_ring_full": dropped,
                "kicks": kicks,
                "kicks_suppressed": sum("kicks_suppressed"),
                "kicks_per_request": if submitted > 0 { json!(kicks as f64 / submitted as f64) } else { Value::Null },
                "exits_per_request": if completed > 0 { json!(exits as f64 / completed as f64) } else { Value::Null },
                "kick_cost_us_per_request": if submitted > 0 { json!(tsc_to_ns(sum("kick_cycles")) / 1e3 / submitted as f64) } else { Value::Null },
                "kick_cost_us_per_kick": if kicks > 0 { json!(tsc_to_ns(sum("kick_cycles")) / 1e3 / kicks as f64) } else { Value::Null },
                "interrupts_handled": irqs,
                "halts": sum("halts"),
                "garbage_requests_sent": (0..n).map(|i| (0..6).map(|k| b.vcpu_ctl[v][i][field("adv") + k] - a.vcpu_ctl[v][i][field("adv") + k]).sum::<u64>()).sum::<u64>(),
                "latency_samples": hist.count(),
            },
        }));
        let vcpus: Vec<Value> = (0..n).map(|i| json!(stats_delta(&a.kvm_vcpu[v][i], &b.kvm_vcpu[v][i]))).collect();
        kvm_json.push(json!({"vm": r.cfg.name, "vm_stats": stats_delta(&a.kvm_vm[v], &b.kvm_vm[v]), "vcpus": vcpus}));
    }
    let pcpu: Vec<f64> = a
        .cpu_times
        .iter()
        .zip(&b.cpu_times)
        .map(|(x, y)| {
            let (busy, tot) = (y.0.saturating_sub(x.0), y.1.saturating_sub(x.1));
            if tot == 0 { 0.0 } else { busy as f64 * 100.0 / tot as f64 }
        })
        .collect();
    let mut io_threads: Vec<Value> = backends
        .iter()
        .map(|(name, c, cpu)| {
            json!({
                "name": name,
                "util_pct": cpu / secs * 100.0,
                "empty_poll_pct": if c.polls > 0 { json!(c.empty_polls as f64 * 100.0 / c.polls as f64) } else { Value::Null },
            })
        })
        .collect();
    let mut gen_json = Value::Null;
    if let Some(g) = &gen {
        let by_state: serde_json::Map<String, Value> = ["home_running", "other_running", "none_running"]
            .iter()
            .zip(&g.by_class)
            .map(|(k, h)| (k.to_string(), json!({"samples": h.count(), "latency_us": latency_us(h)})))
            .collect();
        io_threads.push(json!({"name": "irqgen", "util_pct": null, "empty_poll_pct": null}));
        gen_json = json!({
            "samples": g.hist.count(), "sent": g.sent,
            "by_run_state": by_state, "lost": g.lost, "route_changes": g.route_changes,
            "reroute_us_mean": if g.route_changes > 0 { json!(g.reroute_ns as f64 / 1e3 / g.route_changes as f64) } else { Value::Null },
        });
    }
    let errors: BTreeMap<&str, u64> = [
        ("head_out_of_range", tot.err_head_out_of_range),
        ("addr_out_of_range", tot.err_addr_out_of_range),
        ("huge_length", tot.err_huge_length),
        ("chain_loop", tot.err_chain_loop),
        ("next_out_of_range", tot.err_next_out_of_range),
        ("avail_idx_jump", tot.err_avail_idx_jump),
        ("indirect", tot.err_indirect),
        ("ring_out_of_range", tot.err_ring_out_of_range),
    ]
    .into_iter()
    .collect();
    json!({
        "scenario": s.name,
        "seed": null,
        "profile": null,
        "sim_seconds": secs,
        "wall_seconds": wall,
        "events": null,
        "vms": vms_json,
        "host": {"pcpu_util_pct": pcpu, "io_threads": io_threads},
        "kvm_stats": kvm_json,
        "counters": {
            "backend": tot,
            "per_thread": backends.iter().map(|(n, c, _)| json!({"name": n, "counters": c})).collect::<Vec<_>>(),
            "interrupts_sent": tot.irq_sent,
            "interrupts_coalesced": tot.irq_coalesced + tot.irq_delayed,
            "completions_per_interrupt": if tot.irq_sent > 0 { json!(tot.requests as f64 / tot.irq_sent as f64) } else { Value::Null },
            "polls": tot.polls,
            "empty_polls": tot.empty_polls,
            "routing_changes": tot.route_changes + gen.as_ref().map(|g| g.route_changes).unwrap_or(0),
            "guest_errors": errors,
            "irqgen": gen_json,
            "tsc_hz": tsc_hz(),
        },
    })
}


fn stats_delta(a: &BTreeMap<String, u64>, b: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    crate::vmm::stats::delta(a, b)
}
