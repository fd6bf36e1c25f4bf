//! Runs a scenario: builds the VMs, programs the guest loads, starts vCPU, backend and generator
//! threads, measures a window after the warm-up, and writes summary.json.
use crate::backend::{self, irqgen::{IrqGen, MsiSource}, CounterValues, DeviceSpec, Serving};
use crate::error::{Error, Result};
use crate::guest::ctl::CtlView;
use crate::measure::extra::{SeriesData, TestbedSummary};
use crate::measure::migrations;
use crate::measure::summary::{self, Snapshot, Window};
use crate::scenario::{LoadCfg, Scenario, ADVERSARY_KINDS};
use crate::vmm::layout::*;
use crate::vmm::sys;
use crate::vmm::vcpu::VcpuThread;
use crate::vmm::{stats::StatsFd, KickVia, Vm, VmSpec};
use crate::ctl_off;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn role(l: &LoadCfg) -> u64 {
    match l.pattern.as_str() {
        "stream" => ROLE_STREAM,
        "closed" => ROLE_CLOSED,
        "burst" => ROLE_BURST,
        "irq_sink" => ROLE_IRQ_SINK,
        "adversary" => ROLE_ADVERSARY,
        "kick_loop" => ROLE_KICK_LOOP,
        "exit_loop" => ROLE_EXIT_LOOP,
        _ => ROLE_SPIN,
    }
}

fn program_vcpu(vm: &Vm, i: u64, l: &LoadCfg, qsize: u64) {
    let c = CtlView::new(&vm.mem, i);
    let tsc = |ns: f64| sys::ns_to_tsc(ns).max(1);
    c.set(ctl_off!(role), role(l));
    c.set(ctl_off!(queue), i);
    c.set(ctl_off!(qsize), qsize);
    c.set(ctl_off!(kick), match vm.spec.kick { KickVia::Pio => KICK_PIO, KickVia::Mmio => KICK_MMIO, KickVia::None => KICK_NONE });
    c.set(ctl_off!(consume), if l.consume == "irq" { CONSUME_IRQ } else { CONSUME_POLL });
    c.set(ctl_off!(halt_idle), l.halt_when_idle as u64);
    c.set(ctl_off!(period_tsc), if role(l) == ROLE_ADVERSARY { tsc(l.gap_us * 1e3) } else { tsc(1e9 / l.rate) });
    c.set(ctl_off!(window), l.window);
    c.set(ctl_off!(burst), l.burst);
    c.set(ctl_off!(gap_tsc), tsc(l.gap_us * 1e3));
    c.set(ctl_off!(work_tsc), if l.work_ns == 0 { 0 } else { tsc(l.work_ns as f64) });
    let mask = l.adversary.iter().filter_map(|a| ADVERSARY_KINDS.iter().position(|k| k == a)).fold(0u64, |m, k| m | 1 << k);
    c.set(ctl_off!(adv_mask), mask);
}

