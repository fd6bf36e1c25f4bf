//! Unit tests of the credit scheduler alone: priorities, runqueue order, accounting, the rate
//! limit, slices and stealing, driven with CPU hogs (threads that never sleep).

use super::*;
use crate::model::hypervisor::sched::CStateTable;
use std::collections::BTreeSet;

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

fn credit(ncpus: u32, tslice_ms: u32) -> Credit {
    Credit::new(params(), CreditParams::new(tslice_ms), ncpus)
}

fn rng(name: &str) -> Rng {
    Rng::for_component(1, name)
}

/// The host model for hogs: timers fire in time order up to `end`; every Resched preempts at
/// once; switch-ins take no time.
struct TimerLoop {
    timers: BTreeSet<(Time, u32)>,
}

impl TimerLoop {
    fn new() -> TimerLoop {
        TimerLoop { timers: BTreeSet::new() }
    }
    fn drain(&mut self, s: &mut Credit, now: Time) {
        while let Some(a) = s.actions.pop_front() {
            match a {
                Action::Timer { cpu, at } => _ = self.timers.insert((at, cpu)),
                Action::Resched { cpu } => s.deschedule(now, cpu, false),
                Action::SwitchIn { .. } => {}
            }
        }
    }
    /// Drain what the scheduler decided at `from`, then run its timers up to `end`.
    fn run(&mut self, s: &mut Credit, from: Time, end: Time) {
        self.drain(s, from);
        while let Some(&(at, cpu)) = self.timers.first() {
            if at > end {
                break;
            }
            self.timers.pop_first();
            s.timer(at, cpu);
            self.drain(s, at);
        }
    }
}

#[test]
fn parameters_follow_csched_init() {
    let p = CreditParams::new(30);
    assert_eq!((p.tslice_ns, p.tick_ns, p.credits_per_tslice, p.ratelimit_ns), (30_000_000, 10_000_000, 300, 1_000_000));
    // Below 3 ms one tick per slice; the rate limit at most the slice.
    let p = CreditParams::new(2);
    assert_eq!((p.tick_ns, p.credits_per_tslice, p.ratelimit_ns), (2_000_000, 20, 1_000_000));
    let p = CreditParams::new(1);
    assert_eq!((p.tick_ns, p.ratelimit_ns), (1_000_000, 1_000_000));
    assert_eq!(CreditParams::new(10).tick_ns, 3_333_000);
}

#[test]
fn the_runqueue_is_ordered_by_priority_and_fifo_within_one() {
    let mut s = credit(1, 30);
    let t: Vec<u32> = (0..5).map(|i| s.add(0, 1, rng(&i.to_string()))).collect();
    let pris = [Pri::Under, Pri::Over, Pri::Boost, Pri::Under, Pri::Boost];
    for (&x, &p) in t.iter().zip(&pris) {
        s.threads[x as usize].pri = p;
        s.runq_insert(0, 0, x);
    }
    assert_eq!(s.pcpus[0].runq, vec![t[2], t[4], t[0], t[3], t[1]]);
}

#[test]
fn burn_credits_debits_ten_a_ms_to_the_nearest_and_carries_the_rest() {
    let mut s = credit(1, 30);
    let a = s.add(0, 1, rng("a"));
    s.burn_credits(a, 1_040_000); // 10.4 credits: 10, 40 us carried
    assert_eq!((s.threads[0].credit, s.threads[0].start_time), (-10, 1_000_000));
    s.burn_credits(a, 1_090_000); // 90 us: rounds to 1
    assert_eq!((s.threads[0].credit, s.threads[0].start_time), (-11, 1_100_000));
    s.burn_credits(a, 1_100_000);
    assert_eq!(s.threads[0].credit, -11);
}

