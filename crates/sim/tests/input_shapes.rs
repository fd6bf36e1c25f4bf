//! Issue 26, input side: a value of the wrong shape gets one line naming the key, the value and
//! what is allowed. Tables are tables (never an array read positionally), named choices are
//! strings from their list, numbers too large for TOML name their key, and messages show
//! numbers short and say "is not allowed: must ..." in one grammar.
//!
//! The reproducers of the reliability run are copied into `tests/reliability/`.

use eventpath_sim::profile::{Profile, BUILTIN};
use eventpath_sim::run::{run_parsed, RunOptions};
use eventpath_sim::scenario::Scenario;

const BASE: &str = "name = \"t\"\nprofile = \"es2\"\nduration_s = 0.01\nwarmup_s = 0.001\n";
const VM: &str = "[[vm]]\nname = \"vm0\"\nvcpus = 2\n";

/// The one-line error of scenario `text` (parse and check).
fn error_of(text: &str) -> String {
    let r = Scenario::from_toml("t.toml", text).and_then(|s| run_parsed(s, "t.toml", &RunOptions { duration_s: Some(0.001), ..Default::default() }));
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
    has(&error_of(&reproducer("host-as-array-accepted.toml")), &["key `host`", "expected a table", "found an array"]);
    // vm = [["vm0", 2]] leaked "invalid length 2, expected struct Vm with 10 elements".
    let m = error_of(&reproducer("vm-as-positional-array.toml"));
    has(&m, &["key `vm[0]`", "expected a table", "found an array"]);
    assert!(!m.contains("struct Vm"), "{m}");
    // Every other table of a scenario, too.
    for (at, text) in [
        ("client", format!("{BASE}client = [2]\n{VM}")),
        ("host.io", format!("{BASE}[host]\nio = [\"es2\"]\n{VM}")),
        ("host.cpu_hog[0]", format!("{BASE}[host]\ncpu_hog = [[19]]\n{VM}")),
        ("vm[0].net", format!("{BASE}{VM}net = [\"virtio\", 256]\n")),
        ("vm[0].net.moderation", format!("{BASE}{VM}[vm.net]\nmoderation = [\"fir\", 8000]\n")),
        ("vm[0].halt_poll", format!("{BASE}{VM}halt_poll = [200000]\n")),
        ("vm[0].workload", format!("{BASE}{VM}workload = [\"udp_stream\", 512]\n")),
        ("profile_overrides", format!("{BASE}profile_overrides = [1]\n{VM}")),
    ] {
        has(&error_of(&text), &[&format!("key `{at}`"), "expected a table", "found an array"]);
    }
    // One [vm] table where an array of tables belongs.
    has(&error_of(&format!("{BASE}[vm]\nname = \"vm0\"\nvcpus = 1\n")), &["key `vm`", "array of tables", "[[section]]"]);
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
    has(&error_of(&reproducer("msg-wanted-string-or-table.toml")), &["key `vm[0].interrupt_delivery`", "5 is not allowed", "`emulated`", "`posted`", "`did`"]);
    for (at, text, name) in [
        ("host.io.handling", format!("{BASE}[host.io]\nhandling = 5\n{VM}"), "`elvis`"),
        ("host.io.switch", format!("{BASE}[host.io]\nhandling = \"es2\"\nswitch = 1.5\n{VM}"), "`optimistic`"),
        ("host.virtualization", format!("{BASE}[host]\nvirtualization = true\n{VM}"), "`bare_metal`"),
        ("host.idle", format!("{BASE}[host]\nidle = 0\n{VM}"), "`menu`"),
        ("vm[0].interrupt_routing", format!("{BASE}{VM}interrupt_routing = 5\n"), "`h_balance`"),
        ("vm[0].guest_idle", format!("{BASE}{VM}guest_idle = [1]\n"), "`poll`"),
        ("vm[0].net.kind", format!("{BASE}{VM}[vm.net]\nkind = 5\n"), "`sriov_vf`"),
        ("vm[0].workload", format!("{BASE}{VM}[vm.workload]\nkind = \"http\"\nconcurrency = 1\nfile_bytes = 1\nserver = 5\n"), "`nginx`"),
    ] {
        let m = error_of(&text);
        has(&m, &[&format!("key `{at}`"), "is not allowed; expected", name]);
        assert!(!m.contains("wanted string or table"), "{m}");
    }
}

#[test]
fn a_number_too_large_for_toml_names_its_key_and_range() {
    let m = error_of(&reproducer("msg-number-too-large-no-key.toml"));
    has(&m, &["key `vm[0].net.moderation`", "`start_ix`", "9223372036854775808 is not allowed", "0..=9223372036854775807"]);
    let m = error_of(&format!("{BASE}{VM}[vm.net.moderation]\nkind = \"air\"\ninterval_ns = 18446744073709551615\n"));
    has(&m, &["`interval_ns` (kind \"air\")", "18446744073709551615 is not allowed"]);
    // A typed key: its type's range; one inside TOML's range but outside the key's, too.
    has(&error_of(&format!("{BASE}[[vm]]\nname = \"vm0\"\nvcpus = 18446744073709551615\n")), &["key `vm[0].vcpus`", "18446744073709551615 is not allowed", "0..=4294967295"]);
    has(&error_of(&format!("{BASE}[[vm]]\nname = \"vm0\"\nvcpus = 4294967296\n")), &["key `vm[0].vcpus`", "4294967296", "a whole number in 0..=4294967295"]);
    // A profile override (any number): the key as written and TOML's bound.
    let m = error_of(&format!("{BASE}{VM}[profile_overrides.exit]\neoi_ns = -99999999999999999999\n"));
    has(&m, &["key `profile_overrides.exit.eoi_ns`", "-99999999999999999999 is not allowed", "TOML integers"]);
}

