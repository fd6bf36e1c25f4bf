//! Bindings of the simulator (`crates/sim`). Results cross the boundary as JSON text: one
//! stable contract (summary.json) for the CLI, the Python API and the tests.

use crate::input_error;
use eventpath_sim::engine::{Time, NS_PER_S};
use crate::pyrouter;
use eventpath_sim::run::{simulate_observed_with, simulate_traced_to_file, RunOptions, RunOutput, TraceOptions};
use eventpath_sim::scenario::Scenario;
use pyo3::prelude::*;
use std::time::{Duration, Instant};

/// `interrupted`: None for a run that completed, else the simulated seconds (warm-up included)
/// at which Ctrl-C stopped it.
fn output_json(out: &RunOutput, interrupted: Option<f64>) -> String {
    let cdf: Vec<_> = out
        .latency_cdf
        .iter()
        .map(|(vm, us, f)| serde_json::json!({"vm": vm, "latency_us": us, "cdf": f}))
        .collect();
    let mut summary = serde_json::to_value(&out.summary).expect("summary serializes");
    if let Some(at) = interrupted {
        // docs/summary.md: present only in the summary of a run stopped early (Ctrl-C).
        summary["interrupted"] = serde_json::Value::Bool(true);
        summary["interrupted_at_s"] = serde_json::json!(at);
    }
    serde_json::json!({"summary": summary, "latency_cdf": cdf, "exit_stats": out.exit_stats, "interrupted": interrupted.is_some()}).to_string()
}

/// Simulated time per chunk of a run: Python is visited between chunks.
const CHUNK_NS: Time = 1_000_000;
/// Wall time between two visits (Ctrl-C via `check_signals`, the progress callback).
const VISIT_EVERY: Duration = Duration::from_millis(25);

/// Parse-free part of every run: apply the options, check, simulate with the GIL released,
/// visiting Python every ~25 ms of wall time to honour Ctrl-C (stop, keep what was simulated:
/// `"interrupted": true`) and to call `progress(simulated_s, end_s)`.
///
/// `routing`: (VM name, factory) pairs, each VM's router written in Python (`pyrouter.rs`).
/// With any, the run keeps the GIL (each router call would take it otherwise) and stops at the
/// first chunk after a router fails, raising its `InputError` and returning nothing.
fn run_scenario(
    py: Python<'_>,
    mut sc: Scenario,
    origin: &str,
    opts: &RunOptions,
    progress: Option<Py<PyAny>>,
    routing: Vec<(String, Py<PyAny>)>,
) -> PyResult<String> {
    opts.apply(&mut sc).map_err(input_error)?;
    let c = sc.check(origin).map_err(input_error)?;
    let policy_failure = pyrouter::Failure::default();
    let ext = pyrouter::external(py, &c, routing, &policy_failure)?;
    let python_policies = !ext.is_empty();
    let mut failure: Option<PyErr> = None;
    let mut last = Instant::now();
    let mut reached: Time = 0;
    let mut observe = |now: Time, end: Time| {
        reached = now;
        if policy_failure.is_set() {
            return false;
        }
        if now < end && last.elapsed() < VISIT_EVERY {
            return true;
        }
        last = Instant::now();
        Python::attach(|py| {
            let s = |ns: Time| ns as f64 / NS_PER_S as f64;
            let visit = py.check_signals().and_then(|()| match &progress {
                Some(f) => f.call1(py, (s(now), s(end))).map(drop),
                None => Ok(()),
            });
            visit.map_err(|e| failure = Some(e)).is_ok()
        })
    };
    let (out, completed) = if python_policies {
        simulate_observed_with(&c, ext, CHUNK_NS, &mut observe)
    } else {
        py.detach(|| simulate_observed_with(&c, ext, CHUNK_NS, &mut observe))
    };
    // A policy's failure (its Ctrl-C included) comes first: the run went on after it.
    if let Some(e) = policy_failure.take() {
        failure = Some(e);
    }
    match failure {
        Some(e) if !e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) => Err(e),
        // Stopped in the warm-up: nothing was measured, there is nothing to keep.
        Some(e) if !completed && reached <= eventpath_sim::engine::secs_to_ns(c.scenario.warmup_s) => Err(e),
        _ => Ok(output_json(&out, (!completed).then(|| reached as f64 / NS_PER_S as f64))),
    }
}

