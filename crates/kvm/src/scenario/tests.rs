//! Parser tests: one line per error, naming the key, the value and what is allowed (no KVM needed).
use super::*;

const OK: &str = r#"
name = "t"
[[vm]]
name = "a"
[[vm.load]]
pattern = "stream"
rate = 1000
"#;

#[test]
fn minimal_scenario_parses_with_defaults() {
    let s = Scenario::parse(OK).unwrap();
    assert_eq!(s.host.io.handling, Handling::Vhost);
    assert_eq!(s.backend.threads, "shared");
    assert_eq!(s.vm[0].queue_size, 256);
}

#[test]
fn errors_name_key_value_and_what_is_allowed() {
    let e = Scenario::parse(&OK.replace("rate = 1000", "rate = 0")).unwrap_err().to_string();
    assert_eq!(e, "vm[0].load[0].rate = 0: must be in 1..=100000000");
    let e = Scenario::parse(&OK.replace("rate = 1000", "rate = 1000\nbogus = 1")).unwrap_err().to_string();
    assert!(e.contains("unknown field `bogus`"), "{e}");
    let e = Scenario::parse(&OK.replace("pattern = \"stream\"", "pattern = \"wave\"")).unwrap_err().to_string();
    assert!(e.contains("vm[0].load[0].pattern = \"wave\": allowed: stream"), "{e}");
    let e = Scenario::parse(&OK.replace("name = \"a\"", "name = \"a\"\npin = [4096]")).unwrap_err().to_string();
    assert!(e.contains("vm[0].pin"), "{e}");
    let e = Scenario::parse(&OK.replace("rate = 1000", "rate = \"fast\"")).unwrap_err().to_string();
    assert!(e.contains("rate"), "{e}");
    let e = Scenario::parse(&format!("{OK}\n[moderation]\nkind = \"fir\"\nitr = 0\n")).unwrap_err().to_string();
    assert!(e.contains("fir.itr = 0"), "{e}");
}

#[test]
fn routing_accepts_the_documented_spelling() {
    for (name, want) in [("h_balance", RouterConfig::HBalance), ("hbalance", RouterConfig::HBalance), ("es2", RouterConfig::Es2)] {
        let s = Scenario::parse(&format!("routing = \"{name}\"\n{OK}")).unwrap();
        assert_eq!(s.routing, want);
    }
    let e = Scenario::parse(&format!("routing = \"round_robin\"\n{OK}")).unwrap_err().to_string();
    assert!(e.contains("round_robin") && e.contains("h_balance"), "{e}");
    // vBalance is a Xen PV guest's own rebinding: refused here, never run as running-first.
    let e = Scenario::parse(&format!("routing = \"v_balance\"\n{OK}")).unwrap_err().to_string();
    assert!(e.starts_with("routing: \"v_balance\"") && !e.contains('\n'), "{e}");
}

#[test]
fn parse_errors_are_one_line_with_the_line_number() {
    let sim = "name = \"x\"\nprofile = \"es2\"\n[[vm]]\nname = \"a\"\n";
    let e = Scenario::parse(sim).unwrap_err().to_string();
    assert!(!e.contains('\n') && e.contains("line 2") && e.contains("unknown field `profile`"), "{e}");
    assert!(e.contains("eventpath run"), "{e}");
    for garbage in ["**not toml** at all\n", "\u{0}\u{1}\u{2}", "name = \"x\"\n[[vm]]\nname = 3\n"] {
        let e = Scenario::parse(garbage).unwrap_err().to_string();
        assert!(!e.contains('\n') && e.contains("line "), "{e:?}");
    }
}

