//! summary.json in the simulator's contract (`eventpath_sim::summary` types, with the testbed's
//! keys from [`super::extra`]; docs/kvm.md says what each key means here).
use super::extra::*;
use crate::backend::irqgen::IrqGenResult;
use crate::backend::CounterValues;
use crate::guest::hist::GuestLatencies;
use crate::scenario::Scenario;
use crate::vmm::layout::BUFFER_SIZE;
use crate::vmm::sys::{tsc_hz, tsc_to_ns};
use eventpath_sim::metrics::{ExitReason, Histogram};
use eventpath_sim::summary::{HostSummary, IoThreadSummary, Latency, Measured, Throughput, VmSummary};
use std::collections::BTreeMap;

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
    /// Every vCPU thread (`vcpu:<vm>/<i>`, the simulator's names) then every backend thread:
    /// the kernel's migration count (`super::migrations`; None: not readable).
    pub migrations: Vec<(String, Option<u64>)>,
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
        "work_cycles" => ctl_off!(work_cycles),
        "heartbeat" => ctl_off!(heartbeat),
        _ => ctl_off!(adv_sent),
    } / 8) as usize
}

/// Latency in µs of a histogram in TSC ticks (all null when empty).
pub fn latency_us(h: &Histogram) -> Latency {
    Latency::from_histogram_in(h, |t| tsc_to_ns(t as u64) / 1e3)
}

/// Sample count and latency in µs of a histogram in TSC ticks.
pub fn samples(h: &Histogram) -> LatencySamples {
    LatencySamples { samples: h.count(), latency_us: latency_us(h) }
}

fn d(m: &BTreeMap<String, u64>, b: &BTreeMap<String, u64>, k: &str) -> u64 {
    m.get(k).copied().unwrap_or(0).saturating_sub(b.get(k).copied().unwrap_or(0))
}

/// `a / b`, or `None` when `b` is 0.
fn ratio(a: f64, b: u64) -> Option<f64> {
    (b > 0).then(|| a / b as f64)
}

/// The measured window: the snapshots at its ends and its length.
pub struct Window<'a> {
    /// Snapshot at the start.
    pub a: &'a Snapshot,
    /// Snapshot at the end.
    pub b: &'a Snapshot,
    /// Length. Unit: s.
    pub secs: f64,
}

impl Window<'_> {
    fn per_s(&self, n: u64) -> f64 {
        n as f64 / self.secs
    }
}

/// Whether the VM's load issues requests (completions are then its throughput, 0 included).
fn requests_load(cfg: &crate::scenario::VmCfg) -> bool {
    cfg.load.iter().any(|l| matches!(l.pattern.as_str(), "stream" | "closed" | "burst"))
}

