//! Workloads: a guest application and its peer on the client machine. The parameters live in
//! `scenario::Workload`; each kind's behaviour lives in a module of its own (`udp_tx.rs`,
//! `tcp.rs`, `udp_rx.rs`, `tcp_rr.rs`, `tcp_rx.rs`) as an implementation of [`App`]: what its
//! thread does when a vCPU is free, what completing one of its guest steps does, what it does
//! with a packet NAPI hands it, what its client does with the guest's packets and on its own
//! events, and what it reports. The vCPU model and the engine see only [`Step`]s and
//! [`ClientEv`]s, which the workload interprets.
//!
//! Adding a workload: its module with the state struct and `impl App`, one line in each list
//! of this file (`Sender`, `AppKind`, `Sender::new`, `Sender::kind`, `each!`, `with_app!`),
//! its scenario variant, and a test.

pub(crate) mod client;
mod cyclictest;
mod irq_source;
mod request_stream;
pub(crate) mod tcp;
mod tcp_conn;
pub(crate) mod tcp_rr;
mod tcp_rx;
mod udp_ping;
pub(crate) mod udp_rx;
mod udp_tx;

use crate::model::hw::rxq::RxPkt;
use crate::model::workload::tcp::TcpStreams;
use crate::model::workload::tcp_rr::TcpServer;
use crate::model::workload::tcp_rx::TcpReceiver;
use crate::model::workload::irq_source::IrqSource;
use crate::model::workload::request_stream::RequestStream;
use crate::model::workload::udp_ping::UdpPing;
use crate::model::workload::udp_rx::UdpReceiver;
use crate::model::workload::udp_tx::UdpSender;
use crate::model::hw::virtq::Buf;
use crate::model::{Ev, Host, NetDev};
use crate::engine::{EventQueue, Time};
use crate::metrics::Histogram;
use crate::profile::Profile;
use crate::scenario::{Offload, Workload};

pub use crate::model::hypervisor::vcpu::Step;

/// An event of a workload's client (its open-loop source, a request, a timer): the workload's
/// to interpret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientEv {
    /// The workload's event number.
    pub kind: u8,
    /// A small argument (a TCP control flag).
    pub x: u8,
    /// Arguments (a connection, a timer generation, bytes).
    pub a: u32,
    /// Second argument.
    pub b: u32,
}

impl ClientEv {
    /// Event `kind` with argument `a`.
    pub fn new(kind: u8, a: u32) -> Self {
        ClientEv { kind, x: 0, a, b: 0 }
    }

    /// The engine's event for device `dev`'s client.
    pub fn on(self, dev: u32) -> Ev {
        Ev::Client { dev, kind: self.kind, x: self.x, a: self.a, b: self.b }
    }
}

/// `part` as a percentage of `whole` (None when `whole` is 0).
pub(crate) fn pct(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| 100.0 * part as f64 / whole as f64)
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
}

/// A workload's lines of the conservation ledger (zero where they do not apply).
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
}

/// A workload kind's behaviour and reports. Behaviour functions take the whole host, since an
/// application's step touches the rings, the wire and the vCPUs; `vm` is the VM it runs in.
pub(crate) trait App: Sized {
    /// Its state in VM `vm`'s [`Sender`].
    fn state(h: &mut Host, vm: usize) -> &mut Self;
    /// vCPU `v` is free: start the application's next step there, or idle.
    fn next(h: &mut Host, now: Time, v: u32, vm: usize, q: &mut EventQueue<Ev>);
    /// Its step `s` finished on vCPU `v`.
    fn step_done(h: &mut Host, now: Time, v: u32, vm: usize, s: Step, q: &mut EventQueue<Ev>);
    /// The name of step `s` in a timeline.
    fn step_name(s: Step) -> &'static str;
    /// NAPI on vCPU `v` received `pkt` for it; returns whether a step was started (else the
    /// caller re-enters the guest).
    fn deliver(_h: &mut Host, _now: Time, _v: u32, _vm: usize, _pkt: RxPkt, _q: &mut EventQueue<Ev>) -> bool {
        false
    }
    /// One of its frames (`b`) reached the client on device `dev`.
    fn at_client(_h: &mut Host, _now: Time, _dev: u32, _b: Buf, _q: &mut EventQueue<Ev>) {}
    /// Its client's own event `e`.
    fn client_event(_h: &mut Host, _now: Time, _dev: u32, _e: ClientEv, _q: &mut EventQueue<Ev>) {}
    /// The device put one of its TX buffers (`b`) in the used ring (before it goes on the wire).
    fn tx_used(_h: &mut Host, _now: Time, _dev: u32, _b: Buf, _q: &mut EventQueue<Ev>) {}
    /// The guest's handler of its device's TX interrupt ran on vCPU `v`.
    fn tx_interrupt(_h: &mut Host, _now: Time, _v: u32, _vm: usize) {}
    /// The guest's handler of an `Msi` vector ran on vCPU `v`.
    fn msi_handled(_h: &mut Host, _now: Time, _v: u32, _vm: usize) {}
    /// A packet its client sent was dropped at the host's tap queue.
    fn tap_drop(_h: &mut Host, _now: Time, _dev: u32, _pkt: RxPkt, _q: &mut EventQueue<Ev>) {}
    /// The run starts: its client's first events.
    fn start(_h: &mut Host, _dev: u32, _q: &mut EventQueue<Ev>) {}

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
    /// What it reports for summary.json, given its device.
    fn measure<'a>(&'a self, d: &'a NetDev) -> Measure<'a>;
    /// Its lines of the conservation ledger.
    fn ledger(&self, _l: &mut AppLedger) {}
    /// Its threads run on every vCPU of the VM (else one thread on vCPU 0).
    fn on_every_vcpu(&self) -> bool {
        false
    }
    /// What it receives are TCP data segments (the guest's per-byte receive path).
    fn receives_tcp_data(&self) -> bool {
        false
    }
}

