//! Bad input: every case gets one clear line naming the key, the value and what is allowed.

mod common;

use common::{Sc, Vm};
use eventpath_sim::run::{run_parsed, RunOptions};
use eventpath_sim::scenario::Scenario;

/// The scenario before its VM.
fn preamble() -> Sc {
    Sc::new("t", "es2").duration(0.01).warmup(0.001)
}

/// A scenario that runs; each case breaks one thing in its text.
fn good() -> Sc {
    preamble().vm(Vm::new("vm0", 1).workload("kind = \"udp_stream\"\nmessage_bytes = 512"))
}

fn error_of(text: &str) -> String {
    let r = Scenario::from_toml("t.toml", text).and_then(|s| run_parsed(s, "t.toml", &RunOptions::default()));
    let msg = r.expect_err("bad input must be rejected").to_string();
    assert!(!msg.contains('\n'), "one line only: {msg:?}");
    msg
}

fn with(from: &str, to: &str) -> String {
    let good = good().toml();
    assert!(good.contains(from), "test bug: {from:?} not in good()");
    good.replacen(from, to, 1)
}

#[test]
fn good_scenario_runs() {
    let s = Scenario::from_toml("t.toml", &good().toml()).unwrap();
    assert!(run_parsed(s, "t.toml", &RunOptions::default()).is_ok());
}

#[test]
fn unknown_key_is_named() {
    let m = error_of(&with("vcpus = 1", "vcpus = 1\nvcpu = 2"));
    assert!(m.contains("unknown field `vcpu`") && m.contains("vcpus"), "{m}");
}

#[test]
fn wrong_type_names_key_and_expectation() {
    let m = error_of(&with("vcpus = 1", "vcpus = \"one\""));
    assert!(m.contains("vm[0].vcpus") || m.contains("line"), "{m}");
    assert!(m.contains("invalid type") && m.contains("\"one\""), "{m}");
}

#[test]
fn zero_and_negative_durations_are_rejected() {
    for d in ["0", "-1.5"] {
        let m = error_of(&with("duration_s = 0.01", &format!("duration_s = {d}")));
        assert!(m.contains("duration_s") && m.contains(d) && m.contains("1e-6..=86400"), "{m}");
    }
    let s = Scenario::from_toml("t.toml", &good().toml()).unwrap();
    let m = run_parsed(s, "t.toml", &RunOptions { duration_s: Some(0.0), ..Default::default() }).unwrap_err().to_string();
    assert!(m.contains("--duration"), "{m}");
}

#[test]
fn unknown_profile_lists_the_known_ones() {
    let m = error_of(&with("profile = \"es2\"", "profile = \"nosuch\""));
    assert!(m.contains("nosuch") && m.contains("es2") && m.contains("elvis"), "{m}");
}

#[test]
fn pin_to_missing_core_is_rejected() {
    let m = error_of(&with("vcpus = 1", "vcpus = 1\nvcpu_pins = [8]"));
    assert!(m.contains("vm[0].vcpu_pins[0]") && m.contains("pCPU 8") && m.contains("0..=7"), "{m}");
    let m = error_of(&with("[vm.workload]", "[vm.net]\nvhost_pin = 99\n[vm.workload]"));
    assert!(m.contains("vm[0].net.vhost_pin") && m.contains("99"), "{m}");
}

#[test]
fn vm_without_vcpus_is_rejected() {
    let m = error_of(&with("vcpus = 1", "vcpus = 0"));
    assert!(m.contains("vm[0].vcpus") && m.contains("at least 1 vCPU"), "{m}");
}

#[test]
fn not_toml_is_rejected_with_a_line_number() {
    let m = error_of("name = \"t\"\nthis is not toml\n");
    assert!(m.contains("line 2"), "{m}");
}

#[test]
fn missing_file_is_named() {
    let m = Scenario::from_file("/nonexistent/x.toml").unwrap_err().to_string();
    assert!(m.contains("/nonexistent/x.toml") && m.contains("no such file"), "{m}");
}

