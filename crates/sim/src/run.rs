//! Running a scenario end to end: parse, check, build, simulate, summarize.

use crate::engine::{run_until, secs_to_ns, EventQueue, Time, NS_PER_S};
use crate::error::{InputError, InputResult};
use crate::metrics::ExitReason;
use crate::model::ledger::Conservation;
use crate::model::event::Ev;
use crate::model::host::Host;
use crate::scenario::{Checked, Scenario};
use crate::summary::*;
use std::collections::BTreeMap;

mod external;
mod trace;
pub use external::{External, ExternalRouter};
pub use trace::{simulate_traced, simulate_traced_to, simulate_traced_to_file, TraceCounts, TraceOptions};

/// Overrides given on the command line.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Replace the scenario's seed.
    pub seed: Option<u64>,
    /// Replace the scenario's measured duration (seconds).
    pub duration_s: Option<f64>,
}

/// What a run produces.
#[derive(Debug)]
pub struct RunOutput {
    /// The summary.json contract.
    pub summary: Summary,
    /// Latency CDF points per VM: (vm, latency µs, fraction ≤).
    pub latency_cdf: Vec<(String, f64, f64)>,
    /// Exits of the measured window by VM, vCPU and reason (`perf kvm stat`'s table; reasons
    /// with no exit left out). Not part of summary.json: its per-VM `exits_per_s` are these
    /// counts summed over vCPUs, and the VM's `eht_pct` is these times summed.
    pub exit_stats: Vec<ExitStat>,
}

/// One row of the exit table: a vCPU's exits of one reason in the measured window.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ExitStat {
    /// VM name.
    pub vm: String,
    /// vCPU index within the VM.
    pub vcpu: u32,
    /// The reason's key (as in summary.json's `exits_per_s`).
    pub reason: &'static str,
    /// Exits.
    pub count: u64,
    /// Their direct handling time in the hypervisor (ns), the part inside the window: an exit
    /// still running at its end counts up to the end (as `eht_pct` does).
    pub time_ns: u64,
}

/// Load a scenario file, apply options, and run it.
pub fn run_scenario(path: &str, opts: &RunOptions) -> InputResult<RunOutput> {
    let sc = Scenario::from_file(path)?;
    run_parsed(sc, path, opts)
}

/// Run an already-parsed scenario; `origin` names it in errors.
pub fn run_parsed(mut sc: Scenario, origin: &str, opts: &RunOptions) -> InputResult<RunOutput> {
    opts.apply(&mut sc)?;
    let checked = sc.check(origin)?;
    Ok(simulate(&checked))
}

impl RunOptions {
    /// Apply the overrides to a parsed scenario (before [`Scenario::check`]); a bad duration is
    /// named `--duration` and checked as a scenario's `duration_s` is.
    pub fn apply(&self, sc: &mut Scenario) -> InputResult<()> {
        if let Some(s) = self.seed {
            sc.seed = s;
        }
        if let Some(d) = self.duration_s {
            crate::scenario::limits::check_duration("--duration", d).map_err(InputError::Option)?;
            sc.duration_s = d;
        }
        Ok(())
    }
}

/// Simulate a checked scenario.
pub fn simulate(c: &Checked) -> RunOutput {
    simulate_with_ledger(c).0
}

/// Simulate a checked scenario and also return the conservation ledger at the end (tests).
pub fn simulate_with_ledger(c: &Checked) -> (RunOutput, Conservation) {
    let (out, ledger, _, _) = simulate_inner(c, None, External::none(), Time::MAX, &mut |_, _| true);
    (out, ledger)
}

/// Simulate a checked scenario in chunks of `every_ns` simulated ns (at least 1), calling
/// `observer(now_ns, end_ns)` after each chunk (progress, Ctrl-C). When it returns false before
/// the end, the run stops there: the output covers what was simulated (its `sim_seconds` says
/// how much of the measured window) and the flag is false. Chunking changes nothing else: the
/// events handled, and so the summary of a completed run, are those of [`simulate`].
pub fn simulate_observed(c: &Checked, every_ns: Time, observer: &mut dyn FnMut(Time, Time) -> bool) -> (RunOutput, bool) {
    simulate_observed_with(c, External::none(), every_ns, observer)
}

