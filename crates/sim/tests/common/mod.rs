//! One scenario builder for the simulator's integration tests (`mod common;` in a test file).
//!
//! A test says what its scenario is, not how TOML spells it:
//!
//! ```ignore
//! let out = Sc::new("rr", "es2").duration(0.1).warmup(0.01)
//!     .vm(Vm::new("vm0", 1).delivery("posted").workload("kind = \"udp_rr\"\nrequest_bytes = 1\nresponse_bytes = 1"))
//!     .run();
//! ```
//!
//! The builder writes scenario **text**, not a `Scenario` value: the text goes through the same
//! strict parser (`Scenario::from_toml`) a user's file does, so a test exercises the parser too,
//! error tests can build a scenario and then break it (`.toml().replace(...)`), a failing test
//! prints the scenario it ran, and the tests depend only on the parser's input format, not on
//! the layout of the `Scenario` structs.
//!
//! Tables are written in a fixed order (top-level keys, `[client]`, `[host]`, `[host.io]`,
//! `[[host.cpu_hog]]`, each `[[vm]]` with its `[vm.net]`, `[vm.net.moderation]`,
//! `[vm.halt_poll]`, `[vm.workload]`, then `[profile_overrides.*]`); keys within a table in the
//! order first set. A table with no key is left out. VMs and hogs keep the order they were
//! added in (it decides their random streams).
#![allow(dead_code)] // each test binary uses a part of it

use eventpath_sim::run::{simulate_with_ledger, RunOutput};
use eventpath_sim::scenario::{Checked, Scenario};
use std::fmt;

/// The conservation ledger a run ends with (the one place the tests name its module).
pub use eventpath_sim::model::Conservation;

/// The origin that names a builder's scenario in error messages (`scenario t: ...`).
pub const ORIGIN: &str = "t";

/// A value written as a TOML literal: strings quoted as Rust quotes them (TOML's quoting for
/// printable text), numbers as Rust displays them (so a whole `f64` such as `20000.0` is
/// written `20000`), lists of pCPUs as `[0, 1]`.
pub trait Lit {
    /// The TOML text of the value.
    fn lit(&self) -> String;
}

impl Lit for &str {
    fn lit(&self) -> String {
        format!("{self:?}")
    }
}
macro_rules! displayed {
    ($($t:ty),*) => {$(impl Lit for $t { fn lit(&self) -> String { self.to_string() } })*};
}
displayed!(bool, i32, u32, u64, i64, usize, f64);
impl Lit for &[u32] {
    fn lit(&self) -> String {
        format!("{self:?}")
    }
}

/// The lines of one TOML table, in the order their keys were first set.
#[derive(Clone, Debug, Default)]
struct Table(Vec<String>);

impl Table {
    /// Sets `key` (replacing an earlier value of it in place).
    fn set(&mut self, key: &str, lit: String) {
        self.add(&format!("{key} = {lit}"));
    }

    /// Adds TOML lines (`key = value`, one a line) as they are written; a key already in the
    /// table is replaced in place, so a test can start from a base and change one key.
    fn add(&mut self, lines: &str) {
        for line in lines.lines().filter(|l| !l.trim().is_empty()) {
            let key = line.split_once(" = ").map(|(k, _)| k.trim());
            match key.and_then(|k| self.0.iter().position(|l| l.split_once(" = ").is_some_and(|(lk, _)| lk.trim() == k))) {
                Some(i) => self.0[i] = line.to_string(),
                None => self.0.push(line.to_string()),
            }
        }
    }

    /// Writes the table under `header` (`[host]`, `[[vm]]`, ...); an empty one is left out
    /// unless `always` (an array-of-tables element always is written).
    fn write(&self, out: &mut String, header: &str, always: bool) {
        if self.0.is_empty() && !always {
            return;
        }
        if !header.is_empty() {
            out.push_str(header);
            out.push('\n');
        }
        for l in &self.0 {
            out.push_str(l);
            out.push('\n');
        }
    }
}

