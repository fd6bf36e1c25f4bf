//! The backend thread loop: set-up and the ring and interrupt primitives every handling shares.
//! The vhost/ES2 joint thread is in `joint.rs`, ELVIS in `elvis.rs`, the poll-mode back end in
//! `pmd.rs`.
use super::irq::IrqSender;
use super::joint::JointAdapter;
use super::{Counters, DeviceSpec, Serving, Took};

mod elvis;
mod joint;
mod pmd;
use crate::vmm::layout::{queue_area, AVAIL_OFF, DESC_OFF, USED_OFF};
use crate::vmm::memory::GuestMem;
use crate::vmm::sys::{self, now_ns, rdtsc};
use crate::virtq::{DeviceQueue, RingAddrs};
use eventpath_policy::elvis::ElvisScheduler;
use eventpath_policy::moderation::{InterruptModerator, IrqDecision, Moderator};
use eventpath_policy::pmd::PmdThread;
use eventpath_sim::scenario::Handling;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

struct Dev {
    mem: Arc<GuestMem>,
    q: DeviceQueue,
    kick: Arc<vmm_sys_util::eventfd::EventFd>,
    sender: IrqSender,
    moderator: Moderator,
    deadline: Option<u64>,
    unsignalled: u32,
    /// Completions since the moderator last saw an event (suppressed batches included), so that
    /// rate controllers measure all traffic, as a NIC's ITR logic counts every packet.
    mod_pkts: u32,
    service_tsc: u64,
    allowed_rate: Arc<AtomicU64>,
    home_vcpu: u64,
    last_kick_seen: u64,
}

impl Dev {
    fn publish_rate(&self) {
        self.allowed_rate.store(self.moderator.allowed_rate().map(u64::from).unwrap_or(u64::MAX), Ordering::Relaxed);
    }
}

/// A running backend thread.
pub struct BackendThread {
    /// Its counters.
    pub counters: Arc<Counters>,
    /// Guest kick instruction -> this thread back from poll(2) with the kick, TSC ticks (only
    /// kicks that found the thread asleep; see [`crate::guest::ctl::VcpuCtl::last_kick_tsc`]).
    pub kick_hist: Arc<std::sync::Mutex<eventpath_sim::metrics::Histogram>>,
    /// Its kernel thread id (for CPU time), 0 until it starts.
    pub tid: Arc<AtomicI32>,
    /// Name in reports.
    pub name: String,
    stop: Arc<AtomicBool>,
    join: Option<std::thread::JoinHandle<Result<(), String>>>,
}

impl BackendThread {
    /// Stops the thread; returns its error, if it had one.
    pub fn stop(mut self) -> Result<(), String> {
        self.stop.store(true, Ordering::SeqCst);
        match self.join.take().map(|j| j.join()) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err("backend thread panicked".into()),
            None => Ok(()),
        }
    }
}

/// Starts a backend thread serving `devices` as `serving` says, pinned to `pin` if given.
pub fn spawn_backend(
    name: String,
    devices: Vec<DeviceSpec>,
    serving: Serving,
    pin: Option<usize>,
    go: Arc<AtomicBool>,
) -> std::io::Result<BackendThread> {
    let counters = Arc::new(Counters::default());
    let stop = Arc::new(AtomicBool::new(false));
    let tid = Arc::new(AtomicI32::new(0));
    let kick_hist = Arc::new(std::sync::Mutex::new(eventpath_sim::metrics::Histogram::default()));
    let (c2, s2, t2, h2) = (counters.clone(), stop.clone(), tid.clone(), kick_hist.clone());
    let join = std::thread::Builder::new().name(name.clone()).spawn(move || {
        t2.store(sys::gettid(), Ordering::SeqCst);
        if let Some(cpu) = pin {
            sys::pin_current(cpu).map_err(|e| format!("cannot pin backend thread to CPU {cpu}: {e}"))?;
        }
        sys::exact_timed_sleeps();
        let mut devs = Vec::new();
        for d in devices {
            devs.push(make_dev(d, &serving)?);
        }
        while !go.load(Ordering::Acquire) && !s2.load(Ordering::Acquire) {
            std::thread::sleep(Duration::from_micros(50));
        }
        let io = &serving.io;
        let mut w = Worker { devs, c: c2, stop: s2, last_advance_tsc: 0, kick_hist: h2 };
        let mut fds: Vec<libc::pollfd> =
            w.devs.iter().map(|d| libc::pollfd { fd: d.kick.as_raw_fd(), events: libc::POLLIN, revents: 0 }).collect();
        match io.handling {
            Handling::Elvis => {
                let sched = ElvisScheduler::new(io.elvis(), w.devs.len());
                w.run_elvis(sched, &mut fds)
            }
            Handling::Pmd => w.run_pmd(PmdThread::new(&io.pmd())),
            Handling::Vhost | Handling::Es2 => {
                let adapter = JointAdapter::new(io, &serving.vhost, w.devs.len());
                w.run_joint(adapter, &mut fds)
            }
        }
        Ok(())
    })?;
    Ok(BackendThread { counters, kick_hist, tid, name, stop, join: Some(join) })
}

