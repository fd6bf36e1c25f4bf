//! Metric invariants of a summary (DESIGN §6; issue 26): what any valid run's numbers must
//! satisfy, whatever the layout — a number outside them is a model or accounting bug, never a
//! result. Checked at the end of every run in debug builds (`run.rs`) and by the layout fuzzer
//! (`fuzz.rs`), in release builds too.
//!
//! * every percentage is within 0–100: EHT, TIG, vCPU and burn utilization, loss (drops of the
//!   window's sends over those sends), pCPU, I/O thread and empty-poll shares;
//! * every rate and count is finite and ≥ 0, and the exit reasons add up to the exit total;
//! * a latency distribution's order statistics are ordered (p50 ≤ p90 ≤ … ≤ max);
//! * the threads' shares of a pCPU add up to at most the pCPU (100 %), and no pCPU is busier
//!   than the threads it ran;
//! * every latency fits in the measured window (a request sent and completed in it), and no
//!   VM's payload throughput exceeds its link's line rate (what was delivered in the window).

use crate::summary::{Latency, Summary};

/// Tolerance of a percentage or a sum of shares (floating-point rounding of ns sums).
const EPS: f64 = 1e-6;

/// Every invariant the summary breaks, one line each; empty for a sane run. `link_gbps` is the
/// line rate of the host's NIC port (the profile's `nic.gbps`).
pub fn violations<X, V>(s: &Summary<X, V>, link_gbps: f64) -> Vec<String> {
    let mut out = Vec::new();
    let window_us = s.sim_seconds * 1e6;
    for vm in &s.vms {
        let classes = vm.latency_by_target_state_us.iter().map(|(c, l)| (format!("latency_by_target_state_us.{c}"), l));
        for (what, l) in std::iter::once(("latency_us".to_string(), &vm.latency_us)).chain(classes) {
            if let Some(mx) = l.max.filter(|&mx| mx > window_us * (1.0 + EPS)) {
                out.push(format!("vm {} {what}.max = {mx} us: longer than the measured window ({window_us} us)", vm.name));
            }
        }
        if let Some(g) = vm.throughput.gbps.filter(|&g| g > link_gbps * (1.0 + 1e-3)) {
            out.push(format!("vm {} throughput.gbps = {g}: more than the link's {link_gbps} Gbit/s", vm.name));
        }
    }
    let mut pct = |what: String, v: Option<f64>| {
        if let Some(v) = v {
            if !(v.is_finite() && (-EPS..=100.0 + EPS).contains(&v)) {
                out.push(format!("{what} = {v}: a percentage outside 0-100"));
            }
        }
    };
    for vm in &s.vms {
        let n = &vm.name;
        pct(format!("vm {n} eht_pct"), vm.eht_pct);
        pct(format!("vm {n} tig_pct"), vm.tig_pct);
        pct(format!("vm {n} cpu_util_pct"), vm.cpu_util_pct);
        pct(format!("vm {n} coscheduled_pct"), vm.coscheduled_pct);
        pct(format!("vm {n} coscheduled_if_independent_pct"), vm.coscheduled_if_independent_pct);
        pct(format!("vm {n} running_target_found_pct"), vm.running_target_found_pct);
        pct(format!("vm {n} guest_burn_pct"), vm.guest_burn_pct);
        pct(format!("vm {n} halt_poll_pct"), vm.halt_poll_pct);
        pct(format!("vm {n} guest_halt_poll_pct"), vm.guest_halt_poll_pct);
        pct(format!("vm {n} loss_pct"), vm.loss_pct);
        if let Some(l) = &vm.lookbusy {
            pct(format!("vm {n} lookbusy.target_pct"), Some(l.target_pct));
            pct(format!("vm {n} lookbusy.util_pct"), l.util_pct);
        }
        if let Some(h) = &vm.httperf {
            pct(format!("vm {n} httperf.error_pct"), h.error_pct);
        }
    }
    for (c, &u) in s.host.pcpu_util_pct.iter().enumerate() {
        pct(format!("host pcpu {c} util"), Some(u));
    }
    for t in &s.host.io_threads {
        pct(format!("io thread {} util_pct", t.name), t.util_pct);
        pct(format!("io thread {} empty_poll_pct", t.name), t.empty_poll_pct);
        pct(format!("io thread {} remote_items_pct", t.name), t.remote_items_pct);
        pct(format!("io thread {} remote_busy_pct", t.name), t.remote_busy_pct);
    }
    for t in s.host.threads.iter() {
        for (c, &p) in t.pcpu_pct.iter().enumerate() {
            pct(format!("thread {} on pcpu {c}", t.name), Some(p));
        }
    }
    let mut rate = |what: String, v: Option<f64>| {
        if let Some(v) = v {
            if !(v.is_finite() && v >= 0.0) {
                out.push(format!("{what} = {v}: a rate or count must be finite and >= 0"));
            }
        }
    };
    for vm in &s.vms {
        let n = &vm.name;
        for (reason, &v) in &vm.exits_per_s {
            rate(format!("vm {n} exits_per_s.{reason}"), v);
        }
        rate(format!("vm {n} exits_total_per_s"), vm.exits_total_per_s);
        rate(format!("vm {n} interrupts_per_s"), vm.interrupts_per_s);
        for (src, &v) in vm.interrupts_by_source_per_s.iter() {
            rate(format!("vm {n} interrupts_by_source_per_s.{src}"), v);
        }
        rate(format!("vm {n} kicks_per_s"), vm.kicks_per_s);
        rate(format!("vm {n} throughput.gbps"), vm.throughput.gbps);
        rate(format!("vm {n} throughput.pps"), vm.throughput.pps);
        rate(format!("vm {n} throughput.ops_per_s"), vm.throughput.ops_per_s);
        if let Some(h) = &vm.httperf {
            rate(format!("vm {n} httperf.rate_rps"), Some(h.rate_rps));
            rate(format!("vm {n} httperf.conn_rate_per_s"), h.conn_rate_per_s);
            rate(format!("vm {n} httperf.reply_rate_per_s"), h.reply_rate_per_s);
        }
        if let Some(t) = &vm.tcp_rr {
            rate(format!("vm {n} tcp_rr.retransmits_per_s"), Some(t.retransmits_per_s));
        }
        if let Some(t) = &vm.tcp_receive {
            rate(format!("vm {n} tcp_receive.retransmits_per_s"), Some(t.retransmits_per_s));
            rate(format!("vm {n} tcp_receive.timeouts_per_s"), Some(t.timeouts_per_s));
            rate(format!("vm {n} tcp_receive.window_mean_bytes"), t.window_mean_bytes);
            rate(format!("vm {n} tcp_receive.cwnd_mean_segments"), t.cwnd_mean_segments);
        }
        if let Some(w) = &vm.specweb {
            rate(format!("vm {n} specweb.requests_per_s"), w.requests_per_s);
            rate(format!("vm {n} specweb.response_time_mean_ms"), w.response_time_mean_ms);
            rate(format!("vm {n} specweb.response_time_p95_ms"), w.response_time_p95_ms);
        }
        for (state, &v) in vm.device_interrupts_by_target_state_per_s.iter() {
            rate(format!("vm {n} device_interrupts_by_target_state_per_s.{state}"), v);
        }
        for (kind, &v) in vm.ipis_by_kind_per_s.iter() {
            rate(format!("vm {n} ipis_by_kind_per_s.{kind}"), v);
        }
        for (state, &v) in vm.device_interrupts_by_run_state_per_s.iter() {
            rate(format!("vm {n} device_interrupts_by_run_state_per_s.{state}"), v);
        }
        for (state, &v) in vm.default_target_away_by_run_state_per_s.iter() {
            rate(format!("vm {n} default_target_away_by_run_state_per_s.{state}"), v);
        }
    }
    rate("host context_switches_per_s".into(), s.host.context_switches_per_s);
    rate("host migrations_per_s".into(), s.host.migrations_per_s);
    rate("host wake_affine_per_s".into(), s.host.wake_affine_per_s);
    for vm in &s.vms {
        let sum: f64 = vm.exits_per_s.values().flatten().sum();
        if let Some(total) = vm.exits_total_per_s {
            if (sum - total).abs() > EPS * total.max(1.0) {
                out.push(format!("vm {} exits by reason sum to {sum}, exits_total_per_s is {total}", vm.name));
            }
        }
        ordered(&mut out, &format!("vm {} latency_us", vm.name), &vm.latency_us);
        for (class, l) in vm.latency_by_target_state_us.iter() {
            ordered(&mut out, &format!("vm {} latency_by_target_state_us.{class}", vm.name), l);
        }
    }
    for c in 0..s.host.pcpu_util_pct.len() {
        let threads: f64 = s.host.threads.iter().map(|t| t.pcpu_pct.get(c).copied().unwrap_or(0.0)).sum();
        if threads > 100.0 + 1e-3 {
            out.push(format!("threads' shares of pcpu {c} sum to {threads} %: more than the pCPU"));
        }
    }
    out
}