/// `[host.io]` is the simulator's `IoHandling`: the same keys, defaults and checks.
#[test]
fn host_io_is_the_simulators_table() {
    let t = format!("{OK}\n[host.io]\nhandling = \"elvis\"\ncores = [0]\nmax_work = 32\n");
    let s = Scenario::parse(&t).unwrap();
    assert_eq!((s.host.io.elvis().max_work, s.host.io.elvis().min_work), (32, 8));
    assert_eq!(s.backend_cpus(), vec![0]);
    let e = Scenario::parse(&t.replace("max_work = 32", "max_work = 4\nmin_work = 5")).unwrap_err().to_string();
    assert!(e.contains("key `host.io.min_work`: 5 is not allowed: must not exceed host.io.max_work (4)"), "{e}");
    let e = Scenario::parse(&t.replace("max_work = 32", "max_wrk = 4")).unwrap_err().to_string();
    assert!(e.contains("unknown field `max_wrk`"), "{e}");
    let e = Scenario::parse(&t.replace("\"elvis\"", "\"dpdk\"")).unwrap_err().to_string();
    assert!(e.contains("dpdk") && e.contains("pmd") && !e.contains('\n'), "{e}");
    // ES2 and the PMD: the policies' configurations, defaults where unset.
    let s = Scenario::parse(&format!("{OK}\n[host.io]\nhandling = \"es2\"\nswitch = \"optimistic\"\npoll_count = 50\nsleep_us = 20\n")).unwrap();
    let (switch, _, o, j) = s.host.io.es2();
    assert_eq!((switch, o.max_poll_count, j.sleep_ns), (Es2Switch::Optimistic, 50, 20_000));
    assert!(s.backend_cpus().is_empty(), "es2 without cores: unpinned");
    let s = Scenario::parse(&format!("{OK}\n[host.io]\nhandling = \"pmd\"\ncores = [0]\nidle = \"sleep\"\nmax_sleep_us = 100\n")).unwrap();
    let pmd = s.host.io.pmd();
    assert_eq!((pmd.burst, pmd.idle, pmd.max_sleep_us), (32, eventpath_policy::pmd::PmdIdle::Sleep, 100));
    let s = Scenario::parse(&format!("{OK}\n[backend]\npin = [0]\nbusyloop_us = 50\n")).unwrap();
    assert_eq!((s.backend_cpus(), s.vhost_config().busyloop_timeout_us), (vec![0], 50));
}

#[test]
fn dim_moderation_kind_is_parsed_and_validated() {
    let t = format!("{OK}\n[moderation]\nkind = \"dim\"\nprofiles = \"rx_cqe\"\n");
    let s = Scenario::parse(&t).unwrap();
    assert!(matches!(s.moderation, ModerationConfig::Dim(ref c) if c.profiles == "rx_cqe" && c.start_ix == 1));
    let e = Scenario::parse(&t.replace("rx_cqe", "rx")).unwrap_err().to_string();
    assert!(e.contains("dim.profiles = \"rx\": allowed: rx_eqe, rx_cqe, tx_eqe, tx_cqe"), "{e}");
    let e = Scenario::parse(&format!("{t}start_ix = 7\n")).unwrap_err().to_string();
    assert!(e.contains("dim.start_ix = 7: must be in 0..=4"), "{e}");
    let e = Scenario::parse(&format!("{t}itr = 7\n")).unwrap_err().to_string();
    assert!(e.contains("unknown field `itr`"), "{e}");
    let e = Scenario::parse(&t.replace("\"dim\"", "\"napi\"")).unwrap_err().to_string();
    assert!(e.contains("moderation.kind = \"napi\": allowed: none, fir, cgr, air, dim"), "{e}");
    let s = Scenario::parse(&format!("{OK}\n[moderation]\nkind = \"fir\"\nitr = 2000\n")).unwrap();
    assert!(matches!(s.moderation, ModerationConfig::Fir(ref c) if c.itr == 2000));
}

#[test]
fn load_steps_are_validated() {
    let t = OK.replace("rate = 1000", "rate = 1000\nsteps = [{at_s = 0.1, rate = 5000}, {at_s = 0.3, rate = 100}]");
    let s = Scenario::parse(&t).unwrap();
    assert_eq!(s.vm[0].load[0].steps.len(), 2);
    let e = Scenario::parse(&t.replace("at_s = 0.3", "at_s = 0.05")).unwrap_err().to_string();
    assert_eq!(e, "vm[0].load[0].steps[1].at_s = 0.05: must be after the previous step's at_s (0.1)");
    let e = Scenario::parse(&t.replace("at_s = 0.3", "at_s = 0.5")).unwrap_err().to_string();
    assert_eq!(e, "vm[0].load[0].steps[1].at_s = 0.5: must be in 0..duration_s (0.5)");
    let e = Scenario::parse(&t.replace("rate = 5000", "rate = 0")).unwrap_err().to_string();
    assert_eq!(e, "vm[0].load[0].steps[0].rate = 0: must be in 1..=100000000");
    let e = Scenario::parse(&t.replace("rate = 5000", "rate = 5000, when = 1")).unwrap_err().to_string();
    assert!(e.contains("unknown field `when`"), "{e}");
    let e = Scenario::parse(&t.replace("pattern = \"stream\"", "pattern = \"closed\"")).unwrap_err().to_string();
    assert!(e.contains("vm[0].load[0].steps = 2 step(s): only a \"stream\" load has steps"), "{e}");
}

