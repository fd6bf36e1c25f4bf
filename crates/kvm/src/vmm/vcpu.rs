//! vCPU threads: KVM_RUN in a loop, optional pinning, stop by flag + signal.
use super::layout::{MMIO_EXIT_ADDR, PIO_EXIT_PORT, PIO_FAULT_PORT};
use super::sys;
use kvm_ioctls::{VcpuExit, VcpuFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// What a vCPU thread saw, reported when it ends.
#[derive(Debug, Default, Clone)]
pub struct VcpuReport {
    /// KVM_EXIT_IO on PIO_EXIT_PORT (the probe's exit-to-userspace path).
    pub user_exits: u64,
    /// Other exits to userspace (PIO/MMIO the VMM does not expect).
    pub unexpected_exits: u64,
    /// Host CPU time of the vCPU thread, ns.
    pub cpu_ns: u64,
    /// Set when the guest faulted or KVM_RUN failed.
    pub error: Option<String>,
    /// The stats fd of this vCPU, opened before the first KVM_RUN.
    pub stats_before: std::collections::BTreeMap<String, u64>,
    /// And read after the last one.
    pub stats_after: std::collections::BTreeMap<String, u64>,
}

/// A running vCPU thread.
pub struct VcpuThread {
    join: Option<JoinHandle<VcpuReport>>,
    tid: Arc<AtomicU64>,
    ktid: Arc<std::sync::atomic::AtomicI32>,
    stop: Arc<AtomicBool>,
    /// Set once the thread is about to enter KVM_RUN for the first time.
    pub started: Arc<AtomicBool>,
}

impl VcpuThread {
    /// Starts KVM_RUN on `vcpu` in a new thread, pinned to `pin` if given. The thread waits for
    /// `go` so that all vCPUs and backends start together.
    pub fn spawn(name: String, mut vcpu: VcpuFd, pin: Option<usize>, go: Arc<AtomicBool>) -> std::io::Result<VcpuThread> {
        sys::install_kick_handler();
        let tid = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let started = Arc::new(AtomicBool::new(false));
        let ktid = Arc::new(std::sync::atomic::AtomicI32::new(0));
        let (t2, s2, st2, k2) = (tid.clone(), stop.clone(), started.clone(), ktid.clone());
        let join = std::thread::Builder::new().name(name).spawn(move || {
            // SAFETY: pthread_self has no preconditions.
            t2.store(unsafe { libc::pthread_self() } as u64, Ordering::SeqCst);
            k2.store(sys::gettid(), Ordering::SeqCst);
            let mut rep = VcpuReport::default();
            if let Some(cpu) = pin {
                if let Err(e) = sys::pin_current(cpu) {
                    rep.error = Some(format!("cannot pin vCPU thread to CPU {cpu}: {e}"));
                    st2.store(true, Ordering::SeqCst);
                    return rep;
                }
            }
            let stats = super::stats::StatsFd::open(&vcpu).ok();
            while !go.load(Ordering::Acquire) && !s2.load(Ordering::Acquire) {
                std::hint::spin_loop();
            }
            if let Some(s) = &stats {
                rep.stats_before = s.read();
            }
            let cpu0 = sys::thread_cpu_ns();
            st2.store(true, Ordering::SeqCst);
            while !s2.load(Ordering::Acquire) {
                match vcpu.run() {
                    Ok(VcpuExit::IoOut(port, data)) => {
                        if port as u64 == PIO_EXIT_PORT {
                            rep.user_exits += 1;
                        } else if port as u64 == PIO_FAULT_PORT {
                            let v = data.first().copied().unwrap_or(0xff);
                            let rip = vcpu.get_regs().map(|r| r.rbx).unwrap_or(0);
                            rep.error = Some(format!("guest exception, vector {v} (#GP at {rip:#x} if vector 13)"));
                            break;
                        } else {
                            rep.unexpected_exits += 1;
                        }
                    }
                    Ok(VcpuExit::MmioWrite(addr, _)) if addr == MMIO_EXIT_ADDR => rep.user_exits += 1,
                    Ok(VcpuExit::MmioWrite(..)) | Ok(VcpuExit::MmioRead(..)) | Ok(VcpuExit::IoIn(..)) => {
                        rep.unexpected_exits += 1;
                    }
                    Ok(VcpuExit::Hlt) => std::thread::sleep(Duration::from_micros(10)),
                    Ok(VcpuExit::Intr) => {}
                    Ok(other) => {
                        rep.error = Some(format!("KVM_RUN exit {other:?}"));
                        break;
                    }
                    Err(e) if e.errno() == libc::EINTR || e.errno() == libc::EAGAIN => {}
                    Err(e) => {
                        rep.error = Some(format!("KVM_RUN: {e}"));
                        break;
                    }
                }
            }
            rep.cpu_ns = sys::thread_cpu_ns() - cpu0;
            if let Some(s) = &stats {
                rep.stats_after = s.read();
            }
            rep
        })?;
        Ok(VcpuThread { join: Some(join), tid, ktid, stop, started })
    }

    /// The cell that holds the kernel thread id (0 until the thread runs), for threads started
    /// before it that need it later.
    pub fn tid_cell(&self) -> Arc<std::sync::atomic::AtomicI32> {
        self.ktid.clone()
    }

    /// Kernel thread id (0 until the thread runs).
    pub fn tid(&self) -> i32 {
        self.ktid.load(Ordering::SeqCst)
    }

    /// Has the thread ended (guest fault, KVM error)?
    pub fn finished(&self) -> bool {
        self.join.as_ref().is_none_or(|j| j.is_finished())
    }

    /// Stops the thread (signal until it leaves KVM_RUN) and returns its report.
    pub fn stop(mut self) -> VcpuReport {
        self.stop.store(true, Ordering::SeqCst);
        let join = self.join.take().expect("joined once");
        while !join.is_finished() {
            let tid = self.tid.load(Ordering::SeqCst);
            if tid != 0 {
                sys::signal_thread(tid as libc::pthread_t);
            }
            std::thread::sleep(Duration::from_micros(500));
        }
        join.join().unwrap_or_else(|_| VcpuReport { error: Some("vCPU thread panicked".into()), ..Default::default() })
    }
}