#[test]
fn other_ranges_are_checked() {
    let m = error_of(&with("message_bytes = 512", "message_bytes = 70000"));
    assert!(m.contains("message_bytes") && m.contains("70000"), "{m}");
    let m = error_of(&with("[vm.workload]", "[vm.net]\nqueue_size = 300\n[vm.workload]"));
    assert!(m.contains("queue_size") && m.contains("power of two"), "{m}");
    let m = error_of(&with("kind = \"udp_stream\"", "kind = \"tcp_magic\""));
    assert!(m.contains("tcp_magic") && m.contains("udp_stream"), "{m}");
    let m = error_of(&good().vm(Vm::new("vm0", 1).workload("kind = \"udp_stream\"\nmessage_bytes = 1")).toml());
    assert!(m.contains("used twice"), "{m}");
}

#[test]
fn bad_interrupt_delivery_names_allowed_values() {
    let m = error_of(&with("vcpus = 1", "vcpus = 1\ninterrupt_delivery = \"magic\""));
    assert!(m.contains("interrupt_delivery") && m.contains("magic") && m.contains("emulated") && m.contains("did"), "{m}");
    // ELI bypasses the hypervisor only for an assigned device: on virtio it says which part.
    let m = error_of(&with("vcpus = 1", "vcpus = 1\ninterrupt_delivery = \"eli\""));
    assert!(m.contains("interrupt_delivery") && m.contains("assigned") && m.contains("sriov_vf"), "{m}");
}

#[test]
fn tcp_window_out_of_range() {
    let m = error_of(&with("kind = \"udp_stream\"", "kind = \"tcp_stream\"\nwindow_bytes = 1000"));
    assert!(m.contains("window_bytes") && m.contains("1000") && m.contains("65536"), "{m}");
}

#[test]
fn vhost_sharing_a_vcpu_pcpu_now_runs() {
    let s = Scenario::from_toml("t.toml", &with("vcpus = 1", "vcpus = 1\nvcpu_pins = [0]\n[vm.net]\nvhost_pin = 0")).unwrap();
    assert!(run_parsed(s, "t.toml", &RunOptions::default()).is_ok());
}

const HOG: &str = "[host]\n[[host.cpu_hog]]\nnice = 19\n[[vm]]";

#[test]
fn cpu_hog_nice_out_of_range() {
    let m = error_of(&with("[[vm]]", &HOG.replace("nice = 19", "nice = 20")));
    assert!(m.contains("host.cpu_hog[0].nice") && m.contains("20") && m.contains("-20..=19"), "{m}");
}

#[test]
fn cpu_hog_pin_must_exist() {
    let m = error_of(&with("[[vm]]", &HOG.replace("nice = 19", "pins = [9]")));
    assert!(m.contains("host.cpu_hog[0].pins") && m.contains("pCPU 9") && m.contains("0..=7"), "{m}");
}

#[test]
fn cpu_hog_pins_not_empty() {
    let m = error_of(&with("[[vm]]", &HOG.replace("nice = 19", "pins = []")));
    assert!(m.contains("host.cpu_hog[0].pins") && m.contains("[]") && m.contains("at least one pCPU"), "{m}");
}

#[test]
fn cpu_hog_unknown_key_is_named() {
    let m = error_of(&with("[[vm]]", &HOG.replace("nice = 19", "priority = 1")));
    assert!(m.contains("unknown field `priority`") && m.contains("nice") && m.contains("pins"), "{m}");
}

#[test]
fn udp_receive_needs_a_positive_rate() {
    let m = error_of(&with("kind = \"udp_stream\"", "kind = \"udp_receive\"\nrate_pps = 0"));
    assert!(m.contains("rate_pps") && m.contains("datagrams/s in 1..=2e8"), "{m}");
}

fn workload(w: &str) -> String {
    with("kind = \"udp_stream\"\nmessage_bytes = 512", w)
}

#[test]
fn tcp_rr_keys_are_checked() {
    let m = error_of(&workload("kind = \"tcp_rr\"\nrequest_bytes = 20000\nresponse_bytes = 1"));
    assert!(m.contains("request_bytes") && m.contains("20000") && m.contains("1..=14480"), "{m}");
    let m = error_of(&workload("kind = \"tcp_rr\"\nrequest_bytes = 1\nresponse_bytes = 0"));
    assert!(m.contains("response_bytes") && m.contains("1..=1048576"), "{m}");
    let m = error_of(&workload("kind = \"tcp_rr\"\nrequest_bytes = 1\nresponse_bytes = 1\nconcurrency = 0"));
    assert!(m.contains("concurrency") && m.contains("1..=1024"), "{m}");
    let m = error_of(&workload("kind = \"tcp_rr\"\nrequest_bytes = 1\nresponse_bytes = 1\nburst = 2"));
    assert!(m.contains("burst"), "{m}");
}

