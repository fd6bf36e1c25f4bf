//! One policy, two worlds (DESIGN §2): ES2's joint thread and TX mode switches
//! (`eventpath_policy::es2`) exist once; each world's adapter turns its own state into the
//! policy's observations and carries out its decisions.
//! * Simulator: its adapter itself (`crates/sim/src/model/io/es2.rs`), run as the I/O thread of
//!   `io/thread.rs` runs it by [`Es2Driver`](eventpath_sim::model::es2_driver::Es2Driver): a
//!   TX kick is noticed (`notice`) as soon as no adapter call is under way; a turn starts with
//!   `next` and `start` and takes items (`take`, `after_item`) until the adapter ends it. The
//!   adapter sees its rings through `es2_driver::TxRings`, here the model's counters and its
//!   `KickGate` over `eventpath_policy::notify` ([`SimWorld`]).
//! * Testbed: the real adapter, [`JointAdapter`] (`crates/kvm/src/backend/joint.rs`), over real
//!   split rings in memory ([`DeviceQueue`]: `enable_notification()` answers the re-check), fed
//!   by a guest that publishes requests and kicks when `avail_event` asks (`driver_should_kick`);
//!   kicks are eventfd counts the thread reads at the end of each turn and in its waits, in the
//!   order the guest made them (`serve/joint.rs`, `serve.rs` `kicked`).
//!
//! One script of guest requests on three queues drives both. Time is the script's: a request
//! taken costs [`ITEM`], an empty look [`LOOK`] (so that requests can race a re-enable: the
//! testbed's rings and the simulator's counters must answer the re-check alike), everything else
//! nothing; costs and the host scheduler are the worlds' own and left out. Asserted: the same
//! decisions at the same times — every `JointThread::next`, every ring operation (take, kicks
//! off, kicks on with the re-check's answer) and every guest kick.
//!
//! The contrast: a testbed that took its kicks in device order (the order ppoll(2) reports the
//! eventfds in, before this test) parts from the simulator at the first turn during which two
//! devices kicked in the other order.

#[path = "es2_two_worlds/sim.rs"]
mod sim;
#[path = "es2_two_worlds/testbed.rs"]
mod testbed;

use eventpath_policy::es2::{HandlerKind, JointDecision};
use eventpath_sim::scenario::{Es2Switch, Handling, IoHandling};
use sim::SimWorld;
use testbed::TestbedWorld;

const US: u64 = 1_000;
/// A request taken and served.
const ITEM: u64 = US;
/// A look at an empty ring.
const LOOK: u64 = 100;
const END: u64 = 3_000 * US;
const QSIZE: u16 = 256;
const BYTES: u64 = 64;

/// One decision or ring operation, as either world makes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rec {
    Next(JointDecision),
    Take(usize, bool),
    Enable(usize, bool),
    Disable(usize),
    Kick(usize),
}

type Trace = Vec<(u64, Rec)>;

/// The guest's requests: per queue, the times it publishes them.
#[derive(Clone)]
struct Guest {
    arrivals: Vec<Vec<u64>>,
    next: Vec<usize>,
}

impl Guest {
    fn new(mut arrivals: Vec<Vec<u64>>) -> Self {
        arrivals.iter_mut().for_each(|a| a.sort_unstable());
        Guest { next: vec![0; arrivals.len()], arrivals }
    }
    /// The earliest request not yet published: (time, queue).
    fn peek(&self) -> Option<(u64, usize)> {
        (0..self.arrivals.len()).filter_map(|q| self.arrivals[q].get(self.next[q]).map(|&t| (t, q))).min()
    }
    /// The next request due by `now`, in time order, as (its time, its queue); marks it
    /// published. (The guest made it at its time; the device sees it at its next look.)
    fn due(&mut self, now: u64) -> Option<(u64, usize)> {
        let (t, q) = self.peek().filter(|&(t, _)| t <= now)?;
        self.next[q] += 1;
        Some((t, q))
    }
}

/// What both worlds' thread loops need from their world.
trait World {
    fn t(&mut self) -> &mut u64;
    fn guest(&self) -> &Guest;
    /// Publishes the requests due by the current time; true if one kicked.
    fn publish(&mut self) -> bool;
}

/// The thread asleep until `until` (or for good), woken by a kick. False: the script is over.
fn wait(w: &mut impl World, until: Option<u64>) -> bool {
    loop {
        match w.guest().peek() {
            Some((at, _)) if at <= END && until.is_none_or(|u| at < u) => {
                *w.t() = at;
                if w.publish() {
                    return true;
                }
            }
            _ => match until {
                Some(u) => {
                    *w.t() = u;
                    return true;
                }
                None => return false,
            },
        }
    }
}

// --- the scripts --------------------------------------------------------------------------------

