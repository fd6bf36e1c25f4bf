//! `cargo run --release -p eventpath-kvm --example probe -- OUT_DIR [--quick]`
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let out = a.get(1).map(String::as_str).unwrap_or("out/probe");
    match eventpath_kvm::probe::probe(out, a.iter().any(|x| x == "--quick")) {
        Ok(t) => println!("{t}"),
        Err(e) => println!("ERROR {e}"),
    }
}
