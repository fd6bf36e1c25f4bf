//! Measurement: the summary.json writer (latency histograms are `eventpath_sim::metrics::Histogram`).
pub mod extra;
pub mod migrations;
pub mod summary;
