//! The backend thread loop.
use super::irq::IrqSender;
use super::{Counters, DeviceSpec, NotifyMode};
use crate::vmm::layout::{queue_area, AVAIL_OFF, DESC_OFF, USED_OFF};
use crate::vmm::memory::GuestMem;
use crate::vmm::sys::{self, now_ns, rdtsc};
use crate::virtq::{DeviceQueue, RingAddrs};
use eventpath_policy::es2::{OptimisticAction, OptimisticTx, PerceptiveAction, PerceptiveEvent, PerceptiveHandler};
use eventpath_policy::moderation::{InterruptModerator, IrqDecision, Moderator};
use eventpath_policy::vhost::{VhostAction, VhostEvent, VhostHandler};
use std::collections::VecDeque;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Arc;
use std::time::Duration;

enum Handler {
    Vhost(VhostHandler),
    Poll,
    Perceptive(PerceptiveHandler),
    Optimistic(OptimisticTx, VhostHandler),
}

struct Dev {
    mem: Arc<GuestMem>,
    q: DeviceQueue,
    kick: Arc<vmm_sys_util::eventfd::EventFd>,
    sender: IrqSender,
    moderator: Moderator,
    deadline: Option<u64>,
    unsignalled: u32,
    handler: Handler,
    queued: bool,
    service_tsc: u64,
}

/// A running backend thread.
pub struct BackendThread {
    /// Its counters.
    pub counters: Arc<Counters>,
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

/// Starts a backend thread serving `devices` in `mode`, pinned to `pin` if given.
pub fn spawn_backend(
    name: String,
    devices: Vec<DeviceSpec>,
    mode: NotifyMode,
    pin: Option<usize>,
    go: Arc<AtomicBool>,
) -> std::io::Result<BackendThread> {
    let counters = Arc::new(Counters::default());
    let stop = Arc::new(AtomicBool::new(false));
    let tid = Arc::new(AtomicI32::new(0));
    let (c2, s2, t2) = (counters.clone(), stop.clone(), tid.clone());
    let join = std::thread::Builder::new().name(name.clone()).spawn(move || {
        t2.store(sys::gettid(), Ordering::SeqCst);
        if let Some(cpu) = pin {
            sys::pin_current(cpu).map_err(|e| format!("cannot pin backend thread to CPU {cpu}: {e}"))?;
        }
        let mut devs = Vec::new();
        for d in devices {
            devs.push(make_dev(d, &mode)?);
        }
        while !go.load(Ordering::Acquire) && !s2.load(Ordering::Acquire) {
            std::thread::sleep(Duration::from_micros(50));
        }
        Worker { devs, c: c2, stop: s2, ready: VecDeque::new() }.run(&mode);
        Ok(())
    })?;
    Ok(BackendThread { counters, tid, name, stop, join: Some(join) })
}

fn make_dev(d: DeviceSpec, mode: &NotifyMode) -> Result<Dev, String> {
    let base = queue_area(d.queue as u64);
    let addrs = RingAddrs { desc: base + DESC_OFF, avail: base + AVAIL_OFF, used: base + USED_OFF };
    let ctl = crate::guest::ctl::CtlView::new(&d.vm.mem, d.home_vcpu as u64);
    let qsize = ctl.get(crate::ctl_off!(qsize)) as u16;
    let q = DeviceQueue::new(&d.vm.mem, addrs, qsize).map_err(|e| format!("queue {}: {e}", d.queue))?;
    let router = d.router.build(d.vm.spec.vcpus as usize).map_err(|e| e.to_string())?;
    let moderator = d.moderation.build(now_ns()).map_err(|e| e.to_string())?;
    let handler = match mode {
        NotifyMode::Exit(c) => Handler::Vhost(VhostHandler::new(c.clone())),
        NotifyMode::Poll => Handler::Poll,
        NotifyMode::Perceptive(c) => Handler::Perceptive(PerceptiveHandler::new(c)),
        NotifyMode::Optimistic(c) => Handler::Optimistic(OptimisticTx::new(c), VhostHandler::new(Default::default())),
    };
    let q2 = q.clone();
    q2.set_kicks(&d.vm.mem, !matches!(handler, Handler::Poll));
    Ok(Dev {
        mem: d.vm.mem.clone(),
        q,
        kick: d.vm.kick_fds[d.queue].clone(),
        sender: IrqSender::new(d.vm.clone(), d.queue, d.home_vcpu, router, d.reroute),
        moderator,
        deadline: None,
        unsignalled: 0,
        handler,
        queued: false,
        service_tsc: sys::ns_to_tsc(d.service_ns as f64),
    })
}

struct Worker {
    devs: Vec<Dev>,
    c: Arc<Counters>,
    stop: Arc<AtomicBool>,
    ready: VecDeque<usize>,
}

/// What taking one entry from the ring gave.
enum Took {
    Request(u64),
    Bad,
    Empty,
}

impl Worker {
    fn run(&mut self, mode: &NotifyMode) {
        let mut fds: Vec<libc::pollfd> =
            self.devs.iter().map(|d| libc::pollfd { fd: d.kick.as_raw_fd(), events: libc::POLLIN, revents: 0 }).collect();
        while !self.stop.load(Ordering::Relaxed) {
            self.fire_deadlines();
            if matches!(mode, NotifyMode::Poll) {
                for i in 0..self.devs.len() {
                    self.poll_round(i);
                }
                continue;
            }
            if self.ready.is_empty() {
                self.wait_kicks(&mut fds);
                continue;
            }
            let i = self.ready.pop_front().unwrap();
            self.devs[i].queued = false;
            match self.devs[i].handler {
                Handler::Vhost(_) => self.run_vhost(i),
                Handler::Perceptive(_) => self.run_perceptive(i),
                Handler::Optimistic(..) => self.run_optimistic(i),
                Handler::Poll => {}
            }
            self.signal(i);
        }
    }

