//! Interrupt generator (experiments 4 and 5, probe): injects one MSI at a time through the
//! router, waits until a vCPU's CPL3 loop noticed it, and records injection -> noticed latency
//! on the shared TSC.
use super::irq::IrqSender;
use crate::guest::ctl::CtlView;
use crate::measure::hist::Histogram;
use crate::vmm::sys::{self, rdtsc};
use crate::vmm::Vm;
use eventpath_policy::routing::RouterConfig;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Results shared with the measuring thread.
#[derive(Default)]
pub struct IrqGenShared {
    /// Latency in TSC ticks, injection (before the irqfd write) -> CPL3 loop saw the count move.
    pub hist: Mutex<Histogram>,
    /// Recording on/off (the warm-up is not recorded).
    pub recording: AtomicBool,
    /// Interrupts never noticed within the timeout.
    pub lost: std::sync::atomic::AtomicU64,
    /// Interrupts sent.
    pub sent: std::sync::atomic::AtomicU64,
    /// MSI re-routes.
    pub route_changes: std::sync::atomic::AtomicU64,
    /// Kernel tid of the generator.
    pub tid: AtomicI32,
}

/// A running generator.
pub struct IrqGen {
    /// Shared results.
    pub shared: Arc<IrqGenShared>,
    stop: Arc<AtomicBool>,
    join: Option<std::thread::JoinHandle<()>>,
}

impl IrqGen {
    /// Starts injecting into `vm` MSI source `src`, one interrupt every `gap_ns` after the
    /// previous one was noticed; `spin` waits by spinning instead of sleeping.
    pub fn spawn(vm: Arc<Vm>, src: usize, home: usize, router: RouterConfig, gap_ns: u64, pin: Option<usize>, go: Arc<AtomicBool>) -> Result<IrqGen, String> {
        let shared = Arc::new(IrqGenShared::default());
        let stop = Arc::new(AtomicBool::new(false));
        let r = router.build(vm.spec.vcpus as usize).map_err(|e| e.to_string())?;
        let (sh, st) = (shared.clone(), stop.clone());
        let join = std::thread::Builder::new()
            .name("irqgen".into())
            .spawn(move || {
                sh.tid.store(sys::gettid(), Ordering::SeqCst);
                if let Some(c) = pin {
                    let _ = sys::pin_current(c);
                }
                let mut sender = IrqSender::new(vm.clone(), src, home, r);
                while !go.load(Ordering::Acquire) && !st.load(Ordering::Acquire) {
                    std::thread::sleep(Duration::from_micros(50));
                }
                let n = vm.spec.vcpus;
                let timeout = sys::ns_to_tsc(50e6);
                let gap_tsc = sys::ns_to_tsc(gap_ns as f64);
                while !st.load(Ordering::Relaxed) {
                    let seen0: Vec<u64> = (0..n).map(|i| CtlView::new(&vm.mem, i).get(crate::ctl_off!(irq_seen))).collect();
                    let t_inj = rdtsc();
                    let before = sender.route_changes;
                    sender.send();
                    sh.sent.fetch_add(1, Ordering::Relaxed);
                    sh.route_changes.fetch_add(sender.route_changes - before, Ordering::Relaxed);
                    let mut got = None;
                    while rdtsc() - t_inj < timeout && !st.load(Ordering::Relaxed) {
                        for i in 0..n {
                            let v = CtlView::new(&vm.mem, i);
                            if v.get(crate::ctl_off!(irq_seen)) != seen0[i as usize] {
                                got = Some(v.get(crate::ctl_off!(irq_seen_tsc)));
                            }
                        }
                        if got.is_some() {
                            break;
                        }
                        if gap_ns >= 200_000 {
                            std::thread::sleep(Duration::from_micros(5));
                        }
                    }
                    if sh.recording.load(Ordering::Relaxed) {
                        match got {
                            Some(t) => sh.hist.lock().unwrap().record(t.saturating_sub(t_inj)),
                            None => {
                                sh.lost.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    }
                    let t_next = rdtsc() + gap_tsc;
                    if gap_ns >= 200_000 {
                        std::thread::sleep(Duration::from_nanos(gap_ns.saturating_sub(60_000)));
                    }
                    while rdtsc() < t_next && !st.load(Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                }
            })
            .map_err(|e| e.to_string())?;
        Ok(IrqGen { shared, stop, join: Some(join) })
    }

    /// Stops the generator.
    pub fn stop(mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(j) = self.join.take() {
            let _ = j.join();
        }
    }
}
