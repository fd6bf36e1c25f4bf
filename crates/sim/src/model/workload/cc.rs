//! A TCP sender's congestion window (issue 49 item 2), as Linux's `tcp_cong.c` and
//! `tcp_cubic.c` grow and cut it: slow start from the initial window (`client.tcp_init_cwnd`),
//! then congestion avoidance by CUBIC (default since 2.6.19) or Reno (`client.tcp_congestion`);
//! a loss seen by SACK cuts the window once per recovery (`ssthresh`), a retransmission
//! timeout drops it to one segment.
//!
//! CUBIC as read at Linux 3.6 (`tcp_cubic.c` v2.3; the same function and constants from
//! 2.6.32 to 4.x): the window follows `W(t) = C (t − K)^3 + W_max` with `C = 410/1024`
//! (`bic_scale` 41 × 10 per 1024), `K = cbrt((W_max − cwnd) / C)` seconds from the loss,
//! `β = 717/1024`, fast convergence (a loss below the last maximum remembers
//! `cwnd (1 + β) / 2`), the 5 %-per-RTT cap before the first loss, TCP friendliness (the window
//! Reno would have, `3β/(2−β)`-scaled) and the delayed-ACK ratio that divides the per-ACK
//! count. Not modelled, declared: HyStart (its ACK-train and delay tests would end slow start
//! early at sub-millisecond RTTs), the minimum RTT added to `t` (≤ 0.1 ms here), proportional
//! rate reduction and undo, `tcp_slow_start_after_idle` (a stream never idles), ABC.
//!
//! Slow start grows the window by one segment per ACK up to Linux 3.x (`tcp_slow_start`: `cnt =
//! snd_cwnd` per ACK) and by the segments each ACK covers from 4.0 (`tcp_slow_start(tp,
//! acked)`, stretch ACKs): `client.tcp_slow_start`.

use crate::engine::{Time, NS_PER_S};
use crate::profile::{Congestion, SlowStart};

/// Linux `TCP_INFINITE_SSTHRESH`.
const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;
/// CUBIC's β, scaled by 1024 (`beta`).
const BETA: u32 = 717;
const BETA_SCALE: u32 = 1024;
/// CUBIC's C: `bic_scale` × 10 / 1024.
const C: f64 = 410.0 / 1024.0;
/// `3β/(2−β)` × 8 as `tcp_cubic.c`'s integer `beta_scale`: ACKs per Reno step × 8 / cwnd.
const FRIENDLY_SCALE: u32 = 8 * (BETA_SCALE + BETA) / 3 / (BETA_SCALE - BETA);
/// The delayed-ACK ratio's fixed point (`ACK_RATIO_SHIFT`) and cap (`ACK_RATIO_LIMIT`).
const ACK_RATIO_SHIFT: u32 = 4;
const ACK_RATIO_LIMIT: u32 = 32 << ACK_RATIO_SHIFT;
/// CUBIC recomputes its target at most every `HZ/32` for an unchanged window (31.25 ms).
const UPDATE_GAP_NS: Time = NS_PER_S / 32;

/// One sender's congestion state.
#[derive(Debug, Clone)]
pub struct Cwnd {
    algo: Congestion,
    slow_start: SlowStart,
    /// The congestion window, segments (`snd_cwnd`).
    pub cwnd: u32,
    /// The slow-start threshold, segments (`snd_ssthresh`).
    pub ssthresh: u32,
    /// ACKs counted towards the next +1 (`snd_cwnd_cnt`).
    cwnd_cnt: u32,
    cubic: Cubic,
}

/// CUBIC's own state (`struct bictcp`).
#[derive(Debug, Clone, Default)]
struct Cubic {
    /// ACKs per +1 in congestion avoidance.
    cnt: u32,
    last_max_cwnd: u32,
    last_cwnd: u32,
    last_time: Time,
    origin: u32,
    /// Time from the epoch's start to the origin, s.
    k_s: f64,
    epoch_start: Option<Time>,
    ack_cnt: u32,
    /// The window Reno would have (TCP friendliness).
    tcp_cwnd: u32,
    /// Segments per ACK, << `ACK_RATIO_SHIFT`.
    delayed_ack: u32,
}

impl Cubic {
    fn reset(&mut self) {
        *self = Cubic { delayed_ack: 2 << ACK_RATIO_SHIFT, ..Cubic::default() };
    }

