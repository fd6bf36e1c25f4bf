//! The one I/O-thread mechanism every back end runs on: waking on work, running *turns* (one
//! queue at a time, as its policy chooses) item by item — each item costs what the queue side
//! says (`queues.rs`) — yielding between items when another thread wants the pCPU
//! (`need_resched`, as `vhost_worker` does), spinning on its rings (vhost-net's busy polling,
//! a PMD with nothing to do), paying for an ineffective look and for moving to another VM's
//! queue, and sleeping: for good until work comes, for an interruptible while (ES2's 10 µs
//! sleeps), for a timer only (a PMD's power-save sleep), or until a queue is written (a PMD in
//! monitor mode). What to serve, when to poll, when to leave, when to sleep is the policy's
//! (`Policy`); this file only carries it out.
//!
//! It owns its state and touches nothing else: the model calls it on the thread's events and
//! applies what it returns ([`Next`]), and completes the items it finishes.

use crate::model::io::queues::{DevRings, Notice, Work};
use crate::model::io::policy::Policy;
use crate::model::io::seam::{Backend, Decision, Take, Turn, View};
use crate::engine::{Fired, Time, Timer};
use crate::metrics::BusyTime;

/// What the thread does now, for the model to carry out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next {
    /// It is busy until then (an item, or time it owes): its `IoStep`.
    Step(Time),
    /// It spins on its rings, keeping its pCPU, until its spin timer fires (or work is
    /// noticed); `Some(at)`: schedule the timer's `IoPoll` then (`None`: an event already
    /// pending serves, or the spin has no window).
    Spin(Option<Time>),
    /// It yields its pCPU (another thread wants it) and goes on when it runs again.
    Yield,
    /// It sleeps; `Some(at)`: schedule its sleep timer's `IoWake` then (`None`: an event
    /// already pending serves, or the sleep is untimed).
    Sleep(Option<Time>),
}

/// What a notice means for the thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Signal {
    /// Nothing to do (its policy has the work listed; the thread will get to it).
    None,
    /// Wake the sleeping thread.
    Wake,
    /// End its spin now: schedule its spin timer's `IoPoll` now.
    EndSpin,
}

/// How a sleeping thread may be woken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct WakeOn {
    /// By a notice (a kick, a packet on the tap socket).
    notice: bool,
    /// By work made visible without a notice (a buffer added while kicks are off).
    write: bool,
}

/// One back-end thread.
pub(crate) struct IoThread {
    /// Name in reports (`vhost-<vm>`, `es2-joint<i>`, `elvis-io<i>`, `pmd<i>`).
    pub name: String,
    /// The devices it serves (host-wide indices).
    pub devs: Vec<u32>,
    /// In its loop (else asleep).
    pub running: bool,
    /// A wake-up is under way.
    pub wake_pending: bool,
    /// That wake-up is the expiry of its own timed sleep.
    timer_wake: bool,
    /// Its timed sleep's timer (a deadline: a wake-up by work cancels it).
    sleep_timer: Timer,
    /// How its current sleep may end.
    wake_on: WakeOn,
    /// Spinning on its rings, and the timer that ends the spin (a deadline, its window;
    /// re-armed for now when work is noticed).
    spinning: bool,
    /// Work was written to a queue it watches while it ran (not spinning), perhaps behind the
    /// look of this iteration: before a monitor wait it looks again, as DPDK arms its monitor
    /// and re-checks the ring before `rte_power_monitor` waits, so no write is lost.
    written_while_running: bool,
    spin_timer: Timer,
    turn: Option<Turn>,
    /// The item being processed, and its device.
    current: Option<(u32, Work)>,
    /// The device whose queue it served last (its address space is loaded).
    last_dev: Option<u32>,
    /// Time owed before the next item or decision (wake-ups, ineffective looks, switches).
    owed_ns: Time,
    /// A step (an item, or owed time) is under way: its `IoStep` is pending.
    in_step: bool,
    /// Time host interrupt work took from the step under way: it ends that much later.
    stolen_ns: Time,
    /// Busy time (window).
    pub busy: BusyTime,
    /// When its turn under way began, and its longest turn since the watchdog last asked (a
    /// turn is bounded by its policy's weight, and a configured per-byte cost can make that
    /// tens of ms or seconds: the other queues' flows wait that long).
    turn_began: Time,
    longest_turn: Time,
    /// Turns (window), and those that took nothing.
    turns: u64,
    empty_turns: u64,
    /// Items taken (window), those of a VM whose memory is on another node than the thread's
    /// pCPU, and what their remote accesses added (`queues.rs`, profile `[numa]`).
    pub items: u64,
    pub remote_items: u64,
    pub remote_ns: Time,
    pub(crate) policy: Policy,
}

