//! An SR-IOV virtual function assigned to a VM (`[vm.net] kind = "sriov_vf"`; DID §2.3, §4.2;
//! SR-IOV §2–3): the NIC's L2 sorter puts each frame for the VF into the VF's RX ring by DMA —
//! no host thread, no tap — or drops it when the guest driver has no descriptor posted; the
//! guest driver's TX descriptors are written to the ring and the tail register by MMIO to the
//! VF's BAR (no exit), and the NIC sends them on the shared port.
//!
//! Each write-back (RX frame, TX completion) sets the queue's interrupt cause. The MSI-X vector
//! auto-masks when it fires (82599 EIAM) and its driver (ixgbevf-like: one vector per queue pair,
//! NAPI with the guest's weight) unmasks it when NAPI completes; while unmasked, the VF's
//! throttle (EITR: at most one interrupt per interval, `RxItr`) decides when the cause fires.
//! The vector reaches the vCPU as an *assigned* interrupt: what that costs — an
//! external-interrupt exit and injection, a VT-d posted interrupt, direct delivery — is the VM's
//! delivery mode's (`delivery.rs`).
//!
//! RX descriptors are refilled by NAPI as it receives (a tail write: no exit); a TX descriptor is
//! reclaimed once the NIC has sent its frame (ixgbevf cleans them in the next poll; the model
//! frees them at once, so the TX ring itself never stops the queue — the port's qdisc limit and
//! the senders' windows do).

use super::lapic::Vector;
use super::nic_itr::{Arrival, RxItr};
use super::virtq::Buf;
use super::{Ev, Host};
use crate::engine::{EventQueue, Time};

/// The VF's interrupt side.
#[derive(Debug)]
pub struct Vf {
    /// The EITR throttle.
    pub itr: RxItr,
    /// The MSI-X vector is unmasked (the driver's NAPI is idle).
    pub unmasked: bool,
    /// An interrupt is scheduled at the throttle's deadline.
    armed: bool,
}

impl Vf {
    /// A VF whose vector interrupts at most once per `itr_ns`.
    pub fn new(itr_ns: f64) -> Self {
        Vf { itr: RxItr::new(itr_ns), unmasked: true, armed: false }
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
            d.tap_drops += 1;
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
        d.txq.add(b);
        d.txq.take();
        d.txq.put_used();
        if let Some(arrive) = d.wire.send(now, b, &mut self.port.tx) {
            q.at(arrive, Ev::WireDone { dev });
        }
        self.vf_cause(now, dev, q);
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
        let target = self.route_device_irq(dev, Vector::Vf);
        self.raise_irq(now, target, Vector::Vf, q);
    }

    /// NAPI completed with the ring empty: unmask the vector (its refills were tail writes).
    pub(crate) fn vf_unmask(&mut self, dev: u32) {
        self.devs[dev as usize].vf.as_mut().expect("a VF device").unmasked = true;
    }
}
