//! Issue 26, input side: a value of the wrong shape gets one line naming the key, the value and
//! what is allowed. Tables are tables (never an array read positionally), named choices are
//! strings from their list, numbers too large for TOML name their key, and messages show
//! numbers short and say "is not allowed: must ..." in one grammar.
//!
//! The reproducers of the reliability run are copied into `tests/reliability/`.

mod common;

use common::{Sc, Vm};
use eventpath_sim::profile::{Profile, BUILTIN};
use eventpath_sim::run::{run_parsed, RunOptions};
use eventpath_sim::scenario::Scenario;
use std::fmt::Display;

/// The scenario every case breaks: no VM yet.
fn scenario() -> Sc {
    Sc::new("t", "es2").duration(0.01).warmup(0.001)
}

/// The VM every case breaks.
fn vm() -> Vm {
    Vm::new("vm0", 2)
}

/// The one-line error of scenario `text` (parse and check).
fn error_of(text: impl Display) -> String {
    let text = text.to_string();
    let r = Scenario::from_toml("t.toml", &text).and_then(|s| run_parsed(s, "t.toml", &RunOptions { duration_s: Some(0.001), ..Default::default() }));
    let m = r.expect_err("bad input must be rejected").to_string();
    assert!(!m.contains('\n') && m.len() < 400, "one short line: {m:?}");
    m
}

