//! Liveness watchdog (DESIGN §6): a flow with work owed whose threads get to run must keep
//! making progress — packets moving to the client or into the guest, or its application
//! completing work. A flow that makes none for a whole watch window (50 ms, or four send
//! intervals of an open-loop flow) is recorded as stalled (`stalled_flows`): a stall is a
//! model bug (a lost wake-up, a lost interrupt, a window that never reopens), never a result.
//! At the end of a run every flow is judged once more with a 10 ms window (plus one send
//! interval), so that a run shorter than the window (`compare`'s 20 ms cells) is judged too.
//!
//! What is not a stall, because the flow is waiting for something that will come:
//! * **nothing owed**: a paced or thinking client whose requests are all answered (a Poisson
//!   client at 87 requests/s goes 50 ms without a request 1.3 % of the time), a finished job;
//! * **a timer**: TCP's RTO (a segment lost at a full tap queue), the client's delayed ACK,
//!   the flow's own interrupt throttle (FIR at 1 interrupt/s, a VF's EITR);
//! * **a wait, three times over**: the longest wait of its threads for a pCPU, of a turn of its
//!   back end (a per-byte cost can make one that its weight bounds last seconds), of its
//!   client's core (a `client.cores` shared by heavy flows), of an application step on its
//!   vCPUs (20 ms of CPU per request on a vCPU that gets a sixth of a pCPU takes 120 ms);
//! * **an overcommitted host**: its vCPUs waited for a pCPU more than half of the recent
//!   stretch on average (an IPI round trip between two of fourteen vCPUs on one pCPU waits for
//!   each in turn, each wait shorter than the window);
//! * **a receive livelock** (Mogul & Ramakrishnan): a vCPU spent at least half its guest time
//!   in interrupt handlers and NAPI — a real effect of its configuration.
//!
//! The check rides on pCPU 0's host tick and the run's end, so it adds no events and cannot
//! change a run.

use crate::engine::{Time, NS_PER_S};
use std::collections::VecDeque;
use crate::config::Workload;

/// Shortest time without progress that counts as a stall (ns).
pub const WINDOW_NS: Time = 50_000_000;
/// How often flows are checked (ns of simulated time).
pub(crate) const CHECK_EVERY_NS: Time = 10_000_000;
/// An open-loop flow is given this many of its send intervals before it counts as stalled.
const OPEN_LOOP_PERIODS: Time = 4;
/// At the end of a run, the shortest time without progress that counts as a stall of a flow
/// that owes work (beyond one send interval of an open-loop flow): a run shorter than
/// [`WINDOW_NS`] (`compare`'s 20 ms cells) is judged too. Every legitimate wait of the model
/// longer than this is excused on its own: a wait for a pCPU or a back end's turn (3 times it),
/// a timer (the client's delayed ACK at 40 ms, TCP's RTO), a throttled interrupt.
const END_WINDOW_NS: Time = 10_000_000;

/// A stall of one VM's flow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stall {
    /// VM index.
    pub vm: u32,
    /// Last progress before the stall (ns since the start).
    pub since: Time,
    /// When the watchdog saw it (ns).
    pub detected: Time,
    /// When the flow made progress again, if it did (ns).
    pub recovered: Option<Time>,
    /// The flow's state when the stall was seen (for a bug report).
    pub state: String,
}

/// What the watchdog knows of one VM's flow.
#[derive(Debug)]
struct Flow {
    /// Time without progress that counts as a stall for this flow.
    window: Time,
    /// Its open-loop send interval (0: closed loop or unpaced).
    period: Time,
    /// Progress count at the last change.
    count: u64,
    /// Frames delivered to the client at the last change.
    sent: u64,
    /// When it last changed.
    at: Time,
    /// What the flow's threads and vCPUs had done at each check since then (oldest first,
    /// trimmed to the last half window): starvation and livelock are judged over that recent
    /// stretch, not diluted by how the flow began.
    history: VecDeque<(Time, Effort)>,
    /// Longest single wait for a pCPU of any of its threads since that progress.
    gap: Time,
    /// Index in `stalls` of its open stall, if any.
    open: Option<usize>,
}

/// How far a flow has got: its progress count (either direction or its application), and the
/// frames it delivered to the client with whether it has frames waiting to go (in the qdisc, the
/// TX ring or at the port). A flow with frames waiting must deliver some: traffic the other
/// way does not hide a transmit path that stopped (a VF whose TX ring was never cleaned while
/// NAPI polled a receive flood).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Progress {
    pub(crate) count: u64,
    pub(crate) sent: u64,
    pub(crate) sending: bool,
}

