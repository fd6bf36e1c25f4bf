//! The guest kernel's operations, declared in one place — the driver's ([`Driver`],
//! `driver.rs`), NAPI's receive path ([`NapiOps`], `net_rx.rs`) and MTVD's dispatcher and
//! threads ([`MtvdOps`], `mtvd_rx.rs`) — each implemented for every
//! [`Kernel`](crate::model::guest::ctx::Kernel) in its own file. They call one another (a poll
//! cleans a VF's TX ring; a TX interrupt schedules NAPI; a poll round wakes MTVD's threads):
//! declared here, the files that implement them import this interface and not each other, so
//! the guest's imports have no circle.

use crate::engine::Time;
use crate::model::hw::lapic::Vector;
use crate::model::hw::rxq::RxPkt;
use crate::model::hw::virtq::Buf;
use crate::model::hypervisor::vcpu::Step;

/// The drivers' operations, for every [`Kernel`].
pub(crate) trait Driver {
    /// virtio-net `start_xmit` tail: add the buffer to the TX ring, stop the queue if the ring
    /// is full (and ask for a TX interrupt), kick if the device has notifications enabled.
    /// A packet sent while the queue is stopped — by another vCPU's worker, a control segment
    /// or an ACK — waits in the qdisc until the TX interrupt wakes the queue (`tx_irq`).
    fn post_tx(&mut self, now: Time, v: u32, dev: u32, b: Buf);

    /// Buffers were published on device `dev`'s TX ring by `v`: kick if the device asked for
    /// it, else a back end spinning on the ring (vhost busy polling, a PMD) sees them anyway;
    /// the vCPU goes on.
    fn notify_tx(&mut self, now: Time, v: u32, dev: u32);

    /// A paced sender's turn on `v`: halt while its queue is stopped (the TX interrupt wakes
    /// it), sleep until its next send is due (`next_at`, ns), else run its `send` step.
    fn paced_send(&mut self, now: Time, v: u32, stopped: bool, next_at: f64, send: Step, cost: Time);

    /// The driver notifies the device of new TX buffers: a kick.
    fn kick_tx(&mut self, now: Time, v: u32, dev: u32);

    /// A kick: an I/O-instruction exit in which KVM's ioeventfd signals the vhost thread
    /// `exit.io_signal_ns` after the exit began (at most at its end), not at its start.
    /// `rx`: the RX queue's refill kick (else TX's).
    fn kick_exit(&mut self, now: Time, v: u32, dev: u32, rx: bool);

    /// A kick's ioeventfd fires: the back end learns of the queue's new buffers.
    fn ioeventfd(&mut self, now: Time, dev: u32, rx: bool);

    /// The guest's handler for a device's (or the timer's, a reschedule IPI's) `vec` on `v` did
    /// its device-side work: a TX interrupt's clean (`tx_irq`, the application told, then the
    /// writers it woke), NAPI scheduled for RX, a VF's TX clean and NAPI. Returns whether the
    /// TX queue must be kicked for buffers the handler added. (An `Msi` or a call-function
    /// IPI is a workload's own interrupt: its handler is the workload's.)
    fn irq_handled(&mut self, now: Time, v: u32, vec: Vector) -> bool;

    /// Did vCPU `v`'s handler take device `dev`'s RX (else TX) interrupt? (A multi-queue
    /// virtio-net device: each queue pair's interrupt is for the vCPU it was routed to.)
    fn took_irq(&mut self, v: u32, dev: u32, rx: bool) -> bool;

    /// Device `dev`'s TX interrupt (`skb_xmit_done` → `netif_wake_subqueue`; then `net_tx_action` runs the
    /// qdisc): reclaimed space takes the backlog; the queue stays stopped while the ring fills
    /// again. Returns whether the device must be kicked for buffers added here, and whether a
    /// stopped queue was woken (its writers elsewhere need waking).
    fn tx_irq(&mut self, dev: u32) -> (bool, bool);

    /// The driver stops (`netif_tx_stop_queue`) or wakes device `dev`'s TX queue; the
    /// workload using the device sees it. Returns whether the queue was stopped before.
    fn set_tx_stopped(&mut self, dev: u32, stopped: bool) -> bool;