/// Runs `s`; returns its summary.json.
pub fn run(s: &Scenario) -> Result<TestbedSummary> {
    let kvm = crate::vmm::open_kvm()?;
    let wall0 = Instant::now();
    let go = Arc::new(AtomicBool::new(false));
    let mut vms = Vec::new();
    let mut vcpu_threads = Vec::new();
    let mut devices = Vec::new();
    for (vi, vc) in s.vm.iter().enumerate() {
        let spec = VmSpec {
            name: vc.name.clone(),
            vcpus: vc.vcpus,
            queues: vc.vcpus,
            kick: if vc.kick == "mmio" { KickVia::Mmio } else { KickVia::Pio },
            halt_poll_ns: vc.halt_poll_ns,
            extra_msis: 1,
        };
        let mut vm = Vm::new(&kvm, spec)?;
        let default = LoadCfg::default();
        for i in 0..vc.vcpus {
            let l = vc.load.get(i as usize).unwrap_or(&default);
            program_vcpu(&vm, i, l, vc.queue_size);
            if matches!(role(l), ROLE_STREAM | ROLE_CLOSED | ROLE_BURST | ROLE_ADVERSARY) {
                devices.push((vi, i as usize));
            }
        }
        let fds = vm.take_vcpus();
        let vm = Arc::new(vm);
        let mut stats = Vec::new();
        let mut threads = Vec::new();
        for (i, v) in fds.into_iter().enumerate() {
            stats.push(StatsFd::open(&v).ok());
            let t = VcpuThread::spawn(format!("{}-vcpu{i}", vc.name), v, vc.pin.get(i).copied(), go.clone())?;
            threads.push(t);
        }
        let vm_stats = StatsFd::open(vm.fd.as_ref()).ok();
        vcpu_threads.push((threads, stats, vm_stats));
        vms.push(vm);
    }
    let serving = Serving { io: s.host.io.clone(), vhost: s.vhost_config() };
    let rates: Vec<(String, Arc<AtomicU64>)> =
        devices.iter().map(|&(vi, q)| (format!("{}.q{q}", s.vm[vi].name), Arc::new(AtomicU64::new(u64::MAX)))).collect();
    let specs: Vec<DeviceSpec> = devices
        .iter()
        .zip(&rates)
        .map(|(&(vi, q), r)| DeviceSpec {
            vm: vms[vi].clone(),
            queue: q,
            home_vcpu: q,
            router: s.routing,
            reroute: s.reroute,
            moderation: s.moderation.clone(),
            service_ns: s.backend.service_ns,
            allowed_rate: r.1.clone(),
        })
        .collect();
    let groups: Vec<Vec<DeviceSpec>> = if specs.is_empty() {
        vec![]
    } else if s.host.io.handling == eventpath_sim::scenario::Handling::Elvis {
        elvis_workers(specs, &devices, s.host.io.elvis().devices_per_worker)
    } else if s.backend.threads == "per_queue" {
        specs.into_iter().map(|d| vec![d]).collect()
    } else {
        vec![specs]
    };
    let mut backends = Vec::new();
    let cpus = s.backend_cpus();
    for (k, g) in groups.into_iter().enumerate() {
        let pin = (!cpus.is_empty()).then(|| cpus[k % cpus.len()]);
        backends.push(backend::spawn_backend(format!("io{k}"), g, serving.clone(), pin, go.clone())?);
    }
    let gen = match &s.irqgen {
        Some(g) => {
            let src = s.vm[g.vm].vcpus as usize; // the extra MSI source after the queues
            Some(IrqGen::spawn(MsiSource { vm: vms[g.vm].clone(), src, home: g.vcpu }, s.routing, s.reroute, (g.gap_us * 1e3) as u64, g.pin, go.clone()).map_err(Error::Kvm)?)
        }
        None => None,
    };

    go.store(true, Ordering::SeqCst);
    let mut series = Series::new(s, &vms, &rates);
    let mut kick_hist = eventpath_sim::metrics::Histogram::new();
    let result: Result<(Snapshot, Snapshot, f64)> = (|| {
        std::thread::sleep(Duration::from_secs_f64(s.warmup_s));
        check_alive(&vcpu_threads)?;
        if let Some(g) = &gen {
            g.shared.recording.store(true, Ordering::SeqCst);
        }
        let before = snapshot(&vms, &vcpu_threads, &backends);
        for b in &backends {
            if let Ok(mut h) = b.kick_hist.lock() {
                *h = Default::default();
            }
        }
        let t0 = Instant::now();
        loop {
            let t = t0.elapsed().as_secs_f64();
            series.tick(s, &vms, &rates, t);
            if t >= s.duration_s {
                break;
            }
            std::thread::sleep(Duration::from_secs_f64((s.duration_s - t).min(SERIES_TICK_S)));
        }
        let after = snapshot(&vms, &vcpu_threads, &backends);
        for b in &backends {
            if let Ok(h) = b.kick_hist.lock() {
                kick_hist.merge(&h);
            }
        }
        let secs = t0.elapsed().as_secs_f64();
        if let Some(g) = &gen {
            g.shared.recording.store(false, Ordering::SeqCst);
        }
        check_alive(&vcpu_threads)?;
        Ok((before, after, secs))
    })();
    let gen_result = gen.map(|g| g.stop());
    let mut backend_errors = Vec::new();
    for b in backends {
        if let Err(e) = b.stop() {
            backend_errors.push(e);
        }
    }
    let mut vcpu_errors = Vec::new();
    for (threads, _, _) in vcpu_threads {
        for t in threads {
            if let Some(e) = t.stop().error {
                vcpu_errors.push(e);
            }
        }
    }
    if let Some(e) = backend_errors.into_iter().next() {
        return Err(Error::Kvm(e));
    }
    if let Some(e) = vcpu_errors.into_iter().next() {
        return Err(Error::Guest(e));
    }
    let (before, after, secs) = result?;
    let window = Window { a: &before, b: &after, secs };
    let mut out = summary::build(s, &window, wall0.elapsed().as_secs_f64(), gen_result.as_ref());
    out.extra.series = series.into_data();
    out.extra.counters.kick_to_backend = summary::samples(&kick_hist);
    Ok(out)
}

