//! `eventpath kvm probe`: measures this host's primitive costs with short testbed runs and writes
//! probe.json ([`report`]) and a simulator profile (profile.toml, see [`profile`]), and the
//! measured costs alone over the `modern` profile (overlay.toml).
//!
//! Every cost is measured per event of its own kind: the notification paths with guest loops
//! that do nothing but notify (`kick_loop`, `exit_loop`), so that "guest cost per notification"
//! is the guest's TSC cycles around the instruction divided by the notifications made, and the
//! throughput is notifications per second of one vCPU. Scenarios are built as values
//! ([`scenarios`]) and results read from the typed summary.
//!
//! Every measurement is repeated over [`ProbeOptions::trials`] rounds (5; 3 with `--quick`);
//! each exported parameter ([`export`]) is the median of its trials, with min, max and spread
//! recorded, or is refused by the outlier rule ([`stats`]) when its trials disagree.
pub mod export;
pub mod profile;
pub mod report;
pub mod scenarios;
pub mod stats;

use crate::error::{Error, Result};
use crate::measure::extra::TestbedSummary;
use crate::scenario::{Handling, Scenario};
use crate::vmm::{self, sys, KickVia, Vm, VmSpec};
use report::*;
use std::collections::BTreeMap;
use std::time::Instant;

/// Checks and runs a scenario.
fn run(s: Scenario) -> Result<TestbedSummary> {
    s.validate()?;
    crate::run::run(&s)
}

/// KVM statistic `key` of the first VM's first vCPU.
fn vcpu0_stat(r: &TestbedSummary, key: &str) -> Option<u64> {
    r.extra.kvm_stats.first()?.vcpus.first()?.get(key).copied()
}

/// Median cost of KVM_SET_GSI_ROUTING moving an MSI between two vCPUs (µs), VM idle.
fn reroute_us(n: usize) -> Result<Reroute> {
    let kvm = vmm::open_kvm()?;
    let vm = Vm::new(&kvm, VmSpec { name: "probe".into(), vcpus: 2, queues: 1, kick: KickVia::Pio, halt_poll_ns: None, extra_msis: 0 })?;
    let mut t = Vec::new();
    for i in 0..n {
        let t0 = Instant::now();
        vm.set_route(0, (i % 2) as u64 ^ 1)?;
        t.push(t0.elapsed().as_secs_f64() * 1e6);
    }
    t.sort_by(f64::total_cmp);
    Ok(Reroute {
        median: t[t.len() / 2],
        p90: t[t.len() * 9 / 10],
        samples: n,
        note: "VM created but not running; see experiment 4 for the cost while the vCPUs' CPU is saturated",
    })
}

/// One notification path: guest cost per notification, notifications/s, KVM exits per one.
fn notify_path(pattern: &str, kick: &str, dur: f64, note: &'static str) -> Result<NotificationPath> {
    let r = run(scenarios::notify_loop(pattern, kick, dur))?;
    let v = &r.vms[0];
    let kicks = v.extra.guest.kicks as f64;
    let exits = vcpu0_stat(&r, "exits").map(|e| e as f64);
    Ok(NotificationPath {
        guest_cost_us_per_notification: v.extra.guest.kick_cost_us_per_kick,
        notifications_per_s: v.kicks_per_s,
        kvm_exits_per_notification: exits.filter(|_| kicks > 0.0).map(|e| e / kicks),
        notifications: kicks,
        note,
    })
}

/// Guest kick -> the exit-mode backend thread asleep in poll(2) sees it, one request every 200 µs;
/// the guest's cost per kick and the backend thread's CPU per wake-up in the same run.
fn kick_to_backend(kick: &str, dur: f64) -> Result<KickSamples> {
    kick_to_backend_every(kick, 200.0, dur)
}

