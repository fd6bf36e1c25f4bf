//! The receive buffer's autotuning against the kernels' rules (`rcvbuf.rs`).

use super::*;
use crate::profile::Profile;

const MSS: u64 = 1448;
const MS: Time = 1_000_000;

fn profile(name: &str, rule: RcvbufAutotune) -> Profile {
    let mut p = Profile::load(name).expect("builtin profile");
    p.guest.tcp_rcvbuf_autotune.value = rule;
    p
}

/// A receiver fed `per_ms` bytes each millisecond for `ms` ms, its ACKs echoed at once (a
/// LAN: the RTT sample is one tick); the window after each millisecond.
fn drive(b: &mut RcvBuf, per_ms: impl Fn(u64) -> u64, ms: u64) -> Vec<u64> {
    let (mut copied, mut out) = (0, vec![]);
    for k in 0..ms {
        let now = k * MS + 10_000;
        b.received(now, b.tsval(now - 5_000));
        copied += per_ms(b.window());
        b.copied(now + 500, copied);
        out.push(b.window());
    }
    out
}

#[test]
fn a_buffers_window_is_what_the_adv_win_scale_leaves_of_it() {
    assert_eq!(win_from_space(87_380, 2), 65_535);
    assert_eq!(win_from_space(87_380, 1), 43_690);
    assert_eq!(win_from_space(87_380, -1), 43_690);
    assert_eq!(win_from_space(87_380, 0), 87_380);
}

#[test]
fn the_window_starts_at_the_kernels_default_buffer() {
    // 2.6.32 (sriov): 87,380 bytes advertise 65,535; 6.1 (modern): 131,072 advertise 65,536.
    assert_eq!(RcvBuf::new(None, MSS, &Profile::load("sriov").unwrap()).window(), 65_535);
    assert_eq!(RcvBuf::new(None, MSS, &Profile::load("modern").unwrap()).window(), 65_536);
}

#[test]
fn a_fixed_so_rcvbuf_stays_fixed() {
    let p = Profile::load("es2").unwrap();
    let mut b = RcvBuf::new(Some(65_536), MSS, &p);
    let w = drive(&mut b, |w| w, 50);
    assert!(w.iter().all(|&x| x == 65_536), "{w:?}");
}

#[test]
fn tcp_moderate_rcvbuf_off_keeps_the_default() {
    let p = profile("es2", RcvbufAutotune::Off);
    let mut b = RcvBuf::new(None, MSS, &p);
    let w0 = b.window();
    assert!(drive(&mut b, |w| w, 50).iter().all(|&x| x == w0));
}

#[test]
fn a_window_bound_stream_grows_its_window_to_the_kernels_limit_under_each_rule() {
    for (name, rule) in [("sriov", RcvbufAutotune::Double), ("es2", RcvbufAutotune::Steps), ("modern", RcvbufAutotune::Grow)] {
        let p = profile(name, rule);
        let mut b = RcvBuf::new(None, MSS, &p);
        let w0 = b.window();
        // The application copies a window per millisecond: a window-bound stream.
        let w = drive(&mut b, |w| w, 60);
        assert!(w.windows(2).all(|x| x[0] <= x[1]), "{name}: the window never shrinks: {w:?}");
        let cap = win_from_space(p.guest.tcp_rmem_max_bytes.value as u64, p.guest.tcp_adv_win_scale.value as i32);
        let last = *w.last().unwrap();
        assert!(last > 8 * w0, "{name}: grew from {w0} to only {last}");
        assert!(last <= cap && last * 10 >= cap * 7, "{name}: ends at {last}, the limit allows {cap}");
        assert_eq!(b.max_window, last);
    }
}

#[test]
fn a_stream_below_its_window_stops_growing_it() {
    // Copying a steady 50 KB per millisecond, whatever the window: the buffer settles at a few
    // times what one receiver RTT (a jiffy) carries, far below tcp_rmem[2].
    for (name, rule) in [("sriov", RcvbufAutotune::Double), ("es2", RcvbufAutotune::Steps)] {
        let p = profile(name, rule);
        let mut b = RcvBuf::new(None, MSS, &p);
        let per_rtt = 50_000 * (1000.0 / p.guest.tick_hz.value) as u64;
        let w = drive(&mut b, |w| w.min(50_000), 60);
        let last = *w.last().unwrap();
        assert_eq!(w[40], last, "{name}: settled: {w:?}");
        assert!((2 * per_rtt..=8 * per_rtt).contains(&last), "{name}: {last} for {per_rtt} per RTT");
    }
}

#[test]
fn steps_is_linux_4_4s_arithmetic() {
    // space 14,480 (10 MSS), 100,000 bytes copied in the RTT (> 1.5 x): rcvwin = (2 x 100,000 +
    // 16 x 1,448) x 2 = 446,336; rcvmem = 1,448 + 768 rounded up by 128s until half of it
    // holds an MSS = 2,984; sk_rcvbuf = 446,336 / 1,448 x 2,984 = 919,072; clamp = 459,536.
    let p = profile("es2", RcvbufAutotune::Steps);
    let mut b = RcvBuf::new(None, MSS, &p);
    let jiffy = (1e9 / p.guest.tick_hz.value) as u64;
    b.received(jiffy, b.tsval(0));
    b.copied(jiffy, 100_000);
    assert_eq!((b.rcvbuf, b.clamp, b.window()), (919_072, 459_536, 459_536));
}

#[test]
fn the_buffer_is_measured_once_per_receiver_rtt() {
    // Copies inside one jiffy of the last measure change nothing.
    let p = profile("sriov", RcvbufAutotune::Double);
    let mut b = RcvBuf::new(None, MSS, &p);
    let jiffy = (1e9 / p.guest.tick_hz.value) as u64;
    b.received(10, b.tsval(0));
    b.copied(jiffy / 2, 1_000_000);
    assert_eq!(b.window(), 65_535);
    b.copied(jiffy + 1, 1_000_000);
    assert!(b.window() > 65_535);
}
