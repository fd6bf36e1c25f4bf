//! The long layout fuzzer (issue 9): `cargo run --release -p eventpath-sim --example
//! fuzz_layouts -- [CASES] [FIRST_CASE] [THREADS]` (defaults 10000, 0, all cores). Prints
//! progress, each failure's scenario, and a final tally; exits 1 if any case failed.

use eventpath_sim::fuzz::{run_case, Outcome};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

fn main() {
    let arg = |i: usize, d: u64| std::env::args().nth(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
    let (cases, first, threads) = (arg(1, 10_000), arg(2, 0), arg(3, cores));
    std::panic::set_hook(Box::new(|_| {})); // panics are reported as failures below
    let next = AtomicU64::new(first);
    let (ok, rejected, done) = (AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0));
    let failures = Mutex::new(Vec::new());
    let t0 = std::time::Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let case = next.fetch_add(1, Ordering::Relaxed);
                if case >= first + cases {
                    break;
                }
                match run_case(case) {
                    Ok(Outcome::Ok) => ok.fetch_add(1, Ordering::Relaxed),
                    Ok(Outcome::Rejected(_)) => rejected.fetch_add(1, Ordering::Relaxed),
                    Err(f) => {
                        eprintln!("case {case} FAILED: {}\n{}", f.what, f.scenario);
                        failures.lock().expect("lock").push(case);
                        0
                    }
                };
                let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                if n % 100 == 0 {
                    eprintln!("{n}/{cases} cases, {:.0} s", t0.elapsed().as_secs_f64());
                }
            });
        }
    });
    let f = failures.into_inner().expect("lock");
    println!(
        "{} cases from {first}: {} ran clean, {} rejected as bad input, {} failed {:?} ({:.0} s)",
        cases,
        ok.into_inner(),
        rejected.into_inner(),
        f.len(),
        f,
        t0.elapsed().as_secs_f64()
    );
    std::process::exit(if f.is_empty() { 0 } else { 1 });
}