/// [`kick_to_backend`] with one request every `gap_us`.
fn kick_to_backend_every(kick: &str, gap_us: f64, dur: f64) -> Result<KickSamples> {
    let r = run(scenarios::sparse_kicks(kick, gap_us, dur))?;
    let k = &r.extra.counters.kick_to_backend;
    let wakeups = r.extra.counters.per_thread.first().map(|t| t.counters.kick_events).unwrap_or(0);
    let cpu_us = r.host.io_threads.first().and_then(|t| t.util_pct).map(|u| u / 100.0 * r.sim_seconds * 1e6);
    Ok(KickSamples {
        latency_us: k.latency_us.clone(),
        samples: k.samples,
        kicks: r.vms[0].extra.guest.kicks,
        guest_cost_us_per_kick: r.vms[0].extra.guest.kick_cost_us_per_kick,
        backend_wakeups: wakeups,
        backend_cpu_us_per_wakeup: cpu_us.filter(|_| wakeups > 0).map(|c| c / wakeups as f64),
        backend_idle_us_per_wakeup: cpu_us.filter(|_| wakeups > 0).map(|c| (r.sim_seconds * 1e6 - c).max(0.0) / wakeups as f64),
    })
}

/// A request stream at `rate`/s through PIO kicks to an exit-mode backend: the guest's cost per kick.
fn kick_under_load(rate: f64, dur: f64) -> Result<KickUnderLoad> {
    let r = run(scenarios::stream("pio", Handling::Vhost, rate, dur))?;
    let g = &r.vms[0].extra.guest;
    Ok(KickUnderLoad {
        offered_per_s: rate,
        guest_cost_us_per_kick: g.kick_cost_us_per_kick,
        kicks_per_request: g.kicks_per_request,
        requests_per_s: r.vms[0].throughput.ops_per_s,
        kicks: g.kicks,
        note: "PIO kicks through an ioeventfd of a request stream to an exit-mode backend thread on the other CPU that sleeps in poll(2) when its ring is empty: a kick is made only when the backend asked for one (event index), so each kick's eventfd_signal wakes the thread (the kick the simulator charges exit.io_instruction_ns for)",
    })
}

/// HLT wake-up with `halt_poll_ns` (None: the host default), MSIs every `gap_us`.
fn hlt_wakeup(gap_us: f64, halt_poll_ns: Option<u64>, dur: f64) -> Result<HltWakeup> {
    let r = run(scenarios::irq(gap_us, true, halt_poll_ns, dur))?;
    Ok(HltWakeup {
        latency_us: r.vms[0].latency_us.clone(),
        vcpu_cpu_util_pct: r.vms[0].cpu_util_pct,
        halt_exits: vcpu0_stat(&r, "halt_exits"),
        halt_successful_poll: vcpu0_stat(&r, "halt_successful_poll"),
        halt_attempted_poll: vcpu0_stat(&r, "halt_attempted_poll"),
    })
}

