//! CGR: coarse-grained interrupt rate control (CGR/AIR paper §4.2).
//!
//! Every *interrupt timeslice* (100 ms) the driver looks at the packets and bytes processed in it
//! (ixgbe's `ring_container`) and puts the traffic in one of four classes, each with a fixed ITR:
//!
//! | class | paper's definition | ITR |
//! |---|---|---|
//! | Full bulk | average packet close to full frames, 1,200–1,500 B | 4K/s |
//! | Intermediate bulk | medium packets, 300–1,200 B | 8K/s |
//! | Latency sensitive | small packets, 64–300 B | 20K/s |
//! | Latency critical | "occasional arrival packets of small size" | 100K/s |
//!
//! Choices where the paper is silent: boundaries are half-open (≥ 1,200 B full bulk, ≥ 300 B
//! intermediate, below 300 B small; averages above 1,500 B, e.g. TSO/jumbo, count as full bulk and
//! below 64 B as small); "occasional" means a packet rate below `critical_max_pps`, by default
//! 20,000 packets/s, the latency-sensitive class's own ITR (below it, throttling at 20K/s would add
//! delay without saving interrupts on average); a timeslice with no packets keeps the current
//! ITR; before the first timeslice closes the ITR is the driver default 8,000/s.

use super::{Throttle, WindowControl, WindowSample, Windowed};
use crate::error::{at_least, ConfigError};

/// CGR's traffic classes (§4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrafficClass {
    /// (1) Full bulk traffic.
    FullBulk,
    /// (2) Intermediate bulk traffic.
    IntermediateBulk,
    /// (3) Latency-sensitive traffic.
    LatencySensitive,
    /// (4) Latency-critical traffic.
    LatencyCritical,
}

/// Parameters of CGR.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields, default))]
pub struct CgrConfig {
    /// Interrupt timeslice over which traffic is measured (§4.2: 100 ms). Unit: ns.
    pub timeslice_ns: u64,
    /// Smallest average packet of full bulk traffic (§4.2: 1,200). Unit: bytes.
    pub full_bulk_min_bytes: f64,
    /// Smallest average packet of intermediate bulk traffic (§4.2: 300). Unit: bytes.
    pub intermediate_min_bytes: f64,
    /// Small-packet traffic below this packet rate is latency critical (our choice: 20,000; see
    /// the module doc). Unit: packets/s.
    pub critical_max_pps: f64,
    /// ITR of full bulk traffic (§4.2: 4K). Unit: interrupts/s.
    pub itr_full_bulk: u32,
    /// ITR of intermediate bulk traffic (§4.2: 8K). Unit: interrupts/s.
    pub itr_intermediate: u32,
    /// ITR of latency-sensitive traffic (§4.2: 20K). Unit: interrupts/s.
    pub itr_latency_sensitive: u32,
    /// ITR of latency-critical traffic (§4.2: 100K). Unit: interrupts/s.
    pub itr_latency_critical: u32,
    /// ITR before the first timeslice closes (Linux default 8,000, §4.1). Unit: interrupts/s.
    pub initial_itr: u32,
}

impl Default for CgrConfig {
    fn default() -> Self {
        Self {
            timeslice_ns: 100_000_000,
            full_bulk_min_bytes: 1200.0,
            intermediate_min_bytes: 300.0,
            critical_max_pps: 20_000.0,
            itr_full_bulk: 4_000,
            itr_intermediate: 8_000,
            itr_latency_sensitive: 20_000,
            itr_latency_critical: 100_000,
            initial_itr: 8_000,
        }
    }
}

impl CgrConfig {
    /// Checks positive timeslice, rates ≥ 1, and `0 < intermediate_min_bytes < full_bulk_min_bytes`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        at_least("cgr.timeslice_ns", self.timeslice_ns, 1)?;
        crate::error::positive_f64("cgr.intermediate_min_bytes", self.intermediate_min_bytes)?;
        crate::error::positive_f64("cgr.full_bulk_min_bytes", self.full_bulk_min_bytes)?;
        if self.full_bulk_min_bytes <= self.intermediate_min_bytes {
            return Err(ConfigError::new(
                "cgr.full_bulk_min_bytes",
                self.full_bulk_min_bytes,
                format!("must be greater than cgr.intermediate_min_bytes ({})", self.intermediate_min_bytes),
            ));
        }
        crate::error::non_negative_f64("cgr.critical_max_pps", self.critical_max_pps)?;
        at_least("cgr.itr_full_bulk", self.itr_full_bulk, 1)?;
        at_least("cgr.itr_intermediate", self.itr_intermediate, 1)?;
        at_least("cgr.itr_latency_sensitive", self.itr_latency_sensitive, 1)?;
        at_least("cgr.itr_latency_critical", self.itr_latency_critical, 1)?;
        at_least("cgr.initial_itr", self.initial_itr, 1)
    }

    /// Classifies one timeslice; `None` when it saw no packet.
    pub fn classify(&self, s: &WindowSample) -> Option<TrafficClass> {
        let avg = s.avg_packet_bytes()?;
        Some(if avg >= self.full_bulk_min_bytes {
            TrafficClass::FullBulk
        } else if avg >= self.intermediate_min_bytes {
            TrafficClass::IntermediateBulk
        } else if s.packets_per_s() < self.critical_max_pps {
            TrafficClass::LatencyCritical
        } else {
            TrafficClass::LatencySensitive
        })
    }

    /// The ITR assigned to a class.
    pub fn itr(&self, c: TrafficClass) -> u32 {
        match c {
            TrafficClass::FullBulk => self.itr_full_bulk,
            TrafficClass::IntermediateBulk => self.itr_intermediate,
            TrafficClass::LatencySensitive => self.itr_latency_sensitive,
            TrafficClass::LatencyCritical => self.itr_latency_critical,
        }
    }
}

