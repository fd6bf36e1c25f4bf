//! The server's worker threads in the guest (`tcp_rr.rs`): which worker a complete request
//! wakes, and which worker a vCPU runs next. Worker `w` starts on the VM's vCPU `w % vcpus`
//! and goes where the guest's CFS puts it (`guest_sched.rs`); a worker serves one request at
//! a time (read, work, write, segments).
//!
//! Three ways to hand requests to workers:
//! * per vCPU (netperf TCP_RR): one worker per vCPU serves the
//!   requests completed by its own vCPU's NAPI; work woken by an interrupt starts where the
//!   interrupt ran (DESIGN §3.5).
//! * by connection (memcached's `threads`; `http` with `worker_ports`): connection `c` belongs
//!   to worker `c % workers` — memcached's listener hands each accepted connection to the next
//!   worker thread round robin (`dispatch_conn_new`), and that thread's event loop serves it
//!   for its life, wherever the interrupt that completed a request ran.
//! * shared socket (`http`, `webbench`, `httperf` with or without `workers`: one per vCPU when
//!   absent, the servers' stock count): an idle worker is woken, preferring one last on the NAPI vCPU, else the
//!   lowest-numbered; with none idle the request waits for the next worker to finish.
//!
//! A complete request wakes its worker as `sock_def_readable` does (`WF_SYNC`, from the NAPI's
//! vCPU); the guest's CFS places it and shares each vCPU between the workers on it (slices,
//! wake-up preemption, `sched.context_switch_ns` per switch between two of them), so several
//! memcached threads on one vCPU pay switches only when one blocks or its slice ends. A
//! worker placed on another vCPU than the NAPI's costs a reschedule IPI there (`irq.rs`).

use crate::engine::Time;
use crate::model::guest::guest_sched::{GuestSched, Placement};
use crate::profile::Profile;
use crate::config::Workload;
use std::collections::VecDeque;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dispatch {
    PerVcpu,
    Connection,
    Shared,
}

/// One worker thread.
#[derive(Debug, Clone, Default)]
pub(crate) struct Worker {
    /// Connections with a complete request handed to this worker, in order.
    pub(crate) queue: VecDeque<u32>,
    /// The response being segmented (connection, bytes left; 0: the close's FIN is next).
    pub(crate) tx: Option<(u32, u32)>,
}

impl Worker {
    fn runnable(&self) -> bool {
        self.tx.is_some() || !self.queue.is_empty()
    }
}

/// The workers of one VM's server.
#[derive(Debug)]
pub(crate) struct Workers {
    dispatch: Dispatch,
    pub(crate) w: Vec<Worker>,
    /// Shared socket: complete requests no worker has taken yet.
    backlog: VecDeque<u32>,
    /// Per vCPU: the worker it runs (until that worker blocks).
    current: Vec<u32>,
    /// The guest scheduler's run queue of each vCPU over the workers homed there.
    sched: GuestSched,
    /// Per vCPU: requests served (lifetime).
    pub(crate) served: Vec<u64>,
}

impl Workers {
    /// The workers of workload `w` in a VM of `vcpus` vCPUs, placed as `at` says.
    pub(crate) fn new(w: &Workload, vcpus: u32, at: Placement, p: &Profile) -> Self {
        let (n, dispatch) = match *w {
            Workload::Memcached { threads, .. } => (threads, Dispatch::Connection),
            Workload::Http { workers: Some(n), worker_ports: true, .. } => (n, Dispatch::Connection),
            Workload::Http { workers: Some(n), .. } => (n, Dispatch::Shared),
            Workload::Webbench { workers: Some(n), .. } | Workload::Httperf { workers: Some(n), .. } => (n, Dispatch::Shared),
            // SPECweb's Apache: a pool of processes on one socket, two per vCPU by default (a
            // prior: one can run while another blocks on its socket write).
            Workload::Specweb { workers, .. } => (workers.unwrap_or(2 * vcpus), Dispatch::Shared),
            Workload::Http { worker_ports: true, .. } => (vcpus, Dispatch::Connection),
            // Stock servers: nginx's `worker_processes auto` and a prefork Apache's processes are
            // one worker per CPU on the one listening socket, as `workers = vcpus` writes it — not
            // one per vCPU serving only its own vCPU's interrupts, which on a single-queue NIC
            // leaves every worker but the interrupt's idle (issue 50 item 3).
            Workload::Http { workers: None, .. } | Workload::Webbench { workers: None, .. } | Workload::Httperf { workers: None, .. } => {
                (vcpus, Dispatch::Shared)
            }
            _ => (vcpus, Dispatch::PerVcpu),
        };
        Workers {
            dispatch,
            w: vec![Worker::default(); n as usize],
            backlog: VecDeque::new(),
            current: (0..vcpus).collect(),
            sched: GuestSched::new(n, vcpus, at, p),
            served: vec![0; vcpus as usize],
        }
    }

