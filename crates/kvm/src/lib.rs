//! KVM testbed (DESIGN §5): a minimal VMM, a purpose-built guest whose loops run at CPL3, and host
//! backend threads that serve its virtqueues through the same `eventpath-policy` state machines as
//! the simulator. See docs/kvm.md.
//!
//! ```text
//!  vCPU threads (KVM_RUN) ── guest CPL3 loop: requests -> avail ring, kick if asked
//!        │  ioeventfd (kick)                       ^ irqfd + MSI route (interrupt)
//!        v                                         │
//!  backend threads: exit-based | polling | hybrid (policy) -> complete -> moderation -> routing
//! ```
pub mod error;
pub mod guest;
pub mod measure;
pub mod virtq;
pub mod vmm;

pub use error::{Error, Result};