#[test]
fn memcached_keys_are_checked() {
    let m = error_of(&workload("kind = \"memcached\"\nconcurrency = 2000"));
    assert!(m.contains("concurrency") && m.contains("2000") && m.contains("1..=1024"), "{m}");
    let m = error_of(&workload("kind = \"memcached\"\nconcurrency = 4\nget_ratio = 1.5"));
    assert!(m.contains("get_ratio") && m.contains("1.5") && m.contains("0..=1"), "{m}");
    let m = error_of(&workload("kind = \"memcached\"\nconcurrency = 4\nvalue_bytes = 20000"));
    assert!(m.contains("value_bytes") && m.contains("1..=14000"), "{m}");
    let m = error_of(&workload("kind = \"memcached\"\nconcurrency = 4\nkey_bytes = 251"));
    assert!(m.contains("key_bytes") && m.contains("1..=250"), "{m}");
    let m = error_of(&workload("kind = \"memcached\""));
    assert!(m.contains("concurrency"), "{m}");
}

#[test]
fn http_keys_are_checked() {
    let m = error_of(&workload("kind = \"http\"\nconcurrency = 0\nfile_bytes = 4096"));
    assert!(m.contains("concurrency") && m.contains("1..=1024"), "{m}");
    let m = error_of(&workload("kind = \"http\"\nconcurrency = 2\nfile_bytes = 0"));
    assert!(m.contains("file_bytes") && m.contains("1..=1048576"), "{m}");
    let m = error_of(&workload("kind = \"http\"\nconcurrency = 2"));
    assert!(m.contains("file_bytes"), "{m}");
    let m = error_of(&workload("kind = \"http\"\nconcurrency = 2\nfile_bytes = 4096\nserver = \"iis\""));
    assert!(m.contains("iis") && m.contains("apache") && m.contains("nginx"), "{m}");
    let m = error_of(&workload("kind = \"http\"\nconcurrency = 2\nfile_bytes = 4096\nkeepalive = 1"));
    // serde names the workload table and the line for a wrongly typed field of a tagged enum.
    assert!(m.contains("vm[0].workload") && m.contains("expected a boolean"), "{m}");
}

#[test]
fn webbench_keys_are_checked() {
    let m = error_of(&workload("kind = \"webbench\"\nclients = 0"));
    assert!(m.contains("clients") && m.contains("1..=8192"), "{m}");
    let m = error_of(&workload("kind = \"webbench\"\nclients = 100\ntimeout_ms = 0"));
    assert!(m.contains("timeout_ms") && m.contains("1..=600000"), "{m}");
    let m = error_of(&workload("kind = \"webbench\"\nclients = 100\nfile_bytes = 0"));
    assert!(m.contains("file_bytes"), "{m}");
    let m = error_of(&workload("kind = \"webbench\"\nclients = 100\nworkers = 0"));
    assert!(m.contains("workers") && m.contains("1..=256"), "{m}");
    let m = error_of(&workload("kind = \"webbench\""));
    assert!(m.contains("clients"), "{m}");
    let m = error_of(&workload("kind = \"webbench\"\nclients = 100\nkeepalive = true"));
    assert!(m.contains("keepalive"), "{m}");
}

#[test]
fn cpu_job_keys_are_checked() {
    let m = error_of(&workload("kind = \"cpu_job\"\nwork_ms = 0"));
    assert!(m.contains("work_ms") && m.contains("(0, 1e7]"), "{m}");
    let m = error_of(&workload("kind = \"cpu_job\"\nwork_ms = -5"));
    assert!(m.contains("work_ms"), "{m}");
    let m = error_of(&workload("kind = \"cpu_job\""));
    assert!(m.contains("work_ms"), "{m}");
}