    /// A complete request on `conn` at `now`, received by the NAPI of local vCPU `napi`.
    /// Returns the local vCPU to send a reschedule IPI to, if the worker it woke was placed on
    /// another vCPU that must be told.
    pub(crate) fn deliver(&mut self, now: Time, conn: u32, napi: u32) -> Option<u32> {
        let n = self.w.len() as u32;
        let w = match self.dispatch {
            Dispatch::PerVcpu => napi,
            Dispatch::Connection => conn % n,
            Dispatch::Shared => {
                let idle = |w: &u32| !self.w[*w as usize].runnable();
                let near = (0..n).filter(|&w| self.sched.cpu_of(w) == napi).find(idle);
                match near.or_else(|| (0..n).find(idle)) {
                    Some(w) => w,
                    None => {
                        self.backlog.push_back(conn);
                        return None;
                    }
                }
            }
        };
        self.w[w as usize].queue.push_back(conn);
        self.sched.wake(now, w, Some(napi), true)
    }

    /// The worker local vCPU `v` runs next at `now`: the guest scheduler's choice among the
    /// workers on it with work. None: none has work (the vCPU blocks, or burns).
    pub(crate) fn pick(&mut self, now: Time, v: u32) -> Option<u32> {
        let w = &self.w;
        let next = self.sched.pick(now, v, |t| w[t as usize].runnable())?;
        self.current[v as usize] = next;
        Some(next)
    }

    /// The guest scheduler of the workers (the workload brings its clocks up to date).
    pub(crate) fn sched(&mut self) -> &mut GuestSched {
        &mut self.sched
    }

    /// The guest time the switch to the worker [`Self::pick`] gave `v` costs (taken once).
    pub(crate) fn take_switch(&mut self, v: u32) -> Time {
        self.sched.take_switch(v)
    }

    /// The guest scheduler's counts over the window.
    pub(crate) fn counts(&self) -> crate::model::guest::guest_sched::GuestThreads {
        self.sched.counts()
    }

    /// Start a new measurement window.
    pub(crate) fn reset_metrics(&mut self) {
        self.sched.reset_metrics();
    }

    /// A vCPU a scheduling decision left needing a reschedule IPI (taken once).
    pub(crate) fn take_kick(&mut self) -> Option<u32> {
        self.sched.take_kick()
    }

    /// The worker local vCPU `v` runs now (between `pick` and the end of its task).
    pub(crate) fn running(&self, v: u32) -> u32 {
        self.current[v as usize]
    }

    /// Take the next request for worker `w`; counts it as served on local vCPU `v`.
    pub(crate) fn take(&mut self, w: u32, v: u32) -> Option<u32> {
        let c = self.w[w as usize].queue.pop_front()?;
        self.served[v as usize] += 1;
        Some(c)
    }

    /// Worker `w` finished a response: on a shared socket it takes the oldest waiting request.
    pub(crate) fn finish(&mut self, w: u32) {
        self.w[w as usize].tx = None;
        if let Some(c) = self.backlog.pop_front() {
            self.w[w as usize].queue.push_back(c);
        }
    }
}
