//! `[host.io]`: which host threads serve the VMs' virtio-net queues (the request-handling seam,
//! DESIGN §3.2). Every decision of a mode is its `eventpath_policy` state machine's; these keys
//! only choose the mode and set its parameters.

use eventpath_policy::elvis::ElvisConfig;
use eventpath_policy::es2::{JointConfig, OptimisticConfig, PerceptiveConfig};
use eventpath_policy::pmd::{PmdConfig, PmdIdle};
use super::key::{k, Key, B, I, PCPUS, S};
use serde::{Deserialize, Serialize};

/// `[host.io]`'s keys (`eventpath keys`; `scenario::keys` lists them in place), a back end's
/// beside the others'.
pub const KEYS: &[Key] = &[
    k("host.io.handling", "", S, "", "\"vhost\"", "Which host threads serve the virtio queues: `vhost` (a vhost-net worker per device), `es2` (ES2's joint threads, §4.2), `elvis` (ELVIS's I/O cores, §3), `pmd` (a poll-mode back end on dedicated cores).", "\"vhost\""),
    k("host.io.cores", "", PCPUS, "pCPUs", "absent: es2's threads unpinned (required for elvis and pmd)", "es2, elvis, pmd: the I/O cores the threads are pinned to in turn; no vCPU may be pinned to one.", "[1]"),
    k("host.io.switch", "", S, "", "\"perceptive\" (es2)", "es2: the TX mode switch, `perceptive` (Algorithm 1) or `optimistic` (Algorithm 2).", "\"perceptive\""),
    k("host.io.quota", "", I, "requests per turn", "4 (es2 perceptive)", "es2 perceptive: requests per turn that keep a TX queue polled, 1..=4096 (ES2 §5.2's TCP value; 16 for UDP).", "4"),
    k("host.io.poll_count", "", I, "polls", "1000 (es2 optimistic)", "es2 optimistic: polls of a TX queue after each received packet, 1..=1000000 (ES2 §5.3).", "1000"),
    k("host.io.combining_level", "", I, "devices", "4 (es2)", "es2: devices per joint thread, 1..=64 (ES2 §5.1).", "4"),
    k("host.io.sleep_us", "", I, "µs", "10 (es2)", "es2: the joint thread's interruptible sleep, 1..=1000 (ES2 §5.2-5.3).", "10"),
    k("host.io.exitless_requests", "", B, "", "true (elvis)", "elvis: poll a queue whose kick rate reaches the threshold; false is fine-grained I/O scheduling only (ELVIS §4.7).", "true"),
    k("host.io.max_work", "", I, "requests", "64 (elvis)", "elvis: requests after which the I/O thread always leaves a queue, 1..=1000000 (our choice).", "64"),
    k("host.io.min_work", "", I, "requests", "8 (elvis, with stuck_us)", "elvis, with stuck_us only: requests before which the thread never leaves a non-empty queue (our choice).", "8"),
    k("host.io.stuck_us", "", I, "µs", "absent: the stuck rule off (the prototype's -1)", "elvis: a queue with pending work is stuck when no new work arrived for this long, 1..=1000000.", "100"),
    k("host.io.poll_start_per_jiffy", "", I, "kicks per jiffy", "1 (elvis)", "elvis, exitless requests: kicks within one jiffy that start polling a queue (the prototype's poll_start_rate).", "1"),
    k("host.io.jiffy_us", "", I, "µs", "4000 (elvis)", "elvis, exitless requests: the jiffy kicks are counted over, 1..=100000 (HZ = 250).", "4000"),
    k("host.io.poll_idle_us", "", I, "µs of wall time", "3000000 (elvis)", "elvis, exitless requests: a polled queue without work this long returns to notifications (the prototype's poll_stop_idle).", "3000000"),
    k("host.io.devices_per_worker", "", I, "devices", "7 (elvis)", "elvis: devices an I/O thread serves before the next one is created, 1..=4096.", "7"),
    k("host.io.poll_start_rate", "", I, "kicks/s", "none", "Removed: refused with the poll_start_per_jiffy value that replaces it.", "1000"),
    k("host.io.burst", "", I, "packets", "32 (pmd)", "pmd: packets taken from a queue per look, 1..=1024 (DPDK's burst).", "32"),
    k("host.io.idle", "", S, "", "\"busy\" (pmd)", "pmd: `busy` (never idles), `sleep` (OVS-DPDK's load-based sleep) or `monitor` (DPDK's wait for a write after empty_polls empty iterations).", "\"busy\""),
    k("host.io.max_sleep_us", "", I, "µs", "250 (pmd, idle = sleep)", "pmd, idle = sleep: the longest sleep, 1..=10000.", "250"),
    k("host.io.empty_polls", "", I, "iterations", "512 (pmd, idle = monitor)", "pmd, idle = monitor: empty iterations before it waits, 1..=1000000.", "512"),
];

