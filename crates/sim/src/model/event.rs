//! The model's events (`Host::handle` dispatches them): small and `Copy`, so that the event
//! heap stores them inline. A leaf: it names no other part of the model.

/// Every event of the model. Small and `Copy`: the heap stores them inline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ev {
    /// End of warm-up: start measuring.
    Warmup,
    /// A vCPU finished a piece of guest work (stale if `epoch` moved on).
    GuestDone {
        /// vCPU index (host-wide).
        vcpu: u32,
        /// vCPU work epoch at scheduling time.
        epoch: u32,
    },
    /// A vCPU finished handling an exit and re-enters the guest.
    ExitDone {
        /// vCPU index.
        vcpu: u32,
    },
    /// The thread the scheduler switched in on `cpu` starts running (stale unless `seq` is
    /// the runqueue's current switch number).
    SchedIn {
        /// pCPU.
        cpu: u32,
        /// Switch sequence number.
        seq: u32,
    },
    /// The host's periodic scheduler tick on a pCPU.
    HostTick {
        /// pCPU.
        cpu: u32,
    },
    /// The guest's LAPIC timer fires.
    TimerFire {
        /// vCPU index.
        vcpu: u32,
    },
    /// A packet has left the wire (delivered to the remote client).
    WireDone {
        /// Device index.
        dev: u32,
    },
    /// Periodic guest scheduler tick of a vCPU (its LAPIC timer as a host hrtimer).
    Tick {
        /// vCPU index.
        vcpu: u32,
    },
    /// The oldest packet on the reverse link (client → host) reached the tap socket.
    HostRx {
        /// Device index.
        dev: u32,
    },
    /// An event of device `dev`'s client (its source, a request, a timer), for the VM's
    /// workload to interpret (`workload.rs`).
    /// (The fields of a `workload::ClientEv`, flattened: the event stays 16 bytes, and the
    /// queue's entries 32.)
    Client {
        /// Device index.
        dev: u32,
        /// See `ClientEv`.
        kind: u8,
        /// See `ClientEv`.
        x: u8,
        /// See `ClientEv`.
        a: u32,
        /// See `ClientEv`.
        b: u32,
    },
    /// A halted vCPU's poll window timer fires (`halt.rs`: a restartable `engine::Timer`).
    HaltPollEnd {
        /// vCPU index.
        vcpu: u32,
    },
    /// A queue's moderated interrupt is due (`moderation.rs`).
    IrqDeadline {
        /// Device index.
        dev: u32,
        /// The RX queue (else TX).
        rx: bool,
    },
    /// The client NIC's throttled receive interrupt for device `dev`'s flow (`nic_itr.rs`).
    ClientNicIrq {
        /// Device index.
        dev: u32,
    },
    /// A kick exit's ioeventfd signals the vhost thread, part-way into the exit (`driver.rs`).
    Ioeventfd {
        /// Device index.
        dev: u32,
        /// The kicking vCPU (its pCPU is the waker).
        vcpu: u32,
        /// The RX queue's refill kick (else the TX queue's).
        rx: bool,
    },
    /// An SR-IOV VF's throttled interrupt is due (`vf.rs`).
    VfIrq {
        /// Device index.
        dev: u32,
    },
    /// A back-end thread finished an item, or time it owed (`io/thread.rs`).
    IoStep {
        /// Back-end thread index.
        thread: u32,
    },
    /// A back-end thread's sleep timer fires (`io/thread.rs`: its timed sleep ends).
    IoWake {
        /// Back-end thread index.
        thread: u32,
    },
    /// A back-end thread's spin timer fires: it looks at its rings again (work was seen, or its
    /// spin's window ends).
    IoPoll {
        /// Back-end thread index.
        thread: u32,
    },    /// A timer the host scheduler asked for fires (`sched::Action::Timer`: Xen credit's tick,
    /// slice end and accounting).
    SchedTimer {
        /// pCPU.
        cpu: u32,
    },
    /// A waker set need_resched for a vCPU whose guest idle loop polls with the POLL flag set
    /// (`guest_poll.rs`), instead of sending it a reschedule IPI.
    NeedResched {
        /// vCPU index.
        vcpu: u32,
    },
    /// A call-function IPI leaves its sender's ICR-write exit (`exit.ipi_send_ns` into it) and
    /// is raised at its target.
    CallFunctionIpi {
        /// Target vCPU index.
        vcpu: u32,
    },
    /// The client NIC's transmit side: a frame is through, or the next one starts
    /// (`hw/client_port.rs`: a restartable `engine::Timer`).
    ClientPort,
}

impl Ev {
    /// The kinds' names, indexed by [`Ev::kind`] (the benchmark's events-by-kind census).
    pub const KINDS: [&'static str; 22] = [
        "Warmup", "GuestDone", "ExitDone", "SchedIn", "HostTick", "TimerFire", "WireDone", "Tick",
        "HostRx", "Client", "HaltPollEnd", "IrqDeadline", "ClientNicIrq", "Ioeventfd", "VfIrq", "IoStep", "IoWake", "IoPoll",
        "SchedTimer", "NeedResched", "CallFunctionIpi", "ClientPort",
    ];

    /// This event's kind, an index into [`Ev::KINDS`].
    pub fn kind(&self) -> usize {
        match self {
            Ev::Warmup => 0,
            Ev::GuestDone { .. } => 1,
            Ev::ExitDone { .. } => 2,
            Ev::SchedIn { .. } => 3,
            Ev::HostTick { .. } => 4,
            Ev::TimerFire { .. } => 5,
            Ev::WireDone { .. } => 6,
            Ev::Tick { .. } => 7,
            Ev::HostRx { .. } => 8,
            Ev::Client { .. } => 9,
            Ev::HaltPollEnd { .. } => 10,
            Ev::IrqDeadline { .. } => 11,
            Ev::ClientNicIrq { .. } => 12,
            Ev::Ioeventfd { .. } => 13,
            Ev::VfIrq { .. } => 14,
            Ev::IoStep { .. } => 15,
            Ev::IoWake { .. } => 16,
            Ev::IoPoll { .. } => 17,
            Ev::SchedTimer { .. } => 18,
            Ev::NeedResched { .. } => 19,
            Ev::CallFunctionIpi { .. } => 20,
            Ev::ClientPort => 21,
        }
    }
}