#[test]
fn tcp_receive_keys_are_checked() {
    let m = error_of(&workload("kind = \"tcp_receive\"\nmessage_bytes = 0"));
    assert!(m.contains("message_bytes") && m.contains("1..=1048576"), "{m}");
    let m = error_of(&workload("kind = \"tcp_receive\"\nmessage_bytes = 16384\nwindow_bytes = 1000"));
    assert!(m.contains("window_bytes") && m.contains("1000") && m.contains("65536..=1073741824"), "{m}");
    let m = error_of(&workload("kind = \"tcp_receive\"\nmessage_bytes = 16384\nrate_pps = 5"));
    assert!(m.contains("rate_pps"), "{m}");
}

#[test]
fn client_cores_out_of_range_and_unknown_client_key_are_named() {
    let m = error_of(&with("[[vm]]", "[client]\ncores = 0\n[[vm]]"));
    assert!(m.contains("key `client.cores`: 0 is not allowed; expected 1..=1024 cores"), "{m}");
    let m = error_of(&with("[[vm]]", "[client]\ncore = 2\n[[vm]]"));
    assert!(m.contains("unknown field `core`") && m.contains("cores"), "{m}");
}

#[test]
fn workload_type_errors_name_the_field() {
    let m = error_of(&with("message_bytes = 512", "message_bytes = \"big\""));
    assert!(m.contains("`message_bytes`") && m.contains("invalid type") && m.contains("\"big\""), "{m}");
    let m = error_of(&with("kind = \"udp_stream\"\n", ""));
    assert!(m.contains("missing key `kind`"), "{m}");
    let m = error_of(&with("kind = \"udp_stream\"", "kind = 3"));
    assert!(m.contains("`kind` = 3"), "{m}");
}

#[test]
fn guest_cpu_burn_must_be_a_boolean() {
    let m = error_of(&with("vcpus = 1", "vcpus = 1\nguest_cpu_burn = \"yes\""));
    assert!(m.contains("guest_cpu_burn") && m.contains("expected a boolean"), "{m}");
}

#[test]
fn unknown_idle_policy_is_named() {
    let m = error_of(&with("duration_s = 0.01", "duration_s = 0.01\n[host]\nidle = \"halt\""));
    assert!(m.contains("idle") && m.contains("halt") && m.contains("poll") && m.contains("menu"), "{m}");
}

// --- Bounds: sizes and times a real system can have (issue 9) ---

use eventpath_sim::profile::{Profile, BUILTIN, NOT_ABOVE};

fn es2_text() -> &'static str {
    BUILTIN.iter().find(|(n, _)| *n == "es2").unwrap().1
}

fn profile_error(from: &str, to: &str) -> String {
    let text = es2_text();
    assert!(text.contains(from), "test bug: {from:?} not in es2.toml");
    let m = Profile::parse("p.toml", &text.replacen(from, to, 1)).expect_err("bad profile must be rejected").to_string();
    assert!(!m.contains('\n'), "one line only: {m:?}");
    m
}

#[test]
fn huge_socket_count_is_rejected_at_profile_load() {
    // 4294967296 sockets x 8 cores wrapped the pCPU count to 0 in the scheduler (a panic).
    let m = profile_error("sockets = { value = 1,", "sockets = { value = 4294967296,");
    assert!(m.contains("cpu.sockets") && m.contains("4294967296") && m.contains("1..=16"), "{m}");
    let m = profile_error("sockets = { value = 1,", "sockets = { value = 0.5,");
    assert!(m.contains("cpu.sockets") && m.contains("whole number"), "{m}");
}

#[test]
fn nonsensical_mtu_is_rejected_and_the_bounds_run() {
    for bad in ["0", "52", "67", "65536", "-1500"] {
        let m = profile_error("mtu_bytes = { value = 1500,", &format!("mtu_bytes = {{ value = {bad},"));
        assert!(m.contains("nic.mtu_bytes") && m.contains("68..=65535"), "{m}");
    }
    // The smallest and largest MTUs run (TCP's MSS is MTU - 52 bytes of headers).
    for mtu in [68, 65535] {
        let text = with("kind = \"udp_stream\"\nmessage_bytes = 512", "kind = \"tcp_stream\"\nmessage_bytes = 65536")
            .replace("warmup_s = 0.001", &format!("warmup_s = 0.001\n[profile_overrides.nic]\nmtu_bytes = {mtu}"));
        let s = Scenario::from_toml("t.toml", &text).unwrap();
        let out = run_parsed(s, "t.toml", &RunOptions::default()).unwrap();
        assert!(out.summary.vms[0].throughput.gbps.unwrap() > 0.0, "MTU {mtu}");
    }
}

