//! Issue 29 item 6: the timeline a Perfetto user expects. One process per VM (its vCPUs, its
//! interrupts, its vhost worker), the shared back-end threads in "host I/O threads", a track
//! per pCPU in "host" that shows what ran on it all the time (vCPU guest time included), the
//! back-end tracks filled in every handling mode, flow arrows kick → back-end item → interrupt
//! → handler; the events well formed; and a traced run's summary that of the untraced run.

use eventpath_sim::run::{simulate, simulate_traced, TraceOptions};
use eventpath_sim::scenario::{Checked, Scenario};
use serde_json::Value;
use std::collections::BTreeMap;

const EPS: f64 = 1e-6; // µs

fn checked(example: &str, duration_s: f64) -> Checked {
    let path = format!("{}/../../examples/{example}", env!("CARGO_MANIFEST_DIR"));
    let mut sc = Scenario::from_file(&path).unwrap();
    sc.duration_s = duration_s;
    sc.warmup_s = 0.001;
    sc.check(example).unwrap()
}

/// A parsed timeline: processes by pid, tracks by tid (pid, name), the spans in file order.
struct Timeline {
    processes: BTreeMap<u64, String>,
    tracks: BTreeMap<u64, (u64, String)>,
    spans: Vec<Value>,
}

impl Timeline {
    fn of(c: &Checked, from_s: f64, to_s: f64) -> Timeline {
        let (_, json) = simulate_traced(c, TraceOptions { from_s, to_s, limit: 10_000_000 }).unwrap();
        let j: Value = serde_json::from_str(&json).unwrap();
        assert_eq!(j["otherData"]["dropped_events"], 0);
        let (mut processes, mut tracks, mut spans) = (BTreeMap::new(), BTreeMap::new(), Vec::new());
        for e in j["traceEvents"].as_array().unwrap() {
            let name = e["args"]["name"].as_str().map(str::to_string);
            match (e["ph"].as_str().unwrap(), e["name"].as_str().unwrap()) {
                ("M", "process_name") => {
                    processes.insert(e["pid"].as_u64().unwrap(), name.unwrap());
                }
                ("M", "thread_name") => {
                    tracks.insert(e["tid"].as_u64().unwrap(), (e["pid"].as_u64().unwrap(), name.unwrap()));
                }
                ("M", _) => assert!(e["args"]["sort_index"].is_u64(), "{e}"),
                ("X", _) => spans.push(e.clone()),
                (ph, _) => panic!("unexpected phase {ph}: {e}"),
            }
        }
        Timeline { processes, tracks, spans }
    }

    /// The process named `name` (or, ending in `*`, whose name starts so).
    fn pid(&self, name: &str) -> u64 {
        let like = |n: &str| name.strip_suffix('*').map_or(n == name, |p| n.starts_with(p));
        *self.processes.iter().find(|(_, n)| like(n)).unwrap_or_else(|| panic!("no process {name}: {:?}", self.processes)).0
    }

    /// The tracks of process `pid` whose name satisfies `f`.
    fn tracks_of(&self, pid: u64, f: impl Fn(&str) -> bool) -> Vec<u64> {
        self.tracks.iter().filter(|(_, (p, n))| *p == pid && f(n)).map(|(t, _)| *t).collect()
    }

    fn on(&self, tid: u64) -> Vec<&Value> {
        self.spans.iter().filter(|e| e["tid"] == tid).collect()
    }
}

fn ts(e: &Value) -> (f64, f64) {
    let a = e["ts"].as_f64().unwrap();
    (a, a + e["dur"].as_f64().unwrap())
}

fn name(e: &Value) -> &str {
    e["name"].as_str().unwrap()
}

/// Every span is inside the window, on a registered track of its process; on each track the
/// spans with a length come in time order and do not overlap (Perfetto drops a slice that
/// overlaps another partly); a mark (no length) nests anywhere.
fn well_formed(t: &Timeline, from_us: f64, to_us: f64) {
    for e in &t.spans {
        let (a, b) = ts(e);
        assert!(from_us - EPS <= a && a <= b && b <= to_us + EPS, "outside the window: {e}");
        let (pid, _) = t.tracks.get(&e["tid"].as_u64().unwrap()).unwrap_or_else(|| panic!("unknown track: {e}"));
        assert_eq!(e["pid"].as_u64(), Some(*pid), "{e}");
    }
    for tid in t.tracks.keys() {
        let mut end = f64::MIN;
        for e in t.on(*tid).into_iter().filter(|e| e["dur"].as_f64() > Some(0.0)) {
            let (a, b) = ts(e);
            assert!(a >= end - EPS, "track {:?}: {e} starts before the previous span ends ({end})", t.tracks[tid]);
            end = b;
        }
    }
}

