//! fio and filebench in the guest on a virtio-blk disk (issue 51; `kind = "fio"` and
//! `kind = "filebench"`): DID §5.6 runs fio, "single-threaded … 4KB random disk reads and
//! writes to a virtual disk backed via virtio by a 1GB ramdisk"; ELVIS §4.5 runs filebench,
//! "four write threads and four read threads, each of which performed 4KB random I/O", with
//! O_DIRECT "so that all I/O requests would pass the guest-host boundary". The same jobs run
//! on an assigned NVMe-like disk (`[vm.disk] kind = "nvme"`, `hw/nvme.rs`): its doorbell and its
//! controller replace the kick and the back end; the jobs see no difference but the times.
//!
//! One application per request queue of the disk (`vm.blk`: blk-mq gives each vCPU its own
//! hardware queue where the device has one per vCPU, so a job's requests and their
//! completions stay on its vCPU); the VM's jobs are spread over the queues, job `j` on queue
//! `j % queues`, all of a queue's jobs on that queue's vCPU, taking turns as the guest's
//! scheduler runs woken threads: a job woken by its completion runs until it blocks again.
//!
//! A job keeps `iodepth` O_DIRECT requests in flight. Its turn:
//! * **submit** (`blk.submit_ns` each: fio's own work for the request, the `pread`/`io_submit`
//!   system call, the block layer's bio and tag, virtio-blk's `queue_rq` building one indirect
//!   descriptor) — then, where the job arms a request timer (DID §5.6: fio "sets up a timer
//!   before submitting an I/O request … and clears the timer after each request is completed"),
//!   a LAPIC timer write, and the requests are published with one `avail->idx` store and a kick
//!   where the device asked for one (event index);
//! * it sleeps; the device's back end serves each request (`io/`, its cost the profile's
//!   `[blk]`: the back end's per-request work and the RAM disk's copy) and puts it in the used
//!   ring, interrupting where the driver asked (`virtblk_done` turns callbacks off while it
//!   drains and on after, so every completion that finds them on interrupts);
//! * the interrupt's handler (`guest.virtio_irq_ns`) lets the job's thread see the completions;
//!   it **completes** them (`blk.complete_ns` each, and one `guest.task_wakeup_ns`: the bio's
//!   end, the request freed, the thread woken and back from its system call), clears its timer
//!   (a second write), and submits again.
//!
//! Latency is a request's publication to the end of its completion in the job (fio's
//! completion latency, DID's "I/O completion time"). Reads and writes cost the same on a RAM
//! disk (one copy of the block either way) and random and sequential offsets too (no seek, no
//! read-ahead under O_DIRECT): `rw` says which a request is, for its count, and nothing else.

use crate::engine::{round_ns, Rng, Time};
use crate::metrics::Histogram;
use crate::model::hw::nvme::WRITE;
use crate::model::hw::virtq::Buf;
use crate::model::workload::app::{App, AppLedger, Balance, DevLedger, DevView, Measure, Step};
use crate::model::workload::ctx::Ctx;
use crate::profile::Profile;
use std::collections::VecDeque;

/// Steps: submit `a` requests of job `b`; complete `a` requests of job `b`.
const SUBMIT: u8 = 0;
const COMPLETE: u8 = 1;

/// What a job's requests are.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Mix {
    /// Every request reads.
    Read,
    /// Every request writes.
    Write,
    /// Each request reads with this probability (fio's `rwmixread` / 100).
    Mixed(f64),
}

/// One fio job (a thread) on its queue.
#[derive(Debug)]
struct Job {
    mix: Mix,
    /// Requests it keeps in flight.
    iodepth: u32,
    /// Requests submitted and not yet completed by the job.
    inflight: u32,
    /// Requests submitted whose publication waits for the timer write before it.
    to_publish: u32,
    /// A timer write it owes before it goes on (arm before publishing, clear after completing).
    timer_owed: bool,
    /// Completions its thread has seen (the interrupt came) and not yet completed: when each
    /// request was published, and whether it read.
    seen: VecDeque<(Time, bool)>,
}

impl Job {
    fn has_work(&self, ring_free: u32) -> bool {
        self.timer_owed || self.to_publish > 0 || !self.seen.is_empty() || (self.inflight < self.iodepth && ring_free > 0)
    }
}

