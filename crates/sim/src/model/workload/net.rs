//! The network constants both ends of a workload share (the guest's TCP/UDP and its peer on the
//! client machine), in one place that every workload imports downward. The wire's own framing
//! (`TCP_IP_HDR`, `udp_wire_bytes`) belongs to the link model in `hw/wire.rs`, which the SR-IOV
//! VF also uses; it is re-exported here so that a workload names one module for all of them.

use crate::engine::Time;

pub use crate::model::hw::wire::{udp_frames, udp_wire_bytes, TCP_IP_HDR};

/// Linux `TCP_RTO_MIN` (`HZ/5`, include/net/tcp.h): the retransmission timeout of a lost
/// segment (a SYN's initial RTO is the client kernel's: `client.tcp_syn_rto_ns`).
pub const TCP_RTO_MIN_NS: Time = 200_000_000;

/// Packets the host's tap device queues for its reader (drivers/net/tun.c `TUN_READQ_SIZE`).
pub const TAP_QUEUE_PACKETS: usize = 500;

/// Per-skb memory charged to a socket besides the payload (skb + shared info, ~`SKB_TRUESIZE`):
/// what a UDP socket's receive buffer counts per datagram.
pub const SKB_OVERHEAD_BYTES: u64 = 768;
