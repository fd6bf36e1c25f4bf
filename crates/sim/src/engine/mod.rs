//! The discrete-event engine: integer-nanosecond time, a future-event set ordered by
//! (time, insertion sequence), and per-component seeded random streams.
//!
//! The engine knows nothing about hosts or guests. A model is any type implementing [`Model`];
//! it receives each event with the current time and may schedule more. Events are small `Copy`
//! values stored inline in the heap, so dispatch allocates nothing once the heap has grown.

mod queue;
mod schedule;
mod rng;
mod time;
mod timer;

pub use queue::EventQueue;
pub use schedule::Schedule;
pub use rng::{stream_seed, Rng};
pub use time::{round_ns, secs_to_ns, Time, NS_PER_S};
pub use timer::{Fired, Timer};


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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_ns_is_round_as_time() {
        let edge = [
            0.0, -0.0, 0.5, 1.5, 2.5, 0.49999999999999994, -0.5, -3.7, f64::NAN, f64::INFINITY, f64::NEG_INFINITY,
            4503599627370495.5, 9007199254740993.0, 1.8446744073709552e19, 1e300, 1234.5, 1234.4999999999998,
        ];
        let mut r = Rng::from_seed(3);
        let random = (0..100_000).map(|i| {
            let scale = 10f64.powi((i % 16) as i32);
            (r.uniform() - 0.05) * scale
        });
        for x in edge.into_iter().chain(random) {
            assert_eq!(round_ns(x), x.round() as Time, "{x:?}");
        }
    }
}
