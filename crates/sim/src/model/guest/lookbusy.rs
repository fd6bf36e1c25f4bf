//! lookbusy-like CPU load in a guest (`[vm.lookbusy]`; hBalance §6.1: background VMs and the
//! SMP-VM under ping run lookbusy "to keep the CPU load of each VM at a desired level").
//!
//! A port of lookbusy 1.4's `cpu_spin` (Devin Carraway), one spinner per vCPU (lookbusy forks
//! one per CPU, `start_cpu_spinners`), each an ordinary nice-0 guest thread homed on its vCPU:
//! * calibration (`cpu_spin_calibrate`): the busy count is `util` % of a 100 ms cycle of loop
//!   iterations, and the sleep is the rest of the cycle — fixed from then on;
//! * each cycle: spin the busy count (work, not wall time: a spinner preempted mid-spin finishes
//!   its count later), then `usleep` the fixed sleep — the thread blocks, so an otherwise idle
//!   vCPU halts and its pCPU goes to others;
//! * after each cycle (not the first), the feedback: `actual` = the guest's user + nice +
//!   system CPU over the cycle (`/proc/stat`'s first three columns: not irq, softirq or steal)
//!   per CPU, % of the cycle's wall time; `busy += (util − actual) · busy / 100 / ncpus`,
//!   at least `minimum_cycles`. lookbusy steers the whole guest's utilization, so the spinners
//!   spin less beside a busy workload, and more (without bound, as lookbusy does) when the host
//!   takes the vCPUs away — which cannot lift what they get above the vCPUs' share.
//!
//! Here the busy count is ns of work at the vCPU's full speed (an iteration is a fixed amount
//! of work); the guest CPU of a vCPU is its non-interrupt guest time.
//!
//! Against the application's threads on the same vCPU the spinner is one more CFS entity
//! (`guest_sched.rs`'s rules, the application's threads counted as one entity): the two
//! alternate in slices of half the latency period; a waking spinner is placed half a latency
//! behind and preempts the application when more than the wake-up granularity behind it, and
//! an application woken while the spinner ran alone preempts the spinner likewise (its
//! vruntime trails by half a latency, `place_entity`). Decisions are taken at step boundaries,
//! as the guest scheduler's are. A switch from the application to the spinner costs
//! `sched.context_switch_ns` (charged to the spinner); the switch back is not charged.

use crate::engine::Time;
use crate::model::hypervisor::vcpu::BURN_CHUNK_NS;
use crate::profile::Profile;
use crate::config::Lookbusy as Config;

/// lookbusy's `minimum_cycles` (10,000 iterations of `squander_time`, a byte add: about 1 ns
/// each at a few GHz; a prior), as ns of work.
const MIN_BUSY_NS: Time = 10_000;

/// The most busy work per cycle, in cycles: lookbusy's count has no bound but `u64`; this one
/// only keeps the arithmetic finite (a spinner this far behind its target spins without pause).
const MAX_BUSY_CYCLES: Time = 1000;

/// A spinner's phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Spinning: this much work left in the cycle (ns).
    Spin(Time),
    /// In `usleep` until then.
    Sleep(Time),
}

/// The guest-CPU counters of a spinner's vCPU at a decision, lifetime ns.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Seen {
    /// The application's guest time on the vCPU (non-interrupt, not the spinner's).
    pub app: Time,
    /// The spinner's guest time (its CPU).
    pub cpu: Time,
    /// The spinner's work done (its CPU less the cache refills it paid).
    pub work: Time,
    /// The whole VM's non-interrupt guest time (every vCPU): lookbusy's `/proc/stat` reading.
    pub vm_busy: Time,
}

/// One spinner (one per vCPU).
#[derive(Debug, Clone)]
struct Spinner {
    /// The busy count: ns of work per cycle.
    busy: Time,
    phase: Phase,
    /// The cycle's start and the VM's busy time then (the feedback's readings).
    cycle_start: Time,
    busy_mark: Time,
    /// The first cycle has no feedback.
    first: bool,
    /// Virtual runtimes of the spinner and of the application's threads on the vCPU (ns).
    vr: Time,
    app_vr: Time,
    /// The counters at the last decision.
    seen: Seen,
    /// The spinner is the vCPU's current entity, and its (or the application's) vruntime when
    /// it became so.
    curr: bool,
    picked: Time,
    /// It woke (a new cycle began) at this decision.
    woke: bool,
}

/// What the vCPU runs when the application's threads have nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdleRun {
    /// The spinner, for this long (ns of guest time).
    Run(Time),
    /// Nothing until the spinner's sleep ends then: the vCPU may halt with its LAPIC timer set.
    Sleep(Time),
}

