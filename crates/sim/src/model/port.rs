//! The root's glue of the NIC path (`docs/model.md` "Link and client"): a frame through the
//! port to the client, the client's NIC and its throttled interrupt, the client's frames
//! through its NIC to the host's port and on to the tap or a VF's ring, and a VF's interrupt
//! routed to a vCPU; and an assigned NVMe-like disk's served command and its MSI-X message
//! (`hw/nvme.rs`). Each step is one call into the part that owns it (`hw/`), then the next
//! layer's (the workload at the client, the back end at the tap, the hypervisor's interrupt).

use crate::engine::Schedule;
use crate::engine::{EventQueue, Time};
use crate::model::hypervisor::ops::Irqs;
use crate::model::hypervisor::host_irq::Softirqs;
use crate::model::hw::device::{Device, Received};
use crate::model::hw::lapic::Vector;
use crate::model::hw::{nic_itr, vf};
use crate::model::{hw, hypervisor, io, workload};
use crate::model::event::Ev;
use crate::model::host::Host;

impl Host {
    /// A hardware event.
    pub(crate) fn hw_event(&mut self, now: Time, e: hw::Event, q: &mut EventQueue<Ev>) {
        match e {
            hw::Event::WireDone { dev } => self.wire_done(now, dev, q),
            hw::Event::HostRx { dev } => self.host_rx(now, dev, q),
            hw::Event::ClientNicIrq { dev } => self.client_nic_irq(now, dev, q),
            hw::Event::VfIrq { dev } => {
                if self.devs[dev as usize].device.assigned().expect("a VF device").deadline(now) {
                    self.vf_interrupt(now, dev, q);
                }
            }
            hw::Event::NvmeDone { dev } => self.nvme_done(now, dev, q),
            hw::Event::ClientPort => self.client_port(now, q),
        }
    }

    /// A packet reached the client's NIC: received now if it interrupts at once, else held
    /// for the throttled interrupt (`client_nic_irq`).
    pub(crate) fn wire_done(&mut self, now: Time, dev: u32, q: &mut EventQueue<Ev>) {
        let (b, next) = self.port.tx.finish(now, dev);
        if let Some((next, t)) = next {
            q.schedule(t, hw::Event::WireDone { dev: next });
        }
        if self.devs[dev as usize].device.is_assigned() {
            // The NIC writes back the VF's TX descriptor and fetches those that waited for room.
            self.devs[dev as usize].txq.put_used();
            self.vf_cause(now, dev, q);
            let d = &mut self.devs[dev as usize];
            vf::fetch(now, dev, &mut d.txq, &mut d.wire, &mut self.port.tx, q);
        }
        let d = &mut self.devs[dev as usize];
        d.wire.arrive(now, b);
        let wire_bytes = d.wire.wire_bytes(&b);
        if !d.device.is_assigned() {
            // The host NIC's TX ring completed it (a VF's frames are not the PF queue's); its
            // TX clean runs in the queue's softirq.
            d.nic.sent(wire_bytes, b.segs);
            let (cpu, ns) = (self.nic_irq_cpu[dev as usize], self.nic_work.tx_clean_ns);
            self.host_irq_work(now, cpu, ns, q);
        }
        let d = &mut self.devs[dev as usize];
        match d.client.nic.receive(now, wire_bytes, b.segs) {
            nic_itr::Arrival::Now => self.app_at_client(now, dev, b, q),
            nic_itr::Arrival::Wait(t) => {
                d.client.held.push_back(b);
                q.schedule(t, hw::Event::ClientNicIrq { dev });
            }
            nic_itr::Arrival::Join => d.client.held.push_back(b),
        }
    }

    /// The client NIC's throttled interrupt: one NAPI poll receives every held frame, GRO
    /// merging the flow's segments, so a TCP receiver decides on one ACK for the batch (only
    /// the TCP stream's receiver defers; for every other workload the batch end is a no-op).
    pub(crate) fn client_nic_irq(&mut self, now: Time, dev: u32, q: &mut EventQueue<Ev>) {
        let c = &mut self.devs[dev as usize].client;
        if !c.nic.deadline(now) {
            return;
        }
        c.begin_batch();
        while let Some(b) = self.devs[dev as usize].client.held.pop_front() {
            self.app_at_client(now, dev, b, q);
        }
        if self.devs[dev as usize].client.end_batch() {
            self.app_client_batch_done(now, dev, q);
        }
    }