/// VM `v`'s summary.
fn vm_summary(s: &Scenario, v: usize, w: &Window, gen: Option<&IrqGenResult>) -> VmSummary<GuestKeys> {
    let cfg = &s.vm[v];
    let (a, b, n) = (w.a, w.b, cfg.vcpus as usize);
    let sum = |f: &str| -> u64 { (0..n).map(|i| b.vcpu_ctl[v][i][field(f)].saturating_sub(a.vcpu_ctl[v][i][field(f)])).sum() };
    let kv = |k: &str| -> u64 { (0..n).map(|i| d(&b.kvm_vcpu[v][i], &a.kvm_vcpu[v][i], k)).sum() };
    let mut hist = Histogram::new();
    for i in 0..n {
        hist.merge(&b.hists[v][i].since(&a.hists[v][i]));
    }
    if let Some(g) = gen.filter(|_| s.irqgen.as_ref().is_some_and(|g| g.vm == v)) {
        hist = g.hist.clone();
    }
    let (completed, submitted, dropped, kicks) = (sum("completed"), sum("submitted"), sum("dropped"), sum("kicks"));
    let irqs: u64 = (0..n).map(|i| b.irq_counts[v][i] - a.irq_counts[v][i]).sum();
    let (io, mmio, irq_exits, hlt, win, exits) =
        (kv("io_exits"), kv("mmio_exits"), kv("irq_exits"), kv("halt_exits"), kv("irq_window_exits"), kv("exits"));
    // io_exits never counts on some hosts (KVM-NOTES): fall back to the guest's PIO kick count.
    let io_instr = if io > 0 { io } else if cfg.kick == "pio" { kicks } else { 0 };
    // ioeventfd MMIO kicks take KVM's fast MMIO path, which `mmio_exits` does not count.
    let ept = if mmio > 0 { mmio } else if cfg.kick == "mmio" { kicks } else { 0 };
    let known = io_instr + ept + irq_exits + hlt + win + irqs; // irqs: one EOI exit each
    let exits_per_s = ExitReason::ALL
        .iter()
        .map(|&reason| {
            let n = match reason {
                ExitReason::IoInstruction => Some(io_instr),
                ExitReason::Eoi => Some(irqs),
                ExitReason::ExternalInterrupt => Some(irq_exits),
                ExitReason::Hlt => Some(hlt),
                ExitReason::EptViolation => Some(ept),
                ExitReason::InterruptWindow => Some(win),
                // ICR writes are not a KVM stat of their own: counted in `other`.
                ExitReason::Other => Some(exits.saturating_sub(known)),
                ExitReason::InterruptDelivery | ExitReason::Timer | ExitReason::Ipi => None,
            };
            (reason.key(), n.map(|n| w.per_s(n)))
        })
        .collect();
    let cpu_ns: u64 = (0..n).map(|i| b.vcpu_cpu_ns[v][i].saturating_sub(a.vcpu_cpu_ns[v][i])).sum();
    let streamish = cfg.load.iter().any(|l| matches!(l.pattern.as_str(), "stream" | "burst"));
    let kick_us = tsc_to_ns(sum("kick_cycles")) / 1e3;
    let garbage = (0..n).map(|i| (0..6).map(|k| b.vcpu_ctl[v][i][field("adv") + k] - a.vcpu_ctl[v][i][field("adv") + k]).sum::<u64>()).sum();
    VmSummary {
        name: cfg.name.clone(),
        exits_per_s,
        exits_total_per_s: Some(w.per_s(exits)),
        eht_pct: None,
        tig_pct: None,
        interrupts_per_s: Some(w.per_s(irqs)),
        interrupts_by_source_per_s: Measured::not_measured(),
        ipis_by_kind_per_s: Measured::not_measured(),
        kicks_per_s: Some(w.per_s(kicks)),
        // As the simulator: null only for a VM with no request load (spin, irq_sink, kick or exit
        // loops); a VM whose requests got no service reports 0, a number.
        throughput: if requests_load(cfg) || completed > 0 || submitted > 0 {
            Throughput {
                gbps: Some(completed as f64 * BUFFER_SIZE as f64 * 8.0 / w.secs / 1e9),
                pps: Some(w.per_s(completed)),
                ops_per_s: Some(w.per_s(completed)),
            }
        } else {
            Throughput::default()
        },
        latency_us: latency_us(&hist),
        loss_pct: if streamish { ratio(dropped as f64 * 100.0, submitted + dropped) } else { None },
        cpu_util_pct: Some(cpu_ns as f64 / 1e9 / w.secs * 100.0 / n as f64),
        coscheduled_pct: None,
        coscheduled_if_independent_pct: None,
        running_target_found_pct: None,
        guest_burn_pct: None,
        halt_poll_pct: None,
        guest_halt_poll_pct: None,
        web: None,
        cpu_job: None,
        lookbusy: None,
        httperf: None,
        specweb: None,
        block: None,
        guest_threads: None,
            tcp_receive: None,
            tcp_rr: None,
        interrupt_delivery: None,
        device_interrupts_by_target_state_per_s: Measured::not_measured(),
        interrupt_routing: None,
        interrupt_routing_note: None,
        device_interrupts_by_run_state_per_s: Measured::not_measured(),
        default_target_away_by_run_state_per_s: Measured::not_measured(),
        // The generator's injections by what was running (the same classes as the simulator's
        // irq_source, `eventpath_policy::routing::RunClass`).
        latency_by_target_state_us: match gen.filter(|_| s.irqgen.as_ref().is_some_and(|g| g.vm == v)) {
            Some(g) => eventpath_policy::routing::RunClass::KEYS.into_iter().zip(g.by_class.iter().map(latency_us)).collect::<BTreeMap<_, _>>().into(),
            None => Measured::not_measured(),
        },
        extra: GuestKeys {
            guest: GuestCounters {
                requests_submitted: submitted,
                requests_completed: completed,
                requests_dropped_ring_full: dropped,
                kicks,
                kicks_suppressed: sum("kicks_suppressed"),
                kicks_per_request: ratio(kicks as f64, submitted),
                exits_per_request: ratio(exits as f64, completed),
                kick_cost_us_per_request: ratio(kick_us, submitted),
                kick_cost_us_per_kick: ratio(kick_us, kicks),
                work_ns_per_request: ratio(tsc_to_ns(sum("work_cycles")), completed),
                interrupts_handled: irqs,
                halts: sum("halts"),
                garbage_requests_sent: garbage,
                latency_samples: hist.count(),
            },
        },
    }
}

