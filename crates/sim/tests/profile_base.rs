//! A profile file with `base = "..."`: a host's own values over a built-in profile (issue 50
//! item 4; `profile/base.rs`).

use eventpath_sim::profile::Profile;
use std::path::PathBuf;

/// A fresh directory of this test process for profile files.
fn dir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ep-profile-base-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

const EOI: &str = "eoi_ns = { value = 900, unit = \"ns\", range = { min = 800, max = 1000, why = \"5 trials' spread\" }, source = \"perf kvm stat on host-17\" }";

fn error(text: &str, test: &str) -> String {
    let path = dir(test).join("host.toml");
    std::fs::write(&path, text).unwrap();
    let e = Profile::load(path.to_str().unwrap()).unwrap_err().to_string();
    assert!(!e.contains('\n'), "{e}");
    e
}

#[test]
fn an_overlay_takes_the_bases_values_and_says_where_each_of_its_own_came_from() {
    let path = dir("overlay").join("host.toml");
    std::fs::write(&path, format!("base = \"modern\"\nname = \"my-host\"\n\n[exit]\n{EOI}\n\n[cpu]\ncores_per_socket = {{ value = 32, unit = \"count\", exact = \"a count of the host\", source = \"lscpu\" }}\n")).unwrap();
    let p = Profile::load(path.to_str().unwrap()).unwrap();
    let modern = Profile::load("modern").unwrap();
    assert_eq!(p.name, "my-host");
    assert_eq!((p.exit.eoi_ns.value, p.cpu.cores_per_socket.value), (900.0, 32.0));
    assert_eq!(p.exit.eoi_ns.source, "host.toml (over modern): perf kvm stat on host-17");
    // Everything else is the base's, sources included.
    assert_eq!(p.exit.io_instruction_ns.value, modern.exit.io_instruction_ns.value);
    assert_eq!(p.exit.io_instruction_ns.source, modern.exit.io_instruction_ns.source);
    assert_eq!(p.cpu.sockets.value, modern.cpu.sockets.value);
    assert!(p.description.starts_with(&modern.description) && p.description.contains("host.toml"), "{}", p.description);
}

#[test]
fn a_relative_base_is_read_beside_the_file_and_bases_chain() {
    let d = dir("chain");
    std::fs::write(d.join("site.toml"), format!("base = \"modern\"\n[exit]\n{EOI}\n")).unwrap();
    std::fs::write(d.join("rack.toml"), "base = \"site.toml\"\n[exit]\nhlt_ns = { value = 2000, unit = \"ns\", range = { min = 1500, max = 2500, why = \"spread\" }, source = \"rack probe\" }\n").unwrap();
    let p = Profile::load(d.join("rack.toml").to_str().unwrap()).unwrap();
    assert_eq!((p.exit.eoi_ns.value, p.exit.hlt_ns.value), (900.0, 2000.0));
    assert_eq!(p.exit.eoi_ns.source, "site.toml (over modern): perf kvm stat on host-17");
    assert!(p.exit.hlt_ns.source.starts_with("rack.toml (over modern+site): rack probe"), "{}", p.exit.hlt_ns.source);
}

#[test]
fn a_base_that_cannot_be_had_is_refused_naming_it() {
    let e = error("base = \"moden\"\n", "unknown");
    assert!(e.contains("key `base`: \"moden\": no such built-in profile") && e.contains("modern"), "{e}");
    let e = error("base = 3\n", "number");
    assert!(e.contains("key `base`: expected a string"), "{e}");
    let e = error("base = \"nowhere/x.toml\"\n", "missing");
    assert!(e.contains("nowhere/x.toml: cannot read file"), "{e}");
    let e = error("base = \"host.toml\"\n", "cycle");
    assert!(e.contains("bases nest deeper than 4"), "{e}");
}

#[test]
fn an_overlays_values_are_checked_as_any_profiles() {
    let e = error("base = \"modern\"\n[exit]\neoi_nss = { value = 900, unit = \"ns\", exact = \"x\", source = \"y\" }\n", "typo");
    assert!(e.contains("eoi_nss"), "{e}");
    let e = error("base = \"modern\"\n[exit]\neoi_ns = { value = -5, unit = \"ns\", source = \"y\" }\n", "negative");
    assert!(e.contains("exit.eoi_ns"), "{e}");
    let e = error("base = \"modern\"\n[exit]\neoi_ns = { value = 900, unit = \"ns\", exact = \"measured\" }\n", "nosource");
    assert!(e.contains("source"), "{e}");
}
