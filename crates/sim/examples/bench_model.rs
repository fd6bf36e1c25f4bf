//! Developer tool: the full-model benchmark (`eventpath bench`'s model part: 14 VMs streaming
//! TCP on the elvis profile) without Python.
//! `cargo run --release -p eventpath-sim --example bench_model -- [SIM_SECONDS] [REPEATS]`

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let secs: f64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(0.2);
    let repeats: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    for _ in 0..repeats {
        let (events, wall) = eventpath_sim::bench::run_model(14, secs).expect("the bench scenario checks");
        println!("{events} events in {wall:.3} s: {:.3} M events/s", events as f64 / wall / 1e6);
    }
}