/// The request-handling mode of the host's virtio devices.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Handling {
    /// Stock vhost-net: one worker thread per device, woken by kicks ("Baseline").
    #[default]
    Vhost,
    /// ES2 hybrid I/O handling (ES2 §4.2, §5): joint I/O threads of up to `combining_level`
    /// devices, each TX queue under the perceptive or the optimistic mode switch.
    Es2,
    /// ELVIS fine-grained I/O scheduling (ELVIS §2.2, §3): one I/O thread per I/O core serves
    /// every device assigned to it, polling the queues that kick often (exitless requests).
    Elvis,
    /// A poll-mode back end (vhost-user with a DPDK-style PMD, OVS-DPDK): one thread per
    /// dedicated I/O core polls its devices' queues in bursts and never takes a notification
    /// (`eventpath_policy::pmd`).
    Pmd,
}

impl Handling {
    /// Its name in scenarios.
    pub fn key(self) -> &'static str {
        match self {
            Handling::Vhost => "vhost",
            Handling::Es2 => "es2",
            Handling::Elvis => "elvis",
            Handling::Pmd => "pmd",
        }
    }
}

/// ES2's TX mode switch (`[host.io] switch`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Es2Switch {
    /// Perceptive (Algorithm 1, §4.2.2): poll while each turn fills the quota.
    #[default]
    Perceptive,
    /// Optimistic (Algorithm 2, §4.2.3): poll TX `poll_count` times after each received packet.
    Optimistic,
}

/// `[host.io]` as written.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct IoHandling {
    /// `vhost` (default), `es2` or `elvis`.
    #[serde(default, deserialize_with = "super::de::variant")]
    pub handling: Handling,
    /// The I/O cores. es2: the joint threads are pinned to them in turn (default: unpinned,
    /// placed by the host scheduler). elvis (required): its I/O threads, each filled with
    /// `devices_per_worker` devices in order, are pinned to them in turn. No vCPU may be pinned
    /// to one.
    pub cores: Option<Vec<u32>>,
    /// es2: `perceptive` (default) or `optimistic`.
    #[serde(default, deserialize_with = "super::de::variant_opt")]
    pub switch: Option<Es2Switch>,
    /// es2 perceptive: requests per turn that keep a TX queue polled (1..=4096; default 4,
    /// ES2 §5.2's TCP value; 16 for UDP).
    pub quota: Option<u32>,
    /// es2 optimistic: polls of a TX queue after each received packet (1..=1000000; default
    /// 1000, ES2 §5.3).
    pub poll_count: Option<u32>,
    /// es2: devices per joint thread (1..=64; default 4, ES2 §5.1).
    pub combining_level: Option<u32>,
    /// es2: the joint thread's interruptible sleep, µs (1..=1000; default 10, ES2 §5.2–5.3).
    pub sleep_us: Option<u32>,
    /// elvis: poll a queue whose kick rate reaches the threshold (default true); false is
    /// "fine-grained I/O scheduling only" (ELVIS §4.7).
    pub exitless_requests: Option<bool>,
    /// elvis: the scheduler's parameters (`eventpath_policy::elvis::ElvisConfig`; defaults from
    /// ELVIS's prototype where the paper gives none): `max_work` [64 requests, ours],
    /// `min_work` [8, ours; only with `stuck_us`], `stuck_us` [unset: the stuck rule off, as
    /// the prototype's -1], `poll_start_per_jiffy` [1 kick], `jiffy_us` [4000, HZ = 250],
    /// `poll_idle_us` [3000000, wall time], `devices_per_worker` [7].
    pub max_work: Option<u32>,
    /// See `max_work`.
    pub min_work: Option<u32>,
    /// See `max_work`.
    pub stuck_us: Option<u32>,
    /// See `max_work`.
    pub poll_start_per_jiffy: Option<u32>,
    /// See `max_work`.
    pub jiffy_us: Option<u32>,
    /// See `max_work`.
    pub poll_idle_us: Option<u32>,
    /// See `max_work`.
    pub devices_per_worker: Option<u32>,
    /// The former kicks/s threshold: refused with the keys that replace it.
    pub poll_start_rate: Option<u32>,
    /// pmd: packets taken from a queue per look (1..=1024; default 32, DPDK's burst).
    pub burst: Option<u32>,
    /// pmd: `busy` (default: never idles), `sleep` (OVS-DPDK's load-based sleep) or `monitor`
    /// (DPDK's wait for a write after `empty_polls` empty iterations).
    pub idle: Option<PmdIdle>,
    /// pmd, idle = "sleep": the longest sleep, µs (1..=10000; default 250).
    pub max_sleep_us: Option<u32>,
    /// pmd, idle = "monitor": empty iterations before it waits (1..=1000000; default 512).
    pub empty_polls: Option<u32>,
}