/// One `[[vm]]` of a scenario and its sub-tables.
#[derive(Clone, Debug, Default)]
pub struct Vm {
    vm: Table,
    net: Table,
    moderation: Table,
    halt_poll: Table,
    lookbusy: Table,
    disk: Table,
    workload: Table,
}

impl Vm {
    /// A VM with its `name` and `vcpus`; everything else at the scenario's defaults.
    pub fn new(name: &str, vcpus: u32) -> Vm {
        Vm::default().set("name", name).set("vcpus", vcpus)
    }

    /// Any `[[vm]]` key (`vm.set("vcpus", 2)`).
    pub fn set(mut self, key: &str, value: impl Lit) -> Vm {
        self.vm.set(key, value.lit());
        self
    }

    /// `vcpu_pins`: the pCPU of each vCPU thread.
    pub fn pins(self, pcpus: &[u32]) -> Vm {
        self.set("vcpu_pins", pcpus)
    }

    /// `interrupt_delivery` (`emulated`, `apicv`, `posted`, `eli`, `did`, `native`).
    pub fn delivery(self, mode: &str) -> Vm {
        self.set("interrupt_delivery", mode)
    }

    /// `interrupt_routing` (`fixed`, `lowest_priority_rr`, `running_first`, `es2`, `h_balance`).
    pub fn routing(self, router: &str) -> Vm {
        self.set("interrupt_routing", router)
    }

    /// `guest_cpu_burn`: a lowest-priority CPU burn on every vCPU.
    pub fn burn(self, on: bool) -> Vm {
        self.set("guest_cpu_burn", on)
    }

    /// `guest_idle` (`halt`, `poll`).
    pub fn guest_idle(self, idle: &str) -> Vm {
        self.set("guest_idle", idle)
    }

    /// `[[vm]]` lines as written (`key = value`; a key of the wrong shape, for error tests).
    pub fn lines(mut self, lines: &str) -> Vm {
        self.vm.add(lines);
        self
    }

    /// `[vm.net] vhost_pin`: the pCPU of the VM's vhost thread.
    pub fn vhost_pin(mut self, pcpu: u32) -> Vm {
        self.net.set("vhost_pin", pcpu.lit());
        self
    }

    /// `[vm.net]` lines (`kind = "sriov_vf"\nitr_us = 20`, `queue_size = 256`, ...).
    pub fn net(mut self, lines: &str) -> Vm {
        self.net.add(lines);
        self
    }

    /// `[vm.net.moderation]` lines (`kind = "fir"\nitr = 8000`).
    pub fn moderation(mut self, lines: &str) -> Vm {
        self.moderation.add(lines);
        self
    }

    /// `[vm.halt_poll]` lines (`max_halt_poll_ns = 200000`).
    pub fn halt_poll(mut self, lines: &str) -> Vm {
        self.halt_poll.add(lines);
        self
    }

    /// `[vm.lookbusy]` lines (`util_pct = 50`).
    pub fn lookbusy(mut self, lines: &str) -> Vm {
        self.lookbusy.add(lines);
        self
    }

    /// `[vm.disk] kind` (`virtio_blk`, `nvme`): a block workload's disk.
    pub fn disk(mut self, kind: &str) -> Vm {
        self.disk.set("kind", kind.lit());
        self
    }

    /// `[vm.workload]` lines (`kind = "udp_stream"\nmessage_bytes = 512`); called again, it
    /// adds keys or replaces those it names.
    pub fn workload(mut self, lines: &str) -> Vm {
        self.workload.add(lines);
        self
    }

    fn write(&self, out: &mut String) {
        self.vm.write(out, "[[vm]]", true);
        self.net.write(out, "[vm.net]", false);
        self.moderation.write(out, "[vm.net.moderation]", false);
        self.halt_poll.write(out, "[vm.halt_poll]", false);
        self.lookbusy.write(out, "[vm.lookbusy]", false);
        self.disk.write(out, "[vm.disk]", false);
        self.workload.write(out, "[vm.workload]", false);
    }
}

/// A scenario under construction: see the module's documentation.
#[derive(Clone, Debug, Default)]
pub struct Sc {
    top: Table,
    client: Table,
    host: Table,
    io: Table,
    hogs: Vec<Table>,
    vms: Vec<Vm>,
    /// `(section, its lines)` in the order each section was first overridden.
    overrides: Vec<(String, Table)>,
}