/// A latency distribution's statistics are ≥ 0 and ordered.
fn ordered(out: &mut Vec<String>, what: &str, l: &Latency) {
    let qs = [("p50", l.p50), ("p90", l.p90), ("p95", l.p95), ("p99", l.p99), ("p999", l.p999), ("max", l.max)];
    let mut prev: Option<(&str, f64)> = None;
    for (name, v) in qs {
        let Some(v) = v else { continue };
        if !(v.is_finite() && v >= 0.0) {
            out.push(format!("{what}.{name} = {v}: not a latency"));
        }
        if let Some((pn, pv)) = prev {
            if v + EPS < pv {
                out.push(format!("{what}.{name} = {v} < {pn} = {pv}"));
            }
        }
        prev = Some((name, v));
    }
    if let (Some(m), Some(mx)) = (l.mean, l.max) {
        if !(m.is_finite() && m >= 0.0 && m <= mx + EPS) {
            out.push(format!("{what}.mean = {m} outside 0..=max {mx}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::{run_parsed, RunOptions};
    use crate::scenario::Scenario;

    fn summary() -> Summary {
        let sc = Scenario::from_toml("t", "name = \"t\"\nprofile = \"es2\"\nduration_s = 0.01\nwarmup_s = 0.002\n[[vm]]\nname = \"vm0\"\nvcpus = 1\n[vm.workload]\nkind = \"udp_stream\"\nmessage_bytes = 512\n").unwrap();
        run_parsed(sc, "t", &RunOptions::default()).unwrap().summary
    }

    #[test]
    fn a_sane_run_has_no_violation() {
        assert_eq!(violations(&summary(), 40.0), Vec::<String>::new());
    }

    #[test]
    fn each_broken_invariant_is_named() {
        let mut s = summary();
        s.vms[0].loss_pct = Some(1229.2);
        s.vms[0].kicks_per_s = Some(-1.0);
        s.vms[0].latency_us.p99 = s.vms[0].latency_us.p50.map(|v| v / 2.0);
        s.host.pcpu_util_pct[0] = f64::NAN;
        let v = violations(&s, 40.0);
        assert_eq!(v.len(), 4, "{v:#?}");
        assert!(v[0].contains("loss_pct = 1229.2"), "{v:?}");
        assert!(v.iter().any(|l| l.contains("kicks_per_s = -1")));
        assert!(v.iter().any(|l| l.contains("latency_us.p99") && l.contains("< p95")));
        assert!(v.iter().any(|l| l.contains("pcpu 0 util = NaN")));
    }

    #[test]
    fn a_latency_past_the_window_and_a_throughput_past_the_link_are_named() {
        let mut s = summary();
        s.vms[0].latency_us.max = Some(s.sim_seconds * 1e6 * 2.0);
        s.vms[0].latency_us.p999 = s.vms[0].latency_us.max;
        s.vms[0].throughput.gbps = Some(30.2);
        let v = violations(&s, 13.1);
        assert!(v.iter().any(|l| l.contains("latency_us.max") && l.contains("longer than the measured window")), "{v:#?}");
        assert!(v.iter().any(|l| l.contains("throughput.gbps = 30.2") && l.contains("13.1 Gbit/s")), "{v:#?}");
    }
}
