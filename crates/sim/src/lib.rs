//! eventpath simulator: a discrete-event model of a virtualized server's I/O event path.
//!
//! ```text
//!  guest app ──send──> virtio-net driver ──kick (I/O exit)──> vhost thread ──> NIC ──> wire
//!      ^                                                          │
//!      └──── interrupt (injection, EOI exit) <── used ring ───────┘
//! ```
//!
//! Layers: [`engine`] (time, events, random streams), [`metrics`], [`scenario`] and [`profile`]
//! (input), [`model`] (hardware, hypervisor, devices, guests, workloads), [`summary`] (output) and
//! its invariants ([`sanity`]).
#![deny(missing_docs)]

pub mod bench;
pub mod config;
pub mod engine;
pub mod error;
pub mod fuzz;
pub mod metrics;
pub mod model;
pub mod profile;
pub mod run;
pub mod sanity;
pub mod scenario;
pub mod summary;

pub use error::{InputError, InputResult};
pub use run::{run_scenario, RunOptions, RunOutput};
