//! The testbed's summary has the simulator's keys (null where it cannot measure) plus its own,
//! with the documented types — built from snapshots, no KVM needed.
use super::*;
use crate::vmm::layout::HIST_BUCKETS;
use serde_json::Value;

const SCENARIO: &str = "name = \"t\"\n[[vm]]\nname = \"vm0\"\nvcpus = 2\n[[vm.load]]\npattern = \"stream\"\n";

/// Snapshot of one VM with two vCPUs whose counters all read `k`, latencies `k` × 100 ticks.
fn snapshot(k: u64) -> Snapshot {
    let stats: BTreeMap<String, u64> = ["exits", "io_exits", "halt_exits"].iter().map(|s| (s.to_string(), 10 * k)).collect();
    let mut lat = GuestLatencies { counts: vec![0; HIST_BUCKETS as usize], sum: 100 * k, max: 100 };
    lat.counts[82] = k; // the guest bucket of 100: 64 + ((100 >> 1) & 31)
    let backend = CounterValues { polls: 4 * k, empty_polls: k, requests: 3 * k, irq_sent: k, ..Default::default() };
    Snapshot {
        t_tsc: 0,
        cpu_times: vec![(k, 2 * k); 2],
        vcpu_ctl: vec![vec![vec![k; 44]; 2]],
        hists: vec![vec![lat; 2]],
        irq_counts: vec![vec![k; 2]],
        kvm_vcpu: vec![vec![stats.clone(); 2]],
        kvm_vm: vec![stats],
        vcpu_cpu_ns: vec![vec![k * 1_000_000; 2]],
        backends: vec![("io0".into(), backend, k * 1_000_000)],
        migrations: vec![("vcpu:vm0/0".into(), Some(k)), ("vcpu:vm0/1".into(), Some(2 * k)), ("io0".into(), Some(0))],
    }
}

fn testbed_summary() -> Value {
    let s = Scenario::parse(SCENARIO).unwrap();
    let (a, b) = (snapshot(1), snapshot(1001));
    let out = build(&s, &Window { a: &a, b: &b, secs: 0.5 }, 0.7, None);
    serde_json::from_str(&to_json(&out)).unwrap()
}

fn simulator_summary() -> Value {
    let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/udp-send.toml");
    let opts = eventpath_sim::run::RunOptions { duration_s: Some(0.01), ..Default::default() };
    let out = eventpath_sim::run::run_scenario(example.to_str().unwrap(), &opts).unwrap();
    serde_json::to_value(out.summary).unwrap()
}

/// Every key path of `sim` exists in `bed` with the same JSON type, or `bed` is null there.
fn check_paths(sim: &Value, bed: &Value, path: &str, nulls: &mut Vec<String>) {
    match (sim, bed) {
        (_, Value::Null) => nulls.push(path.to_string()),
        (Value::Null, _) => {} // not applicable in this simulator run: any type
        (Value::Object(s), Value::Object(b)) => {
            for (k, v) in s {
                let x = b.get(k).unwrap_or_else(|| panic!("testbed summary lacks {path}.{k}"));
                check_paths(v, x, &format!("{path}.{k}"), nulls);
            }
        }
        (Value::Array(s), Value::Array(b)) => {
            if let (Some(x), Some(y)) = (s.first(), b.first()) {
                check_paths(x, y, &format!("{path}[]"), nulls);
            }
        }
        (Value::Number(_), Value::Number(_)) | (Value::String(_), Value::String(_)) | (Value::Bool(_), Value::Bool(_)) => {}
        _ => panic!("{path}: simulator {sim}, testbed {bed}"),
    }
}

#[test]
fn testbed_summary_has_every_simulator_key_null_where_it_cannot_measure() {
    let mut nulls = Vec::new();
    check_paths(&simulator_summary(), &testbed_summary(), "", &mut nulls);
    let want = [
        ".events", ".host.context_switches_per_s", ".host.idle_wakeups_by_cstate_per_s", ".host.io_threads[].remote_busy_pct",
        ".host.io_threads[].remote_items_pct", ".host.migrations_by_cause_per_s",
        ".host.pcpu_softirq_pct", ".host.threads", ".host.wake_affine_per_s", ".profile", ".seed", ".stalled_flows",
        ".vms[].coscheduled_if_independent_pct", ".vms[].coscheduled_pct", ".vms[].default_target_away_by_run_state_per_s", ".vms[].device_interrupts_by_run_state_per_s", ".vms[].device_interrupts_by_target_state_per_s", ".vms[].eht_pct", ".vms[].exits_per_s.interrupt_delivery",
        ".vms[].exits_per_s.ipi", ".vms[].exits_per_s.timer", ".vms[].guest_burn_pct", ".vms[].guest_halt_poll_pct",
        ".vms[].halt_poll_pct", ".vms[].interrupt_delivery", ".vms[].interrupt_routing",
        ".vms[].interrupts_by_source_per_s", ".vms[].ipis_by_kind_per_s", ".vms[].latency_by_target_state_us", ".vms[].running_target_found_pct", ".vms[].tig_pct",
    ];
    assert_eq!(nulls, want);
}