/// Period of the load-step / time-series loop during the measured window, seconds.
pub const SERIES_TICK_S: f64 = 0.01;

/// Time series sampled every [`SERIES_TICK_S`] over the measured window (t = 0 at its start),
/// and the load steps applied on the same clock.
struct Series {
    /// Per (VM, vCPU) with steps: the steps not yet applied.
    steps: Vec<(usize, u64, Vec<crate::scenario::StepCfg>)>,
    /// Current offered rate per stream vCPU: (VM, vCPU, rate).
    offered: Vec<(usize, u64, f64)>,
    last: Option<(f64, Vec<(u64, u64)>)>,
    names: Vec<String>,
    t: Vec<Vec<f64>>,
    v: Vec<Vec<Option<f64>>>,
}

impl Series {
    fn new(s: &Scenario, vms: &[Arc<Vm>], rates: &[(String, Arc<AtomicU64>)]) -> Series {
        let mut steps = Vec::new();
        let mut offered = Vec::new();
        let mut names = Vec::new();
        for (vi, vc) in s.vm.iter().enumerate() {
            for (i, l) in vc.load.iter().enumerate() {
                if l.pattern == "stream" {
                    offered.push((vi, i as u64, l.rate));
                    names.push(format!("{}.vcpu{i}.offered_rate", vc.name));
                    if !l.steps.is_empty() {
                        steps.push((vi, i as u64, l.steps.clone()));
                    }
                }
            }
        }
        for vm in vms {
            names.push(format!("{}.interrupts_per_s", vm.spec.name));
            names.push(format!("{}.completions_per_s", vm.spec.name));
        }
        for (n, _) in rates {
            names.push(format!("{n}.allowed_irq_rate"));
        }
        let k = names.len();
        Series { steps, offered, last: None, names, t: vec![vec![]; k], v: vec![vec![]; k] }
    }

    fn counts(vms: &[Arc<Vm>]) -> Vec<(u64, u64)> {
        vms.iter()
            .map(|vm| {
                (0..vm.spec.vcpus).fold((0, 0), |(irq, done), i| {
                    let c = CtlView::new(&vm.mem, i);
                    (irq + vm.mem.load_u64(irq_counter(i)).unwrap_or(0), done + c.get(ctl_off!(completed)))
                })
            })
            .collect()
    }

    /// Applies due steps (rewrites the guest's period, which its stream loop re-reads), then
    /// samples every series at `t` seconds.
    fn tick(&mut self, s: &Scenario, vms: &[Arc<Vm>], rates: &[(String, Arc<AtomicU64>)], t: f64) {
        for (vi, i, st) in &mut self.steps {
            while st.first().is_some_and(|x| x.at_s <= t) {
                let x = st.remove(0);
                CtlView::new(&vms[*vi].mem, *i).set(ctl_off!(period_tsc), sys::ns_to_tsc(1e9 / x.rate).max(1));
                if let Some(o) = self.offered.iter_mut().find(|o| o.0 == *vi && o.1 == *i) {
                    o.2 = x.rate;
                }
            }
        }
        let _ = s;
        let now = Self::counts(vms);
        let mut k = 0;
        let mut push = |k: &mut usize, tt: f64, v: Option<f64>| {
            self.t[*k].push(tt);
            self.v[*k].push(v);
            *k += 1;
        };
        for o in &self.offered {
            push(&mut k, t, Some(o.2));
        }
        match &self.last {
            Some((t0, prev)) if t > *t0 => {
                for (a, b) in prev.iter().zip(&now) {
                    push(&mut k, t, Some((b.0 - a.0) as f64 / (t - t0)));
                    push(&mut k, t, Some((b.1 - a.1) as f64 / (t - t0)));
                }
            }
            _ => k += 2 * vms.len(),
        }
        for (_, r) in rates {
            let v = r.load(Ordering::Relaxed);
            push(&mut k, t, (v != u64::MAX).then_some(v as f64));
        }
        self.last = Some((t, now));
    }

