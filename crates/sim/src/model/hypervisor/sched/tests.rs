//! Unit tests of the scheduler alone, driven with CPU hogs (threads that never sleep).

use super::*;

fn params() -> Params {
    Params {
        latency_ns: 24_000_000,
        min_granularity_ns: 3_000_000,
        wakeup_granularity_ns: 4_000_000,
        context_switch_ns: 0,
        migration_ns: 0,
        idle_wakeup_ns: 0.0,
        timer_wakeup_ns: 0.0,
        idle_wakeup_spread_ns: 0.0,
        cstates: CStateTable::default(),
        balance_interval_ns: 8_000_000,
        busy_factor: 32,
        migration_cost_ns: 500_000,
        cores_per_llc: 8,
    }
}

/// Play hogs: every Resched preempts at once; run ticks at 250 Hz until `end`.
fn run_hogs(s: &mut Sched, from: Time, end: Time) {
    let tick = 4_000_000;
    let mut now = from;
    while now < end {
        now += tick;
        for c in 0..s.ncpus() {
            s.tick(now, c);
            while let Some(a) = s.actions.pop_front() {
                if let Action::Resched { cpu } = a {
                    s.deschedule(now, cpu, false);
                }
            }
        }
    }
}

#[test]
fn two_hogs_share_one_pcpu_half_and_half() {
    let mut s = Sched::new(params(), 1);
    let a = s.add(0, 1, Rng::for_component(1, "a"));
    let b = s.add(0, 1, Rng::for_component(1, "b"));
    s.start(0, a);
    s.start(0, b);
    s.actions.clear();
    run_hogs(&mut s, 0, 2_000_000_000);
    let (ra, rb) = (s.run_ns(2_000_000_000, a, 0), s.run_ns(2_000_000_000, b, 0));
    assert_eq!(ra + rb, 2_000_000_000);
    let share = ra as f64 / (ra + rb) as f64;
    assert!((share - 0.5).abs() < 0.02, "share {share}");
}

#[test]
fn nice_19_gets_a_small_share_against_nice_0() {
    let mut s = Sched::new(params(), 1);
    let a = s.add(0, 1, Rng::for_component(1, "a"));
    let b = s.add(19, 1, Rng::for_component(1, "b"));
    s.start(0, a);
    s.start(0, b);
    run_hogs(&mut s, 0, 2_000_000_000);
    let rb = s.run_ns(2_000_000_000, b, 0) as f64 / 2e9;
    // Weights 1024 : 15, but a slice is at least one tick: the nice-19 hog gets a few %.
    assert!(rb < 0.1, "nice 19 share {rb}");
}

#[test]
fn load_balancing_spreads_four_hogs_over_four_pcpus() {
    let mut s = Sched::new(params(), 4);
    let ids: Vec<u32> = (0..4).map(|i| s.add(0, 1, Rng::for_component(1, &format!("h{i}")))).collect();
    for &t in &ids {
        s.start(0, t);
    }
    // All four started on pCPU 0 (pinned there); now let them run anywhere.
    for &t in &ids {
        s.threads[t as usize].allowed = super::CpuMask::first(4);
    }
    run_hogs(&mut s, 0, 100_000_000);
    for c in 0..4 {
        assert_eq!(s.rqs[c].nr_running(), 1, "pCPU {c}: {:?}", s.rqs[c]);
    }
    let end = 1_100_000_000;
    run_hogs(&mut s, 100_000_000, end);
    for &t in &ids {
        let total: u64 = (0..4).map(|c| s.run_ns(end, t, c)).sum();
        assert!(total as f64 > 0.9 * (end - 100_000_000) as f64, "hog {t} ran {total}");
    }
}

#[test]
fn pinned_threads_never_run_elsewhere() {
    let mut s = Sched::new(params(), 4);
    let pinned: Vec<u32> = (0..3).map(|i| s.add(0, 1 << 2, Rng::for_component(1, &format!("p{i}")))).collect();
    for &t in &pinned {
        s.start(0, t);
    }
    run_hogs(&mut s, 0, 500_000_000);
    for &t in &pinned {
        for c in [0, 1, 3] {
            assert_eq!(s.run_ns(500_000_000, t, c), 0);
        }
    }
}