/// Run the scenario file at `path`; returns `{"summary": ..., "latency_cdf": [...],
/// "interrupted": bool}` as JSON. `progress(simulated_s, end_s)`, if given, is called every
/// ~25 ms of wall time (warm-up included in both). Ctrl-C stops the run and returns what was
/// simulated with `"interrupted": true`. `routing`: (VM name, router class) pairs, routers
/// written in Python (docs/python-policy.md).
#[pyfunction]
#[pyo3(signature = (path, seed=None, duration=None, progress=None, routing=Vec::new()))]
fn run_file(
    py: Python<'_>,
    path: &str,
    seed: Option<u64>,
    duration: Option<f64>,
    progress: Option<Py<PyAny>>,
    routing: Vec<(String, Py<PyAny>)>,
) -> PyResult<String> {
    let sc = Scenario::from_file(path).map_err(input_error)?;
    run_scenario(py, sc, path, &RunOptions { seed, duration_s: duration }, progress, routing)
}

/// Run a scenario given as JSON text (a Python dict serialized); `origin` names it in errors.
/// Returns what [`run_file`] returns.
#[pyfunction]
#[pyo3(signature = (text, origin="<dict>", seed=None, duration=None, progress=None, routing=Vec::new()))]
fn run_json(
    py: Python<'_>,
    text: &str,
    origin: &str,
    seed: Option<u64>,
    duration: Option<f64>,
    progress: Option<Py<PyAny>>,
    routing: Vec<(String, Py<PyAny>)>,
) -> PyResult<String> {
    let sc = Scenario::from_json(origin, text).map_err(input_error)?;
    run_scenario(py, sc, origin, &RunOptions { seed, duration_s: duration }, progress, routing)
}

/// Run the scenario file at `path` while writing a timeline of simulated seconds
/// [from_s, to_s] (at most `limit` events, Chrome trace-event JSON) to the file `out` as it is
/// recorded (constant memory; the file is complete or absent); returns (run JSON as
/// `run_file`, events written, events dropped past the limit).
#[pyfunction]
#[pyo3(signature = (path, out, from_s, to_s, limit=1_000_000, seed=None, duration=None))]
#[allow(clippy::too_many_arguments)]
fn trace_file(
    py: Python<'_>,
    path: &str,
    out: &str,
    from_s: f64,
    to_s: f64,
    limit: usize,
    seed: Option<u64>,
    duration: Option<f64>,
) -> PyResult<(String, u64, u64)> {
    let mut sc = Scenario::from_file(path).map_err(input_error)?;
    RunOptions { seed, duration_s: duration }.apply(&mut sc).map_err(input_error)?;
    let c = sc.check(path).map_err(input_error)?;
    let t = TraceOptions { from_s, to_s, limit };
    let (run, n) = py.detach(|| simulate_traced_to_file(&c, t, std::path::Path::new(out))).map_err(input_error)?;
    Ok((output_json(&run, None), n.written, n.dropped))
}

/// Run a scenario given as JSON text (a Python dict) while writing its timeline to `out`;
/// otherwise as [`trace_file`].
#[pyfunction]
#[pyo3(signature = (text, out, from_s, to_s, limit=1_000_000, seed=None, duration=None, origin="<dict>"))]
#[allow(clippy::too_many_arguments)]
fn trace_json(
    py: Python<'_>,
    text: &str,
    out: &str,
    from_s: f64,
    to_s: f64,
    limit: usize,
    seed: Option<u64>,
    duration: Option<f64>,
    origin: &str,
) -> PyResult<(String, u64, u64)> {
    let mut sc = Scenario::from_json(origin, text).map_err(input_error)?;
    RunOptions { seed, duration_s: duration }.apply(&mut sc).map_err(input_error)?;
    let c = sc.check(origin).map_err(input_error)?;
    let t = TraceOptions { from_s, to_s, limit };
    let (run, n) = py.detach(|| simulate_traced_to_file(&c, t, std::path::Path::new(out))).map_err(input_error)?;
    Ok((output_json(&run, None), n.written, n.dropped))
}