    fn into_data(self) -> Vec<SeriesData> {
        self.names.into_iter().zip(self.t.into_iter().zip(self.v)).map(|(name, (t_s, value))| SeriesData { name, t_s, value }).collect()
    }
}

type VcpuSet = (Vec<VcpuThread>, Vec<Option<StatsFd>>, Option<StatsFd>);

fn check_alive(sets: &[VcpuSet]) -> Result<()> {
    for (threads, _, _) in sets {
        if threads.iter().any(|t| t.finished()) {
            return Err(Error::Guest("a vCPU thread stopped early (guest exception or KVM error)".into()));
        }
    }
    Ok(())
}

fn snapshot(vms: &[Arc<Vm>], sets: &[VcpuSet], backends: &[backend::BackendThread]) -> Snapshot {
    let mut s = Snapshot { t_tsc: sys::rdtsc(), cpu_times: sys::cpu_times(), ..Default::default() };
    for (vm, (_, stats, vm_stats)) in vms.iter().zip(sets) {
        let mut ctl = Vec::new();
        let mut hists = Vec::new();
        let mut irqs = Vec::new();
        for i in 0..vm.spec.vcpus {
            let c = CtlView::new(&vm.mem, i);
            let fields: Vec<u64> = (0..44).map(|f| c.get(8 * f)).collect();
            ctl.push(fields);
            hists.push(c.latencies());
            irqs.push(vm.mem.load_u64(irq_counter(i)).unwrap_or(0));
        }
        s.vcpu_ctl.push(ctl);
        s.hists.push(hists);
        s.irq_counts.push(irqs);
        s.kvm_vcpu.push(stats.iter().map(|f| f.as_ref().map(|f| f.read()).unwrap_or_default()).collect());
        s.kvm_vm.push(vm_stats.as_ref().map(|f| f.read()).unwrap_or_default());
    }
    for (threads, _, _) in sets {
        let _ = threads;
    }
    s.vcpu_cpu_ns = sets.iter().map(|(t, _, _)| t.iter().map(|v| sys::task_cpu_ns(v.tid())).collect()).collect();
    s.backends = backends.iter().map(|b| (b.name.clone(), b.counters.snapshot(), sys::task_cpu_ns(b.tid.load(Ordering::Relaxed)))).collect();
    let vcpus = vms.iter().zip(sets).flat_map(|(vm, (t, _, _))| {
        t.iter().enumerate().map(move |(i, v)| (format!("vcpu:{}/{i}", vm.spec.name), migrations::task_migrations(v.tid())))
    });
    let io = backends.iter().map(|b| (b.name.clone(), migrations::task_migrations(b.tid.load(Ordering::Relaxed))));
    s.migrations = vcpus.chain(io).collect();
    s
}

/// Counters summed over backends.
pub fn total(v: &[(String, CounterValues, u64)]) -> CounterValues {
    v.iter().fold(CounterValues::default(), |a, b| a.plus(&b.1))
}

/// ELVIS's prototype's workers (`eventpath_policy::elvis::assign_workers`, as the simulator
/// assigns them): a VM's queues are one device (one vhost device with its virtqueues), and the
/// VMs fill each worker with `per_worker` devices in order. `devices[i]` is `specs[i]`'s (VM,
/// queue).
fn elvis_workers(specs: Vec<DeviceSpec>, devices: &[(usize, usize)], per_worker: u32) -> Vec<Vec<DeviceSpec>> {
    let mut vms: Vec<usize> = devices.iter().map(|&(vi, _)| vi).collect();
    vms.dedup();
    let worker_of_vm: std::collections::HashMap<usize, usize> = eventpath_policy::elvis::assign_workers(vms.len(), per_worker)
        .into_iter()
        .enumerate()
        .flat_map(|(w, members)| members.into_iter().map(move |k| (k, w)))
        .map(|(k, w)| (vms[k], w))
        .collect();
    let mut groups: Vec<Vec<DeviceSpec>> = Vec::new();
    for (spec, &(vi, _)) in specs.into_iter().zip(devices) {
        let w = worker_of_vm[&vi];
        if groups.len() <= w {
            groups.resize_with(w + 1, Vec::new);
        }
        groups[w].push(spec);
    }
    groups
}