/// What a flow's threads and vCPUs have done so far.
#[derive(Debug, Clone, Default)]
pub(crate) struct Effort {
    /// Longest single wait for a pCPU of its threads since the previous check.
    pub(crate) max_wait: u64,
    /// Per vCPU: guest time, and the part spent in interrupt handlers and NAPI (lifetime).
    pub(crate) guest: Vec<(u64, u64)>,
    /// Its vCPUs' time runnable but waiting for a pCPU, summed (lifetime, `run_delay`).
    pub(crate) delay: u64,
}

impl Effort {
    /// Did interrupts and NAPI take at least half of a vCPU's guest time since `e0`?
    fn livelocked(&self, e0: &Effort) -> bool {
        self.guest.iter().zip(&e0.guest).any(|(&(g, i), &(g0, i0))| g > g0 && 2 * (i - i0) >= g - g0)
    }

    /// Did its vCPUs wait for a pCPU for more than half of the `span` since `e0`, on average?
    /// A flow that needs several of them in turn (an IPI round trip between two vCPUs among
    /// fourteen on a pCPU) waits for each once per step, each wait shorter than the window:
    /// the host is that overcommitted around it, slow, not stalled.
    fn overcommitted(&self, e0: &Effort, span: Time) -> bool {
        let n = self.guest.len() as u64;
        n > 0 && span > 0 && 2 * (self.delay - e0.delay) > n * span
    }
}

/// The liveness watchdog of a host.
#[derive(Debug, Default)]
pub struct Watchdog {
    flows: Vec<Option<Flow>>,
    next_check: Time,
    /// Stalls seen (lifetime: a stall in the warm-up is a bug too).
    pub stalls: Vec<Stall>,
}

impl Watchdog {
    /// Watch VM `vm`'s flow, whose open-loop send interval is `period_ns` (None: closed loop
    /// or unpaced: always offered load); a VM with no workload has no flow.
    pub(crate) fn watch(&mut self, vm: usize, has_flow: bool, period_ns: Option<Time>) {
        if self.flows.len() <= vm {
            self.flows.resize_with(vm + 1, || None);
        }
        self.flows[vm] = has_flow.then(|| Flow {
            window: WINDOW_NS.max(period_ns.unwrap_or(0).saturating_mul(OPEN_LOOP_PERIODS)),
            period: period_ns.unwrap_or(0),
            count: 0,
            sent: 0,
            at: 0,
            history: VecDeque::new(),
            gap: 0,
            open: None,
        });
    }
}

impl Watchdog {
    /// Is a periodic check due at `now`? (It then counts as done.)
    pub(crate) fn due(&mut self, now: Time) -> bool {
        if now < self.next_check {
            return false;
        }
        self.next_check = now + CHECK_EVERY_NS;
        true
    }

    /// The VMs whose flows it watches.
    pub(crate) fn watched(&self) -> Vec<usize> {
        (0..self.flows.len()).filter(|&vm| self.flows[vm].is_some()).collect()
    }
}

/// The send interval of an open-loop workload (ns); None for closed-loop or unpaced ones.
pub(crate) fn open_loop_period_ns(w: &Workload) -> Option<Time> {
    let per_s = |rate: f64| (NS_PER_S as f64 / rate).min(u64::MAX as f64 / 8.0) as Time;
    w.open_loop_rate().map(per_s)
}


