//! AIR: adaptive interrupt rate control (CGR/AIR paper §4.3, Eq. (5), (8), (9), Algorithm 1).
//!
//! Model: with `k` packets per interrupt (the VF RX ring size), CPU capacity `C`, per-packet cost
//! `C_pkt` and per-interrupt cost `C_int`, throughput peaks at `Î = C / (C_pkt·k + C_int)`
//! (Eq. 5); bandwidth `B` at average packet size `S` needs `I' = B / (k·S)` (Eq. 8). Algorithm 1,
//! run at the end of each interval, literally:
//!
//! ```text
//! I ← B ÷ (k × S)
//! I ← I + offset
//! if I > Î then I ← Î  else if I < I_min then I ← I_min
//! I_cur ← getInterruptRate();  δ ← |I − I_cur|
//! if δ ≥ threshold then setInterruptRate(I)
//! ```
//!
//! Note that the offset is added *before* the clamps (so `Î` is a hard ceiling), as in the
//! Algorithm box. `B` is the throughput of the last interval (bytes/s) and `S` its average packet
//! size (bytes); an interval without packets gives `B = 0`, so `I = offset` clamped.
//!
//! The paper gives no values for `C`, `C_pkt`, `C_int` ("obtained from experiments"), `offset`,
//! `threshold` or the interval length. The costs are the host's: unset here, they are filled
//! by whoever knows the machine (the simulator from its profile, [`AirConfig::with_costs`]; a
//! testbed scenario gives them), and [`AirConfig::validate`] names one still unset. The other
//! defaults are our choices, documented per field.

use super::{InterruptModerator, Throttle, WindowControl, WindowSample, Windowed};
use crate::error::{at_least, non_negative_f64, positive_f64, ConfigError};

/// Parameters of AIR (symbols of the paper's Table 1).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields, default))]
pub struct AirConfig {
    /// Length of the measurement interval ("a short time interval", not given; our choice 100 ms,
    /// CGR's timeslice). Unit: ns.
    pub interval_ns: u64,
    /// `k`: packets received per interrupt, "the size of the VF receiving ring" (default 512, the
    /// ixgbevf driver's default RX ring, `IXGBEVF_DEFAULT_RXD`). Unit: packets.
    pub k: u32,
    /// `C`: CPU capacity of the VM (> 0; §4.3.3: "the available CPU cycles of one processor
    /// core", as the VF driver is single-threaded). None: not known here. Unit: cycles/s.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub c_cycles_per_s: Option<f64>,
    /// `C_pkt`: CPU cost of one packet (> 0). None: not known here. Unit: cycles.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub c_pkt_cycles: Option<f64>,
    /// `C_int`: CPU cost of one interrupt (> 0). None: not known here. Unit: cycles.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub c_int_cycles: Option<f64>,
    /// `offset` added to `I` (not given; our choice 1,000). Unit: interrupts/s.
    pub offset: f64,
    /// Smallest change `δ` that is applied (not given; our choice 500). Unit: interrupts/s.
    pub threshold: f64,
    /// `I_min`: lowest rate the VF hardware supports (default 956, ixgbe's `IXGBE_MIN_INT_RATE`).
    /// Unit: interrupts/s.
    pub i_min: f64,
    /// Rate before the first interval closes (Linux default 8,000, §4.1). Unit: interrupts/s.
    pub initial_rate: u32,
}

impl Default for AirConfig {
    fn default() -> Self {
        Self {
            interval_ns: 100_000_000,
            k: 512,
            c_cycles_per_s: None,
            c_pkt_cycles: None,
            c_int_cycles: None,
            offset: 1000.0,
            threshold: 500.0,
            i_min: 956.0,
            initial_rate: 8000,
        }
    }
}

impl AirConfig {
    /// Checks every parameter; the three costs must be set and positive.
    pub fn validate(&self) -> Result<(), ConfigError> {
        at_least("air.interval_ns", self.interval_ns, 1)?;
        at_least("air.k", self.k, 1)?;
        for (param, v, what) in [
            ("air.c_cycles_per_s", self.c_cycles_per_s, "the CPU cycles per second of the core that handles the device (e.g. 2.6e9)"),
            ("air.c_pkt_cycles", self.c_pkt_cycles, "the CPU cycles one received packet costs"),
            ("air.c_int_cycles", self.c_int_cycles, "the CPU cycles one interrupt costs"),
        ] {
            match v {
                Some(v) => positive_f64(param, v)?,
                None => return Err(ConfigError::new(param, "unset", format!("give {what}, a finite number greater than 0"))),
            }
        }
        non_negative_f64("air.offset", self.offset)?;
        non_negative_f64("air.threshold", self.threshold)?;
        positive_f64("air.i_min", self.i_min)?;
        at_least("air.initial_rate", self.initial_rate, 1)
    }

    /// The costs a scenario left unset, taken from the host: `c` cycles/s, `c_pkt` and
    /// `c_int` cycles. Costs it set are kept.
    pub fn with_costs(mut self, c: f64, c_pkt: f64, c_int: f64) -> Self {
        self.c_cycles_per_s.get_or_insert(c);
        self.c_pkt_cycles.get_or_insert(c_pkt);
        self.c_int_cycles.get_or_insert(c_int);
        self
    }

    /// `Î = C / (C_pkt·k + C_int)` (Eq. 5); 0 while a cost is unset. Unit: interrupts/s.
    pub fn i_hat(&self) -> f64 {
        match (self.c_cycles_per_s, self.c_pkt_cycles, self.c_int_cycles) {
            (Some(c), Some(pkt), Some(int)) => c / (pkt * f64::from(self.k) + int),
            _ => 0.0,
        }
    }

