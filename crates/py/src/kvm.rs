//! Bindings of the KVM testbed (`crates/kvm`). The GIL is released while a run or probe runs.
use pyo3::prelude::*;

fn to_py(e: eventpath_kvm::Error) -> PyErr {
    if e.is_input() {
        crate::input_error(e)
    } else {
        pyo3::exceptions::PyRuntimeError::new_err(e.to_string())
    }
}

/// `(usable, reason)`: can the KVM testbed run on this machine?
#[pyfunction]
fn kvm_available(py: Python<'_>) -> (bool, String) {
    py.detach(eventpath_kvm::available)
}

/// Runs a testbed scenario; writes `out_dir/summary.json` and returns its text.
#[pyfunction]
fn kvm_run(py: Python<'_>, scenario_path: String, out_dir: String) -> PyResult<String> {
    py.detach(|| eventpath_kvm::run_scenario(&scenario_path, &out_dir)).map_err(to_py)
}

/// Measures this host's primitive costs; writes `out_dir/probe.json` and `out_dir/profile.toml`
/// and returns probe.json's text.
#[pyfunction]
#[pyo3(signature = (out_dir, quick = false))]
fn kvm_probe(py: Python<'_>, out_dir: String, quick: bool) -> PyResult<String> {
    py.detach(|| eventpath_kvm::probe::probe(&out_dir, quick)).map_err(to_py)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(kvm_available, m)?)?;
    m.add_function(wrap_pyfunction!(kvm_run, m)?)?;
    m.add_function(wrap_pyfunction!(kvm_probe, m)?)?;
    Ok(())
}
