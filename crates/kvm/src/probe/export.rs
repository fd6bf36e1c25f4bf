//! What the probe exports: each parameter as the quantity the simulator applies it to, from
//! every trial, judged by the outlier rule ([`super::stats`]).
//!
//! | exported as | per trial | why this measurement |
//! |---|---|---|
//! | `exit.io_instruction_ns` | guest cost per PIO kick under load (`kick_under_load`: a 20 k/s stream to an exit-mode backend; each kick wakes it) | the simulator charges it on every kick exit, and it makes kicks only to a sleeping vhost (`io_signal_ns`: the exit wakes it) |
//! | `exit.interrupt_delivery_ns` | MSI injection -> handler ran, p50 of the injections made while the vCPU was running (guest heartbeat), guest spinning | the simulator's whole cost of injecting into a running vCPU (no separate signalling latency); a wait for a descheduled vCPU is the simulator's scheduler's, not this exit's |
//! | `host.thread_wakeup_ns` | kick -> sleeping backend thread back from poll(2), p50, PIO, minus `exit.io_signal_ns` | the simulator wakes vhost `io_signal_ns` into the kick exit and then waits `thread_wakeup_ns` (no `host.cstates` in the probe's profile) |
//! | `host.thread_wakeup_spread_ns` | (p90 - p50) / 0.8 of that latency, at most `thread_wakeup_ns` | the half-width of the simulator's uniform spread whose p90 is the measured p90 |
//! | `host.halt_wakeup_ns` | MSI -> halted vCPU runs its handler, p50, halt_poll_ns = 0, 1 ms gaps, minus `host.thread_wakeup_ns` | added between a woken vCPU thread's switch-in and its VM entry |
//! | `host.timer_wakeup_ns` | wall per 10 µs timed sleep - 10 µs - the thread's CPU per sleep | a thread's own timed sleep expired -> it runs (then `vhost.timed_sleep_ns`) |
//! | `vhost.timed_sleep_ns` | the thread's CPU per 10 µs timed sleep | charged when an I/O thread is back from a timed sleep |
//! | `host.halt_poll_wake_ns` | MSI -> a halt-polling vCPU runs its handler, p50, halt_poll_ns = 2 ms, 100 µs gaps (>= 90 % successful polls) | charged between the interrupt reaching a polling vCPU and its guest resuming |
//! | `vhost.wakeup_ns` | backend thread's schedstat CPU / its wake-ups (sparse PIO kicks) | charged when a woken back-end thread starts, before its first item |
//! | `vhost.tx_packet_ns` | backend TSC from the ring check that found a request to its used entry, per request (100 k/s stream, polling backend) | charged per request a back end takes |
//! | `guest.request_ns` | guest TSC in loop turns that submitted or reaped (kicks excluded), per request (same run) | charged per request by `request_stream` |
//! | `not_in_profile.vcpu_hlt_wakeup_ns`, `backend_cpu_per_wakeup_ns` | the raw measurements behind those two | |
//! | `host.cstates` (a table) | the idle curve (`idle_curve_*`): kick -> backend p50, its CPU and idle per wake-up at 4 idle lengths; state i's exit_latency_ns / wake_cpu_ns = point i's minus the shortest idle's, target_residency_ns = geometric mean of points i-1 and i's idles; governor and haltpoll parameters from sysfs ([`super::profile`]) | a nested host's wake-up depends on the idle before it (the outer hypervisor's halt polling): the simulator's idle governor picks the point |
//! | `not_in_profile.io_kick_tight_loop_ns` | guest cost per PIO kick in a loop that does nothing else | no key: the simulator charges one cost per kick, the one under load |
use super::report::*;
use super::stats::{self, judge};
use eventpath_sim::profile::Profile;
use std::collections::BTreeMap;

/// One exported parameter: its name, where it goes, and how one trial gives it.
pub struct Def {
    /// Profile key (`table.key`) or `not_in_profile` name.
    pub name: &'static str,
    /// Written into profile.toml (else probe.json's `not_in_profile`).
    pub in_profile: bool,
    /// Unit.
    pub unit: &'static str,
    /// The quantity measured, as the simulator applies it.
    pub measures: &'static str,
    /// Why it has no profile key (`not_in_profile` only).
    pub why_not: Option<&'static str>,
    /// One trial's value, given the exported profile's `exit.io_signal_ns` (ns).
    pub value: fn(&ProbeResults, f64) -> Option<f64>,
}