impl Sc {
    /// A scenario `name` on `profile` (a built-in name or a path) with no VM yet.
    pub fn new(name: &str, profile: &str) -> Sc {
        Sc::default().set("name", name).set("profile", profile)
    }

    /// Any top-level key (`seed`, ...).
    pub fn set(mut self, key: &str, value: impl Lit) -> Sc {
        self.top.set(key, value.lit());
        self
    }

    /// `seed`: the seed of every random stream.
    pub fn seed(self, seed: u64) -> Sc {
        self.set("seed", seed)
    }

    /// `duration_s`: simulated seconds measured.
    pub fn duration(self, s: f64) -> Sc {
        self.set("duration_s", s)
    }

    /// `warmup_s`: simulated seconds run before measuring.
    pub fn warmup(self, s: f64) -> Sc {
        self.set("warmup_s", s)
    }

    /// Top-level lines as written (`key = value`; a table of the wrong shape, for error tests).
    pub fn lines(mut self, lines: &str) -> Sc {
        self.top.add(lines);
        self
    }

    /// `[client]` lines (`cores = 1`).
    pub fn client(mut self, lines: &str) -> Sc {
        self.client.add(lines);
        self
    }

    /// `[host] pcpus`: how many of the profile's cores the host uses.
    pub fn pcpus(mut self, n: u32) -> Sc {
        self.host.set("pcpus", n.lit());
        self
    }

    /// `[host] idle` (`menu`, `poll`).
    pub fn idle(mut self, idle: &str) -> Sc {
        self.host.set("idle", idle.lit());
        self
    }

    /// `[host]` lines (`virtualization = "bare_metal"`, ...).
    pub fn host(mut self, lines: &str) -> Sc {
        self.host.add(lines);
        self
    }

    /// `[host.io]` lines: the request handling (`handling = "es2"\ncores = [3]`).
    pub fn io(mut self, lines: &str) -> Sc {
        self.io.add(lines);
        self
    }

    /// A `[[host.cpu_hog]]` pinned to `pins` (none: it may run on any pCPU).
    pub fn hog(mut self, pins: &[u32]) -> Sc {
        let mut t = Table::default();
        if !pins.is_empty() {
            t.set("pins", pins.lit());
        }
        self.hogs.push(t);
        self
    }

    /// A `[[host.cpu_hog]]` of `nice` pinned to `pins`.
    pub fn hog_nice(mut self, pins: &[u32], nice: i32) -> Sc {
        self = self.hog(pins);
        self.hogs.last_mut().expect("just added").set("nice", nice.lit());
        self
    }

    /// A VM, after those already added.
    pub fn vm(mut self, vm: Vm) -> Sc {
        self.vms.push(vm);
        self
    }

    /// Changes VM `i` (0: the first added) of a scenario built elsewhere.
    pub fn edit_vm(mut self, i: usize, edit: impl FnOnce(Vm) -> Vm) -> Sc {
        self.vms[i] = edit(self.vms[i].clone());
        self
    }

    /// `[profile_overrides]`: replaces profile parameter `key` (`"host.nic_rx_itr_ns"`).
    pub fn profile_override(mut self, key: &str, value: impl Lit) -> Sc {
        let (section, name) = key.split_once('.').expect("a profile key is section.name");
        let at = match self.overrides.iter().position(|(s, _)| s == section) {
            Some(i) => i,
            None => {
                self.overrides.push((section.to_string(), Table::default()));
                self.overrides.len() - 1
            }
        };
        self.overrides[at].1.set(name, value.lit());
        self
    }

    /// The scenario's TOML text.
    pub fn toml(&self) -> String {
        let mut out = String::new();
        self.top.write(&mut out, "", true);
        self.client.write(&mut out, "[client]", false);
        self.host.write(&mut out, "[host]", false);
        self.io.write(&mut out, "[host.io]", false);
        for h in &self.hogs {
            h.write(&mut out, "[[host.cpu_hog]]", true);
        }
        for vm in &self.vms {
            vm.write(&mut out);
        }
        for (section, t) in &self.overrides {
            t.write(&mut out, &format!("[profile_overrides.{section}]"), false);
        }
        out
    }