    /// Run `ns` of device `dev`'s client work on its client core from `now`; returns when done.
    pub(crate) fn client_cpu(&mut self, now: Time, dev: u32, ns: Time) -> Time {
        let n = self.client_cores.len();
            let core = &mut self.client_cores[dev as usize % n];
        self.devs[dev as usize].client.cpu(now, ns, core)
    }

    /// The client NIC's transmit side's event: a frame may be through (it reaches the host's
    /// port now, and its sender may resume), and the next may start.
    pub(crate) fn client_port(&mut self, now: Time, q: &mut EventQueue<Ev>) {
        let (done, next) = self.port.rx.fired(now);
        if let Some(t) = next {
            q.schedule(t, hw::Event::ClientPort);
        }
        let Some(dev) = done else { return };
        let (pkt, wire_bytes, woken) = self.devs[dev as usize].client.through();
        if let Some(e) = woken {
            q.at(now, Ev::Client { dev, kind: e.kind, x: e.x, a: e.a, b: e.b });
        }
        self.to_tap(now, dev, pkt, wire_bytes, q);
    }

    /// Frame `pkt` (`wire_bytes` on the wire) for device `dev` reached the host's port at
    /// `arrive`: schedule its arrival on the tap queue after the host's receive path (a VF's:
    /// in its RX ring after the NIC's L2 sort and DMA).
    pub(crate) fn to_tap(&mut self, arrive: Time, dev: u32, pkt: hw::rxq::RxPkt, wire_bytes: u32, q: &mut EventQueue<Ev>) {
        let d = &mut self.devs[dev as usize];
        if d.device.is_assigned() {
            let at = d.nic.port_to_ring(arrive, pkt, self.vf_dma_ns);
            return q.schedule(at, hw::Event::HostRx { dev });
        }
        // Its NIC's TX ring sent it, the host NIC's RX ring will receive it (both count it for
        // an adaptive ITR).
        d.client.nic.on_tx(wire_bytes, 1);
        if let Some(at) = d.nic.port_to_tap(arrive, pkt, wire_bytes, &mut self.port.rx_path) {
            q.schedule(at, hw::Event::HostRx { dev });
        }
    }

    /// A packet reached the device: on the tap socket, queue it (or drop it, queue full) and
    /// wake the back end for its RX handler; a VF's NIC writes it into the VF's RX ring (or
    /// drops it: no descriptor posted) and sets the queue's interrupt cause.
    pub(crate) fn host_rx(&mut self, now: Time, dev: u32, q: &mut EventQueue<Ev>) {
        let d = &mut self.devs[dev as usize];
        let backed = !d.device.is_assigned();
        let (pkt, ns) = d.nic.arrived(backed, &self.nic_work);
        if backed {
            // The host NIC's softirq received its frames (and its interrupt, if it opened one)
            // on the queue's pCPU; it reached the tap as that work ended (its latency is
            // nic_rx_ns).
            let cpu = self.nic_irq_cpu[dev as usize];
            self.host_irq_work(now, cpu, ns, q);
        }
        let d = &mut self.devs[dev as usize];
        let segs = u64::from(pkt.segs);
        d.rx_arrived_life += segs;
        match d.device.receive(now, pkt, &mut d.rxq, &mut d.rx_sock, workload::net::TAP_QUEUE_PACKETS) {
            Received::Dropped(pkt) => {
                d.tap_drops += segs * u64::from(pkt.born >= self.window_start);
                d.tap_drops_life += segs;
                self.app_tap_drop(now, dev, pkt, q)
            }
            Received::InRing => self.vf_cause(now, dev, q),
            Received::OnTap => self.notify_backend(now, dev, io::queues::Notice::RxPacket, q),
        }
    }