/// Runs every measurement.
fn measure(quick: bool) -> Result<ProbeResults> {
    let dur = if quick { 0.15 } else { 0.5 };
    let mut notification_paths = BTreeMap::new();
    for (name, pattern, kick, note) in [
        ("pio_exit_to_userspace", "exit_loop", "pio", "out to a port with no ioeventfd: KVM_EXIT_IO, the vCPU thread re-enters"),
        ("mmio_exit_to_userspace", "exit_loop", "mmio", "write to unbacked MMIO: KVM_EXIT_MMIO, the vCPU thread re-enters"),
        ("pio_ioeventfd", "kick_loop", "pio", "out to the ioeventfd port: no userspace exit"),
        ("mmio_ioeventfd", "kick_loop", "mmio", "write to the ioeventfd MMIO address: no userspace exit"),
    ] {
        notification_paths.insert(name, notify_path(pattern, kick, dur, note)?);
    }
    let kick_to_backend_handler = KickToBackend {
        pio_ioeventfd: kick_to_backend("pio", dur)?,
        mmio_ioeventfd: kick_to_backend("mmio", dur)?,
        note: "guest TSC just before the kick instruction -> the exit-mode backend thread back from poll(2) with that kick's eventfd (shared TSC; one request every 200 us, so the thread is asleep: includes the exit, eventfd signal and the thread's wake-up); backend_cpu_us_per_wakeup = the thread's schedstat CPU time over the window / its kick wake-ups (its <= 200/s 5 ms poll timeouts included in the CPU, not in the count)",
    };
    let kick_under_load = kick_under_load(20_000.0, dur)?;
    let poll = run(scenarios::stream("pio", Handling::Pmd, 1e5, dur))?;
    let polled_ring_request = PolledRing {
        kicks_per_request: poll.vms[0].extra.guest.kicks_per_request,
        requests_per_s: poll.vms[0].throughput.ops_per_s,
        request_to_completion_seen_us: poll.vms[0].latency_us.clone(),
        guest_ns_per_request: poll.vms[0].extra.guest.work_ns_per_request,
        backend_ns_per_request: poll.extra.counters.per_thread.first().map(|t| &t.counters).filter(|c| c.requests > 0)
            .map(|c| crate::vmm::sys::tsc_to_ns(c.request_tsc) / c.requests as f64),
        note: "stream at 100 k/s, backend thread polls, guest polls its used ring; latency = submit -> guest sees the completion",
    };
    let inj = run(scenarios::irq(100.0, false, None, dur))?;
    let running = inj.extra.counters.irqgen.as_ref().and_then(|g| g.by_run_state.get("home_running")).cloned().unwrap_or_default();
    let msi_injection_to_handler = MsiInjection {
        latency_us: inj.vms[0].latency_us.clone(),
        samples: inj.extra.counters.irqgen.as_ref().map(|g| g.samples),
        vcpu_running_latency_us: running.latency_us,
        vcpu_running_samples: running.samples,
        note: "irqfd write -> the CPL3 loop sees the CPL0 handler's count (guest spinning, open-loop injections every 100 us +- 50 %); vcpu_running_*: only the injections made while the vCPU's guest heartbeat was advancing (it was running, not waiting for a host CPU held by another thread)",
    };
    let mut hlt = BTreeMap::new();
    for (name, hp) in [("halt_poll_0", Some(0u64)), ("halt_poll_default", None), ("halt_poll_2ms", Some(2_000_000))] {
        for gap in [100.0, 1000.0] {
            hlt.insert(format!("{name}_gap_{gap}us"), hlt_wakeup(gap, hp, dur)?);
        }
    }
    Ok(ProbeResults {
        notification_paths,
        kick_to_backend_handler,
        kick_under_load,
        polled_ring_request,
        msi_injection_to_handler,
        hlt_wakeup: hlt,
        msi_reroute_us: reroute_us(if quick { 50 } else { 400 })?,
        timed_sleep: timed_sleep(if quick { 2_000 } else { 10_000 })?,
        idle_curve: IDLE_GAPS_US.iter().map(|&g| Ok(IdleCurvePoint { gap_us: g, kick: kick_to_backend_every("pio", g as f64, dur)? })).collect::<Result<_>>()?,
    })
}

/// This host's cpuidle governor, driver and haltpoll parameters, from sysfs.
pub fn host_idle() -> HostIdle {
    let read = |p: &str| std::fs::read_to_string(p).map(|s| s.trim().to_string()).unwrap_or_default();
    let mut haltpoll = BTreeMap::new();
    if let Ok(dir) = std::fs::read_dir("/sys/module/haltpoll/parameters") {
        for e in dir.flatten() {
            haltpoll.insert(e.file_name().to_string_lossy().into_owned(), read(&e.path().to_string_lossy()));
        }
    }
    HostIdle {
        governor: read("/sys/devices/system/cpu/cpuidle/current_governor"),
        driver: read("/sys/devices/system/cpu/cpuidle/current_driver"),
        haltpoll,
    }
}

