//! Interrupt generator (experiments 4 and 5, probe): injects MSIs through the router on an
//! **open-loop** schedule (one every `gap` ± 50 % uniform jitter, whether or not the previous one
//! was handled yet) and records, per injection, injection -> the target vCPU's CPL3 loop noticed
//! an interrupt, on the shared TSC.
//!
//! Attribution: injections are kept pending per target vCPU (in send order). When vCPU `i`'s
//! `irq_seen` moves with timestamp `T`, every pending injection to `i` sent before `T` is
//! resolved with latency `T - t_inj` (injections that coalesced in the IRR share one handler
//! run, which is when each of them was served). Pending injections older than 50 ms are `lost`.
use super::irq::IrqSender;
use crate::guest::ctl::CtlView;
use eventpath_sim::metrics::Histogram;
use crate::scenario::Reroute;
use crate::vmm::sys::{self, rdtsc};
use crate::vmm::Vm;
use eventpath_policy::routing::RouterConfig;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Results shared with the measuring thread.
#[derive(Default)]
pub struct IrqGenShared {
    /// Latency in TSC ticks, injection (before run-state observation, routing and the irqfd
    /// write) -> CPL3 loop noticed. `[0]`: all, then by the run state observed at injection
    /// ([`InjectClass`]).
    pub hist: Mutex<[Histogram; 4]>,
    /// Recording on/off (the warm-up is not recorded).
    pub recording: AtomicBool,
    /// Recorded injections never noticed within 50 ms.
    pub lost: AtomicU64,
    /// Interrupts sent while recording.
    pub sent: AtomicU64,
    /// MSI re-routes while recording.
    pub route_changes: AtomicU64,
    /// Time spent in KVM_SET_GSI_ROUTING while recording (ns).
    pub reroute_ns: AtomicU64,
    /// Kernel tid of the generator.
    pub tid: AtomicI32,
}

/// What a generator reports once stopped.
#[derive(Debug, Clone, Default)]
pub struct IrqGenResult {
    /// Injection -> noticed latencies (TSC ticks), all injections.
    pub hist: Histogram,
    /// The same, by [`InjectClass`] (index = class as usize).
    pub by_class: [Histogram; 3],
    /// Injections sent while recording.
    pub sent: u64,
    /// Recorded injections never noticed.
    pub lost: u64,
    /// MSI re-routes.
    pub route_changes: u64,
    /// Total KVM_SET_GSI_ROUTING time (ns).
    pub reroute_ns: u64,
}

/// Run state of the VM's vCPUs seen (heartbeats) just before an injection: the policy crate's
/// [`RunClass`], shared with the simulator's `irq_source`.
pub use eventpath_policy::routing::RunClass as InjectClass;

/// A running generator.
pub struct IrqGen {
    /// Shared results.
    pub shared: Arc<IrqGenShared>,
    stop: Arc<AtomicBool>,
    join: Option<std::thread::JoinHandle<()>>,
}

/// Which MSI the generator injects.
pub struct MsiSource {
    /// The VM.
    pub vm: Arc<Vm>,
    /// MSI source index in the VM (queues first, then extra sources).
    pub src: usize,
    /// Programmed destination vCPU.
    pub home: usize,
}

