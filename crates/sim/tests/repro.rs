//! The scenarios in `tests/repro/` (copies of `shared/repro/`: layouts that once panicked or
//! stalled a stream) run to their end on seeds 1-6 with no stalled flow.

use eventpath_sim::run::{run_scenario, RunOptions};

fn run_all(seeds: std::ops::RangeInclusive<u64>, duration_s: Option<f64>) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/repro");
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "toml") {
            continue;
        }
        for seed in seeds.clone() {
            let o = run_scenario(p.to_str().unwrap(), &RunOptions { seed: Some(seed), duration_s })
                .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            assert!(o.summary.stalled_flows.is_empty(), "{} seed {seed}: {:?}", p.display(), o.summary.stalled_flows);
        }
        n += 1;
    }
    assert!(n >= 5);
}

#[test]
fn repro_scenarios_run_on_seeds_1_to_6() {
    run_all(1..=6, Some(0.05));
}

/// The scenarios at their full length (slow in debug builds: `cargo test --release -- --ignored`).
#[test]
#[ignore]
fn repro_scenarios_full_length() {
    run_all(1..=6, None);
}
