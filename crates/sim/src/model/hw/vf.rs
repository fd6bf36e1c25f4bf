//! An SR-IOV virtual function assigned to a VM (`[vm.net] kind = "sriov_vf"`; DID §2.3, §4.2;
//! SR-IOV §2–3): the NIC's L2 sorter puts each frame for the VF into the VF's RX ring by DMA —
//! no host thread, no tap — or drops it when the guest driver has no descriptor posted; the
//! guest driver's TX descriptors are written to the ring and the tail register by MMIO to the
//! VF's BAR (no exit), and the NIC sends them on the shared port.
//!
//! Each write-back (RX frame, TX completion) sets the queue's interrupt cause. The MSI-X vector
//! auto-masks when it fires (82599 EIAM) and its driver (ixgbevf-like: one vector per queue pair,
//! NAPI with the guest's weight) unmasks it when NAPI completes; while unmasked, the VF's
//! throttle (EITR: at most one interrupt per interval, `RxItr`) decides when the cause fires;
//! the interval is fixed, or rewritten by the driver's dynamic throttle at each NAPI completion
//! (`eventpath_policy::moderation::ixgbevf_itr`) from the bytes NAPI received and the NIC sent.
//! The vector reaches the vCPU as an *assigned* interrupt: what that costs — an
//! external-interrupt exit and injection, a VT-d posted interrupt, direct delivery — is the VM's
//! delivery mode's (`delivery.rs`).
//!
//! Or the host drives the EITR (`[vm.net.moderation]` on a VF): a moderation scheme of
//! `eventpath_policy::moderation` runs as the CGR/AIR paper's host-side controller (§4.2, §4.3:
//! it reads the VF's per-VM packet and byte counts and "setInterruptRate" writes the VF's
//! throttle). It observes each frame the NIC writes back to the VF's RX ring (the VF's
//! statistics registers count them whether or not the vector is masked) and each interrupt
//! the vector sends; whenever its rate changes, the EITR interval becomes `1/rate`, held
//! within what the register can hold (`sriov.vf_itr_max_ns`; a longer interval is written as
//! the longest). The throttle stays the VF's: a new interval applies from the next interrupt.
//!
//! RX descriptors are refilled by NAPI as it receives (a tail write: no exit). A TX descriptor
//! stays in the NIC's hands until its frame is through (the model's completion time is the
//! frame's arrival at the far end of the link, a propagation delay late); the NIC fetches a
//! descriptor only when its queue for the VF has room, so a VF's flood waits in its ring (the
//! driver stops its queue when the ring is full) instead of being dropped. Its write-back sets
//! the vector's cause, and the driver reclaims it in the next NAPI poll, where it also wakes a
//! queue stopped on a full ring and sends what waited in the qdisc (`ixgbevf_clean_tx_irq`).

use crate::engine::Schedule;
use crate::model::hw::event::Event;
use crate::model::hw::nic_itr::{Arrival, RxItr};
use crate::model::hw::virtq::Virtq;
use crate::model::hw::nic_tx::TxPort;
use crate::model::hw::wire::{Wire, TCP_IP_HDR};
use crate::engine::Time;
use crate::config::VfItr;
use eventpath_policy::moderation::ixgbevf_itr::DynamicItr;
use eventpath_policy::moderation::{InterruptModerator, ModerationConfig, Moderator};

/// Ethernet, IPv4 and UDP headers: a UDP datagram's frame bytes beyond its payload.
const UDP_FRAME_HDR: u32 = 14 + 20 + 8;

/// The VF's interrupt side.
#[derive(Debug)]
pub struct Vf {
    /// The EITR throttle.
    pub itr: RxItr,
    /// The MSI-X vector is unmasked (the driver's NAPI is idle).
    pub unmasked: bool,
    /// An interrupt is scheduled at the throttle's deadline.
    pub(crate) armed: bool,
    /// The driver's dynamic throttle, if the VF runs it.
    dynamic: Option<DynamicItr>,
    /// The host's rate controller writing the EITR, if a moderation scheme drives it.
    host: Option<HostItr>,
    /// Frame bytes beyond a packet's payload (the driver counts whole frames).
    hdr_bytes: u32,
}

/// A moderation scheme run by the host as the VF's EITR controller.
#[derive(Debug)]
struct HostItr {
    scheme: Moderator,
    /// The rate last written to the EITR (interrupts/s).
    rate: Option<u32>,
    /// The longest interval the EITR holds (ns).
    max_ns: u64,
}

impl HostItr {
    /// Writes the scheme's rate to the EITR if it changed.
    fn write(&mut self, itr: &mut RxItr) {
        let rate = self.scheme.allowed_rate();
        if rate != self.rate {
            self.rate = rate;
            if let Some(r) = rate {
                itr.set_gap_ns((1_000_000_000 / u64::from(r.max(1))).clamp(1, self.max_ns));
            }
        }
    }
}