    /// Parsed; panics with the error and the text if the parser refuses it.
    pub fn parse(&self) -> Scenario {
        let text = self.toml();
        Scenario::from_toml(ORIGIN, &text).unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    /// Parsed and checked; panics with the error and the text if either refuses it.
    pub fn check(&self) -> Checked {
        let text = self.toml();
        Scenario::from_toml(ORIGIN, &text).and_then(|s| s.check(ORIGIN)).unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    /// The one-line message parsing or checking refuses it with; panics if it is accepted.
    pub fn error(&self) -> String {
        let text = self.toml();
        match Scenario::from_toml(ORIGIN, &text).and_then(|s| s.check(ORIGIN)) {
            Ok(_) => panic!("accepted:\n{text}"),
            Err(e) => e.to_string(),
        }
    }

    /// The one-line message the check refuses it with; panics if the parser refuses it first
    /// or the check accepts it.
    pub fn check_error(&self) -> String {
        match self.parse().check(ORIGIN) {
            Ok(_) => panic!("accepted:\n{self}"),
            Err(e) => e.to_string(),
        }
    }

    /// Runs it to its end: the output (`.summary`) and the conservation ledger.
    pub fn run_with_ledger(&self) -> (RunOutput, Conservation) {
        simulate_with_ledger(&self.check())
    }

    /// Runs it to its end: the output (`.summary`, the summary.json contract).
    pub fn run(&self) -> RunOutput {
        self.run_with_ledger().0
    }

    /// Runs it to its end, holding the run to its conservation ledger and to no stalled flow.
    pub fn run_clean(&self) -> RunOutput {
        let (o, l) = self.run_with_ledger();
        l.check().unwrap();
        assert!(o.summary.stalled_flows.is_empty(), "{:?}", o.summary.stalled_flows);
        o
    }
}

/// VM 0's exits per second of `reason` (0 where it has none).
pub fn exits(o: &RunOutput, reason: &str) -> f64 {
    o.summary.vms[0].exits_per_s[reason].unwrap_or(0.0)
}

/// The exit reasons VM 0 takes at all, sorted.
pub fn exit_kinds(o: &RunOutput) -> Vec<String> {
    let mut v: Vec<String> = o.summary.vms[0].exits_per_s.iter().filter(|(_, x)| x.unwrap_or(0.0) > 0.0).map(|(k, _)| k.to_string()).collect();
    v.sort();
    v
}

/// `sc` is refused by the check with one line that names `key` and says each of `words`.
pub fn refused(sc: Sc, key: &str, words: &[&str]) {
    let m = sc.check_error();
    assert!(!m.contains('\n'), "{m}");
    assert!(m.contains(&format!("key `{key}`")), "{key}: {m}");
    for w in words {
        assert!(m.contains(w), "{w}: {m}");
    }
}

impl fmt::Display for Sc {
    /// The TOML text, so that `format!("{sc}")` and assertion messages show the scenario.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.toml())
    }
}

/// nginx in a 2-vCPU VM with 4 workers on their own ports (examples/nginx-workers.toml), vCPUs
/// on pCPUs 0 and 1, vhost on 2: the device interrupts go to vCPU 0, so a request for a
/// sleeping worker on vCPU 1 wakes it with a reschedule IPI. `lines`: more `[[vm]]` lines.
pub fn nginx_workers(name: &str, profile: &str, mode: &str, lines: &str) -> Sc {
    Sc::new(name, profile).duration(0.1).warmup(0.02).pcpus(3).vm(Vm::new("vm0", 2)
        .pins(&[0, 1])
        .delivery(mode)
        .lines(lines)
        .vhost_pin(2)
        .net("queue_size = 512")
        .workload("kind = \"http\"\nserver = \"nginx\"\nconcurrency = 4\nfile_bytes = 4096\nkeepalive = true\nworkers = 4\nworker_ports = true"))
}
