//! Bindings of the simulator (`crates/sim`). Results cross the boundary as JSON text: one
//! stable contract (summary.json) for the CLI, the Python API and the tests.

use crate::input_error;
use eventpath_sim::run::{run_parsed, simulate_traced, RunOptions, RunOutput, TraceOptions};
use eventpath_sim::scenario::Scenario;
use pyo3::prelude::*;

fn output_json(out: &RunOutput) -> String {
    let cdf: Vec<_> = out
        .latency_cdf
        .iter()
        .map(|(vm, us, f)| serde_json::json!({"vm": vm, "latency_us": us, "cdf": f}))
        .collect();
    serde_json::json!({"summary": out.summary, "latency_cdf": cdf}).to_string()
}

/// Run the scenario file at `path`; returns `{"summary": ..., "latency_cdf": [...]}` as JSON.
#[pyfunction]
#[pyo3(signature = (path, seed=None, duration=None))]
fn run_file(py: Python<'_>, path: &str, seed: Option<u64>, duration: Option<f64>) -> PyResult<String> {
    let opts = RunOptions { seed, duration_s: duration };
    let sc = Scenario::from_file(path).map_err(input_error)?;
    let out = py.detach(|| run_parsed(sc, path, &opts)).map_err(input_error)?;
    Ok(output_json(&out))
}

/// Run a scenario given as JSON text (a Python dict serialized); `origin` names it in errors.
#[pyfunction]
#[pyo3(signature = (text, origin="<dict>", seed=None, duration=None))]
fn run_json(py: Python<'_>, text: &str, origin: &str, seed: Option<u64>, duration: Option<f64>) -> PyResult<String> {
    let opts = RunOptions { seed, duration_s: duration };
    let mut de = serde_json::Deserializer::from_str(text);
    let sc: Scenario = serde_path_to_error::deserialize(&mut de)
        .map_err(|e| input_error(format!("scenario {origin}: key `{}`: {}", e.path(), e.inner())))?;
    let out = py.detach(|| run_parsed(sc, origin, &opts)).map_err(input_error)?;
    Ok(output_json(&out))
}

/// Run the scenario file at `path` while recording a timeline of simulated seconds
/// [from_s, to_s] (at most `limit` events); returns (run JSON as `run_file`, trace JSON in the
/// Chrome trace-event format).
#[pyfunction]
#[pyo3(signature = (path, from_s, to_s, limit=1_000_000, seed=None, duration=None))]
fn trace_file(
    py: Python<'_>,
    path: &str,
    from_s: f64,
    to_s: f64,
    limit: usize,
    seed: Option<u64>,
    duration: Option<f64>,
) -> PyResult<(String, String)> {
    let mut sc = Scenario::from_file(path).map_err(input_error)?;
    if let Some(s) = seed {
        sc.seed = s;
    }
    if let Some(d) = duration {
        if !(d.is_finite() && d > 0.0) {
            return Err(input_error(format!("--duration: {d} is not allowed; expected seconds > 0")));
        }
        sc.duration_s = d;
    }
    let c = sc.check(path).map_err(input_error)?;
    let t = TraceOptions { from_s, to_s, limit };
    let (out, trace) = py.detach(|| simulate_traced(&c, t)).map_err(input_error)?;
    Ok((output_json(&out), trace))
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

/// Run the engine benchmark model for `sim_seconds`; returns (events, wall seconds).
#[pyfunction]
#[pyo3(signature = (sim_seconds, vms=64, seed=1))]
fn bench_engine(py: Python<'_>, sim_seconds: f64, vms: u32, seed: u64) -> (u64, f64) {
    let p = eventpath_sim::bench::BenchParams { vms, ..Default::default() };
    py.detach(|| eventpath_sim::bench::run(p, eventpath_sim::engine::secs_to_ns(sim_seconds), seed))
}

/// The benchmark model's parameters (so the SimPy twin uses the same ones).
#[pyfunction]
fn bench_params() -> (f64, f64, f64, f64) {
    let p = eventpath_sim::bench::BenchParams::default();
    (p.guest_ns, p.kick_ns, p.vhost_ns, p.irq_ns)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_file, m)?)?;
    m.add_function(wrap_pyfunction!(run_json, m)?)?;
    m.add_function(wrap_pyfunction!(check_file, m)?)?;
    m.add_function(wrap_pyfunction!(trace_file, m)?)?;
    m.add_function(wrap_pyfunction!(profiles, m)?)?;
    m.add_function(wrap_pyfunction!(profile_json, m)?)?;
    m.add_function(wrap_pyfunction!(bench_engine, m)?)?;
    m.add_function(wrap_pyfunction!(bench_params, m)?)?;
    Ok(())
}
