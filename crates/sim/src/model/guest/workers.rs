//! The server's worker threads in the guest (`tcp_rr.rs`): which worker a complete request
//! wakes, and which worker a vCPU runs next. Worker `w` is homed on the VM's vCPU
//! `w % vcpus`; a worker serves one request at a time (read, work, write, segments).
//!
//! Three ways to hand requests to workers:
//! * per vCPU (netperf TCP_RR; `http` without `workers`): one worker per vCPU serves the
//!   requests completed by its own vCPU's NAPI; work woken by an interrupt starts where the
//!   interrupt ran (DESIGN §3.5).
//! * by connection (memcached's `threads`; `http` with `worker_ports`): connection `c` belongs
//!   to worker `c % workers` — memcached's listener hands each accepted connection to the next
//!   worker thread round robin (`dispatch_conn_new`), and that thread's event loop serves it
//!   for its life, wherever the interrupt that completed a request ran.
//! * shared socket: an idle worker is woken, preferring one homed on the NAPI vCPU, else the
//!   lowest-numbered; with none idle the request waits for the next worker to finish.
//!
//! The workers homed on a vCPU share it as the guest's CFS shares it (`guest_sched.rs`: slices,
//! wake-up preemption, `sched.context_switch_ns` per switch between two of them), so several
//! memcached threads on one vCPU pay switches only when one blocks or its slice ends.
//! Waking a sleeping worker homed on another vCPU costs a reschedule IPI (`irq.rs`).

use crate::engine::Time;
use crate::model::guest::guest_sched::GuestSched;
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
    vcpus: u32,
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
    pub(crate) fn new(w: &Workload, vcpus: u32, p: &Profile) -> Self {
        let (n, dispatch) = match *w {
            Workload::Memcached { threads, .. } => (threads, Dispatch::Connection),
            Workload::Http { workers: Some(n), worker_ports: true, .. } => (n, Dispatch::Connection),
            Workload::Http { workers: Some(n), .. } => (n, Dispatch::Shared),
            Workload::Webbench { workers: Some(n), .. } | Workload::Httperf { workers: Some(n), .. } => (n, Dispatch::Shared),
            // SPECweb's Apache: a pool of processes on one socket, two per vCPU by default (a
            // prior: one can run while another blocks on its socket write).
            Workload::Specweb { workers, .. } => (workers.unwrap_or(2 * vcpus), Dispatch::Shared),
            Workload::Http { worker_ports: true, .. } => (vcpus, Dispatch::Connection),
            _ => (vcpus, Dispatch::PerVcpu),
        };
        Workers {
            dispatch,
            vcpus,
            w: vec![Worker::default(); n as usize],
            backlog: VecDeque::new(),
            current: (0..vcpus).collect(),
            sched: GuestSched::new(n, vcpus, p),
            served: vec![0; vcpus as usize],
        }
    }

    fn home(&self, w: u32) -> u32 {
        w % self.vcpus
    }

    /// A complete request on `conn`, received by the NAPI of local vCPU `napi`. Returns the
    /// local vCPU to send a reschedule IPI to, if a sleeping worker homed elsewhere was woken.
    pub(crate) fn deliver(&mut self, conn: u32, napi: u32) -> Option<u32> {
        let n = self.w.len() as u32;
        let w = match self.dispatch {
            Dispatch::PerVcpu => napi,
            Dispatch::Connection => conn % n,
            Dispatch::Shared => {
                let idle = |w: &u32| !self.w[*w as usize].runnable();
                let near = (napi..n).step_by(self.vcpus as usize).find(idle);
                match near.or_else(|| (0..n).find(idle)) {
                    Some(w) => w,
                    None => {
                        self.backlog.push_back(conn);
                        return None;
                    }
                }
            }
        };
        let sleeping = !self.w[w as usize].runnable();
        self.w[w as usize].queue.push_back(conn);
        let home = self.home(w);
        (sleeping && home != napi).then_some(home)
    }

    /// The worker local vCPU `v` runs next and the guest time the switch to it costs: the
    /// current one while its response is in flight, else the guest scheduler's choice among
    /// the runnable workers homed there. None: none has work (the vCPU blocks).
    pub(crate) fn pick(&mut self, v: u32) -> Option<(u32, Time)> {
        let cur = self.current[v as usize];
        if self.w.get(cur as usize).is_some_and(|w| w.tx.is_some()) {
            return Some((cur, 0));
        }
        let w = &self.w;
        let (next, switch) = self.sched.pick(v, |t| w[t as usize].runnable())?;
        self.current[v as usize] = next;
        Some((next, switch))
    }

    /// Worker `w` was given `ns` of guest time (its virtual runtime advances).
    pub(crate) fn ran(&mut self, w: u32, ns: Time) {
        self.sched.ran(w, ns);
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
