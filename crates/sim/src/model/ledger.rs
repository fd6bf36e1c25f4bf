//! The conservation ledger (DESIGN §6): what every run's lifetime counters must balance,
//! gathered from the model's parts (`Host::conservation`) and checked by `Conservation::check`.

use crate::engine::Time;
use crate::model::workload;
use crate::model::host::Host;

/// Conservation ledger of one VM and the host (DESIGN §6), from lifetime counters.
///
/// "Per VM" lines are per device's flow: a VM's, or each of its VFs' (`[vm.net] vfs`, whose
/// devices follow one another: index = the VM's first device + the VF's index), so that the
/// identities close per device. Without several VFs, device `i` is VM `i`.
#[derive(Debug, Clone, Default)]
pub struct Conservation {
    /// Per VM: packets the guest handed to its driver.
    pub sent: Vec<u64>,
    /// Per VM: packets delivered to the client.
    pub delivered: Vec<u64>,
    /// Per VM: packets dropped (UDP frames at the host port's full qdisc; the guest's TX path
    /// stops the queue instead of dropping).
    pub dropped: Vec<u64>,
    /// Per VM: packets in the qdisc backlog, the TX ring, vhost's hands, or on the wire.
    pub in_flight: Vec<u64>,
    /// Per vCPU: interrupts raised.
    pub irq_raised: Vec<u64>,
    /// Per vCPU: interrupts accepted by the guest (handled or being handled).
    pub irq_handled: Vec<u64>,
    /// Per vCPU: interrupts coalesced into a pending one.
    pub irq_coalesced: Vec<u64>,
    /// Per vCPU: interrupts pending (IRR + PIR).
    pub irq_pending: Vec<u64>,
    /// Per device: packets (ACKs or datagrams) that reached the host from the client.
    pub rx_arrived: Vec<u64>,
    /// Per device: of those, dropped at the tap queue.
    pub rx_tap_dropped: Vec<u64>,
    /// Per device: of those, on the tap socket, in vhost's hands, or in the used ring.
    pub rx_queued: Vec<u64>,
    /// Per device: of those, received by the guest's NAPI.
    pub rx_polled: Vec<u64>,
    /// Per device: packets the client sent that are still on the reverse link.
    pub rx_on_link: Vec<u64>,
    /// Per VM: of `in_flight`, packets on the shared TX link.
    pub tx_on_link: Vec<u64>,
    /// Host: packets handed to the shared TX link (= Σ delivered + Σ tx_on_link).
    pub port_tx_packets: u64,
    /// Host: packets handed to the shared RX link (= Σ rx_arrived + Σ rx_on_link).
    pub port_rx_packets: u64,
    /// Host: hBalance `SMP_BOOST`s the scheduler carried out in the window (a debug counter:
    /// always 0 under CFS, which carries none out).
    pub smp_boosts: u64,
    /// Per VM (UDP receive): datagrams the client sent.
    pub udp_rx_sent: Vec<u64>,
    /// Per VM (UDP receive): datagrams the application received.
    pub udp_rx_received: Vec<u64>,
    /// Per VM (UDP receive): datagrams dropped at the socket.
    pub udp_rx_sock_dropped: Vec<u64>,
    /// Per VM (UDP receive): datagrams waiting in the socket.
    pub udp_rx_in_socket: Vec<u64>,
    /// Per VM (TCP request/response): requests the client issued.
    pub rr_issued: Vec<u64>,
    /// Per VM (TCP request/response): transactions completed at the client.
    pub rr_completed: Vec<u64>,
    /// Per VM (TCP request/response): the client's concurrency (issued + next_pending −
    /// completed is one transaction in flight per connection, so it equals this).
    pub rr_concurrency: Vec<u64>,
    /// Per VM (TCP request/response): completed connections whose next request waits for the
    /// client's core.
    pub rr_next_pending: Vec<u64>,
    /// Per VM (TCP receive stream): segments the client sent (= packets that reached the host
    /// + those on the reverse link, less the guest-bound ACK traffic, which is none).
    pub tcp_rx_sent: Vec<u64>,
    /// Per vCPU (host-wide): requests a TCP server worker served there (lifetime).
    pub rr_served_by_vcpu: Vec<u64>,
    /// Per VM: the identities its workload vouches for (`App::ledger`), checked with the
    /// host's.
    pub workload_balances: Vec<Vec<workload::app::Balance>>,
    /// Per pCPU: busy ns in the window.
    pub pcpu_busy_ns: Vec<u64>,
    /// Per pCPU: run time of the threads (vCPUs, vhost, hogs) on it, in the window.
    pub pcpu_thread_ns: Vec<u64>,
    /// Window length (ns).
    pub window_ns: u64,
    /// Per host thread: its longest single wait for a pCPU over the run (ns).
    pub thread_longest_wait_ns: Vec<u64>,
    /// The longest CFS may keep a runnable thread waiting, when every thread weighs the same
    /// (None: weights differ); a longer wait is starvation.
    pub starvation_bound_ns: Option<u64>,
}

