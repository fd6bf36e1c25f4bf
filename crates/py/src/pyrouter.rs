//! Interrupt routers written in Python (docs/python-policy.md): a Python object with the Rust
//! trait's methods (`eventpath_policy::routing::InterruptRouter`) behind that trait, given to a
//! run as an external policy (`eventpath_sim::run::External`).
//!
//! The object is made for each run by the factory the caller gives (a class, called with the
//! VM's vCPU count, as `RouterConfig::build` is), so a run never inherits another's router
//! state: same scenario, seed and router class, same summary.
//!
//! The trait cannot fail, so a router that raises, or answers anything but a vCPU index of its
//! VM, is recorded in the run's [`Failure`]; from then on it answers the programmed vCPU without
//! calling Python, and the run stops at its next chunk (`sim.rs`) with the failure as a one-line
//! `InputError` (the Python exception as its `__cause__`). Nothing of the run is returned.

use crate::InputError;
use eventpath_policy::routing::{CreditPriority, InterruptClass, InterruptRouter, RouteDecision, RouteRequest, RunState, VcpuId};
use eventpath_sim::run::External;
use eventpath_sim::scenario::Checked;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyBool;
use std::sync::{Arc, Mutex};

/// The first failure of any Python policy of one run.
#[derive(Clone, Default)]
pub(crate) struct Failure(Arc<Mutex<Option<PyErr>>>);

impl Failure {
    fn set(&self, e: PyErr) {
        let mut slot = self.0.lock().expect("no panic holds the lock");
        if slot.is_none() {
            *slot = Some(e);
        }
    }
    /// True once a policy has failed: the run must stop.
    pub fn is_set(&self) -> bool {
        self.0.lock().expect("no panic holds the lock").is_some()
    }
    /// The failure, taken out.
    pub fn take(&self) -> Option<PyErr> {
        self.0.lock().expect("no panic holds the lock").take()
    }
}

/// What a Python router's `route(req)` is given: the trait's `RouteRequest`, whose `class` is
/// `kind` here (`class` is a Python keyword).
#[pyclass(frozen, module = "eventpath._eventpath", name = "RouteRequest")]
pub(crate) struct PyRouteRequest(RouteRequest);

fn class_name(c: InterruptClass) -> &'static str {
    match c {
        InterruptClass::Device => "device",
        InterruptClass::Timer => "timer",
        InterruptClass::Ipi => "ipi",
    }
}

#[pymethods]
impl PyRouteRequest {
    /// A request, to try a router by hand: `RouteRequest(irq=0, dest=0)`. The arguments are
    /// taken as any object and checked here, so that a wrong one is an `InputError` naming it
    /// (pyo3's own conversion raises `TypeError` or `OverflowError`).
    #[new]
    #[pyo3(signature = (irq, dest, kind=None))]
    fn new(irq: &Bound<'_, PyAny>, dest: &Bound<'_, PyAny>, kind: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let irq: u32 = int_arg(irq, "irq", &format!("an interrupt source, an integer in 0..={}", u32::MAX))?;
        let dest: usize = int_arg(dest, "dest", "a vCPU index, an integer >= 0")?;
        let kinds = "\"device\" (the default), \"timer\" or \"ipi\"";
        let class = match kind.map(|k| k.extract::<String>()) {
            None => InterruptClass::Device,
            Some(Ok(k)) if k == "device" => InterruptClass::Device,
            Some(Ok(k)) if k == "timer" => InterruptClass::Timer,
            Some(Ok(k)) if k == "ipi" => InterruptClass::Ipi,
            Some(_) => return Err(bad_arg("kind", kind.expect("given"), kinds)),
        };
        Ok(Self(RouteRequest { irq, class, dest }))
    }
    /// The interrupt source (each device queue is its own: TX `2·dev`, RX `2·dev + 1`).
    #[getter]
    fn irq(&self) -> u32 {
        self.0.irq
    }
    /// The vCPU the guest programmed (VM-local).
    #[getter]
    fn dest(&self) -> usize {
        self.0.dest
    }
    /// `"device"`, `"timer"` or `"ipi"` (the simulator routes device interrupts only).
    #[getter]
    fn kind(&self) -> &'static str {
        class_name(self.0.class)
    }
    fn __repr__(&self) -> String {
        format!("RouteRequest(irq={}, dest={}, kind={:?})", self.0.irq, self.0.dest, self.kind())
    }
}

