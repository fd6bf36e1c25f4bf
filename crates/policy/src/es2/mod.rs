//! ES2 (KVM): hybrid I/O handling and intelligent interrupt redirection.
//!
//! * [`perceptive`]: the generic notification/polling switch of §4.2.2 (Algorithm 1) with `quota`.
//! * [`optimistic`]: the query-reply switch of §4.2.3 (Algorithm 2) with `max_poll_count`.
//! * [`joint`]: the joint I/O thread of §5.1–5.3: `combining_level`, the scheduling and polling
//!   lists, and the 10 µs interruptible sleeps.
//! * [`redirect`]: intelligent interrupt redirection (§4.3, §5.4–5.5).

pub mod joint;
pub mod optimistic;
pub mod perceptive;
pub mod redirect;

pub use joint::{combine_devices, HandlerKind, JointConfig, JointDecision, JointThread};
pub use optimistic::{OptimisticAction, OptimisticConfig, OptimisticTx};
pub use perceptive::{PerceptiveAction, PerceptiveConfig, PerceptiveEvent, PerceptiveHandler, PerceptiveState};
pub use redirect::Es2Redirect;