/// No application (`[vm.workload]` absent): the vCPUs idle or run the guest CPU burn.
#[derive(Debug)]
pub struct IdleApp;

impl App for IdleApp {
    state_in!(Idle);
    fn next(h: &mut Host, now: Time, v: u32, _vm: usize, q: &mut EventQueue<Ev>) {
        h.idle(now, v, None, q)
    }
    fn step_done(_h: &mut Host, _now: Time, _v: u32, _vm: usize, _s: Step, _q: &mut EventQueue<Ev>) {
        unreachable!("an idle VM has no steps")
    }
    fn step_name(_s: Step) -> &'static str {
        "idle"
    }
    fn sent_life(&self) -> u64 {
        0
    }
    fn reset_metrics(&mut self) {}
    fn describe(&self) -> String {
        "idle".into()
    }
    fn measure<'a>(&'a self, _d: &'a NetDev) -> Measure<'a> {
        Measure::default()
    }
}

/// The application of a VM, by kind.
#[derive(Debug)]
pub enum Sender {
    /// netperf UDP_STREAM.
    Udp(UdpSender),
    /// netperf TCP_STREAM.
    Tcp(TcpStreams),
    /// netperf UDP_STREAM towards the guest, UDP_RR, ping.
    UdpRx(UdpReceiver),
    /// A TCP request/response server: netperf TCP_RR, memcached, a web server.
    Server(TcpServer),
    /// netperf TCP_STREAM towards the guest.
    TcpRx(TcpReceiver),
    /// A fixed-rate UDP ping from the guest.
    Ping(UdpPing),
    /// cyclictest.
    Cyclic(crate::model::workload::cyclictest::Cyclictest),
    /// The KVM testbed's guest: requests straight into the virtqueue.
    Requests(RequestStream),
    /// The KVM testbed's interrupt generator.
    Irqs(IrqSource),
    /// No application.
    Idle(IdleApp),
}

/// The kind of a [`Sender`], to dispatch to its [`App`] while the host is borrowed mutably.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppKind {
    /// [`UdpSender`].
    Udp,
    /// [`TcpStreams`].
    Tcp,
    /// [`UdpReceiver`].
    UdpRx,
    /// [`TcpServer`].
    Server,
    /// [`TcpReceiver`].
    TcpRx,
    /// [`UdpPing`].
    Ping,
    /// [`crate::model::workload::cyclictest::Cyclictest`].
    Cyclic,
    /// [`RequestStream`].
    Requests,
    /// [`IrqSource`].
    Irqs,
    /// [`IdleApp`].
    Idle,
}

/// [`App::state`] for the app held in `Sender::$variant`.
macro_rules! state_in {
    ($variant:ident) => {
        fn state(h: &mut Host, vm: usize) -> &mut Self {
            match &mut h.senders[vm] {
                Sender::$variant(s) => s,
                _ => unreachable!(concat!("VM's application is not a ", stringify!($variant))),
            }
        }
    };
}
pub(crate) use state_in;

/// `$e` with `$x` bound to the state inside `$s` (a `Sender`), whatever its kind.
macro_rules! each {
    ($s:expr, $x:ident => $e:expr) => {
        match $s {
            Sender::Udp($x) => $e,
            Sender::Tcp($x) => $e,
            Sender::UdpRx($x) => $e,
            Sender::Server($x) => $e,
            Sender::TcpRx($x) => $e,
            Sender::Ping($x) => $e,
            Sender::Cyclic($x) => $e,
            Sender::Requests($x) => $e,
            Sender::Irqs($x) => $e,
            Sender::Idle($x) => $e,
        }
    };
}

