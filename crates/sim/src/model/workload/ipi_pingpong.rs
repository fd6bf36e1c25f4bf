//! kvm-unit-tests' IPI round trip (`x86/vmexit.c`'s `ipi` test: `on_cpu(1, nop, 0)`) as a
//! workload (`ipi_pingpong`, issue 32): vCPU 0 writes the ICR to send a call-function IPI to vCPU
//! `to_vcpu` and spins until that vCPU's handler has run the function (a flag in memory); the
//! round trip is the time from the ICR write to the sender seeing the flag. The target idles as
//! the VM's idle loop says (`hlt`, as kvm-unit-tests' secondary CPUs; KVM's halt polling applies)
//! and takes the IPI as its delivery mode delivers it.
//!
//! What the round trip contains is the model's, not this workload's: the sender's ICR-write exit
//! (none with IPI virtualization, `[vm.apic] ipiv`), the target's wake-up or posted notification,
//! its VM entry and the handler. The sender sees the flag when it runs guest code again: at the
//! end of its exit if the handler was quicker than the exit, else during its spin.

use crate::engine::{Time, round_ns};
use crate::metrics::Histogram;
use crate::model::workload::app::{App, ClientEv, DevView, Measure, Step};
use crate::model::workload::ctx::Ctx;

/// Its steps: the ICR write (the guest's side of it); the spin on the flag.
const SEND: u8 = 0;
const WAIT: u8 = 1;

/// A spin's length before the sender looks again (the flag cuts it short; a spin that runs out
/// simply spins on).
const SPIN_NS: Time = 1_000_000;

/// The round-trip loop and what it measured.
#[derive(Debug)]
pub struct IpiPingPong {
    /// Local index of the target vCPU.
    to: u32,
    /// Pause between round trips (ns); 0: back to back.
    gap: Time,
    /// The sender's cost of a loop iteration before its ICR write (guest time).
    send_ns: Time,
    /// The round trip in flight: when its ICR write began.
    sent_at: Option<Time>,
    /// Its function ran on the target.
    done: bool,
    /// The next round trip starts then (after `gap`).
    next_at: Time,
    /// ICR write → the sender sees the flag (ns).
    latency: Histogram,
    /// Round trips completed (window, lifetime); IPIs sent (lifetime).
    trips: u64,
    trips_life: u64,
    sent_life: u64,
}

impl IpiPingPong {
    /// Round trips from vCPU 0 to local vCPU `to`, `interval_us` apart (None: back to back);
    /// `send_ns` of guest time before each ICR write.
    pub fn new(to: u32, interval_us: Option<f64>, send_ns: f64) -> Self {
        IpiPingPong {
            to,
            gap: interval_us.map_or(0, |i| round_ns(i * 1e3)),
            send_ns: round_ns(send_ns).max(1),
            sent_at: None,
            done: false,
            next_at: 0,
            latency: Histogram::new(),
            trips: 0,
            trips_life: 0,
            sent_life: 0,
        }
    }
}

impl App for IpiPingPong {
    /// vCPU 0's loop (the others idle: the application runs on vCPU 0 only).
    fn next(g: &mut impl Ctx<Self>, v: u32) {
        let now = g.now();
        let a = g.app();
        if let Some(t0) = a.sent_at {
            if !a.done {
                return g.run_step(v, Step::new(WAIT, 0, 0), SPIN_NS);
            }
            a.latency.record(now - t0);
            a.sent_at = None;
            a.done = false;
            a.trips += 1;
            a.trips_life += 1;
            a.next_at = now + a.gap;
        }
        if now < a.next_at {
            let at = a.next_at;
            return g.idle(v, Some(at));
        }
        a.sent_at = Some(now);
        let c = a.send_ns;
        g.run_step(v, Step::new(SEND, 0, 0), c)
    }

    fn step_done(g: &mut impl Ctx<Self>, v: u32, s: Step) {
        if s.kind == SEND {
            let local = g.app().to;
            let to = g.vcpu(local);
            g.app().sent_life += 1;
            // With an ICR-write exit the vCPU goes on after it (VM entry asks `next` again).
            if g.call_function_ipi(v, to) {
                return;
            }
        }
        g.enter(v)
    }

    fn step_name(s: Step) -> &'static str {
        if s.kind == SEND { "icr write" } else { "spin on flag" }
    }

    /// The target ran the function: the flag is set; a spinning sender sees it at once.
    fn ipi_handled(g: &mut impl Ctx<Self>, local: u32) {
        let a = g.app();
        if local != a.to || a.sent_at.is_none() {
            return;
        }
        a.done = true;
        let sender = g.vcpu(0);
        g.cut_step(sender, WAIT);
    }

    fn client_event(_g: &mut impl Ctx<Self>, _e: ClientEv) {
        unreachable!("the IPI round trip has no client")
    }

    fn sent_life(&self) -> u64 {
        0
    }
    fn reset_metrics(&mut self) {
        self.latency.clear();
        self.trips = 0;
    }
    fn describe(&self) -> String {
        format!("ipi round trips {} of {} sent, in flight since {:?}, done {}", self.trips_life, self.sent_life, self.sent_at, self.done)
    }
    fn progress(&self) -> u64 {
        self.trips_life
    }

    /// Round trips per second as operations; their latency.
    fn measure<'a>(&'a self, _d: DevView<'a>) -> Measure<'a> {
        Measure { latency: Some(&self.latency), ops: Some(self.trips), ..Measure::default() }
    }
}
