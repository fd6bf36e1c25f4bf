//! eventpath simulator.