impl IoThread {
    /// A sleeping thread serving `devs` under `policy`.
    pub fn new(name: String, devs: Vec<u32>, policy: Policy) -> Self {
        IoThread {
            name,
            devs,
            running: false,
            wake_pending: false,
            timer_wake: false,
            sleep_timer: Timer::default(),
            wake_on: WakeOn { notice: true, write: false },
            spinning: false,
            written_while_running: false,
            spin_timer: Timer::default(),
            turn: None,
            current: None,
            last_dev: None,
            owed_ns: 0,
            in_step: false,
            stolen_ns: 0,
            busy: BusyTime::default(),
            turn_began: 0,
            longest_turn: 0,
            turns: 0,
            empty_turns: 0,
            items: 0,
            remote_items: 0,
            remote_ns: 0,
            policy,
        }
    }

    /// Host interrupt work took `ns` of its pCPU while it ran (`hypervisor/softirq.rs`): the
    /// step under way (an item, or owed time) ends that much later. A thread spinning between
    /// looks, or on its way to a wake-up or a sleep, loses nothing it would have used. (Not
    /// owed before its next item: a decision to sleep must follow the end of its last turn at
    /// once, or a kick merged in between would be lost.)
    pub fn interrupted(&mut self, ns: Time) {
        if self.in_step {
            self.stolen_ns += ns;
        }
    }

    /// A step began (its `IoStep` is scheduled).
    pub fn step_started(&mut self) {
        self.in_step = true;
    }

    /// Its step's `IoStep` fired: `Some(ns)` if interrupt work took that much of it (the step
    /// ends `ns` later: schedule its event again), else `None` (it is over).
    pub fn step_due(&mut self) -> Option<Time> {
        match std::mem::take(&mut self.stolen_ns) {
            0 => {
                self.in_step = false;
                None
            }
            ns => Some(ns),
        }
    }

    /// It runs from the start, as if woken (a PMD polls from the start).
    pub fn start(&mut self) {
        self.wake_pending = true;
    }

    pub(crate) fn reset_metrics(&mut self, now: Time) {
        self.busy.reset(now);
        self.turns = 0;
        self.empty_turns = 0;
        self.items = 0;
        self.remote_items = 0;
        self.remote_ns = 0;
        self.policy.reset_metrics();
    }

    /// Its looks at its queues in the window and those that found nothing (the policy's count
    /// where it keeps its own: vhost counts handler runs).
    pub fn polls(&self) -> (u64, u64) {
        self.policy.polls().unwrap_or((self.turns, self.empty_turns))
    }

    /// Work for its device `local` (host-wide `dev`): its policy learns of it.
    pub fn notice<R: DevRings + ?Sized>(&mut self, now: Time, local: usize, n: Notice, v: &mut View<'_, R>) -> Signal {
        let dev = self.devs[local];
        self.policy.notice(now, local, dev, n, v);
        self.signal(now, n, true)
    }

    /// Work became visible on its device without a notice (kicks are off): a spinning or
    /// monitoring thread sees it.
    pub fn written(&mut self, now: Time, n: Notice) -> Signal {
        self.signal(now, n, false)
    }

    fn signal(&mut self, now: Time, n: Notice, notice: bool) -> Signal {
        // A notice reaches any thread; work written without one only a thread that watches
        // that ring (a busy-polling vhost its TX ring, a PMD all of them).
        let seen = notice || self.policy.sees_write(n);
        if self.running || self.wake_pending {
            if self.running && !self.spinning && seen {
                self.written_while_running = true;
            }
            if self.spinning && seen {
                self.spinning = false;
                return match self.spin_timer.arm(now) {
                    Some(_) => Signal::EndSpin,
                    None => Signal::None, // its event is due now
                };
            }
            return Signal::None;
        }
        if !(if notice { self.wake_on.notice } else { self.wake_on.write && seen }) {
            return Signal::None;
        }
        self.wake(false);
        Signal::Wake
    }

    fn wake(&mut self, timer: bool) {
        self.wake_pending = true;
        self.timer_wake = timer;
        self.sleep_timer.cancel(); // a timed sleep is over
    }

    /// Its sleep timer's event: `Expired`: the timed sleep ended and woke it; `Reschedule`:
    /// the sleep now ends later (schedule the event again then); `Idle`: stale.
    pub fn sleep_over(&mut self, now: Time) -> Fired {
        match self.sleep_timer.fired(now) {
            Fired::Expired if self.running || self.wake_pending => Fired::Idle,
            Fired::Expired => {
                self.wake(true);
                Fired::Expired
            }
            f => f,
        }
    }

    /// Its spin timer's event (its window's end, or work noticed): go on with its turn; or
    /// `Spin(Some(at))`: the spin now ends later (its event again then); `None`: stale.
    pub fn spin_over<R: DevRings + ?Sized>(&mut self, now: Time, v: &mut View<'_, R>) -> Option<Next> {
        match self.spin_timer.fired(now) {
            Fired::Expired => {
                self.spinning = false;
                Some(self.next(now, v))
            }
            Fired::Reschedule(at) => Some(Next::Spin(Some(at))),
            Fired::Idle => None,
        }
    }

    /// CPU it owes before its next item (its pCPU's idle-state exit: host.cstates wake_cpu_ns).
    pub fn owe(&mut self, ns: Time) {
        self.owed_ns += ns;
    }