/// The flows: per id, its parts in time order as (track, span name, in, out). Their slices
/// start at distinct times: a viewer that orders slices starting together by anything else
/// (Perfetto: longest first) sees the parts in this order too.
fn flows(t: &Timeline) -> BTreeMap<u64, Vec<(u64, String, bool, bool)>> {
    let mut by_id: BTreeMap<u64, Vec<(f64, u64, String, bool, bool)>> = BTreeMap::new();
    for e in t.spans.iter().filter(|e| e.get("bind_id").is_some()) {
        let flag = |k: &str| e.get(k).and_then(Value::as_bool).unwrap_or(false);
        by_id.entry(e["bind_id"].as_u64().unwrap()).or_default().push((ts(e).0, e["tid"].as_u64().unwrap(), name(e).to_string(), flag("flow_in"), flag("flow_out")));
    }
    by_id
        .into_iter()
        .map(|(id, mut parts)| {
            parts.sort_by(|a, b| a.0.total_cmp(&b.0));
            for w in parts.windows(2) {
                assert!(w[1].0 > w[0].0 + EPS / 10.0, "flow {id}: two parts start together: {parts:?}");
            }
            (id, parts.into_iter().map(|(_, t, n, i, o)| (t, n, i, o)).collect())
        })
        .collect()
}

/// A flow starts once (out, not in) and its later parts each take an arrow in.
fn flows_connect(f: &BTreeMap<u64, Vec<(u64, String, bool, bool)>>) {
    for (id, parts) in f {
        assert!(parts[0].3 && !parts[0].2, "flow {id} starts with an arrow out: {parts:?}");
        assert!(parts[1..].iter().all(|p| p.2), "flow {id}: every later part takes an arrow in: {parts:?}");
        assert!(parts[..parts.len() - 1].iter().all(|p| p.3), "flow {id}: only its last part ends it: {parts:?}");
    }
}

#[test]
fn each_vm_is_a_process_pcpus_show_what_ran_and_flows_follow_the_io() {
    let c = checked("tcp-send.toml", 0.01);
    let t = Timeline::of(&c, 0.002, 0.004);
    well_formed(&t, 2000.0, 4000.0);
    let (vm, host) = (t.pid("VM tcp-send"), t.pid("host: tcp-send"));
    assert_eq!(t.processes.len(), 2, "{:?}", t.processes);
    let vcpu = t.tracks_of(vm, |n| n.starts_with("vcpu:"));
    let vhost = t.tracks_of(vm, |n| n.starts_with("vhost-"));
    let irqs = t.tracks_of(vm, |n| n.ends_with("interrupts raised"));
    assert_eq!((vcpu.len(), vhost.len(), irqs.len()), (1, 1, 1));
    let pcpus = t.tracks_of(host, |n| n.starts_with("pCPU "));
    assert_eq!(pcpus.len(), 8, "one track per pCPU");

    // The vCPU thread (pinned to pCPU 0) occupies its pCPU over all its guest time.
    let vname = &t.tracks[&vcpu[0]].1;
    let on_cpu: Vec<(f64, f64)> = t.spans.iter().filter(|e| pcpus.contains(&e["tid"].as_u64().unwrap()) && name(e) == vname).map(ts).collect();
    assert!(!on_cpu.is_empty(), "pCPU tracks show the vCPU thread");
    let guest: Vec<(f64, f64)> = t.on(vcpu[0]).into_iter().filter(|e| !name(e).starts_with("exit:") && e["dur"].as_f64() > Some(0.0)).map(ts).collect();
    assert!(guest.len() > 10);
    for (a, b) in &guest {
        let covered: f64 = on_cpu.iter().map(|(x, y)| (y.min(*b) - x.max(*a)).max(0.0)).sum();
        assert!(covered >= b - a - 1e-3, "guest span [{a}, {b}] covered {covered} µs by its thread's pCPU spans");
    }
    // The vhost worker (on pCPU 1) shows its items; pCPU 1 shows the worker.
    let items = t.on(vhost[0]);
    assert!(items.iter().any(|e| name(e) == "tx tcp-send") && items.iter().any(|e| name(e) == "rx tcp-send"), "vhost items");
    assert!(t.on(pcpus[1]).iter().any(|e| name(e) == "vhost-tcp-send"));
    assert!(t.on(irqs[0]).iter().any(|e| name(e) == "net rx irq → vCPU 0"));

    // Flows: a kick's exit → the TX item that took it; an RX item → its interrupt → the handler.
    let f = flows(&t);
    flows_connect(&f);
    fn shape(p: &[(u64, String, bool, bool)]) -> Vec<(u64, &str)> {
        p.iter().map(|(tid, n, _, _)| (*tid, n.as_str())).collect()
    }
    let kicks = f.values().filter(|p| p.len() >= 2 && shape(p)[..2] == [(vcpu[0], "exit: io_instruction (kick)"), (vhost[0], "tx tcp-send")]).count();
    let rx = f.values().filter(|p| shape(p) == [(vhost[0], "rx tcp-send"), (irqs[0], "net rx irq → vCPU 0"), (vcpu[0], "irq handler")]).count();
    assert!(kicks > 5 && rx > 5, "{kicks} kick flows, {rx} complete RX flows of {}", f.len());
}

