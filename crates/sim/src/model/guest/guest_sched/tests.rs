//! The guest's CFS instance driven as a workload drives it: picks at step boundaries, wakes
//! from an interrupt's vCPU, threads that block. (The decisions' C transcriptions are tested
//! with the host's instance, `hypervisor/sched/tests.rs`.)

use super::*;

fn profile() -> Profile {
    Profile::load("modern").expect("modern")
}

fn sched(threads: u32, vcpus: u32, burn: bool) -> GuestSched {
    GuestSched::new(threads, vcpus, Placement { beside: if burn { Beside::Burn } else { Beside::Nothing }, one_device: true }, &profile()).lazy_wakes()
}

/// Run local vCPU `v` from `from` for `steps` steps of `ns` each; returns each thread's run time.
fn run(g: &mut GuestSched, v: u32, from: Time, steps: u32, ns: Time, runnable: impl Fn(u32) -> bool + Copy) -> Vec<Time> {
    let mut got = vec![0; g.apps as usize];
    let mut now = from;
    for _ in 0..steps {
        if let Some(t) = g.pick(now, v, runnable) {
            got[t as usize] += ns;
            now += g.take_switch(v);
        }
        now += ns;
    }
    got
}

#[test]
fn threads_on_one_vcpu_share_it_evenly_in_slices() {
    let mut g = sched(3, 1, false);
    let got = run(&mut g, 0, 0, 30_000, 1_000, |_| true);
    let (lo, hi) = (got.iter().min().unwrap(), got.iter().max().unwrap());
    // Equal to within a slice and a tick (6 ms latency / 3 at 1 vCPU; 4 ms ticks).
    assert!(hi - lo <= 6_000_000, "{got:?}");
    // Slices at the tick, not step-by-step alternation.
    assert!(g.switches() < 100, "{} switches", g.switches());
    assert!(g.switches() > 3, "{} switches", g.switches());
}

#[test]
fn a_thread_alone_runs_without_switch_costs() {
    let mut g = sched(1, 1, false);
    let mut now = 0;
    assert_eq!(g.cfs.threads[0].allowed, CpuMask::bit(0), "one thread stays where it starts");
    g.wake(0, 0, None, false);
    for _ in 0..100 {
        assert_eq!((g.pick(now, 0, |_| true), g.take_switch(0)), (Some(0), 0));
        now += 5_000;
    }
    assert_eq!(g.pick(now, 0, |_| false), None, "no work: the thread blocks and the vCPU idles");
    assert!(g.sleeping(0));
}

#[test]
fn fork_balancing_homes_threads_round_robin() {
    for burn in [false, true] {
        let g = sched(5, 2, burn);
        assert_eq!((0..5).map(|t| g.cpu_of(t)).collect::<Vec<_>>(), [0, 1, 0, 1, 0], "burn {burn}");
    }
}

#[test]
fn a_woken_sleeper_preempts_a_thread_that_ran_long() {
    let mut g = sched(2, 1, false);
    // Thread 1 sleeps while thread 0 runs 100 ms.
    run(&mut g, 0, 0, 100, 1_000_000, |t| t == 0);
    assert!(g.sleeping(1));
    // It wakes (from this vCPU's interrupt): preempts at the next step boundary, with a switch.
    assert_eq!(g.wake(100_000_000, 1, Some(0), false), None, "no IPI: its own vCPU woke it");
    assert_eq!(g.pick(100_000_000, 0, |_| true), Some(1));
    assert_eq!(g.take_switch(0), profile().sched.context_switch_ns.value as Time);
}

#[test]
fn a_wakeup_within_the_granularity_does_not_preempt() {
    let mut g = sched(2, 1, false);
    // Both start; thread 0 runs 0.5 ms ahead of thread 1 at most (min granularity x2 = 1.5 ms slices).
    assert_eq!(g.pick(0, 0, |_| true).unwrap(), 0);
    assert_eq!(g.pick(100_000, 0, |_| true).unwrap(), 0, "0.1 ms ahead < wake-up granularity: no preemption");
}

#[test]
fn a_woken_thread_is_placed_on_an_idle_vcpu_and_that_vcpu_is_kicked() {
    // Two threads, two vCPUs, no burn: thread 1 sleeps on vCPU 1, which idles.
    let mut g = sched(2, 2, false);
    g.pick(0, 0, |t| t == 0);
    assert!(g.sleeping(1));
    // Thread 0's vCPU is busy and the waker: thread 1 goes back to its idle previous vCPU,
    // which needs a reschedule IPI.
    assert_eq!(g.wake(1_000_000, 1, Some(0), false), Some(1));
    assert_eq!(g.cpu_of(1), 1);
    assert_eq!(g.pick(1_000_000, 1, |_| true), Some(1));
}