    /// It runs on its pCPU: after a wake-up (its CPU time for that first), or resuming after
    /// a preemption.
    pub fn run<R: DevRings + ?Sized>(&mut self, now: Time, v: &mut View<'_, R>) -> Next {
        self.busy.set(now, true);
        if !self.running {
            self.owed_ns += if std::mem::take(&mut self.timer_wake) { v.costs.timed_sleep_ns } else { v.costs.wakeup_ns };
        }
        self.running = true;
        self.wake_pending = false;
        self.next(now, v)
    }

    /// Its step (an item, or owed time) is over: the item it finished, for the model to
    /// complete (then [`Self::after_item`]).
    pub fn finish_item(&mut self) -> Option<(u32, Work)> {
        let done = self.current.take();
        if done.is_some() {
            if let Some(turn) = self.turn.as_mut() {
                turn.taken += 1;
            }
        }
        done
    }

    /// The model completed item `w` of device `dev`: the policy sees it (and may end the turn).
    pub fn after_item<R: DevRings + ?Sized>(&mut self, now: Time, dev: u32, w: Work, v: &mut View<'_, R>) {
        let Some(turn) = self.turn else { return };
        if self.policy.after_item(now, turn, dev, w, v) {
            self.end_turn(now);
        }
    }

    /// The item of the step under way, if it is one: its device and whether it is RX.
    pub fn current_item(&self) -> Option<(u32, bool)> {
        self.current.map(|(dev, w)| (dev, matches!(w, Work::Rx(_))))
    }

    /// Its turn under way ends at `now`.
    fn end_turn(&mut self, now: Time) {
        self.turn = None;
        self.longest_turn = self.longest_turn.max(now - self.turn_began);
    }

    /// Its longest turn since the last call, the one under way included (the liveness
    /// watchdog's question: flows of its other queues wait for a turn to end).
    pub fn take_longest_turn(&mut self, now: Time) -> Time {
        let ongoing = if self.turn.is_some() { now - self.turn_began } else { 0 };
        std::mem::take(&mut self.longest_turn).max(ongoing)
    }

    /// It leaves its pCPU (yielding or asleep).
    pub fn off_cpu(&mut self, now: Time) {
        self.busy.set(now, false);
    }

    /// Take the turn's next item, or end the turn and ask the policy what next.
    pub fn next<R: DevRings + ?Sized>(&mut self, now: Time, v: &mut View<'_, R>) -> Next {
        loop {
            if let Some(turn) = self.turn {
                let dev = self.devs[turn.local];
                match self.policy.take(now, turn, dev, v) {
                    Take::Item(w, cost) => {
                        let remote = v.costs.remote_ns(dev, w.bytes(), v.socket);
                        self.items += 1;
                        self.remote_items += u64::from(remote > 0);
                        self.remote_ns += remote;
                        self.current = Some((dev, w));
                        return Next::Step(now + std::mem::take(&mut self.owed_ns) + cost);
                    }
                    Take::Spin(until) => return self.spin(until),
                    Take::End => {
                        if turn.taken == 0 && self.policy.empty_look_costs() {
                            self.empty_turns += 1;
                            self.owed_ns += v.costs.poll_ns;
                        }
                        self.end_turn(now);
                    }
                }
            }
            if self.owed_ns > 0 {
                return Next::Step(now + std::mem::take(&mut self.owed_ns));
            }
            if v.yield_wanted && self.policy.yields_between_turns() {
                return Next::Yield;
            }
            match self.policy.decide(now, &self.devs, v) {
                Decision::Turn(turn) => {
                    let dev = self.devs[turn.local];
                    if self.last_dev.is_some_and(|d| v.dev_vm[d as usize] != v.dev_vm[dev as usize]) {
                        self.owed_ns += v.costs.queue_switch_ns;
                    }
                    self.last_dev = Some(dev);
                    self.turns += 1;
                    self.turn = Some(turn);
                    self.turn_began = now;
                }
                Decision::Spin(until) => {
                    if std::mem::take(&mut self.written_while_running) {
                        // Work written while it looked at other queues (or paid for an empty
                        // look): a spinning PMD would see it, so look at every queue again
                        // rather than spin blind to it.
                        continue;
                    }
                    return self.spin(until);
                }
                Decision::Sleep { until, notice, write } => {
                    if std::mem::take(&mut self.written_while_running) && write {
                        continue; // the monitor's re-check: look at every queue again
                    }
                    self.running = false;
                    self.wake_on = WakeOn { notice, write };
                    return Next::Sleep(until.and_then(|at| self.sleep_timer.arm(at)));
                }
            }
        }
    }
    /// It spins on its rings until `until` (or until work is noticed; for good if `None`).
    fn spin(&mut self, until: Option<Time>) -> Next {
        self.spinning = true;
        match until {
            Some(at) => Next::Spin(self.spin_timer.arm(at)),
            None => {
                self.spin_timer.cancel();
                Next::Spin(None)
            }
        }
    }
}
