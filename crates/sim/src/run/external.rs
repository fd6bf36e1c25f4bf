//! Policies the embedding program supplies at run time instead of naming them in the scenario:
//! today a VM's interrupt router (`eventpath.run(..., routing={"vm0": MyRouter})`, a router
//! written in Python: `crates/py/src/pyrouter.rs`, docs/python-policy.md).
//!
//! An external router replaces the built-in one the scenario's `interrupt_routing` would pick;
//! it implements the same trait ([`InterruptRouter`]), is told the same run-state changes and
//! is asked the same questions in the same order, so a router that mimics a built-in one gives
//! the identical run. The built-in routers stay statically dispatched (`IrqRouting`); only a VM
//! that has an external router pays for a virtual call.
//!
//! The scenario itself never names an external policy: a file must run from the command line
//! alone, and `eventpath compare` offers exactly the names the scenario accepts.

use crate::error::{InputError, InputResult};
use crate::scenario::Checked;

pub use crate::model::hypervisor::routing::ExternalRouter;

/// The external policies of one run, by VM name.
#[derive(Default)]
pub struct External {
    routers: Vec<(String, ExternalRouter)>,
}

impl External {
    /// No external policy: every VM runs what its scenario names.
    pub fn none() -> Self {
        Self::default()
    }

    /// True when no VM has an external policy.
    pub fn is_empty(&self) -> bool {
        self.routers.is_empty()
    }

    /// The number of vCPUs of VM `vm`, which is to get an external router: the VM must exist,
    /// have more than one vCPU (as the scenario's `interrupt_routing` must), leave its own
    /// `interrupt_routing` at the default (one VM, one router) and not have one already.
    pub fn router_slot(&self, c: &Checked, vm: &str) -> InputResult<usize> {
        let err = |m: String| Err(InputError::Option(format!("routing: {m}")));
        let Some(v) = c.scenario.vm.iter().find(|v| v.name == vm) else {
            let names: Vec<_> = c.scenario.vm.iter().map(|v| format!("`{}`", v.name)).collect();
            return err(format!("no VM named `{vm}`; the scenario's VMs are {}", names.join(", ")));
        };
        if self.routers.iter().any(|(n, _)| n == vm) {
            return err(format!("VM `{vm}` is given two routers; give one"));
        }
        if v.vcpus < 2 {
            return err(format!("VM `{vm}` has one vCPU, no other vCPU to route an interrupt to; give the router to a VM with two or more"));
        }
        if v.interrupt_routing != Default::default() {
            let name = serde_json::to_string(&v.interrupt_routing).expect("a router name serializes");
            return err(format!(
                "VM `{vm}` sets interrupt_routing = {name} and is given a router too; remove the key or the router"
            ));
        }
        Ok(v.vcpus as usize)
    }

    /// Give VM `vm` the router `r`, for `r.n_vcpus()` vCPUs: call [`External::router_slot`]
    /// first, and make `r` for the count it returns.
    pub fn add_router(&mut self, c: &Checked, vm: &str, r: ExternalRouter) -> InputResult<()> {
        let n = self.router_slot(c, vm)?;
        if r.n_vcpus() != n {
            return Err(InputError::Option(format!("routing: VM `{vm}` has {n} vCPUs, its router says {}", r.n_vcpus())));
        }
        self.routers.push((vm.to_string(), r));
        Ok(())
    }

    /// VM `vm`'s external router, taken out (the model owns it from then on).
    pub(crate) fn take_router(&mut self, vm: &str) -> Option<ExternalRouter> {
        let i = self.routers.iter().position(|(n, _)| n == vm)?;
        Some(self.routers.swap_remove(i).1)
    }
}