/// [`simulate_observed`] with the policies `ext` supplies in place of those the scenario names
/// ([`External`]). An external policy that fails (a Python router that raises) cannot stop the
/// run itself: it tells its embedder, whose `observer` then returns false.
pub fn simulate_observed_with(
    c: &Checked,
    ext: External,
    every_ns: Time,
    observer: &mut dyn FnMut(Time, Time) -> bool,
) -> (RunOutput, bool) {
    let (out, _, _, completed) = simulate_inner(c, None, ext, every_ns, observer);
    (out, completed)
}

/// A timeline to record while simulating, and where it goes.
type TraceTo = (TraceOptions, Box<dyn std::io::Write + Send>);

fn simulate_inner(
    c: &Checked,
    t: Option<TraceTo>,
    ext: External,
    every_ns: Time,
    observer: &mut dyn FnMut(Time, Time) -> bool,
) -> (RunOutput, Conservation, Option<std::io::Result<TraceCounts>>, bool) {
    let t0 = std::time::Instant::now();
    let mut q = EventQueue::new();
    let mut host = Host::build_with(c, &mut q, ext);
    if let Some((t, out)) = t {
        host.enable_trace(secs_to_ns(t.from_s), secs_to_ns(t.to_s), t.limit, &c.scenario.name, out);
    }
    // Both are bounded by `Scenario::check` (scenario::limits), so the sum cannot overflow.
    let end = secs_to_ns(c.scenario.warmup_s) + secs_to_ns(c.scenario.duration_s);
    let mut now: Time = 0;
    let completed = loop {
        now = now.saturating_add(every_ns.max(1)).min(end);
        run_until(&mut host, &mut q, now);
        // A trace that cannot be written any more (a full disk) ends the run: it is an error.
        if !observer(now, end) || now == end || host.trace_failed() {
            break now == end;
        }
    };
    host.watchdog_end(now);
    let wall = t0.elapsed().as_secs_f64();
    let trace = host.finish_trace(now);
    (summarize(c, &host, now, q.handled(), wall), host.conservation(now), trace, completed)
}

/// Simulate a checked scenario counting the events handled by kind (`Ev::KINDS`, in that
/// order): the benchmark's census of where the events go. The run is [`simulate`]'s.
pub fn simulate_census(c: &Checked) -> (RunOutput, Vec<(&'static str, u64)>) {
    struct Census<'a> {
        host: &'a mut Host,
        by_kind: [u64; Ev::KINDS.len()],
    }
    impl crate::engine::Model for Census<'_> {
        type Event = Ev;
        fn handle(&mut self, now: Time, ev: Ev, q: &mut EventQueue<Ev>) {
            self.by_kind[ev.kind()] += 1;
            self.host.handle(now, ev, q);
        }
    }
    let t0 = std::time::Instant::now();
    let mut q = EventQueue::new();
    let mut host = Host::build(c, &mut q);
    let end = secs_to_ns(c.scenario.warmup_s) + secs_to_ns(c.scenario.duration_s);
    let mut census = Census { host: &mut host, by_kind: [0; Ev::KINDS.len()] };
    run_until(&mut census, &mut q, end);
    let by_kind = Ev::KINDS.iter().copied().zip(census.by_kind).collect();
    let wall = t0.elapsed().as_secs_f64();
    (summarize(c, &host, end, q.handled(), wall), by_kind)
}

fn pct(part: f64, whole: f64) -> Option<f64> {
    (whole > 0.0).then(|| 100.0 * part / whole)
}