/// `counters`, without `kick_to_backend` (the caller's).
fn counters(backends: &[(String, CounterValues, f64)], gen: Option<&IrqGenResult>) -> Counters {
    let tot = backends.iter().fold(CounterValues::default(), |acc, x| acc.plus(&x.1));
    let guest_errors = [
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
    let irqgen = gen.map(|g| IrqGenCounters {
        samples: g.hist.count(),
        sent: g.sent,
        by_run_state: eventpath_policy::routing::RunClass::KEYS.into_iter().zip(g.by_class.iter().map(samples)).collect(),
        lost: g.lost,
        route_changes: g.route_changes,
        reroute_us_mean: ratio(g.reroute_ns as f64 / 1e3, g.route_changes),
    });
    Counters {
        backend: tot,
        per_thread: backends.iter().map(|(name, c, _)| ThreadCounters { name: name.clone(), counters: *c }).collect(),
        interrupts_sent: tot.irq_sent,
        interrupts_coalesced: tot.irq_coalesced + tot.irq_delayed,
        completions_per_interrupt: ratio(tot.requests as f64, tot.irq_sent),
        polls: tot.polls,
        empty_polls: tot.empty_polls,
        routing_changes: tot.route_changes + gen.map(|g| g.route_changes).unwrap_or(0),
        guest_errors,
        irqgen,
        tsc_hz: tsc_hz(),
        kick_to_backend: LatencySamples::default(),
    }
}

/// summary.json's text: keys sorted, as the simulator's summary reaches its users.
pub fn to_json(s: &TestbedSummary) -> String {
    let v = serde_json::to_value(s).expect("summary serializes");
    serde_json::to_string_pretty(&v).expect("json")
}

/// Builds summary.json; `series` and `counters.kick_to_backend` are the caller's to fill.
pub fn build(s: &Scenario, w: &Window, wall: f64, gen: Option<&IrqGenResult>) -> TestbedSummary {
    let (a, b) = (w.a, w.b);
    let backends: Vec<(String, CounterValues, f64)> = a
        .backends
        .iter()
        .zip(&b.backends)
        .map(|(x, y)| (x.0.clone(), y.1.since(&x.1), (y.2.saturating_sub(x.2)) as f64 / 1e9))
        .collect();
    let pcpu_util_pct = a
        .cpu_times
        .iter()
        .zip(&b.cpu_times)
        .map(|(x, y)| {
            let (busy, tot) = (y.0.saturating_sub(x.0), y.1.saturating_sub(x.1));
            if tot == 0 { 0.0 } else { busy as f64 * 100.0 / tot as f64 }
        })
        .collect();
    let mut io_threads: Vec<IoThreadSummary> = backends
        .iter()
        .map(|(name, c, cpu)| IoThreadSummary {
            name: name.clone(),
            util_pct: Some(cpu / w.secs * 100.0),
            empty_poll_pct: ratio(c.empty_polls as f64 * 100.0, c.polls),
            // The testbed's host is this machine's: its memory placement is not measured.
            remote_items_pct: None,
            remote_busy_pct: None,
        })
        .collect();
    if gen.is_some() {
        io_threads.push(IoThreadSummary { name: "irqgen".into(), util_pct: None, empty_poll_pct: None, remote_items_pct: None, remote_busy_pct: None });
    }
    let thread_migrations = super::migrations::rates(&a.migrations, &b.migrations, w.secs);
    let kvm_stats = s
        .vm
        .iter()
        .enumerate()
        .map(|(v, cfg)| {
            let vcpus = (0..cfg.vcpus as usize).map(|i| stats_delta(&a.kvm_vcpu[v][i], &b.kvm_vcpu[v][i])).collect();
            KvmStats { vm: cfg.name.clone(), vm_stats: stats_delta(&a.kvm_vm[v], &b.kvm_vm[v]), vcpus }
        })
        .collect();
    TestbedSummary {
        scenario: s.name.clone(),
        seed: None,
        profile: None,
        sim_seconds: w.secs,
        wall_seconds: wall,
        events: None,
        vms: (0..s.vm.len()).map(|v| vm_summary(s, v, w, gen)).collect(),
        host: HostSummary {
            pcpu_util_pct,
            pcpu_softirq_pct: Measured::not_measured(),
            io_threads,
            threads: Measured::not_measured(),
            context_switches_per_s: None,
            migrations_per_s: super::migrations::total(&thread_migrations),
            migrations_by_cause_per_s: Measured::not_measured(),
            wake_affine_per_s: None,
            idle_wakeups_by_cstate_per_s: Measured::not_measured(),
        },
        stalled_flows: Measured::not_measured(),
        extra: TestbedKeys {
            kvm_stats,
            counters: counters(&backends, gen),
            series: vec![],
            thread_migrations: thread_migrations.into_iter().map(|(name, migrations_per_s)| ThreadMigrations { name, migrations_per_s }).collect(),
        },
    }
}

fn stats_delta(a: &BTreeMap<String, u64>, b: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    crate::vmm::stats::delta(a, b)
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