#[test]
fn a_woken_thread_preempts_a_hog_long_before_its_slice_ends() {
    let mut s = Sched::new(params(), 1);
    let hog = s.add(19, 1, Rng::for_component(1, "hog"));
    let io = s.add(0, 1, Rng::for_component(1, "io"));
    s.start(0, hog);
    s.actions.clear();
    // The hog has run 100 ms alone; the I/O thread wakes.
    s.tick(100_000_000, 0);
    s.wake(100_000_000, io, None);
    assert!(s.actions.contains(&Action::Resched { cpu: 0 }), "{:?}", s.actions);
    s.actions.clear();
    s.deschedule(100_000_000, 0, false);
    assert_eq!(s.rqs[0].curr, Some(io));
}

#[test]
fn wake_up_prefers_an_idle_previous_cpu_and_else_an_idle_core() {
    let mut s = Sched::new(params(), 4);
    let busy = s.add(0, 1, Rng::for_component(1, "b")); // pinned on 0
    let t = s.add(0, 0b1111, Rng::for_component(1, "t")); // last ran on 1
    s.start(0, busy);
    s.wake(10, t, Some(0));
    assert_eq!(s.threads[t as usize].cpu, 1, "idle previous CPU");
    s.deschedule(20, 1, true);
    // Occupy pCPU 1 with a pinned hog: the wake-up goes to another idle core, not the waker's.
    let h = s.add(0, 0b10, Rng::for_component(1, "h"));
    s.start(30, h);
    s.wake(40, t, Some(0));
    assert_eq!(s.threads[t as usize].cpu, 2);
}

/// A pCPU woken every 10 µs stays in C1; after a long idle it pays the deep state's exit.
#[test]
fn idle_wakeup_pays_the_governors_state() {
    let mut p = params();
    p.cstates = CStateTable::new([(1_000, 1_000), (82_000, 300_000)]);
    let mut s = Sched::new(p, 1);
    let t = s.add(0, 1, Rng::for_component(1, "t"));
    let delay_of = |s: &mut Sched| {
        let d = s.actions.iter().find_map(|a| match *a {
            Action::SwitchIn { delay, .. } => Some(delay),
            _ => None,
        });
        s.actions.clear();
        d.expect("a switch-in")
    };
    // First wake-up: no history, the governor went as deep as it could.
    s.wake(1_000_000, t, None);
    assert_eq!(delay_of(&mut s), 82_000);
    let mut now = 1_000_000 + 82_000;
    for _ in 0..10 {
        now += 2_000;
        s.deschedule(now, 0, true);
        now += 10_000;
        s.wake(now, t, None);
        let d = delay_of(&mut s);
        now += d;
    }
    s.deschedule(now, 0, true);
    s.wake(now + 10_000, t, None);
    assert_eq!(delay_of(&mut s), 1_000, "regular 10 µs idles: C1");
    assert!(s.cstate_wakeups[0] >= 8 && s.cstate_wakeups[1] >= 1, "{:?}", s.cstate_wakeups);
}

/// A pCPU whose idle periods average under the migration cost does not idle-balance
/// (`idle_balance`'s `avg_idle` gate); one idle for longer does.
#[test]
fn idle_balance_needs_a_long_average_idle() {
    let mut s = Sched::new(params(), 2);
    let a = s.add(0, 0b01, Rng::for_component(1, "a")); // pinned on 0
    let b = s.add(0, 0b11, Rng::for_component(1, "b"));
    let c = s.add(0, 0b11, Rng::for_component(1, "c"));
    let sleeper = s.add(0, 0b10, Rng::for_component(1, "s")); // pinned on 1
    for t in [a, b, c] {
        s.threads[t as usize].cpu = 0;
        s.start(0, t);
    }
    // pCPU 1 has idled in short bursts (average 0.1 ms) and keeps idling 10 µs at a time.
    s.rqs[1].avg_idle = 100_000;
    let mut now = 10_000_000; // b and c last ran long ago: not cache-hot
    for _ in 0..40 {
        s.wake(now, sleeper, None);
        now += 1_000;
        s.deschedule(now, 1, true);
        now += 10_000;
    }
    assert!(s.rqs[1].avg_idle < 500_000, "{}", s.rqs[1].avg_idle);
    assert_eq!(s.rqs[1].curr, None, "pCPU 1 went idle without pulling b or c");
    assert_eq!(s.migrations[Migration::IdleBalance as usize], 0);
    // A long idle raises the average; the next time pCPU 1 goes idle it pulls a waiter.
    s.rqs[1].avg_idle = 1_000_000;
    s.wake(now, sleeper, None);
    s.deschedule(now + 1_000, 1, true);
    assert_eq!(s.migrations[Migration::IdleBalance as usize], 1);
    assert!(matches!(s.rqs[1].curr, Some(t) if t == b || t == c));
}

