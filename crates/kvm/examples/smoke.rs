fn main() {
    let a: Vec<String> = std::env::args().collect();
    match eventpath_kvm::run_scenario(&a[1], &a[2]) {
        Ok(t) => println!("{t}"),
        Err(e) => println!("ERROR {e}"),
    }
}