/// The jobs of one request queue of a VM's virtio-blk disk.
#[derive(Debug)]
pub struct BlockJobs {
    jobs: Vec<Job>,
    /// The job that runs until it blocks (woken by its completion), else the next to look at.
    turn: usize,
    /// Bytes per request.
    block_bytes: u32,
    /// Jobs arm a request timer around each request.
    timer: bool,
    submit_ns: f64,
    complete_ns: f64,
    wakeup_ns: f64,
    /// Completions in the used ring the driver has not yet seen: (job, published at, read).
    used: VecDeque<(u16, Time, bool)>,
    /// An interrupt came since the jobs last looked.
    irq_seen: bool,
    /// Callbacks are on (the driver asked for an interrupt at the next completion).
    armed: bool,
    rng: Rng,
    /// Window: requests completed, of them reads; lifetime: published, completed.
    completed: u64,
    reads: u64,
    published_life: u64,
    completed_life: u64,
    latency: Histogram,
}

impl BlockJobs {
    /// Queue `queue` of `queues`: the jobs `j` of the VM (`reads`: each job's share of reads)
    /// with `j % queues == queue`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(reads: &[f64], iodepth: u32, block_bytes: u32, timer: bool, queue: u32, queues: u32, p: &Profile, seed: u64, vm_name: &str) -> Self {
        let b = p.blk.as_ref().expect("a checked block workload has a profile with [blk]");
        let mix = |r: f64| match r {
            r if r >= 1.0 => Mix::Read,
            r if r <= 0.0 => Mix::Write,
            r => Mix::Mixed(r),
        };
        let jobs = reads
            .iter()
            .enumerate()
            .filter(|(j, _)| *j as u32 % queues == queue)
            .map(|(_, &r)| Job {
                mix: mix(r), iodepth, inflight: 0, to_publish: 0, timer_owed: false, seen: VecDeque::new() })
            .collect();
        BlockJobs {
            jobs,
            turn: 0,
            block_bytes,
            timer,
            submit_ns: b.submit_ns.value,
            complete_ns: b.complete_ns.value,
            wakeup_ns: p.guest.task_wakeup_ns.value,
            used: VecDeque::new(),
            irq_seen: false,
            armed: false,
            rng: Rng::for_component(seed, &format!("vm:{vm_name}/blk{queue}")),
            completed: 0,
            reads: 0,
            published_life: 0,
            completed_life: 0,
            latency: Histogram::new(),
        }
    }

    /// Hand the completions the interrupt let the driver see to their jobs.
    fn reap(&mut self) {
        if !std::mem::take(&mut self.irq_seen) {
            return;
        }
        while let Some((j, born, read)) = self.used.pop_front() {
            self.jobs[j as usize].seen.push_back((born, read));
        }
    }

    /// The job to run: the one whose turn it is while it has work, else the next that has.
    fn pick(&mut self, ring_free: u32) -> Option<usize> {
        let n = self.jobs.len();
        let j = (0..n).map(|k| (self.turn + k) % n).find(|&j| self.jobs[j].has_work(ring_free))?;
        self.turn = j;
        Some(j)
    }

    fn is_read(&mut self, mix: Mix) -> bool {
        match mix {
            Mix::Read => true,
            Mix::Write => false,
            Mix::Mixed(p) => self.rng.uniform() < p,
        }
    }
}

/// Publish `n` requests of job `j` and notify the device. Each request's direction is drawn
/// here (its buffer's flow carries it: an NVMe-like device serves reads and writes for
/// different times).
fn publish(g: &mut impl Ctx<BlockJobs>, v: u32, j: usize, n: u32) {
    let now = g.now();
    let s = g.app();
    s.published_life += u64::from(n);
    let (bytes, mix) = (s.block_bytes, s.jobs[j].mix);
    for _ in 0..n {
        let write = if g.app().is_read(mix) { 0 } else { WRITE };
        g.txq().add(Buf { flow: j as u16 | write, ..Buf::new(bytes, now) });
    }
    g.notify_tx(v)
}

