//! Linux net DIM (dynamic interrupt moderation), the production anchor: a literal port of
//! `net_dim()`, `net_dim_decision()`, `net_dim_step()`, `net_dim_stats_compare()`,
//! `net_dim_exit_parking()` (lib/dim/net_dim.c) and `dim_on_top()`, `dim_turn()`,
//! `dim_park_on_top()`, `dim_park_tired()`, `dim_calc_stats()` (lib/dim/dim.c).
//!
//! DIM picks one of five coalescing *profiles* (`usec`, `pkts`): every `DIM_NEVENTS` = 64
//! interrupts it compares the traffic rate (bytes/ms, then packets/ms, then events/ms) with the
//! previous measurement and steps the profile index left or right, parking when on top of a
//! throughput peak or when tired. The driver applies the chosen profile to its NIC coalescing and
//! sets the state back to measuring ([`Dim::profile_applied`]).
//!
//! [`DimModerator`] (in `moderator.rs`) maps the chosen profile to an interrupt rate, so that a
//! device drives DIM like any other [`InterruptModerator`](super::InterruptModerator).

pub mod guest;
mod moderator;

pub use moderator::{profile_rate, DimConfig, DimModerator, TABLES};

/// `DIM_NEVENTS`: interrupts per measurement.
pub const DIM_NEVENTS: u16 = 64;
/// `NET_DIM_PARAMS_NUM_PROFILES`.
pub const NUM_PROFILES: usize = 5;

/// One coalescing profile (`struct dim_cq_moder`, without `comps`/`cq_period_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DimProfile {
    /// Coalescing time. Unit: µs.
    pub usec: u16,
    /// Coalescing frame count. Unit: packets.
    pub pkts: u16,
}

const fn p(usec: u16, pkts: u16) -> DimProfile {
    DimProfile { usec, pkts }
}

/// `NET_DIM_RX_EQE_PROFILES` (period restarts at each event, `DIM_CQ_PERIOD_MODE_START_FROM_EQE`).
pub const RX_EQE_PROFILES: [DimProfile; NUM_PROFILES] = [p(1, 256), p(8, 256), p(64, 256), p(128, 256), p(256, 256)];
/// `NET_DIM_RX_CQE_PROFILES`.
pub const RX_CQE_PROFILES: [DimProfile; NUM_PROFILES] = [p(2, 256), p(8, 128), p(16, 64), p(32, 64), p(64, 64)];
/// `NET_DIM_TX_EQE_PROFILES`.
pub const TX_EQE_PROFILES: [DimProfile; NUM_PROFILES] = [p(1, 128), p(8, 128), p(32, 128), p(64, 128), p(128, 128)];
/// `NET_DIM_TX_CQE_PROFILES`.
pub const TX_CQE_PROFILES: [DimProfile; NUM_PROFILES] = [p(5, 128), p(8, 64), p(16, 32), p(32, 32), p(64, 32)];
/// `NET_DIM_DEF_PROFILE_EQE` / `NET_DIM_DEF_PROFILE_CQE`: the starting index.
pub const DEF_PROFILE_IX: usize = 1;

/// `struct dim_sample`: counters read at an interrupt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DimSample {
    /// Time of the sample. Unit: ns.
    pub time_ns: u64,
    /// Packet counter (wraps at 2^32).
    pub pkt_ctr: u32,
    /// Byte counter (wraps at 2^32).
    pub byte_ctr: u32,
    /// Interrupt (event) counter (wraps at 2^16).
    pub event_ctr: u16,
}

/// `struct dim_stats`: rates per millisecond.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DimStats {
    /// Packets per ms.
    pub ppms: u64,
    /// Bytes per ms.
    pub bpms: u64,
    /// Events per ms.
    pub epms: u64,
}

/// `enum dim_tune_state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TuneState {
    /// `DIM_PARKING_ON_TOP` (the zero value, so DIM starts here).
    ParkingOnTop,
    /// `DIM_PARKING_TIRED`.
    ParkingTired,
    /// `DIM_GOING_RIGHT`.
    GoingRight,
    /// `DIM_GOING_LEFT`.
    GoingLeft,
}

