//! Shared I/O threads (`[host.io] handling = "es2" | "elvis"`): one host thread serves the
//! virtqueues of several devices, in *turns* — one queue at a time, as its policy chooses.
//!
//! This module is the mechanics every shared thread has: waking on work, running a turn item
//! by item (each item costs what a vhost handler's does), yielding between items when another
//! thread wants the pCPU (`need_resched`), paying for an ineffective look and for moving to
//! another VM's queue, and sleeping — for good when idle, or for a timed, interruptible while
//! (ES2's 10 µs sleeps). Which queue, when to poll, when to leave, when to sleep: the policy's,
//! through its adapter (`es2_io.rs`: `eventpath_policy::es2`; `elvis_io.rs`:
//! `eventpath_policy::elvis`). Stock vhost-net threads (one per device) are `vhost.rs`.
//!
//! Costs (profile `[vhost]`): a taken buffer or packet costs `tx_/rx_packet_ns` + bytes; a turn
//! that took nothing costs `poll_ns` (the look at a ring that only a polling thread pays over
//! and over); a turn on another VM's queue than the previous one first costs `queue_switch_ns`.

use super::elvis_io::ElvisIo;
use super::es2_io::Es2Io;
use super::vhost::{Notice, Work};
use super::{Ev, Host};
use crate::engine::{round_ns, EventQueue, Time};
use crate::metrics::BusyTime;

/// How a turn serves its queue (set by the adapter when the turn starts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TurnMode {
    /// ES2 perceptive TX handler (Algorithm 1).
    Perceptive,
    /// ES2 optimistic TX handler in polling mode (Algorithm 2).
    OptimisticPoll,
    /// A regular vhost handler (kick- or packet-driven).
    Regular,
    /// An ELVIS turn on a queue that is polled (`true`) or notified.
    Elvis(bool),
    /// A scheduled handler with nothing to do (a stale entry): the turn ends at once.
    Nothing,
}

/// One turn: a queue of one of the thread's devices.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Turn {
    /// The device's index among the thread's devices.
    pub local: usize,
    /// The RX queue (else TX).
    pub rx: bool,
    /// Items taken so far.
    pub taken: u32,
    pub mode: TurnMode,
}

/// What the policy says the thread does next.
pub(crate) enum Decision {
    Turn(Turn),
    /// Sleep until the time given (interruptible), or until woken.
    Sleep(Option<Time>),
}

/// The policy behind a shared thread.
pub(crate) enum IoPolicy {
    Es2(Box<Es2Io>),
    Elvis(Box<ElvisIo>),
}

/// A shared I/O thread.
pub(crate) struct IoThread {
    /// Name in reports (`es2-joint<i>`, `elvis-io<i>`).
    pub name: String,
    /// The devices it serves (host-wide indices).
    pub devs: Vec<u32>,
    /// In its loop (else asleep).
    pub running: bool,
    /// A wake-up is under way.
    pub wake_pending: bool,
    /// That wake-up is the expiry of its own timed sleep.
    timer_wake: bool,
    /// Generation of its timed sleep (an [`Ev::IoWake`] of another is stale).
    gen: u32,
    turn: Option<Turn>,
    /// The item being processed, and its device.
    current: Option<(u32, Work)>,
    /// The device whose queue it served last (its address space is loaded).
    last_dev: Option<u32>,
    /// Time owed before the next item or decision (ineffective looks, queue switches).
    owed_ns: Time,
    /// Busy time (window).
    pub busy: BusyTime,
    /// Turns (window), and those that took nothing.
    pub turns: u64,
    pub empty_turns: u64,
    pub policy: IoPolicy,
}

impl IoThread {
    pub fn new(name: String, devs: Vec<u32>, policy: IoPolicy) -> Self {
        IoThread {
            name,
            devs,
            running: false,
            wake_pending: false,
            timer_wake: false,
            gen: 0,
            turn: None,
            current: None,
            last_dev: None,
            owed_ns: 0,
            busy: BusyTime::default(),
            turns: 0,
            empty_turns: 0,
            policy,
        }
    }

    pub(crate) fn reset_metrics(&mut self, now: Time) {
        self.busy.reset(now);
        self.turns = 0;
        self.empty_turns = 0;
    }

    /// End the current turn.
    pub(crate) fn end_turn(&mut self) {
        self.turn = None;
    }
}

