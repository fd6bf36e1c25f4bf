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
//! RX descriptors are refilled by NAPI as it receives (a tail write: no exit). A TX descriptor
//! stays in the NIC's hands until its frame is through (the model's completion time is the
//! frame's arrival at the far end of the link, a propagation delay late); the NIC fetches a
//! descriptor only when its queue for the VF has room, so a VF's flood waits in its ring (the
//! driver stops its queue when the ring is full) instead of being dropped. Its write-back sets
//! the vector's cause, and the driver reclaims it in the next NAPI poll, where it also wakes a
//! queue stopped on a full ring and sends what waited in the qdisc (`ixgbevf_clean_tx_irq`).

use crate::model::hw::lapic::Vector;
use crate::model::hw::nic_itr::{Arrival, RxItr};
use crate::model::hw::wire::TCP_IP_HDR;
use crate::model::hw::virtq::Buf;
use crate::model::{Ev, Host};
use crate::engine::{EventQueue, Time};
use crate::scenario::VfItr;
use eventpath_policy::moderation::ixgbevf_itr::DynamicItr;

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
    /// Frame bytes beyond a packet's payload (the driver counts whole frames).
    hdr_bytes: u32,
}

impl Vf {
    /// A VF with the scenario's throttle `setting` (absent: fixed at `default_ns`), carrying
    /// TCP (else UDP) frames.
    pub fn new(setting: Option<VfItr>, default_ns: f64, tcp: bool) -> Self {
        let (itr, dynamic) = match setting {
            None => (RxItr::new(default_ns), None),
            Some(VfItr::Fixed(us)) => (RxItr::new(us * 1e3), None),
            Some(VfItr::Dynamic) => {
                let d = DynamicItr::ixgbevf();
                (RxItr::new(d.interval_ns() as f64), Some(d))
            }
        };
        let hdr_bytes = if tcp { 14 + TCP_IP_HDR } else { UDP_FRAME_HDR };
        Vf { itr, unmasked: true, armed: false, dynamic, hdr_bytes }
    }

    /// NAPI received a packet of `payload` bytes from the RX ring.
    pub fn on_rx(&mut self, payload: u32) {
        let bytes = u64::from(payload + self.hdr_bytes);
        if let Some(d) = &mut self.dynamic {
            d.on_rx(1, bytes);
        }
    }

    /// NAPI completed: the dynamic throttle (if any) sets the next interval.
    fn napi_complete(&mut self) {
        if let Some(gap) = self.dynamic.as_mut().and_then(DynamicItr::on_napi_complete) {
            self.itr.set_gap_ns(gap);
        }
    }
}

impl Host {
    /// A frame for VF device `dev` reached the port at `arrive`: it is in the VF's ring after
    /// the NIC's sort and DMA.
    pub(crate) fn vf_from_port(&mut self, dev: u32, arrive: Time, q: &mut EventQueue<Ev>) {
        let dma = self.vf_dma_ns;
        q.at(arrive + dma, Ev::HostRx { dev });
    }

    /// The NIC wrote a frame into the VF's RX ring, or dropped it (no posted descriptor).
    pub(crate) fn vf_rx(&mut self, now: Time, dev: u32, q: &mut EventQueue<Ev>) {
        let d = &mut self.devs[dev as usize];
        let pkt = d.client.arrive_at_host();
        d.rx_arrived_life += 1;
        if d.rxq.posted == 0 {
            d.tap_drops += u64::from(pkt.born >= self.window_start);
            d.tap_drops_life += 1;
            return self.app_tap_drop(now, dev, pkt, q);
        }
        d.rxq.take();
        d.rxq.put_used(pkt);
        self.vf_cause(now, dev, q);
    }

    /// The guest driver posted a TX descriptor and wrote the tail: the NIC sends the frame.
    pub(crate) fn vf_tx(&mut self, now: Time, dev: u32, b: Buf, q: &mut EventQueue<Ev>) {
        let d = &mut self.devs[dev as usize];
        let vf = d.vf.as_mut().expect("a VF device");
        if let Some(dy) = &mut vf.dynamic {
            dy.on_tx(1, u64::from(b.bytes + vf.hdr_bytes));
        }
        d.txq.add(b);
        self.vf_fetch(now, dev, q);
    }