impl IoHandling {
    /// ES2's parameters (defaults where unset).
    pub fn es2(&self) -> (Es2Switch, PerceptiveConfig, OptimisticConfig, JointConfig) {
        let joint = JointConfig {
            combining_level: self.combining_level.unwrap_or(JointConfig::default().combining_level),
            sleep_ns: self.sleep_us.map_or(JointConfig::default().sleep_ns, |us| u64::from(us) * 1000),
        };
        (
            self.switch.unwrap_or_default(),
            PerceptiveConfig { quota: self.quota.unwrap_or(PerceptiveConfig::default().quota) },
            OptimisticConfig { max_poll_count: self.poll_count.unwrap_or(OptimisticConfig::default().max_poll_count) },
            joint,
        )
    }

    /// ELVIS's parameters (defaults where unset).
    pub fn elvis(&self) -> ElvisConfig {
        let d = ElvisConfig::default();
        let us = |v: Option<u32>, def: u64| v.map_or(def, |us| u64::from(us) * 1000);
        ElvisConfig {
            max_work: self.max_work.unwrap_or(d.max_work),
            min_work: self.min_work.unwrap_or(d.min_work),
            stuck_ns: self.stuck_us.map(|us| u64::from(us) * 1000).or(d.stuck_ns),
            poll_start_per_jiffy: self.poll_start_per_jiffy.unwrap_or(d.poll_start_per_jiffy),
            jiffy_ns: us(self.jiffy_us, d.jiffy_ns),
            poll_idle_ns: us(self.poll_idle_us, d.poll_idle_ns),
            exitless_requests: self.exitless_requests.unwrap_or(d.exitless_requests),
            devices_per_worker: self.devices_per_worker.unwrap_or(d.devices_per_worker),
        }
    }

    /// The PMD's parameters (defaults where unset).
    pub fn pmd(&self) -> PmdConfig {
        let d = PmdConfig::default();
        PmdConfig {
            burst: self.burst.unwrap_or(d.burst),
            idle: self.idle.unwrap_or(d.idle),
            max_sleep_us: self.max_sleep_us.unwrap_or(d.max_sleep_us),
            empty_polls: self.empty_polls.unwrap_or(d.empty_polls),
        }
    }

