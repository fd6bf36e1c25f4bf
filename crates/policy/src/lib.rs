//! Decision logic of the event-path mechanisms as pure state machines.
//!
//! Each policy takes observations (load found this round, which vCPUs run, bytes in the last
//! interval) and returns decisions. No clock, no I/O: the simulator and the KVM testbed both
//! drive the same code. Where time matters the caller passes `now_ns` (integer nanoseconds).
//!
//! ```text
//!  guest driver ──kick──> [notify] ──> host I/O thread [vhost | es2 | elvis | pmd]
//!                                         │ completion
//!  guest vCPU <──inject── [routing | hbalance | vbalance | es2::redirect] <── [moderation] <──┘
//!  vCPU halt  ──> [halt_poll]          interrupt arrives ──> [delivery] (exit or not)
//!  idle pCPU  ──> [idle] (menu, haltpoll: which idle state a wake-up pays)
//! ```
//!
//! Config structs derive `serde` traits (with `deny_unknown_fields` and `default`) under the
//! `serde` feature, and each has a `validate()` returning a [`ConfigError`].
#![deny(missing_docs)]

pub mod delivery;
pub mod elvis;
pub mod error;
pub mod es2;
pub mod guest_haltpoll;
pub mod halt_poll;
pub mod hbalance;
pub mod idle;
pub mod moderation;
pub mod notify;
pub mod pmd;
pub mod routing;
pub mod vbalance;
pub mod vhost;

pub use error::ConfigError;
