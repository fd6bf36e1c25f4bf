use super::*;

fn st(exit_us: u64, res_us: u64, cpu_us: u64) -> IdleState {
    IdleState { exit_latency_ns: exit_us * 1000, target_residency_ns: res_us * 1000, wake_cpu_ns: cpu_us * 1000 }
}

/// intel_idle ivt_cstates: C1 1/1, C1E 10/80, C3 59/156, C6 82/300 (µs).
fn ivt() -> StateTable {
    StateTable::new([st(1, 1, 0), st(10, 80, 0), st(59, 156, 0), st(82, 300, 0)])
}

/// A nested host: poll, halt woken while the outer hypervisor polls, halt after it slept
/// (KVM's default outer window, 200 µs).
fn nested() -> StateTable {
    StateTable::new([st(0, 0, 0), st(7, 0, 2), st(25, 200, 10)])
}

#[test]
fn menu_picks_deeper_states_for_longer_predicted_idles() {
    let t = ivt();
    let mut last = 0;
    for idle_us in [5, 90, 200, 1000] {
        let mut m = Menu::default();
        for _ in 0..8 {
            m.record(idle_us * 1000);
        }
        let s = m.select(&t);
        assert!(s >= last, "{idle_us} µs: state {s} after {last}");
        last = s;
    }
    assert_eq!(last, 3, "a 1 ms idle reaches C6");
    let mut m = Menu::default();
    for _ in 0..8 {
        m.record(9_000);
    }
    assert_eq!(m.select(&t), 0, "a vhost core idle ~9 µs at a time stays in C1");
    assert_eq!(Menu::default().select(&t), 3, "no history: as deep as possible");
}

#[test]
fn deepest_fit_is_menu_s_loop() {
    let t = ivt();
    assert_eq!(t.deepest_fit(0, 500), 0, "shorter than every residency: the shallowest");
    assert_eq!(t.deepest_fit(0, 80_000), 1);
    assert_eq!(t.deepest_fit(0, 200_000), 2);
    assert_eq!(t.deepest_fit(0, u64::MAX), 3);
    assert_eq!(t.deepest_fit(2, 0), 2, "never shallower than `from`");
}

#[test]
fn menu_drops_one_long_outlier() {
    let mut m = Menu::default();
    for x in [10_000, 11_000, 9_000, 10_000, 10_000, 12_000, 9_000, 5_000_000] {
        m.record(x);
    }
    assert!(m.predict() < 20_000, "{}", m.predict());
}

#[test]
fn menu_falls_back_to_the_mean_of_scattered_idles() {
    let mut m = Menu::default();
    let xs = [1_000, 400_000, 2_000, 900_000, 3_000, 700_000, 5_000, 600_000];
    for x in xs {
        m.record(x);
    }
    assert_eq!(m.predict(), xs.iter().sum::<u64>() / 8);
}

#[test]
fn menu_governor_pays_the_state_chosen_before_the_period() {
    let t = ivt();
    let mut g = Governor::new(GovernorKind::Menu, HaltpollConfig::default());
    assert_eq!(g.wake(&t, 5_000), 3, "first period: no history, deepest");
    assert_eq!(g.wake(&t, 5_000), 0, "then the 5 µs history predicts C1");
}

#[test]
fn haltpoll_window_grows_from_grow_start_by_two_up_to_guest_halt_poll_ns() {
    let t = nested();
    let mut h = Haltpoll::new(HaltpollConfig::default());
    assert_eq!(h.poll_limit_ns(), 0, "haltpoll_enable_device");
    // Halts of 150 µs: longer than the window, within guest_halt_poll_ns (200 µs): grow.
    let mut seen = vec![];
    for _ in 0..5 {
        h.wake(&t, 150_000 + h.poll_limit_ns());
        seen.push(h.poll_limit_ns());
    }
    assert_eq!(seen, [50_000, 100_000, 200_000, 200_000, 200_000]);
}

#[test]
fn haltpoll_window_shrinks_by_two_to_zero_below_grow_start() {
    let t = nested();
    let mut h = Haltpoll::new(HaltpollConfig::default());
    for _ in 0..3 {
        h.wake(&t, 150_000 + h.poll_limit_ns());
    }
    assert_eq!(h.poll_limit_ns(), 200_000);
    // A halt past guest_halt_poll_ns: shrink ÷2; below grow_start (50 µs): 0.
    let mut seen = vec![];
    for _ in 0..3 {
        h.wake(&t, 10_000_000);
        seen.push(h.poll_limit_ns());
    }
    assert_eq!(seen, [100_000, 50_000, 0]);
    let mut fixed = Haltpoll::new(HaltpollConfig { allow_shrink: false, ..HaltpollConfig::default() });
    fixed.wake(&t, 150_000);
    fixed.wake(&t, 10_000_000);
    assert_eq!(fixed.poll_limit_ns(), 50_000, "allow_shrink = N keeps the window");
    let mut reset = Haltpoll::new(HaltpollConfig { shrink: 0, ..HaltpollConfig::default() });
    reset.wake(&t, 150_000);
    reset.wake(&t, 10_000_000);
    assert_eq!(reset.poll_limit_ns(), 0, "shrink = 0 resets");
}

#[test]
fn haltpoll_pays_poll_inside_the_window_and_the_outer_outcome_past_it() {
    let t = nested();
    let mut h = Haltpoll::new(HaltpollConfig::default());
    assert_eq!(h.wake(&t, 30_000), 1, "window 0: halts at once; a 30 µs halt is woken by the outer poll");
    assert_eq!(h.poll_limit_ns(), 50_000);
    assert_eq!(h.wake(&t, 30_000), 0, "inside the 50 µs window: woken while polling");
    assert_eq!(h.poll_limit_ns(), 50_000, "a poll that saw its event leaves the window");
    assert_eq!(h.wake(&t, 5_000_000), 2, "a 5 ms idle: the outer hypervisor slept");
    let mut off = Haltpoll::new(HaltpollConfig { guest_halt_poll_ns: 0, ..HaltpollConfig::default() });
    for (idle, state) in [(20_000, 1), (150_000, 1), (250_000, 2), (20_000, 1)] {
        assert_eq!(off.wake(&t, idle), state, "guest polling off (this host): {idle} ns");
        assert_eq!(off.poll_limit_ns(), 0, "guest_halt_poll_ns = 0 never polls");
    }
}

#[test]
fn grow_start_zero_is_refused() {
    let e = HaltpollConfig { grow_start_ns: 0, ..HaltpollConfig::default() }.validate().unwrap_err();
    assert_eq!(e.to_string(), "host.cstates.haltpoll.grow_start_ns = 0: must be at least 1");
    assert!(HaltpollConfig::default().validate().is_ok());
}
