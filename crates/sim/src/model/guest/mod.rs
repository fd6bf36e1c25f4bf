//! The guest kernel (DESIGN §2): the virtio-net driver's TX path, NAPI, the guest's scheduler
//! for application threads and a server's workers. It may use the hardware, hypervisor and
//! back-end layers, never a workload by import (`tests/layers.rs`).

pub(crate) mod ctx;
pub(crate) mod driver;
pub(crate) mod guest_sched;
pub(crate) mod lookbusy;
pub(crate) mod mtvd;
pub(crate) mod mtvd_rx;
pub(crate) mod napi;
pub(crate) mod net_rx;
pub(crate) mod netif;
pub(crate) mod ops;
pub(crate) mod tso;
pub(crate) mod workers;
