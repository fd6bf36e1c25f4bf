//! Decision logic of the event-path mechanisms as pure state machines.
//!
//! Each policy takes observations (load found this round, which vCPUs run, bytes in the last
//! interval) and returns decisions. No clock, no I/O: the simulator and the KVM testbed both
//! drive the same code.
#![deny(missing_docs)]