impl Host {
    /// Thread id of shared I/O thread `t`.
    pub(crate) fn io_thread_tid(&self, t: u32) -> u32 {
        self.vcpus.len() as u32 + t
    }

    /// The current turn of thread `t` (the adapters' view).
    pub(crate) fn io_turn(&self, t: u32) -> Option<Turn> {
        self.io[t as usize].turn
    }

    /// Work for device `dev`: its policy learns of it, and the thread wakes if asleep.
    pub(crate) fn io_notice(&mut self, now: Time, dev: u32, n: Notice, q: &mut EventQueue<Ev>) {
        let (t, local) = self.dev_io[dev as usize];
        match self.io[t as usize].policy {
            IoPolicy::Es2(_) => self.es2_notice(t, local as usize, n),
            IoPolicy::Elvis(_) => self.elvis_notice(now, t, local as usize, n),
        }
        self.io_signal(now, t, false, q);
    }

    /// Wake thread `t` unless it is in its loop or already waking (its policy's lists hold the
    /// new work either way); `timer`: its own timed sleep expired.
    fn io_signal(&mut self, now: Time, t: u32, timer: bool, q: &mut EventQueue<Ev>) {
        let th = &mut self.io[t as usize];
        if th.running || th.wake_pending {
            return;
        }
        th.wake_pending = true;
        th.timer_wake = timer;
        th.gen = th.gen.wrapping_add(1); // a timed sleep is over
        let tid = self.io_thread_tid(t);
        if timer {
            self.sched.wake_by_timer(now, tid);
            self.drain(now, q);
        } else {
            self.wake_thread(now, tid, q);
        }
    }

    /// Thread `t`'s timed sleep ends (`host.timer_wakeup_ns` to run again from idle).
    pub(crate) fn io_wake(&mut self, now: Time, t: u32, gen: u32, q: &mut EventQueue<Ev>) {
        if self.io[t as usize].gen == gen {
            self.io_signal(now, t, true, q);
        }
    }

    /// Thread `t` runs on its pCPU: after a wake-up, or resuming after a preemption.
    pub(crate) fn io_run(&mut self, now: Time, t: u32, q: &mut EventQueue<Ev>) {
        let th = &mut self.io[t as usize];
        let v = &self.profile.vhost;
        let wakeup = round_ns(if std::mem::take(&mut th.timer_wake) { v.timed_sleep_ns.value } else { v.wakeup_ns.value });
        th.busy.set(now, true);
        if !th.running {
            // A wake-up (not a resumption after preemption): its own CPU time first.
            th.owed_ns += wakeup;
        }
        th.running = true;
        th.wake_pending = false;
        self.io_next(now, t, q);
    }

    /// An item (or owed time) is done: complete the item, let the policy see it, go on.
    pub(crate) fn io_step(&mut self, now: Time, t: u32, q: &mut EventQueue<Ev>) {
        if let Some((dev, w)) = self.io[t as usize].current.take() {
            if let Some(turn) = self.io[t as usize].turn.as_mut() {
                turn.taken += 1;
            }
            self.complete(now, dev, w, q);
            match self.io[t as usize].policy {
                IoPolicy::Es2(_) => self.es2_after_item(now, t, w),
                IoPolicy::Elvis(_) => self.elvis_after_item(now, t),
            }
        }
        let cpu = self.cpu_of(self.io_thread_tid(t));
        if self.should_yield(cpu) {
            // Yield between items, as vhost_worker does; resume in `io_run`.
            self.io[t as usize].busy.set(now, false);
            return self.leave_cpu(now, cpu, false, q);
        }
        self.io_next(now, t, q);
    }

