//! Workloads: a guest application and its peer on the client machine. The parameters live in
//! `scenario::Workload`; each kind's behaviour lives in a module of its own (`udp_tx.rs`,
//! `tcp.rs`, `udp_rx.rs`, `tcp_rr.rs`, `tcp_rx.rs`, ...) as an implementation of [`App`]
//! (`app.rs`): what its thread does when a vCPU is free, what completing one of its guest steps
//! does, what it does with a packet NAPI hands it, what its client does with the guest's packets
//! and on its own events, and what it reports. An application touches the host only through its
//! guest context ([`ctx::Ctx`]); the vCPU model and the engine see only [`Step`]s and
//! [`ClientEv`]s, which the workload interprets.
//!
//! This module is the registry: it imports every application (they import `app.rs`, `ctx.rs`,
//! `net.rs`, never this module) and lists them once, in `apps!`, which makes the [`Sender`]
//! enum, its [`AppKind`], and the static dispatch (`each!`, `with_app!`, [`Held`]) the model
//! root uses to call an application while the host is borrowed.
//!
//! Adding a workload: its module (state struct + `impl App`) and its `mod` line, one line in
//! `apps!`, one arm in [`Sender::new`]; then its scenario variant and a test.

pub(crate) mod app;
pub(crate) mod client;
pub(crate) mod ctx;
mod cc;
mod cpu_job;
mod cyclictest;
mod fio;
mod idle;
mod ipi_pingpong;
mod irq_source;
pub(crate) mod net;
mod request_stream;
mod tcp;
mod tcp_rr;
mod rcvbuf;
mod tcp_rx;
mod udp_ping;
mod udp_rx;
mod udp_tx;

use crate::model::workload::app::DevView;
pub(crate) use crate::model::workload::cpu_job::CpuJob;
pub(crate) use crate::model::workload::cyclictest::Cyclictest;
pub(crate) use crate::model::workload::fio::BlockJobs;
pub(crate) use crate::model::workload::idle::IdleApp;
pub(crate) use crate::model::workload::irq_source::IrqSource;
pub(crate) use crate::model::workload::ipi_pingpong::IpiPingPong;
pub(crate) use crate::model::workload::request_stream::RequestStream;
pub(crate) use crate::model::workload::tcp::TcpStreams;
pub(crate) use crate::model::workload::tcp_rr::TcpServer;
pub(crate) use crate::model::workload::tcp_rx::TcpReceiver;
pub(crate) use crate::model::workload::udp_ping::UdpPing;
pub(crate) use crate::model::workload::udp_rx::UdpReceiver;
pub(crate) use crate::model::workload::udp_tx::UdpSender;
use crate::engine::Time;
use crate::profile::Profile;
use crate::config::{Offload, Workload};

pub use crate::model::workload::app::{AppLedger, ClientEv, DevLedger, Measure, Step};
pub(crate) use crate::model::workload::app::App;

/// An application's state inside a [`Sender`] of its kind (the guest context's `app()`).
pub(crate) trait Held: App {
    /// `s`'s state, which must be of this kind.
    fn held(s: &mut Sender) -> &mut Self;
}