impl Host {
    /// The conservation ledger at time `now`.
    pub fn conservation(&self, now: Time) -> Conservation {
        let mut c = Conservation { window_ns: now - self.window_start, ..Default::default() };
        for (i, d) in self.devs.iter().enumerate() {
            let vm = &self.vms[d.vm as usize];
            c.sent.push(self.senders[i].sent_life());
            c.delivered.push(d.wire.delivered_life);
            c.dropped.push(d.wire.dropped_life);
            // A VF's descriptors in the NIC's hands are its frames on the link.
            let in_device = if d.device.is_assigned() { 0 } else { d.txq.in_device() };
            let on_link = self.port.tx.in_flight(i as u32) as u64;
            // A disk's requests are no frames: its workload balances them (`tx_queued`).
            let ring = d.txq.pending() as u64 + in_device;
            let disk = d.device.is_disk();
            c.in_flight.push(d.guest.qdisc.len() as u64 + if disk { 0 } else { ring } + on_link);
            c.tx_on_link.push(on_link);
            c.rx_arrived.push(d.rx_arrived_life);
            c.rx_tap_dropped.push(d.tap_drops_life);
            // Frames (a GRO skb counts its own): on the tap socket and in the ring. Those on
            // their way to the tap are still the client's, on the reverse link.
            let in_sock = d.rx_sock.iter().map(|p| u64::from(p.segs)).sum::<u64>();
            c.rx_queued.push(in_sock + d.rxq.queued_segs());
            let on_link = d.client.on_link() as u64 + d.nic.in_flight();
            c.rx_on_link.push(on_link);
            let dl = workload::DevLedger {
                rx_arrived: d.rx_arrived_life,
                rx_tap_dropped: d.tap_drops_life,
                // Frames NAPI took off the ring that an MTVD thread has not yet taken up.
                rx_queued: *c.rx_queued.last().expect("pushed above") + d.guest.mtvd.as_ref().map_or(0, |m| m.queued_segs()),
                rx_on_link: on_link,
                rx_client_dropped: d.client.qdisc_drops_life,
                tx_queued: ring,
            };
            let l = self.senders[i].ledger(&dl);
            c.udp_rx_sent.push(l.udp_rx[0]);
            c.udp_rx_received.push(l.udp_rx[1]);
            c.udp_rx_sock_dropped.push(l.udp_rx[2]);
            c.udp_rx_in_socket.push(l.udp_rx[3]);
            c.rr_issued.push(l.rr[0]);
            c.rr_completed.push(l.rr[1]);
            c.rr_concurrency.push(l.rr[2]);
            c.rr_next_pending.push(l.rr[3]);
            // Per vCPU: a VM's once (from its first device's application).
            match l.served_by_vcpu {
                Some(s) => c.rr_served_by_vcpu.extend(s),
                None if i as u32 == vm.dev => c.rr_served_by_vcpu.extend(vm.vcpus.iter().map(|_| 0)),
                None => {}
            }
            c.tcp_rx_sent.push(l.tcp_rx_sent);
            c.workload_balances.push(l.balances);
        }
        c.port_tx_packets = self.port.tx.packets_life;
        c.port_rx_packets = self.port.rx.packets_life;
        c.smp_boosts = self.sched.smp_boosts();
        for v in &self.vcpus {
            c.irq_raised.push(v.ledger.raised);
            c.irq_handled.push(v.ledger.accepted);
            c.irq_coalesced.push(v.ledger.coalesced);
            c.irq_pending.push(v.irqs_pending());
        }
        c.rx_polled = self.devs.iter().map(|d| d.guest.napi.received_life).collect();
        c.pcpu_busy_ns = self.pcpu_busy.iter().map(|b| b.busy_ns(now)).collect();
        c.pcpu_thread_ns = (0..self.pcpu_busy.len() as u32).map(|p| self.sched.busy_ns(now, p)).collect();
        c.thread_longest_wait_ns = (0..self.thread_names.len() as u32).map(|t| self.sched.longest_wait(now, t)).collect();
        c.starvation_bound_ns = self.sched.starvation_bound_ns(self.hv.host_tick_ns);
        c
    }
}

impl Conservation {
    /// Check every conservation identity (DESIGN §6); the first that fails, described.
    pub fn check(&self) -> Result<(), String> {
        let eq = |a: u64, b: u64, what: String| if a == b { Ok(()) } else { Err(format!("{what}: {a} != {b}")) };
        for i in 0..self.sent.len() {
            eq(self.sent[i], self.delivered[i] + self.dropped[i] + self.in_flight[i], format!("vm{i} sent = delivered + dropped + in flight"))?;
            eq(self.rx_arrived[i], self.rx_tap_dropped[i] + self.rx_queued[i] + self.rx_polled[i], format!("vm{i} rx arrived = tap dropped + queued + polled"))?;
            // The workload's own identities (`App::ledger`): the workload states them.
            for b in &self.workload_balances[i] {
                eq(b.lhs, b.rhs, format!("vm{i} {}", b.what))?;
            }
        }
        let tx: u64 = self.delivered.iter().zip(&self.tx_on_link).map(|(d, l)| d + l).sum();
        eq(self.port_tx_packets, tx, "port tx = delivered + on link".into())?;
        let rx: u64 = self.rx_arrived.iter().zip(&self.rx_on_link).map(|(a, l)| a + l).sum();
        eq(self.port_rx_packets, rx, "port rx = arrived + on link".into())?;
        for v in 0..self.irq_raised.len() {
            eq(self.irq_raised[v], self.irq_handled[v] + self.irq_coalesced[v] + self.irq_pending[v], format!("vcpu{v} irqs raised = handled + coalesced + pending"))?;
        }
        if let Some(bound) = self.starvation_bound_ns {
            for (t, &w) in self.thread_longest_wait_ns.iter().enumerate() {
                if w > bound {
                    return Err(format!("thread {t} runnable but not run for {w} ns, longer than CFS's bound {bound} ns with every thread of one weight (starved)"));
                }
            }
        }
        for p in 0..self.pcpu_busy_ns.len() {
            eq(self.pcpu_busy_ns[p], self.pcpu_thread_ns[p], format!("pcpu{p} busy = threads' run time"))?;
            if self.pcpu_busy_ns[p] > self.window_ns {
                return Err(format!("pcpu{p} busy {} > window {}", self.pcpu_busy_ns[p], self.window_ns));
            }
        }
        Ok(())
    }
}
