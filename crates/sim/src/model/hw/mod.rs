//! Hardware (DESIGN §2's lowest model layer): the LAPIC and the posted-interrupt descriptor, the
//! virtqueues' memory and their notification gates, the NIC (port, transmit arbiter, receive
//! interrupt throttles) and SR-IOV VFs. Nothing here knows a hypervisor, a back end, a guest or
//! a workload (`tests/layers.rs`).

pub(crate) mod event;
pub(crate) use event::Event;
pub(crate) mod client_port;
pub(crate) mod device;
pub(crate) mod gro;
pub(crate) mod host_nic;
pub(crate) mod lapic;
pub(crate) mod nic_itr;
pub(crate) mod nic_tx;
pub(crate) mod notify;
pub(crate) mod nvme;
pub(crate) mod pi;
pub(crate) mod rxq;
pub(crate) mod vf;
pub(crate) mod virtq;
pub(crate) mod wire;