#[test]
fn testbed_keys_have_the_documented_types() {
    let d = testbed_summary();
    let v = &d["vms"][0];
    assert_eq!(v["exits_per_s"]["io_instruction"], 40_000.0); // io_exits: 10 000 per vCPU in 0.5 s
    assert_eq!(v["exits_per_s"]["eoi"], 4000.0);
    assert!(v["exits_per_s"].as_object().unwrap().len() == 10);
    assert_eq!(v["throughput"]["ops_per_s"], 4000.0);
    assert_eq!(v["latency_us"]["max"], d["vms"][0]["latency_us"]["p999"]);
    let g = &v["guest"];
    for k in ["requests_submitted", "requests_completed", "kicks", "interrupts_handled", "halts"] {
        assert_eq!(g[k].as_u64(), Some(2000), "guest.{k}");
    }
    assert_eq!(g["garbage_requests_sent"].as_u64(), Some(6 * 2000));
    assert_eq!(g["latency_samples"].as_u64(), Some(2000));
    assert_eq!(g["kicks_per_request"], 1.0);
    let c = &d["counters"];
    assert_eq!((c["polls"].as_u64(), c["interrupts_sent"].as_u64()), (Some(4000), Some(1000)));
    assert_eq!(c["completions_per_interrupt"], 3.0);
    assert!(c["irqgen"].is_null() && c["tsc_hz"].as_u64().is_some());
    assert_eq!(c["kick_to_backend"]["samples"].as_u64(), Some(0));
    assert_eq!(c["guest_errors"].as_object().unwrap().len(), 8);
    assert_eq!(c["per_thread"][0]["name"], "io0");
    assert_eq!(d["kvm_stats"][0]["vcpus"][1]["exits"].as_u64(), Some(10_000));
    assert_eq!(d["host"]["io_threads"][0]["empty_poll_pct"], 25.0);
    assert!(d["series"].as_array().unwrap().is_empty());
    // Migrations: vCPU 0 moved 1000 times, vCPU 1 2000 in 0.5 s, the backend thread never.
    let m = &d["thread_migrations"];
    assert_eq!((m[0]["name"].as_str(), m[0]["migrations_per_s"].as_f64()), (Some("vcpu:vm0/0"), Some(2000.0)));
    assert_eq!((m[2]["name"].as_str(), m[2]["migrations_per_s"].as_f64()), (Some("io0"), Some(0.0)));
    assert_eq!(d["host"]["migrations_per_s"], 6000.0);
}

/// Issue 26: a VM with a request load that got no service in the window reports 0 requests/s
/// (a number), its latency percentiles null (no samples); a VM without a request load has no
/// throughput at all (null), as in the simulator.
#[test]
fn a_starved_vm_reports_zero_throughput_not_null() {
    let summary = |text: &str| -> Value {
        let s = Scenario::parse(text).unwrap();
        let a = snapshot(1);
        serde_json::from_str(&to_json(&build(&s, &Window { a: &a, b: &a, secs: 0.5 }, 0.7, None))).unwrap()
    };
    for pattern in ["stream", "closed", "burst"] {
        let d = summary(&SCENARIO.replace("\"stream\"", &format!("{pattern:?}")));
        let v = &d["vms"][0];
        for k in ["gbps", "pps", "ops_per_s"] {
            assert_eq!(v["throughput"][k], 0.0, "{pattern}: throughput.{k}");
        }
        assert_eq!(v["guest"]["requests_completed"].as_u64(), Some(0));
        assert!(v["latency_us"]["p50"].is_null() && v["guest"]["exits_per_request"].is_null(), "{pattern}");
        assert_eq!(v["kicks_per_s"], 0.0);
    }
    let d = summary(&SCENARIO.replace("\"stream\"", "\"spin\""));
    assert!(d["vms"][0]["throughput"]["ops_per_s"].is_null());
}
