//! Engine properties: events come out in (time, insertion) order; runs are deterministic;
//! random streams are per component.

use eventpath_sim::engine::{run_until, EventQueue, Model, Rng, Stop, Time};
use proptest::prelude::*;

proptest! {
    #[test]
    fn pops_in_time_then_insertion_order(times in prop::collection::vec(0u64..50, 1..300)) {
        let mut q = EventQueue::new();
        for (i, &t) in times.iter().enumerate() {
            q.at(t, i);
        }
        let mut expected: Vec<(u64, usize)> = times.iter().copied().zip(0..).collect();
        expected.sort(); // by time, then insertion index
        let mut got = Vec::new();
        while let Some((t, i)) = q.pop() {
            got.push((t, i));
        }
        prop_assert_eq!(got, expected);
    }

    /// Any mix of pops, insertions and peeks (the queue reuses a popped root's slot for the next
    /// insertion) gives what a sorted reference set gives: the same events, lengths and next times.
    #[test]
    fn interleaved_pops_pushes_and_peeks_match_a_sorted_reference(ops in prop::collection::vec((0u8..4, 0u64..40), 1..400)) {
        let mut q = EventQueue::new();
        let mut reference = std::collections::BTreeSet::new();
        let mut seq = 0u64;
        for (op, d) in ops {
            match op {
                0 | 1 => {
                    let t = q.now() + d;
                    q.at(t, seq);
                    reference.insert((t, seq));
                    seq += 1;
                }
                2 => {
                    let want = reference.pop_first();
                    prop_assert_eq!(q.pop(), want);
                }
                _ => {
                    prop_assert_eq!(q.peek_time(), reference.first().map(|&(t, _)| t));
                }
            }
            prop_assert_eq!(q.len(), reference.len());
            prop_assert_eq!(q.is_empty(), reference.is_empty());
        }
        while let Some(want) = reference.pop_first() {
            prop_assert_eq!(q.pop(), Some(want));
        }
        prop_assert_eq!(q.pop(), None);
    }

    #[test]
    fn interleaved_scheduling_never_goes_back_in_time(seed in any::<u64>()) {
        let mut rng = Rng::from_seed(seed);
        let mut q = EventQueue::new();
        q.at(0, 0u32);
        let mut last = 0;
        let mut n = 0;
        while let Some((t, _)) = q.pop() {
            prop_assert!(t >= last);
            last = t;
            n += 1;
            if n < 2000 {
                for _ in 0..rng.below(3) {
                    q.after(rng.below(100), n);
                }
            }
        }
    }
}

/// A model whose trajectory depends on every draw: any nondeterminism changes the trace.
struct Chain {
    rng: Rng,
    trace: Vec<(Time, u32)>,
}

impl Model for Chain {
    type Event = u32;
    fn handle(&mut self, now: Time, ev: u32, q: &mut EventQueue<u32>) {
        self.trace.push((now, ev));
        // Small integer delays make equal-time events common: their order must still be fixed.
        let d = self.rng.below(4);
        q.after(d, ev.wrapping_mul(31).wrapping_add(self.rng.below(7) as u32));
    }
}

fn trace(seed: u64) -> Vec<(Time, u32)> {
    let mut m = Chain { rng: Rng::for_component(seed, "chain"), trace: Vec::new() };
    let mut q = EventQueue::new();
    for i in 0..20 {
        q.at(0, i);
    }
    assert_eq!(run_until(&mut m, &mut q, 20_000), Stop::EndTime);
    m.trace
}

#[test]
fn same_seed_same_trajectory_other_seed_other_trajectory() {
    assert_eq!(trace(7), trace(7));
    assert_ne!(trace(7), trace(8));
}

#[test]
fn component_streams_do_not_depend_on_other_components() {
    // The stream of "vm:b" is the same whether or not "vm:a" exists and draws.
    let mut a = Rng::for_component(1, "vm:a");
    let _ = (0..100).map(|_| a.next_u64()).count();
    let mut b1 = Rng::for_component(1, "vm:b");
    let mut b2 = Rng::for_component(1, "vm:b");
    assert_eq!((0..10).map(|_| b1.next_u64()).collect::<Vec<_>>(), (0..10).map(|_| b2.next_u64()).collect::<Vec<_>>());
    let mut c = Rng::for_component(1, "vm:c");
    assert_ne!(Rng::for_component(1, "vm:b").next_u64(), c.next_u64());
}

#[test]
fn run_stops_at_end_time_and_keeps_later_events() {
    struct Nop;
    impl Model for Nop {
        type Event = ();
        fn handle(&mut self, _: Time, _: (), _: &mut EventQueue<()>) {}
    }
    let mut q = EventQueue::new();
    q.at(10, ());
    q.at(20, ());
    q.at(21, ());
    assert_eq!(run_until(&mut Nop, &mut q, 20), Stop::EndTime);
    assert_eq!(q.handled(), 2, "the event at exactly the end time is handled");
    assert_eq!(q.len(), 1);
    assert_eq!(run_until(&mut Nop, &mut q, 100), Stop::Empty);
}

#[test]
fn exponential_draws_have_the_requested_mean() {
    let mut r = Rng::from_seed(3);
    let n = 200_000;
    let mean = (0..n).map(|_| r.exp_ns(1000.0) as f64).sum::<f64>() / n as f64;
    assert!((mean - 1000.0).abs() < 15.0, "mean {mean}");
}
