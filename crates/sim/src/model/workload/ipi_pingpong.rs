//! kvm-unit-tests' IPI round trip (`x86/vmexit.c`'s `ipi` test: `on_cpu(1, nop, 0)`) as a
//! workload (`ipi_pingpong`, issue 32): vCPU 0 writes the ICR to send a call-function IPI to vCPU
//! `to_vcpu` and spins until that vCPU's handler has run the function (a flag in memory); the
//! round trip is the time from the ICR write to the sender seeing the flag. The target idles as
//! the VM's idle loop says (`hlt`, as kvm-unit-tests' secondary CPUs; KVM's halt polling applies)
//! and takes the IPI as its delivery mode delivers it.
//!
//! With `targets = N` (> 1) the one call-function IPI goes to vCPUs `to_vcpu..to_vcpu + N`
//! (`smp_call_function_many` → `apic->send_IPI_mask`) and the sender spins until every handler
//! ran. The guest's `send_IPI_mask` writes the ICR once per destination (x2APIC physical mode,
//! `__x2apic_send_IPI_mask`), each write an exit of its own unless the CPU virtualizes it, or,
//! with PV IPI (`[vm.apic] pv_ipi`), makes one `KVM_HC_SEND_IPI` hypercall for all of them
//! (`kvm_send_ipi_mask`); which, the VM's features decide (`Ctx::call_function_many`).
//!
//! After the send, with PV sched yield (`[vm.apic] pv_sched_yield`), the guest yields to the
//! first destination that is preempted (`kvm_smp_send_call_func_ipi`: one
//! `KVM_HC_SCHED_YIELD` hypercall, `Ctx::sched_yield`) before it spins.
//!
//! What the round trip contains is the model's, not this workload's: the sender's ICR-write exit
//! (none with IPI virtualization, `[vm.apic] ipiv`), the target's wake-up or posted notification,
//! its VM entry and the handler. The sender sees the flag when it runs guest code again: at the
//! end of its exit if the handler was quicker than the exit, else during its spin.

use crate::engine::{Time, round_ns};
use crate::metrics::Histogram;
use crate::model::workload::app::{App, ClientEv, DevView, Measure, Step};
use crate::model::workload::ctx::{Ctx, Ipi};

/// Its steps: the ICR write (the guest's side of it); the spin on the flag.
const SEND: u8 = 0;
const WAIT: u8 = 1;

/// A spin's length before the sender looks again (the flag cuts it short; a spin that runs out
/// simply spins on).
const SPIN_NS: Time = 1_000_000;

/// The round-trip loop and what it measured.
#[derive(Debug)]
pub struct IpiPingPong {
    /// Local index of the (first) target vCPU.
    to: u32,
    /// How many targets, from `to` on.
    n: u32,
    /// The round trip in flight: the next destination whose ICR write is still to come
    /// (`n`: all written or sent by one hypercall).
    next_dest: u32,
    /// Its handlers still to run.
    pending: u32,
    /// Every destination is sent to and the guest has yet to look for a preempted one
    /// (`kvm_smp_send_call_func_ipi`'s tail; several targets only).
    yield_due: bool,
    /// The destinations' global vCPU indices (filled at the first send).
    dests: Vec<u32>,
    /// Pause between round trips (ns); 0: back to back.
    gap: Time,
    /// The sender's cost of a loop iteration before its ICR write (guest time).
    send_ns: Time,
    /// The round trip in flight: when its ICR write began.
    sent_at: Option<Time>,
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
    /// `n` targets from `to` on.
    pub fn new(to: u32, n: u32, interval_us: Option<f64>, send_ns: f64) -> Self {
        IpiPingPong {
            to,
            n: n.max(1),
            next_dest: 0,
            pending: 0,
            yield_due: false,
            dests: Vec::new(),
            gap: interval_us.map_or(0, |i| round_ns(i * 1e3)),
            send_ns: round_ns(send_ns).max(1),
            sent_at: None,
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
        if std::mem::take(&mut g.app().yield_due) {
            let to = std::mem::take(&mut g.app().dests);
            let exits = g.sched_yield(v, &to);
            g.app().dests = to;
            if exits {
                return; // VM entry asks again
            }
        }
        let window_start = g.window_start();
        let a = g.app();
        if let Some(t0) = a.sent_at {
            if a.next_dest < a.n {
                // send_IPI_mask's loop: the next destination's ICR write (as costly to the
                // guest as the first: our choice, the loop's own cost is not measured).
                let c = a.send_ns;
                return g.run_step(v, Step::new(SEND, 0, 0), c);
            }
            if a.pending > 0 {
                return g.run_step(v, Step::new(WAIT, 0, 0), SPIN_NS);
            }
            if t0 >= window_start {
                a.latency.record(now - t0);
            }
            a.sent_at = None;
            a.trips += 1;
            a.trips_life += 1;
            a.next_at = now + a.gap;
        }
        if now < a.next_at {
            let at = a.next_at;
            return g.idle(v, Some(at));
        }
        a.sent_at = Some(now);
        a.next_dest = 0;
        a.pending = a.n;
        let c = a.send_ns;
        g.run_step(v, Step::new(SEND, 0, 0), c)
    }

    fn step_done(g: &mut impl Ctx<Self>, v: u32, s: Step) {
        if s.kind == SEND {
            let a = g.app();
            let (first, n, i) = (a.to, a.n, a.next_dest);
            if i == 0 {
                a.sent_life += 1;
            }
            if n > 1 && i == 0 {
                if g.app().dests.is_empty() {
                    let to: Vec<u32> = (first..first + n).map(|l| g.vcpu(l)).collect();
                    g.app().dests = to;
                }
                let to = std::mem::take(&mut g.app().dests);
                let many = g.call_function_many(v, &to);
                let a = g.app();
                a.dests = to;
                if let Some(exits) = many {
                    a.next_dest = n;
                    a.yield_due = true;
                    if exits {
                        return;
                    }
                    return g.enter(v);
                }
            }
            let a = g.app();
            a.next_dest = i + 1;
            a.yield_due = n > 1 && i + 1 == n;
            let to = g.vcpu(first + i);
            // With an ICR-write exit the vCPU goes on after it (VM entry asks `next` again).
            if g.send_ipi(v, to, Ipi::CallFunction) {
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
        if !(a.to..a.to + a.n).contains(&local) || a.sent_at.is_none() || a.pending == 0 {
            return;
        }
        a.pending -= 1;
        if a.pending > 0 {
            return;
        }
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
        format!(
            "ipi round trips {} of {} sent to {} vCPUs, in flight since {:?}, {} written, {} handlers to run",
            self.trips_life, self.sent_life, self.n, self.sent_at, self.next_dest, self.pending
        )
    }
    fn progress(&self) -> u64 {
        self.trips_life
    }

    /// Round trips per second as operations; their latency.
    fn measure<'a>(&'a self, _d: DevView<'a>) -> Measure<'a> {
        Measure { latency: Some(&self.latency), ops: Some(self.trips), ..Measure::default() }
    }
}