/// Issue 26: values the testbed used to accept silently are refused, each with one line.
#[test]
fn silently_accepted_values_are_refused_with_one_line() {
    let err = |text: &str| -> String {
        let e = Scenario::parse(text).unwrap_err().to_string();
        assert!(!e.contains('\n'), "{e:?}");
        e
    };
    let two = format!("{OK}[[vm]]\nname = \"b\"\n");
    // A table before the first [[vm]] (after the top-level keys).
    let with = |table: &str| OK.replacen("[[vm]]", &format!("{table}\n[[vm]]"), 1);
    let cases: Vec<(String, &str)> = vec![
        // The simulator's name rule (eventpath_sim::scenario::limits::check_name).
        (OK.replace("name = \"a\"", "name = \"\""), "vm[0].name: \"\" is not allowed; expected a name of 1..=64 characters"),
        (OK.replace("name = \"a\"", &format!("name = \"{}\"", "x".repeat(65))), "vm[0].name: \"xxxxxxxxxxxxxxxx…\" (65 characters) is not allowed; expected at most 64 characters"),
        (OK.replace("name = \"t\"", "name = \"\""), "name: \"\" is not allowed; expected a name of 1..=64 characters"),
        (two.replace("name = \"b\"", "name = \"a\""), "vm[1].name = \"a\": vm[0] has that name; VM names must be unique"),
        (format!("duration_s = 0\n{OK}"), "duration_s = 0: must be in 0.05..=600"),
        (format!("duration_s = -1\n{OK}"), "duration_s = -1: must be in 0.05..=600"),
        (format!("duration_s = nan\n{OK}"), "duration_s = NaN: must be in 0.05..=600"),
        (format!("warmup_s = -0.1\n{OK}"), "warmup_s = -0.1: must be in 0..=60"),
        (OK.replace("pattern = \"stream\"\nrate = 1000", "pattern = \"closed\"\nwindow = 0"), "vm[0].load[0].window = 0: must be in 1..=256 (vm.queue_size = 256)"),
        (OK.replace("\"stream\"", "\"streem\""), "vm[0].load[0].pattern = \"streem\": allowed: stream, closed"),
        (OK.replace("name = \"a\"", "name = \"a\"\npin = [4096]"), "vm[0].pin = 4096: not a CPU this process may run on; allowed CPUs: "),
        (with("[backend]\npin = [4096]"), "backend.pin = 4096: not a CPU this process may run on; allowed CPUs: "),
        (with("[irqgen]\ngap_us = 100\npin = 4096"), "irqgen.pin = 4096: not a CPU this process may run on; allowed CPUs: "),
        (with("[backend]\nbusyloop_us = 4000000000"), "backend.busyloop_us = 4000000000: must be in 0..=1000000"),
        // Keys the pattern or the mode never reads.
        (OK.replace("rate = 1000", "rate = 1000\nwindow = 4"), "vm[0].load[0].window = 4: does nothing with pattern = \"stream\" (read by pattern closed); remove it"),
        (OK.replace("rate = 1000", "rate = 1000\nadversary = [\"chain_loop\"]"), "vm[0].load[0].adversary = [\"chain_loop\"]: does nothing with pattern = \"stream\""),
        (with("[host.io]\nquota = 8"), "key `host.io.quota`: only for handling = \"es2\""),
        (with("[backend]\nbusyloop_us = 50\n[host.io]\nhandling = \"pmd\"\ncores = [0]"), "backend.busyloop_us = 50: does nothing with host.io.handling = \"pmd\" (read by host.io.handling vhost); remove it"),
        (with("[backend]\npin = [0]\n[host.io]\nhandling = \"elvis\""), "backend.pin = [0]: does nothing with host.io.handling = \"elvis\" (read by host.io.handling vhost); the es2, elvis and pmd threads run on host.io.cores"),
        (with("[backend]\nmode = \"exit\""), "key `backend.mode`: line 4: unknown field `mode`, expected one of `threads`, `pin`, `service_ns`, `busyloop_us` (the back end is chosen by [host.io] now"),
        // [host.io] in the testbed's words where the simulator's name its own keys.
        (with("[host.io]\ncores = [0]"), "key `host.io.cores`: only for handling = \"es2\", \"elvis\" or \"pmd\"; the testbed pins vhost threads with backend.pin"),
        (with("[host.io]\nhandling = \"pmd\"\ncores = [0]").replace("name = \"a\"", "name = \"a\"\npin = [0]"), "key `host.io.cores[0]`: CPU 0 is an I/O core, but vm[0].pin pins a vCPU to it"),
        (with("[host.io]\nhandling = \"pmd\""), "key `host.io.cores`: a poll-mode back end needs at least one dedicated core"),
        (with("[host.io]\nhandling = \"pmd\"\ncores = [4096]"), "host.io.cores[0] = 4096: not a CPU this process may run on; allowed CPUs: "),
        (with("[host.io]\nhandling = \"pmd\"\ncores = [0]\nmax_sleep_us = 9"), "key `host.io.max_sleep_us`: only for idle = \"sleep\""),
        (with("[host.io]\nhandling = \"es2\"\ncombining_level = 2"), "key `host.io.combining_level`: the testbed does not read it"),
        // Values the guest would silently ignore or hang on.
        (OK.replace("pattern = \"stream\"\nrate = 1000", "pattern = \"adversary\"\nadversary = []"), "vm[0].load[0].adversary = []: give at least one of head_out_of_range"),
        (OK.replace("pattern = \"stream\"\nrate = 1000", "pattern = \"closed\"\nhalt_when_idle = true"), "vm[0].load[0].halt_when_idle = true: a closed loop halts only with consume = \"irq\""),
    ];
    for (text, want) in cases {
        let e = err(&text);
        assert!(e.starts_with(want), "got {e:?}\nwant {want:?}");
    }
    // The same keys where they are read are accepted.
    Scenario::parse(&OK.replace("pattern = \"stream\"\nrate = 1000", "pattern = \"closed\"\nwindow = 4\nconsume = \"irq\"\nhalt_when_idle = true")).unwrap();
    Scenario::parse(&with("[host.io]\nhandling = \"es2\"\nquota = 8")).unwrap();
    Scenario::parse(&with("[backend]\nbusyloop_us = 50")).unwrap();
    Scenario::parse(&with("[host.io]\nhandling = \"pmd\"\ncores = [0]\nidle = \"monitor\"\nempty_polls = 8")).unwrap();
    Scenario::parse(&two).unwrap();
    // Issue 45 (kvm-queue-size-2-unread-burst): a key the pattern never reads is not held to
    // the ring, so a 2-entry ring runs a stream; a burst that does not fit is refused naming it.
    let small = OK.replace("name = \"a\"", "name = \"a\"\nqueue_size = 2");
    Scenario::parse(&small).unwrap();
    let e = err(&small.replace("pattern = \"stream\"\nrate = 1000", "pattern = \"burst\""));
    assert!(e.starts_with("vm[0].load[0].burst = 8: must be in 1..=2 (vm.queue_size = 2)"), "{e}");
    Scenario::parse(&small.replace("pattern = \"stream\"\nrate = 1000", "pattern = \"burst\"\nburst = 2")).unwrap();
}