#[test]
fn tick_rates_that_would_hang_a_run_are_rejected() {
    for section in ["sched", "guest"] {
        for v in ["4294967296", "1e18", "0", "10001", "100.5"] {
            let m = error_of(&with("warmup_s = 0.001", &format!("warmup_s = 0.001\n[profile_overrides.{section}]\ntick_hz = {v}")));
            assert!(m.contains(&format!("profile_overrides.{section}.tick_hz")) && m.contains("1..=10000"), "{m}");
            assert!(m.contains("100 µs tick"), "the message says why: {m}");
        }
    }
}

#[test]
fn every_profile_parameter_rejects_negative_nan_inf_and_huge_values() {
    let p = Profile::load("es2").unwrap();
    for (key, _, unit) in p.params() {
        let (section, name) = key.split_once('.').unwrap();
        // A signed parameter (tcp_adv_win_scale) takes -1: below its range is what it refuses.
        let low = Profile::param_range(key, unit).start().min(0.0) - 1.0;
        for v in [low.to_string().as_str(), "nan", "inf", "-inf", "1e300"] {
            let m = error_of(&with("warmup_s = 0.001", &format!("warmup_s = 0.001\n[profile_overrides.{section}]\n{name} = {v}")));
            assert!(m.contains(&format!("key `profile_overrides.{key}`")) && m.contains("not allowed"), "{key} = {v}: {m}");
        }
    }
}

#[test]
fn every_profile_parameter_runs_at_both_ends_of_its_range() {
    let p = Profile::load("es2").unwrap();
    for (key, param, unit) in p.params() {
        let r = Profile::param_range(key, unit);
        let (section, name) = key.split_once('.').unwrap();
        for v in [*r.start(), *r.end()] {
            // A profile of 16 x 512 cores is fine; the model runs at most 512 of them.
            // An adaptive ITR's start is held to its driver's range: the full range is a fixed one's.
            let host = match key {
                _ if section == "cpu" => "[host]\npcpus = 1\n",
                "host.nic_rx_itr_ns" => "[host]\nnic_itr = \"fixed\"\n",
                "client.rx_itr_ns" => "[client]\nnic_itr = \"fixed\"\n",
                _ => "",
            };
            // A parameter bounded by another (`NOT_ABOVE`) moves its partner along.
            let mut lines = vec![format!("{name} = {v:?}")];
            for (lo, hi, _) in NOT_ABOVE {
                let value = |k: &str| p.params().iter().find(|(pk, _, _)| *pk == k).unwrap().1.value;
                if key == lo && v > value(hi) || key == hi && v < value(lo) {
                    let other = if key == lo { hi } else { lo };
                    assert_eq!(other.split_once('.').unwrap().0, section, "test bug: a pair across sections");
                    lines.push(format!("{} = {v:?}", other.split_once('.').unwrap().1));
                }
            }
            let text = with("duration_s = 0.01", "duration_s = 0.002")
                .replace("warmup_s = 0.001", &format!("warmup_s = 0.001\n{host}[profile_overrides.{section}]\n{}", lines.join("\n")));
            let s = Scenario::from_toml("t.toml", &text).unwrap();
            let out = run_parsed(s, "t.toml", &RunOptions::default());
            assert!(out.is_ok(), "{key} = {v} (profile: {}): {}", param.value, out.unwrap_err());
        }
    }
}