    /// Lines 1–7 of Algorithm 1: the target rate `I` for bandwidth `b` (bytes/s) and average
    /// packet size `s` (bytes; `None` when no packet was seen).
    pub fn target_rate(&self, b: f64, s: Option<f64>) -> f64 {
        let mut i = match s {
            Some(s) if s > 0.0 => b / (f64::from(self.k) * s),
            _ => 0.0,
        };
        i += self.offset;
        let i_hat = self.i_hat();
        if i > i_hat {
            i = i_hat;
        } else if i < self.i_min {
            i = self.i_min;
        }
        i
    }
}

/// AIR's controller: Algorithm 1, lines 8–11, at the end of each interval.
#[derive(Debug, Clone)]
pub struct AirControl {
    cfg: AirConfig,
    last_target: Option<f64>,
}

impl WindowControl for AirControl {
    fn control(&mut self, s: &WindowSample, throttle: &mut Throttle) {
        let i = self.cfg.target_rate(s.bytes_per_s(), s.avg_packet_bytes());
        self.last_target = Some(i);
        let i_cur = f64::from(throttle.allowed_rate().unwrap_or(0));
        if (i - i_cur).abs() >= self.cfg.threshold {
            // The ITR register holds an integer rate; round to nearest, at least 1/s.
            throttle.set_rate(i.round().clamp(1.0, f64::from(u32::MAX)) as u32);
        }
    }
}

/// AIR controller plus its throttle.
pub type Air = Windowed<AirControl>;

impl Air {
    /// Starts at `initial_rate` with the first interval at `now_ns`. Call
    /// [`AirConfig::validate`] first.
    pub fn new(cfg: AirConfig, now_ns: u64) -> Self {
        Windowed::with_control(cfg.interval_ns, now_ns, cfg.initial_rate, AirControl { cfg, last_target: None })
    }

    /// The `I` computed at the end of the last interval (applied or not). Unit: interrupts/s.
    pub fn last_target(&self) -> Option<f64> {
        self.control().last_target
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Costs chosen so that Î = 1e9 / (100·100 + 10_000) = 50_000/s.
    fn cfg() -> AirConfig {
        AirConfig {
            k: 100,
            c_cycles_per_s: Some(1e9),
            c_pkt_cycles: Some(100.0),
            c_int_cycles: Some(10_000.0),
            offset: 1000.0,
            threshold: 500.0,
            i_min: 956.0,
            ..Default::default()
        }
    }

    #[test]
    fn i_hat_is_eq5() {
        assert_eq!(cfg().i_hat(), 50_000.0);
    }

    #[test]
    fn target_is_bandwidth_over_k_s_plus_offset() {
        // B = 1.5e9 B/s, S = 1500 B, k = 100: I' = 10_000; + offset = 11_000.
        assert_eq!(cfg().target_rate(1.5e9, Some(1500.0)), 11_000.0);
    }

    #[test]
    fn target_is_clamped_to_i_hat_after_the_offset() {
        // I' = 1e9 / (100·64) = 156_250 > Î.
        assert_eq!(cfg().target_rate(1e9, Some(64.0)), 50_000.0);
        // Offset itself pushes over Î.
        let c = AirConfig { offset: 60_000.0, ..cfg() };
        assert_eq!(c.target_rate(0.0, None), 50_000.0);
    }

    #[test]
    fn idle_interval_drops_to_i_min_or_offset() {
        assert_eq!(cfg().target_rate(0.0, None), 1000.0);
        let c = AirConfig { offset: 0.0, ..cfg() };
        assert_eq!(c.target_rate(0.0, None), 956.0);
    }

    #[test]
    fn rate_is_applied_only_when_it_moves_by_threshold() {
        let mut a = Air::new(cfg(), 0);
        // 1000 packets of 1000 B in 100 ms: B = 1e7 B/s, I' = 100, I = 1100 -> |1100 - 8000| ≥ 500.
        for i in 0..1000u64 {
            a.on_event(i * 100_000, 1, 1000);
        }
        a.advance(100_000_000);
        assert_eq!(a.allowed_rate(), Some(1100));
        // Next interval: 1400 packets -> I = 1140, δ = 40 < 500: unchanged.
        for i in 0..1400u64 {
            a.on_event(100_000_000 + i * 70_000, 1, 1000);
        }
        a.advance(200_000_000);
        assert!((a.last_target().unwrap() - 1140.0).abs() < 1e-9);
        assert_eq!(a.allowed_rate(), Some(1100));
    }

    #[test]
    fn costs_must_be_set() {
        let e = AirConfig::default().validate().unwrap_err();
        assert_eq!((e.param, e.value.as_str()), ("air.c_cycles_per_s", "unset"));
        assert!(e.allowed.starts_with("give the CPU cycles per second"), "{e}");
        assert!(cfg().validate().is_ok());
        let zero = AirConfig { c_pkt_cycles: Some(0.0), ..cfg() };
        assert_eq!(zero.validate().unwrap_err().param, "air.c_pkt_cycles");
        // Costs given are kept; the unset ones are filled.
        let part = AirConfig { c_int_cycles: Some(5.0), ..Default::default() }.with_costs(1e9, 100.0, 7.0);
        assert_eq!((part.c_cycles_per_s, part.c_pkt_cycles, part.c_int_cycles), (Some(1e9), Some(100.0), Some(5.0)));
        assert_eq!(AirConfig { k: 0, ..cfg() }.validate().unwrap_err().param, "air.k");
    }
}