    /// Check the keys against the mode and the host (`pcpus`; every VM's vCPU pins).
    pub fn check(&self, pcpus: u32, vcpu_pins: &[(usize, &[u32])]) -> Result<(), String> {
        let es2_keys = [
            ("switch", self.switch.is_some()),
            ("quota", self.quota.is_some()),
            ("poll_count", self.poll_count.is_some()),
            ("combining_level", self.combining_level.is_some()),
            ("sleep_us", self.sleep_us.is_some()),
        ];
        let elvis_keys = [
            ("exitless_requests", self.exitless_requests.is_some()),
            ("max_work", self.max_work.is_some()),
            ("min_work", self.min_work.is_some()),
            ("stuck_us", self.stuck_us.is_some()),
            ("poll_start_per_jiffy", self.poll_start_per_jiffy.is_some()),
            ("jiffy_us", self.jiffy_us.is_some()),
            ("poll_idle_us", self.poll_idle_us.is_some()),
            ("devices_per_worker", self.devices_per_worker.is_some()),
        ];
        let pmd_keys = [
            ("burst", self.burst.is_some()),
            ("idle", self.idle.is_some()),
            ("max_sleep_us", self.max_sleep_us.is_some()),
            ("empty_polls", self.empty_polls.is_some()),
        ];
        let only = |keys: &[(&str, bool)], mode: &str| match keys.iter().find(|(_, set)| *set) {
            Some((k, _)) => Err(format!("key `host.io.{k}`: only for handling = \"{mode}\"; remove it or set host.io.handling = \"{mode}\"")),
            None => Ok(()),
        };
        if let Some(r) = self.poll_start_rate {
            return Err(format!(
                "key `host.io.poll_start_rate`: {r} kicks/s is no longer read; ELVIS starts polling at poll_start_per_jiffy kicks within one jiffy_us (its prototype's poll_start_rate, events per jiffy: default 1 per 4000 µs); for about {r} kicks/s set poll_start_per_jiffy = {} with the default jiffy",
                (u64::from(r) * 4).div_ceil(1000).max(1)
            ));
        }
        if self.handling != Handling::Es2 {
            only(&es2_keys, "es2")?;
        }
        if self.handling != Handling::Elvis {
            only(&elvis_keys, "elvis")?;
        }
        if self.handling != Handling::Pmd {
            only(&pmd_keys, "pmd")?;
        }
        let idle = self.idle.unwrap_or(PmdIdle::Busy);
        if idle != PmdIdle::Sleep && self.max_sleep_us.is_some() {
            return Err("key `host.io.max_sleep_us`: only for idle = \"sleep\"; remove it or set host.io.idle = \"sleep\"".into());
        }
        if idle != PmdIdle::Monitor && self.empty_polls.is_some() {
            return Err("key `host.io.empty_polls`: only for idle = \"monitor\"; remove it or set host.io.idle = \"monitor\"".into());
        }
        // Keys of one ES2 switch, or of ELVIS's polling, that the other choice never reads.
        let switch = self.switch.unwrap_or_default();
        if switch == Es2Switch::Optimistic && self.quota.is_some() {
            return Err("key `host.io.quota`: only for switch = \"perceptive\" (the optimistic switch polls poll_count times instead); remove it".into());
        }
        if switch == Es2Switch::Perceptive && self.poll_count.is_some() {
            return Err("key `host.io.poll_count`: only for switch = \"optimistic\" (the perceptive switch keeps polling while each turn fills the quota); remove it or set switch = \"optimistic\"".into());
        }
        if self.exitless_requests == Some(false) {
            let polling = [("poll_start_per_jiffy", self.poll_start_per_jiffy.is_some()), ("jiffy_us", self.jiffy_us.is_some()), ("poll_idle_us", self.poll_idle_us.is_some())];
            if let Some((k, _)) = polling.iter().find(|(_, set)| *set) {
                return Err(format!("key `host.io.{k}`: with exitless_requests = false no queue is ever polled; remove it"));
            }
        }
        let range = |k: &str, v: Option<u32>, lo: u32, hi: u32, what: &str| match v {
            Some(x) if !(lo..=hi).contains(&x) => Err(format!("key `host.io.{k}`: {x} is not allowed; expected {lo}..={hi} {what}")),
            _ => Ok(()),
        };
        range("quota", self.quota, 1, 4096, "requests per turn")?;
        range("poll_count", self.poll_count, 1, 1_000_000, "polls")?;
        range("combining_level", self.combining_level, 1, 64, "devices per joint thread")?;
        range("sleep_us", self.sleep_us, 1, 1000, "µs")?;
        range("max_work", self.max_work, 1, 1_000_000, "requests")?;
        range("min_work", self.min_work, 1, 1_000_000, "requests")?;
        range("stuck_us", self.stuck_us, 1, 1_000_000, "µs")?;
        range("poll_start_per_jiffy", self.poll_start_per_jiffy, 1, 1_000_000, "kicks per jiffy")?;
        range("jiffy_us", self.jiffy_us, 1, 100_000, "µs (HZ = 1000 is 1000, HZ = 100 is 10000)")?;
        range("poll_idle_us", self.poll_idle_us, 1, 600_000_000, "µs")?;
        range("devices_per_worker", self.devices_per_worker, 1, 4096, "devices per I/O thread")?;
        range("burst", self.burst, 1, 1024, "packets per look")?;
        range("max_sleep_us", self.max_sleep_us, 1, 10_000, "µs (OVS caps pmd-maxsleep at 10 ms)")?;
        range("empty_polls", self.empty_polls, 1, 1_000_000, "iterations")?;
        let elvis = self.elvis();
        let (min, max) = (elvis.min_work, elvis.max_work);
        if min > max {
            // One of them may be a default the scenario never wrote: say which, and what to set.
            return Err(match (self.min_work, self.max_work) {
                (None, _) => format!("key `host.io.max_work`: {max} is below min_work's default {min}; set host.io.min_work to at most {max} as well, or max_work to at least {min}"),
                (_, None) => format!("key `host.io.min_work`: {min} exceeds max_work's default {max}; set host.io.max_work to at least {min} as well, or min_work to at most {max}"),
                _ => format!("key `host.io.min_work`: {min} is not allowed: must not exceed host.io.max_work ({max})"),
            });
        }
        if let (Some(min), None) = (self.min_work, self.stuck_us) {
            return Err(format!("key `host.io.min_work`: {min} is read only by the stuck rule, which is off unless host.io.stuck_us is set (ELVIS's prototype: max_queue_stuck_cycles = -1); set stuck_us or remove min_work"));
        }
        elvis.validate().map_err(|e| crate::error::policy_error("host.io", &e))?;
        let cores = self.cores.as_deref().unwrap_or(&[]);
        match self.handling {
            Handling::Vhost if self.cores.is_some() => {
                return Err("key `host.io.cores`: only for handling = \"es2\" or \"elvis\"; pin a vhost thread with [vm.net] vhost_pin".into())
            }
            Handling::Elvis if cores.is_empty() => {
                return Err("key `host.io.cores`: ELVIS needs at least one I/O core; give the pCPUs its I/O threads run on".into())
            }
            Handling::Pmd if cores.is_empty() => {
                return Err("key `host.io.cores`: a poll-mode back end needs at least one dedicated core; give the pCPUs its PMD threads poll on".into())
            }
            _ => {}
        }
        if self.cores.as_ref().is_some_and(Vec::is_empty) {
            return Err("key `host.io.cores`: [] is not allowed; give at least one pCPU or omit the key".into());
        }
        for (i, &c) in cores.iter().enumerate() {
            if c >= pcpus {
                return Err(format!("key `host.io.cores[{i}]`: pCPU {c} does not exist; the host has pCPUs 0..={}", pcpus - 1));
            }
            if cores[..i].contains(&c) {
                return Err(format!("key `host.io.cores[{i}]`: pCPU {c} is listed twice"));
            }
            if let Some((vm, _)) = vcpu_pins.iter().find(|(_, pins)| pins.contains(&c)) {
                return Err(format!(
                    "key `host.io.cores[{i}]`: pCPU {c} is an I/O core, but vm[{vm}].vcpu_pins pins a vCPU to it; an I/O core runs only I/O threads"
                ));
            }
        }
        Ok(())
    }
}