/// Deterministic jitter source (xorshift64*), so runs do not phase-lock to the host's slices.
struct Jitter(u64);
impl Jitter {
    fn next_unit(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
}

struct Loop {
    vm: Arc<Vm>,
    sh: Arc<IrqGenShared>,
    pending: Vec<VecDeque<(u64, bool, InjectClass)>>,
    last_seen: Vec<u64>,
    timeout: u64,
}

impl Loop {
    /// Resolves pending injections against what each vCPU noticed.
    fn poll(&mut self, now: u64) {
        for i in 0..self.pending.len() {
            let v = CtlView::new(&self.vm.mem, i as u64);
            let seen = v.get(crate::ctl_off!(irq_seen));
            if seen != self.last_seen[i] {
                self.last_seen[i] = seen;
                let t = v.get(crate::ctl_off!(irq_seen_tsc));
                while let Some(&(t_inj, rec, class)) = self.pending[i].front() {
                    if t_inj >= t {
                        break;
                    }
                    self.pending[i].pop_front();
                    if rec {
                        let mut h = self.sh.hist.lock().unwrap();
                        h[0].record(t - t_inj);
                        h[1 + class as usize].record(t - t_inj);
                    }
                }
            }
            while let Some(&(t_inj, rec, _)) = self.pending[i].front() {
                if now.saturating_sub(t_inj) < self.timeout {
                    break;
                }
                self.pending[i].pop_front();
                if rec {
                    self.sh.lost.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }
}

impl IrqGen {
    /// Starts injecting into `vm` MSI source `src` (home vCPU `home`), one interrupt every
    /// `gap_ns` on average (uniform in [0.5, 1.5] x gap), independent of completions.
    pub fn spawn(target: MsiSource, router: RouterConfig, reroute: Reroute, gap_ns: u64, pin: Option<usize>, go: Arc<AtomicBool>) -> Result<IrqGen, String> {
        let MsiSource { vm, src, home } = target;
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
                let mut sender = IrqSender::new(vm.clone(), src, home, r, reroute);
                while !go.load(Ordering::Acquire) && !st.load(Ordering::Acquire) {
                    std::thread::sleep(Duration::from_micros(50));
                }
                let n = vm.spec.vcpus as usize;
                let last_seen = (0..n).map(|i| CtlView::new(&vm.mem, i as u64).get(crate::ctl_off!(irq_seen))).collect();
                let mut lp = Loop { vm: vm.clone(), sh: sh.clone(), pending: vec![VecDeque::new(); n], last_seen, timeout: sys::ns_to_tsc(50e6) };
                let mut jitter = Jitter(0x9E37_79B9_7F4A_7C15 ^ gap_ns);
                let gap_tsc = sys::ns_to_tsc(gap_ns as f64) as f64;
                let mut next = rdtsc();
                while !st.load(Ordering::Relaxed) {
                    let now = rdtsc();
                    lp.poll(now);
                    if now < next {
                        if next - now > sys::ns_to_tsc(100_000.0) {
                            std::thread::sleep(Duration::from_micros(20));
                        } else {
                            std::hint::spin_loop();
                        }
                        continue;
                    }
                    let rec = sh.recording.load(Ordering::Relaxed);
                    let t_inj = rdtsc();
                    let (moves, ns) = (sender.route_changes, sender.reroute_ns);
                    // Every router observes (the same cost for all); only run-state routers use it.
                    let running = sender.observe();
                    let target = sender.send_observed(sender.observes().then_some(&running[..]));
                    lp.pending[target.min(n - 1)].push_back((t_inj, rec, InjectClass::of(&running, home)));
                    if rec {
                        sh.sent.fetch_add(1, Ordering::Relaxed);
                        sh.route_changes.fetch_add(sender.route_changes - moves, Ordering::Relaxed);
                        sh.reroute_ns.fetch_add(sender.reroute_ns - ns, Ordering::Relaxed);
                    }
                    next += (gap_tsc * (0.5 + jitter.next_unit())) as u64;
                    let now = rdtsc();
                    if now > next + 4 * gap_tsc as u64 {
                        next = now; // fell far behind (descheduled): do not burst to catch up
                    }
                }
            })
            .map_err(|e| e.to_string())?;
        Ok(IrqGen { shared, stop, join: Some(join) })
    }

    /// Stops the generator and returns its results.
    pub fn stop(mut self) -> IrqGenResult {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(j) = self.join.take() {
            let _ = j.join();
        }
        let s = &self.shared;
        let h = s.hist.lock().unwrap().clone();
        let [hist, a, b, c] = h;
        IrqGenResult {
            hist,
            by_class: [a, b, c],
            sent: s.sent.load(Ordering::Relaxed),
            lost: s.lost.load(Ordering::Relaxed),
            route_changes: s.route_changes.load(Ordering::Relaxed),
            reroute_ns: s.reroute_ns.load(Ordering::Relaxed),
        }
    }
}