/// A waiting thread that ran within the migration cost is cache-hot: periodic balancing
/// leaves it until balancing has failed `cache_nice_tries` + 1 times in a row.
#[test]
fn cache_hot_threads_stay_until_balancing_keeps_failing() {
    let mut s = Sched::new(params(), 2);
    let ids: Vec<u32> = (0..3).map(|i| s.add(0, 0b11, Rng::for_component(1, &format!("h{i}")))).collect();
    for &t in &ids {
        s.threads[t as usize].cpu = 0;
        s.start(0, t);
    }
    let pin = s.add(0, 0b10, Rng::for_component(1, "p"));
    s.start(0, pin); // keeps pCPU 1 busy, so only periodic balancing pulls
    let now = 100_000;
    // The waiters on pCPU 0 ran "just now".
    for &t in &ids {
        s.threads[t as usize].exec_start = now - 1_000;
    }
    for attempt in 0..3 {
        s.rqs[1].next_balance = 0;
        s.trigger_load_balance(now, 1);
        let moved = s.migrations[Migration::PeriodicBalance as usize];
        assert_eq!(moved, (attempt == 2) as u64, "attempt {attempt}");
    }
}

/// A thread woken onto its idle pCPU by another's signal pays `idle_wakeup_ns` before it runs;
/// woken by the expiry of its own timed sleep, `timer_wakeup_ns`.
#[test]
fn a_timer_wake_up_pays_the_timer_latency_not_the_signal_one() {
    let p = Params { idle_wakeup_ns: 30_000.0, timer_wakeup_ns: 8_000.0, ..params() };
    let mut s = Sched::new(p, 1);
    let t = s.add(0, 1, Rng::for_component(1, "t"));
    let delay_of = |s: &mut Sched| loop {
        match s.actions.pop_front() {
            Some(Action::SwitchIn { delay, .. }) => break delay,
            Some(_) => continue,
            None => panic!("no switch-in"),
        }
    };
    s.start(0, t);
    delay_of(&mut s);
    s.deschedule(1_000, 0, true);
    s.actions.clear();
    s.wake(2_000, t, None);
    assert_eq!(delay_of(&mut s), 30_000);
    s.deschedule(50_000, 0, true);
    s.actions.clear();
    s.wake_by_timer(60_000, t);
    assert_eq!(delay_of(&mut s), 8_000);
}

/// The wake-up of an idle pCPU (IPI, idle exit) is not the woken thread's reported run time
/// (schedstat starts it when the thread runs); its vruntime is unchanged by that.
#[test]
fn an_idle_pcpus_wake_up_is_not_the_threads_run_time() {
    let p = Params { idle_wakeup_ns: 30_000.0, ..params() };
    let mut s = Sched::new(p, 1);
    let t = s.add(0, 1, Rng::for_component(1, "t"));
    s.start(0, t);
    s.deschedule(1_000, 0, true);
    s.actions.clear();
    let ran_before = s.run_ns(100_000, t, 0);
    s.wake(100_000, t, None);
    assert!(s.actions.iter().any(|a| matches!(a, Action::SwitchIn { from_idle: true, delay: 30_000, .. })));
    assert_eq!(s.run_ns(120_000, t, 0), ran_before, "still waking");
    assert_eq!(s.run_ns(140_000, t, 0), ran_before + 10_000);
    s.deschedule(140_000, 0, true);
    assert_eq!(s.run_ns(200_000, t, 0), ran_before + 10_000);
}