/// What a checked scenario records in an output directory: `{"scenario": the resolved scenario
/// (a dict), "toml": the same as a scenario file, "profile": the profile as run (overrides
/// applied), every value with unit and source}`.
fn resolved_json(c: &eventpath_sim::scenario::Checked) -> String {
    serde_json::json!({"scenario": c.resolved(), "toml": c.resolved_toml(), "profile": c.profile}).to_string()
}

/// The scenario file at `path` with the run options applied, checked and resolved (every
/// default filled in); see [`resolved_json`].
#[pyfunction]
#[pyo3(signature = (path, seed=None, duration=None))]
fn resolve_file(path: &str, seed: Option<u64>, duration: Option<f64>) -> PyResult<String> {
    let mut sc = Scenario::from_file(path).map_err(input_error)?;
    RunOptions { seed, duration_s: duration }.apply(&mut sc).map_err(input_error)?;
    Ok(resolved_json(&sc.check(path).map_err(input_error)?))
}

/// [`resolve_file`] for a scenario given as JSON text.
#[pyfunction]
#[pyo3(signature = (text, origin="<dict>", seed=None, duration=None))]
fn resolve_json(text: &str, origin: &str, seed: Option<u64>, duration: Option<f64>) -> PyResult<String> {
    let mut sc = Scenario::from_json(origin, text).map_err(input_error)?;
    RunOptions { seed, duration_s: duration }.apply(&mut sc).map_err(input_error)?;
    Ok(resolved_json(&sc.check(origin).map_err(input_error)?))
}

/// Every scenario key (`eventpath_sim::scenario::keys::KEYS`) as JSON: a list of
/// `{"key", "kind", "type", "unit", "default", "meaning"}`.
#[pyfunction]
fn scenario_keys() -> String {
    serde_json::to_string(eventpath_sim::scenario::keys::KEYS).expect("keys serialize")
}

/// Parse and check a scenario given as JSON text, with the run options, without running it
/// (a sweep checks every variant before starting any).
#[pyfunction]
#[pyo3(signature = (text, origin="<dict>", seed=None, duration=None))]
fn check_json(text: &str, origin: &str, seed: Option<u64>, duration: Option<f64>) -> PyResult<()> {
    let mut sc = Scenario::from_json(origin, text).map_err(input_error)?;
    RunOptions { seed, duration_s: duration }.apply(&mut sc).map_err(input_error)?;
    sc.check(origin).map_err(input_error)?;
    Ok(())
}

/// Check a measured duration (`key` names it in the error: `--duration`) as every run does,
/// before anything is started or written.
#[pyfunction]
fn check_duration(key: &str, seconds: f64) -> PyResult<()> {
    eventpath_sim::scenario::limits::check_duration(key, seconds).map_err(input_error)?;
    Ok(())
}

/// Parse and check a scenario file without running it.
#[pyfunction]
fn check_file(path: &str) -> PyResult<()> {
    Scenario::from_file(path).and_then(|s| s.check(path)).map_err(input_error)?;
    Ok(())
}

/// The built-in profiles as (name, description) pairs.
#[pyfunction]
fn profiles() -> PyResult<Vec<(String, String)>> {
    eventpath_sim::profile::BUILTIN
        .iter()
        .map(|(n, _)| eventpath_sim::profile::Profile::load(n).map(|p| (p.name, p.description)).map_err(input_error))
        .collect()
}

/// A profile (built-in name or path) as JSON, every parameter with value, unit and source.
#[pyfunction]
fn profile_json(name: &str) -> PyResult<String> {
    let p = eventpath_sim::profile::Profile::load(name).map_err(input_error)?;
    Ok(serde_json::to_string(&p).expect("profile serializes"))
}

/// A built-in profile's TOML text and its calibration targets' TOML text (None where it has
/// none); None for a name that is not built in.
#[pyfunction]
fn builtin_profile_text(name: &str) -> Option<(&'static str, Option<&'static str>)> {
    use eventpath_sim::profile::{BUILTIN, CALIBRATION};
    let text = BUILTIN.iter().find(|(n, _)| *n == name)?.1;
    Some((text, CALIBRATION.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)))
}

