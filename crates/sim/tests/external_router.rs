//! A router supplied at run time (`run::External`, the seam a Python router plugs into):
//! one that mimics a built-in router gives the identical run, and the checks refuse a router
//! given to a VM that cannot take one.

mod common;

use common::{Sc, Vm};
use eventpath_policy::routing::{InterruptRouter, RouteDecision, RouteRequest, RouterConfig, RunState, VcpuId};
use eventpath_sim::engine::Time;
use eventpath_sim::run::{simulate_observed, simulate_observed_with, External};

/// A built-in router behind a box, counting the calls it answers: the simulator cannot tell it
/// from the built-in one.
struct Mimic(eventpath_policy::routing::Router, std::sync::Arc<std::sync::atomic::AtomicU64>);

impl InterruptRouter for Mimic {
    fn n_vcpus(&self) -> usize {
        self.0.n_vcpus()
    }
    fn on_run_state(&mut self, vcpu: VcpuId, state: RunState) {
        self.0.on_run_state(vcpu, state)
    }
    fn route(&mut self, req: RouteRequest) -> RouteDecision {
        self.1.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.0.route(req)
    }
}

fn scenario(routing: Option<&str>) -> Sc {
    let mut vm = Vm::new("vm0", 2).workload("kind = \"udp_receive\"\nmessage_bytes = 512\nrate_pps = 20000");
    if let Some(r) = routing {
        vm = vm.routing(r);
    }
    Sc::new("external", "es2").duration(0.02).warmup(0.005).vm(vm)
}

fn summary(out: &eventpath_sim::RunOutput) -> serde_json::Value {
    let mut v = serde_json::to_value(&out.summary).unwrap();
    v.as_object_mut().unwrap().remove("wall_seconds");
    v
}

const CHUNK: Time = 1_000_000;

#[test]
fn a_boxed_router_that_mimics_a_built_in_one_gives_the_identical_run() {
    for (name, cfg) in [("running_first", RouterConfig::RunningFirst), ("lowest_priority_rr", RouterConfig::LowestPriorityRr)] {
        let builtin = simulate_observed(&scenario(Some(name)).check(), CHUNK, &mut |_, _| true).0;
        let c = scenario(None).check();
        let calls = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let mut ext = External::none();
        ext.add_router(&c, "vm0", Box::new(Mimic(cfg.build(2).unwrap(), calls.clone()))).unwrap();
        let (out, completed) = simulate_observed_with(&c, ext, CHUNK, &mut |_, _| true);
        assert!(completed);
        assert!(calls.load(std::sync::atomic::Ordering::Relaxed) > 100, "{name}: the external router was asked");
        let (mut a, mut b) = (summary(&builtin), summary(&out));
        // The summary names the policy: the scenario's, or `external` for a supplied router.
        assert_eq!(a["vms"][0]["interrupt_routing"], name);
        assert_eq!(b["vms"][0]["interrupt_routing"], "external");
        a["vms"][0]["interrupt_routing"] = serde_json::Value::Null;
        b["vms"][0]["interrupt_routing"] = serde_json::Value::Null;
        assert_eq!(a["vms"], b["vms"], "{name}");
        assert_eq!(a["host"], b["host"], "{name}");
    }
}

#[test]
fn a_router_is_refused_where_the_vm_cannot_take_one() {
    let fixed = || Box::new(Mimic(RouterConfig::Fixed.build(2).unwrap(), Default::default()));
    let c = scenario(None).check();
    let err = |ext: &mut External, vm: &str| ext.add_router(&c, vm, fixed()).unwrap_err().to_string();
    let mut ext = External::none();
    assert_eq!(err(&mut ext, "vm9"), "routing: no VM named `vm9`; the scenario's VMs are `vm0`");
    ext.add_router(&c, "vm0", fixed()).unwrap();
    assert_eq!(err(&mut ext, "vm0"), "routing: VM `vm0` is given two routers; give one");

    let c = scenario(Some("es2")).check();
    let e = External::none().add_router(&c, "vm0", fixed()).unwrap_err().to_string();
    assert_eq!(e, "routing: VM `vm0` sets interrupt_routing = \"es2\" and is given a router too; remove the key or the router");

    let one = Sc::new("external", "es2").vm(Vm::new("vm0", 1).workload("kind = \"ping\"")).check();
    let e = External::none().router_slot(&one, "vm0").unwrap_err().to_string();
    assert!(e.contains("VM `vm0` has one vCPU"), "{e}");

    let c = Sc::new("external", "es2").vm(Vm::new("vm0", 3).workload("kind = \"ping\"")).check();
    let e = External::none().add_router(&c, "vm0", fixed()).unwrap_err().to_string();
    assert_eq!(e, "routing: VM `vm0` has 3 vCPUs, its router says 2");
}
