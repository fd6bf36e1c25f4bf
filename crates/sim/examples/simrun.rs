//! Developer tool: run a scenario file and print summary.json (no Python needed).
//! `cargo run --release -p eventpath-sim --example simrun -- FILE [SEED] [DURATION_S]`

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: simrun FILE [SEED] [DURATION_S]");
        std::process::exit(2);
    };
    let opts = eventpath_sim::RunOptions {
        seed: args.get(2).and_then(|s| s.parse().ok()),
        duration_s: args.get(3).and_then(|s| s.parse().ok()),
    };
    match eventpath_sim::run_scenario(path, &opts) {
        Ok(o) => println!("{}", serde_json::to_string_pretty(&o.summary).expect("summary serializes")),
        Err(e) => {
            eprintln!("simrun: {e}");
            std::process::exit(2);
        }
    }
}