/// `$e` with the type `$T` set to the [`App`] of kind `$k`.
macro_rules! with_app {
    ($k:expr, $T:ident => $e:expr) => {
        match $k {
            AppKind::Udp => {
                type $T = UdpSender;
                $e
            }
            AppKind::Tcp => {
                type $T = TcpStreams;
                $e
            }
            AppKind::UdpRx => {
                type $T = UdpReceiver;
                $e
            }
            AppKind::Server => {
                type $T = TcpServer;
                $e
            }
            AppKind::TcpRx => {
                type $T = TcpReceiver;
                $e
            }
            AppKind::Ping => {
                type $T = UdpPing;
                $e
            }
            AppKind::Cyclic => {
                type $T = crate::model::workload::cyclictest::Cyclictest;
                $e
            }
            AppKind::Requests => {
                type $T = RequestStream;
                $e
            }
            AppKind::Irqs => {
                type $T = IrqSource;
                $e
            }
            AppKind::Idle => {
                type $T = IdleApp;
                $e
            }
        }
    };
}

impl Sender {
    /// The application `w` describes (None: no workload), in VM `vm_name` of `vcpus` vCPUs
    /// whose device negotiated offloads `off`.
    pub fn new(w: Option<&Workload>, vcpus: u32, p: &Profile, seed: u64, vm_name: &str, off: Offload) -> Self {
        let Some(w) = w else { return Sender::Idle(IdleApp) };
        match *w {
            Workload::TcpReceive { message_bytes, window_bytes } => {
                Sender::TcpRx(TcpReceiver::new(message_bytes, window_bytes, p))
            }
            Workload::TcpRr { .. } | Workload::Memcached { .. } | Workload::Http { .. } => {
                Sender::Server(TcpServer::new(w, vcpus, p, seed, vm_name, off))
            }
            Workload::UdpStream { message_bytes, rate_pps } => {
                Sender::Udp(UdpSender::new(message_bytes, rate_pps, p, seed, vm_name))
            }
            Workload::TcpStream { message_bytes, window_bytes, streams } => {
                Sender::Tcp(TcpStreams::new(message_bytes, window_bytes, streams, vcpus, p, off))
            }
            Workload::UdpReceive { message_bytes, rate_pps } => {
                Sender::UdpRx(UdpReceiver::new(message_bytes, Some(rate_pps), None, p))
            }
            Workload::UdpPing { message_bytes, interval_us } => {
                Sender::Ping(UdpPing::new(message_bytes, interval_us, p, seed, vm_name))
            }
            Workload::Cyclictest { interval_us } => Sender::Cyclic(crate::model::workload::cyclictest::Cyclictest::new(interval_us, p)),
            Workload::IrqSource { interval_us, vcpu } => Sender::Irqs(IrqSource::new(interval_us, vcpu, vcpus, seed, vm_name)),
            Workload::RequestStream { rate, window, consume } => {
                Sender::Requests(RequestStream::new(rate, window.unwrap_or(0), consume == crate::scenario::Consume::Irq, p))
            }
            Workload::UdpRr { request_bytes, response_bytes, interval_us } => Sender::UdpRx(UdpReceiver::new(
                request_bytes,
                interval_us.map(|i| 1e6 / i),
                Some(response_bytes),
                p,
            )),
        }
    }

    /// Its kind.
    pub fn kind(&self) -> AppKind {
        match self {
            Sender::Udp(_) => AppKind::Udp,
            Sender::Tcp(_) => AppKind::Tcp,
            Sender::UdpRx(_) => AppKind::UdpRx,
            Sender::Server(_) => AppKind::Server,
            Sender::TcpRx(_) => AppKind::TcpRx,
            Sender::Ping(_) => AppKind::Ping,
            Sender::Cyclic(_) => AppKind::Cyclic,
            Sender::Requests(_) => AppKind::Requests,
            Sender::Irqs(_) => AppKind::Irqs,
            Sender::Idle(_) => AppKind::Idle,
        }
    }

    /// No application runs (the VM only idles or burns CPU).
    pub fn is_idle(&self) -> bool {
        self.kind() == AppKind::Idle
    }

