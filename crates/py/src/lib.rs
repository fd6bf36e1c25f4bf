//! The private `eventpath._eventpath` module: the Rust core behind the Python API.
//!
//! One error mapping: every input problem (scenario, profile, CLI argument, testbed set-up)
//! becomes `eventpath._eventpath.InputError`, which the CLI turns into one line on stderr and
//! exit code 2.
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

mod kvm;
mod pyrouter;
mod sim;

// Named by its full import path, so that pickle finds the class when an error crosses a
// process pool (`sweep`, `calibrate`, `reproduce --workers`).
create_exception!(eventpath._eventpath, InputError, PyValueError, "Bad input: the message says what to fix.");

/// Build an `InputError` from any displayable error.
pub(crate) fn input_error(e: impl std::fmt::Display) -> PyErr {
    InputError::new_err(e.to_string())
}

#[pymodule]
fn _eventpath(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("InputError", m.py().get_type::<InputError>())?;
    sim::register(m)?;
    pyrouter::register(m)?;
    kvm::register(m)?;
    Ok(())
}
