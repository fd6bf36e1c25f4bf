//! One policy, two worlds (DESIGN §2): ELVIS's scheduler (`eventpath_policy::elvis`) exists
//! once; each world's adapter feeds it the same observations — kicks, the I/O thread's turns,
//! and, for a polled queue found empty, the wall time (`now`): the prototype's idleness rule
//! (`roundrobin_poll`: more than `poll_stop_idle` = 3 s since polling started or last found
//! work). Neither adapter reads a producer's run clock any more (issue 28): how many vCPUs fill
//! a queue, and whether the host scheduler runs them, enters the rule only through the requests
//! they make. The simulator's adapter is `crates/sim/src/model/io/elvis.rs`, the testbed's
//! `crates/kvm/src/backend/serve/elvis.rs`; both pass `now` to `on_empty`.
//!
//! One scripted event sequence — kicks on two queues, the I/O thread's turns (every 25 µs:
//! `next`, then requests until empty or `Leave`, then `on_empty`), and producer vCPUs that the
//! host scheduler takes off their pCPUs for whole stretches — drives two `ElvisScheduler`s: (a)
//! with the simulator's CFS (`eventpath_sim::model::sched`) deciding which vCPU runs (each
//! shares its pCPU with a nice −20 thread that takes it for a gap), (b) with a scripted kernel
//! (the testbed's host). A vCPU produces only while its world runs it. VM 0 has two vCPUs
//! filling queue 0, VM 1 one vCPU filling queue 1.

use eventpath_policy::elvis::{ElvisConfig, ElvisDecision, ElvisScheduler, ModeChange, QueueId, QueueMode, ServeAction, Source};
use eventpath_sim::engine::Rng;
use eventpath_sim::model::sched::{Params, Sched, Scheduler};
use eventpath_sim::profile::Profile;

const US: u64 = 1_000;
const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;
/// The I/O thread's turn cadence.
const TICK: u64 = 25 * US;
/// vCPU v fills queue `QUEUE_OF[v]`: VM 0 (queue 0) has vCPUs 0 and 1, VM 1 (queue 1) vCPU 2.
const QUEUE_OF: [usize; 3] = [0, 0, 1];

