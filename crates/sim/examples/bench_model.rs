//! Developer tool: `eventpath bench`'s engine and full-model parts without Python — the
//! engine's toy loop (1 simulated second) and the 14-VM host streaming TCP on the elvis profile.
//! `cargo run --release -p eventpath-sim --example bench_model -- [SIM_SECONDS] [REPEATS]`

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let secs: f64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(0.2);
    let repeats: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    for _ in 0..repeats {
        let (events, wall) = eventpath_sim::bench::run(Default::default(), 1_000_000_000, 1);
        println!("engine: {events} events in {wall:.3} s: {:.2} M events/s", events as f64 / wall / 1e6);
        let (events, wall) = eventpath_sim::bench::run_model(14, secs).expect("the bench scenario checks");
        println!(
            "model:  {events} events in {wall:.3} s: {:.3} M events/s, {:.3} s wall per simulated s",
            events as f64 / wall / 1e6,
            wall / secs
        );
    }
}
