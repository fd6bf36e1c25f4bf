//! Sending an interrupt: routing (policy `Router`, run state observed from guest heartbeats,
//! MSI re-routed with KVM_SET_GSI_ROUTING) and the irqfd write.
use crate::guest::ctl::CtlView;
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
    observe: bool,
    window_tsc: u64,
    /// Interrupts written to the irqfd.
    pub sent: u64,
    /// KVM_SET_GSI_ROUTING calls that moved this source.
    pub route_changes: u64,
}

impl IrqSender {
    /// A sender for MSI source `src` of `vm`, home vCPU `home`.
    pub fn new(vm: Arc<Vm>, src: usize, home: usize, router: Router) -> Self {
        let observe = !matches!(router, Router::Fixed(_) | Router::LowestPriorityRr(_));
        let _ = vm.set_route(src, home as u64);
        Self { vm, src, home, router, observe, window_tsc: crate::vmm::sys::ns_to_tsc(RUN_STATE_WINDOW_NS), sent: 0, route_changes: 0 }
    }

    /// Marks as Running the vCPUs whose heartbeat advances within the window (stops early at the
    /// first one seen advancing when it is the home vCPU), the others Runnable.
    fn observe_run_state(&mut self) {
        let n = self.vm.spec.vcpus as usize;
        let view = |i: usize| CtlView::new(&self.vm.mem, i as u64);
        let hb0: Vec<u64> = (0..n).map(|i| view(i).get(crate::ctl_off!(heartbeat))).collect();
        let mut running = vec![false; n];
        let t0 = rdtsc();
        while rdtsc() - t0 < self.window_tsc {
            for i in 0..n {
                if !running[i] && view(i).get(crate::ctl_off!(heartbeat)) != hb0[i] {
                    running[i] = true;
                }
            }
            if running[self.home] || running.iter().any(|r| *r) {
                break;
            }
        }
        for (i, r) in running.iter().enumerate() {
            self.router.on_run_state(i, if *r { RunState::Running } else { RunState::Runnable });
        }
    }

    /// Routes and sends one interrupt. Returns the vCPU it went to.
    pub fn send(&mut self) -> usize {
        if self.observe {
            self.observe_run_state();
        }
        let d = self.router.route(RouteRequest { irq: self.src as u32, class: InterruptClass::Device, dest: self.home });
        let target = d.target.min(self.vm.spec.vcpus as usize - 1);
        if self.vm.routes()[self.src] != target as u64 && self.vm.set_route(self.src, target as u64).is_ok() {
            self.route_changes += 1;
        }
        let _ = self.vm.irq_fds[self.src].write(1);
        self.sent += 1;
        target
    }
}
