//! Prints the summary of the scenario in $EVENTPATH_PROBE (a development aid; ignored).
#[test]
#[ignore]
fn print_scenario() {
    let p = std::env::var("EVENTPATH_PROBE").unwrap();
    let out = eventpath_sim::run::run_scenario(&p, &Default::default()).unwrap();
    println!("{}", serde_json::to_string_pretty(&out.summary).unwrap());
}