fn summarize(c: &Checked, h: &Host, now: Time, events: u64, wall: f64) -> RunOutput {
    let window = (now - h.window_start) as f64;
    let secs = window / NS_PER_S as f64;
    let rate = |n: u64| Some(n as f64 / secs);
    let mut vms = Vec::new();
    let mut cdf = Vec::new();
    let mut exit_stats = Vec::new();
    for (i, vm) in h.vms.iter().enumerate() {
        let mut exits = crate::metrics::ExitCounters::default();
        let (mut guest_ns, mut busy_ns, mut irqs, mut burn_ns) = (0u64, 0u64, 0u64, 0u64);
        let mut lookbusy_ns = 0u64;
        let (mut host_poll_ns, mut guest_poll_ns) = (0u64, 0u64);
        let mut by_source = [0u64; 4];
        // Of the exits' recorded time, the part of one still running past the window's end.
        let mut exit_overrun = 0u64;
        let mut target = [0u64; 3];
        for (j, &v) in vm.vcpus.iter().enumerate() {
            let vc = &h.vcpus[v as usize];
            exits.add(&vc.exits);
            let running = matches!(vc.mode, crate::model::VcpuMode::Exit { .. }).then(|| vc.exit_until.saturating_sub(now));
            for &r in &ExitReason::ALL {
                let mut t = vc.exits.time_ns(r);
                if vc.exits.last() == Some(r) {
                    t = t.saturating_sub(running.unwrap_or(0));
                }
                if vc.exits.count(r) > 0 {
                    exit_stats.push(ExitStat { vm: vm.name.clone(), vcpu: j as u32, reason: r.key(), count: vc.exits.count(r), time_ns: t });
                }
            }
            guest_ns += vc.guest_time.busy_ns(now);
            busy_ns += vc.busy.busy_ns(now);
            irqs += vc.irqs;
            for (n, k) in by_source.iter_mut().zip(vc.irqs_by_source) {
                *n += k;
            }
            burn_ns += vc.burn_work_ns;
            lookbusy_ns += vc.lookbusy_ns;
            host_poll_ns += vc.halt.poll_ns;
            guest_poll_ns += vc.guest_poll.as_ref().map_or(0, |g| g.poll_ns);
            if matches!(vc.mode, crate::model::VcpuMode::Exit { .. }) {
                exit_overrun += vc.exit_until.saturating_sub(now);
            }
            target[0] += vc.target.guest;
            target[1] += vc.target.exit;
            target[2] += vc.target.halted;
        }
        let by_target: BTreeMap<&'static str, Option<f64>> =
            [("guest", target[0]), ("exit", target[1]), ("halted", target[2])].into_iter().map(|(k, n)| (k, rate(n))).collect();
        let vcpu_ns = window * vm.vcpus.len() as f64;
        let cosched = h.cosched[i].pct(now, window);
        let exits_per_s: BTreeMap<&'static str, Option<f64>> =
            ExitReason::ALL.iter().map(|&r| (r.key(), rate(exits.count(r)))).collect();
        let measure = |dev: u32| {
            let d = &h.devs[dev as usize];
            h.senders[dev as usize].measure(crate::model::workload::app::DevView { wire: &d.wire, tap_drops: d.tap_drops })
        };
        let mut m = measure(vm.dev);
        // A VM of several VFs: its receivers' sums (`[vm.net] vfs`).
        let merged = (vm.ndevs > 1).then(|| multi_vf_measure(h, vm.dev..vm.dev + vm.ndevs, &measure));
        let kicks: u64 = (vm.dev..vm.dev + vm.ndevs).map(|dv| h.devs[dv as usize].txq.kicks + h.devs[dv as usize].rxq.kicks).sum();
        if let Some(((delivered, payload, loss_pct, _), ops, by_class)) = &merged {
            (m.delivered, m.payload, m.loss_pct, m.ops, m.by_class) = (*delivered, *payload, *loss_pct, *ops, *by_class);
        }
        let no_latency = crate::metrics::Histogram::new();
        let hist = match &merged {
            Some(((_, _, _, Some(h)), _, _)) => h,
            Some(((_, _, _, None), _, _)) => &no_latency,
            None => m.latency.unwrap_or(&no_latency),
        };
        for (ns, f) in hist.cdf() {
            cdf.push((vm.name.clone(), ns as f64 / 1000.0, f));
        }
        let idle = h.app_of(i).is_idle();
        vms.push(VmSummary {
            name: vm.name.clone(),
            exits_per_s,
            exits_total_per_s: rate(exits.total()),
            eht_pct: pct(exits.total_time_ns().saturating_sub(exit_overrun) as f64, vcpu_ns),
            tig_pct: pct(guest_ns as f64, vcpu_ns),
            interrupts_per_s: rate(irqs),
            interrupts_by_source_per_s: crate::model::IRQ_SOURCES
                .iter()
                .zip([by_source[0], by_source[1], by_source[2] + by_source[3]])
                .map(|(&k, n)| (k, rate(n)))
                .collect::<BTreeMap<_, _>>()
                .into(),
            ipis_by_kind_per_s: crate::model::IPI_KINDS.iter().zip(&by_source[2..]).map(|(&k, &n)| (k, rate(n))).collect::<BTreeMap<_, _>>().into(),
            kicks_per_s: rate(kicks),
            // A VM with no application has no throughput, latency or loss (null, not zero).
            throughput: if idle { Throughput::default() } else { Throughput {
                gbps: m.payload.map(|b| b as f64 * 8.0 / window),
                pps: m.delivered.and_then(rate),
                // Transactions per second for request/response; streams have none.
                ops_per_s: m.ops.and_then(rate),
            }},
            // As checked: a xen_pv device's default, event channels, filled in (Scenario::check).
            interrupt_delivery: Some(c.scenario.vm[i].interrupt_delivery.key()),
            device_interrupts_by_target_state_per_s: by_target.into(),
            interrupt_routing: if h.routing[i].external() {
                Some("external".to_owned())
            } else {
                serde_json::to_value(c.scenario.vm[i].interrupt_routing).ok().and_then(|v| v.as_str().map(str::to_owned))
            },
            interrupt_routing_note: (vm.vcpus.len() == 1 && c.scenario.vm[i].interrupt_routing != Default::default())
                .then_some("one vCPU: every device interrupt goes to vCPU 0 and nothing is boosted; the policy has no effect"),
            device_interrupts_by_run_state_per_s: {
                let r = &h.routing[i].routed;
                crate::model::hypervisor::routing::RUN_STATE_KEYS.iter().zip(r).map(|(&k, &n)| (k, rate(n))).collect::<BTreeMap<_, _>>().into()
            },
            default_target_away_by_run_state_per_s: {
                let r = &h.routing[i].away;
                crate::model::hypervisor::routing::RUN_STATE_KEYS.iter().zip(r).map(|(&k, &n)| (k, rate(n))).collect::<BTreeMap<_, _>>().into()
            },
            latency_by_target_state_us: match m.by_run_class {
                Some(h) => crate::model::RUN_CLASS_KEYS.iter().zip(h).map(|(&k, h)| (k, Latency::from_histogram(h))).collect::<BTreeMap<_, _>>().into(),
                None => Measured::not_measured(),
            },
            latency_us: Latency::from_histogram(hist),
            loss_pct: if idle { None } else { m.loss_pct },
            cpu_util_pct: pct(busy_ns as f64, vcpu_ns),
            coscheduled_pct: cosched.map(|c| c.0),
            coscheduled_if_independent_pct: cosched.map(|c| c.1),
            running_target_found_pct: match h.routing[i].with_one_running {
                [n, found] if n > 0 && vm.vcpus.len() > 1 => pct(found as f64, n as f64),
                _ => None,
            },
            guest_burn_pct: if c.scenario.vm[i].guest_cpu_burn { pct(burn_ns as f64, vcpu_ns) } else { None },
            halt_poll_pct: c.scenario.vm[i].halt_poll.as_ref().and_then(|_| pct(host_poll_ns as f64, vcpu_ns)),
            guest_halt_poll_pct: c.scenario.vm[i].guest_halt_poll.as_ref().and_then(|_| pct(guest_poll_ns as f64, vcpu_ns)),
            web: match c.scenario.vm[i].workload {
                Some(crate::scenario::Workload::Webbench { clients, .. }) => Some(crate::summary::WebSummary {
                    clients,
                    requests_per_min: m.ops.and_then(rate).map(|r| r * 60.0),
                    failed_clients: m.failed_clients.unwrap_or(0),
                }),
                _ => None,
            },
            tcp_receive: m.tcp_rx.map(|t| crate::summary::TcpReceiveSummary {
                autotuned: t.autotuned,
                window_initial_bytes: t.windows[0],
                window_max_bytes: t.windows[1],
                window_end_bytes: t.windows[2],
                window_mean_bytes: (t.advertised.1 > 0).then(|| t.advertised.0 as f64 / t.advertised.1 as f64),
                retransmits_per_s: t.retransmits as f64 / secs,
                timeouts_per_s: t.timeouts as f64 / secs,
                cwnd_mean_segments: (t.cwnd.1 > 0).then(|| t.cwnd.0 as f64 / t.cwnd.1 as f64),
                cwnd_end_segments: t.cwnd.2,
            }),
            tcp_rr: m.tcp_rr.map(|t| crate::summary::TcpRrSummary {
                retransmits_per_s: t.retransmits as f64 / secs,
                rto_backoff_max: t.backoff_max,
            }),
            cpu_job: m.job.map(|j| crate::summary::CpuJobSummary {
                work_ms: j.work_ns as f64 / 1e6,
                finished: j.finished_at.is_some(),
                completion_ms: j.finished_at.map(|t| t as f64 / 1e6),
                done_pct: 100.0 * j.done_ns as f64 / j.work_ns as f64,
            }),
            lookbusy: h.vms[i].lookbusy.as_ref().map(|l| crate::summary::LookbusySummary {
                target_pct: l.util_pct(),
                period_ms: l.period() as f64 / 1e6,
                util_pct: pct(lookbusy_ns as f64, vcpu_ns),
            }),
            httperf: match (&c.scenario.vm[i].workload, m.open_loop) {
                (Some(crate::scenario::Workload::Httperf { rate_rps, .. }), Some([opened, timeouts, no_slot])) => Some(crate::summary::HttperfSummary {
                    rate_rps: *rate_rps,
                    conn_rate_per_s: rate(opened),
                    reply_rate_per_s: m.ops.and_then(rate),
                    errors: timeouts + no_slot,
                    error_pct: pct((timeouts + no_slot) as f64, (timeouts + no_slot + m.ops.unwrap_or(0)) as f64),
                }),
                _ => None,
            },
            specweb: match (&c.scenario.vm[i].workload, m.by_class) {
                (Some(crate::scenario::Workload::Specweb { sessions, .. }), Some([light, heavy])) => Some(crate::summary::SpecwebSummary {
                    sessions: *sessions,
                    finished_requests: m.ops.unwrap_or(0),
                    requests_per_s: m.ops.and_then(rate),
                    response_time_mean_ms: hist.mean().map(|ns| ns / 1e6),
                    response_time_p95_ms: hist.quantile(0.95).map(|ns| ns / 1e6),
                    finished_by_class: [("light", light), ("heavy", heavy)].into_iter().collect(),
                }),
                _ => None,
            },
            block: match (&c.scenario.vm[i].workload, m.by_class) {
                (Some(w), Some([reads, writes])) if w.is_block() => Some(crate::summary::BlockSummary {
                    read_iops: rate(reads),
                    write_iops: rate(writes),
                    bandwidth_mb_s: rate((reads + writes) * u64::from(w.block_bytes().unwrap_or(0))).map(|b| b / 1e6),
                    queues: vm.ndevs,
                    device: c.scenario.vm[i].disk.kind.key(),
                }),
                _ => None,
            },
            guest_threads: m.guest_threads.map(|g| crate::summary::GuestThreadsSummary {
                threads: g.threads,
                switches_per_s: rate(g.switches),
                migrations_per_s: crate::model::hypervisor::sched::Migration::ALL.iter().map(|c| (c.key(), rate(g.migrations[*c as usize]))).collect(),
            }),
            extra: (),
        });
    }
    let stats = h.sched.stats();
    let host = HostSummary {
        // Not idle: a thread ran there, or host interrupt work ran on it without one. (Idle
        // work queued behind a thread's can overlap a switch-in by the work in hand: capped.)
        pcpu_util_pct: h
            .pcpu_busy
            .iter()
            .enumerate()
            .map(|(p, b)| (100.0 * (b.busy_ns(now) + h.softirqs.idle_ns(p as u32, now)) as f64 / window).min(100.0))
            .collect(),
        pcpu_softirq_pct: (0..h.pcpu_busy.len() as u32).map(|p| 100.0 * h.softirqs.ns(p, now) as f64 / window).collect::<Vec<_>>().into(),
        io_threads: h
            .io
            .threads
            .iter()
            .map(|t| {
                let (polls, empty) = t.polls();
                let numa = h.profile.numa.is_some();
                let busy = t.busy.busy_ns(now) as f64;
                IoThreadSummary {
                    name: t.name.clone(),
                    util_pct: pct(busy, window),
                    empty_poll_pct: pct(empty as f64, polls as f64),
                    remote_items_pct: pct(t.remote_items as f64, t.items as f64).filter(|_| numa),
                    // (An item taken just before the end is counted whole: at most its cost over.)
                    remote_busy_pct: pct(t.remote_ns as f64, busy).filter(|_| numa).map(|p| p.min(100.0)),
                }
            })
            .collect(),
        threads: h
            .thread_names
            .iter()
            .enumerate()
            .map(|(t, name)| ThreadSummary {
                name: name.clone(),
                pcpu_pct: (0..c.pcpus).map(|p| 100.0 * h.sched.run_ns(now, t as u32, p) as f64 / window).collect(),
                migrations_per_s: h.sched.thread_migrations(t as u32) as f64 / secs,
            })
            .collect::<Vec<_>>()
            .into(),
        context_switches_per_s: Some(stats.switches as f64 / secs),
        migrations_per_s: Some(stats.migrations.iter().map(|&(_, n)| n).sum::<u64>() as f64 / secs),
        migrations_by_cause_per_s: stats
            .migrations
            .iter()
            .map(|&(m, n)| (m.key(), n as f64 / secs))
            .collect::<BTreeMap<_, _>>()
            .into(),
        wake_affine_per_s: Some(stats.wake_affine_hits as f64 / secs),
        idle_wakeups_by_cstate_per_s: c
            .profile
            .host
            .cstates
            .states
            .iter()
            .zip(stats.cstate_wakeups.iter().copied())
            .map(|(st, n)| (st.name.clone(), n as f64 / secs))
            .collect::<BTreeMap<_, _>>()
            .into(),
    };
    let s = &c.scenario;
    let out = RunOutput {
        summary: Summary {
            scenario: s.name.clone(),
            seed: Some(s.seed),
            profile: Some(c.profile.name.clone()),
            sim_seconds: secs,
            wall_seconds: wall,
            events: Some(events),
            vms,
            host,
            stalled_flows: h
                .watchdog
                .stalls
                .iter()
                .map(|st| StalledFlow {
                    vm: h.vms[st.vm as usize].name.clone(),
                    stalled_from_s: st.since as f64 / NS_PER_S as f64,
                    detected_s: st.detected as f64 / NS_PER_S as f64,
                    recovered_s: st.recovered.map(|t| t as f64 / NS_PER_S as f64),
                    state: st.state.clone(),
                })
                .collect::<Vec<_>>()
                .into(),
            extra: (),
        },
        latency_cdf: cdf,
        exit_stats,
    };
    // A percentage past 100, a negative rate, shares of a pCPU above it: a bug, never a result.
    #[cfg(debug_assertions)]
    {
        let v = crate::sanity::violations(&out.summary, c.profile.nic.gbps.value);
        assert!(v.is_empty(), "metric invariants broken (a model bug): {v:#?}");
    }
    out
}

