//! What a workload is to the rest of the model: the [`App`] trait each kind implements, the
//! [`Step`]s and [`ClientEv`]s it interprets, and what it reports ([`Measure`], [`AppLedger`]).
//! Every application imports this module and [`super::ctx`] (which imports neither) — never the
//! registry (`workload/mod.rs`), which imports the applications: the imports among workloads run
//! one way (`tests/layers.rs` checks it).

use crate::model::hw::rxq::RxPkt;
use crate::model::hw::virtq::Buf;
use crate::model::hw::wire::Wire;
use crate::model::workload::ctx::Ctx;

pub use crate::model::workload::ctx::ClientEv;
use crate::metrics::Histogram;

pub use crate::model::hypervisor::vcpu::Step;

/// `part` as a percentage of `whole` (None when `whole` is 0).
pub(crate) fn pct(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| 100.0 * part as f64 / whole as f64)
}

/// What a workload may read of its device for its report: the link towards the client and the
/// host's tap drops.
#[derive(Debug, Clone, Copy)]
pub struct DevView<'a> {
    /// The device's share of the link to the client.
    pub wire: &'a Wire,
    /// Packets from the client dropped at the full tap queue (window).
    pub tap_drops: u64,
}

/// What a workload reports for summary.json (`None`: does not apply).
#[derive(Debug, Default)]
pub struct Measure<'a> {
    /// Packets delivered (to the client, or to the guest application for receive streams).
    pub delivered: Option<u64>,
    /// Their payload bytes.
    pub payload: Option<u64>,
    /// The workload's latency distribution (ns).
    pub latency: Option<&'a Histogram>,
    /// Packets lost, % of sent.
    pub loss_pct: Option<f64>,
    /// Application operations completed (request/response).
    pub ops: Option<u64>,
    /// The latency by what was running when each event began (`irq_source`'s classes).
    pub by_run_class: Option<&'a [Histogram; 3]>,
    /// Clients that failed (webbench: a request timed out), over the whole run.
    pub failed_clients: Option<u64>,
    /// A CPU job's state (`cpu_job`).
    pub job: Option<JobState>,
    /// The httperf client's window counts: connections opened, replies timed out, arrivals
    /// that found no free connection.
    pub open_loop: Option<[u64; 3]>,
    /// SPECweb: finished requests by class, light and heavy (window).
    pub by_class: Option<[u64; 2]>,
    /// The guest's CFS over the application's threads (window).
    pub guest_threads: Option<crate::model::guest::guest_sched::GuestThreads>,
    /// A TCP receiver's window and its sender's losses (`tcp_rx.rs`).
    pub tcp_rx: Option<TcpRxStats>,
    /// A TCP request/response server's client resends (`tcp_rr.rs`).
    pub tcp_rr: Option<TcpRrStats>,
}

/// What the client of a TCP request/response server resent (measured window).
#[derive(Debug, Clone, Copy)]
pub struct TcpRrStats {
    /// Request segments, SYNs and FINs resent after their retransmission timeout.
    pub retransmits: u64,
    /// The most consecutive timeouts one connection reached (its RTO was the initial one ×
    /// 2^n).
    pub backoff_max: u8,
}

/// A TCP stream into the guest: its receive window (`rcvbuf.rs`) and what its sender resent.
#[derive(Debug, Clone, Copy)]
pub struct TcpRxStats {
    /// The window it started at, its largest and its window at the end (bytes).
    pub windows: [u64; 3],
    /// Whether the kernel autotuned it.
    pub autotuned: bool,
    /// The windows its ACKs advertised in the measured window, summed, and how many ACKs.
    pub advertised: (u64, u64),
    /// Segments the client resent (measured window).
    pub retransmits: u64,
    /// Retransmission timeouts that found segments still to resend (measured window).
    pub timeouts: u64,
    /// The client's congestion windows at its ACKs (segments) summed, their count (measured
    /// window), and its window at the end.
    pub cwnd: (u64, u64, u32),
}


/// Where a CPU job (`cpu_job`) stands at the end of a run.
#[derive(Debug, Clone, Copy)]
pub struct JobState {
    /// The CPU work it needs (ns).
    pub work_ns: u64,
    /// The work it got done (ns).
    pub done_ns: u64,
    /// When it finished, ns from the run's start (None: not finished).
    pub finished_at: Option<u64>,
}

/// The device's lifetime counters of packets from the client, which a workload's own
/// conservation lines balance against.
#[derive(Debug, Clone, Copy, Default)]
pub struct DevLedger {
    /// Packets that reached the host from the client.
    pub rx_arrived: u64,
    /// Of those, dropped at the tap queue.
    pub rx_tap_dropped: u64,
    /// Of those, on the tap socket, in the back end's hands, or in the used ring.
    pub rx_queued: u64,
    /// Packets the client sent that are still on the reverse link (its NIC's queue, held in
    /// a TCP socket by it, on the wire, or on the host's way to the tap).
    pub rx_on_link: u64,
    /// Datagrams the client's NIC queue dropped (its qdisc was full).
    pub rx_client_dropped: u64,
    /// Buffers on the TX ring not yet used: published and not taken, or in the back end's
    /// hands (a disk's requests in flight in the host).
    pub tx_queued: u64,
}

/// One conservation identity of a workload (DESIGN §6): `lhs` must equal `rhs`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Balance {
    /// The identity in words (`rr issued + next pending = completed + concurrency`).
    pub what: &'static str,
    /// Its left side.
    pub lhs: u64,
    /// Its right side.
    pub rhs: u64,
}

