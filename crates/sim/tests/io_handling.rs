//! Request handling (`[host.io]`): stock vhost-net, ES2's joint threads (perceptive and
//! optimistic switches, ES2 §4.2, §5) and ELVIS's I/O cores (ELVIS §2.2, §3). Every mode ×
//! workload keeps the conservation ledgers and finishes without a stalled flow; each mode does
//! what its paper says it does; bad keys are refused with one line naming the key.

use eventpath_sim::run::{simulate_with_ledger, RunOutput};
use eventpath_sim::scenario::Scenario;

const WORKLOADS: &[&str] = &[
    "kind = \"tcp_stream\"\nmessage_bytes = 512",
    "kind = \"udp_stream\"\nmessage_bytes = 512",
    "kind = \"udp_rr\"\nrequest_bytes = 1\nresponse_bytes = 1",
    "kind = \"tcp_rr\"\nrequest_bytes = 64\nresponse_bytes = 64",
    "kind = \"memcached\"\nconcurrency = 32\nget_ratio = 0.9\nvalue_bytes = 1024\nkey_bytes = 64",
    "kind = \"http\"\nconcurrency = 2\nfile_bytes = 4096\nkeepalive = false",
    "kind = \"udp_receive\"\nmessage_bytes = 512\nrate_pps = 50000",
    "kind = \"tcp_receive\"\nmessage_bytes = 1448",
];

const MODES: &[&str] = &[
    "",
    "[host.io]\nhandling = \"es2\"\ncores = [3]",
    "[host.io]\nhandling = \"es2\"\nswitch = \"optimistic\"",
    "[host.io]\nhandling = \"es2\"\ncombining_level = 1\nquota = 16",
    "[host.io]\nhandling = \"elvis\"\ncores = [3]",
    "[host.io]\nhandling = \"elvis\"\ncores = [3]\nexitless_requests = false",
];

/// Two 1-vCPU VMs on pCPUs 0 and 1 running `workload`, the I/O handled as `io` says.
fn scenario(io: &str, workload: &str, delivery: &str) -> String {
    let vm = |i: u32| {
        format!(
            "[[vm]]\nname = \"vm{i}\"\nvcpus = 1\nvcpu_pins = [{i}]\ninterrupt_delivery = \"{delivery}\"\n[vm.net]\nqueue_size = 256\n[vm.workload]\n{workload}\n"
        )
    };
    format!("name = \"io\"\nprofile = \"es2\"\nduration_s = 0.04\nwarmup_s = 0.01\n[host]\npcpus = 4\n{io}\n{}{}", vm(0), vm(1))
}

fn run(text: &str) -> RunOutput {
    let c = Scenario::from_toml("t", text).unwrap_or_else(|e| panic!("{e}\n{text}")).check("t").unwrap_or_else(|e| panic!("{e}\n{text}"));
    let (o, l) = simulate_with_ledger(&c);
    l.check().unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert!(o.summary.stalled_flows.is_empty(), "{:?}\n{text}", o.summary.stalled_flows);
    o
}

#[test]
fn every_mode_and_workload_keeps_its_ledgers_and_makes_progress() {
    for io in MODES {
        for w in WORKLOADS {
            let o = run(&scenario(io, w, "posted"));
            for v in &o.summary.vms {
                let t = &v.throughput;
                let moved = t.pps.unwrap_or(0.0) + t.ops_per_s.unwrap_or(0.0);
                assert!(moved > 0.0, "no progress under {io:?} with {w:?}: {t:?}");
            }
        }
    }
}

fn one_vm(io: &str, workload: &str, delivery: &str) -> RunOutput {
    let text = format!(
        "name = \"io\"\nprofile = \"es2\"\nduration_s = 0.2\nwarmup_s = 0.02\n[host]\npcpus = 2\n{io}\n[[vm]]\nname = \"vm0\"\nvcpus = 1\nvcpu_pins = [0]\ninterrupt_delivery = \"{delivery}\"\n[vm.net]\nqueue_size = 256\n[vm.workload]\n{workload}\n"
    );
    run(&text)
}

fn io_exits(o: &RunOutput) -> f64 {
    o.summary.vms[0].exits_per_s["io_instruction"].unwrap()
}

const MEMCACHED: &str = "kind = \"memcached\"\nconcurrency = 256\nget_ratio = 0.9\nvalue_bytes = 1024\nkey_bytes = 64";

#[test]
fn the_optimistic_switch_polls_replies_after_each_request() {
    // ES2 §6.2 Fig. 6: PI+H(O) keeps I/O-instruction exits of memcached "under 50 per second".
    let pi = one_vm("", MEMCACHED, "posted");
    let o = one_vm("[host.io]\nhandling = \"es2\"\nswitch = \"optimistic\"\ncores = [1]", MEMCACHED, "posted");
    assert!(io_exits(&pi) > 10_000.0, "{}", io_exits(&pi));
    assert!(io_exits(&o) < 0.01 * io_exits(&pi), "{} vs {}", io_exits(&o), io_exits(&pi));
    let ops = |r: &RunOutput| r.summary.vms[0].throughput.ops_per_s.unwrap();
    assert!(ops(&o) > ops(&pi), "fewer exits, more requests: {} vs {}", ops(&o), ops(&pi));
}

