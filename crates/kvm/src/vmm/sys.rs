//! Host-side helpers: TSC, thread pinning, per-thread CPU time, the signal that kicks a vCPU
//! thread out of KVM_RUN.
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The TSC (shared with the guest: offset 0, no scaling on the hosts we run on).
#[inline]
pub fn rdtsc() -> u64 {
    // SAFETY: RDTSC has no memory effects; it is available on every x86-64 CPU.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// TSC ticks per second, measured against CLOCK_MONOTONIC over ~50 ms (once per process).
pub fn tsc_hz() -> u64 {
    static HZ: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *HZ.get_or_init(|| {
        let (t0, c0) = (Instant::now(), rdtsc());
        std::thread::sleep(Duration::from_millis(50));
        let (c1, dt) = (rdtsc(), t0.elapsed());
        ((c1 - c0) as f64 / dt.as_secs_f64()) as u64
    })
}

/// TSC ticks to nanoseconds.
pub fn tsc_to_ns(ticks: u64) -> f64 {
    ticks as f64 * 1e9 / tsc_hz() as f64
}

/// Nanoseconds to TSC ticks.
pub fn ns_to_tsc(ns: f64) -> u64 {
    (ns * tsc_hz() as f64 / 1e9) as u64
}

/// The host CPU ids this process may run on, ascending: its affinity mask, which `taskset` or a
/// container's cpuset narrows (CPU ids are not 0..count there: under `taskset -c 1` the only
/// allowed CPU is 1). Pins are checked against these ids, since `sched_setaffinity` takes ids.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: cpu_set_t is plain data; zeroed is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: pid 0 is the calling thread; `set` is a valid cpu_set_t of the size passed.
    let r = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if r != 0 {
        return vec![0];
    }
    // SAFETY: CPU_ISSET reads inside `set` for every id below CPU_SETSIZE.
    let ids: Vec<usize> = (0..libc::CPU_SETSIZE as usize).filter(|&c| unsafe { libc::CPU_ISSET(c, &set) }).collect();
    if ids.is_empty() { vec![0] } else { ids }
}

/// Number of host CPUs this process may use.
pub fn host_cpus() -> usize {
    allowed_cpus().len()
}

/// The allowed CPU ids as a cpuset list ("0-3", "1", "2,5-7").
pub fn cpu_list(ids: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let mut j = i;
        while j + 1 < ids.len() && ids[j + 1] == ids[j] + 1 {
            j += 1;
        }
        out.push(if j == i { ids[i].to_string() } else { format!("{}-{}", ids[i], ids[j]) });
        i = j + 1;
    }
    out.join(",")
}

/// Pins the calling thread to host CPU `cpu`.
pub fn pin_current(cpu: usize) -> std::io::Result<()> {
    // SAFETY: cpu_set_t is plain data; zeroed is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: CPU_SET writes inside `set`; `cpu` < CPU_SETSIZE is checked by the caller (scenario
    // validation accepts only ids of the process's affinity mask).
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: pid 0 is the calling thread; `set` is a valid cpu_set_t of the size passed.
    let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// CPU time consumed by the calling thread, ns.
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec to write into.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Per-CPU busy and total jiffies from /proc/stat (for host pCPU utilisation).
pub fn cpu_times() -> Vec<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    text.lines()
        .filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(|b| b.is_ascii_digit()))
        .map(|l| {
            let v: Vec<u64> = l.split_whitespace().skip(1).filter_map(|x| x.parse().ok()).collect();
            let total: u64 = v.iter().sum();
            let idle = v.get(3).copied().unwrap_or(0) + v.get(4).copied().unwrap_or(0);
            (total - idle, total)
        })
        .collect()
}

/// The signal used to interrupt KVM_RUN (its handler does nothing; KVM_RUN returns EINTR).
pub fn kick_signal() -> libc::c_int {
    libc::SIGRTMIN() + 3
}

extern "C" fn noop_handler(_: libc::c_int, _: *mut libc::siginfo_t, _: *mut libc::c_void) {}

/// Installs the no-op handler for [`kick_signal`] once per process.
pub fn install_kick_handler() {
    static DONE: AtomicBool = AtomicBool::new(false);
    if DONE.swap(true, Ordering::SeqCst) {
        return;
    }
    let _ = vmm_sys_util::signal::register_signal_handler(kick_signal(), noop_handler);
}

/// Sends the kick signal to a thread.
pub fn signal_thread(tid: libc::pthread_t) {
    // SAFETY: `tid` is a live thread of this process (the caller joins it only after stopping);
    // the signal's handler is installed and does nothing.
    unsafe { libc::pthread_kill(tid, kick_signal()) };
}

/// Kernel thread id of the calling thread.
pub fn gettid() -> i32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() }
}

/// CPU time (ns) a thread of this process has run so far, from /proc/self/task/TID/schedstat;
/// readable from any thread at any moment.
pub fn task_cpu_ns(tid: i32) -> u64 {
    std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat"))
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|v| v.parse().ok()))
        .unwrap_or(0)
}

/// Monotonic nanoseconds on the TSC (policy state machines take `now_ns`).
#[inline]
pub fn now_ns() -> u64 {
    tsc_to_ns(rdtsc()) as u64
}

/// Makes this thread's timed sleeps as long as asked: timer slack 1 ns instead of Linux's
/// default 50 µs for a normal thread (prctl(2) PR_SET_TIMERSLACK). ES2's joint thread sleeps
/// 10 µs (§5.2); with the default slack a 10 µs `nanosleep` lasts ~96 µs on this host, ~24 µs
/// with 1 ns (the rest is the hrtimer wake-up, which the simulator's twin charges as
/// `host.thread_wakeup_ns`). Best effort: a refusal leaves the default.
pub fn exact_timed_sleeps() {
    // SAFETY: PR_SET_TIMERSLACK takes an integer and changes only the calling thread's timer
    // slack; no memory is passed.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
}