impl Vf {
    /// A VF with the scenario's throttle `setting` (absent: fixed at `default_ns`), or driven by
    /// the host's moderation `scheme` (not `none`; the EITR holds at most `max_ns`), carrying
    /// TCP (else UDP) frames.
    pub fn new(setting: Option<VfItr>, scheme: &ModerationConfig, default_ns: f64, max_ns: f64, tcp: bool) -> Self {
        let hdr_bytes = if tcp { 14 + TCP_IP_HDR } else { UDP_FRAME_HDR };
        if *scheme != ModerationConfig::None {
            let mut host = HostItr { scheme: scheme.build(0).expect("validated with the scenario"), rate: None, max_ns: max_ns.round() as u64 };
            let mut itr = RxItr::new(default_ns);
            host.write(&mut itr);
            return Vf { itr, unmasked: true, armed: false, dynamic: None, host: Some(host), hdr_bytes };
        }
        let (itr, dynamic) = match setting {
            None => (RxItr::new(default_ns), None),
            Some(VfItr::Fixed(us)) => (RxItr::new(us * 1e3), None),
            Some(VfItr::Dynamic) => {
                let d = DynamicItr::ixgbevf();
                (RxItr::new(d.interval_ns() as f64), Some(d))
            }
        };
        Vf { itr, unmasked: true, armed: false, dynamic, host: None, hdr_bytes }
    }

    /// The NIC wrote `frames` frames of `payload` bytes in all back to the RX ring at `now`:
    /// the host's controller (if any) counts them and may rewrite the EITR.
    pub fn written_back(&mut self, now: Time, frames: u32, payload: u64) {
        if let Some(h) = &mut self.host {
            h.scheme.observe(now, frames, payload + u64::from(frames) * u64::from(self.hdr_bytes));
            h.write(&mut self.itr);
        }
    }

    /// NAPI received a packet of `payload` bytes from the RX ring.
    pub fn on_rx(&mut self, payload: u32) {
        let bytes = u64::from(payload + self.hdr_bytes);
        if let Some(d) = &mut self.dynamic {
            d.on_rx(1, bytes);
        }
    }

    /// The driver posted a TX descriptor of `payload` bytes.
    pub fn on_tx(&mut self, payload: u32) {
        if let Some(d) = &mut self.dynamic {
            d.on_tx(1, u64::from(payload + self.hdr_bytes));
        }
    }

    /// A write-back (RX frame, TX completion) of device `dev` set the queue's interrupt cause:
    /// whether the vector fires now. Else it fires at the throttle's deadline (its `VfIrq`
    /// scheduled here), or not at all while it is masked (NAPI will see the work).
    pub fn cause(&mut self, now: Time, dev: u32, q: &mut impl Schedule<Event>) -> bool {
        if !self.unmasked || self.armed {
            return false;
        }
        match self.itr.arrive(now) {
            Arrival::Now => true,
            Arrival::Wait(t) => {
                self.armed = true;
                q.schedule(t, Event::VfIrq { dev });
                false
            }
            Arrival::Join => {
                self.armed = true;
                false
            }
        }
    }

    /// The throttle's interval ended: whether the cause pending fires (the vector unmasked).
    pub fn deadline(&mut self, now: Time) -> bool {
        self.armed = false;
        self.itr.deadline(now) && self.unmasked
    }

    /// The MSI-X message is sent at `now`: the vector masks itself (82599 EIAM); the host's
    /// controller (net DIM counts interrupts) is told.
    pub fn fire(&mut self, now: Time) {
        self.unmasked = false;
        if let Some(h) = &mut self.host {
            h.scheme.fired(now);
            h.write(&mut self.itr);
        }
    }

    /// NAPI completed: the dynamic throttle (if any) sets the next interval and the driver
    /// unmasks the vector (EIMS).
    pub fn unmask(&mut self) {
        if let Some(gap) = self.dynamic.as_mut().and_then(DynamicItr::on_napi_complete) {
            self.itr.set_gap_ns(gap);
        }
        self.unmasked = true;
    }
}

/// The NIC fetches VF device `dev`'s posted TX descriptors from `txq` while its queue for the
/// VF has room ([`Wire::vf_room`]); the rest wait in the ring. (A frame that did not fit used to
/// be dropped and its descriptor written back at once: a send that cost the guest nothing then
/// looped at one instant for good, and a VF flood dropped frames the NIC never drops.)
pub(crate) fn fetch(now: Time, dev: u32, txq: &mut Virtq, wire: &mut Wire, port: &mut TxPort, q: &mut impl Schedule<Event>) {
    while let Some(b) = txq.peek().copied() {
        if !wire.vf_room(port, &b) {
            return;
        }
        let b = txq.take().expect("a posted descriptor");
        if let Some(arrive) = wire.send_from_vf_ring(now, b, port) {
            q.schedule(arrive, Event::WireDone { dev });
        }
    }
}