#[test]
fn accounting_splits_the_credits_by_weight_sets_priorities_and_clips() {
    let mut s = credit(1, 30);
    let t: Vec<u32> = (0..4).map(|i| s.add(0, 1, rng(&i.to_string()))).collect();
    for &x in &t {
        s.acct_start(x);
    }
    // One pCPU: 300 credits a slice over four active threads of weight 256: 75 each.
    for (&x, c) in t.iter().zip([-200, 100, 250, -500]) {
        s.threads[x as usize].credit = c;
    }
    s.acct();
    let got: Vec<(i64, Pri, bool)> = t.iter().map(|&x| (s.threads[x as usize].credit, s.threads[x as usize].pri, s.threads[x as usize].active)).collect();
    assert_eq!(got, vec![(-125, Pri::Over, true), (175, Pri::Under, true), (325 / 2, Pri::Under, false), (-300, Pri::Over, true)]);
    assert_eq!(s.weight, 3 * DEFAULT_WEIGHT);
    assert_eq!(s.credit_balance, -125 + 175 + 162 - 300);
    // A negative balance lets the next accounting hand out more than the pCPU's credits:
    // (300 + 88) / 3 rounded up, 130 each instead of 100.
    s.acct();
    assert_eq!(s.threads[t[0] as usize].credit, -125 + 130);
}

#[test]
fn a_thread_woken_under_is_boosted_and_preempts_a_hog_past_the_rate_limit() {
    let mut s = credit(1, 30);
    let (hog, io) = (s.add(0, 1, rng("hog")), s.add(0, 1, rng("io")));
    let mut h = TimerLoop::new();
    s.start(0, hog);
    h.run(&mut s, 0, 25_000_000);
    s.wake(25_000_000, io, None);
    assert_eq!(s.threads[io as usize].pri, Pri::Boost);
    assert!(s.need_resched(0));
    h.drain(&mut s, 25_000_000);
    assert_eq!(s.current(0), Some(io));
    // Back to the hog; a wake-up 0.5 ms later waits out the rate limit (1 ms from then).
    s.deschedule(25_100_000, 0, true);
    assert_eq!(s.current(0), Some(hog));
    s.wake(25_600_000, io, None);
    assert!(!s.need_resched(0));
    assert_eq!(s.pcpus[0].slice_end, Some(26_600_000));
    h.run(&mut s, 25_600_000, 26_600_000);
    assert_eq!(s.current(0), Some(io));
    // The tick that finds it running takes the BOOST away.
    h.run(&mut s, 26_600_000, 30_000_000);
    assert_eq!(s.threads[io as usize].pri, Pri::Under);
}

#[test]
fn an_over_thread_is_not_boosted() {
    let mut s = credit(1, 30);
    let (hog, io) = (s.add(0, 1, rng("hog")), s.add(0, 1, rng("io")));
    s.start(0, hog);
    s.threads[io as usize].pri = Pri::Over;
    s.wake(20_000_000, io, None);
    assert_eq!(s.threads[io as usize].pri, Pri::Over);
    assert!(!s.need_resched(0));
}

#[test]
fn two_hogs_alternate_slice_by_slice_and_share_the_pcpu() {
    for ms in [30, 1] {
        let mut s = credit(1, ms);
        let (a, b) = (s.add(0, 1, rng("a")), s.add(0, 1, rng("b")));
        s.start(0, a);
        s.start(0, b);
        let end = 3_000_000_000;
        TimerLoop::new().run(&mut s, 0, end);
        let (ra, rb) = (s.run_ns(end, a, 0), s.run_ns(end, b, 0));
        assert_eq!(ra + rb, end);
        assert!((ra as f64 / end as f64 - 0.5).abs() < 0.01, "tslice {ms}: {ra} vs {rb}");
        // A switch at most every slice; at least every other one: with one pCPU's credits for
        // two hogs, the one that ran goes OVER at an accounting and the other, UNDER, may keep
        // the pCPU at its slice's end (`csched_schedule` runs the higher priority).
        let slices = end / (ms as u64 * 1_000_000);
        assert!(s.switches <= slices + 2 && s.switches + 2 >= slices / 2, "tslice {ms}: {} switches in {slices} slices", s.switches);
    }
}

#[test]
fn a_tickled_idle_pcpu_steals_the_woken_thread() {
    let mut s = credit(2, 30);
    let hog = s.add(0, 0b01, rng("hog"));
    let io = s.add(0, 0b11, rng("io"));
    s.threads[io as usize].cpu = 0; // last ran beside the hog
    s.start(0, hog);
    s.wake(5_000_000, io, Some(0));
    assert_eq!((s.current(1), s.thread_cpu(io)), (Some(io), 1));
    assert_eq!(s.migrations[Migration::NohzBalance as usize], 1);
    assert_eq!(s.current(0), Some(hog));
    assert!(!s.need_resched(0), "the hog keeps its pCPU");
}

