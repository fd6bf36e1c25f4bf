//! The model's events (`Host::handle` dispatches them, one arm per layer): each layer's own
//! (`hw::Event`, `hypervisor::Event`, `io::Event`), which the layer schedules itself
//! (`engine::Schedule`), and a workload client's (`ClientEv` with its device), kept flat so that
//! the event stays 16 bytes. Small and `Copy`: the heap stores them inline.

use crate::model::{hw, hypervisor, io};

/// Every event of the model. Small and `Copy`: the heap stores them inline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ev {
    /// End of warm-up: start measuring.
    Warmup,
    /// A hardware event (`hw/event.rs`).
    Hw(hw::Event),
    /// A hypervisor event (`hypervisor/event.rs`).
    Hv(hypervisor::Event),
    /// A back end's event (`io/event.rs`).
    Io(io::Event),
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
}

impl Ev {
    /// The kinds' names, indexed by [`Ev::kind`] (the benchmark's events-by-kind census).
    pub const KINDS: [&'static str; 27] = [
        "Warmup", "GuestDone", "ExitDone", "SchedIn", "HostTick", "TimerFire", "WireDone", "Tick",
        "HostRx", "Client", "HaltPollEnd", "IrqDeadline", "ClientNicIrq", "Ioeventfd", "VfIrq", "IoStep", "IoWake", "IoPoll",
        "SchedTimer", "NeedResched", "CallFunctionIpi", "ClientPort", "ThreadStart", "KthreadWake", "KthreadDone", "ReschedIpi",
        "NvmeDone",
    ];

    /// This event's kind, an index into [`Ev::KINDS`].
    pub fn kind(&self) -> usize {
        match self {
            Ev::Warmup => 0,
            Ev::Hv(hypervisor::Event::GuestDone { .. }) => 1,
            Ev::Hv(hypervisor::Event::ExitDone { .. }) => 2,
            Ev::Hv(hypervisor::Event::SchedIn { .. }) => 3,
            Ev::Hv(hypervisor::Event::HostTick { .. }) => 4,
            Ev::Hv(hypervisor::Event::TimerFire { .. }) => 5,
            Ev::Hw(hw::Event::WireDone { .. }) => 6,
            Ev::Hv(hypervisor::Event::Tick { .. }) => 7,
            Ev::Hw(hw::Event::HostRx { .. }) => 8,
            Ev::Client { .. } => 9,
            Ev::Hv(hypervisor::Event::HaltPollEnd { .. }) => 10,
            Ev::Io(io::Event::IrqDeadline { .. }) => 11,
            Ev::Hw(hw::Event::ClientNicIrq { .. }) => 12,
            Ev::Io(io::Event::Ioeventfd { .. }) => 13,
            Ev::Hw(hw::Event::VfIrq { .. }) => 14,
            Ev::Io(io::Event::IoStep { .. }) => 15,
            Ev::Io(io::Event::IoWake { .. }) => 16,
            Ev::Io(io::Event::IoPoll { .. }) => 17,
            Ev::Hv(hypervisor::Event::SchedTimer { .. }) => 18,
            Ev::Hv(hypervisor::Event::NeedResched { .. }) => 19,
            Ev::Hv(hypervisor::Event::CallFunctionIpi { .. }) => 20,
            Ev::Hw(hw::Event::ClientPort) => 21,
            Ev::Hv(hypervisor::Event::ThreadStart { .. }) => 22,
            Ev::Hv(hypervisor::Event::KthreadWake { .. }) => 23,
            Ev::Hv(hypervisor::Event::KthreadDone { .. }) => 24,
            Ev::Hv(hypervisor::Event::ReschedIpi { .. }) => 25,
            Ev::Hw(hw::Event::NvmeDone { .. }) => 26,
        }
    }
}

impl From<hw::Event> for Ev {
    fn from(e: hw::Event) -> Ev {
        Ev::Hw(e)
    }
}

impl From<hypervisor::Event> for Ev {
    fn from(e: hypervisor::Event) -> Ev {
        Ev::Hv(e)
    }
}

impl From<io::Event> for Ev {
    fn from(e: io::Event) -> Ev {
        Ev::Io(e)
    }
}