/// A workload's lines of the conservation ledger (zero where they do not apply), and the
/// identities among them that the workload vouches for.
#[derive(Debug, Default)]
pub struct AppLedger {
    /// UDP receive: datagrams the client sent, the application received, the socket dropped,
    /// the socket holds.
    pub udp_rx: [u64; 4],
    /// TCP request/response: issued, completed, concurrency, next requests pending.
    pub rr: [u64; 4],
    /// TCP request/response: requests served per vCPU of the VM.
    pub served_by_vcpu: Option<Vec<u64>>,
    /// TCP receive stream: segments the client sent.
    pub tcp_rx_sent: u64,
    /// The workload's conservation identities, checked with the host's (`Conservation::check`).
    pub balances: Vec<Balance>,
}

/// A workload kind's behaviour and reports. Its behaviour functions get `g`, the context of the
/// VM it runs in ([`Ctx`]): its own state, its vCPUs' guest scheduler, its driver, its client
/// peer — and nothing else of the host. `v` is the (host-wide) vCPU the call runs on.
pub(crate) trait App: Sized {
    /// vCPU `v` is free: start the application's next step there, or idle.
    fn next(g: &mut impl Ctx<Self>, v: u32);
    /// Its step `s` finished on vCPU `v`.
    fn step_done(g: &mut impl Ctx<Self>, v: u32, s: Step);
    /// The name of step `s` in a timeline.
    fn step_name(s: Step) -> &'static str;
    /// NAPI on vCPU `v` received `pkt` for it; returns whether a step was started (else the
    /// caller re-enters the guest).
    fn deliver(_g: &mut impl Ctx<Self>, _v: u32, _pkt: RxPkt) -> bool {
        false
    }
    /// One of its frames (`b`) reached the client.
    fn at_client(_g: &mut impl Ctx<Self>, _b: Buf) {}
    /// The client NIC's NAPI poll received a batch of its frames (GRO): the client's TCP
    /// decides its ACKs for the batch.
    fn client_batch_done(_g: &mut impl Ctx<Self>) {}
    /// Its client's own event `e`.
    fn client_event(_g: &mut impl Ctx<Self>, _e: ClientEv) {}
    /// The device put one of its TX buffers (`b`) in the used ring (before it goes on the wire).
    fn tx_used(_g: &mut impl Ctx<Self>, _b: Buf) {}
    /// A packet its client sent was dropped at the host's tap queue.
    fn tap_drop(_g: &mut impl Ctx<Self>, _pkt: RxPkt) {}
    /// The run starts: its client's first events.
    fn start(_g: &mut impl Ctx<Self>) {}

    /// The guest's handler of its device's TX interrupt ran (on its local vCPU `local`).
    fn tx_interrupt(&mut self, _local: u32) {}
    /// The guest's handler of a call-function IPI ran its function on its local vCPU `local`.
    fn ipi_handled(_g: &mut impl Ctx<Self>, _local: u32) {}
    /// The guest's handler of an `Msi` vector ran at `now` on its local vCPU `local` (the
    /// measurement window began at `window_start`).
    fn msi_handled(&mut self, _now: crate::engine::Time, _local: u32, _window_start: crate::engine::Time) {}
    /// Packets handed to the driver since the start (conservation).
    fn sent_life(&self) -> u64;
    /// The driver stopped (or woke) its queue.
    fn set_stopped(&mut self, _stopped: bool) {}
    /// Start a new measurement window.
    fn reset_metrics(&mut self);
    /// Its state in a few words (diagnostics).
    fn describe(&self) -> String;
    /// Work its application completed (monotone; the watchdog's progress besides packets).
    fn progress(&self) -> u64 {
        0
    }
    /// Its client has a retransmission timer armed: the flow waits for TCP's RTO (200 ms and
    /// more), a timer that will fire, not a wake-up that may have been lost.
    fn retransmission_armed(&self) -> bool {
        false
    }
    /// It offers no more load and never will (a CPU job that is done, a web client whose every
    /// client failed): the watchdog stops expecting progress of it.
    fn finished(&self) -> bool {
        false
    }
    /// Every user is thinking (SPECweb's sessions), or every request of a paced client is
    /// answered and the next not yet due: no work is owed until a timer ends, so the watchdog
    /// treats it as a flow waiting on a timer.
    fn thinking(&self) -> bool {
        false
    }
    /// What it reports for summary.json, given its device.
    fn measure<'a>(&'a self, d: DevView<'a>) -> Measure<'a>;
    /// The packets its `loss_pct` is a share of (window), where it reports a loss: the weight
    /// of its loss in a VM of several receivers (`[vm.net] vfs`).
    fn loss_base(&self) -> Option<u64> {
        None
    }
    /// Its lines of the conservation ledger and its identities, given its device's counters.
    fn ledger(&self, _d: &DevLedger, _l: &mut AppLedger) {}
    /// Its thread has work to do now (else, when it is the next to run, it idles): which of
    /// several receivers sharing a vCPU runs (`[vm.net] vfs`).
    fn ready(&self) -> bool {
        true
    }
    /// Its threads run on every vCPU of the VM (else one thread on vCPU 0).
    fn on_every_vcpu(&self) -> bool {
        false
    }
    /// What it receives are TCP data segments (the guest's per-byte receive path).
    fn receives_tcp_data(&self) -> bool {
        false
    }
}