/// Run the engine benchmark model for `sim_seconds`; returns (events, wall seconds).
#[pyfunction]
#[pyo3(signature = (sim_seconds, vms=64, seed=1))]
fn bench_engine(py: Python<'_>, sim_seconds: f64, vms: u32, seed: u64) -> PyResult<(u64, f64)> {
    let end = eventpath_sim::scenario::limits::check_duration("--seconds", sim_seconds).map_err(input_error)?;
    if vms == 0 || vms as usize > eventpath_sim::scenario::limits::MAX_VMS {
        return Err(input_error(format!("vms: {vms} is not allowed; expected 1..={}", eventpath_sim::scenario::limits::MAX_VMS)));
    }
    let p = eventpath_sim::bench::BenchParams { vms, ..Default::default() };
    Ok(py.detach(|| eventpath_sim::bench::run(p, end, seed)))
}

/// Run the full-model benchmark (`vms` VMs streaming TCP on elvis) for `sim_seconds`; returns
/// (events, wall seconds).
#[pyfunction]
#[pyo3(signature = (sim_seconds, vms=14))]
fn bench_model(py: Python<'_>, sim_seconds: f64, vms: u32) -> PyResult<(u64, f64)> {
    py.detach(|| eventpath_sim::bench::run_model(vms, sim_seconds)).map_err(crate::input_error)
}

/// The full-model benchmark's events by kind and its delivered packets: ([(kind, events)],
/// packets).
#[pyfunction]
#[pyo3(signature = (sim_seconds, vms=14))]
fn bench_model_census(py: Python<'_>, sim_seconds: f64, vms: u32) -> PyResult<(Vec<(&'static str, u64)>, f64)> {
    py.detach(|| eventpath_sim::bench::model_census(vms, sim_seconds)).map_err(crate::input_error)
}

/// How this extension was built: "profile-guided" where `make install` built it with the
/// checked-in PGO profile (`pgo/pgo.sh`; it sets EVENTPATH_BUILD), else "plain".
#[pyfunction]
fn build_kind() -> &'static str {
    match option_env!("EVENTPATH_BUILD") {
        Some("pgo") => "profile-guided",
        _ => "plain",
    }
}

/// The keys of summary.json's `exits_per_s`, in contract order (`ExitReason::ALL`).
#[pyfunction]
fn exit_reasons() -> Vec<&'static str> {
    eventpath_sim::metrics::ExitReason::ALL.iter().map(|r| r.key()).collect()
}

/// The engine benchmark's parameters, for the SimPy twin.
#[pyfunction]
fn bench_params() -> (f64, f64, f64, f64) {
    let p = eventpath_sim::bench::BenchParams::default();
    (p.guest_ns, p.kick_ns, p.vhost_ns, p.irq_ns)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_file, m)?)?;
    m.add_function(wrap_pyfunction!(bench_model_census, m)?)?;
    m.add_function(wrap_pyfunction!(builtin_profile_text, m)?)?;
    m.add_function(wrap_pyfunction!(run_json, m)?)?;
    m.add_function(wrap_pyfunction!(check_file, m)?)?;
    m.add_function(wrap_pyfunction!(check_json, m)?)?;
    m.add_function(wrap_pyfunction!(check_duration, m)?)?;
    m.add_function(wrap_pyfunction!(trace_file, m)?)?;
    m.add_function(wrap_pyfunction!(trace_json, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_file, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_json, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_keys, m)?)?;
    m.add_function(wrap_pyfunction!(profiles, m)?)?;
    m.add_function(wrap_pyfunction!(profile_json, m)?)?;
    m.add_function(wrap_pyfunction!(bench_engine, m)?)?;
    m.add_function(wrap_pyfunction!(build_kind, m)?)?;
    m.add_function(wrap_pyfunction!(bench_params, m)?)?;
    m.add_function(wrap_pyfunction!(bench_model, m)?)?;
    m.add_function(wrap_pyfunction!(exit_reasons, m)?)?;
    Ok(())
}