#[test]
fn the_perceptive_switch_keeps_polling_only_while_turns_fill_the_quota() {
    let tcp = "kind = \"tcp_stream\"\nmessage_bytes = 512";
    let es2 = |quota: u32| one_vm(&format!("[host.io]\nhandling = \"es2\"\nquota = {quota}\ncores = [1]"), tcp, "posted");
    let (q1, q64) = (es2(1), es2(64));
    // quota 1: every turn fills it, the handler never leaves polling mode — no kicks after the first.
    assert!(io_exits(&q1) < 100.0, "{}", io_exits(&q1));
    // quota 64: no turn fills it; back to notifications each time, a kick per packet.
    let pps = q64.summary.vms[0].throughput.pps.unwrap();
    assert!(io_exits(&q64) > 0.9 * pps, "{} kicks for {pps} packets", io_exits(&q64));
}

#[test]
fn elvis_polls_fast_queues_and_its_replies_need_no_exit() {
    let tcp = "kind = \"tcp_stream\"\nmessage_bytes = 64";
    let elvis = one_vm("[host.io]\nhandling = \"elvis\"\ncores = [1]", tcp, "eli");
    let fine = one_vm("[host.io]\nhandling = \"elvis\"\ncores = [1]\nexitless_requests = false", tcp, "emulated");
    let v = &elvis.summary.vms[0];
    // ELVIS §4.3: under 800 exits/s (what is left is the guest timer's).
    assert!(v.exits_total_per_s.unwrap() < 800.0, "{:?}", v.exits_per_s);
    assert!(io_exits(&fine) > 10_000.0, "fine-grained scheduling alone keeps the kicks: {}", io_exits(&fine));
    assert_eq!(elvis.summary.host.io_threads[0].name, "elvis-io0");
    assert!(elvis.summary.host.io_threads[0].util_pct.unwrap() > 99.0, "a polling I/O core is always busy");
}

#[test]
fn one_elvis_thread_per_io_core_serves_its_share_of_the_devices() {
    let text = scenario("[host.io]\nhandling = \"elvis\"\ncores = [2, 3]", "kind = \"udp_rr\"\nrequest_bytes = 1\nresponse_bytes = 1", "eli");
    let o = run(&text);
    let names: Vec<_> = o.summary.host.io_threads.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["elvis-io0", "elvis-io1"]);
}

fn error(io: &str, extra_vm: &str) -> String {
    let text = format!(
        "name = \"io\"\nprofile = \"es2\"\n[host]\npcpus = 4\n{io}\n[[vm]]\nname = \"vm0\"\nvcpus = 1\nvcpu_pins = [0]\n{extra_vm}\n[vm.workload]\nkind = \"udp_rr\"\nrequest_bytes = 1\nresponse_bytes = 1\n"
    );
    match Scenario::from_toml("t", &text).and_then(|s| s.check("t")) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_request_handling_keys_name_the_key() {
    let cases: &[(&str, &str, &str)] = &[
        ("[host.io]\nhandling = \"es2\"\ncombining_level = 0", "", "host.io.combining_level"),
        ("[host.io]\nhandling = \"es2\"\nswitch = \"optimistic\"\npoll_count = 0", "", "host.io.poll_count"),
        ("[host.io]\nhandling = \"es2\"\nquota = 0", "", "host.io.quota"),
        ("[host.io]\nhandling = \"elvis\"\ncores = [9]", "", "host.io.cores[0]"),
        ("[host.io]\nhandling = \"elvis\"\ncores = [0]", "", "host.io.cores[0]"),
        ("[host.io]\nhandling = \"elvis\"", "", "host.io.cores"),
        ("[host.io]\nhandling = \"sidecore\"", "", "handling"),
        ("[host.io]\nhandling = \"elvis\"\ncores = [1]\nmin_work = 100", "", "host.io.min_work"),
        ("[host.io]\nhandling = \"vhost\"\nquota = 4", "", "host.io.quota"),
        ("[host.io]\nhandling = \"es2\"\nmax_work = 4", "", "host.io.max_work"),
        ("[host.io]\nhandling = \"es2\"", "[vm.net]\nvhost_pin = 1", "vm[0].net.vhost_pin"),
        ("", "interrupt_delivery = \"eli\"", "vm[0].interrupt_delivery"),
    ];
    for (io, vm, key) in cases {
        let e = error(io, vm);
        assert!(e.contains(key), "{io:?} {vm:?}: {e}");
        assert_eq!(e.trim_end().lines().count(), 1, "one line: {e}");
    }
}

#[test]
fn same_scenario_same_seed_same_result() {
    let text = scenario("[host.io]\nhandling = \"es2\"\nswitch = \"optimistic\"", MEMCACHED, "posted");
    let (mut a, mut b) = (run(&text), run(&text));
    (a.summary.wall_seconds, b.summary.wall_seconds) = (0.0, 0.0);
    assert_eq!(serde_json::to_string(&a.summary).unwrap(), serde_json::to_string(&b.summary).unwrap());
}