#[test]
fn numbers_in_messages_are_short() {
    // 5e-324 was printed with 324 digits.
    let m = error_of(&reproducer("msg-tiny-float-expanded.toml"));
    has(&m, &["key `vm[0].vcpus`", "`5e-324`", "a whole number in 0..=4294967295"]);
    assert!(m.len() < 200, "{m}");
}

#[test]
fn range_messages_say_must_not_expected_must() {
    let cases = [
        format!("{BASE}{VM}[vm.net.moderation]\nkind = \"fir\"\nitr = 0\n"),
        format!("{BASE}{VM}[vm.net.moderation]\nkind = \"air\"\nc_cycles_per_s = 0\n"),
        format!("{BASE}{VM}[vm.net.moderation]\nkind = \"cgr\"\nfull_bulk_min_bytes = 100\n"),
        format!("{BASE}{VM}[vm.halt_poll]\ngrow_start = 0\n"),
        format!("{BASE}[host]\npcpus = 4\n[host.io]\nhandling = \"elvis\"\ncores = [3]\nmin_work = 9\nmax_work = 8\n{VM}"),
    ];
    for text in cases {
        let m = error_of(&text);
        has(&m, &["is not allowed: must"]);
        assert!(!m.contains("expected must"), "{m}");
    }
    has(&error_of(&format!("{BASE}{VM}[vm.net.moderation]\nkind = \"air\"\nc_cycles_per_s = 0\n")), &["key `vm[0].net.moderation.c_cycles_per_s`: 0 is not allowed: must be a finite number greater than 0"]);
}

#[test]
fn a_default_that_conflicts_with_a_given_key_says_so() {
    // min_work's default 8 above max_work = 1 named min_work, which the scenario never set.
    let m = error_of(&reproducer("msg-elvis-min-work.toml"));
    has(&m, &["key `host.io.max_work`: 1", "min_work's default 8", "set host.io.min_work to at most 1"]);
    let m = error_of(&format!("{BASE}[host]\npcpus = 4\n[host.io]\nhandling = \"elvis\"\ncores = [3]\nmin_work = 100\n{VM}"));
    has(&m, &["key `host.io.min_work`: 100", "max_work's default 64", "set host.io.max_work to at least 100"]);
}

#[test]
fn moderation_errors_name_the_scheme_key() {
    let m = error_of(&format!("{BASE}{VM}[vm.net.moderation]\nkind = \"fir\"\nitr = \"x\"\n"));
    has(&m, &["key `vm[0].net.moderation`", "`itr` (kind \"fir\")", "a whole number in 0..=4294967295"]);
    has(&error_of(&format!("{BASE}{VM}[vm.net.moderation]\nkind = \"magic\"\n")), &["kind \"magic\" is not allowed", "\"none\", \"fir\", \"cgr\", \"air\", \"dim\""]);
    has(&error_of(&format!("{BASE}{VM}[vm.net.moderation]\nitr = 5\n")), &["missing key `kind`"]);
    has(&error_of(&format!("{BASE}{VM}[vm.net.moderation]\nkind = \"none\"\nitr = 5\n")), &["`itr` (kind \"none\")", "no parameters"]);
    has(&error_of(&format!("{BASE}{VM}[vm.net.moderation]\nkind = \"dim\"\nitr = 5\n")), &["`itr` (kind \"dim\")", "unknown field `itr`", "start_ix"]);
}

#[test]
fn the_c_state_table_is_not_a_number_override() {
    // Said "expected a number in the parameter's unit" for the table.
    has(&error_of(&reproducer("msg-cstates-override.toml")), &["key `profile_overrides.host.cstates", "cannot be overridden in a scenario", "idle = \"poll\""]);
    has(&error_of(&format!("{BASE}{VM}[profile_overrides]\nexit = [1]\n")), &["key `profile_overrides.exit`", "expected a table of the section's parameters"]);
    has(&error_of(&format!("{BASE}{VM}[profile_overrides.exit]\neoi_ns = \"x\"\n")), &["key `profile_overrides.exit.eoi_ns`", "expected a number in the parameter's unit"]);
}

#[test]
fn a_profile_file_refuses_arrays_for_tables() {
    let text = BUILTIN.iter().find(|(n, _)| *n == "es2").unwrap().1;
    let from = "ghz = { value = 2.3, unit = \"GHz\", source = \"Intel ark: E5-4610 v2 base clock\" }";
    assert!(text.contains(from), "test bug");
    let m = Profile::parse("p.toml", &text.replacen(from, "ghz = [2.3, \"GHz\", \"x\"]", 1)).unwrap_err().to_string();
    has(&m, &["key `cpu.ghz`", "expected a table", "found an array"]);
}
