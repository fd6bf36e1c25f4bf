//! The hypervisor (DESIGN §2): vCPUs and their exits, interrupt delivery and routing, HLT
//! handling and halt polling, the host scheduler and the threads it runs. It may use the
//! hardware layer, never a back end, the guest kernel or a workload by import
//! (`tests/layers.rs`).

pub(crate) mod event;
pub(crate) use event::Event;
pub(crate) mod cosched;
pub(crate) mod ctx;
pub(crate) mod delivery;
pub(crate) mod dispatch;
pub(crate) mod guest_poll;
pub(crate) mod halt;
pub(crate) mod host_irq;
pub(crate) mod irq;
pub(crate) mod kthread;
pub(crate) mod ops;
pub(crate) mod routing;
pub mod sched;
pub(crate) mod softirq;
pub(crate) mod threads;
pub(crate) mod vcpu;
pub(crate) mod vcpu_run;