#[derive(Clone, Copy, Debug)]
enum Ev {
    /// vCPU v adds a request to its queue if it is running; it kicks when the queue is notified
    /// and was drained (event index).
    Produce(usize),
    /// The host scheduler takes vCPU v off its pCPU.
    Preempt(usize),
    /// vCPU v runs again.
    Resume(usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rec {
    Kick(QueueId, ModeChange),
    Next(ElvisDecision),
    Request(QueueId, ServeAction),
    Empty(QueueId, ModeChange),
}

#[derive(Default)]
struct Trace {
    decisions: Vec<(u64, Rec)>,
    /// Requests each vCPU made.
    produced: [u32; 3],
}

impl Trace {
    fn at(&self, q: QueueId, change: ModeChange) -> Vec<u64> {
        self.decisions
            .iter()
            .filter(|(_, r)| matches!(r, Rec::Kick(x, c) | Rec::Empty(x, c) if *x == q && *c == change))
            .map(|(t, _)| *t)
            .collect()
    }
}

/// A world's host scheduler: which vCPUs run.
trait World {
    fn preempt(&mut self, v: usize, now: u64);
    fn resume(&mut self, v: usize, now: u64);
    fn running(&self, v: usize) -> bool;
}

/// (a) The simulator's CFS: vCPU v on pCPU v beside a nice −20 thread that wakes for a gap.
struct SimWorld {
    sched: Scheduler,
    vcpu: Vec<u32>,
    other: Vec<u32>,
}

impl SimWorld {
    fn new(n: usize) -> Self {
        let profile = Profile::load("elvis").expect("built-in profile");
        let mut sched = Scheduler::Cfs(Sched::new(Params::from_profile(&profile, n as u32), n as u32));
        let vcpu: Vec<u32> = (0..n).map(|c| sched.add(0, 1 << c, Rng::from_seed(c as u64))).collect();
        let other: Vec<u32> = (0..n).map(|c| sched.add(-20, 1 << c, Rng::from_seed(100 + c as u64))).collect();
        for &t in &vcpu {
            sched.start(0, t);
        }
        let mut w = SimWorld { sched, vcpu, other };
        w.drain();
        w
    }
    fn drain(&mut self) {
        while self.sched.next_action().is_some() {}
    }
}

impl World for SimWorld {
    fn preempt(&mut self, v: usize, now: u64) {
        self.sched.wake(now, self.other[v], None);
        self.sched.deschedule(now, v as u32, false);
        self.drain();
    }
    fn resume(&mut self, v: usize, now: u64) {
        self.sched.deschedule(now, v as u32, true);
        self.drain();
    }
    fn running(&self, v: usize) -> bool {
        self.sched.current(v as u32) == Some(self.vcpu[v])
    }
}

/// (b) The testbed's host, scripted: a vCPU thread runs unless preempted.
struct TestbedWorld(Vec<bool>);

impl World for TestbedWorld {
    fn preempt(&mut self, v: usize, _: u64) {
        self.0[v] = false;
    }
    fn resume(&mut self, v: usize, _: u64) {
        self.0[v] = true;
    }
    fn running(&self, v: usize) -> bool {
        self.0[v]
    }
}

/// The script: VM 0's two vCPUs each produce every 100 µs (staggered) until 20 ms, are both
/// descheduled for 60 ms, produce again 80–100 ms, then stop; VM 1 produces every 50 µs until
/// 30 ms, then every 2 ms from 3.5 s (after its queue went back to notifications).
fn script() -> (u64, Vec<(u64, Ev)>) {
    let mut ev = Vec::new();
    let every = |ev: &mut Vec<(u64, Ev)>, v: usize, first: u64, last: u64, step: u64| {
        ev.extend((first..=last).step_by(step as usize).map(|t| (t, Ev::Produce(v))));
    };
    every(&mut ev, 0, 50 * US, 20 * MS, 100 * US);
    every(&mut ev, 1, 100 * US, 20 * MS, 100 * US);
    for v in [0, 1] {
        ev.push((20 * MS + 10 * US, Ev::Preempt(v)));
        ev.push((80 * MS, Ev::Resume(v)));
    }
    every(&mut ev, 0, 80 * MS + 50 * US, 100 * MS, 100 * US);
    every(&mut ev, 1, 80 * MS + 100 * US, 100 * MS, 100 * US);
    // Produce events while descheduled are scripted too: the world decides they do not happen.
    every(&mut ev, 0, 30 * MS, 70 * MS, 1 * MS);
    every(&mut ev, 2, 25 * US, 30 * MS, 50 * US);
    every(&mut ev, 2, 3500 * MS, 3600 * MS, 2 * MS);
    ev.sort_by_key(|&(t, _)| t);
    (3600 * MS, ev)
}

fn drive(world: &mut dyn World) -> Trace {
    let (end, events) = script();
    let mut events = events.into_iter().peekable();
    let mut s = ElvisScheduler::new(ElvisConfig::default(), 2);
    let mut pending = [0u32; 2];
    let mut tr = Trace::default();
    let mut t = 0;
    while t <= end {
        while let Some(&(at, ev)) = events.peek().filter(|(at, _)| *at <= t) {
            events.next();
            match ev {
                Ev::Produce(v) if world.running(v) => {
                    tr.produced[v] += 1;
                    let q = QUEUE_OF[v];
                    pending[q] += 1;
                    if pending[q] == 1 && matches!(s.mode(q), Some(QueueMode::Notify { .. })) {
                        tr.decisions.push((at, Rec::Kick(q, s.on_kick(q, at))));
                    }
                }
                Ev::Produce(_) => {}
                Ev::Preempt(v) => world.preempt(v, at),
                Ev::Resume(v) => world.resume(v, at),
            }
        }
        let d = s.next(t);
        tr.decisions.push((t, Rec::Next(d)));
        if let ElvisDecision::Serve(q, _) = d {
            loop {
                if pending[q] > 0 {
                    pending[q] -= 1;
                    let a = s.on_request(t);
                    tr.decisions.push((t, Rec::Request(q, a)));
                    if a == ServeAction::Leave {
                        break;
                    }
                } else {
                    tr.decisions.push((t, Rec::Empty(q, s.on_empty(t))));
                    break;
                }
            }
        }
        t += TICK;
    }
    tr
}

/// Both worlds run the script's vCPUs alike, so the policy makes the same decisions at the
/// same times in both: the observations are the same.
#[test]
fn same_events_same_decisions_in_both_worlds() {
    let sim = drive(&mut SimWorld::new(3));
    let tb = drive(&mut TestbedWorld(vec![true; 3]));
    assert_eq!(sim.produced, tb.produced, "the worlds ran the vCPUs differently");
    // VM 0's vCPUs made nothing while descheduled (the scripted produce events in the gap).
    assert_eq!(sim.produced, [400, 400, 600 + 51], "the 41 requests scripted in VM 0's gap must not happen");
    assert_eq!(sim.decisions.len(), tb.decisions.len());
    for (a, b) in sim.decisions.iter().zip(&tb.decisions) {
        assert_eq!(a, b, "the simulator's and the testbed's host drive the policy to different decisions");
    }
}

/// The prototype's rule in both worlds: the first kick polls a queue; a VM whose two vCPUs are
/// both descheduled for 60 ms keeps its polling (3 s of wall time is the limit, host
/// scheduling gaps are milliseconds); a queue stops being polled at its first empty look more
/// than 3 s after its last work, and the next kick polls it again.
#[test]
fn the_prototypes_idleness_rule_in_both_worlds() {
    for (name, tr) in [("simulator", drive(&mut SimWorld::new(3))), ("testbed", drive(&mut TestbedWorld(vec![true; 3])))] {
        // The first kick of each queue polled it (one event per jiffy).
        assert_eq!(tr.at(0, ModeChange::StartPolling), [50 * US], "{name}");
        assert_eq!(tr.at(1, ModeChange::StartPolling), [25 * US, 3500 * MS], "{name}");
        // Queue 0: polled through the 60 ms gap, looked at all along.
        let polled_in_gap = tr.decisions.iter().filter(|(t, r)| (21 * MS..80 * MS).contains(t) && *r == Rec::Next(ElvisDecision::Serve(0, Source::Poll))).count();
        assert!(polled_in_gap > 1000, "{name}: {polled_in_gap}");
        // Its last work was at 100 ms (found on the 25 µs grid): stop at the first look after 3.1 s.
        let stop0 = tr.at(0, ModeChange::StopPolling);
        assert_eq!(stop0.len(), 1, "{name}: {stop0:?}");
        assert!(stop0[0] > 3100 * MS && stop0[0] <= 3100 * MS + 2 * TICK, "{name}: {stop0:?}");
        // Queue 1's last work at 29.975 ms: it stops 3 s later, before its new kicks at 3.5 s.
        let stop1 = tr.at(1, ModeChange::StopPolling);
        assert_eq!(stop1.len(), 1, "{name}: {stop1:?}");
        let last1 = 29_975 * US;
        assert!(stop1[0] > last1 + 3 * S && stop1[0] <= last1 + 3 * S + 2 * TICK, "{name}: {stop1:?}");
    }
}