    /// Take the turn's next item, or end the turn and ask the policy what next.
    fn io_next(&mut self, now: Time, t: u32, q: &mut EventQueue<Ev>) {
        let poll_ns = round_ns(self.profile.vhost.poll_ns.value);
        let switch_ns = round_ns(self.profile.vhost.queue_switch_ns.value);
        loop {
            if let Some(turn) = self.io[t as usize].turn {
                let dev = self.io[t as usize].devs[turn.local];
                let item = match self.io[t as usize].policy {
                    IoPolicy::Es2(_) => self.es2_take(now, t, turn),
                    IoPolicy::Elvis(_) => self.elvis_take(now, t, turn),
                };
                let th = &mut self.io[t as usize];
                if let Some((w, cost)) = item {
                    th.current = Some((dev, w));
                    q.at(now + std::mem::take(&mut th.owed_ns) + cost, Ev::IoStep { thread: t });
                    return;
                }
                if turn.taken == 0 {
                    th.empty_turns += 1;
                    th.owed_ns += poll_ns;
                }
                th.end_turn();
            }
            let th = &mut self.io[t as usize];
            if th.owed_ns > 0 {
                q.at(now + std::mem::take(&mut th.owed_ns), Ev::IoStep { thread: t });
                return;
            }
            let cpu = self.cpu_of(self.io_thread_tid(t));
            if self.should_yield(cpu) {
                self.io[t as usize].busy.set(now, false);
                return self.leave_cpu(now, cpu, false, q);
            }
            let decision = match self.io[t as usize].policy {
                IoPolicy::Es2(_) => self.es2_decide(now, t),
                IoPolicy::Elvis(_) => self.elvis_decide(now, t),
            };
            if let Decision::Turn(turn) = &decision {
                let dev = self.io[t as usize].devs[turn.local];
                if self.io[t as usize].last_dev.is_some_and(|d| self.vms_of_devs_differ(d, dev)) {
                    self.io[t as usize].owed_ns += switch_ns;
                }
            }
            let th = &mut self.io[t as usize];
            match decision {
                Decision::Turn(turn) => {
                    let dev = th.devs[turn.local];
                    th.last_dev = Some(dev);
                    th.turns += 1;
                    th.turn = Some(turn);
                }
                Decision::Sleep(until) => {
                    th.running = false;
                    th.busy.set(now, false);
                    if let Some(at) = until {
                        q.at(at, Ev::IoWake { thread: t, gen: th.gen });
                    }
                    return self.leave_cpu(now, cpu, true, q);
                }
            }
        }
    }

    /// Do devices `a` and `b` belong to different VMs (a page-table change between them)?
    fn vms_of_devs_differ(&self, a: u32, b: u32) -> bool {
        self.devs[a as usize].vm != self.devs[b as usize].vm
    }
}

/// The shared I/O threads of a checked scenario whose `[host.io] handling` is es2 or elvis, and
/// each device's (thread, index among its devices) — `(u32::MAX, 0)` for a VF, which has no
/// back-end thread. `add(name, pin)` registers each thread with the host scheduler, in order.
pub(crate) fn build(c: &crate::scenario::Checked, add: &mut dyn FnMut(&str, Option<u32>)) -> (Vec<IoThread>, Vec<(u32, u32)>) {
    use crate::scenario::{Handling, NetKind};
    let s = &c.scenario;
    let io = &s.host.io;
    let virtio: Vec<u32> = (0..s.vm.len() as u32).filter(|&d| s.vm[d as usize].net.kind == NetKind::Virtio).collect();
    let cores = io.cores.clone().unwrap_or_default();
    let vhost = super::vhost::vhost_config(&c.profile, 0);
    let groups = match io.handling {
        Handling::Es2 => eventpath_policy::es2::combine_devices(virtio.len(), io.es2().3.combining_level),
        // One thread per I/O core, the devices split in contiguous, balanced groups.
        _ => eventpath_policy::es2::combine_devices(virtio.len(), virtio.len().div_ceil(cores.len().max(1)).max(1) as u32),
    };
    let mut threads = Vec::new();
    let mut dev_io = vec![(u32::MAX, 0); s.vm.len()];
    for (g, members) in groups.iter().enumerate() {
        let devs: Vec<u32> = members.iter().map(|&i| virtio[i]).collect();
        for (local, &d) in devs.iter().enumerate() {
            dev_io[d as usize] = (g as u32, local as u32);
        }
        let pin = (!cores.is_empty()).then(|| cores[g % cores.len()]);
        let (name, policy) = match io.handling {
            Handling::Es2 => {
                let (switch, p, o, j) = io.es2();
                (format!("es2-joint{g}"), IoPolicy::Es2(Box::new(Es2Io::new(devs.len(), switch, &p, &o, &j, &vhost))))
            }
            _ => (format!("elvis-io{g}"), IoPolicy::Elvis(Box::new(ElvisIo::new(io.elvis(), devs.len())))),
        };
        add(&name, pin);
        threads.push(IoThread::new(name, devs, policy));
    }
    (threads, dev_io)
}
