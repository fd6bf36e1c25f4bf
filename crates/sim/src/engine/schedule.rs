//! Typed scheduling: a part of the model schedules its own layer's events (`hw::Event`,
//! `hypervisor::Event`, ...) on the one event queue, which holds the root's event type; the
//! root's event says how each layer's converts (`From`). A layer names its events, never the
//! root's (DESIGN §2: imports run downward).

use super::queue::EventQueue;
use super::time::Time;

/// A queue on which events of type `E` can be scheduled.
pub trait Schedule<E> {
    /// Schedule `e` at time `t` (after every event already scheduled for `t`).
    fn schedule(&mut self, t: Time, e: E);
}

impl<R: From<E> + Copy, E> Schedule<E> for EventQueue<R> {
    #[inline]
    fn schedule(&mut self, t: Time, e: E) {
        self.at(t, R::from(e));
    }
}
