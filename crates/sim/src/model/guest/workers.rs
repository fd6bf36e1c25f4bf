//! The server's worker threads in the guest (`tcp_rr.rs`): which worker a complete request
//! wakes, and which worker a vCPU runs next. Worker `w` is homed on the VM's vCPU
//! `w % vcpus`; a worker serves one request at a time (read, work, write, segments).
//!
//! Three ways to hand requests to workers:
//! * per vCPU (no `workers` key): one worker per vCPU serves the requests completed by its own
//!   vCPU's NAPI; work woken by an interrupt starts where the interrupt ran (DESIGN §3.5).
//! * ports (`worker_ports`): connection `c` belongs to worker `c % workers`.
//! * shared socket: an idle worker is woken, preferring one homed on the NAPI vCPU, else the
//!   lowest-numbered; with none idle the request waits for the next worker to finish.
//!
//! Waking a sleeping worker homed on another vCPU costs a reschedule IPI (`irq.rs`).

use crate::scenario::Workload;
use std::collections::VecDeque;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dispatch {
    PerVcpu,
    Ports,
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
    /// Per vCPU: requests served (lifetime).
    pub(crate) served: Vec<u64>,
}

impl Workers {
    pub(crate) fn new(w: &Workload, vcpus: u32) -> Self {
        let (n, dispatch) = match *w {
            Workload::Http { workers: Some(n), worker_ports: true, .. } => (n, Dispatch::Ports),
            Workload::Http { workers: Some(n), .. } => (n, Dispatch::Shared),
            Workload::Http { worker_ports: true, .. } => (vcpus, Dispatch::Ports),
            _ => (vcpus, Dispatch::PerVcpu),
        };
        Workers {
            dispatch,
            vcpus,
            w: vec![Worker::default(); n as usize],
            backlog: VecDeque::new(),
            current: (0..vcpus).collect(),
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
            Dispatch::Ports => conn % n,
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

    /// The worker local vCPU `v` runs next: the current one while its response is in flight,
    /// else the next runnable worker homed there after it (round robin per request: a fair
    /// share between workers, as CFS gives, so no worker starves while another stays busy).
    pub(crate) fn pick(&mut self, v: u32) -> Option<u32> {
        let cur = self.current[v as usize];
        if self.w.get(cur as usize).is_some_and(|w| w.tx.is_some()) {
            return Some(cur);
        }
        let n = self.w.len() as u32;
        let homed = n.saturating_sub(v).div_ceil(self.vcpus);
        let k0 = cur / self.vcpus + 1;
        let w = (0..homed).map(|k| v + ((k0 + k) % homed) * self.vcpus).find(|&w| self.w[w as usize].runnable())?;
        self.current[v as usize] = w;
        Some(w)
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