fn make_dev(d: DeviceSpec, serving: &Serving) -> Result<Dev, String> {
    let base = queue_area(d.queue as u64);
    let addrs = RingAddrs { desc: base + DESC_OFF, avail: base + AVAIL_OFF, used: base + USED_OFF };
    let ctl = crate::guest::ctl::CtlView::new(&d.vm.mem, d.home_vcpu as u64);
    let qsize = ctl.get(crate::ctl_off!(qsize)) as u16;
    let q = DeviceQueue::new(&d.vm.mem, addrs, qsize).map_err(|e| format!("queue {}: {e}", d.queue))?;
    let router = d.router.build(d.vm.spec.vcpus as usize).map_err(|e| e.to_string())?;
    let moderator = d.moderation.build(now_ns()).map_err(|e| e.to_string())?;
    if serving.io.handling == Handling::Pmd {
        q.disable_notification(&d.vm.mem);
    } else {
        // Before the guest starts (it waits for `go`): no request can have raced this.
        let _ = q.enable_notification(&d.vm.mem);
    }
    Ok(Dev {
        mem: d.vm.mem.clone(),
        q,
        kick: d.vm.kick_fds[d.queue].clone(),
        sender: IrqSender::new(d.vm.clone(), d.queue, d.home_vcpu, router, d.reroute),
        moderator,
        deadline: None,
        unsignalled: 0,
        mod_pkts: 0,
        service_tsc: sys::ns_to_tsc(d.service_ns as f64),
        allowed_rate: d.allowed_rate.clone(),
        home_vcpu: d.home_vcpu as u64,
        last_kick_seen: 0,
    })
    .inspect(|d| d.publish_rate())
}

struct Worker {
    devs: Vec<Dev>,
    c: Arc<Counters>,
    stop: Arc<AtomicBool>,
    last_advance_tsc: u64,
    kick_hist: Arc<std::sync::Mutex<eventpath_sim::metrics::Histogram>>,
}

impl Worker {
    /// How long a sleeping thread may wait: until the next moderation deadline, at most 5 ms
    /// (in whole milliseconds: a deadline less than 1 ms away is waited for by looking again).
    fn wait_timeout_ns(&self) -> u64 {
        let now = now_ns();
        let ms = self.devs.iter().filter_map(|d| d.deadline).map(|t| t.saturating_sub(now) / 1_000_000).min().unwrap_or(5).min(5);
        ms * 1_000_000
    }