/// One VM's spinners.
#[derive(Debug)]
pub(crate) struct Lookbusy {
    util: f64,
    period: Time,
    /// The fixed sleep of each cycle (ns).
    sleep: Time,
    ncpus: u32,
    latency: Time,
    wakeup_granularity: Time,
    switch: Time,
    spinners: Vec<Spinner>,
}

impl Lookbusy {
    /// The spinners of a VM of `vcpus` vCPUs, their cycles starting at 0.
    pub fn new(c: &Config, vcpus: u32, p: &Profile) -> Self {
        let period = crate::engine::round_ns(c.period_ms * 1e6).max(1);
        let busy = crate::engine::round_ns(c.period_ms * 1e6 * c.util_pct / 100.0).clamp(MIN_BUSY_NS, period * MAX_BUSY_CYCLES);
        let s = &p.sched;
        // The guest's CFS, scaled as `guest_sched.rs` scales it.
        let factor = 1 + u64::from(vcpus.clamp(1, 8).ilog2());
        let sp = Spinner {
            busy,
            phase: Phase::Spin(busy),
            cycle_start: 0,
            busy_mark: 0,
            first: true,
            vr: 0,
            app_vr: 0,
            seen: Seen::default(),
            curr: false,
            picked: 0,
            woke: false,
        };
        Lookbusy {
            util: c.util_pct,
            period,
            sleep: period.saturating_sub(busy),
            ncpus: vcpus,
            latency: s.latency_ns.value as Time * factor,
            wakeup_granularity: s.wakeup_granularity_ns.value as Time * factor,
            switch: s.context_switch_ns.value as Time,
            spinners: vec![sp; vcpus as usize],
        }
    }

    /// The target utilization, %.
    pub fn util_pct(&self) -> f64 {
        self.util
    }

    /// The cycle (ns).
    pub fn period(&self) -> Time {
        self.period
    }

    /// Take in what ran on local vCPU `v` since its last decision; end a finished spin (sleep)
    /// or a finished sleep (a new cycle, after the feedback).
    fn observe(&mut self, now: Time, v: u32, seen: Seen) {
        let (util, ncpus, sleep, half) = (self.util, self.ncpus, self.sleep, self.latency / 2);
        let s = &mut self.spinners[v as usize];
        s.woke = false;
        s.app_vr += seen.app.saturating_sub(s.seen.app);
        s.vr += seen.cpu.saturating_sub(s.seen.cpu);
        let work = seen.work.saturating_sub(s.seen.work);
        s.seen = seen;
        if let Phase::Spin(left) = s.phase {
            let left = left.saturating_sub(work);
            s.phase = if left == 0 { Phase::Sleep(now + sleep) } else { Phase::Spin(left) };
        }
        if let Phase::Sleep(wake) = s.phase {
            if now < wake {
                return;
            }
            // cpu_spin's loop top: the feedback over the cycle just ended.
            let wall = now - s.cycle_start;
            if !s.first && wall > 0 {
                let busy_vm = seen.vm_busy.saturating_sub(s.busy_mark) as f64 / f64::from(ncpus);
                let actual = 100.0 * busy_vm / wall as f64;
                let adjust = (util - actual) * s.busy as f64 / 100.0 / f64::from(ncpus);
                let b = (s.busy as f64 + adjust).max(MIN_BUSY_NS as f64).min((self.period * MAX_BUSY_CYCLES) as f64);
                s.busy = b as Time;
            }
            s.first = false;
            s.cycle_start = now;
            s.busy_mark = seen.vm_busy;
            s.phase = Phase::Spin(s.busy);
            // place_entity for a sleeper, against the application (the other entity).
            s.vr = s.vr.max(s.app_vr.saturating_sub(half));
            s.woke = true;
        }
    }

    /// A chunk of the spin on `v` (at most [`BURN_CHUNK_NS`], as the guest burn runs), plus the
    /// switch into it if the application was current.
    fn chunk(&mut self, v: u32) -> Time {
        let switch = self.switch;
        let s = &mut self.spinners[v as usize];
        let Phase::Spin(left) = s.phase else { unreachable!("a chunk of a sleeping spinner") };
        let cost = if s.curr {
            0
        } else {
            s.curr = true;
            s.picked = s.vr;
            switch
        };
        left.min(BURN_CHUNK_NS) + cost
    }