#[test]
fn a_lone_over_thread_steals_an_under_one_at_its_slice_end() {
    let mut s = credit(2, 30);
    let t: Vec<u32> = (0..3).map(|i| s.add(0, 0b11, rng(&i.to_string()))).collect();
    for &x in &t {
        s.start(0, x);
    }
    let end = 3_000_000_000;
    TimerLoop::new().run(&mut s, 0, end);
    for &x in &t {
        let ran: u64 = (0..2).map(|c| s.run_ns(end, x, c)).sum();
        assert!((ran as f64 / end as f64 - 2.0 / 3.0).abs() < 0.05, "thread {x}: {ran}");
    }
    assert!(s.migrations[Migration::PeriodicBalance as usize] > 0);
}

#[test]
fn an_h_balance_vm_pools_its_vcpus_credits_at_accounting_and_others_are_untouched() {
    let mut s = credit(1, 30);
    let t: Vec<u32> = (0..5).map(|i| s.add(0, 1, rng(&i.to_string()))).collect();
    for &x in &t {
        s.acct_start(x);
    }
    // Threads 0..4 are one SMP VM (Algorithm 2); thread 4 is alone. 300 credits over five
    // active threads: 60 each.
    s.set_groups(vec![t[..4].to_vec()]);
    for (&x, c) in t.iter().zip([-200, 100, 250, -30, 40]) {
        s.threads[x as usize].credit = c;
    }
    let before: i64 = t[..4].iter().map(|&x| s.threads[x as usize].credit).sum();
    s.acct();
    let got: Vec<i64> = t.iter().map(|&x| s.threads[x as usize].credit).collect();
    // The VM's total plus its four shares, split equally: (120 + 240) / 4 = 90 each, all UNDER
    // (Xen alone would leave thread 0 OVER at -140 beside thread 2's 310 of unused credit).
    assert_eq!(got[..4].iter().sum::<i64>(), before + 4 * 60);
    assert_eq!(&got[..4], &[90, 90, 90, 90]);
    assert!(t[..4].iter().all(|&x| s.threads[x as usize].pri == Pri::Under && s.threads[x as usize].active));
    // The lone thread is accounted as Xen does.
    assert_eq!(got[4], 100);
}

#[test]
fn an_smp_boost_outranks_boost_preempts_and_drops_at_the_next_tick() {
    let mut s = credit(1, 30);
    let hog = s.add(0, 1, rng("hog"));
    let v = s.add(0, 1, rng("v"));
    let mut h = TimerLoop::new();
    s.start(0, hog);
    s.start(0, v);
    h.drain(&mut s, 0);
    assert_eq!(s.current(0), Some(hog));
    // Past the rate limit: the queued vCPU, boosted, goes to the head of the runqueue and
    // preempts the hog at once.
    s.smp_boost(2_000_000, v);
    assert_eq!(s.threads[v as usize].pri, Pri::SmpBoost);
    assert_eq!(s.pcpus[0].runq.first(), Some(&v));
    assert!(s.need_resched(0));
    assert_eq!(s.smp_boosts(), 1);
    h.drain(&mut s, 2_000_000);
    assert_eq!(s.current(0), Some(v));
    // A BOOSTed wake-up does not outrank it.
    assert!(Pri::SmpBoost > Pri::Boost);
    s.tick_cpu(3_000_000, 0);
    assert_eq!(s.threads[v as usize].pri, Pri::Under);
}

// A thread started after 0 is a new domain's vCPU made runnable: `domain_unpause` → `vcpu_wake`
// → `csched_vcpu_wake` (issue 48 item 4). Before, `start` queued it UNDER without a tickle: on a
// busy pCPU it waited for the current thread's slice (up to 30 ms) while a peer idled.

