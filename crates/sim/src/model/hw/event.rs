//! The hardware layer's events: a frame through the port or the client's NIC, a frame at the tap or
//! a VF's ring, a NIC's throttled interrupt. Scheduled through `engine::Schedule`; the model root's
//! event (`model/event.rs`) carries them.

/// The hardware layer's events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// A packet has left the wire (delivered to the remote client).
    WireDone {
        /// Device index.
        dev: u32,
    },
    /// The oldest packet on the reverse link (client → host) reached the tap socket.
    HostRx {
        /// Device index.
        dev: u32,
    },
    /// The client NIC's throttled receive interrupt for device `dev`'s flow (`nic_itr.rs`).
    ClientNicIrq {
        /// Device index.
        dev: u32,
    },
    /// An SR-IOV VF's throttled interrupt is due (`vf.rs`).
    VfIrq {
        /// Device index.
        dev: u32,
    },
    /// An assigned NVMe-like device's command is served (`nvme.rs`).
    NvmeDone {
        /// Device index.
        dev: u32,
    },
    /// The client NIC's transmit side: a frame is through, or the next one starts
    /// (`hw/client_port.rs`: a restartable `engine::Timer`).
    ClientPort,
}
