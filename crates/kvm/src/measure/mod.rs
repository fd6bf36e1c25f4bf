//! Measurement: latency histograms, and the summary.json writer.
pub mod hist;
pub mod summary;