impl App for BlockJobs {
    /// See the completions an interrupt brought, then run a job with work: its timer write,
    /// its publication, its completions, its next submission; else sleep.
    fn next(g: &mut impl Ctx<Self>, v: u32) {
        let free = g.txq().free();
        let s = g.app();
        s.reap();
        if !std::mem::replace(&mut s.armed, true) {
            g.txq().want_interrupt(); // virtqueue_enable_cb
        }
        let s = g.app();
        let Some(j) = s.pick(free) else {
            s.turn = (s.turn + 1) % s.jobs.len();
            return g.idle(v, None);
        };
        let job = &mut s.jobs[j];
        if std::mem::take(&mut job.timer_owed) {
            return g.timer_write(v);
        }
        if job.to_publish > 0 {
            let n = std::mem::take(&mut job.to_publish);
            return publish(g, v, j, n);
        }
        if !job.seen.is_empty() {
            let n = job.seen.len() as u32;
            let cost = round_ns(s.complete_ns * f64::from(n) + s.wakeup_ns).max(1);
            return g.run_step(v, Step::new(COMPLETE, n, j as u64), cost);
        }
        let n = (job.iodepth - job.inflight).min(free);
        job.inflight += n;
        let cost = round_ns(s.submit_ns * f64::from(n)).max(1);
        g.run_step(v, Step::new(SUBMIT, n, j as u64), cost)
    }

    fn step_done(g: &mut impl Ctx<Self>, v: u32, st: Step) {
        let (now, window_start) = (g.now(), g.window_start());
        let s = g.app();
        let j = st.b as usize;
        match st.kind {
            SUBMIT if s.timer => {
                s.jobs[j].to_publish = st.a;
                g.timer_write(v)
            }
            SUBMIT => publish(g, v, j, st.a),
            _ => {
                for _ in 0..st.a {
                    let (born, read) = s.jobs[j].seen.pop_front().expect("a completion step completes what its job saw");
                    if born >= window_start {
                        s.latency.record(now - born);
                        s.completed += 1;
                        s.reads += u64::from(read);
                    }
                    s.completed_life += 1;
                }
                let job = &mut s.jobs[j];
                job.inflight -= st.a;
                job.timer_owed = s.timer;
                g.enter(v)
            }
        }
    }

    fn step_name(s: Step) -> &'static str {
        if s.kind == SUBMIT { "submit I/O" } else { "complete I/O" }
    }

    /// The device completed a request: the driver sees it at the next interrupt.
    fn tx_used(g: &mut impl Ctx<Self>, b: Buf) {
        g.app().used.push_back((b.flow & !WRITE, b.born, b.flow & WRITE == 0));
    }

    /// The handler of the queue's interrupt ran (callbacks off until the jobs have looked).
    fn tx_interrupt(&mut self, _local: u32) {
        self.irq_seen = true;
        self.armed = false;
    }

    /// Block requests never go on the link (their balance is the workload's own).
    fn sent_life(&self) -> u64 {
        0
    }
    fn reset_metrics(&mut self) {
        self.completed = 0;
        self.reads = 0;
        self.latency.clear();
    }
    fn describe(&self) -> String {
        let inflight: u32 = self.jobs.iter().map(|j| j.inflight).sum();
        format!(
            "block requests published {} completed {} in flight {} used-unseen {} irq_seen {} armed {}",
            self.published_life,
            self.completed_life,
            inflight,
            self.used.len(),
            self.irq_seen,
            self.armed
        )
    }
    fn progress(&self) -> u64 {
        self.completed_life
    }

    /// Requests completed (ops), the completion latency; reads and writes as the two classes
    /// (no packets or payload: a disk's requests are no network traffic; `vms[].block` gives
    /// their bytes).
    fn measure<'a>(&'a self, _d: DevView<'a>) -> Measure<'a> {
        Measure {
            latency: Some(&self.latency),
            ops: Some(self.completed),
            by_class: Some([self.reads, self.completed - self.reads]),
            ..Default::default()
        }
    }

    /// Every request published is completed, seen by its job, in the used ring unseen, or
    /// still in the ring or the back end's hands.
    fn ledger(&self, d: &DevLedger, l: &mut AppLedger) {
        let seen: u64 = self.jobs.iter().map(|j| j.seen.len() as u64).sum();
        l.balances.push(Balance {
            what: "blk published = completed + seen + used unseen + in ring or back end",
            lhs: self.published_life,
            rhs: self.completed_life + seen + self.used.len() as u64 + d.tx_queued,
        });
    }
}
