//! Sending an interrupt: routing (policy `Router`, run state observed from guest heartbeats,
//! MSI re-routed with KVM_SET_GSI_ROUTING) and the irqfd write.
use crate::guest::ctl::CtlView;
use crate::scenario::Reroute;
use crate::vmm::sys::rdtsc;
use crate::vmm::Vm;
use eventpath_policy::routing::{InterruptClass, InterruptRouter, RouteRequest, RunState, Router};
use std::sync::Arc;

/// How long the run-state probe watches heartbeats before calling a vCPU not running (TSC ticks
/// are converted from this; 20 µs is ~1000 iterations of the guest loop).
pub const RUN_STATE_WINDOW_NS: f64 = 20_000.0;

/// One MSI source of one VM, with its router.
pub struct IrqSender {
    vm: Arc<Vm>,
    src: usize,
    /// The programmed destination (the guest's affinity).
    pub home: usize,
    router: Router,
    via: Reroute,
    /// Destination of the last interrupt (irqfd_per_vcpu).
    current: usize,
    observe: bool,
    window_tsc: u64,
    /// Interrupts written to the irqfd.
    pub sent: u64,
    /// KVM_SET_GSI_ROUTING calls that moved this source.
    pub route_changes: u64,
    /// Time spent in those calls (ns).
    pub reroute_ns: u64,
}

impl IrqSender {
    /// A sender for MSI source `src` of `vm`, home vCPU `home`.
    pub fn new(vm: Arc<Vm>, src: usize, home: usize, router: Router, via: Reroute) -> Self {
        let observe = !matches!(router, Router::Fixed(_) | Router::LowestPriorityRr(_));
        let _ = vm.set_route(src, home as u64);
        Self { vm, src, home, router, via, current: home, observe, window_tsc: crate::vmm::sys::ns_to_tsc(RUN_STATE_WINDOW_NS), sent: 0, route_changes: 0, reroute_ns: 0 }
    }

    /// Which vCPUs are running: those whose heartbeat advances within the window. Stops as soon
    /// as the home vCPU is seen advancing, or 2 µs after any other vCPU was (so that a second
    /// running vCPU has time to show).
    pub fn observe(&self) -> Vec<bool> {
        let n = self.vm.spec.vcpus as usize;
        let view = |i: usize| CtlView::new(&self.vm.mem, i as u64);
        let hb0: Vec<u64> = (0..n).map(|i| view(i).get(crate::ctl_off!(heartbeat))).collect();
        let mut running = vec![false; n];
        let grace = crate::vmm::sys::ns_to_tsc(2_000.0);
        let t0 = rdtsc();
        let mut first_seen = None;
        loop {
            let now = rdtsc();
            for i in 0..n {
                if !running[i] && view(i).get(crate::ctl_off!(heartbeat)) != hb0[i] {
                    running[i] = true;
                    first_seen.get_or_insert(now);
                }
            }
            let home = self.home.min(n - 1);
            if running[home] || first_seen.is_some_and(|t| now - t >= grace) || now - t0 >= self.window_tsc {
                return running;
            }
        }
    }

    /// Whether this sender's router uses run state.
    pub fn observes(&self) -> bool {
        self.observe
    }

    /// Routes and sends one interrupt. Returns the vCPU it went to.
    pub fn send(&mut self) -> usize {
        let running = if self.observe { Some(self.observe()) } else { None };
        self.send_observed(running.as_deref())
    }

    /// Routes and sends one interrupt, given run states observed by the caller (`None`: the
    /// router does not use them). Returns the vCPU it went to.
    pub fn send_observed(&mut self, running: Option<&[bool]>) -> usize {
        for (i, r) in running.unwrap_or(&[]).iter().enumerate() {
            self.router.on_run_state(i, if *r { RunState::Running } else { RunState::Runnable });
        }
        let d = self.router.route(RouteRequest { irq: self.src as u32, class: InterruptClass::Device, dest: self.home });
        let target = d.target.min(self.vm.spec.vcpus as usize - 1);
        match self.via {
            Reroute::GsiRouting => {
                if self.vm.routes()[self.src] != target as u64 {
                    let t0 = std::time::Instant::now();
                    if self.vm.set_route(self.src, target as u64).is_ok() {
                        self.route_changes += 1;
                        self.reroute_ns += t0.elapsed().as_nanos() as u64;
                    }
                }
                let _ = self.vm.irq_fds[self.src].write(1);
            }
            Reroute::IrqfdPerVcpu => {
                if target != self.current {
                    self.current = target;
                    self.route_changes += 1;
                }
                let _ = self.vm.vcpu_irq_fds[self.src][target].write(1);
            }
        }
        self.sent += 1;
        target
    }
}