fn ns(us: Option<f64>) -> Option<f64> {
    us.map(|us| us * 1e3)
}

/// The kick -> backend run the thread wake-up is read from: the idle curve's shortest idle (the
/// shallowest state, which `host.cstates` adds to), else the sparse kicks every 200 µs.
fn base_wakeup(r: &ProbeResults) -> &KickSamples {
    r.idle_curve.first().map(|p| &p.kick).unwrap_or(&r.kick_to_backend_handler.pio_ioeventfd)
}

/// Kick -> backend, PIO: (p50, p90) in ns.
fn k2b(r: &ProbeResults) -> (Option<f64>, Option<f64>) {
    let l = &base_wakeup(r).latency_us;
    (ns(l.p50), ns(l.p90))
}

/// Point `i` of the idle curve.
fn point(r: &ProbeResults, i: usize) -> Option<&KickSamples> {
    r.idle_curve.get(i).map(|p| &p.kick)
}

/// Kick -> backend p50 (ns) after an idle like a halted vCPU's of the `hlt` run (1 ms ± 50 %):
/// the idle curve's point whose measured idle is nearest 1 ms (by ratio), else [`k2b`]'s.
fn wakeup_after_1ms_idle(r: &ProbeResults) -> Option<f64> {
    let dist = |k: &KickSamples| k.backend_idle_us_per_wakeup.map(|i| (i.max(1.0) / 1000.0).ln().abs());
    let near = r.idle_curve.iter().filter_map(|p| Some((dist(&p.kick)?, &p.kick))).min_by(|a, b| a.0.total_cmp(&b.0));
    match near {
        Some((_, k)) => ns(k.latency_us.p50),
        None => k2b(r).0,
    }
}

/// MSI -> halted vCPU's handler, halt polling off, 1 ms gaps: p50 in ns.
fn hlt(r: &ProbeResults) -> Option<f64> {
    r.hlt_wakeup.get("halt_poll_0_gap_1000us").and_then(|h| ns(h.latency_us.p50))
}

/// The idle curve's exported quantities of point `$i`: (kick -> run p50, backend CPU per
/// wake-up, backend idle per wake-up), ns, not in profile.toml as keys (they make its
/// `host.cstates` table, [`super::profile`]).
macro_rules! curve_defs {
    ($i:expr, $lat:expr, $cpu:expr, $idle:expr) => {
        [
            Def {
                name: $lat,
                in_profile: false,
                unit: "ns",
                measures: "idle curve: guest PIO kick -> the backend thread asleep in poll(2) runs with it, median, at this idle length",
                why_not: Some("a point of host.cstates: its exit_latency_ns is this minus the shortest idle's"),
                value: |r, _| point(r, $i).and_then(|k| ns(k.latency_us.p50)),
            },
            Def {
                name: $cpu,
                in_profile: false,
                unit: "ns",
                measures: "idle curve: the backend thread's CPU time (schedstat) / its kick wake-ups at this idle length",
                why_not: Some("a point of host.cstates: its wake_cpu_ns is this minus the shortest idle's"),
                value: |r, _| point(r, $i).and_then(|k| ns(k.backend_cpu_us_per_wakeup)),
            },
            Def {
                name: $idle,
                in_profile: false,
                unit: "ns",
                measures: "idle curve: the backend thread's mean idle before a wake-up, (window - its CPU) / its kick wake-ups",
                why_not: Some("a point of host.cstates: its target_residency_ns is the geometric mean of this and the next shorter point's"),
                value: |r, _| point(r, $i).and_then(|k| ns(k.backend_idle_us_per_wakeup)),
            },
        ]
    };
}

