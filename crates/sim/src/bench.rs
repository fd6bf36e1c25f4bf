//! The benchmarks. [`run`]: the engine's model — many VMs each looping through the event path
//! (guest work → kick exit → vhost service → interrupt injection → EOI), with exponential
//! service times. `python/eventpath/bench.py` runs the same model in SimPy in the same run.
//! Events are counted identically in both: one per scheduled step. [`run_model`]: the full model
//! on a busy host (14 VMs streaming TCP with 1448-byte writes on the `elvis` profile's 16 pCPUs,
//! everything placed by the host scheduler), to set the full model's rate beside the engine's.

use crate::engine::{run_until, EventQueue, Model, Rng, Time};

/// Parameters shared with the SimPy twin (keep the two in step).
#[derive(Debug, Clone, Copy)]
pub struct BenchParams {
    /// Number of VMs looping concurrently.
    pub vms: u32,
    /// Mean guest work between requests (ns).
    pub guest_ns: f64,
    /// Kick exit cost (ns).
    pub kick_ns: f64,
    /// Mean vhost service (ns).
    pub vhost_ns: f64,
    /// Injection + handler + EOI (ns).
    pub irq_ns: f64,
}

impl Default for BenchParams {
    fn default() -> Self {
        BenchParams { vms: 64, guest_ns: 2000.0, kick_ns: 1500.0, vhost_ns: 700.0, irq_ns: 1200.0 }
    }
}

#[derive(Clone, Copy)]
enum Step {
    GuestDone(u32),
    KickDone(u32),
    VhostDone(u32),
    IrqDone(u32),
}

struct Loop {
    p: BenchParams,
    rng: Rng,
    requests: u64,
}

impl Model for Loop {
    type Event = Step;
    #[inline]
    fn handle(&mut self, _now: Time, ev: Step, q: &mut EventQueue<Step>) {
        match ev {
            Step::GuestDone(vm) => q.after(self.p.kick_ns as Time, Step::KickDone(vm)),
            Step::KickDone(vm) => q.after(self.rng.exp_ns(self.p.vhost_ns), Step::VhostDone(vm)),
            Step::VhostDone(vm) => q.after(self.p.irq_ns as Time, Step::IrqDone(vm)),
            Step::IrqDone(vm) => {
                self.requests += 1;
                q.after(self.rng.exp_ns(self.p.guest_ns), Step::GuestDone(vm))
            }
        }
    }
}

/// Run the benchmark model for `sim_ns` of simulated time; returns (events handled,
/// wall-clock seconds).
pub fn run(p: BenchParams, sim_ns: Time, seed: u64) -> (u64, f64) {
    let mut q = EventQueue::new();
    let mut m = Loop { p, rng: Rng::for_component(seed, "bench"), requests: 0 };
    for vm in 0..p.vms {
        let first = m.rng.exp_ns(p.guest_ns);
        q.at(first, Step::GuestDone(vm));
    }
    let t0 = std::time::Instant::now();
    run_until(&mut m, &mut q, sim_ns);
    let wall = t0.elapsed().as_secs_f64();
    (q.handled(), wall)
}

/// The full-model benchmark's host: `vms` single-vCPU VMs, each streaming TCP with 1448-byte
/// writes, on the `elvis` profile's 16 pCPUs, nothing pinned.
pub fn model_scenario(vms: u32, sim_seconds: f64) -> String {
    let mut s = format!(
        "name = \"bench-{vms}vm-tcp1448\"\nprofile = \"elvis\"\nseed = 1\nduration_s = {sim_seconds}\nwarmup_s = 0.0\n[host]\npcpus = 16\n"
    );
    for i in 0..vms {
        s += &format!("[[vm]]\nname = \"vm{i}\"\nvcpus = 1\n[vm.workload]\nkind = \"tcp_stream\"\nmessage_bytes = 1448\n");
    }
    s
}

/// Run the full-model benchmark for `sim_seconds`; returns (events handled, wall-clock seconds).
pub fn run_model(vms: u32, sim_seconds: f64) -> crate::InputResult<(u64, f64)> {
    let sc = crate::scenario::Scenario::from_toml("bench", &model_scenario(vms, sim_seconds))?;
    let c = sc.check("bench")?;
    let t0 = std::time::Instant::now();
    let out = crate::run::simulate(&c);
    Ok((out.summary.events.unwrap_or_default(), t0.elapsed().as_secs_f64()))
}

/// The full-model benchmark's host run once more, counting events by kind: returns each
/// kind's count and the packets the VMs delivered over the run (the denominator of "events
/// per packet").
pub fn model_census(vms: u32, sim_seconds: f64) -> crate::InputResult<(Vec<(&'static str, u64)>, f64)> {
    let sc = crate::scenario::Scenario::from_toml("bench", &model_scenario(vms, sim_seconds))?;
    let c = sc.check("bench")?;
    let (out, by_kind) = crate::run::simulate_census(&c);
    let packets = out.summary.vms.iter().map(|v| v.throughput.pps.unwrap_or(0.0) * sim_seconds).sum();
    Ok((by_kind, packets))
}