    fn enqueue(&mut self, i: usize) {
        if !self.devs[i].queued {
            self.devs[i].queued = true;
            self.ready.push_back(i);
        }
    }

    /// Sleeps in poll(2) on the kick eventfds until a kick or the next moderation deadline.
    fn wait_kicks(&mut self, fds: &mut [libc::pollfd]) {
        let now = now_ns();
        let timeout_ms = self
            .devs
            .iter()
            .filter_map(|d| d.deadline)
            .map(|t| (t.saturating_sub(now) / 1_000_000) as i32)
            .min()
            .unwrap_or(5)
            .min(5);
        // SAFETY: `fds` is a valid array of pollfd for the eventfds this thread keeps alive.
        let r = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) };
        if r <= 0 {
            return;
        }
        for i in 0..fds.len() {
            if fds[i].revents & libc::POLLIN != 0 {
                if self.devs[i].kick.read().is_ok() {
                    self.c.bump(&self.c.kick_events, 1);
                }
                self.on_kick(i);
            }
        }
    }

    fn on_kick(&mut self, i: usize) {
        let run = match &mut self.devs[i].handler {
            Handler::Perceptive(p) => p.step(PerceptiveEvent::Kick) == PerceptiveAction::Enqueue,
            _ => true,
        };
        if run {
            self.enqueue(i);
        }
    }

    /// Takes and serves one entry.
    fn take(&mut self, i: usize) -> Took {
        let d = &mut self.devs[i];
        self.c.bump(&self.c.polls, 1);
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
                Took::Request(chain.total_len)
            }
        }
    }

    fn set_kicks(&mut self, i: usize, on: bool) {
        let d = &self.devs[i];
        d.q.set_kicks(&d.mem, on);
        self.c.bump(&self.c.mode_switches, 1);
    }

    fn poll_round(&mut self, i: usize) {
        let d = &self.devs[i];
        d.q.set_kicks(&d.mem, false); // keep avail_event parked ahead of the guest
        for _ in 0..256 {
            if let Took::Empty = self.take(i) {
                break;
            }
        }
        self.signal(i);
    }

    /// Exit-based: the vhost handler loop (handle_tx_copy) until Sleep or Requeue.
    fn run_vhost(&mut self, i: usize) {
        let mut act = self.vhost_step(i, VhostEvent::Run);
        loop {
            act = match act {
                VhostAction::DisableNotifyAndDrain => {
                    self.set_kicks(i, false);
                    self.vhost_take(i)
                }
                VhostAction::ProcessNext => self.vhost_take(i),
                VhostAction::BusyPoll { until_ns } => {
                    if now_ns() < until_ns {
                        self.vhost_take(i)
                    } else {
                        self.vhost_step(i, VhostEvent::Empty { now_ns: now_ns() })
                    }
                }
                VhostAction::EnableNotifyAndRecheck => {
                    self.set_kicks(i, true);
                    let has_work = self.devs[i].q.has_work(&self.devs[i].mem);
                    self.vhost_step(i, VhostEvent::Recheck { has_work })
                }
                VhostAction::Requeue => {
                    self.enqueue(i);
                    return;
                }
                VhostAction::Sleep | VhostAction::Ignored => return,
            }
        }
    }

    fn vhost_step(&mut self, i: usize, ev: VhostEvent) -> VhostAction {
        match &mut self.devs[i].handler {
            Handler::Vhost(h) | Handler::Optimistic(_, h) => h.step(ev),
            _ => VhostAction::Ignored,
        }
    }

    fn vhost_take(&mut self, i: usize) -> VhostAction {
        match self.take(i) {
            Took::Request(bytes) => {
                self.optimistic_reply(i);
                self.vhost_step(i, VhostEvent::Buffer { bytes })
            }
            Took::Bad => self.vhost_step(i, VhostEvent::Buffer { bytes: 0 }),
            Took::Empty => self.vhost_step(i, VhostEvent::Empty { now_ns: now_ns() }),
        }
    }

    /// ES2 perceptive: poll while each turn fills the quota, back to notifications otherwise.
    fn run_perceptive(&mut self, i: usize) {
        let step = |s: &mut Self, ev| match &mut s.devs[i].handler {
            Handler::Perceptive(p) => p.step(ev),
            _ => PerceptiveAction::Ignored,
        };
        let mut act = step(self, PerceptiveEvent::Scheduled);
        loop {
            act = match act {
                PerceptiveAction::DisableNotifyAndPoll | PerceptiveAction::PollNext => {
                    if act == PerceptiveAction::DisableNotifyAndPoll {
                        self.set_kicks(i, false);
                    }
                    match self.take(i) {
                        Took::Request(_) | Took::Bad => step(self, PerceptiveEvent::Request),
                        Took::Empty => step(self, PerceptiveEvent::Empty),
                    }
                }
                PerceptiveAction::EnableNotifyAndRecheck => {
                    self.set_kicks(i, true);
                    let has_work = self.devs[i].q.has_work(&self.devs[i].mem);
                    step(self, PerceptiveEvent::Recheck { has_work })
                }
                PerceptiveAction::YieldTurn => {
                    // ES2 joint thread (§5.2): alone on the list at quota -> sleep 10 µs first.
                    if self.ready.is_empty() {
                        self.signal(i);
                        self.short_sleep();
                    }
                    self.enqueue(i);
                    return;
                }
                _ => return,
            }
        }
    }

    /// ES2 optimistic: after each completion ("RX packet") poll the queue up to max_poll_count
    /// rounds (10 µs apart when nothing else runs), then back to notifications.
    fn optimistic_reply(&mut self, i: usize) {
        if let Handler::Optimistic(o, _) = &mut self.devs[i].handler {
            if o.on_rx_packet() == OptimisticAction::DisableNotifyAndEnqueue {
                self.devs[i].q.set_kicks(&self.devs[i].mem, false);
                self.c.bump(&self.c.mode_switches, 1);
            }
        }
    }

    fn run_optimistic(&mut self, i: usize) {
        let polling = matches!(&self.devs[i].handler, Handler::Optimistic(o, _) if o.is_poll());
        if !polling {
            return self.run_vhost(i);
        }
        let mut n = 0;
        loop {
            match self.take(i) {
                Took::Request(_) => {
                    n += 1;
                    self.optimistic_reply(i);
                }
                Took::Bad => {}
                Took::Empty => break,
            }
        }
        let _ = n;
        let act = match &mut self.devs[i].handler {
            Handler::Optimistic(o, _) => o.on_tx_polled(),
            _ => OptimisticAction::Ignored,
        };
        match act {
            OptimisticAction::PollAgain => {
                if self.ready.is_empty() {
                    self.signal(i);
                    self.short_sleep();
                }
                self.enqueue(i);
            }
            OptimisticAction::EnableNotifyAndRecheck => {
                self.set_kicks(i, true);
                if self.devs[i].q.has_work(&self.devs[i].mem) {
                    self.enqueue(i);
                }
            }
            _ => {}
        }
    }

    fn short_sleep(&mut self) {
        self.c.bump(&self.c.short_sleeps, 1);
        std::thread::sleep(Duration::from_micros(10));
    }

    /// Interrupt decision for what device `i` completed since the last call.
    fn signal(&mut self, i: usize) {
        let d = &mut self.devs[i];
        if d.unsignalled == 0 {
            return;
        }
        let pkts = std::mem::take(&mut d.unsignalled);
        if !d.q.should_interrupt(&d.mem) {
            self.c.bump(&self.c.irq_suppressed, 1);
            return;
        }
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
    }

    fn send(&mut self, i: usize) {
        let before = self.devs[i].sender.route_changes;
        self.devs[i].sender.send();
        let moved = self.devs[i].sender.route_changes - before;
        self.c.bump(&self.c.irq_sent, 1);
        self.c.bump(&self.c.route_changes, moved);
    }

    fn fire_deadlines(&mut self) {
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
                }
            }
        }
    }
}