/// The one list of applications: `Variant(Type)` — the [`Sender`] variant holding it, and its
/// [`AppKind`]. Makes both enums, [`Sender::kind`], [`Held`] for each type, and the dispatch
/// macros `each!` (`$e` with `$x` bound to a `Sender`'s state, whatever its kind) and
/// `with_app!` (`$e` with the type `$T` set to the `App` of an `AppKind`). (`$d` is a `$`
/// handed in, for the macros made inside a macro.)
macro_rules! apps {
    ($d:tt $($(#[$doc:meta])* $V:ident($T:ident)),* $(,)?) => {
        /// The application of a VM, by kind.
        #[derive(Debug)]
        pub enum Sender {
            $($(#[$doc])* $V($T),)*
        }

        /// The kind of a [`Sender`], to dispatch to its [`App`] while the host is borrowed.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum AppKind {
            $($(#[$doc])* $V,)*
        }

        impl Sender {
            /// Its kind.
            pub fn kind(&self) -> AppKind {
                match self {
                    $(Sender::$V(_) => AppKind::$V,)*
                }
            }
        }

        $(impl Held for $T {
            fn held(s: &mut Sender) -> &mut Self {
                match s {
                    Sender::$V(x) => x,
                    _ => unreachable!(concat!("VM's application is not a ", stringify!($V))),
                }
            }
        })*

        macro_rules! each {
            ($d s:expr, $d x:ident => $d e:expr) => {
                match $d s {
                    $($crate::model::workload::Sender::$V($d x) => $d e,)*
                }
            };
        }

        macro_rules! with_app {
            ($d k:expr, $d A:ident => $d e:expr) => {
                match $d k {
                    $($crate::model::workload::AppKind::$V => {
                        type $d A = $crate::model::workload::$T;
                        $d e
                    })*
                }
            };
        }
        pub(crate) use with_app;
    };
}

apps! {$
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
    Cyclic(Cyclictest),
    /// The KVM testbed's guest: requests straight into the virtqueue.
    Requests(RequestStream),
    /// The KVM testbed's interrupt generator.
    Irqs(IrqSource),
    /// A CPU-bound job (NPB FT-like).
    Job(CpuJob),
    /// kvm-unit-tests' IPI round trip.
    IpiRt(IpiPingPong),
    /// fio, filebench: jobs on a virtio-blk disk's request queue.
    Block(BlockJobs),
    /// No application.
    Idle(IdleApp),
}

impl Sender {
    /// The application `w` describes (None: no workload), in VM `vm_name` of `vcpus` vCPUs
    /// (its threads placed as `at` says) whose device negotiated offloads `off`, on its
    /// device `queue.0` of `queue.1` (a VM's devices: its queues, VFs or queue pairs).
    #[allow(clippy::too_many_arguments)]
    pub fn new(w: Option<&Workload>, vcpus: u32, at: crate::model::guest::guest_sched::Placement, p: &Profile, seed: u64, vm_name: &str, off: Offload, queue: (u32, u32)) -> Self {
        let Some(w) = w else { return Sender::Idle(IdleApp) };
        match *w {
            Workload::Fio { block_bytes, iodepth, request_timer, .. } => {
                Sender::Block(BlockJobs::new(&w.block_jobs(), iodepth, block_bytes, request_timer, queue.0, queue.1, p, seed, vm_name))
            }
            Workload::Filebench { block_bytes, .. } => {
                Sender::Block(BlockJobs::new(&w.block_jobs(), 1, block_bytes, false, queue.0, queue.1, p, seed, vm_name))
            }
            Workload::TcpReceive { message_bytes, send_bytes, window_bytes } => {
                Sender::TcpRx(TcpReceiver::new(message_bytes, send_bytes, window_bytes, p))
            }
            Workload::TcpRr { .. } | Workload::Memcached { .. } | Workload::Http { .. } | Workload::Webbench { .. } | Workload::Httperf { .. } | Workload::Specweb { .. } => {
                Sender::Server(TcpServer::new(w, vcpus, at, p, seed, vm_name, off))
            }
            Workload::UdpStream { message_bytes, rate_pps } => {
                Sender::Udp(UdpSender::new(message_bytes, rate_pps, p, seed, vm_name))
            }
            Workload::TcpStream { message_bytes, window_bytes, streams } => {
                Sender::Tcp(TcpStreams::new(message_bytes, window_bytes, streams, vcpus, at, p, off))
            }
            Workload::UdpReceive { message_bytes, rate_pps } => {
                Sender::UdpRx(UdpReceiver::stream(message_bytes, rate_pps, p))
            }
            Workload::UdpPing { message_bytes, interval_us } => {
                Sender::Ping(UdpPing::new(message_bytes, interval_us, p, seed, vm_name))
            }
            Workload::Cyclictest { interval_us } => Sender::Cyclic(Cyclictest::new(interval_us, p)),
            Workload::CpuJob { work_ms } => Sender::Job(CpuJob::new(work_ms)),
            Workload::IpiPingpong { to_vcpu, interval_us, targets } => {
                Sender::IpiRt(IpiPingPong::new(to_vcpu, targets.unwrap_or(1), interval_us, p.guest.request_ns.value))
            }
            Workload::IrqSource { interval_us, vcpu } => Sender::Irqs(IrqSource::new(interval_us, vcpu, vcpus, seed, vm_name)),
            Workload::RequestStream { rate, window, consume } => {
                Sender::Requests(RequestStream::new(rate, window.unwrap_or(0), consume == crate::config::Consume::Irq, p))
            }
            Workload::UdpRr { request_bytes, response_bytes, interval_us } => Sender::UdpRx(UdpReceiver::new(
                request_bytes,
                interval_us.map(|i| 1e6 / i),
                Some(response_bytes),
                p,
            )),
            Workload::Ping { bytes, interval_us } => {
                Sender::UdpRx(UdpReceiver::icmp_echo(bytes, interval_us.map(|i| 1e6 / i), p))
            }
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
    /// See [`App::finished`].
    pub fn finished(&self) -> bool {
        each!(self, s => s.finished())
    }
    /// See [`App::thinking`].
    pub fn thinking(&self) -> bool {
        each!(self, s => s.thinking())
    }
    /// See [`App::measure`].
    pub fn measure<'a>(&'a self, d: DevView<'a>) -> Measure<'a> {
        each!(self, s => s.measure(d))
    }
    /// See [`App::ledger`].
    pub fn ledger(&self, d: &DevLedger) -> AppLedger {
        let mut l = AppLedger::default();
        each!(self, s => s.ledger(d, &mut l));
        l
    }
    /// See [`App::tx_interrupt`].
    pub(crate) fn tx_interrupt(&mut self, local: u32) {
        each!(self, s => s.tx_interrupt(local))
    }
    /// See [`App::msi_handled`].
    pub(crate) fn msi_handled(&mut self, now: Time, local: u32, window_start: Time) {
        each!(self, s => s.msi_handled(now, local, window_start))
    }
    /// See [`App::loss_base`].
    pub fn loss_base(&self) -> Option<u64> {
        each!(self, s => s.loss_base())
    }
    /// See [`App::ready`].
    pub fn ready(&self) -> bool {
        each!(self, s => s.ready())
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