impl Watchdog {
    /// One look at VM `vm`'s flow: its progress (with frames waiting to go, only their delivery
    /// counts), whether its client waits on a
    /// retransmission timer (a flow that does is slow, not stalled: the timer will fire), and
    /// its threads' effort now.
    pub(crate) fn observe(&mut self, vm: usize, now: Time, p: Progress, timer_armed: bool, effort: Effort, end: bool) {
        let Some(f) = self.flows[vm].as_mut() else { return };
        let moved = if p.sending { p.sent != f.sent } else { p.count != f.count };
        if moved || timer_armed || f.history.is_empty() {
            if let Some(i) = f.open.take() {
                self.stalls[i].recovered = Some(now);
            }
            f.count = p.count;
            f.sent = p.sent;
            f.at = now;
            f.gap = effort.max_wait;
            f.history.clear();
            f.history.push_back((now, effort));
            return;
        }
        f.gap = f.gap.max(effort.max_wait);
        // Keep the latest snapshot at least half a window old, and every later one.
        while f.history.len() > 1 && 2 * (now - f.history[1].0) >= f.window {
            f.history.pop_front();
        }
        let (then, before) = f.history.front().cloned().expect("non-empty");
        f.history.push_back((now, effort.clone()));
        let idle_for = now - f.at;
        let window = if end { f.window.min(END_WINDOW_NS + f.period) } else { f.window };
        if f.open.is_some() || idle_for < window.max(3 * f.gap) {
            return;
        }
        if !effort.livelocked(&before) && !effort.overcommitted(&before, now - then) {
            f.open = Some(self.stalls.len());
            self.stalls.push(Stall { vm: vm as u32, since: f.at, detected: now, recovered: None, state: String::new() });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Time = 1_000_000;

    /// A check's effort: the longest wait for a pCPU since the last check.
    fn waited(w: u64) -> Effort {
        Effort { max_wait: w, guest: vec![(0, 0)], delay: 0 }
    }

    /// Progress of a flow with nothing waiting to transmit.
    fn n(count: u64) -> Progress {
        Progress { count, sent: 0, sending: false }
    }

    fn one_flow(period: Option<Time>) -> Watchdog {
        let mut w = Watchdog::default();
        w.watch(0, true, period);
        w
    }

    #[test]
    fn a_flow_without_progress_whose_threads_run_is_stalled_once_then_recovers() {
        let mut w = one_flow(None);
        w.observe(0, 0, n(5), false, waited(0), false);
        for t in (10..=100).step_by(10) {
            // The vCPU time-shares its pCPU with three others: turns every 12 ms.
            w.observe(0, t * MS, n(5), false, waited(12 * MS), false);
        }
        assert_eq!(w.stalls, vec![Stall { vm: 0, since: 0, detected: 50 * MS, recovered: None, state: String::new() }]);
        w.observe(0, 110 * MS, n(6), false, waited(0), false);
        assert_eq!(w.stalls[0].recovered, Some(110 * MS));
        assert_eq!(w.stalls.len(), 1);
    }

    #[test]
    fn a_flow_whose_thread_waits_long_for_its_turns_gets_three_gaps() {
        let mut w = one_flow(None);
        w.observe(0, 0, n(5), false, waited(0), false);
        // A vCPU behind a nice -19 hog runs 4 ms every 80: the check sees the wait so far, or
        // the whole 76 ms wait if a turn came since the last check. 228 ms may pass.
        for t in (10..=220u64).step_by(10) {
            let ongoing = (t % 80).saturating_sub(4);
            let ended = if t % 80 < 10 { 76 } else { 0 };
            w.observe(0, t * MS, n(5), false, waited(ongoing.max(ended) * MS), false);
        }
        assert!(w.stalls.is_empty());
        w.observe(0, 230 * MS, n(5), false, waited(0), false);
        assert_eq!(w.stalls.len(), 1);
    }

    #[test]
    fn a_vm_busy_with_interrupts_and_napi_is_livelocked_not_stalled() {
        let mut w = one_flow(None);
        let e = |guest: u64, irq: u64| Effort { max_wait: 0, guest: vec![(guest, irq)], delay: 0 };
        w.observe(0, 0, n(5), false, e(0, 0), false);
        w.observe(0, 60 * MS, n(5), false, e(60 * MS, 40 * MS), false); // two thirds in NAPI
        assert!(w.stalls.is_empty());
        w.observe(0, 120 * MS, n(5), false, e(120 * MS, 40 * MS), false); // application only since
        assert_eq!(w.stalls.len(), 1);
    }

    #[test]
    fn an_open_loop_flow_gets_four_send_intervals() {
        let mut w = one_flow(Some(100 * MS));
        w.observe(0, 0, n(1), false, waited(0), false);
        w.observe(0, 390 * MS, n(1), false, waited(0), false);
        assert!(w.stalls.is_empty());
        w.observe(0, 400 * MS, n(1), false, waited(0), false);
        assert_eq!(w.stalls.len(), 1);
    }

    #[test]
    fn a_flow_waiting_on_a_retransmission_timer_is_slow_not_stalled() {
        let mut w = one_flow(None);
        w.observe(0, 0, n(5), false, waited(0), false);
        // A lost request segment: the client's 200 ms RTO is armed, nothing moves meanwhile.
        for t in (10..=200).step_by(10) {
            w.observe(0, t * MS, n(5), true, waited(0), false);
        }
        assert!(w.stalls.is_empty());
        // The timer fired and the flow still does not move: the window counts from then.
        for t in (210..=240).step_by(10) {
            w.observe(0, t * MS, n(5), false, waited(0), false);
        }
        assert!(w.stalls.is_empty());
        w.observe(0, 250 * MS, n(5), false, waited(0), false);
        assert_eq!(w.stalls.len(), 1);
    }

    #[test]
    fn at_the_end_of_a_short_run_a_flow_idle_past_the_end_window_is_stalled() {
        // A 30 ms run (compare's cells): no check of the 50 ms window could see it.
        let mut w = one_flow(None);
        w.observe(0, 0, n(5), false, waited(0), false);
        w.observe(0, 10 * MS, n(5), false, waited(0), false);
        w.observe(0, 20 * MS, n(5), false, waited(0), false);
        assert!(w.stalls.is_empty());
        w.observe(0, 30 * MS, n(5), false, waited(0), true);
        assert_eq!(w.stalls.len(), 1);
        // Idle for less than the end's window, or waiting long for a pCPU: no verdict of stall.
        for (idle, wait) in [(9, 0), (25, 10)] {
            let mut w = one_flow(None);
            w.observe(0, 0, n(5), false, waited(0), false);
            w.observe(0, 30 * MS - idle * MS, n(6), false, waited(0), false);
            w.observe(0, 30 * MS, n(6), false, waited(wait * MS), true);
            assert!(w.stalls.is_empty(), "idle {idle} ms, waited {wait} ms");
        }
        // An open-loop flow gets one send interval more.
        let mut w = one_flow(Some(13 * MS));
        w.observe(0, 0, n(1), false, waited(0), false);
        w.observe(0, 20 * MS, n(1), false, waited(0), true);
        assert!(w.stalls.is_empty());
        w.observe(0, 24 * MS, n(1), false, waited(0), true);
        assert_eq!(w.stalls.len(), 1);
    }

    #[test]
    fn a_flow_whose_vcpus_mostly_wait_for_a_pcpu_is_overcommitted_not_stalled() {
        let mut w = one_flow(None);
        let e = |delay: u64| Effort { max_wait: 5 * MS, guest: vec![(0, 0), (0, 0)], delay };
        w.observe(0, 0, n(5), false, e(0), false);
        // Two vCPUs, each queued 80 % of the time in 10 ms turns: no single long wait.
        for t in (10..=60).step_by(10) {
            w.observe(0, t * MS, n(5), false, e(2 * 8 * t * MS / 10), false);
        }
        assert!(w.stalls.is_empty());
        // Each queued 30 %: the host runs them, the flow should move.
        let mut w = one_flow(None);
        w.observe(0, 0, n(5), false, e(0), false);
        for t in (10..=60).step_by(10) {
            w.observe(0, t * MS, n(5), false, e(2 * 3 * t * MS / 10), false);
        }
        assert_eq!(w.stalls.len(), 1);
    }

    #[test]
    fn a_vm_without_a_flow_is_not_watched() {
        let mut w = Watchdog::default();
        w.watch(0, false, None);
        w.observe(0, 0, n(0), false, waited(0), false);
        w.observe(0, 500 * MS, n(0), false, waited(0), false);
        assert!(w.stalls.is_empty());
    }

    #[test]
    fn a_flow_with_frames_waiting_must_deliver_some_whatever_else_moves() {
        let mut w = one_flow(None);
        let p = |count, sent| Progress { count, sent, sending: true };
        w.observe(0, 0, p(5, 3), false, waited(0), false);
        // Packets keep arriving (count moves) but the waiting frames never leave.
        for t in (10..=40).step_by(10) {
            w.observe(0, t * MS, p(5 + t, 3), false, waited(0), false);
        }
        assert!(w.stalls.is_empty());
        w.observe(0, 50 * MS, p(60, 3), false, waited(0), false);
        assert_eq!(w.stalls.len(), 1);
        w.observe(0, 60 * MS, p(70, 4), false, waited(0), false);
        assert_eq!(w.stalls[0].recovered, Some(60 * MS));
    }
}