/// A nested host (haltpoll governor, guest polling off as on this project's machines): the
/// halt's outcome is the outer hypervisor's, by the halt's length. A thread woken at a high
/// rate (short idles) pays the polled halt's exit and CPU; at a low rate, the slept one's.
#[test]
fn idle_curve_wake_up_latency_and_cpu_fall_with_the_rate() {
    use eventpath_policy::idle::{GovernorKind, HaltpollConfig, IdleState, StateTable};
    let st = |e: u64, r: u64, c: u64| IdleState { exit_latency_ns: e, target_residency_ns: r, wake_cpu_ns: c };
    let mut p = params();
    p.cstates = CStateTable {
        table: StateTable::new([st(0, 0, 0), st(5_000, 0, 1_000), st(20_000, 100_000, 6_000), st(40_000, 1_000_000, 12_000)]),
        governor: GovernorKind::Haltpoll,
        haltpoll: HaltpollConfig { guest_halt_poll_ns: 0, ..HaltpollConfig::default() },
    };
    // Mean (wake-up delay, wake-up CPU) of a thread woken every `gap` ns.
    let at_gap = |gap: Time| {
        let mut s = Sched::new(p, 1);
        let t = s.add(0, 1, Rng::for_component(1, "t"));
        s.start(0, t);
        s.actions.clear();
        let (mut now, mut delay_sum, mut cpu_sum) = (0, 0, 0);
        for _ in 0..20 {
            s.deschedule(now + 1_000, 0, true);
            now += gap;
            s.wake(now, t, None);
            let d = s.actions.iter().find_map(|a| match *a {
                Action::SwitchIn { delay, .. } => Some(delay),
                _ => None,
            });
            s.actions.clear();
            delay_sum += d.expect("a switch-in");
            cpu_sum += s.take_wake_cpu(0);
            assert_eq!(s.take_wake_cpu(0), 0, "taken once");
            now += d.unwrap();
        }
        (delay_sum / 20, cpu_sum / 20)
    };
    let (slow, mid, fast) = (at_gap(5_000_000), at_gap(200_000), at_gap(20_000));
    assert_eq!(fast, (5_000, 1_000), "50 k wake-ups/s: caught by the outer poll");
    assert_eq!(mid, (20_000, 6_000));
    assert_eq!(slow, (40_000, 12_000), "200 wake-ups/s: the outer hypervisor slept");
}

/// Under menu a wake-up pays the CPU of the state chosen, and a switch-in from a busy pCPU
/// owes none.
#[test]
fn menu_wake_cpu_follows_the_state() {
    use eventpath_policy::idle::{IdleState, StateTable};
    let mut p = params();
    p.cstates.table = StateTable::new([
        IdleState { exit_latency_ns: 1_000, target_residency_ns: 1_000, wake_cpu_ns: 100 },
        IdleState { exit_latency_ns: 80_000, target_residency_ns: 300_000, wake_cpu_ns: 9_000 },
    ]);
    let mut s = Sched::new(p, 1);
    let t = s.add(0, 1, Rng::for_component(1, "t"));
    let u = s.add(0, 1, Rng::for_component(1, "u"));
    s.wake(1_000_000, t, None);
    assert_eq!(s.take_wake_cpu(0), 9_000, "no history: the deepest state");
    s.wake(1_100_000, u, None);
    s.deschedule(1_200_000, 0, true);
    assert_eq!(s.take_wake_cpu(0), 0, "u switched in from a busy pCPU");
}

/// The thread a pick took last among equal vruntimes, from `s`'s actions.
fn last_switched_in(s: &mut Sched) -> Option<u32> {
    let mut last = None;
    while let Some(a) = s.actions.pop_front() {
        if let Action::SwitchIn { tid, .. } = a {
            last = Some(tid);
        }
    }
    last
}