#[test]
fn an_idle_guest_pulls_a_thread_to_the_vcpu_whose_interrupt_woke_it() {
    // wake_affine with an unloaded waker's CPU: the interrupt's vCPU, idle, takes the thread.
    let mut g = sched(2, 2, false);
    run(&mut g, 1, 0, 10, 100_000, |_| false);
    assert!(g.sleeping(1) && g.cpu_of(1) == 1);
    assert_eq!(g.wake(2_000_000, 1, Some(0), false), None, "placed where it is woken: no IPI");
    assert_eq!(g.cpu_of(1), 0);
    assert_eq!(g.migrations()[Migration::Wakeup as usize], 1);
}

#[test]
fn burners_keep_a_woken_thread_where_it_ran() {
    // Every vCPU runs its nice-19 burner: nothing is idle, the waker's vCPU is loaded, and the
    // woken thread goes back to its previous vCPU, preempting that burner (an IPI to it).
    let mut g = sched(2, 2, true);
    run(&mut g, 1, 0, 10, 100_000, |t| t == 0);
    assert!(g.sleeping(1));
    assert_eq!(g.pick(1_000_000, 1, |_| false), None, "vCPU 1 runs its burner");
    for k in 0..50u64 {
        let now = 2_000_000 + k * 1_000_000;
        assert_eq!(g.wake(now, 1, Some(0), false), Some(1), "wake {k}");
        assert_eq!(g.cpu_of(1), 1);
        assert_eq!(g.pick(now, 1, |t| t == 1), Some(1), "the burner is preempted");
        assert_eq!(g.pick(now + 10_000, 1, |_| false), None, "it blocks: the burner again");
    }
    assert_eq!(g.migrations(), [0; Migration::COUNT]);
}

#[test]
fn a_vcpu_going_idle_pulls_a_waiting_thread() {
    // Three threads on two vCPUs, all busy: vCPU 0 holds two. When vCPU 1's thread blocks,
    // new-idle balancing (avg_idle starts at twice the migration cost) pulls the one waiting on 0.
    let mut g = sched(3, 2, false);
    let busy = |t: u32| t != 1;
    g.pick(0, 0, |_| true);
    g.pick(0, 1, |_| true);
    run(&mut g, 0, 0, 10, 100_000, |_| true);
    assert_eq!((g.cpu_of(0), g.cpu_of(1), g.cpu_of(2)), (0, 1, 0));
    // Thread 2 waits on vCPU 0 behind thread 0 (ran within the migration cost? it never ran:
    // its last run is the epoch, cache-cold).
    assert_eq!(g.pick(2_000_000, 1, busy), Some(2));
    let p = profile();
    assert_eq!(g.take_switch(1), (p.sched.context_switch_ns.value + p.sched.migration_ns.value) as Time);
    assert_eq!(g.cpu_of(2), 1);
    assert_eq!(g.migrations()[Migration::IdleBalance as usize], 1);
}

#[test]
fn pinning_is_honoured() {
    // Thread 1 pinned to vCPU 1: an idle vCPU 0's interrupt cannot pull it.
    let p = profile();
    let mut g = GuestSched::with_affinity(2, 2, false, &p, |t| if t == 1 { CpuMask::bit(1) } else { CpuMask::first(2) }).lazy_wakes();
    run(&mut g, 1, 0, 10, 100_000, |_| false);
    assert_eq!(g.wake(2_000_000, 1, Some(0), false), Some(1));
    assert_eq!(g.cpu_of(1), 1);
}

#[test]
fn periodic_balancing_spreads_threads_piled_on_one_vcpu() {
    // Four always-busy threads start on vCPU 0 of four (pinned there at first by waking them
    // all from vCPU 0 of an idle guest): vCPU 1..3 balance at their ticks and pull them apart.
    let mut g = sched(4, 4, false);
    let mut now = 0;
    for t in 1..4 {
        g.pick(now, t, |_| false);
    }
    for t in 0..4 {
        g.wake(now, t, Some(0), false);
    }
    let piled = (0..4).filter(|&t| g.cpu_of(t) == 0).count();
    // Then every vCPU steps; idle ones are woken by the kicks they were sent.
    for _ in 0..20_000 {
        now += 10_000;
        for v in 0..4 {
            g.pick(now, v, |_| true);
        }
        while g.take_kick().is_some() {}
    }
    let mut per = [0; 4];
    (0..4).for_each(|t| per[g.cpu_of(t) as usize] += 1);
    assert_eq!(per, [1, 1, 1, 1], "piled {piled} on vCPU 0 at first");
}

#[test]
fn stolen_time_is_not_run_time() {
    // Two threads share one vCPU (3 ms slices). 10 ms pass; with 9.9 of them stolen (the vCPU
    // waited for a pCPU), thread 0 has run 0.1 ms and keeps the vCPU at the tick; with none
    // stolen it has used its slice and thread 1 runs.
    for (steal, next) in [(9_900_000, 0), (0, 1)] {
        let mut g = sched(2, 1, false);
        assert_eq!(g.pick(0, 0, |_| true), Some(0));
        g.set_steal(0, steal);
        assert_eq!(g.pick(10_000_000, 0, |_| true), Some(next), "stolen {steal} ns");
    }
}
