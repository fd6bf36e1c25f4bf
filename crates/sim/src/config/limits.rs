//! Bounds of a scenario's sizes and times: what a real host can have and what the engine can
//! run to its end. A value outside them is an input error naming the key, the value and the
//! bound — never a hang, an overflow of the nanosecond clock or a silently different run.

use crate::engine::{secs_to_ns, Time};
use crate::error::num;

/// Most pCPUs a host may have (`[host] pcpus`): 512, past today's two-socket servers (the
/// host scheduler's pCPU masks are this wide: `model/hypervisor/sched/cpumask.rs`).
pub const MAX_PCPUS: u32 = 512;
/// Xen credit's `CSCHED_DEFAULT_TSLICE_MS`: the default of `sched_credit_tslice_ms`.
pub const DEFAULT_TSLICE_MS: u32 = 30;
/// Xen credit's `XEN_SYSCTL_CSCHED_TSLICE_MIN..=MAX` (xen/include/public/sysctl.h): the slices
/// allowed.
pub const TSLICE_MS_RANGE: std::ops::RangeInclusive<u32> = 1..=1000;

/// Shortest measured duration, seconds (1 µs: 1,000 ns of the integer-ns clock, so a duration
/// never rounds to an empty window).
pub const MIN_DURATION_S: f64 = 1e-6;
/// Longest measured duration, seconds: one simulated day. At the engine's speed (≈ 1 M events
/// per simulated second and VM) that is hours of wall time already; and warm-up + duration,
/// ≤ 90,000 s = 9e13 ns, stays far inside u64 nanoseconds (1.8e10 s), so no time overflows.
pub const MAX_DURATION_S: f64 = 86_400.0;
/// Longest warm-up, seconds: one simulated hour, far beyond any transient of the model (the
/// slowest, CFS load averages and the 40 ms delayed ACK, settle within a second).
pub const MAX_WARMUP_S: f64 = 3_600.0;
/// Most characters in a scenario or VM name (names label figures, tables and traces).
pub const MAX_NAME_CHARS: usize = 64;
/// Most VMs in a scenario, whatever the host: a bound of the engine, not of a host. The
/// scheduler's per-event work grows with the number of threads, so beyond this a run crawls
/// (1,024 one-vCPU VMs on 512 pCPUs: 0.05 simulated s in 2-4 s of wall time and ~280 MB).
/// Real density is bounded elsewhere: every VM needs a vCPU thread, and all VMs' vCPUs
/// together at most [`MAX_VCPUS_TOTAL`].
pub const MAX_VMS: usize = 1024;

/// The refusal of `n` VMs (more than [`MAX_VMS`]) on a host of `pcpus` pCPUs: the bound, why it
/// holds on any host, and what it comes to on this one.
pub fn too_many_vms(n: usize, pcpus: u32) -> String {
    let per_pcpu = (MAX_VMS as f64 / f64::from(pcpus.max(1)) * 10.0).round() / 10.0;
    format!(
        "key `vm`: {n} VMs are not allowed; expected at most {MAX_VMS} on any host (on this one's {pcpus} pCPUs, {} VMs per pCPU): the bound is the engine's, whose scheduler works longer per event the more threads it runs",
        num(per_pcpu)
    )
}

/// Most vCPUs of one VM: x86 KVM's `KVM_MAX_VCPUS` (288 since Linux 4.8).
pub const MAX_VCPUS_PER_VM: u32 = 288;
/// Most vCPUs of all VMs together (host threads the scheduler model runs).
pub const MAX_VCPUS_TOTAL: u64 = 4096;
/// Most host CPU hogs.
pub const MAX_CPU_HOGS: usize = 1024;
/// Highest open-loop packet rate of a workload, packets/s: above the minimum-frame rate of a
/// 100 GbE link (148.8 M/s), and every interval stays ≥ 5 ns.
pub const MAX_RATE_PPS: f64 = 2e8;
/// Lowest open-loop packet rate, packets/s (one per second; a slower flow shows nothing in a
/// run the engine can finish, and its interval must fit the clock).
pub const MIN_RATE_PPS: f64 = 1.0;

/// Check a measured duration given as `key` (`duration_s`, or `--duration`); returns it in ns.
/// The one check of every duration, from a file, a dict or the command line.
pub fn check_duration(key: &str, v: f64) -> Result<Time, String> {
    if v.is_finite() && (MIN_DURATION_S..=MAX_DURATION_S).contains(&v) {
        return Ok(secs_to_ns(v));
    }
    Err(format!(
        "{key}: {} is not allowed; expected seconds in {MIN_DURATION_S:e}..={MAX_DURATION_S} (1 µs to one simulated day)",
        num(v)
    ))
}

/// Check a warm-up (`warmup_s`); returns it in ns.
pub fn check_warmup(key: &str, v: f64) -> Result<Time, String> {
    if v.is_finite() && (0.0..=MAX_WARMUP_S).contains(&v) {
        return Ok(secs_to_ns(v));
    }
    Err(format!("{key}: {} is not allowed; expected seconds in 0..={MAX_WARMUP_S} (at most one simulated hour)", num(v)))
}

/// Check a name (scenario, VM): 1..=64 characters, none of them a control character.
pub fn check_name(key: &str, name: &str) -> Result<(), String> {
    let n = name.chars().count();
    if n == 0 {
        return Err(format!("{key}: \"\" is not allowed; expected a name of 1..={MAX_NAME_CHARS} characters"));
    }
    if n > MAX_NAME_CHARS {
        let head: String = name.chars().take(16).collect();
        return Err(format!("{key}: \"{head}…\" ({n} characters) is not allowed; expected at most {MAX_NAME_CHARS} characters"));
    }
    if let Some(c) = name.chars().find(|c| c.is_control()) {
        return Err(format!("{key}: {name:?} is not allowed; a name cannot contain the control character {c:?}"));
    }
    Ok(())
}

/// Check an open-loop rate in packets (datagrams, requests) per second.
pub fn check_rate(key: &str, v: f64, what: &str) -> Result<(), String> {
    if v.is_finite() && (MIN_RATE_PPS..=MAX_RATE_PPS).contains(&v) {
        return Ok(());
    }
    Err(format!("key `{key}`: {} is not allowed; expected {what} in {MIN_RATE_PPS}..={MAX_RATE_PPS:e}", num(v)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_at_the_bounds() {
        assert_eq!(check_duration("d", MIN_DURATION_S), Ok(1000));
        assert!(check_duration("d", MAX_DURATION_S).is_ok());
        for bad in [0.0, 4e-10, -1.0, 1.85e10, 1e300, f64::NAN, f64::INFINITY] {
            let e = check_duration("--duration", bad).unwrap_err();
            assert!(e.starts_with("--duration: ") && e.contains("1e-6..=86400"), "{e}");
        }
        // The longest run fits the clock with room to spare.
        let end = check_warmup("w", MAX_WARMUP_S).unwrap() + check_duration("d", MAX_DURATION_S).unwrap();
        assert!(end < u64::MAX / 1000);
    }

    #[test]
    fn names() {
        assert!(check_name("n", "vm0").is_ok());
        assert!(check_name("n", &"x".repeat(MAX_NAME_CHARS)).is_ok());
        assert!(check_name("n", &"x".repeat(MAX_NAME_CHARS + 1)).unwrap_err().contains("65 characters"));
        assert!(check_name("n", "").is_err());
        assert!(check_name("n", "a\nb").unwrap_err().contains("control character"));
    }
}
