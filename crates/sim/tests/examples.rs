//! Every scenario in examples/ (top level) and in the reproduction set parses, checks and runs.

use eventpath_sim::run::{run_scenario, RunOptions};

fn run_dir(dir: &str) -> usize {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../");
    let mut n = 0;
    for e in std::fs::read_dir(format!("{root}{dir}")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "toml") {
            let o = run_scenario(p.to_str().unwrap(), &RunOptions { duration_s: Some(0.01), ..Default::default() })
                .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            // Every VM did something: exits, or (with exitless delivery or on bare metal)
            // interrupts taken without them — except a VM with no application (it only burns),
            // which, time-sharing its pCPUs in host slices of several ms, may not get one in
            // this 10 ms window.
            assert!(
                o.summary.vms.iter().all(|v| v.exits_total_per_s.unwrap() > 0.0
                    || v.interrupts_per_s.unwrap_or(0.0) > 0.0
                    || v.throughput.pps.is_none()),
                "{}",
                p.display()
            );
            n += 1;
        }
    }
    n
}

#[test]
fn examples_run() {
    assert!(run_dir("examples") >= 3);
}

#[test]
fn reproduction_scenarios_run() {
    assert!(run_dir("python/eventpath/reproduce/scenarios") >= 5);
}