#[test]
fn equal_vruntimes_run_in_the_order_they_entered_the_runqueue() {
    // __enqueue_entity puts a key equal to one already in the tree to its right: among equal
    // vruntimes the earlier arrival goes first, whatever the thread ids (not the lowest id).
    let mut s = Sched::new(params(), 1);
    let ts: Vec<u32> = (0..3).map(|i| s.add(0, CpuMask::bit(0), Rng::for_component(i, "t"))).collect();
    s.start(0, ts[0]);
    s.start(0, ts[2]);
    s.start(0, ts[1]);
    assert_eq!(last_switched_in(&mut s), Some(ts[0]));
    s.deschedule(0, 0, false); // ran nothing: still equal to the others, and now the last in
    assert_eq!(last_switched_in(&mut s), Some(ts[2]), "2 entered before 1");
    s.deschedule(0, 0, false);
    assert_eq!(last_switched_in(&mut s), Some(ts[1]));
    s.deschedule(0, 0, false);
    assert_eq!(last_switched_in(&mut s), Some(ts[0]), "0 re-entered after both");
}

#[test]
fn a_thread_started_late_waits_a_slice_behind_those_there() {
    // wake_up_new_task: place_entity(initial) puts a new thread a vslice behind min_vruntime
    // (START_DEBIT), so the running hog keeps its slice; one there at the start does not pay it.
    let mut s = Sched::new(params(), 1);
    let (a, b) = (s.add(0, CpuMask::bit(0), Rng::for_component(1, "a")), s.add(0, CpuMask::bit(0), Rng::for_component(2, "b")));
    s.start(0, a);
    last_switched_in(&mut s);
    s.start(1_000_000, b);
    let (va, vb) = (s.threads[a as usize].vruntime, s.threads[b as usize].vruntime);
    // a's 1 ms; b's debit: the 24 ms period over two threads' weight, 12 ms.
    assert_eq!((va, vb), (1_000_000, 13_000_000));
    assert!(!s.need_resched(0), "no wake-up preemption for a new thread");
}

#[test]
fn a_thread_picked_again_after_it_yielded_switches_nothing() {
    // __schedule: prev == next keeps the thread on the pCPU: no context switch paid or counted.
    let mut p = params();
    p.context_switch_ns = 1_500;
    let mut s = Sched::new(p, 1);
    let a = s.add(0, CpuMask::bit(0), Rng::for_component(1, "a"));
    s.start(0, a);
    s.actions.clear();
    let before = s.switches;
    s.deschedule(1_000_000, 0, false); // alone: it is the leftmost again
    let ins: Vec<(u32, u64)> = s.actions.drain(..).filter_map(|x| match x { Action::SwitchIn { tid, delay, .. } => Some((tid, delay)), _ => None }).collect();
    assert_eq!(ins, vec![(a, 0)]);
    assert_eq!(s.switches, before);
    // Another thread picked instead pays the switch.
    let b = s.add(0, CpuMask::bit(0), Rng::for_component(2, "b"));
    s.start(1_000_000, b);
    s.actions.clear();
    s.deschedule(30_000_000, 0, false);
    let ins: Vec<(u32, u64)> = s.actions.drain(..).filter_map(|x| match x { Action::SwitchIn { tid, delay, .. } => Some((tid, delay)), _ => None }).collect();
    assert_eq!(ins, vec![(b, 1_500)]);
    assert_eq!(s.switches, before + 1);
}

// Transcriptions of Linux 4.4's wake-up placement (kernel/sched/fair.c), kept close to the C
// (integer arithmetic, the group list walked as a ring), against the model's pure functions
// (`place.rs`) over many states.

/// `wake_wide` as the C has it.
fn c_wake_wide(current_flips: u32, p_flips: u32, sd_llc_size: u32) -> bool {
    let mut master = current_flips;
    let mut slave = p_flips;
    let factor = sd_llc_size as u64;
    if master < slave {
        std::mem::swap(&mut master, &mut slave);
    }
    if (slave as u64) < factor || (master as u64) < slave as u64 * factor {
        return false;
    }
    true
}

