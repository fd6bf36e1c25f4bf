//! The discrete-event engine: integer-nanosecond time, a future-event set ordered by
//! (time, insertion sequence), and per-component seeded random streams.
//!
//! The engine knows nothing about hosts or guests. A model is any type implementing [`Model`];
//! it receives each event with the current time and may schedule more. Events are small `Copy`
//! values stored inline in the heap, so dispatch allocates nothing once the heap has grown.

mod queue;
mod rng;
mod timer;

pub use queue::EventQueue;
pub use rng::{stream_seed, Rng};
pub use timer::{Fired, Timer};

/// Simulated time in nanoseconds since the start of the run.
pub type Time = u64;

/// Nanoseconds per second, for conversions at the edges (scenario input, reports).
pub const NS_PER_S: u64 = 1_000_000_000;

/// Convert seconds (as written in a scenario) to nanoseconds, rounding to the nearest ns.
pub fn secs_to_ns(s: f64) -> Time {
    (s * NS_PER_S as f64).round() as Time
}

/// A simulation model: owns all state and handles one event at a time.
pub trait Model {
    /// The model's event type: small and `Copy` so the heap stores it inline.
    type Event: Copy;

    /// Handle `ev` at time `now`; schedule follow-ups on `q`.
    fn handle(&mut self, now: Time, ev: Self::Event, q: &mut EventQueue<Self::Event>);
}

/// Why [`run_until`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The next event lies beyond the end time (it stays queued).
    EndTime,
    /// The future-event set ran empty.
    Empty,
}

/// Run `model` until simulated time `end` (events at exactly `end` are handled).
/// Returns why it stopped; the number of handled events is `q.handled()`.
pub fn run_until<M: Model>(model: &mut M, q: &mut EventQueue<M::Event>, end: Time) -> Stop {
    while let Some((now, ev)) = q.pop_due(end) {
        model.handle(now, ev, q);
    }
    if q.is_empty() {
        Stop::Empty
    } else {
        Stop::EndTime
    }
}