/// Names of the idle curve's entries, by point: (kick -> run, CPU per wake-up, idle).
pub const CURVE_NAMES: [(&str, &str, &str); IDLE_GAPS_US.len()] = [
    ("idle_curve_20us_kick_to_run_ns", "idle_curve_20us_backend_cpu_ns", "idle_curve_20us_backend_idle_ns"),
    ("idle_curve_100us_kick_to_run_ns", "idle_curve_100us_backend_cpu_ns", "idle_curve_100us_backend_idle_ns"),
    ("idle_curve_500us_kick_to_run_ns", "idle_curve_500us_backend_cpu_ns", "idle_curve_500us_backend_idle_ns"),
    ("idle_curve_2000us_kick_to_run_ns", "idle_curve_2000us_backend_cpu_ns", "idle_curve_2000us_backend_idle_ns"),
];

/// The idle curve's entries (judged like every parameter, by point).
pub fn curve_defs() -> Vec<Def> {
    let n = CURVE_NAMES;
    [
        curve_defs!(0, n[0].0, n[0].1, n[0].2),
        curve_defs!(1, n[1].0, n[1].1, n[1].2),
        curve_defs!(2, n[2].0, n[2].1, n[2].2),
        curve_defs!(3, n[3].0, n[3].1, n[3].2),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// MSI -> a halt-polling vCPU's handler (halt_poll_ns 2 ms, 100 µs gaps): p50 in ns, if at
/// least 90 % of the halts ended in a successful poll (else the run measured blocked wake-ups).
fn polled_wake(r: &ProbeResults) -> Option<f64> {
    let h = r.hlt_wakeup.get("halt_poll_2ms_gap_100us")?;
    let (ok, halts) = (h.halt_successful_poll?, h.halt_exits?);
    (halts > 0 && ok * 10 >= halts * 9).then_some(())?;
    ns(h.latency_us.p50)
}

/// Every exported parameter, in the order probe.json and the docs list them.
pub fn defs() -> Vec<Def> {
    vec![
        Def {
            name: "exit.io_instruction_ns",
            in_profile: true,
            unit: "ns",
            measures: "guest cost of one PIO kick through an ioeventfd under load (guest TSC around the out instruction): a 20 k/s request stream to an exit-mode backend thread on the other CPU, kicked only when it asked (event index), so each kick's eventfd_signal wakes it; the exit the simulator charges per kick",
            why_not: None,
            value: |r, _| ns(r.kick_under_load.guest_cost_us_per_kick),
        },
        Def {
            name: "exit.interrupt_delivery_ns",
            in_profile: true,
            unit: "ns",
            measures: "MSI injection (irqfd write) -> the guest's CPL0 handler ran, median over the injections made while the target vCPU was running (its guest heartbeat advancing; guest spinning at CPL3, injector on the other CPU): the delivery to a running vCPU, which the simulator charges as this exit; includes the cross-CPU signalling and this host's emulated CPL0 handler",
            why_not: None,
            value: |r, _| ns(r.msi_injection_to_handler.vcpu_running_latency_us.p50),
        },
        Def {
            name: "host.thread_wakeup_ns",
            in_profile: true,
            unit: "ns",
            measures: "guest PIO kick -> the backend thread asleep in poll(2) on an idle CPU runs with it (shared TSC), median, at the idle curve's shortest idle (one kick every 20 us; without a curve, every 200 us), minus exit.io_signal_ns (the part of the kick exit the simulator places before the eventfd_signal); includes the exit from this host's shallowest idle outcome: host.cstates adds the longer idles' extra (without a curve the profile has no host.cstates)",
            why_not: None,
            value: |r, io_signal| k2b(r).0.map(|x| x - io_signal),
        },
        Def {
            name: "host.thread_wakeup_spread_ns",
            in_profile: true,
            unit: "ns",
            measures: "half-width of the uniform spread of that wake-up whose p90 is the measured one: (p90 - p50) / 0.8 of guest kick -> backend thread, at most host.thread_wakeup_ns",
            why_not: None,
            value: |r, _| match k2b(r) {
                (Some(p50), Some(p90)) => Some((p90 - p50) / 0.8),
                _ => None,
            },
        },
        Def {
            name: "vcpu_hlt_wakeup_ns",
            in_profile: false,
            unit: "ns",
            measures: "MSI (irqfd write) -> a halted vCPU's thread woke and ran the guest's handler, median, halt_poll_ns = 0, MSIs every 1 ms +- 50 %",
            why_not: Some("the raw measurement behind host.halt_wakeup_ns: the simulator wakes a halted vCPU's thread with host.thread_wakeup_ns like any thread, then adds host.halt_wakeup_ns before VM entry"),
            value: |r, _| hlt(r),
        },
        Def {
            name: "host.halt_wakeup_ns",
            in_profile: true,
            unit: "ns",
            measures: "a halted vCPU's wake-up beyond a thread's: MSI -> halted vCPU ran its handler (median, halt_poll_ns = 0, 1 ms gaps) minus a thread's wake-up after a like idle (kick -> backend thread at the idle curve's point nearest 1 ms, less exit.io_signal_ns: host.thread_wakeup_ns plus that point's host.cstates exit), at least 0; the simulator adds it between the vCPU thread's switch-in and its VM entry (kvm_vcpu_block's return, vcpu_load, the entry, and here this host's emulated CPL0 handler)",
            why_not: None,
            value: |r, io_signal| match (hlt(r), wakeup_after_1ms_idle(r)) {
                (Some(h), Some(w)) => Some((h - (w - io_signal)).max(0.0)),
                _ => None,
            },
        },
        Def {
            name: "host.timer_wakeup_ns",
            in_profile: true,
            unit: "ns",
            measures: "a thread's timed sleep beyond what it asked and its own CPU: wall time per 10 us sleep (timed_sleep) - 10 us - the thread's CPU per sleep (vhost.timed_sleep_ns), at least 0; the simulator wakes a thread whose timed sleep expired (ES2's 10 us sleeps) after it, then charges vhost.timed_sleep_ns",
            why_not: None,
            value: |r, _| match (r.timed_sleep.wall_us_per_sleep, r.timed_sleep.cpu_us_per_sleep) {
                (Some(wall), Some(cpu)) => Some(((wall - r.timed_sleep.asked_us - cpu) * 1e3).max(0.0)),
                _ => None,
            },
        },
        Def {
            name: "vhost.timed_sleep_ns",
            in_profile: true,
            unit: "ns",
            measures: "a thread's own CPU per 10 us timed sleep (thread CPU clock around the sleeps of timed_sleep, timer slack 1 ns as the testbed backend sets it): arming the timer, its expiry and the switches; the simulator charges it when a shared I/O thread comes back from a timed sleep, before its next item",
            why_not: None,
            value: |r, _| r.timed_sleep.cpu_us_per_sleep.map(|us| us * 1e3),
        },
        Def {
            name: "host.halt_poll_wake_ns",
            in_profile: true,
            unit: "ns",
            measures: "MSI (irqfd write) -> a halt-polling vCPU ran the guest's handler, median, halt_poll_ns = 2 ms, MSIs every 100 us +- 50 % (a trial counts only if >= 90 % of its halts ended in a successful poll); the simulator charges it between the interrupt reaching a polling vCPU and the guest resuming with it",
            why_not: None,
            value: |r, _| polled_wake(r),
        },
        Def {
            name: "backend_cpu_per_wakeup_ns",
            in_profile: false,
            unit: "ns",
            measures: "the exit-mode backend thread's CPU time (/proc/self/task/TID/schedstat) over the window / its kick wake-ups, one PIO kick every 200 us: return from poll(2), eventfd read, one request served, interrupt sent, back into poll(2)",
            why_not: Some("the raw measurement behind vhost.wakeup_ns"),
            value: |r, _| ns(r.kick_to_backend_handler.pio_ioeventfd.backend_cpu_us_per_wakeup),
        },
        Def {
            name: "vhost.wakeup_ns",
            in_profile: true,
            unit: "ns",
            measures: "a back-end thread's CPU per wake-up: the exit-mode backend thread's CPU time (schedstat) / its kick wake-ups at the idle curve's shortest idle (one PIO kick every 20 us; without a curve, every 200 us): return from poll(2), eventfd read, one request served, interrupt sent, back into poll(2); the simulator charges it when a woken vhost or I/O thread starts, before its first item, plus host.cstates wake_cpu_ns after a longer idle",
            why_not: None,
            value: |r, _| ns(base_wakeup(r).backend_cpu_us_per_wakeup),
        },
        Def {
            name: "vhost.tx_packet_ns",
            in_profile: true,
            unit: "ns",
            measures: "the backend's own time per request: TSC from the ring check that found a request to its used entry written, per request, in a 100 k/s stream to a polling backend (polled_ring_request); the simulator charges it per request a back end takes (with vhost.tx_byte_ns x 64 bytes, 6 ns at es2's 0.1, not subtracted)",
            why_not: None,
            value: |r, _| r.polled_ring_request.backend_ns_per_request,
        },
        Def {
            name: "guest.request_ns",
            in_profile: true,
            unit: "ns",
            measures: "the testbed guest loop's own time per request: guest TSC in loop turns that submitted or reaped (kicks excluded) per completed request, in the same 100 k/s polled stream; the simulator's request_stream charges it per request",
            why_not: None,
            value: |r, _| r.polled_ring_request.guest_ns_per_request,
        },
        Def {
            name: "io_kick_tight_loop_ns",
            in_profile: false,
            unit: "ns",
            measures: "guest cost of one PIO kick through an ioeventfd in a guest loop that does nothing but kick (hot path, no thread woken per kick)",
            why_not: Some("the simulator charges one cost per kick exit, exit.io_instruction_ns, exported from kicks under load; this is its tight-loop counterpart, for comparison"),
            value: |r, _| r.notification_paths.get("pio_ioeventfd").and_then(|p| ns(p.guest_cost_us_per_notification)),
        },
    ]
}

/// The whole probe.json from the trials' results.
pub fn report(host_cpu: String, date: String, tsc_hz: u64, host_cpus: usize, quick: bool, results: Vec<ProbeResults>) -> Result<ProbeReport, String> {
    let es2 = Profile::load("es2").map_err(|e| e.to_string())?;
    let (profile, not_in_profile, refused) = evaluate(&results, es2.exit.io_signal_ns.value);
    Ok(ProbeReport {
        host_cpu,
        date,
        tsc_hz,
        host_cpus,
        quick,
        trials: results.len(),
        outlier_rule: stats::RULE,
        profile,
        not_in_profile,
        refused,
        host_idle: HostIdle::default(),
        results,
    })
}

type Sections = (BTreeMap<String, Exported>, BTreeMap<String, Exported>, BTreeMap<String, Refused>);

/// Judges every parameter over `results` (one per trial): (profile, not_in_profile, refused).
pub fn evaluate(results: &[ProbeResults], io_signal_ns: f64) -> Sections {
    let (mut profile, mut not_in_profile, mut refused) = (BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
    let curve = results.iter().any(|r| !r.idle_curve.is_empty());
    for d in defs().into_iter().chain(if curve { curve_defs() } else { vec![] }) {
        let trials: Vec<Option<f64>> = results.iter().map(|r| (d.value)(r, io_signal_ns)).collect();
        let j = judge(&trials, d.unit);
        match (j.refused, j.stats) {
            (None, Some(stats)) => {
                let e = Exported { value: stats.median.round(), unit: d.unit, measures: d.measures.into(), why_not_in_profile: d.why_not, stats };
                if d.in_profile { profile.insert(d.name.to_string(), e) } else { not_in_profile.insert(d.name.to_string(), e) };
            }
            (reason, stats) => {
                let reason = reason.unwrap_or_else(|| "no statistics".into());
                refused.insert(d.name.to_string(), Refused { reason, unit: d.unit, measures: d.measures.into(), profile_key: d.in_profile, stats });
            }
        }
    }
    // The spread is a half-width around the wake-up: without that, it is not exported either;
    // the simulator clamps it to the wake-up, so is it here.
    let spread = "host.thread_wakeup_spread_ns";
    match profile.get("host.thread_wakeup_ns").map(|w| w.value) {
        None => {
            if let Some(e) = profile.remove(spread) {
                let reason = "host.thread_wakeup_ns, the wake-up it spreads, was refused".to_string();
                refused.insert(spread.into(), Refused { reason, unit: e.unit, measures: e.measures, profile_key: true, stats: Some(e.stats) });
            }
        }
        Some(wake) => {
            if let Some(e) = profile.get_mut(spread) {
                e.value = e.value.min(wake);
            }
        }
    }
    (profile, not_in_profile, refused)
}