    /// See [`App::describe`].
    pub fn describe(&self) -> String {
        each!(self, s => s.describe())
    }
    /// See [`App::sent_life`].
    pub fn sent_life(&self) -> u64 {
        each!(self, s => s.sent_life())
    }
    /// See [`App::set_stopped`].
    pub fn set_stopped(&mut self, stopped: bool) {
        each!(self, s => s.set_stopped(stopped))
    }
    pub(crate) fn reset_metrics(&mut self) {
        each!(self, s => s.reset_metrics())
    }
    /// See [`App::progress`].
    pub fn progress(&self) -> u64 {
        each!(self, s => s.progress())
    }
    /// See [`App::retransmission_armed`].
    pub fn retransmission_armed(&self) -> bool {
        each!(self, s => s.retransmission_armed())
    }
    /// See [`App::measure`].
    pub fn measure<'a>(&'a self, d: &'a NetDev) -> Measure<'a> {
        each!(self, s => s.measure(d))
    }
    /// See [`App::ledger`].
    pub fn ledger(&self) -> AppLedger {
        let mut l = AppLedger::default();
        each!(self, s => s.ledger(&mut l));
        l
    }
    /// See [`App::on_every_vcpu`].
    pub fn on_every_vcpu(&self) -> bool {
        each!(self, s => s.on_every_vcpu())
    }
    /// See [`App::receives_tcp_data`].
    pub fn receives_tcp_data(&self) -> bool {
        each!(self, s => s.receives_tcp_data())
    }
}

impl Host {
    /// The kind of VM `vm`'s application.
    fn app_kind(&self, vm: usize) -> AppKind {
        self.senders[vm].kind()
    }

    /// The vCPU is free: what does the workload do next?
    pub(crate) fn workload_next(&mut self, now: Time, v: u32, q: &mut EventQueue<Ev>) {
        let vm = self.vcpus[v as usize].vm as usize;
        if v != self.vms[vm].vcpus[0] && !self.senders[vm].on_every_vcpu() {
            return self.idle(now, v, None, q);
        }
        with_app!(self.app_kind(vm), T => T::next(self, now, v, vm, q))
    }

    /// A workload's step finished on vCPU `v`.
    pub(crate) fn app_step_done(&mut self, now: Time, v: u32, s: Step, q: &mut EventQueue<Ev>) {
        let vm = self.vcpus[v as usize].vm as usize;
        with_app!(self.app_kind(vm), T => T::step_done(self, now, v, vm, s, q))
    }

    /// The name of VM `vm`'s step `s` in a timeline.
    pub(crate) fn app_step_name(&self, vm: usize, s: Step) -> &'static str {
        with_app!(self.app_kind(vm), T => T::step_name(s))
    }

    /// NAPI on vCPU `v` received `pkt` for the application; returns whether a step started.
    pub(crate) fn app_deliver(&mut self, now: Time, v: u32, vm: usize, pkt: RxPkt, q: &mut EventQueue<Ev>) -> bool {
        with_app!(self.app_kind(vm), T => T::deliver(self, now, v, vm, pkt, q))
    }

    /// A frame of device `dev` reached the client.
    pub(crate) fn app_at_client(&mut self, now: Time, dev: u32, b: Buf, q: &mut EventQueue<Ev>) {
        let vm = self.devs[dev as usize].vm as usize;
        with_app!(self.app_kind(vm), T => T::at_client(self, now, dev, b, q))
    }

    /// Device `dev`'s client event.
    pub(crate) fn app_client_event(&mut self, now: Time, dev: u32, e: ClientEv, q: &mut EventQueue<Ev>) {
        let vm = self.devs[dev as usize].vm as usize;
        with_app!(self.app_kind(vm), T => T::client_event(self, now, dev, e, q))
    }

    /// Device `dev` used TX buffer `b`.
    pub(crate) fn app_tx_used(&mut self, now: Time, dev: u32, b: Buf, q: &mut EventQueue<Ev>) {
        let vm = self.devs[dev as usize].vm as usize;
        with_app!(self.app_kind(vm), T => T::tx_used(self, now, dev, b, q))
    }

    /// VM `vm`'s TX interrupt handler ran on vCPU `v`.
    pub(crate) fn app_tx_interrupt(&mut self, now: Time, v: u32, vm: usize) {
        with_app!(self.app_kind(vm), T => T::tx_interrupt(self, now, v, vm))
    }

    /// VM `vm`'s handler of an `Msi` vector ran on vCPU `v`.
    pub(crate) fn app_msi_handled(&mut self, now: Time, v: u32, vm: usize) {
        with_app!(self.app_kind(vm), T => T::msi_handled(self, now, v, vm))
    }

    /// A packet device `dev`'s client sent was dropped at the tap queue.
    pub(crate) fn app_tap_drop(&mut self, now: Time, dev: u32, pkt: RxPkt, q: &mut EventQueue<Ev>) {
        let vm = self.devs[dev as usize].vm as usize;
        with_app!(self.app_kind(vm), T => T::tap_drop(self, now, dev, pkt, q))
    }

    /// The run starts: device `dev`'s client's first events.
    pub(crate) fn app_start(&mut self, dev: u32, q: &mut EventQueue<Ev>) {
        let vm = self.devs[dev as usize].vm as usize;
        with_app!(self.app_kind(vm), T => T::start(self, dev, q))
    }
}