#[cfg(test)]
mod exit_stats_tests {
    use super::*;

    /// The exit table is the summary's exits split by vCPU: per VM its counts add up to
    /// `exits_total_per_s` and its times to `eht_pct`'s numerator.
    #[test]
    fn exit_table_adds_up_to_the_summary() {
        let text = include_str!("../../../examples/es2-4vm-netperf-threads.toml");
        let mut sc = Scenario::from_toml("t", text).unwrap();
        sc.duration_s = 0.02;
        sc.warmup_s = 0.01;
        let c = sc.check("t").unwrap();
        let out = simulate(&c);
        let secs = out.summary.sim_seconds;
        assert!(!out.exit_stats.is_empty());
        for (i, vm) in out.summary.vms.iter().enumerate() {
            let rows: Vec<_> = out.exit_stats.iter().filter(|r| r.vm == vm.name).collect();
            let vcpus = c.scenario.vm[i].vcpus;
            assert!(rows.iter().all(|r| r.vcpu < vcpus && r.count > 0));
            for (reason, rate) in &vm.exits_per_s {
                let n: u64 = rows.iter().filter(|r| r.reason == *reason).map(|r| r.count).sum();
                assert!((n as f64 / secs - rate.unwrap()).abs() < 1e-6, "{} {reason}", vm.name);
            }
            let t: u64 = rows.iter().map(|r| r.time_ns).sum();
            let eht = 100.0 * t as f64 / (secs * 1e9 * vcpus as f64);
            assert!((eht - vm.eht_pct.unwrap()).abs() < 1e-6, "{}: {eht} vs {:?}", vm.name, vm.eht_pct);
        }
    }
}

