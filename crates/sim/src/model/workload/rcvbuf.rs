//! A TCP receiver's socket buffer and Linux's receive-buffer autotuning ("dynamic right
//! sizing", `tcp_rcv_space_adjust` in net/ipv4/tcp_input.c), issue 49 item 1.
//!
//! The socket starts at `tcp_rmem[1]` (`guest.tcp_rmem_default_bytes`). Of a buffer of `space`
//! bytes of memory, `tcp_win_from_space` may be advertised as window (`guest.tcp_adv_win_scale`:
//! 2 keeps a quarter for skb overhead, 1 a half); the window is also held below the window
//! clamp. After each `recv()` (`tcp_recvmsg` calls the adjustment after its copy), once a
//! receiver RTT has passed since the last measure, the bytes copied to the application in it
//! decide a new buffer, up to `tcp_rmem[2]` (`guest.tcp_rmem_max_bytes`); the clamp follows.
//! Three versions of the rule (`guest.tcp_rcvbuf_autotune`), each as the kernel read:
//! - `double` (2.6.17 .. at least 3.10, read at 2.6.32-era and 3.x code): space = max(space,
//!   2 x copied); buffer = space / advmss x rcvmem; the clamp = space;
//! - `steps` (read at 4.4): only when copied grew: 2 x copied + 16 MSS, x1.5 if the rate rose
//!   25 %, x2 if 50 %; the clamp = `tcp_win_from_space(buffer)`;
//! - `grow` (read at 6.1): 2 x copied + 16 MSS plus twice its share of the rise; as `steps`;
//! - `off`: `tcp_moderate_rcvbuf = 0`.
//!
//! The receiver's RTT (`rcv_rtt_est`) is taken from timestamps (`tcp_rcv_rtt_measure_ts`,
//! `tcp_timestamps = 1` by default): the time from the guest's ACK to the data that echoes its
//! TSval, at the timestamp clock's resolution (a jiffy before 4.13; TCP_TS_HZ, 1 ms, on 6.1),
//! a sample of 0 counted as 1, smoothed by 1/8. On a LAN the sample is one tick, unless the vCPU
//! waited for its pCPU. Declared: the window-based minimum (`tcp_rcv_rtt_measure`), which can
//! only lower the estimate and on a jiffy clock never below the same one tick, is left out; on
//! 6.1's microsecond clock it would lower the estimate between timestamp samples. The initial
//! window's growth (`rcv_ssthresh`, `tcp_grow_window`: a few RTTs) is left out: the window starts
//! at the clamp. An explicit window (a scenario's `window_bytes`, `SO_RCVBUF` as `netperf -S`
//! sets it) locks the buffer: no autotuning.

use crate::engine::Time;
use crate::model::workload::net::SKB_OVERHEAD_BYTES;
use crate::profile::{Profile, RcvbufAutotune};

/// Linux `TCP_DEFAULT_INIT_RCVWND`: the initial receive window, in MSS (3.0 and later), which
/// `tcp_init_buffer_space` takes as the first measure's space.
const INIT_RCVWND_MSS: u64 = 10;

/// A receiver's buffer: fixed, or autotuned.
#[derive(Debug, Clone)]
pub struct RcvBuf {
    rule: RcvbufAutotune,
    /// A locked buffer's window (`SO_RCVBUF`), bytes.
    fixed: Option<u64>,
    advmss: u64,
    scale: i32,
    rmem_max: u64,
    /// Memory one full-sized skb costs (`rcvmem`).
    rcvmem: u64,
    /// `sk_rcvbuf`, bytes of memory.
    rcvbuf: u64,
    /// `window_clamp`, bytes of payload.
    clamp: u64,
    /// `rcvq_space`: the last measure's space, the copied count and the time it began.
    space: u64,
    space_seq: u64,
    space_time: u64,
    /// `rcv_rtt_est.rtt` (8 x, in `time_ns` units; 0: none yet) and the last TSecr seen.
    rtt8: u64,
    last_tsecr: u64,
    /// Resolution of the time the measure is counted in, and of the timestamp clock (ns).
    time_ns: u64,
    ts_ns: u64,
    /// The window it started at (for the summary).
    pub first_window: u64,
    /// The largest window it allowed (for the summary).
    pub max_window: u64,
}

/// `tcp_win_from_space`: the window a buffer of `space` bytes of memory allows.
pub fn win_from_space(space: u64, scale: i32) -> u64 {
    if scale <= 0 {
        space >> (-scale).min(63) as u32
    } else {
        space - (space >> scale.min(63) as u32)
    }
}