    /// `bictcp_update`: how many ACKs make the next +1 at window `cwnd`.
    fn update(&mut self, now: Time, cwnd: u32) {
        self.ack_cnt += 1;
        if self.last_cwnd == cwnd && now.saturating_sub(self.last_time) <= UPDATE_GAP_NS {
            return;
        }
        self.last_cwnd = cwnd;
        self.last_time = now;
        let start = *self.epoch_start.get_or_insert_with(|| {
            self.ack_cnt = 1;
            self.tcp_cwnd = cwnd;
            if self.last_max_cwnd <= cwnd {
                self.k_s = 0.0;
                self.origin = cwnd;
            } else {
                self.k_s = (f64::from(self.last_max_cwnd - cwnd) / C).cbrt();
                self.origin = self.last_max_cwnd;
            }
            now
        });
        let t = (now - start) as f64 / NS_PER_S as f64;
        let target = f64::from(self.origin) + C * (t - self.k_s).powi(3);
        self.cnt = if target > f64::from(cwnd) {
            (f64::from(cwnd) / (target - f64::from(cwnd))) as u32
        } else {
            100 * cwnd
        };
        if self.last_max_cwnd == 0 {
            // Before the first loss: at most 5 % per RTT.
            self.cnt = self.cnt.min(20);
        }
        // TCP friendliness: never slower than Reno would be.
        let per_step = (cwnd * FRIENDLY_SCALE) >> 3;
        while per_step > 0 && self.ack_cnt > per_step {
            self.ack_cnt -= per_step;
            self.tcp_cwnd += 1;
        }
        if self.tcp_cwnd > cwnd {
            self.cnt = self.cnt.min(cwnd / (self.tcp_cwnd - cwnd));
        }
        self.cnt = ((self.cnt << ACK_RATIO_SHIFT) / self.delayed_ack).max(1);
    }

    /// `bictcp_acked` in the Open state: the segments-per-ACK ratio follows what this ACK covered.
    fn acked(&mut self, segs: u32) {
        let ratio = self.delayed_ack - (self.delayed_ack >> ACK_RATIO_SHIFT) + segs;
        self.delayed_ack = ratio.min(ACK_RATIO_LIMIT);
    }

    /// `bictcp_recalc_ssthresh` at window `cwnd`.
    fn ssthresh(&mut self, cwnd: u32) -> u32 {
        self.epoch_start = None;
        self.last_max_cwnd = if cwnd < self.last_max_cwnd { cwnd * (BETA_SCALE + BETA) / (2 * BETA_SCALE) } else { cwnd };
        (cwnd * BETA / BETA_SCALE).max(2)
    }
}

impl Cwnd {
    /// A connection's window at its start: `init` segments, no threshold yet.
    pub fn new(algo: Congestion, slow_start: SlowStart, init: u32) -> Self {
        let mut cubic = Cubic::default();
        cubic.reset();
        Cwnd { algo, slow_start, cwnd: init.max(1), ssthresh: INFINITE_SSTHRESH, cwnd_cnt: 0, cubic }
    }

    /// An ACK covering `segs` new segments arrived at `now`, outside recovery; `limited`: the
    /// sender was held by this window (`tcp_is_cwnd_limited`), which alone lets it grow.
    pub fn on_ack(&mut self, now: Time, segs: u32, limited: bool) {
        if self.algo == Congestion::Cubic {
            self.cubic.acked(segs);
        }
        if !limited || segs == 0 {
            return;
        }
        if self.cwnd <= self.ssthresh {
            self.cwnd = match self.slow_start {
                SlowStart::PerAck => self.cwnd + 1,
                SlowStart::PerSegment => (self.cwnd + segs).min(self.ssthresh.max(self.cwnd + 1)),
            };
            return;
        }
        let cnt = match self.algo {
            Congestion::Reno => self.cwnd,
            Congestion::Cubic => {
                self.cubic.update(now, self.cwnd);
                self.cubic.cnt
            }
        };
        // tcp_cong_avoid_ai: +1 after `cnt` ACKs.
        if self.cwnd_cnt >= cnt {
            self.cwnd += 1;
            self.cwnd_cnt = 0;
        } else {
            self.cwnd_cnt += 1;
        }
    }

    fn recalc_ssthresh(&mut self) -> u32 {
        match self.algo {
            Congestion::Reno => (self.cwnd / 2).max(2),
            Congestion::Cubic => self.cubic.ssthresh(self.cwnd),
        }
    }

    /// SACK showed a loss: fast retransmit and recovery, the window cut once.
    pub fn on_loss(&mut self) {
        self.ssthresh = self.recalc_ssthresh();
        self.cwnd = self.ssthresh;
        self.cwnd_cnt = 0;
    }

    /// The retransmission timer fired with segments outstanding (`TCP_CA_Loss`): one segment,
    /// slow start again up to the new threshold.
    pub fn on_timeout(&mut self) {
        self.ssthresh = self.recalc_ssthresh();
        self.cwnd = 1;
        self.cwnd_cnt = 0;
        // bictcp_state(TCP_CA_Loss): bictcp_reset, W_max forgotten with the rest.
        self.cubic.reset();
    }
}

#[cfg(test)]
mod tests;