#[test]
fn durations_and_warmups_that_overflow_or_round_to_nothing_are_rejected() {
    for d in ["1.85e10", "1e300", "4e-10", "1e-7", "86401", "nan", "inf"] {
        let m = error_of(&with("duration_s = 0.01", &format!("duration_s = {d}")));
        assert!(m.contains("key `duration_s`") && m.contains("1e-6..=86400"), "{d}: {m}");
    }
    for w in ["1e6", "1e18", "-0.1", "3601", "nan"] {
        let m = error_of(&with("warmup_s = 0.001", &format!("warmup_s = {w}")));
        assert!(m.contains("key `warmup_s`") && m.contains("0..=3600"), "{w}: {m}");
    }
    for d in [1e300, 1.85e10, 4e-10, 0.0, -1.0, f64::NAN] {
        let s = Scenario::from_toml("t.toml", &good().toml()).unwrap();
        let m = run_parsed(s, "t.toml", &RunOptions { duration_s: Some(d), ..Default::default() }).unwrap_err().to_string();
        assert!(m.starts_with("--duration: ") && m.contains("1e-6..=86400"), "{d}: {m}");
    }
    // The shortest duration runs and measures what it says.
    let s = Scenario::from_toml("t.toml", &good().toml()).unwrap();
    let out = run_parsed(s, "t.toml", &RunOptions { duration_s: Some(1e-6), ..Default::default() }).unwrap();
    assert!((out.summary.sim_seconds - 1e-6).abs() < 1e-12, "{}", out.summary.sim_seconds);
}

#[test]
fn sizes_beyond_a_real_host_are_rejected() {
    let many = (0..1025).fold(preamble(), |sc, i| sc.vm(Vm::new(&format!("v{i}"), 1)));
    let m = error_of(&many.toml());
    assert!(m.contains("key `vm`") && m.contains("1025 VMs") && m.contains("at most 1024"), "{m}");
    let m = error_of(&with("vcpus = 1", "vcpus = 289"));
    assert!(m.contains("vm[0].vcpus") && m.contains("289") && m.contains("1..=288"), "{m}");
    let m = error_of(&with("vcpus = 1", "vcpus = 4294967295"));
    assert!(m.contains("vm[0].vcpus"), "{m}");
    let vms = (0..16).fold(good(), |sc, i| sc.vm(Vm::new(&format!("w{i}"), 288)));
    let m = error_of(&vms.toml());
    assert!(m.contains("key `vm`") && m.contains("vCPUs in all") && m.contains("4096"), "{m}");
}

#[test]
fn long_empty_and_control_character_names_are_rejected() {
    let long = "n".repeat(3000);
    let m = error_of(&with("name = \"t\"", &format!("name = \"{long}\"")));
    assert!(m.contains("key `name`") && m.contains("3000 characters") && m.contains("at most 64") && m.len() < 200, "{m}");
    let m = error_of(&with("name = \"vm0\"", &format!("name = \"{long}\"")));
    assert!(m.contains("key `vm[0].name`") && m.contains("at most 64"), "{m}");
    let m = error_of(&with("name = \"vm0\"", "name = \"\""));
    assert!(m.contains("key `vm[0].name`") && m.contains("1..=64"), "{m}");
    let m = error_of(&with("name = \"t\"", "name = \"a\\nb\""));
    assert!(m.contains("key `name`") && m.contains("control character"), "{m}");
}

#[test]
fn open_loop_rates_are_bounded() {
    for r in ["1e300", "1e-300", "0.5", "2.1e8"] {
        let m = error_of(&with("message_bytes = 512", &format!("message_bytes = 512\nrate_pps = {r}")));
        assert!(m.contains("rate_pps") && m.contains("1..=2e8"), "{r}: {m}");
    }
    let m = error_of(&workload("kind = \"udp_rr\"\nrequest_bytes = 1\nresponse_bytes = 1\ninterval_us = 1e-9"));
    assert!(m.contains("interval_us") && m.contains("0.005..=1000000"), "{m}");
}

#[test]
fn too_many_cpu_hogs_are_rejected() {
    let hogs = "[[host.cpu_hog]]\n".repeat(1025);
    let m = error_of(&with("[[vm]]", &format!("[host]\n{hogs}[[vm]]")));
    assert!(m.contains("host.cpu_hog") && m.contains("1025") && m.contains("at most 1024"), "{m}");
}

#[test]
fn event_idx_must_be_a_boolean() {
    let m = error_of(&with("vcpus = 1", "vcpus = 1\n[vm.net]\nevent_idx = 1"));
    assert!(m.contains("event_idx") && m.contains("boolean"), "{m}");
}

