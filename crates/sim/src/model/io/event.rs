//! The back ends' events: a thread's step, sleep and spin, a kick's ioeventfd signal, a moderated
//! interrupt's deadline. Scheduled through `engine::Schedule`; the model root's event
//! (`model/event.rs`) carries them.

/// The back ends' events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// A queue's moderated interrupt is due (`moderation.rs`).
    IrqDeadline {
        /// Device index.
        dev: u32,
        /// The RX queue (else TX).
        rx: bool,
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
    },
}