/// What a VM of several VFs reports (`[vm.net] vfs`): its receivers' packets and bytes summed,
/// their loss weighted by what each one's client sent, their latencies merged.
#[allow(clippy::type_complexity)]
/// A VM of several devices (VFs, queue pairs, a disk's request queues): its applications'
/// sums — delivered, payload, loss, latency; their operations and their classes (a disk's
/// reads and writes) where each reports them.
#[allow(clippy::type_complexity)]
fn multi_vf_measure<'a>(
    h: &'a crate::model::Host,
    devs: std::ops::Range<u32>,
    measure: &dyn Fn(u32) -> crate::model::workload::Measure<'a>,
) -> ((Option<u64>, Option<u64>, Option<f64>, Option<crate::metrics::Histogram>), Option<u64>, Option<[u64; 2]>) {
    let ms: Vec<_> = devs.clone().map(measure).collect();
    let ops = ms.iter().map(|m| m.ops).sum::<Option<u64>>();
    let by_class = ms.iter().map(|m| m.by_class).try_fold([0, 0], |a, c| c.map(|c| [a[0] + c[0], a[1] + c[1]]));
    let delivered = ms.iter().map(|m| m.delivered).sum::<Option<u64>>();
    let payload = ms.iter().map(|m| m.payload).sum::<Option<u64>>();
    let bases: Vec<Option<u64>> = devs.map(|d| h.senders[d as usize].loss_base()).collect();
    let loss_pct = match bases.iter().copied().sum::<Option<u64>>() {
        Some(total) if total > 0 => {
            let lost: f64 = ms.iter().zip(&bases).map(|(m, b)| m.loss_pct.unwrap_or(0.0) * b.unwrap_or(0) as f64).sum();
            Some(lost / total as f64)
        }
        Some(_) => None,
        None => ms.iter().map(|m| m.loss_pct).sum::<Option<f64>>().map(|s| s / ms.len() as f64),
    };
    let latency = ms.iter().any(|m| m.latency.is_some()).then(|| {
        let mut all = crate::metrics::Histogram::new();
        for l in ms.iter().filter_map(|m| m.latency) {
            all.merge(l);
        }
        all
    });
    ((delivered, payload, loss_pct, latency), ops, by_class)
}
