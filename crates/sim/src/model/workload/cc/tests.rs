//! The congestion window against Linux's arithmetic (tcp_cong.c, tcp_cubic.c as read at 3.6).

use super::*;

fn cubic(init: u32) -> Cwnd {
    Cwnd::new(Congestion::Cubic, SlowStart::PerAck, init)
}

#[test]
fn slow_start_adds_a_segment_per_ack_to_3x_and_per_segment_acked_from_4_0() {
    let mut w = cubic(3);
    for _ in 0..5 {
        w.on_ack(0, 2, true);
    }
    assert_eq!(w.cwnd, 8, "tcp_slow_start: cnt = snd_cwnd per ACK, so +1 per ACK");
    let mut w = Cwnd::new(Congestion::Cubic, SlowStart::PerSegment, 10);
    w.on_ack(0, 2, true);
    assert_eq!(w.cwnd, 12, "tcp_slow_start(tp, acked): +2 for an ACK of two");
}

#[test]
fn a_window_the_sender_does_not_fill_does_not_grow() {
    let mut w = cubic(10);
    for _ in 0..100 {
        w.on_ack(0, 2, false);
    }
    assert_eq!(w.cwnd, 10);
}

#[test]
fn reno_adds_one_segment_after_cwnd_plus_one_acks() {
    let mut w = Cwnd::new(Congestion::Reno, SlowStart::PerAck, 10);
    w.ssthresh = 5;
    for _ in 0..10 {
        w.on_ack(0, 1, true);
    }
    assert_eq!(w.cwnd, 10, "snd_cwnd_cnt reaches 10 on the 10th ACK");
    w.on_ack(0, 1, true);
    assert_eq!(w.cwnd, 11, "the 11th: snd_cwnd_cnt >= w, +1");
    w.on_loss();
    assert_eq!((w.cwnd, w.ssthresh), (5, 5), "tcp_reno_ssthresh: half, at least 2");
}

#[test]
fn cubic_cuts_to_beta_and_remembers_less_after_a_loss_below_its_last_maximum() {
    let mut w = cubic(100);
    w.on_loss();
    // 100 x 717 / 1024 = 70 (integer), W_max = 100.
    assert_eq!((w.cwnd, w.ssthresh, w.cubic.last_max_cwnd), (70, 70, 100));
    w.cwnd = 80;
    w.on_loss();
    // Fast convergence: 80 < 100, so W_max = 80 x (1024 + 717) / 2048 = 68.
    assert_eq!((w.cwnd, w.cubic.last_max_cwnd), (56, 68));
    let mut w = cubic(2);
    w.on_loss();
    assert_eq!(w.ssthresh, 2, "never below 2");
}

/// Congestion avoidance after a loss at 100 segments, one ACK per segment, an RTT of 100 ms
/// (long enough that CUBIC, not its Reno-friendly floor, decides): the window is back at
/// W_max when t reaches K = cbrt((100 - 70) / C) = 4.22 s, concave before it.
#[test]
fn cubic_returns_to_its_last_maximum_at_k_seconds_after_the_loss() {
    let mut w = cubic(100);
    w.ssthresh = 50;
    w.on_loss();
    let k_ns = ((30.0 / C).cbrt() * NS_PER_S as f64) as Time;
    let rtt: Time = 100_000_000;
    let (mut now, mut half) = (0, 0);
    while now < k_ns {
        // One RTT: an ACK per segment of the window, spread over it.
        let n = w.cwnd;
        for i in 0..n {
            w.on_ack(now + rtt * Time::from(i) / Time::from(n), 1, true);
        }
        now += rtt;
        if half == 0 && now >= k_ns / 2 {
            half = w.cwnd;
        }
    }
    assert!((97..=103).contains(&w.cwnd), "at t = K: {}", w.cwnd);
    // Concave: most of the way back by half of K (W(K/2) = 100 - C (K/2)^3 = 96.25).
    assert!((90..=99).contains(&half), "at K/2: {half}");
}

#[test]
fn a_timeout_drops_the_window_to_one_segment_and_slow_start_resumes_to_the_threshold() {
    let mut w = cubic(100);
    w.on_timeout();
    assert_eq!((w.cwnd, w.ssthresh), (1, 70));
    assert_eq!(w.cubic.last_max_cwnd, 0, "bictcp_reset at TCP_CA_Loss");
    for _ in 0..69 {
        w.on_ack(0, 1, true);
    }
    assert_eq!(w.cwnd, 70, "slow start up to ssthresh");
    w.on_ack(0, 1, true);
    assert_eq!(w.cwnd, 71, "snd_cwnd <= snd_ssthresh still slow-starts");
}