/// `v` as an integer of type `T`; a bool, a non-integer or one out of `T`'s range is an
/// `InputError` naming `name` and what is allowed.
fn int_arg<'py, T: for<'a> FromPyObject<'a, 'py>>(v: &Bound<'py, PyAny>, name: &str, allowed: &str) -> PyResult<T> {
    match v.extract::<T>() {
        Ok(x) if !v.is_instance_of::<PyBool>() => Ok(x),
        _ => Err(bad_arg(name, v, allowed)),
    }
}

/// `RouteRequest: NAME VALUE is not allowed; expected ALLOWED` (the value's repr, at most 40
/// characters, as the Python API shows values).
fn bad_arg(name: &str, v: &Bound<'_, PyAny>, allowed: &str) -> PyErr {
    let r = v.repr().map(|r| r.to_string()).unwrap_or_else(|_| "?".into());
    let r = if r.chars().count() <= 40 { r } else { format!("{}...", r.chars().take(37).collect::<String>()) };
    crate::input_error(format!("RouteRequest: {name} {r} is not allowed; expected {allowed}"))
}

/// A Python object as an [`InterruptRouter`] of one VM.
pub(crate) struct PyRouter {
    /// The object's bound `route`, `on_run_state` (None when it has none) and `on_priority`.
    route: Py<PyAny>,
    on_run_state: Option<Py<PyAny>>,
    on_priority: Option<Py<PyAny>>,
    /// What its `n_vcpus()` said (the VM's count when it has none).
    n_said: usize,
    /// The VM's vCPU count.
    n: usize,
    /// `routing: VM `vm0`: MyRouter`, the start of every message.
    who: String,
    failed: bool,
    failure: Failure,
}

/// A one-line, at most 60-character `repr` of `v`.
fn short(v: &Bound<'_, PyAny>) -> String {
    let r = v.repr().map(|s| s.to_string()).unwrap_or_else(|_| "<unprintable>".into());
    let r = r.split_whitespace().collect::<Vec<_>>().join(" ");
    if r.chars().count() <= 60 {
        r
    } else {
        format!("{}...", r.chars().take(57).collect::<String>())
    }
}

