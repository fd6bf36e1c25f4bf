//! Backend threads: serve the virtqueues of one or many VMs through the `eventpath-policy` state
//! machines chosen by the `[host.io]` table both worlds share (vhost's handler loop, ES2's joint
//! thread with its perceptive or optimistic switch, ELVIS's scheduler, a poll-mode back end),
//! complete requests, and interrupt the guest through moderation and routing.
pub mod irq;
pub mod irqgen;
pub mod joint;
mod serve;

pub use serve::{spawn_backend, BackendThread};

use eventpath_policy::moderation::ModerationConfig;
use eventpath_policy::routing::RouterConfig;
use eventpath_policy::vhost::VhostConfig;
use eventpath_sim::scenario::IoHandling;
use std::sync::atomic::{AtomicU64, Ordering};

/// What a backend thread runs: the scenario's `[host.io]` (the simulator's type; its methods
/// give each policy's configuration) and the testbed's vhost handler configuration (busy
/// polling, `backend.busyloop_us`).
#[derive(Debug, Clone)]
pub struct Serving {
    /// `[host.io]`.
    pub io: IoHandling,
    /// The vhost handler loop's parameters (handling = "vhost").
    pub vhost: VhostConfig,
}

/// What taking one entry from a ring gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Took {
    /// A request, served (its used entry written); its buffers' total length in bytes.
    Request(u64),
    /// Bad guest input, counted and dropped.
    Bad,
    /// The ring had nothing.
    Empty,
}

/// One queue a backend thread serves.
#[derive(Clone)]
pub struct DeviceSpec {
    /// The VM.
    pub vm: std::sync::Arc<crate::vmm::Vm>,
    /// Queue (= MSI source) index in the VM.
    pub queue: usize,
    /// vCPU that drives the queue (the interrupt's programmed destination).
    pub home_vcpu: usize,
    /// Interrupt routing.
    pub router: RouterConfig,
    /// How a routing decision reaches KVM.
    pub reroute: crate::scenario::Reroute,
    /// Interrupt moderation (net DIM included).
    pub moderation: ModerationConfig,
    /// Per-request host processing cost, ns (spin).
    pub service_ns: u64,
    /// Where the thread publishes the moderator's allowed interrupt rate (interrupts/s;
    /// `u64::MAX`: unlimited), refreshed at least every millisecond.
    pub allowed_rate: std::sync::Arc<AtomicU64>,
}

macro_rules! counters {
    ($($(#[$m:meta])* $f:ident),* $(,)?) => {
        /// Counters of one backend thread, readable while it runs. Conservation:
        /// `requests + bad_requests` = entries taken from avail rings;
        /// `irq_wanted = irq_sent_now + irq_delayed + irq_coalesced`, and
        /// `irq_sent = irq_sent_now + delayed ones fired at their deadline`.
        #[derive(Default, Debug)]
        pub struct Counters { $($(#[$m])* pub $f: AtomicU64,)* }
        /// A snapshot of [`Counters`].
        #[derive(Default, Debug, Clone, Copy, serde::Serialize)]
        pub struct CounterValues { $($(#[$m])* pub $f: u64,)* }
        impl Counters {
            /// Reads every counter.
            pub fn snapshot(&self) -> CounterValues {
                CounterValues { $($f: self.$f.load(Ordering::Relaxed),)* }
            }
        }
        impl CounterValues {
            /// `self - before`, per counter.
            pub fn since(&self, b: &CounterValues) -> CounterValues {
                CounterValues { $($f: self.$f.saturating_sub(b.$f),)* }
            }
            /// Sum per counter.
            pub fn plus(&self, b: &CounterValues) -> CounterValues {
                CounterValues { $($f: self.$f + b.$f,)* }
            }
        }
    };
}

counters! {
    /// Kick eventfd reads that found a count (several guest kicks may coalesce into one).
    kick_events,
    /// Ring checks (one per device per polling round or handler step that looked at avail).
    polls,
    /// Ring checks that found nothing.
    empty_polls,
    /// Requests completed.
    requests,
    /// TSC cycles from the ring check that found a request to its used entry written: the
    /// backend's own cost of its requests.
    request_tsc,
    /// Requests dropped for bad guest input (see `errors_*`).
    bad_requests,
    /// Times the guest's used_event asked for an interrupt.
    irq_wanted,
    /// Interrupts written to irqfds.
    irq_sent,
    /// Of irq_wanted: fired at once.
    irq_sent_now,
    /// Of irq_wanted: delayed by moderation to a deadline.
    irq_delayed,
    /// Of irq_wanted: merged into an already armed delayed interrupt.
    irq_coalesced,
    /// Completion batches for which the guest's used_event said "no interrupt".
    irq_suppressed,
    /// MSI re-routes (KVM_SET_GSI_ROUTING).
    route_changes,
    /// Notification-mode switches (kicks enabled <-> disabled).
    mode_switches,
    /// 10 µs sleeps of the ES2 joint-thread rules.
    short_sleeps,
    /// ELVIS: turns on a queue taken from the work queue.
    elvis_work_turns,
    /// ELVIS: turns on a queue taken from the poll queue.
    elvis_poll_turns,
    /// ELVIS: turns that left a non-empty queue (max_work reached or another queue stuck).
    elvis_leaves,
    /// ELVIS: queues switched to polling (kick rate above the threshold).
    elvis_start_polling,
    /// ELVIS: polled queues returned to notifications (idle for poll_idle_ns).
    elvis_stop_polling,
    /// PMD: iterations (one look of up to `burst` requests at every queue).
    pmd_iterations,
    /// PMD, idle = "sleep": timed sleeps taken.
    pmd_sleeps,
    /// PMD, idle = "sleep": their total length as the policy asked, ns.
    pmd_sleep_ns,
    /// PMD, idle = "monitor": waits for a write to an avail index.
    pmd_waits,
    /// PMD, idle = "monitor": time spent in those waits, ns (what UMWAIT would spend napping;
    /// here the thread spins with `pause` and its CPU time counts it: docs/kvm.md).
    pmd_wait_ns,
    /// Bad input by kind (virtq::VirtqError order).
    err_head_out_of_range,
    #[allow(missing_docs)] err_addr_out_of_range,
    #[allow(missing_docs)] err_huge_length,
    #[allow(missing_docs)] err_chain_loop,
    #[allow(missing_docs)] err_next_out_of_range,
    #[allow(missing_docs)] err_avail_idx_jump,
    #[allow(missing_docs)] err_indirect,
    #[allow(missing_docs)] err_ring_out_of_range,
}

impl Counters {
    pub(crate) fn bump(&self, c: &AtomicU64, n: u64) {
        let _ = self;
        c.fetch_add(n, Ordering::Relaxed);
    }
    pub(crate) fn error(&self, e: crate::virtq::VirtqError) {
        use crate::virtq::VirtqError as E;
        let c = match e {
            E::HeadOutOfRange => &self.err_head_out_of_range,
            E::AddrOutOfRange => &self.err_addr_out_of_range,
            E::HugeLength => &self.err_huge_length,
            E::ChainLoop => &self.err_chain_loop,
            E::NextOutOfRange => &self.err_next_out_of_range,
            E::AvailIdxJump => &self.err_avail_idx_jump,
            E::Indirect => &self.err_indirect,
            E::RingOutOfRange => &self.err_ring_out_of_range,
        };
        c.fetch_add(1, Ordering::Relaxed);
        self.bad_requests.fetch_add(1, Ordering::Relaxed);
    }
}