/// `enum dim_state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MeasureState {
    /// `DIM_START_MEASURE`.
    StartMeasure,
    /// `DIM_MEASURE_IN_PROGRESS`.
    MeasureInProgress,
    /// `DIM_APPLY_NEW_PROFILE`: waiting for the driver to apply the profile.
    ApplyNewProfile,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StatsCmp {
    Worse,
    Same,
    Better,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StepResult {
    Stepped,
    TooTired,
    OnEdge,
}

/// `struct dim` for one queue.
#[derive(Debug, Clone)]
pub struct Dim {
    state: MeasureState,
    prev_stats: DimStats,
    start_sample: DimSample,
    profile_ix: usize,
    tune_state: TuneState,
    steps_right: u32,
    steps_left: u32,
    tired: u32,
}

/// `IS_SIGNIFICANT_DIFF(val, ref)`: more than 10 % apart (ref ≠ 0).
fn is_significant_diff(val: u64, r: u64) -> bool {
    r != 0 && (100 * val.abs_diff(r)) / r > 10
}

/// `dim_calc_stats()`; `None` when no time passed.
pub fn dim_calc_stats(start: &DimSample, end: &DimSample) -> Option<DimStats> {
    let delta_us = end.time_ns.saturating_sub(start.time_ns) / 1_000;
    if delta_us == 0 {
        return None;
    }
    let npkts = u64::from(end.pkt_ctr.wrapping_sub(start.pkt_ctr));
    let nbytes = u64::from(end.byte_ctr.wrapping_sub(start.byte_ctr));
    Some(DimStats {
        ppms: (npkts * 1000).div_ceil(delta_us),
        bpms: (nbytes * 1000).div_ceil(delta_us),
        epms: (u64::from(DIM_NEVENTS) * 1000).div_ceil(delta_us),
    })
}

impl Default for Dim {
    fn default() -> Self {
        Self::new(DEF_PROFILE_IX)
    }
}

impl Dim {
    /// A zeroed `struct dim` with `profile_ix` set by the driver (usually [`DEF_PROFILE_IX`]).
    pub fn new(profile_ix: usize) -> Self {
        Self {
            state: MeasureState::StartMeasure,
            prev_stats: DimStats::default(),
            start_sample: DimSample::default(),
            profile_ix: profile_ix.min(NUM_PROFILES - 1),
            tune_state: TuneState::ParkingOnTop,
            steps_right: 0,
            steps_left: 0,
            tired: 0,
        }
    }

    /// Current profile index (into one of the profile tables).
    pub fn profile_ix(&self) -> usize {
        self.profile_ix
    }

    /// Current tuning state.
    pub fn tune_state(&self) -> TuneState {
        self.tune_state
    }

    /// Current measurement state.
    pub fn state(&self) -> MeasureState {
        self.state
    }

    /// The driver applied the new profile (its work function sets `DIM_START_MEASURE`).
    pub fn profile_applied(&mut self) {
        self.state = MeasureState::StartMeasure;
    }

    /// `net_dim()`: feed the counters at an interrupt. Returns the new profile index when a new
    /// profile must be applied (then call [`Self::profile_applied`]).
    pub fn net_dim(&mut self, end: DimSample) -> Option<usize> {
        match self.state {
            MeasureState::MeasureInProgress => {
                let nevents = end.event_ctr.wrapping_sub(self.start_sample.event_ctr);
                if nevents < DIM_NEVENTS {
                    return None;
                }
                let curr = dim_calc_stats(&self.start_sample, &end)?;
                if self.net_dim_decision(&curr) {
                    self.state = MeasureState::ApplyNewProfile;
                    return Some(self.profile_ix);
                }
                self.start_measure(end);
            }
            MeasureState::StartMeasure => self.start_measure(end),
            MeasureState::ApplyNewProfile => {}
        }
        None
    }

    fn start_measure(&mut self, end: DimSample) {
        self.start_sample = end;
        self.state = MeasureState::MeasureInProgress;
    }

    fn net_dim_step(&mut self) -> StepResult {
        if self.tired == (NUM_PROFILES as u32) * 2 {
            return StepResult::TooTired;
        }
        match self.tune_state {
            TuneState::ParkingOnTop | TuneState::ParkingTired => {}
            TuneState::GoingRight => {
                if self.profile_ix == NUM_PROFILES - 1 {
                    return StepResult::OnEdge;
                }
                self.profile_ix += 1;
                self.steps_right += 1;
            }
            TuneState::GoingLeft => {
                if self.profile_ix == 0 {
                    return StepResult::OnEdge;
                }
                self.profile_ix -= 1;
                self.steps_left += 1;
            }
        }
        self.tired += 1;
        StepResult::Stepped
    }

    fn net_dim_exit_parking(&mut self) {
        self.tune_state = if self.profile_ix != 0 { TuneState::GoingLeft } else { TuneState::GoingRight };
        self.net_dim_step();
    }

    fn net_dim_stats_compare(curr: &DimStats, prev: &DimStats) -> StatsCmp {
        let better_if = |b: bool| if b { StatsCmp::Better } else { StatsCmp::Worse };
        if prev.bpms == 0 {
            return if curr.bpms != 0 { StatsCmp::Better } else { StatsCmp::Same };
        }
        if is_significant_diff(curr.bpms, prev.bpms) {
            return better_if(curr.bpms > prev.bpms);
        }
        if prev.ppms == 0 {
            return if curr.ppms != 0 { StatsCmp::Better } else { StatsCmp::Same };
        }
        if is_significant_diff(curr.ppms, prev.ppms) {
            return better_if(curr.ppms > prev.ppms);
        }
        if prev.epms == 0 {
            return StatsCmp::Same;
        }
        if is_significant_diff(curr.epms, prev.epms) {
            return better_if(curr.epms < prev.epms);
        }
        StatsCmp::Same
    }

    fn dim_on_top(&self) -> bool {
        match self.tune_state {
            TuneState::ParkingOnTop | TuneState::ParkingTired => true,
            TuneState::GoingRight => self.steps_left > 1 && self.steps_right == 1,
            TuneState::GoingLeft => self.steps_right > 1 && self.steps_left == 1,
        }
    }

    fn dim_turn(&mut self) {
        match self.tune_state {
            TuneState::ParkingOnTop | TuneState::ParkingTired => {}
            TuneState::GoingRight => {
                self.tune_state = TuneState::GoingLeft;
                self.steps_left = 0;
            }
            TuneState::GoingLeft => {
                self.tune_state = TuneState::GoingRight;
                self.steps_right = 0;
            }
        }
    }

    fn dim_park_on_top(&mut self) {
        self.steps_right = 0;
        self.steps_left = 0;
        self.tired = 0;
        self.tune_state = TuneState::ParkingOnTop;
    }

    fn dim_park_tired(&mut self) {
        self.steps_right = 0;
        self.steps_left = 0;
        self.tune_state = TuneState::ParkingTired;
    }

    /// `net_dim_decision()`: returns true when the profile index changed.
    fn net_dim_decision(&mut self, curr: &DimStats) -> bool {
        let prev_state = self.tune_state;
        let prev_ix = self.profile_ix;
        match self.tune_state {
            TuneState::ParkingOnTop => {
                if Self::net_dim_stats_compare(curr, &self.prev_stats) != StatsCmp::Same {
                    self.net_dim_exit_parking();
                }
            }
            TuneState::ParkingTired => {
                self.tired = self.tired.saturating_sub(1);
                if self.tired == 0 {
                    self.net_dim_exit_parking();
                }
            }
            TuneState::GoingRight | TuneState::GoingLeft => {
                if Self::net_dim_stats_compare(curr, &self.prev_stats) != StatsCmp::Better {
                    self.dim_turn();
                }
                if self.dim_on_top() {
                    self.dim_park_on_top();
                } else {
                    match self.net_dim_step() {
                        StepResult::OnEdge => self.dim_park_on_top(),
                        StepResult::TooTired => self.dim_park_tired(),
                        StepResult::Stepped => {}
                    }
                }
            }
        }
        if prev_state != TuneState::ParkingOnTop || self.tune_state != TuneState::ParkingOnTop {
            self.prev_stats = *curr;
        }
        self.profile_ix != prev_ix
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Samples 64 events apart, `bytes` per 1 ms measurement.
    fn sample(i: u64, total_bytes: u32) -> DimSample {
        DimSample { time_ns: i * 1_000_000, pkt_ctr: total_bytes / 1000, byte_ctr: total_bytes, event_ctr: (i * 64) as u16 }
    }

    #[test]
    fn significant_diff_is_more_than_ten_percent() {
        assert!(!is_significant_diff(110, 100));
        assert!(is_significant_diff(111, 100));
        assert!(!is_significant_diff(5, 0));
    }

    #[test]
    fn calc_stats_rounds_up_per_ms() {
        let s = dim_calc_stats(&DimSample::default(), &DimSample { time_ns: 3_000_000, pkt_ctr: 10, byte_ctr: 1000, event_ctr: 64 }).unwrap();
        assert_eq!((s.ppms, s.bpms, s.epms), (4, 334, 22));
        assert!(dim_calc_stats(&DimSample::default(), &DimSample::default()).is_none());
    }

    #[test]
    fn first_traffic_exits_parking_and_steps_left() {
        let mut d = Dim::default();
        assert_eq!(d.net_dim(sample(0, 0)), None); // starts measuring
        assert_eq!(d.state(), MeasureState::MeasureInProgress);
        // Fewer than 64 events: no decision.
        assert_eq!(d.net_dim(DimSample { event_ctr: 10, time_ns: 500_000, ..Default::default() }), None);
        // prev bpms = 0, now traffic: BETTER -> exit parking to the left (ix 1 -> 0).
        assert_eq!(d.net_dim(sample(1, 1_000_000)), Some(0));
        assert_eq!(d.tune_state(), TuneState::GoingLeft);
        assert_eq!(d.state(), MeasureState::ApplyNewProfile);
        assert_eq!(d.net_dim(sample(2, 2_000_000)), None); // ignored until applied
        d.profile_applied();
        assert_eq!(d.state(), MeasureState::StartMeasure);
    }

    #[test]
    fn worse_result_turns_and_edge_parks_on_top() {
        let mut d = Dim::new(0);
        d.tune_state = TuneState::GoingRight;
        d.prev_stats = DimStats { bpms: 1000, ppms: 1, epms: 64 };
        // Better: keep going right.
        assert!(d.net_dim_decision(&DimStats { bpms: 2000, ppms: 2, epms: 64 }));
        assert_eq!((d.profile_ix(), d.tune_state()), (1, TuneState::GoingRight));
        // Worse: turn left and step back.
        assert!(d.net_dim_decision(&DimStats { bpms: 1000, ppms: 1, epms: 64 }));
        assert_eq!((d.profile_ix(), d.tune_state()), (0, TuneState::GoingLeft));
        // Worse again: turn right; steps_left = 1, steps_right reset: step right.
        d.net_dim_decision(&DimStats { bpms: 500, ppms: 1, epms: 64 });
        assert_eq!(d.tune_state(), TuneState::GoingRight);
        // Going left at index 0 hits the edge and parks on top.
        let mut e = Dim::new(0);
        e.tune_state = TuneState::GoingLeft;
        e.prev_stats = DimStats { bpms: 1000, ppms: 1, epms: 64 };
        assert!(!e.net_dim_decision(&DimStats { bpms: 2000, ppms: 1, epms: 64 }));
        assert_eq!(e.tune_state(), TuneState::ParkingOnTop);
    }

    #[test]
    fn too_many_steps_park_tired_then_exit_after_as_many_decisions() {
        let mut d = Dim::new(2);
        d.tune_state = TuneState::GoingRight;
        d.tired = (NUM_PROFILES as u32) * 2;
        d.prev_stats = DimStats { bpms: 1000, ppms: 1, epms: 64 };
        assert!(!d.net_dim_decision(&DimStats { bpms: 5000, ppms: 5, epms: 64 }));
        assert_eq!(d.tune_state(), TuneState::ParkingTired);
        for _ in 0..9 {
            d.net_dim_decision(&DimStats::default());
            assert_eq!(d.tune_state(), TuneState::ParkingTired);
        }
        assert!(d.net_dim_decision(&DimStats::default()));
        assert_eq!((d.tune_state(), d.profile_ix()), (TuneState::GoingLeft, 1));
    }

    #[test]
    fn parked_on_top_with_same_stats_stays_and_keeps_reference() {
        let mut d = Dim::new(2);
        d.prev_stats = DimStats { bpms: 1000, ppms: 10, epms: 64 };
        assert!(!d.net_dim_decision(&DimStats { bpms: 1050, ppms: 10, epms: 64 }));
        assert_eq!(d.tune_state(), TuneState::ParkingOnTop);
        assert_eq!(d.prev_stats.bpms, 1000);
    }
}