impl IoHandling {
    /// The keys of the chosen mode, each set (its default where unset); the other modes' unset
    /// (`scenario.resolved.toml`, `scenario/resolve.rs`).
    pub(crate) fn resolved(&self) -> IoHandling {
        let mut r = IoHandling { handling: self.handling, cores: self.cores.clone(), ..Default::default() };
        let us = |ns: u64| u32::try_from(ns / 1000).unwrap_or(u32::MAX);
        match self.handling {
            Handling::Vhost => {}
            Handling::Es2 => {
                let (switch, perceptive, optimistic, joint) = self.es2();
                r.switch = Some(switch);
                r.combining_level = Some(joint.combining_level);
                r.sleep_us = Some(us(joint.sleep_ns));
                match switch {
                    Es2Switch::Perceptive => r.quota = Some(perceptive.quota),
                    Es2Switch::Optimistic => r.poll_count = Some(optimistic.max_poll_count),
                }
            }
            Handling::Elvis => {
                let e = self.elvis();
                r.exitless_requests = Some(e.exitless_requests);
                r.max_work = Some(e.max_work);
                r.devices_per_worker = Some(e.devices_per_worker);
                if let Some(stuck) = e.stuck_ns {
                    // min_work is read only by the stuck rule.
                    r.stuck_us = Some(us(stuck));
                    r.min_work = Some(e.min_work);
                }
                if e.exitless_requests {
                    r.poll_start_per_jiffy = Some(e.poll_start_per_jiffy);
                    r.jiffy_us = Some(us(e.jiffy_ns));
                    r.poll_idle_us = Some(us(e.poll_idle_ns));
                }
            }
            Handling::Pmd => {
                let p = self.pmd();
                r.burst = Some(p.burst);
                r.idle = Some(p.idle);
                match p.idle {
                    PmdIdle::Sleep => r.max_sleep_us = Some(p.max_sleep_us),
                    PmdIdle::Monitor => r.empty_polls = Some(p.empty_polls),
                    PmdIdle::Busy => {}
                }
            }
        }
        r
    }
}