fn callable_attr(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Option<Py<PyAny>>> {
    match obj.getattr(name) {
        Ok(m) if m.is_callable() => Ok(Some(m.unbind())),
        Ok(_) => Ok(None),
        Err(e) if e.is_instance_of::<pyo3::exceptions::PyAttributeError>(obj.py()) => Ok(None),
        Err(e) => Err(e),
    }
}

impl PyRouter {
    /// `factory(n)` for VM `vm` of `n` vCPUs, its methods looked up once.
    fn make(py: Python<'_>, factory: &Bound<'_, PyAny>, vm: &str, n: usize, failure: Failure) -> PyResult<Self> {
        let fname = factory.getattr(intern!(py, "__qualname__")).map(|s| s.to_string()).unwrap_or_else(|_| short(factory));
        let made = format!("routing: VM `{vm}`: {fname}({n})");
        let obj = factory.call1((n,)).map_err(|e| raised(py, &made, e))?;
        let who = format!("routing: VM `{vm}`: {}", obj.get_type().qualname().map(|s| s.to_string()).unwrap_or(fname));
        let route = callable_attr(&obj, "route").map_err(|e| raised(py, &who, e))?.ok_or_else(|| {
            crate::input_error(format!(
                "{who} has no method route(req); a router answers route(req) with a vCPU index and may have on_run_state(vcpu, state)"
            ))
        })?;
        let n_said = match callable_attr(&obj, "n_vcpus").map_err(|e| raised(py, &who, e))? {
            None => n,
            Some(f) => {
                let v = f.bind(py).call0().map_err(|e| raised(py, &format!("{who}.n_vcpus()"), e))?;
                match v.extract::<usize>() {
                    Ok(k) if !v.is_instance_of::<PyBool>() => k,
                    _ => return Err(crate::input_error(format!("{who}.n_vcpus() returned {}; expected {n}", short(&v)))),
                }
            }
        };
        Ok(PyRouter {
            route,
            on_run_state: callable_attr(&obj, "on_run_state").map_err(|e| raised(py, &who, e))?,
            on_priority: callable_attr(&obj, "on_priority").map_err(|e| raised(py, &who, e))?,
            n_said,
            n,
            who,
            failed: false,
            failure,
        })
    }

    /// Record a failure: this router stops calling Python, the run stops at its next chunk.
    fn fail(&mut self, e: PyErr) {
        self.failed = true;
        self.failure.set(e);
    }

    /// Call `f(args)`; a raise is recorded as `{who}.{what} raised ...`.
    fn call<'py, A: pyo3::call::PyCallArgs<'py>>(&mut self, py: Python<'py>, f: &Py<PyAny>, what: &str, args: A) -> Option<Bound<'py, PyAny>> {
        match f.bind(py).call1(args) {
            Ok(v) => Some(v),
            Err(e) => {
                let e = raised(py, &format!("{}.{what}", self.who), e);
                self.fail(e);
                None
            }
        }
    }
}

/// `e`, raised by `who`, as a one-line `InputError` whose `__cause__` is `e`. A Ctrl-C stays
/// what it is: the run stops as an interrupted run does.
fn raised(py: Python<'_>, who: &str, e: PyErr) -> PyErr {
    if e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) {
        return e;
    }
    let kind = e.get_type(py).qualname().map(|s| s.to_string()).unwrap_or_else(|_| "exception".into());
    let text = e.value(py).str().map(|s| s.to_string()).unwrap_or_default();
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let msg = if text.is_empty() { format!("{who} raised {kind}") } else { format!("{who} raised {kind}: {text}") };
    let err = InputError::new_err(msg);
    err.set_cause(py, Some(e));
    err
}

impl InterruptRouter for PyRouter {
    fn n_vcpus(&self) -> usize {
        self.n_said
    }

    fn on_run_state(&mut self, vcpu: VcpuId, state: RunState) {
        if self.failed || self.on_run_state.is_none() {
            return;
        }
        Python::attach(|py| {
            let f = self.on_run_state.as_ref().expect("checked above").clone_ref(py);
            let state = match state {
                RunState::Running => intern!(py, "running"),
                RunState::Runnable => intern!(py, "runnable"),
                RunState::Blocked => intern!(py, "blocked"),
            };
            self.call(py, &f, "on_run_state(vcpu, state)", (vcpu, state));
        })
    }

    fn on_priority(&mut self, vcpu: VcpuId, prio: CreditPriority) {
        if self.failed || self.on_priority.is_none() {
            return;
        }
        let prio = match prio {
            CreditPriority::Over => "over",
            CreditPriority::Under => "under",
            CreditPriority::Boost => "boost",
        };
        Python::attach(|py| {
            let f = self.on_priority.as_ref().expect("checked above").clone_ref(py);
            self.call(py, &f, "on_priority(vcpu, prio)", (vcpu, prio));
        })
    }

    fn route(&mut self, req: RouteRequest) -> RouteDecision {
        let fallback = RouteDecision::to(req.dest % self.n);
        if self.failed {
            return fallback;
        }
        Python::attach(|py| {
            let f = self.route.clone_ref(py);
            let arg = match Bound::new(py, PyRouteRequest(req)) {
                Ok(a) => a,
                Err(e) => {
                    self.fail(e);
                    return fallback;
                }
            };
            let Some(v) = self.call(py, &f, "route(req)", (arg,)) else { return fallback };
            match v.extract::<usize>() {
                Ok(t) if t < self.n && !v.is_instance_of::<PyBool>() => RouteDecision::to(t),
                _ => {
                    let e = crate::input_error(format!(
                        "{}.route(req) returned {} for {}; expected a vCPU index of the VM, an int in 0..={}",
                        self.who,
                        short(&v),
                        PyRouteRequest(req).__repr__(),
                        self.n - 1
                    ));
                    self.fail(e);
                    fallback
                }
            }
        })
    }
}

/// The external policies of a run: for each (VM name, factory), `factory(n_vcpus)` as that
/// VM's router; every failure of theirs goes to `failure`.
pub(crate) fn external(py: Python<'_>, c: &Checked, routing: Vec<(String, Py<PyAny>)>, failure: &Failure) -> PyResult<External> {
    let mut ext = External::none();
    for (vm, factory) in routing {
        let n = ext.router_slot(c, &vm).map_err(crate::input_error)?;
        let r = PyRouter::make(py, factory.bind(py), &vm, n, failure.clone())?;
        ext.add_router(c, &vm, Box::new(r)).map_err(crate::input_error)?;
    }
    Ok(ext)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyRouteRequest>()
}