/// `n` requests from `first`, `every` apart.
fn stream(first: u64, every: u64, n: u64) -> Vec<u64> {
    (0..n).map(|k| first + k * every).collect()
}

fn es2(switch: Es2Switch, poll_count: Option<u32>) -> IoHandling {
    IoHandling { handling: Handling::Es2, switch: Some(switch), poll_count, ..Default::default() }
}

fn both(io: &IoHandling, guest: Guest) -> (Trace, Trace) {
    (SimWorld::new(guest.clone()).run(io), TestbedWorld::new(guest, true).run(io))
}

fn assert_same(sim: &Trace, tb: &Trace) {
    if let Some(k) = sim.iter().zip(tb).position(|(a, b)| a != b) {
        panic!("the worlds part at decision {k}: simulator {:?}, testbed {:?}\n(before: {:?})", sim[k], tb[k], &sim[k.saturating_sub(6)..k]);
    }
    assert_eq!(sim.len(), tb.len(), "one world made more decisions");
}

fn count(tr: &Trace, f: impl Fn(&Rec) -> bool) -> usize {
    tr.iter().filter(|(_, r)| f(r)).count()
}

/// Three queues under ES2's perceptive switch (quota 4): bursts of 12 that fill the quota turn
/// after turn (yields, the 10 µs sleep when alone at quota), single requests that each kick,
/// and a stream that arrives while the others are served (kicks during turns, re-enables raced).
fn perceptive_script() -> Guest {
    let bursts = (0..40).flat_map(|k| stream(10_500 + k * 70 * US, 300, 12)).collect();
    Guest::new(vec![bursts, stream(5_200, 23_700, 120), stream(500_250, 2_900, 400)])
}

/// Three queues under ES2's optimistic switch (20 polls after a completion): a steady stream that
/// keeps its queue polled and then stops (back to notifications), requests far enough apart
/// that their queue goes back to notifications in between (each kicks), and a late burst.
fn optimistic_script() -> Guest {
    Guest::new(vec![stream(3_100, 2_300, 350), stream(7_700, 310_300, 9), stream(1_000_400, 700, 30)])
}

#[test]
fn perceptive_same_events_same_decisions_in_both_worlds() {
    let (sim, tb) = both(&es2(Es2Switch::Perceptive, None), perceptive_script());
    assert_same(&sim, &tb);
    // The script exercises what it should.
    let sleeps = count(&sim, |r| matches!(r, Rec::Next(JointDecision::Sleep { .. })));
    let kicks = count(&sim, |r| matches!(r, Rec::Kick(_)));
    let raced = count(&sim, |r| matches!(r, Rec::Enable(_, true)));
    let served = count(&sim, |r| matches!(r, Rec::Take(_, true)));
    assert!(sleeps > 10 && kicks > 100 && raced > 0, "sleeps {sleeps}, kicks {kicks}, raced re-enables {raced}");
    assert_eq!(served, 40 * 12 + 120 + 400, "every request served");
}

#[test]
fn optimistic_same_events_same_decisions_in_both_worlds() {
    let (sim, tb) = both(&es2(Es2Switch::Optimistic, Some(20)), optimistic_script());
    assert_same(&sim, &tb);
    let polled = count(&sim, |r| matches!(r, Rec::Next(JointDecision::Run(_, HandlerKind::Polling))));
    let sleeps = count(&sim, |r| matches!(r, Rec::Next(JointDecision::Sleep { .. })));
    let back = count(&sim, |r| matches!(r, Rec::Enable(..)));
    let kicks = count(&sim, |r| matches!(r, Rec::Kick(_)));
    let served = count(&sim, |r| matches!(r, Rec::Take(_, true)));
    assert!(polled > 100 && sleeps > 10 && back > 10 && kicks > 10, "polling turns {polled}, sleeps {sleeps}, back to notifications {back}, kicks {kicks}");
    assert_eq!(served, 350 + 9 + 30, "every request served");
}

/// The contrast: kicks read in device order part the worlds where two devices kicked during one
/// turn in the other order (in the perceptive script, at 572.95 µs and 574.95 µs of queue 0's
/// turn: queue 2, then queue 1).
#[test]
fn kicks_taken_in_device_order_would_part_the_worlds() {
    let guest = perceptive_script();
    let io = es2(Es2Switch::Perceptive, None);
    let sim = SimWorld::new(guest.clone()).run(&io);
    let tb = TestbedWorld::new(guest, false).run(&io);
    let k = sim.iter().zip(&tb).position(|(a, b)| a != b).expect("device order changes a decision");
    let (Rec::Next(JointDecision::Run(s, _)), Rec::Next(JointDecision::Run(t, _))) = (sim[k].1, tb[k].1) else {
        panic!("parted elsewhere: {:?} vs {:?}", sim[k], tb[k]);
    };
    assert!(s > t, "the simulator runs the device that kicked first (queue {s}), device order the lower index (queue {t})");
}