    /// Local vCPU `v` is free and the application may have work: run the spinner now
    /// (Some: its chunk's cost), or ask the application (None).
    pub fn next(&mut self, now: Time, v: u32, seen: Seen) -> Option<Time> {
        self.observe(now, v, seen);
        let (slice, gran) = (self.latency / 2, self.wakeup_granularity);
        let s = &mut self.spinners[v as usize];
        if !matches!(s.phase, Phase::Spin(_)) {
            return None;
        }
        let run = if s.curr {
            // Its slice, unless the application (woken: placed half a latency behind) preempts.
            s.vr - s.picked < slice && s.vr <= s.app_vr + gran
        } else {
            // A waking spinner preempts; else it waits for the application's slice to end.
            (s.woke && s.app_vr > s.vr + gran) || (s.app_vr - s.picked.min(s.app_vr) >= slice && s.vr < s.app_vr)
        };
        if run {
            return Some(self.chunk(v));
        }
        if s.curr {
            s.curr = false;
            s.picked = s.app_vr;
        }
        None
    }

    /// Local vCPU `v`'s application has nothing to run: the spinner runs, or the vCPU sleeps
    /// until the spinner wakes.
    pub fn idle(&mut self, now: Time, v: u32, seen: Seen) -> IdleRun {
        self.observe(now, v, seen);
        let half = self.latency / 2;
        let s = &mut self.spinners[v as usize];
        match s.phase {
            Phase::Sleep(wake) => IdleRun::Sleep(wake),
            Phase::Spin(_) => {
                // The application sleeps: when it wakes it is placed against the spinner.
                s.app_vr = s.app_vr.max(s.vr.saturating_sub(half));
                IdleRun::Run(self.chunk(v))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lb(util: f64, vcpus: u32) -> Lookbusy {
        Lookbusy::new(&Config { util_pct: util, period_ms: 100.0 }, vcpus, &Profile::load("es2").expect("es2"))
    }

    /// A spinner alone on an idle, uncontended vCPU: spin, sleep, spin, with the cycle's shares.
    #[test]
    fn alone_it_spins_its_share_of_each_cycle_then_sleeps() {
        let mut l = lb(30.0, 1);
        let mut seen = Seen::default();
        let mut now = 0;
        let mut cpu_in_cycles = 0;
        for _ in 0..2000 {
            match l.idle(now, 0, seen) {
                IdleRun::Run(c) => {
                    now += c;
                    seen.cpu += c;
                    seen.work += c;
                    seen.vm_busy += c;
                    cpu_in_cycles += c;
                }
                IdleRun::Sleep(w) => {
                    assert!(w > now);
                    now = w;
                }
            }
        }
        let share = cpu_in_cycles as f64 / now as f64;
        assert!((share - 0.30).abs() < 0.01, "share {share}");
    }

    #[test]
    fn the_feedback_spins_less_beside_a_busy_application() {
        let mut l = lb(50.0, 1);
        let b0 = l.spinners[0].busy;
        // Cycle 1: 50 ms spin; then the sleep, during which the application ran 40 ms.
        let mut seen = Seen::default();
        let IdleRun::Run(_) = l.idle(0, 0, seen) else { panic!() };
        seen.cpu = 50_000_000;
        seen.work = 50_000_000;
        seen.vm_busy = 50_000_000;
        assert_eq!(l.idle(50_000_000, 0, seen), IdleRun::Sleep(100_000_000));
        seen.app = 40_000_000;
        seen.vm_busy = 90_000_000;
        // Cycle 2 starts: the first cycle is not adjusted.
        let IdleRun::Run(_) = l.idle(100_000_000, 0, seen) else { panic!() };
        assert_eq!(l.spinners[0].busy, b0);
        seen.cpu += 50_000_000;
        seen.work += 50_000_000;
        seen.vm_busy += 50_000_000;
        assert_eq!(l.idle(150_000_000, 0, seen), IdleRun::Sleep(200_000_000));
        seen.app += 40_000_000;
        seen.vm_busy += 40_000_000;
        let IdleRun::Run(_) = l.idle(200_000_000, 0, seen) else { panic!() };
        // actual = 90 %: busy += (50 − 90) · busy / 100.
        assert_eq!(l.spinners[0].busy, (b0 as f64 * 0.6) as Time);
    }

    #[test]
    fn a_waking_spinner_preempts_the_application_and_shares_in_slices() {
        let mut l = lb(100.0, 1);
        // The application has run for a second while the spinner was asleep.
        l.spinners[0].phase = Phase::Sleep(10);
        let seen = Seen { app: 1_000_000_000, ..Default::default() };
        assert!(l.next(20, 0, seen).is_some(), "the woken spinner preempts");
        // It keeps the vCPU for its slice, then yields.
        let mut seen = seen;
        let mut chunks = 0;
        while let Some(c) = l.next(20, 0, seen) {
            seen.cpu += c;
            seen.work += c;
            chunks += 1;
            assert!(chunks < 1000);
        }
        let lat = l.latency;
        assert!(seen.cpu >= lat / 2, "ran {} of a {} slice", seen.cpu, lat / 2);
    }
}