impl RcvBuf {
    /// A receiver's buffer: `fixed` bytes of window (an explicit `SO_RCVBUF`), or the profile
    /// kernel's default and autotuning; `advmss` its MSS.
    pub fn new(fixed: Option<u64>, advmss: u64, p: &Profile) -> Self {
        let g = &p.guest;
        let rule = g.tcp_rcvbuf_autotune.value;
        let scale = g.tcp_adv_win_scale.value as i32;
        let mut rcvmem = advmss + SKB_OVERHEAD_BYTES;
        while win_from_space(rcvmem, scale) < advmss {
            rcvmem += 128;
        }
        let rcvbuf = g.tcp_rmem_default_bytes.value as u64;
        let clamp = win_from_space(rcvbuf, scale).max(advmss);
        let jiffy = (1e9 / g.tick_hz.value).round().max(1.0) as u64;
        let (time_ns, ts_ns) = match rule {
            RcvbufAutotune::Grow => (1_000, 1_000_000),
            _ => (jiffy, jiffy),
        };
        let mut b = RcvBuf {
            rule,
            fixed,
            advmss,
            scale,
            rmem_max: (g.tcp_rmem_max_bytes.value as u64).max(rcvbuf),
            rcvmem,
            rcvbuf,
            clamp,
            space: clamp.min(INIT_RCVWND_MSS * advmss),
            space_seq: 0,
            space_time: 0,
            rtt8: 0,
            last_tsecr: u64::MAX,
            time_ns,
            ts_ns,
            first_window: 0,
            max_window: 0,
        };
        b.first_window = b.window();
        b.max_window = b.first_window;
        b
    }

    /// The payload the socket may hold now (what it advertises when empty).
    pub fn window(&self) -> u64 {
        match self.fixed {
            Some(w) => w,
            None => self.clamp.min(win_from_space(self.rcvbuf, self.scale)).max(self.advmss),
        }
    }

    /// Whether the buffer is tuned (not locked, and the kernel's `tcp_moderate_rcvbuf` on).
    pub fn tuned(&self) -> bool {
        self.fixed.is_none() && self.rule != RcvbufAutotune::Off
    }

    /// The timestamp an ACK sent at `now` carries (TSval).
    pub fn tsval(&self, now: Time) -> u64 {
        now / self.ts_ns
    }

    /// A data segment echoing `tsecr` was received at `now` (`tcp_rcv_rtt_measure_ts`: once per
    /// new TSecr).
    pub fn received(&mut self, now: Time, tsecr: u64) {
        if !self.tuned() || tsecr == self.last_tsecr || tsecr == u64::MAX {
            return;
        }
        self.last_tsecr = tsecr;
        let ticks = (now / self.ts_ns).saturating_sub(tsecr).max(1);
        // The sample in the measure's units (`tcp_rcv_rtt_update`, not window-dependent).
        let m = ticks * (self.ts_ns / self.time_ns);
        self.rtt8 = if self.rtt8 == 0 { m << 3 } else { (self.rtt8 + m).saturating_sub(self.rtt8 >> 3) };
    }

    /// The application has copied `copied_total` bytes since the start, at `now`
    /// (`tcp_rcv_space_adjust`).
    pub fn copied(&mut self, now: Time, copied_total: u64) {
        if !self.tuned() {
            return;
        }
        let t = now / self.time_ns;
        if self.rtt8 == 0 || t.saturating_sub(self.space_time) < self.rtt8 >> 3 {
            return;
        }
        let copied = copied_total - self.space_seq;
        match self.rule {
            RcvbufAutotune::Double => {
                let space = self.space.max(2 * copied);
                if space != self.space {
                    self.space = space;
                    let buf = ((space / self.advmss).max(1) * self.rcvmem).min(self.rmem_max);
                    if buf > self.rcvbuf {
                        self.rcvbuf = buf;
                        self.clamp = space;
                    }
                }
            }
            RcvbufAutotune::Steps | RcvbufAutotune::Grow if copied > self.space => {
                let mut rcvwin = 2 * copied + 16 * self.advmss;
                if self.rule == RcvbufAutotune::Steps {
                    if copied >= self.space + (self.space >> 2) {
                        rcvwin = if copied >= self.space + (self.space >> 1) { rcvwin << 1 } else { rcvwin + (rcvwin >> 1) };
                    }
                } else {
                    let grow = (rcvwin as u128 * (copied - self.space) as u128 / self.space.max(1) as u128) as u64;
                    rcvwin = rcvwin.saturating_add(grow.saturating_mul(2));
                }
                let buf = (rcvwin / self.advmss).saturating_mul(self.rcvmem).min(self.rmem_max);
                if buf > self.rcvbuf {
                    self.rcvbuf = buf;
                    self.clamp = win_from_space(buf, self.scale);
                }
                self.space = copied;
            }
            _ => {}
        }
        self.space_seq = copied_total;
        self.space_time = t;
        self.max_window = self.max_window.max(self.window());
    }
}

#[cfg(test)]
mod tests;