/// `wake_affine`'s balance as the C computes it (s64, `capacity_of` equal on both CPUs,
/// `effective_load` of the root group returning its `wl`), `sync` discounting `current`.
fn c_wake_affine(mut this_load: i64, mut load: i64, weight: i64, sync: Option<i64>, imbalance_pct: i64) -> bool {
    let capacity = 1024i64;
    if let Some(cw) = sync {
        this_load += -cw; // effective_load(tg, this_cpu, -weight, -weight)
        load += 0; // effective_load(tg, prev_cpu, 0, -weight)
    }
    let mut this_eff_load: i64 = 100;
    this_eff_load *= capacity;
    let mut prev_eff_load: i64 = 100 + (imbalance_pct - 100) / 2;
    prev_eff_load *= capacity;
    if this_load > 0 {
        this_eff_load *= this_load + weight;
        prev_eff_load *= load;
    }
    this_eff_load <= prev_eff_load
}

/// `select_idle_sibling` as the C walks it: `sd_llc`'s groups (one CPU each, no SMT) as a
/// ring starting at the group of the target (`sd->groups`).
fn c_select_idle_sibling(idle: &[bool], allowed: &[bool], prev: usize, mut target: usize, llc: usize) -> usize {
    let shares_cache = |a: usize, b: usize| a / llc == b / llc;
    if idle[target] {
        return target;
    }
    let i = prev;
    if i != target && shares_cache(i, target) && idle[i] {
        return i;
    }
    let first = target / llc * llc;
    let span: Vec<usize> = (first..(first + llc).min(idle.len())).collect();
    let start = span.iter().position(|&c| c == target).unwrap();
    let mut sg = start;
    loop {
        let group = [span[sg]];
        let intersects = group.iter().any(|&c| allowed[c]);
        let all_idle = group.iter().all(|&c| c != target && idle[c]);
        if intersects && all_idle {
            target = *group.iter().find(|&&c| allowed[c]).unwrap();
            return target;
        }
        sg = (sg + 1) % span.len();
        if sg == start {
            break;
        }
    }
    target
}

#[test]
fn wake_wide_matches_the_c() {
    for a in 0..80 {
        for b in 0..80 {
            for llc in [1, 2, 4, 8, 16] {
                assert_eq!(super::place::wide(a, b, llc), c_wake_wide(a, b, llc), "flips {a} {b} llc {llc}");
            }
        }
    }
}

#[test]
fn wake_affine_matches_the_c_over_many_loads() {
    let mut rng = Rng::for_component(7, "wake_affine");
    for _ in 0..200_000 {
        let r = |rng: &mut Rng, n: u64| (rng.next_u64() % n) as i64;
        let this = r(&mut rng, 4096);
        let prev = r(&mut rng, 4096);
        let w = r(&mut rng, 1025);
        let sync = (rng.next_u64() % 2 == 0).then(|| r(&mut rng, 1025).min(this));
        let model = super::place::affine_balanced((this - sync.unwrap_or(0)) as f64, prev as f64, w as f64);
        assert_eq!(model, c_wake_affine(this, prev, w, sync, super::place::IMBALANCE_PCT as i64), "this {this} prev {prev} w {w} sync {sync:?}");
    }
}

#[test]
fn select_idle_sibling_matches_the_c_over_many_states() {
    let mut rng = Rng::for_component(7, "select_idle_sibling");
    for _ in 0..50_000 {
        let n = 1 + (rng.next_u64() % 12) as usize;
        let llc = 1 + (rng.next_u64() % n as u64) as usize;
        let idle: Vec<bool> = (0..n).map(|_| rng.next_u64() % 3 == 0).collect();
        let mut allowed: Vec<bool> = (0..n).map(|_| rng.next_u64() % 4 != 0).collect();
        let prev = (rng.next_u64() % n as u64) as usize;
        allowed[prev] = true;
        let target = (rng.next_u64() % n as u64) as usize;
        let model = super::place::idle_sibling(|c| idle[c as usize], |c| allowed[c as usize], prev as u32, target as u32, llc as u32, n as u32);
        assert_eq!(model as usize, c_select_idle_sibling(&idle, &allowed, prev, target, llc), "idle {idle:?} allowed {allowed:?} prev {prev} target {target} llc {llc}");
    }
}
