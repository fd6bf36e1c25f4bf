//! Workloads as scenario data. A workload is parameters plus a small behaviour in
//! `model::workload`; adding one touches this enum and its behaviour, never the engine.

use serde::Deserialize;

/// What a VM runs, chosen by `kind`.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Workload {
    /// netperf UDP_STREAM from the guest: send datagrams of `message_bytes`.
    UdpStream {
        /// Payload bytes per datagram (1..=65507).
        message_bytes: u32,
        /// Open-loop send rate in datagrams/s; absent: as fast as the vCPU can.
        rate_pps: Option<f64>,
    },
    /// netperf UDP_STREAM to the guest: the remote client sends datagrams of `message_bytes` at
    /// `rate_pps` (open loop); the guest application receives them.
    UdpReceive {
        /// Payload bytes per datagram (1..=65507).
        message_bytes: u32,
        /// Client send rate in datagrams/s (> 0).
        rate_pps: f64,
    },
    /// netperf UDP_RR (or ping with `interval_us`): the client sends a `request_bytes` request,
    /// the guest application answers with `response_bytes`; closed loop with one transaction in
    /// flight, or open loop at a fixed interval.
    UdpRr {
        /// Request payload bytes (1..=65507).
        request_bytes: u32,
        /// Response payload bytes (1..=65507).
        response_bytes: u32,
        /// Send a request every `interval_us` µs (ping); absent: next request when the reply
        /// arrives (netperf UDP_RR).
        interval_us: Option<f64>,
    },
    /// netperf TCP_STREAM from the guest: one TCP connection, `write()`s of `message_bytes`.
    TcpStream {
        /// Bytes per `write()` (1..=1048576).
        message_bytes: u32,
        /// Send window (min of cwnd, rwnd and socket buffer) in bytes; default 4 MiB, enough
        /// for a 40 GbE link at datacenter RTTs, so the stream is CPU or link bound.
        #[serde(default = "default_window")]
        window_bytes: u32,
    },
}

fn default_window() -> u32 {
    4 << 20
}

impl Workload {
    /// Check value ranges; `key` is the workload's key path for messages.
    pub fn check(&self, key: &str) -> Result<(), String> {
        match self {
            Workload::UdpStream { message_bytes, rate_pps } => {
                if !(1..=65507).contains(message_bytes) {
                    return Err(format!(
                        "key `{key}.message_bytes`: {message_bytes} is not allowed; expected 1..=65507 (UDP payload)"
                    ));
                }
                if let Some(r) = rate_pps {
                    if !(r.is_finite() && *r > 0.0) {
                        return Err(format!("key `{key}.rate_pps`: {r} is not allowed; expected datagrams/s > 0"));
                    }
                }
                Ok(())
            }
            Workload::UdpReceive { message_bytes, rate_pps } => {
                if !(1..=65507).contains(message_bytes) {
                    return Err(format!(
                        "key `{key}.message_bytes`: {message_bytes} is not allowed; expected 1..=65507 (UDP payload)"
                    ));
                }
                if !(rate_pps.is_finite() && *rate_pps > 0.0) {
                    return Err(format!("key `{key}.rate_pps`: {rate_pps} is not allowed; expected datagrams/s > 0"));
                }
                Ok(())
            }
            Workload::UdpRr { request_bytes, response_bytes, interval_us } => {
                for (k, b) in [("request_bytes", request_bytes), ("response_bytes", response_bytes)] {
                    if !(1..=65507).contains(b) {
                        return Err(format!("key `{key}.{k}`: {b} is not allowed; expected 1..=65507 (UDP payload)"));
                    }
                }
                if let Some(i) = interval_us {
                    if !(i.is_finite() && *i > 0.0) {
                        return Err(format!("key `{key}.interval_us`: {i} is not allowed; expected µs > 0"));
                    }
                }
                Ok(())
            }
            Workload::TcpStream { message_bytes, window_bytes } => {
                if !(1..=1 << 20).contains(message_bytes) {
                    return Err(format!("key `{key}.message_bytes`: {message_bytes} is not allowed; expected 1..=1048576"));
                }
                if !(65_536..=1 << 30).contains(window_bytes) {
                    return Err(format!(
                        "key `{key}.window_bytes`: {window_bytes} is not allowed; expected 65536..=1073741824 bytes"
                    ));
                }
                Ok(())
            }
        }
    }
}