/// es2's `exit.hlt_ns` line up to its source: its value, unit and plausible range, which each
/// test replaces with its own (a range beside `free` is refused on its own).
fn hlt_key() -> String {
    let l = es2_text().lines().find(|l| l.starts_with("hlt_ns = { value = 1000, unit = \"ns\",")).expect("es2's hlt_ns");
    match l.find(" range = {") {
        Some(i) => l[..i + l[i..].find("},").unwrap() + 2].to_string(),
        None => "hlt_ns = { value = 1000, unit = \"ns\",".to_string(),
    }
}

#[test]
fn free_ranges_are_checked() {
    let key = &hlt_key();
    let m = profile_error(key, "hlt_ns = { value = 1000, unit = \"ns\", free = { min = 2000, max = 500 },");
    assert!(m.contains("exit.hlt_ns.free") && m.contains("min 2000 > max 500"), "{m}");
    let m = profile_error(key, "hlt_ns = { value = 1000, unit = \"ns\", free = { min = 2000, max = 3000 },");
    assert!(m.contains("exit.hlt_ns") && m.contains("prior value 1000") && m.contains("2000..=3000"), "{m}");
    let m = profile_error(key, "hlt_ns = { value = 1000, unit = \"ns\", free = { min = -1, max = 3000 },");
    assert!(m.contains("exit.hlt_ns.free") && m.contains("finite bounds"), "{m}");
    let m = profile_error(key, "hlt_ns = { value = 1000, unit = \"ns\", free = { min = 1, maximum = 3000 },");
    assert!(m.contains("maximum"), "{m}");
    // A good range loads and keeps the prior as the value.
    let text = es2_text().replacen(key.as_str(), "hlt_ns = { value = 1000, unit = \"ns\", free = { min = 500, max = 3000 },", 1);
    let p = Profile::parse("p.toml", &text).unwrap();
    let f = p.exit.hlt_ns.free.unwrap();
    assert_eq!((p.exit.hlt_ns.value, f.min, f.max), (1000.0, 500.0, 3000.0));
}

#[test]
fn plausible_ranges_are_checked_and_what_ifs_may_leave_them() {
    // Issue 47: a value's plausible range, with its reason, around the value.
    let key = &hlt_key();
    let ranged = |r: &str| format!("hlt_ns = {{ value = 1000, unit = \"ns\", range = {r},");
    let m = profile_error(key, &ranged("{ min = 2000, max = 3000, why = \"x\" }"));
    assert!(m.contains("exit.hlt_ns") && m.contains("outside its range 2000..=3000"), "{m}");
    let m = profile_error(key, &ranged("{ min = 3000, max = 500, why = \"x\" }"));
    assert!(m.contains("exit.hlt_ns.range") && m.contains("min <= max"), "{m}");
    let m = profile_error(key, &ranged("{ min = 500, max = 3000, why = \" \" }"));
    assert!(m.contains("exit.hlt_ns.range.why"), "{m}");
    let m = profile_error(key, &ranged("{ min = 500, max = 3000 }"));
    assert!(m.contains("why"), "{m}");
    let text = es2_text().replacen(key.as_str(), &ranged("{ min = 500, max = 3000, why = \"a cycle count's uncertainty\" }"), 1);
    let p = Profile::parse("p.toml", &text).unwrap();
    let r = p.exit.hlt_ns.range.clone().unwrap();
    assert_eq!((p.exit.hlt_ns.value, r.min, r.max), (1000.0, 500.0, 3000.0));
}

#[test]
fn an_exact_value_says_why_and_has_no_range() {
    // Issue 47: a value without a range says why it is exact (a count, a kernel's constant).
    let key = &hlt_key();
    let with = |rest: &str| format!("hlt_ns = {{ value = 1000, unit = \"ns\", {rest}");
    let m = profile_error(key, &with("exact = \" \","));
    assert!(m.contains("exit.hlt_ns.exact") && m.contains("why"), "{m}");
    let m = profile_error(key, &with("exact = \"x\", range = { min = 500, max = 3000, why = \"y\" },"));
    assert!(m.contains("exit.hlt_ns.exact") && m.contains("no range"), "{m}");
    let m = profile_error(key, &with("exact = \"x\", free = { min = 500, max = 3000 },"));
    assert!(m.contains("exit.hlt_ns.exact"), "{m}");
    let text = es2_text().replacen(key.as_str(), &with("exact = \"a constant of vmx.c\","), 1);
    let p = Profile::parse("p.toml", &text).unwrap();
    assert_eq!(p.exit.hlt_ns.exact.as_deref(), Some("a constant of vmx.c"));
}