/// Each handling mode's back-end threads (a vhost worker per VM; ES2 joint threads, ELVIS I/O
/// cores, PMDs in "host I/O threads") show their items, and the pCPU they run on shows them.
#[test]
fn backend_tracks_are_filled_in_every_handling_mode() {
    let modes = [("tcp-send.toml", false), ("vhost-busy-poll.toml", false), ("es2-tcp-send.toml", true), ("elvis-7vm.toml", true), ("pmd.toml", true)];
    for (example, shared) in modes {
        let c = checked(example, 0.005);
        let t = Timeline::of(&c, 0.002, 0.003);
        well_formed(&t, 2000.0, 3000.0);
        let io: Vec<u64> = if shared {
            let pid = t.pid("host I/O threads");
            t.tracks_of(pid, |_| true)
        } else {
            t.tracks.iter().filter(|(_, (_, n))| n.starts_with("vhost-")).map(|(k, _)| *k).collect()
        };
        assert!(!io.is_empty(), "{example}: back-end tracks");
        let host = t.pid("host: *");
        let pcpus = t.tracks_of(host, |n| n.starts_with("pCPU "));
        for tid in io {
            let thread = &t.tracks[&tid].1;
            let items = t.on(tid).iter().filter(|e| name(e).starts_with("tx ") || name(e).starts_with("rx ")).count();
            assert!(items > 0, "{example}: {thread} shows its items");
            let on_cpu = t.spans.iter().filter(|e| pcpus.contains(&e["tid"].as_u64().unwrap()) && name(e) == thread).count();
            assert!(on_cpu > 0, "{example}: a pCPU shows {thread}");
        }
        assert!(!flows(&t).is_empty(), "{example}: flows");
        flows_connect(&flows(&t));
    }
}

/// Recording changes nothing the run does: the summary (wall time aside) is the untraced one's.
#[test]
fn tracing_does_not_perturb_the_run() {
    for example in ["tcp-send.toml", "elvis-7vm.toml", "pmd.toml", "es2-tcp-send.toml"] {
        let c = checked(example, 0.005);
        let plain = simulate(&c);
        let (traced, _) = simulate_traced(&c, TraceOptions { from_s: 0.0, to_s: 1.0, limit: 1_000_000 }).unwrap();
        let strip = |s: &eventpath_sim::summary::Summary| {
            let mut v = serde_json::to_value(s).unwrap();
            v.as_object_mut().unwrap().remove("wall_seconds");
            v
        };
        assert_eq!(strip(&plain.summary), strip(&traced.summary), "{example}");
    }
}

/// A vCPU track accounts for all the time its thread holds a pCPU (guest work and exits; a
/// handler taken in guest mode with no exit — a posted interrupt — cuts the task it
/// interrupts, which resumes after it), and more where host interrupt work took the pCPU from
/// it during an exit.
#[test]
fn vcpu_tracks_account_for_their_pcpu_time() {
    for example in ["tcp-send-posted.toml", "pmd.toml", "virtio-did.toml", "vf-posted.toml"] {
        let t = Timeline::of(&checked(example, 0.005), 0.002, 0.003);
        well_formed(&t, 2000.0, 3000.0);
        flows_connect(&flows(&t));
        let host = t.pid("host: *");
        let pcpus = t.tracks_of(host, |n| n.starts_with("pCPU "));
        for (tid, (_, thread)) in t.tracks.iter().filter(|(_, (_, n))| n.starts_with("vcpu:")) {
            let on_track: f64 = t.on(*tid).iter().map(|e| e["dur"].as_f64().unwrap()).sum();
            let on_cpu: f64 = t.spans.iter().filter(|e| pcpus.contains(&e["tid"].as_u64().unwrap()) && name(e) == thread).map(|e| e["dur"].as_f64().unwrap()).sum();
            assert!(on_cpu > 0.0 && on_track >= on_cpu - 1e-3, "{example}: {thread}: {on_track} µs on its track, {on_cpu} µs on a pCPU");
        }
    }
}
