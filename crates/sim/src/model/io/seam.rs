//! The request-handling seam (DESIGN §2): what a back end's policy adapter sees ([`View`]:
//! the devices' rings and costs, a few observations), what it answers ([`Decision`], [`Take`]),
//! and the trait each adapter implements ([`Backend`]). The I/O-thread mechanism (`thread.rs`)
//! drives it; the adapters (`vhost.rs`, `es2.rs`, `elvis.rs`, `pmd.rs`) import this and the
//! queues (`queues.rs`), nothing else of the layer.

use crate::engine::Time;
use crate::model::io::queues::{Costs, DevRings, Notice, Notified, Queues, Work};

/// What a back end sees besides its queues, at the moment it is asked.
pub(crate) struct View<'a, R: DevRings + ?Sized> {
    /// The devices' queues.
    pub rings: &'a mut R,
    /// What its steps cost.
    pub costs: &'a Costs,
    /// Another thread wants its pCPU (`need_resched`).
    pub yield_wanted: bool,
    /// Each device's VM (a move between VMs' queues costs a page-table switch).
    pub dev_vm: &'a [u32],
    /// The socket of the pCPU the thread is on (a VM's memory elsewhere costs more).
    pub socket: Option<u32>,
}

/// How a turn serves its queue (set by the policy when the turn starts, read back only by
/// it): the kinds of turn a back end tells apart; one that tells none apart takes `Plain`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TurnMode {
    /// A turn of a policy that keeps no kind for it (a vhost worker's handler loop over its
    /// device's two queues, a PMD's look at one queue).
    Plain,
    /// ES2 perceptive TX handler (Algorithm 1).
    Perceptive,
    /// ES2 optimistic TX handler in polling mode (Algorithm 2).
    OptimisticPoll,
    /// A regular vhost handler (kick- or packet-driven) of a joint thread.
    Regular,
    /// An ELVIS turn on a queue that is polled (`true`) or notified.
    Elvis(bool),
    /// A scheduled handler with nothing to do (a stale entry): the turn ends at once.
    Nothing,
}

/// One turn: a queue of one of the thread's devices.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Turn {
    /// The device's index among the thread's devices.
    pub local: usize,
    /// The RX queue (else TX).
    pub rx: bool,
    /// Items taken so far.
    pub taken: u32,
    pub mode: TurnMode,
}

/// What the policy says the thread does next.
pub(crate) enum Decision {
    Turn(Turn),
    /// Spin on its rings (a busy PMD that found nothing) until then or until work is seen.
    Spin(Option<Time>),
    /// Sleep until `until` (or until woken); a notice wakes it if `notice`, work written
    /// without one if `write`.
    Sleep { until: Option<Time>, notice: bool, write: bool },
}

/// What a turn does next.
pub(crate) enum Take {
    /// Process this item, which costs this long.
    Item(Work, Time),
    /// Spin on the rings until then (or until work is seen), keeping the pCPU.
    Spin(Option<Time>),
    /// The turn is over.
    End,
}

/// A back end's policy adapter (DESIGN §2's request-handling seam), one per back end in its
/// own file: what its thread does with a notice, what it does next, what a turn takes, what a
/// finished item means to it — and the few properties by which the I/O-thread mechanism
/// (`thread.rs`) treats it, whose defaults are a polling thread's. Dispatched statically
/// through [`Policy`], no vtable per item.
pub(crate) trait Backend {
    /// Work of kind `n` arrived for the thread's device `local` (`dev`).
    fn notice<R: DevRings + ?Sized>(&mut self, now: Time, local: usize, dev: u32, n: Notice, v: &mut View<'_, R>);
    /// What the thread does next: a turn at one of its devices' queues, a spin, a sleep.
    fn decide<R: DevRings + ?Sized>(&mut self, now: Time, devs: &[u32], v: &mut View<'_, R>) -> Decision;
    /// What the turn does next: an item, a spin, or the turn's end.
    fn take<R: DevRings + ?Sized>(&mut self, now: Time, turn: Turn, dev: u32, v: &mut View<'_, R>) -> Take;
    /// An item of the turn was completed; true: the turn ends.
    fn after_item<R: DevRings + ?Sized>(&mut self, now: Time, turn: Turn, dev: u32, w: Work, v: &mut View<'_, R>) -> bool;
    /// Work of kind `n` written without a notice: does the thread see it (spinning,
    /// monitoring)?
    fn sees_write(&self, _n: Notice) -> bool {
        false
    }
    /// A look that found nothing costs `poll_ns` (threads that poll pay it over and over).
    fn empty_look_costs(&self) -> bool {
        true
    }
    /// It checks `need_resched` between turns.
    fn yields_between_turns(&self) -> bool {
        true
    }
    /// Its own count of looks and empty looks, where it keeps one.
    fn polls(&self) -> Option<(u64, u64)> {
        None
    }
    /// Start a measurement window.
    fn reset_metrics(&mut self) {}
    /// Its thread runs from the start, as if woken (a PMD polls from the start).
    fn runs_from_start(&self) -> bool {
        false
    }
    /// It hands TX buffers to the host's network stack (not a PMD, whose own driver writes
    /// the NIC: its per-packet cost is `vhost.tx_packet_ns` alone).
    fn kernel_path(&self) -> bool {
        true
    }
}

/// The model's rings, as one of the [`Queues`] an adapter's machines are driven through.
impl<R: DevRings + ?Sized> Queues for View<'_, R> {
    fn take_tx(&mut self, dev: u32) -> Option<(Work, Time)> {
        self.costs.take_tx(self.rings, dev, self.socket)
    }
    fn take_rx(&mut self, dev: u32) -> Option<(Work, Time)> {
        self.costs.take_rx(self.rings, dev, self.socket)
    }
    fn sock_empty(&mut self, dev: u32) -> bool {
        self.rings.sock(dev).is_empty()
    }
    fn tx_ring(&mut self, dev: u32) -> impl Notified + '_ {
        self.rings.tx(dev)
    }
    fn rx_ring(&mut self, dev: u32) -> impl Notified + '_ {
        self.rings.rx(dev)
    }
    fn weight_packets(&self) -> u32 {
        self.costs.weight_packets
    }
}

/// A shared back end's threads, one per group of `groups` (indices into the backed devices
/// `devs`, as its policy grouped them): each its name, its devices and its adapter, which
/// `thread(g, mine)` makes for group `g` of devices `mine`.
pub(crate) fn per_group<P>(groups: &[Vec<usize>], devs: &[u32], mut thread: impl FnMut(usize, &[u32]) -> (String, P)) -> Vec<(String, Vec<u32>, P)> {
    groups
        .iter()
        .enumerate()
        .map(|(g, members)| {
            let mine: Vec<u32> = members.iter().map(|&i| devs[i]).collect();
            let (name, p) = thread(g, &mine);
            (name, mine, p)
        })
        .collect()
}