/// vm-limit-message-512pcpus.sh: the VM cap was explained with a 64-pCPU host's numbers
/// whatever the host. It is the engine's, on any host; the message says so with this host's.
#[test]
fn the_vm_cap_is_explained_with_this_hosts_numbers() {
    let vms = |sc: Sc, n: usize| (0..n).fold(sc, |sc, i| sc.vm(Vm::new(&format!("v{i}"), 1)));
    let big = Sc::new("t", "modern").pcpus(512).profile_override("cpu.sockets", 2).profile_override("cpu.cores_per_socket", 256);
    let m = vms(big.clone(), 1025).error();
    assert!(!m.contains('\n') && !m.contains("64-pCPU"), "{m}");
    assert!(m.contains("key `vm`: 1025 VMs are not allowed; expected at most 1024 on any host"), "{m}");
    assert!(m.contains("512 pCPUs, 2 VMs per pCPU") && m.contains("engine"), "{m}");
    let m = vms(preamble().pcpus(3), 1025).error();
    assert!(m.contains("3 pCPUs, 341.3 VMs per pCPU"), "{m}");
    // At the cap, the big host's layout is accepted.
    assert_eq!(vms(big, 1024).check().scenario.vm.len(), 1024);
}

/// An `interrupt_delivery` written on a xen_pv device must mean what it says: `emulated` was
/// accepted and read as `evtchn` (the device's only mode). Absent, the key is `evtchn`.
#[test]
fn emulated_written_on_a_xen_pv_device_is_refused_and_the_absent_key_reads_evtchn() {
    use eventpath_sim::scenario::InterruptDelivery;
    let xen = |vm: Vm| Sc::new("t", "hbalance").host("virtualization = \"xen\"\nscheduler = \"xen_credit\"").vm(vm);
    let pv = || Vm::new("vm0", 2).net("kind = \"xen_pv\"");
    let m = xen(pv().delivery("emulated")).error();
    assert!(!m.contains('\n'), "{m}");
    assert!(m.contains("key `vm[0].interrupt_delivery`: \"emulated\" is not allowed on a xen_pv device"), "{m}");
    assert!(m.contains("\"evtchn\", the default") && m.contains("remove the key"), "{m}");
    for vm in [pv(), pv().delivery("evtchn")] {
        let c = xen(vm).check();
        assert_eq!(c.scenario.vm[0].interrupt_delivery, InterruptDelivery::Evtchn);
        // What the output directory records says so, and runs again.
        let again = Scenario::from_toml("r.toml", &c.resolved_toml()).and_then(|s| s.check("r.toml")).unwrap();
        assert_eq!(again.scenario.vm[0].interrupt_delivery, InterruptDelivery::Evtchn);
    }
    // On QEMU's e1000, `emulated` is the mode and may be written.
    let fv = xen(Vm::new("vm0", 2).net("kind = \"xen_e1000\"").delivery("emulated")).check();
    assert_eq!(fv.scenario.vm[0].interrupt_delivery, InterruptDelivery::Emulated);
}

#[test]
fn a_linux_hosts_housekeeping_must_give_its_tick_and_kernel_threads() {
    // Only a Xen host's profile (one with [xen]) may leave the Linux host's keys out.
    let text = es2_text();
    let line = text.lines().find(|l| l.starts_with("tick_ns = {")).expect("es2 has housekeeping.tick_ns");
    let m = Profile::parse("p.toml", &text.replacen(&format!("{line}\n"), "", 1)).expect_err("a Linux host's housekeeping without tick_ns").to_string();
    assert!(!m.contains('\n') && m.contains("housekeeping.tick_ns") && m.contains("[xen]"), "{m}");
    // The hbalance profile (Xen) gives the start spreads only, and loads.
    let hb = BUILTIN.iter().find(|(n, _)| *n == "hbalance").unwrap().1;
    let p = Profile::parse("hbalance.toml", hb).unwrap();
    let h = p.housekeeping.as_ref().expect("hbalance has [housekeeping]");
    assert!(h.tick_ns.is_none() && h.kthread_interval_ns.is_none() && h.vm_boot_spread_ns.value > 0.0);
}