    /// A write-back of VF device `dev` set its queue's interrupt cause (`hw/vf.rs`).
    pub(crate) fn vf_cause(&mut self, now: Time, dev: u32, q: &mut EventQueue<Ev>) {
        if self.devs[dev as usize].device.assigned().expect("a VF device").cause(now, dev, q) {
            self.vf_interrupt(now, dev, q);
        }
    }

    /// The vCPU (host-wide) VM `vm`'s router sends `req` to, told the vCPUs' credit priorities
    /// first (Xen credit only); a boost it asks for is carried out before the interrupt is raised,
    /// so that the wake-up it causes keeps the `SMP_BOOST` (`routing.rs`).
    pub(crate) fn route_irq(&mut self, now: Time, vm: usize, req: eventpath_policy::routing::RouteRequest, q: &mut EventQueue<Ev>) -> u32 {
        let sched = &self.sched;
        let (target, boost, rebind) = self.routing[vm].decide(req, |v| sched.credit_priority(v));
        if rebind {
            self.vcpus[target as usize].rebind_owed = true;
        }
        if boost {
            use hypervisor::ops::Threads;
            self.cx(q).smp_boost(now, target);
        }
        target
    }

    /// VF device `dev`'s MSI-X message: the vector masks itself and goes to the vCPU the VM's
    /// routing picks, as an assigned interrupt.
    /// (A VM's VF `i` has its own vector, whose affinity is local vCPU `i mod vcpus`.)
    pub(crate) fn vf_interrupt(&mut self, now: Time, dev: u32, q: &mut EventQueue<Ev>) {
        let d = &mut self.devs[dev as usize];
        d.device.assigned().expect("a VF device").fire(now);
        d.rxq.interrupts += 1;
        self.assigned_interrupt(now, dev, q);
    }

    /// Assigned device `dev`'s MSI-X message (a VF's, an NVMe queue's) goes to the vCPU the
    /// VM's routing picks from the vector's affinity, its local vCPU `home mod vcpus`.
    fn assigned_interrupt(&mut self, now: Time, dev: u32, q: &mut EventQueue<Ev>) {
        let d = &self.devs[dev as usize];
        let (vm, home) = (d.vm as usize, d.home);
        let req = eventpath_policy::routing::RouteRequest { dest: home as usize, ..hypervisor::routing::IrqRouting::device_request(dev, Vector::Vf) };
        let target = self.route_irq(now, vm, req, q);
        self.devs[dev as usize].guest.irq_to = Some(target);
        self.cx(q).raise_irq(now, target, Vector::Vf);
    }

    /// `ns` of the host NIC's interrupt work runs on `cpu` from `now` (`hypervisor/softirq.rs`);
    /// a back-end thread it took the pCPU from finishes its step that much later.
    fn host_irq_work(&mut self, now: Time, cpu: u32, ns: Time, q: &mut EventQueue<Ev>) {
        if let Some((t, held)) = self.cx(q).host_irq_work(now, cpu, ns) {
            self.io.threads[t as usize].interrupted(held);
        }
    }

    /// A command of NVMe device `dev` was served at `now`: its completion entry is posted (the
    /// workload sees it at the next interrupt), the unit fetches the next command, and the
    /// queue's vector sends its message (no coalescing: NVMe's default).
    pub(crate) fn nvme_done(&mut self, now: Time, dev: u32, q: &mut EventQueue<Ev>) {
        let d = &mut self.devs[dev as usize];
        let Device::Nvme(n) = &mut d.device else { unreachable!("an NvmeDone of an NVMe device") };
        let b = n.done(now);
        d.txq.put_used();
        n.fetch(now, dev, &mut d.txq, q);
        debug_assert_eq!(n.serving() as u64, d.txq.in_device(), "the controller serves what it fetched and has not completed");
        self.app_tx_used(now, dev, b, q);
        // (Queue i's vector has vCPU i as its affinity: Linux's managed IRQ affinity.)
        self.devs[dev as usize].txq.interrupts += 1;
        self.assigned_interrupt(now, dev, q);
    }
}
