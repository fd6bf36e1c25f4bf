//! Bad input: every case gets one clear line naming the key, the value and what is allowed.

use eventpath_sim::run::{run_parsed, RunOptions};
use eventpath_sim::scenario::Scenario;

const GOOD: &str = r#"
name = "t"
profile = "es2"
duration_s = 0.01
warmup_s = 0.001
[[vm]]
name = "vm0"
vcpus = 1
[vm.workload]
kind = "udp_stream"
message_bytes = 512
"#;

fn error_of(text: &str) -> String {
    let r = Scenario::from_toml("t.toml", text).and_then(|s| run_parsed(s, "t.toml", &RunOptions::default()));
    let msg = r.expect_err("bad input must be rejected").to_string();
    assert!(!msg.contains('\n'), "one line only: {msg:?}");
    msg
}

fn with(from: &str, to: &str) -> String {
    assert!(GOOD.contains(from), "test bug: {from:?} not in GOOD");
    GOOD.replacen(from, to, 1)
}

#[test]
fn good_scenario_runs() {
    let s = Scenario::from_toml("t.toml", GOOD).unwrap();
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
        assert!(m.contains("duration_s") && m.contains(d) && m.contains("> 0"), "{m}");
    }
    let s = Scenario::from_toml("t.toml", GOOD).unwrap();
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
    let m = error_of(&format!("{GOOD}\n[[vm]]\nname = \"vm0\"\nvcpus = 1\n[vm.workload]\nkind = \"udp_stream\"\nmessage_bytes = 1\n"));
    assert!(m.contains("used twice"), "{m}");
}

#[test]
fn bad_interrupt_delivery_names_allowed_values() {
    let m = error_of(&with("vcpus = 1", "vcpus = 1\ninterrupt_delivery = \"eli\""));
    assert!(m.contains("interrupt_delivery") && m.contains("eli") && m.contains("emulated") && m.contains("posted"), "{m}");
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
    assert!(m.contains("rate_pps") && m.contains("datagrams/s > 0"), "{m}");
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
