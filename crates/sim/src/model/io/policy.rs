//! The back ends' registry: the policy behind each I/O thread, one variant per back end,
//! dispatched statically ([`Policy`], `each!`), and which threads each shared back end runs
//! ([`shared_threads`]). Adding a back end is one line in each of the three (and its `mod`
//! line in `mod.rs`); its file holds the rest (`tests/backends.rs`).

use crate::config::{Handling, IoHandling};
use crate::engine::Time;
use crate::model::io::queues::{DevRings, Notice, Work};
use crate::model::io::seam::{Backend, Decision, Take, Turn, View};
use crate::model::io::{elvis, es2, pmd, vhost};

/// The back ends: the policy behind a thread.
pub(crate) enum Policy {
    Vhost(vhost::VhostIo),
    Es2(es2::Es2Io),
    Elvis(elvis::ElvisIo),
    Pmd(pmd::PmdIo),
}

macro_rules! each {
    ($self:ident, $p:ident => $e:expr) => {
        match $self {
            Policy::Vhost($p) => $e,
            Policy::Es2($p) => $e,
            Policy::Elvis($p) => $e,
            Policy::Pmd($p) => $e,
        }
    };
}

/// The threads of a back end that serves the host's backed devices `devs` (each VM's first)
/// from shared threads, each a group of devices (ES2's joint threads, ELVIS's I/O cores'
/// workers, PMDs): per thread its name, its devices and its policy.
pub(crate) fn shared_threads(io: &IoHandling, vhost: &eventpath_policy::vhost::VhostConfig, devs: &[u32], replies: &dyn Fn(u32) -> bool) -> Vec<(String, Vec<u32>, Policy)> {
    fn wrap<P>(threads: Vec<(String, Vec<u32>, P)>, variant: fn(P) -> Policy) -> Vec<(String, Vec<u32>, Policy)> {
        threads.into_iter().map(|(name, devs, p)| (name, devs, variant(p))).collect()
    }
    match io.handling {
        Handling::Es2 => wrap(es2::threads(io, vhost, devs, replies), Policy::Es2),
        Handling::Elvis => wrap(elvis::threads(io, devs), Policy::Elvis),
        Handling::Pmd => wrap(pmd::threads(io, devs), Policy::Pmd),
        Handling::Vhost => unreachable!("vhost-net: a worker per device"),
    }
}

impl Backend for Policy {
    fn notice<R: DevRings + ?Sized>(&mut self, now: Time, local: usize, dev: u32, n: Notice, v: &mut View<'_, R>) {
        each!(self, p => p.notice(now, local, dev, n, v))
    }
    fn decide<R: DevRings + ?Sized>(&mut self, now: Time, devs: &[u32], v: &mut View<'_, R>) -> Decision {
        each!(self, p => p.decide(now, devs, v))
    }
    fn take<R: DevRings + ?Sized>(&mut self, now: Time, turn: Turn, dev: u32, v: &mut View<'_, R>) -> Take {
        each!(self, p => p.take(now, turn, dev, v))
    }
    fn after_item<R: DevRings + ?Sized>(&mut self, now: Time, turn: Turn, dev: u32, w: Work, v: &mut View<'_, R>) -> bool {
        each!(self, p => p.after_item(now, turn, dev, w, v))
    }
    fn sees_write(&self, n: Notice) -> bool {
        each!(self, p => p.sees_write(n))
    }
    fn empty_look_costs(&self) -> bool {
        each!(self, p => p.empty_look_costs())
    }
    fn yields_between_turns(&self) -> bool {
        each!(self, p => p.yields_between_turns())
    }
    fn polls(&self) -> Option<(u64, u64)> {
        each!(self, p => p.polls())
    }
    fn reset_metrics(&mut self) {
        each!(self, p => p.reset_metrics())
    }
    fn runs_from_start(&self) -> bool {
        each!(self, p => p.runs_from_start())
    }
    fn kernel_path(&self) -> bool {
        each!(self, p => p.kernel_path())
    }
}