    /// Waits in ppoll(2) on the kick eventfds up to `timeout_ns` (0: just look); reads each
    /// signalled eventfd and returns the indices of the kicked devices in the order they kicked
    /// (by the TSC the guest stores just before its kick instruction, `last_kick_tsc`: the last
    /// of several coalesced kicks), as the simulator and Linux's eventfd wake-ups queue them;
    /// ppoll(2) itself reports them in fd order. A guest that writes nonsense there only
    /// reorders its own kicks.
    fn kicked(&mut self, fds: &mut [libc::pollfd], timeout_ns: u64) -> Vec<usize> {
        let ts = libc::timespec { tv_sec: (timeout_ns / 1_000_000_000) as libc::time_t, tv_nsec: (timeout_ns % 1_000_000_000) as libc::c_long };
        // SAFETY: `fds` is a valid array of pollfd for the eventfds this thread keeps alive; `ts`
        // lives across the call; a null signal mask leaves the thread's mask unchanged.
        let r = unsafe { libc::ppoll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, &ts, std::ptr::null()) };
        let seen = rdtsc();
        if r <= 0 {
            return vec![];
        }
        let mut out = Vec::new();
        for (i, f) in fds.iter().enumerate() {
            if f.revents & libc::POLLIN != 0 {
                let d = &mut self.devs[i];
                let k = crate::guest::ctl::CtlView::new(&d.mem, d.home_vcpu).get(crate::ctl_off!(last_kick_tsc));
                if timeout_ns > 0 && k != 0 && k != d.last_kick_seen && k < seen {
                    // Woken by this kick: guest kick instruction -> here, on the shared TSC.
                    d.last_kick_seen = k;
                    if let Ok(mut h) = self.kick_hist.lock() {
                        h.record(seen - k);
                    }
                }
                if self.devs[i].kick.read().is_ok() {
                    self.c.bump(&self.c.kick_events, 1);
                }
                out.push((k, i));
            }
        }
        out.sort_unstable();
        out.into_iter().map(|(_, i)| i).collect()
    }

    /// Takes and serves one entry.
    fn take(&mut self, i: usize) -> Took {
        let d = &mut self.devs[i];
        self.c.bump(&self.c.polls, 1);
        let t0 = rdtsc();
        match d.q.pop(&d.mem) {
            None => {
                self.c.bump(&self.c.empty_polls, 1);
                Took::Empty
            }
            Some(Err(e)) => {
                self.c.error(e);
                Took::Bad
            }
            Some(Ok(chain)) => {
                if d.service_tsc > 0 {
                    let t0 = rdtsc();
                    while rdtsc() - t0 < d.service_tsc {
                        std::hint::spin_loop();
                    }
                }
                // Completion: the host TSC into the first device-writable buffer (offset 16).
                let mut written = 0;
                if let Some((addr, len, _)) = chain.bufs.iter().take(chain.len as usize).find(|b| b.2) {
                    if *len >= 24 && d.mem.store_u64(addr + 16, rdtsc()).is_ok() {
                        written = 24;
                    }
                }
                d.q.push_used(&d.mem, chain.head, written);
                d.unsignalled += 1;
                self.c.bump(&self.c.requests, 1);
                self.c.bump(&self.c.request_tsc, rdtsc() - t0);
                Took::Request(chain.total_len)
            }
        }
    }

    /// Re-enables device `i`'s kicks (a mode switch); true if requests raced the re-enable
    /// (the ring's own re-check, `DeviceQueue::enable_notification`): serve them, no kick comes.
    fn enable_kicks(&mut self, i: usize) -> bool {
        self.c.bump(&self.c.mode_switches, 1);
        let d = &self.devs[i];
        d.q.enable_notification(&d.mem)
    }

    /// Suppresses device `i`'s kicks (a mode switch).
    fn disable_kicks(&mut self, i: usize) {
        self.c.bump(&self.c.mode_switches, 1);
        let d = &self.devs[i];
        d.q.disable_notification(&d.mem);
    }

    /// Interrupt decision for what device `i` completed since the last call.
    fn signal(&mut self, i: usize) {
        let d = &mut self.devs[i];
        if d.unsignalled == 0 {
            return;
        }
        let pkts = std::mem::take(&mut d.unsignalled);
        d.mod_pkts = d.mod_pkts.saturating_add(pkts);
        if !d.q.should_interrupt(&d.mem) {
            self.c.bump(&self.c.irq_suppressed, 1);
            return;
        }
        let pkts = std::mem::take(&mut d.mod_pkts);
        self.c.bump(&self.c.irq_wanted, 1);
        match d.moderator.on_event(now_ns(), pkts, pkts as u64 * crate::vmm::layout::BUFFER_SIZE) {
            IrqDecision::FireNow => {
                self.c.bump(&self.c.irq_sent_now, 1);
                self.send(i);
            }
            IrqDecision::DelayUntil(t) => {
                self.c.bump(&self.c.irq_delayed, 1);
                self.devs[i].deadline = Some(t);
            }
            IrqDecision::Coalesced => self.c.bump(&self.c.irq_coalesced, 1),
        }
        self.devs[i].publish_rate();
    }

    fn send(&mut self, i: usize) {
        let before = self.devs[i].sender.route_changes;
        self.devs[i].sender.send();
        let moved = self.devs[i].sender.route_changes - before;
        self.c.bump(&self.c.irq_sent, 1);
        self.c.bump(&self.c.route_changes, moved);
    }

    fn fire_deadlines(&mut self) {
        // Close elapsed moderation windows even without events, and publish the allowed rate,
        // at least every millisecond.
        let t = rdtsc();
        if t.wrapping_sub(self.last_advance_tsc) > sys::ns_to_tsc(1e6) {
            self.last_advance_tsc = t;
            let now = now_ns();
            for d in &mut self.devs {
                d.moderator.advance(now);
                d.publish_rate();
            }
        }
        let mut now = 0;
        for i in 0..self.devs.len() {
            if let Some(t) = self.devs[i].deadline {
                if now == 0 {
                    now = now_ns();
                }
                if now >= t {
                    self.devs[i].deadline = None;
                    if self.devs[i].moderator.on_deadline(now) {
                        self.send(i);
                    }
                    self.devs[i].publish_rate();
                }
            }
        }
    }
}