/// `n` sleeps of 10 µs by a thread on the backend's CPU (the last one) with the backend's timer
/// slack (`sys::exact_timed_sleeps`): wall and CPU time per sleep.
fn timed_sleep(n: u64) -> Result<TimedSleep> {
    let cpu = *crate::vmm::sys::allowed_cpus().last().expect("at least one allowed CPU");
    let h = std::thread::spawn(move || {
        crate::vmm::sys::pin_current(cpu).ok();
        crate::vmm::sys::exact_timed_sleeps();
        let (t0, c0) = (std::time::Instant::now(), crate::vmm::sys::thread_cpu_ns());
        for _ in 0..n {
            std::thread::sleep(std::time::Duration::from_micros(10));
        }
        (t0.elapsed().as_nanos() as f64, (crate::vmm::sys::thread_cpu_ns() - c0) as f64)
    });
    let (wall_ns, cpu_ns) = h.join().map_err(|_| Error::Kvm("the probe's timed-sleep thread panicked".into()))?;
    Ok(TimedSleep {
        asked_us: 10.0,
        wall_us_per_sleep: Some(wall_ns / n as f64 / 1e3),
        cpu_us_per_sleep: Some(cpu_ns / n as f64 / 1e3),
        sleeps: n,
        note: "a thread pinned to the backend's CPU sleeping 10 us at a time (std::thread::sleep, timer slack 1 ns as the testbed backend sets it): wall and thread CPU time per sleep",
    })
}

/// How the probe runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeOptions {
    /// Short runs (0.15 s instead of 0.5 s).
    pub quick: bool,
    /// Trials: every measurement is made this many times, one full round after another, so that
    /// a burst of load on the host hits one trial of each parameter rather than every trial of one.
    pub trials: usize,
}

impl ProbeOptions {
    /// The defaults: 5 trials, or 3 with `quick`.
    pub fn new(quick: bool) -> Self {
        ProbeOptions { quick, trials: if quick { 3 } else { 5 } }
    }
}

/// Runs the probe with the default trials (5; 3 with `quick`), writes `out_dir/probe.json` and
/// `out_dir/profile.toml`; returns probe.json. A parameter the outlier rule refused is listed in
/// probe.json's `refused` and not written into profile.toml; this still returns `Ok` (the
/// command line turns a non-empty `refused` into exit code 3).
pub fn probe(out_dir: &str, quick: bool) -> Result<String> {
    probe_with(out_dir, ProbeOptions::new(quick))
}

/// [`probe`] with explicit options.
pub fn probe_with(out_dir: &str, opts: ProbeOptions) -> Result<String> {
    if opts.trials == 0 {
        return Err(crate::Error::Kvm("probe: trials = 0: not allowed; expected at least 1".into()));
    }
    let results = (0..opts.trials).map(|_| measure(opts.quick)).collect::<Result<Vec<_>>>()?;
    let date = std::process::Command::new("date").arg("-u").arg("+%Y-%m-%d").output().ok().map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string()).unwrap_or_default();
    let mut probe = export::report(profile::host_cpu_model(), date, sys::tsc_hz(), sys::host_cpus(), opts.quick, results).map_err(crate::Error::Kvm)?;
    probe.host_idle = host_idle();
    // Keys sorted, as the summaries are written.
    let text = serde_json::to_string_pretty(&serde_json::to_value(&probe).expect("probe serializes")).expect("json");
    let toml = profile::profile_toml(&probe).map_err(crate::Error::Kvm)?;
    let overlay = profile::overlay_toml(&probe, "modern").map_err(crate::Error::Kvm)?;
    std::fs::create_dir_all(out_dir)?;
    std::fs::write(std::path::Path::new(out_dir).join("probe.json"), &text)?;
    std::fs::write(std::path::Path::new(out_dir).join("profile.toml"), toml)?;
    std::fs::write(std::path::Path::new(out_dir).join("overlay.toml"), overlay)?;
    Ok(text)
}