    /// The NIC fetches the VF's posted TX descriptors while its queue for the VF has room
    /// ([`crate::model::hw::wire::Wire::vf_room`]); the rest wait in the ring. (A frame that did not fit
    /// used to be dropped and its descriptor written back at once: a send that cost the guest
    /// nothing then looped at one instant for good, and a VF flood dropped frames the NIC
    /// never drops.)
    fn vf_fetch(&mut self, now: Time, dev: u32, q: &mut EventQueue<Ev>) {
        loop {
            let d = &mut self.devs[dev as usize];
            let Some(b) = d.txq.peek().copied() else { return };
            if !d.wire.vf_room(&self.port.tx, &b) {
                return;
            }
            let b = d.txq.take().expect("a posted descriptor");
            if let Some(arrive) = d.wire.send_from_vf_ring(now, b, &mut self.port.tx) {
                q.at(arrive, Ev::WireDone { dev });
            }
        }
    }

    /// The NIC finished a frame of VF device `dev`: write back its TX descriptor, and fetch
    /// the descriptors that waited for room.
    pub(crate) fn vf_tx_done(&mut self, now: Time, dev: u32, q: &mut EventQueue<Ev>) {
        self.devs[dev as usize].txq.put_used();
        self.vf_cause(now, dev, q);
        self.vf_fetch(now, dev, q);
    }

    /// A write-back set the queue's interrupt cause: fire now, at the throttle's deadline, or
    /// not at all while the vector is masked (NAPI will see the work).
    fn vf_cause(&mut self, now: Time, dev: u32, q: &mut EventQueue<Ev>) {
        let vf = self.devs[dev as usize].vf.as_mut().expect("a VF device");
        if !vf.unmasked || vf.armed {
            return;
        }
        match vf.itr.arrive(now) {
            Arrival::Now => self.vf_interrupt(now, dev, q),
            Arrival::Wait(t) => {
                vf.armed = true;
                q.at(t, Ev::VfIrq { dev });
            }
            Arrival::Join => vf.armed = true,
        }
    }

    /// The throttle's interval ended with a cause pending: the vector fires.
    pub(crate) fn vf_irq_deadline(&mut self, now: Time, dev: u32, q: &mut EventQueue<Ev>) {
        let vf = self.devs[dev as usize].vf.as_mut().expect("a VF device");
        vf.armed = false;
        if vf.itr.deadline(now) && vf.unmasked {
            self.vf_interrupt(now, dev, q);
        }
    }

    /// The MSI-X message: the vector masks itself and goes to the vCPU the VM's router picks.
    fn vf_interrupt(&mut self, now: Time, dev: u32, q: &mut EventQueue<Ev>) {
        let d = &mut self.devs[dev as usize];
        d.vf.as_mut().expect("a VF device").unmasked = false;
        d.rxq.interrupts += 1;
        let target = self.vms[d.vm as usize].routing.route_device(dev, Vector::Vf);
        self.raise_irq(now, target, Vector::Vf, q);
    }

    /// The NAPI poll's TX clean on vCPU `v` (`ixgbevf_clean_tx_irq`, first in
    /// `ixgbevf_poll`): the descriptors the NIC wrote back are reclaimed, so send the qdisc's
    /// backlog and wake a stopped queue — and the writers that halted on it on other vCPUs,
    /// whichever of the interrupt or a poll round's clean finds the room.
    pub(crate) fn vf_tx_clean(&mut self, now: Time, v: u32, dev: u32, q: &mut EventQueue<Ev>) {
        let vm = self.devs[dev as usize].vm as usize;
        while self.devs[dev as usize].txq.free() > 0 {
            let Some(b) = self.devs[dev as usize].qdisc.pop_front() else { break };
            self.vf_tx(now, dev, b, q);
        }
        let full = self.devs[dev as usize].txq.free() == 0;
        if self.set_tx_stopped(vm, full) && !full {
            self.wake_writers(now, v, q);
        }
    }

    /// NAPI completed with the RX ring empty: its last round's TX clean, then unmask the
    /// vector (the RX refills were tail writes). Write-backs while the vector was masked raise
    /// no interrupt of their own: each poll round's clean is what finds them.
    pub(crate) fn vf_unmask(&mut self, now: Time, v: u32, dev: u32, q: &mut EventQueue<Ev>) {
        self.vf_tx_clean(now, v, dev, q);
        let vf = self.devs[dev as usize].vf.as_mut().expect("a VF device");
        vf.napi_complete();
        vf.unmasked = true;
    }
}