/// CGR's controller: classify each timeslice that saw traffic and apply its class's ITR.
#[derive(Debug, Clone)]
pub struct CgrControl {
    cfg: CgrConfig,
    class: Option<TrafficClass>,
}

impl WindowControl for CgrControl {
    fn control(&mut self, s: &WindowSample, throttle: &mut Throttle) {
        if let Some(c) = self.cfg.classify(s) {
            self.class = Some(c);
            throttle.set_rate(self.cfg.itr(c));
        }
    }
}

/// CGR controller plus its throttle.
pub type Cgr = Windowed<CgrControl>;

impl Cgr {
    /// Starts at `initial_itr` with the first timeslice at `now_ns`.
    pub fn new(cfg: CgrConfig, now_ns: u64) -> Self {
        Windowed::with_control(cfg.timeslice_ns, now_ns, cfg.initial_itr, CgrControl { cfg, class: None })
    }

    /// Class of the last timeslice that saw traffic.
    pub fn class(&self) -> Option<TrafficClass> {
        self.control().class
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::moderation::InterruptModerator;

    const SLICE: u64 = 100_000_000;

    fn feed(c: &mut Cgr, t0: u64, n: u64, size: u64) {
        for i in 0..n {
            c.on_event(t0 + i * (SLICE / n), 1, size);
        }
        c.advance(t0 + SLICE);
    }

    #[test]
    fn classes_map_to_paper_rates() {
        let cfg = CgrConfig::default();
        let mut c = Cgr::new(cfg, 0);
        assert_eq!(c.allowed_rate(), Some(8000));
        feed(&mut c, 0, 10_000, 1500);
        assert_eq!((c.class(), c.allowed_rate()), (Some(TrafficClass::FullBulk), Some(4000)));
        feed(&mut c, SLICE, 10_000, 600);
        assert_eq!((c.class(), c.allowed_rate()), (Some(TrafficClass::IntermediateBulk), Some(8000)));
        feed(&mut c, 2 * SLICE, 10_000, 64); // 100K packets/s of small packets
        assert_eq!((c.class(), c.allowed_rate()), (Some(TrafficClass::LatencySensitive), Some(20_000)));
        feed(&mut c, 3 * SLICE, 100, 64); // 1K packets/s: occasional
        assert_eq!((c.class(), c.allowed_rate()), (Some(TrafficClass::LatencyCritical), Some(100_000)));
    }

    #[test]
    fn boundaries_are_half_open() {
        let cfg = CgrConfig::default();
        let s = |bytes| WindowSample { packets: 1_000_000, bytes, len_ns: SLICE };
        assert_eq!(cfg.classify(&s(1_200_000_000)), Some(TrafficClass::FullBulk));
        assert_eq!(cfg.classify(&s(1_199_000_000)), Some(TrafficClass::IntermediateBulk));
        assert_eq!(cfg.classify(&s(300_000_000)), Some(TrafficClass::IntermediateBulk));
        assert_eq!(cfg.classify(&s(299_000_000)), Some(TrafficClass::LatencySensitive));
        assert_eq!(cfg.classify(&WindowSample { packets: 0, bytes: 0, len_ns: SLICE }), None);
    }

    #[test]
    fn idle_timeslice_keeps_rate() {
        let mut c = Cgr::new(CgrConfig::default(), 0);
        feed(&mut c, 0, 10_000, 1500);
        c.advance(10 * SLICE);
        assert_eq!(c.allowed_rate(), Some(4000));
    }

    #[test]
    fn validation_names_the_parameter() {
        let bad = CgrConfig { full_bulk_min_bytes: 200.0, ..Default::default() };
        assert_eq!(bad.validate().unwrap_err().param, "cgr.full_bulk_min_bytes");
        assert!(CgrConfig::default().validate().is_ok());
    }
}