#[test]
fn a_late_start_is_boosted_and_preempts_a_hog_past_the_rate_limit() {
    let mut s = credit(1, 30);
    let (hog, v) = (s.add(0, 1, rng("hog")), s.add(0, 1, rng("v")));
    let mut h = TimerLoop::new();
    s.start(0, hog);
    h.run(&mut s, 0, 25_000_000);
    s.start(25_000_000, v);
    // csched_alloc_vdata: UNDER, no credit; csched_vcpu_wake: UNDER -> BOOST.
    assert_eq!((s.threads[v as usize].pri, s.threads[v as usize].credit), (Pri::Boost, 0));
    // __runq_tickle: strictly above the hog's UNDER, so its pCPU reschedules.
    assert!(s.need_resched(0));
    h.drain(&mut s, 25_000_000);
    assert_eq!(s.current(0), Some(v));
}

#[test]
fn a_late_start_within_the_rate_limit_waits_for_it() {
    let mut s = credit(1, 30);
    let (hog, io, v) = (s.add(0, 1, rng("hog")), s.add(0, 1, rng("io")), s.add(0, 1, rng("v")));
    let mut h = TimerLoop::new();
    s.start(0, hog);
    h.run(&mut s, 0, 25_000_000);
    // A wake-up takes the pCPU for 0.1 ms; the hog is switched back in at 25.1 ms.
    s.wake(25_000_000, io, None);
    h.drain(&mut s, 25_000_000);
    s.deschedule(25_100_000, 0, true);
    assert_eq!(s.current(0), Some(hog));
    // 0.5 ms after its switch-in the hog keeps the pCPU a rate-limit period from now.
    s.start(25_600_000, v);
    assert_eq!(s.threads[v as usize].pri, Pri::Boost);
    assert!(!s.need_resched(0));
    assert_eq!(s.pcpus[0].slice_end, Some(26_600_000));
    h.run(&mut s, 25_600_000, 26_600_000);
    assert_eq!(s.current(0), Some(v));
}

#[test]
fn a_late_start_on_a_busy_pcpu_is_stolen_by_a_tickled_idle_one() {
    let mut s = credit(2, 30);
    let hog = s.add(0, 0b01, rng("hog"));
    let v = s.add(0, 0b11, rng("v"));
    s.threads[v as usize].cpu = 0; // created on the hog's pCPU
    s.start(0, hog);
    s.start(5_000_000, v);
    // __runq_tickle: the busy pCPU tickles the idle one, whose csched_schedule steals it.
    assert_eq!((s.current(1), s.thread_cpu(v)), (Some(v), 1));
    assert_eq!(s.migrations[Migration::NohzBalance as usize], 1);
    assert_eq!(s.current(0), Some(hog));
    assert!(!s.need_resched(0), "nothing better is left on the hog's runqueue");
}

#[test]
fn a_late_start_on_an_idle_pcpu_runs_at_once_woken_from_idle() {
    let mut s = credit(2, 30);
    let v = s.add(0, 0b01, rng("v"));
    s.actions.clear();
    s.start(7_000_000, v);
    assert_eq!(s.current(0), Some(v));
    let woke = s.actions.iter().any(|a| matches!(a, Action::SwitchIn { cpu: 0, from_idle: true, .. }));
    assert!(woke, "the idle pCPU's SCHEDULE_SOFTIRQ: a wake-up from idle, {:?}", s.actions);
}

#[test]
fn a_late_start_does_not_preempt_a_boosted_thread() {
    let mut s = credit(2, 30);
    let (a, v) = (s.add(0, 0b01, rng("a")), s.add(0, 0b01, rng("v")));
    s.start(0, a);
    s.threads[a as usize].pri = Pri::Boost; // woken, its tick not yet come
    s.start(2_000_000, v);
    assert_eq!(s.threads[v as usize].pri, Pri::Boost);
    // BOOST does not preempt BOOST (`new->pri > cur->pri`); pCPU 1 is not allowed to it.
    assert!(!s.need_resched(0));
    assert_eq!((s.current(0), s.current(1)), (Some(a), None));
    assert_eq!(s.pcpus[0].runq, vec![v]);
}

#[test]
fn a_start_at_zero_is_a_thread_already_running_not_a_wake_up() {
    let mut s = credit(1, 30);
    let (a, b) = (s.add(0, 1, rng("a")), s.add(0, 1, rng("b")));
    s.start(0, a);
    s.start(0, b);
    assert_eq!((s.threads[a as usize].pri, s.threads[b as usize].pri), (Pri::Under, Pri::Under));
    assert_eq!(s.current(0), Some(a));
    assert!(!s.need_resched(0));
}