/// Issue 45 (kvm-cpu-numbering-under-taskset): pins are CPU ids of the affinity mask, not
/// 0..count. A thread narrowed to the last allowed CPU (as `taskset -c N` narrows a process)
/// may pin there, and is refused CPU 0 when 0 is outside its mask.
#[test]
fn pins_are_checked_against_the_allowed_cpu_ids() {
    use crate::vmm::sys;
    assert_eq!(sys::cpu_list(&[0, 1, 2, 3]), "0-3");
    assert_eq!(sys::cpu_list(&[1]), "1");
    assert_eq!(sys::cpu_list(&[2, 5, 6, 7, 9]), "2,5-7,9");
    let last = *sys::allowed_cpus().last().unwrap();
    std::thread::spawn(move || {
        sys::pin_current(last).unwrap();
        assert_eq!(sys::allowed_cpus(), vec![last]);
        let pinned = |c: usize| Scenario::parse(&OK.replace("name = \"a\"", &format!("name = \"a\"\npin = [{c}]")));
        pinned(last).unwrap();
        if last != 0 {
            let e = pinned(0).unwrap_err().to_string();
            assert_eq!(e, format!("vm[0].pin = 0: not a CPU this process may run on; allowed CPUs: {last}"));
        }
    })
    .join()
    .unwrap();
}
