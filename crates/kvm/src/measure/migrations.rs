//! Thread migrations on this host: how often the kernel moved each vCPU and back-end thread to
//! another CPU, beside the simulator's `host.migrations_per_s` (issue 28, item 7).
//!
//! The count is the kernel's own: `se.nr_migrations` in `/proc/<pid>/task/<tid>/sched`, which
//! `set_task_cpu()` increments whenever a task's CPU changes (`kernel/sched/core.c`) — wake-up
//! placement (`select_task_rq`) and load balancing alike, the causes the simulator counts. The
//! file exists with `CONFIG_SCHED_DEBUG` (the kernels of this project's machines have it; Linux
//! 6.x `kernel/sched/debug.c`, `proc_sched_show_task`). Without it the count is not measured
//! (null): sampling the `processor` field of `/proc/.../stat` instead would miss every move
//! between two samples, and KVM-NOTES.md found that field stuck at 0 on this host.

/// The kernel's migration count of thread `tid` of this process, or None when the file or its
/// field cannot be read (no `CONFIG_SCHED_DEBUG`, a thread not started yet or gone).
pub fn task_migrations(tid: i32) -> Option<u64> {
    if tid <= 0 {
        return None;
    }
    parse_nr_migrations(&std::fs::read_to_string(format!("/proc/self/task/{tid}/sched")).ok()?)
}

/// `se.nr_migrations` from the text of a `/proc/.../sched` file (`se.nr_migrations   :   12`).
pub fn parse_nr_migrations(text: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (key, value) = l.split_once(':')?;
        (key.trim() == "se.nr_migrations").then(|| value.trim().parse().ok()).flatten()
    })
}

/// Migrations per second of each thread over a window: `(name, count at start, count at end)`
/// to `(name, per second)`, None where either count is missing.
pub fn rates(a: &[(String, Option<u64>)], b: &[(String, Option<u64>)], secs: f64) -> Vec<(String, Option<f64>)> {
    a.iter()
        .zip(b)
        .map(|((name, x), (_, y))| (name.clone(), x.zip(*y).filter(|_| secs > 0.0).map(|(x, y)| y.saturating_sub(x) as f64 / secs)))
        .collect()
}

/// The host's total, as the simulator's `host.migrations_per_s`: None unless every thread's
/// rate was measured.
pub fn total(rates: &[(String, Option<f64>)]) -> Option<f64> {
    if rates.is_empty() {
        return None;
    }
    rates.iter().map(|(_, r)| *r).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_nr_migrations_from_a_sched_file() {
        let text = "head (23374, #threads: 1)\n----\nse.exec_start   :   12413411.157462\nse.nr_migrations                             :                   17\nnr_switches : 1\n";
        assert_eq!(parse_nr_migrations(text), Some(17));
        assert_eq!(parse_nr_migrations("se.exec_start : 1.0\n"), None);
    }

    #[test]
    fn this_threads_count_is_readable_here() {
        // The machines of this project run kernels with CONFIG_SCHED_DEBUG (KVM-NOTES.md's kind).
        if std::path::Path::new("/proc/self/sched").exists() {
            assert!(task_migrations(crate::vmm::sys::gettid()).is_some());
        }
        assert_eq!(task_migrations(0), None);
    }

    #[test]
    fn rates_and_total() {
        let a = vec![("vcpu:vm0/0".to_string(), Some(10)), ("io0".to_string(), Some(0))];
        let b = vec![("vcpu:vm0/0".to_string(), Some(30)), ("io0".to_string(), Some(5))];
        let r = rates(&a, &b, 0.5);
        assert_eq!(r, vec![("vcpu:vm0/0".to_string(), Some(40.0)), ("io0".to_string(), Some(10.0))]);
        assert_eq!(total(&r), Some(50.0));
        let missing = rates(&a, &[("vcpu:vm0/0".into(), None), ("io0".into(), Some(5))], 0.5);
        assert_eq!(total(&missing), None);
    }
}
