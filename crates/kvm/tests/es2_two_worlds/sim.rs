//! (a) The simulator's side: its ES2 adapter itself (`crates/sim/src/model/io/es2.rs`), run as
//! the I/O thread runs it by `eventpath_sim::model::es2_driver`, over TX rings kept as the model
//! keeps them (`model/hw/virtq.rs` and `notify.rs`'s `KickGate`: counters, and the event index
//! through `eventpath_policy::notify`), a kick reaching the adapter when it comes.
use super::*;
use eventpath_policy::notify::{driver_should_kick, kick_control, KickControlWrite, Suppression};
use eventpath_policy::vhost::VhostConfig;
use eventpath_sim::model::es2_driver::{Es2Driver, TxRings};
use eventpath_sim::scenario::IoHandling;

/// The model's TX virtqueue as `model/hw/virtq.rs` and `notify.rs`'s `KickGate` keep it.
#[derive(Default)]
struct SimRing {
    avail: u64,
    consumed: u64,
    avail_event: u16,
    prepared: u16,
}

impl SimRing {
    /// Driver: `add`, then `virtqueue_kick_prepare`.
    fn publish(&mut self) -> bool {
        self.avail += 1;
        let (old, new) = (self.prepared, self.avail as u16);
        self.prepared = new;
        driver_should_kick(Suppression::EventIdx, 0, self.avail_event, new, old)
    }
    /// `enable_kicks` (`device_enable(avail)`) or `kick.device_disable()`.
    fn kicks(&mut self, on: bool) {
        if let KickControlWrite::AvailEvent(e) = kick_control(Suppression::EventIdx, on, 0, self.avail as u16) {
            self.avail_event = e;
        }
    }
}

pub struct SimWorld {
    rings: Vec<SimRing>,
    /// Kicks not yet noticed by the adapter, in the order they came.
    kicked: Vec<usize>,
    guest: Guest,
    t: u64,
    trace: Trace,
}

impl World for SimWorld {
    fn t(&mut self) -> &mut u64 {
        &mut self.t
    }
    fn guest(&self) -> &Guest {
        &self.guest
    }
    fn publish(&mut self) -> bool {
        let mut kicked = false;
        while let Some((_, q)) = self.guest.due(self.t) {
            if self.rings[q].publish() {
                self.trace.push((self.t, Rec::Kick(q)));
                self.kicked.push(q);
                kicked = true;
            }
        }
        kicked
    }
}

impl SimWorld {
    pub fn new(guest: Guest) -> Self {
        let n = guest.arrivals.len();
        SimWorld { rings: (0..n).map(|_| SimRing::default()).collect(), kicked: vec![], guest, t: 0, trace: vec![] }
    }

    fn set_kicks(&mut self, q: usize, on: bool) -> bool {
        self.publish();
        self.rings[q].kicks(on);
        let has_work = self.rings[q].avail > self.rings[q].consumed;
        self.trace.push((self.t, if on { Rec::Enable(q, has_work) } else { Rec::Disable(q) }));
        has_work
    }

    /// The thread's loop (`io/thread.rs`): decide, then the chosen handler's turn; asleep until
    /// a kick or the end of its sleep.
    pub fn run(mut self, io: &IoHandling) -> Trace {
        let mut a = Es2Driver::new(io, &VhostConfig::default(), self.rings.len());
        while self.t <= END {
            let d = a.next(&mut self);
            self.trace.push((self.t, Rec::Next(d)));
            let more = match d {
                JointDecision::Run(q, _) => {
                    a.run(q, &mut self);
                    true
                }
                JointDecision::Sleep { until_ns } => wait(&mut self, Some(until_ns)),
                JointDecision::Idle => wait(&mut self, None),
            };
            if !more {
                break;
            }
        }
        self.trace
    }
}

impl TxRings for SimWorld {
    /// `take_tx`: one request (costs ITEM), or an empty look (LOOK).
    fn take(&mut self, q: usize) -> Option<u64> {
        self.publish();
        let r = &mut self.rings[q];
        let got = r.avail > r.consumed;
        r.consumed += u64::from(got);
        self.trace.push((self.t, Rec::Take(q, got)));
        self.t += if got { ITEM } else { LOOK };
        self.publish();
        got.then_some(BYTES)
    }
    fn enable_kicks(&mut self, q: usize) -> bool {
        self.set_kicks(q, true)
    }
    fn disable_kicks(&mut self, q: usize) {
        self.set_kicks(q, false);
    }
    fn kicks(&mut self) -> Vec<usize> {
        std::mem::take(&mut self.kicked)
    }
    fn now_ns(&mut self) -> u64 {
        self.t
    }
}