    /// A TX interrupt on vCPU `v` woke device `dev`'s queue (`netif_wake_queue`): the writers
    /// that halted on it elsewhere — the application's vCPU (device `dev`'s reader's, local
    /// `home mod vcpus`), or every server worker's — get a reschedule IPI (their ICR write is
    /// not charged: the EOI or kick exit of `v` follows).
    fn wake_writers(&mut self, now: Time, v: u32, dev: u32);

    /// ixgbevf: the driver posts a TX descriptor and writes the tail (MMIO to the VF's BAR,
    /// no exit); the NIC fetches what its queue for the VF has room for (`hw/vf.rs`).
    fn vf_tx(&mut self, now: Time, dev: u32, b: Buf);

    /// The NAPI poll's TX clean on vCPU `v` (`ixgbevf_clean_tx_irq`, first in
    /// `ixgbevf_poll`): the descriptors the NIC wrote back are reclaimed, so send the qdisc's
    /// backlog and wake a stopped queue — and the writers that halted on it on other vCPUs,
    /// whichever of the interrupt or a poll round's clean finds the room.
    fn vf_tx_clean(&mut self, now: Time, v: u32, dev: u32);

    /// NAPI completed with the RX ring empty: its last round's TX clean, then unmask the
    /// vector (the RX refills were tail writes). Write-backs while the vector was masked raise
    /// no interrupt of their own: each poll round's clean is what finds them.
    fn vf_unmask(&mut self, now: Time, v: u32, dev: u32);
}

/// NAPI's operations, for every [`Kernel`].
pub(crate) trait NapiOps {
    /// The RX interrupt handler of device `dev` (`skb_recv_done`): disable callbacks,
    /// schedule NAPI.
    fn napi_schedule(&mut self, v: u32, dev: u32);

    /// At VM entry: run the next NAPI step on `v` if its poll is pending. Returns whether a
    /// task (or an exit) was started. `force`: the vCPU has nothing else to run (ksoftirqd runs
    /// even when deferred).
    fn napi_next(&mut self, now: Time, v: u32, force: bool) -> bool;

    /// [`NapiOps::napi_next`] for device `dev`'s poll.
    fn napi_next_dev(&mut self, now: Time, v: u32, force: bool, dev: u32) -> bool;

    /// One packet received: refill its buffer, hand the ACK to TCP.
    fn napi_rx_done(&mut self, now: Time, v: u32);

    /// NAPI on vCPU `v` handed a packet of device `dev` to the application thread reading it
    /// (`try_to_wake_up` across CPUs; device `dev`'s reader's vCPU is local `home mod vcpus`,
    /// vCPU 0 but for a VM's later VFs): if that thread's vCPU is another one, halted (or halting) or running only
    /// the guest's CPU burn, it gets a reschedule IPI, and the sender's ICR write exits (as a
    /// server worker's wake-up does, `send_ipi`); its softirq goes on after the exit.
    /// Returns whether that exit was started.
    fn wake_app(&mut self, now: Time, v: u32, dev: u32) -> bool;
}

/// MTVD's operations, for every [`Kernel`].
pub(crate) trait MtvdOps {
    /// NAPI on `v` took `pkt` off the VF's ring: hand it to the next thread (woken at the
    /// round's end, [`MtvdOps::mtvd_wake`]).
    fn mtvd_dispatch(&mut self, v: u32, pkt: RxPkt);
    /// NAPI on `v` ended a round or completed: wake every thread with packets handed to it
    /// that sleeps on a halted vCPU, with a reschedule IPI. Returns whether the IPIs' exit
    /// started.
    fn mtvd_wake(&mut self, now: Time, v: u32) -> bool;
    /// At VM entry: run the next packet of `v`'s thread if it has one. Returns whether a task
    /// (or an exit) was started.
    fn mtvd_next(&mut self, now: Time, v: u32) -> bool;
    /// `v`'s thread took its packet up the stack: the socket gets it.
    fn mtvd_done(&mut self, now: Time, v: u32);
}
