//! The host model: pCPUs, vCPUs, virtio-net devices with vhost threads, the wire, and the
//! guests' workloads. Each concept has its own module; this one wires them to the engine.
//!
//! The paravirtual path of `docs/model.md`: per VM one virtio-net device (TX and RX
//! virtqueues) served by one vhost thread, vCPUs with an emulated or posted-interrupt LAPIC,
//! guest NAPI and TCP/UDP senders, the link and a remote client that ACKs. vCPU threads, vhost
//! threads and CPU hogs run where the host scheduler (`sched/`, a CFS model) puts them, pinned
//! or not (`threads.rs`). Later models (ES2, ELVIS, DID, ...) slot in by replacing a layer
//! behind these types.

mod app_ctx;
mod apps;
mod backend;
mod build;
mod cx;
pub(crate) mod event;
pub(crate) mod host;
pub(crate) mod ledger;
mod liveness;
mod port;
mod timeline;
pub(crate) mod guest;
pub(crate) mod hw;
pub(crate) mod hypervisor;
#[cfg(debug_assertions)]
mod invariants;
pub(crate) mod io;
pub(crate) mod trace;
pub(crate) mod watchdog;
pub(crate) mod workload;

use crate::engine::{EventQueue, Model, Time};
/// The run classes' names (`VmSummary::latency_by_target_state_us`).
pub const RUN_CLASS_KEYS: [&str; 3] = eventpath_policy::routing::RunClass::KEYS;
pub use hypervisor::sched;
pub use io::es2_driver;
pub use hypervisor::vcpu::{Mode as VcpuMode, Vcpu, IPI_KINDS, IRQ_SOURCES};
pub use event::Ev;
pub use host::Host;

pub use ledger::Conservation;
pub use watchdog::Stall;
pub use trace::TraceCounts;


impl Host {
    /// Reset every metric at the end of warm-up.
    fn start_window(&mut self, now: Time) {
        self.window_start = now;
        for v in &mut self.vcpus {
            v.reset_metrics(now);
        }
        for t in &mut self.io.threads {
            t.reset_metrics(now);
        }
        for d in &mut self.devs {
            d.wire.reset_metrics(now);
            d.txq.reset_metrics();
            d.rxq.reset_metrics();
            d.guest.napi.polls = 0;
            d.client.reset_metrics();
            d.tap_drops = 0;
            d.irqs.reset_metrics();
        }
        for s in self.senders.iter_mut() {
            s.reset_metrics();
        }
        for r in &mut self.routing {
            r.routed = [0; 3];
            r.with_one_running = [0; 2];
            r.away = [0; 3];
        }
        for c in &mut self.cosched {
            c.reset(now);
        }
        for b in &mut self.pcpu_busy {
            b.reset(now);
        }
        self.sched.reset_metrics(now);
        self.softirqs.reset_metrics();
    }

    /// The lower layers' context over this host for one event (`cx.rs`).
    pub(crate) fn cx<'a>(&'a mut self, q: &'a mut EventQueue<Ev>) -> cx::Cx<'a> {
        cx::Cx::new(self, q)
    }

    /// The pCPU whose thread handles event `ev` (the waker of anything it wakes).
    fn event_cpu(&self, ev: &Ev) -> Option<u32> {
        let thread_cpu = |t: u32| self.sched.thread_cpu(t);
        match *ev {
            Ev::Hv(e) => hypervisor::dispatch::waker(e, thread_cpu),
            Ev::Io(io::Event::Ioeventfd { vcpu, .. }) => Some(thread_cpu(vcpu)),
            Ev::Io(io::Event::IoStep { thread } | io::Event::IoPoll { thread }) => Some(thread_cpu(self.io_thread_tid(thread))),
            _ => None,
        }
    }
}

impl Model for Host {
    type Event = Ev;

    /// One event: routed to the layer that owns it.
    fn handle(&mut self, now: Time, ev: Ev, q: &mut EventQueue<Ev>) {
        self.waker = self.event_cpu(&ev);
        match ev {
            Ev::Warmup => self.start_window(now),
            Ev::Hw(e) => self.hw_event(now, e, q),
            Ev::Hv(e) => {
                // pCPU 0's host tick is also the liveness watchdog's period (its look reads
                // the host only, so before the tick's own work as after it).
                if e == (hypervisor::Event::HostTick { cpu: 0 }) {
                    self.watchdog_tick(now);
                }
                let up = hypervisor::dispatch::handle(&mut self.cx(q), now, e);
                self.cx(q).apply_up(now, up);
            }
            Ev::Io(e) => self.io_event(now, e, q),
            Ev::Client { dev, kind, x, a, b } => self.app_client_event(now, dev, workload::ClientEv { kind, x, a, b }, q),
        }
        #[cfg(debug_assertions)]
        self.check_invariants();
    }
}


#[cfg(test)]
mod tests {
    /// The event queue's hot path moves `Entry { key: u128, ev: Ev }`: an event of 16 bytes
    /// keeps each entry at 32 (one more byte makes it 48 and the heap measurably slower).
    #[test]
    fn an_event_fits_in_sixteen_bytes() {
        assert!(std::mem::size_of::<super::Ev>() <= 16, "{}", std::mem::size_of::<super::Ev>());
    }
}