fn reproducer(name: &str) -> String {
    let p = format!("{}/tests/reliability/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

fn has(m: &str, needles: &[&str]) {
    for n in needles {
        assert!(m.contains(n), "{n:?} not in {m:?}");
    }
}

#[test]
fn a_table_given_as_an_array_is_refused() {
    // host = [3] ran as host.pcpus = 3 (serde's struct-from-sequence).
    has(&error_of(reproducer("host-as-array-accepted.toml")), &["key `host`", "expected a table", "found an array"]);
    // vm = [["vm0", 2]] leaked "invalid length 2, expected struct Vm with 10 elements".
    let m = error_of(reproducer("vm-as-positional-array.toml"));
    has(&m, &["key `vm[0]`", "expected a table", "found an array"]);
    assert!(!m.contains("struct Vm"), "{m}");
    // Every other table of a scenario, too.
    for (at, text) in [
        ("client", scenario().lines("client = [2]").vm(vm())),
        ("host.io", scenario().host("io = [\"es2\"]").vm(vm())),
        ("host.cpu_hog[0]", scenario().host("cpu_hog = [[19]]").vm(vm())),
        ("vm[0].net", scenario().vm(vm().lines("net = [\"virtio\", 256]"))),
        ("vm[0].net.moderation", scenario().vm(vm().net("moderation = [\"fir\", 8000]"))),
        ("vm[0].halt_poll", scenario().vm(vm().lines("halt_poll = [200000]"))),
        ("vm[0].workload", scenario().vm(vm().lines("workload = [\"udp_stream\", 512]"))),
        ("profile_overrides", scenario().lines("profile_overrides = [1]").vm(vm())),
    ] {
        has(&error_of(&text), &[&format!("key `{at}`"), "expected a table", "found an array"]);
    }
    // One [vm] table where an array of tables belongs.
    has(&error_of(format!("{}[vm]\nname = \"vm0\"\nvcpus = 1\n", scenario())), &["key `vm`", "array of tables", "[[section]]"]);
}

#[test]
fn a_dict_with_a_list_for_a_table_is_refused() {
    // eventpath.run({... "host": [None]}) ran.
    for host in ["[null]", "[2]"] {
        let json = format!(r#"{{"name": "a", "profile": "es2", "host": {host}, "vm": [{{"name": "vm0", "vcpus": 1}}]}}"#);
        let m = Scenario::from_json("<dict>", &json).unwrap_err().to_string();
        has(&m, &["key `host`", "expected a table", "found an array"]);
    }
}

#[test]
fn a_named_choice_given_a_number_lists_the_names() {
    has(&error_of(reproducer("msg-wanted-string-or-table.toml")), &["key `vm[0].interrupt_delivery`", "5 is not allowed", "`emulated`", "`posted`", "`did`"]);
    for (at, text, name) in [
        ("host.io.handling", scenario().io("handling = 5").vm(vm()), "`elvis`"),
        ("host.io.switch", scenario().io("handling = \"es2\"\nswitch = 1.5").vm(vm()), "`optimistic`"),
        ("host.virtualization", scenario().host("virtualization = true").vm(vm()), "`bare_metal`"),
        ("host.idle", scenario().host("idle = 0").vm(vm()), "`menu`"),
        ("vm[0].interrupt_routing", scenario().vm(vm().lines("interrupt_routing = 5")), "`h_balance`"),
        ("vm[0].guest_idle", scenario().vm(vm().lines("guest_idle = [1]")), "`poll`"),
        ("vm[0].net.kind", scenario().vm(vm().net("kind = 5")), "`sriov_vf`"),
        ("vm[0].workload", scenario().vm(vm().workload("kind = \"http\"\nconcurrency = 1\nfile_bytes = 1\nserver = 5")), "`nginx`"),
    ] {
        let m = error_of(&text);
        has(&m, &[&format!("key `{at}`"), "is not allowed; expected", name]);
        assert!(!m.contains("wanted string or table"), "{m}");
    }
}

#[test]
fn a_number_too_large_for_toml_names_its_key_and_range() {
    let m = error_of(reproducer("msg-number-too-large-no-key.toml"));
    has(&m, &["key `vm[0].net.moderation`", "`start_ix`", "9223372036854775808 is not allowed", "0..=9223372036854775807"]);
    let m = error_of(scenario().vm(vm().moderation("kind = \"air\"\ninterval_ns = 18446744073709551615")));
    has(&m, &["`interval_ns` (kind \"air\")", "18446744073709551615 is not allowed"]);
    // A typed key: its type's range; one inside TOML's range but outside the key's, too.
    has(&error_of(scenario().vm(vm().lines("vcpus = 18446744073709551615"))), &["key `vm[0].vcpus`", "18446744073709551615 is not allowed", "0..=4294967295"]);
    has(&error_of(scenario().vm(vm().lines("vcpus = 4294967296"))), &["key `vm[0].vcpus`", "4294967296", "a whole number in 0..=4294967295"]);
    // A profile override (any number): the key as written and TOML's bound.
    let m = error_of(format!("{}[profile_overrides.exit]\neoi_ns = -99999999999999999999\n", scenario().vm(vm())));
    has(&m, &["key `profile_overrides.exit.eoi_ns`", "-99999999999999999999 is not allowed", "TOML integers"]);
}

#[test]
fn numbers_in_messages_are_short() {
    // 5e-324 was printed with 324 digits.
    let m = error_of(reproducer("msg-tiny-float-expanded.toml"));
    has(&m, &["key `vm[0].vcpus`", "`5e-324`", "a whole number in 0..=4294967295"]);
    assert!(m.len() < 200, "{m}");
}

#[test]
fn range_messages_say_must_not_expected_must() {
    let cases = [
        scenario().vm(vm().moderation("kind = \"fir\"\nitr = 0")),
        scenario().vm(vm().moderation("kind = \"air\"\nc_cycles_per_s = 0")),
        scenario().vm(vm().moderation("kind = \"cgr\"\nfull_bulk_min_bytes = 100")),
        scenario().vm(vm().halt_poll("grow_start = 0")),
        scenario().pcpus(4).io("handling = \"elvis\"\ncores = [3]\nmin_work = 9\nmax_work = 8").vm(vm()),
    ];
    for text in cases {
        let m = error_of(&text);
        has(&m, &["is not allowed: must"]);
        assert!(!m.contains("expected must"), "{m}");
    }
    has(&error_of(scenario().vm(vm().moderation("kind = \"air\"\nc_cycles_per_s = 0"))), &["key `vm[0].net.moderation.c_cycles_per_s`: 0 is not allowed: must be a finite number greater than 0"]);
}

#[test]
fn a_default_that_conflicts_with_a_given_key_says_so() {
    // min_work's default 8 above max_work = 1 named min_work, which the scenario never set.
    let m = error_of(reproducer("msg-elvis-min-work.toml"));
    has(&m, &["key `host.io.max_work`: 1", "min_work's default 8", "set host.io.min_work to at most 1"]);
    let m = error_of(scenario().pcpus(4).io("handling = \"elvis\"\ncores = [3]\nmin_work = 100").vm(vm()));
    has(&m, &["key `host.io.min_work`: 100", "max_work's default 64", "set host.io.max_work to at least 100"]);
}

#[test]
fn moderation_errors_name_the_scheme_key() {
    let moderation = |lines: &str| error_of(scenario().vm(vm().moderation(lines)));
    let m = moderation("kind = \"fir\"\nitr = \"x\"");
    has(&m, &["key `vm[0].net.moderation`", "`itr` (kind \"fir\")", "a whole number in 0..=4294967295"]);
    has(&moderation("kind = \"magic\""), &["kind \"magic\" is not allowed", "\"none\", \"fir\", \"cgr\", \"air\", \"dim\""]);
    has(&moderation("itr = 5"), &["missing key `kind`"]);
    has(&moderation("kind = \"none\"\nitr = 5"), &["`itr` (kind \"none\")", "no parameters"]);
    has(&moderation("kind = \"dim\"\nitr = 5"), &["`itr` (kind \"dim\")", "unknown field `itr`", "start_ix"]);
}

#[test]
fn the_c_state_table_is_not_a_number_override() {
    // Said "expected a number in the parameter's unit" for the table.
    has(&error_of(reproducer("msg-cstates-override.toml")), &["key `profile_overrides.host.cstates", "cannot be overridden in a scenario", "idle = \"poll\""]);
    has(&error_of(format!("{}[profile_overrides]\nexit = [1]\n", scenario().vm(vm()))), &["key `profile_overrides.exit`", "expected a table of the section's parameters"]);
    has(&error_of(scenario().vm(vm()).profile_override("exit.eoi_ns", "x")), &["key `profile_overrides.exit.eoi_ns`", "expected a number in the parameter's unit"]);
}

#[test]
fn a_profile_file_refuses_arrays_for_tables() {
    let text = BUILTIN.iter().find(|(n, _)| *n == "es2").unwrap().1;
    // The whole `ghz = { ... }` line, whatever its range and source say today.
    let from = text.lines().find(|l| l.starts_with("ghz = {")).expect("es2 profile has a ghz line");
    let m = Profile::parse("p.toml", &text.replacen(from, "ghz = [2.3, \"GHz\", \"x\"]", 1)).unwrap_err().to_string();
    has(&m, &["key `cpu.ghz`", "expected a table", "found an array"]);
}
