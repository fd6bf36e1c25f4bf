//! `eventpath trace`: the timeline holds the event path (guest work, exits, interrupts, vhost
//! items, which thread ran on each pCPU), stays inside its window, and is deterministic (its
//! layout and flows: `trace_timeline.rs`).

use eventpath_sim::run::{simulate_traced, simulate_traced_to_file, TraceOptions};
use eventpath_sim::scenario::Scenario;

fn traced(from_s: f64, to_s: f64, limit: usize) -> serde_json::Value {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/tcp-send.toml");
    let mut sc = Scenario::from_file(root).unwrap();
    sc.duration_s = 0.01;
    sc.warmup_s = 0.001;
    let c = sc.check("tcp-send").unwrap();
    let (_, json) = simulate_traced(&c, TraceOptions { from_s, to_s, limit }).unwrap();
    serde_json::from_str(&json).unwrap()
}

#[test]
fn timeline_shows_the_event_path_inside_its_window() {
    let j = traced(0.002, 0.003, 1_000_000);
    let ev = j["traceEvents"].as_array().unwrap();
    let track_names: Vec<&str> =
        ev.iter().filter(|e| e["name"] == "thread_name").map(|e| e["args"]["name"].as_str().unwrap()).collect();
    assert!(track_names.iter().any(|n| n.starts_with("vcpu:")), "{track_names:?}");
    assert!(track_names.iter().any(|n| n.starts_with("vhost-")), "{track_names:?}");
    assert!(track_names.iter().any(|n| n.starts_with("pCPU")), "{track_names:?}");
    let spans: Vec<&serde_json::Value> = ev.iter().filter(|e| e["ph"] == "X").collect();
    let named = |s: &str| spans.iter().filter(|e| e["name"].as_str().unwrap().contains(s)).count();
    assert!(named("exit: io_instruction") > 10, "kicks appear as I/O exits");
    assert!(named("exit: eoi") > 0 && named("tcp write") > 0 && named("tx tcp-send") > 0 && named("vcpu:tcp-send/0") > 0);
    assert!(named("net rx irq → vCPU 0") > 0, "interrupts raised appear as marks");
    for e in &spans {
        let (ts, dur) = (e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap());
        assert!(ts >= 2000.0 - 1e-6 && ts + dur <= 3000.0 + 1e-6, "span outside the window: {e}");
    }
    assert_eq!(j["otherData"]["dropped_events"], 0);
}

#[test]
fn limit_bounds_memory_and_runs_are_deterministic() {
    let j = traced(0.0, 0.011, 100);
    let recorded = j["traceEvents"].as_array().unwrap().iter().filter(|e| e["ph"] != "M").count();
    assert_eq!(recorded, 100);
    assert!(j["otherData"]["dropped_events"].as_u64().unwrap() > 0);
    assert_eq!(traced(0.002, 0.0025, 10_000), traced(0.002, 0.0025, 10_000));
}

#[test]
fn bad_windows_are_rejected() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/tcp-send.toml");
    let c = Scenario::from_file(root).unwrap().check("t").unwrap();
    for (f, t, l) in [(0.5, 0.1, 10), (-1.0, 0.1, 10), (0.0, 0.1, 0), (f64::NAN, 0.1, 10)] {
        let e = simulate_traced(&c, TraceOptions { from_s: f, to_s: t, limit: l }).unwrap_err().to_string();
        assert!(e.contains("--from") || e.contains("--limit"), "{e}");
    }
    // A window past the end of the run (or past u64 nanoseconds) is named, not an empty trace.
    let end = c.scenario.warmup_s + c.scenario.duration_s;
    for (f, t) in [(end, end + 1.0), (1e300, 1e301), (2e10, 3e10)] {
        let e = simulate_traced(&c, TraceOptions { from_s: f, to_s: t, limit: 10 }).unwrap_err().to_string();
        assert!(e.contains("--from") && e.contains("the run ends at"), "{e}");
    }
}

/// The file `eventpath trace` writes as it records holds the same bytes as the in-memory trace;
/// a file that cannot be written is one line naming --out, and nothing is left behind.
#[test]
fn the_streamed_file_is_the_trace_and_a_failed_one_is_one_line() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/tcp-send.toml");
    let mut sc = Scenario::from_file(root).unwrap();
    sc.duration_s = 0.01;
    sc.warmup_s = 0.001;
    let c = sc.check("tcp-send").unwrap();
    let t = TraceOptions { from_s: 0.002, to_s: 0.003, limit: 1_000_000 };
    let dir = std::env::temp_dir().join(format!("eventpath-trace-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.json");
    let (_, n) = simulate_traced_to_file(&c, t, &path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text, simulate_traced(&c, t).unwrap().1);
    let j: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(j["traceEvents"].as_array().unwrap().iter().filter(|e| e["ph"] != "M").count() as u64, n.written);
    assert_eq!(n.dropped, 0);
    let e = simulate_traced_to_file(&c, t, &dir.join("missing").join("t.json")).unwrap_err().to_string();
    assert!(e.starts_with("--out ") && e.contains("cannot write the trace") && !e.contains('\n'), "{e}");
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, [std::ffi::OsString::from("t.json")], "no partial file left");
    std::fs::remove_dir_all(&dir).unwrap();
}
