//! The network constants both ends of a workload share (the guest's TCP/UDP and its peer on the
//! client machine), in one place that every workload imports downward. The wire's own framing
//! (`TCP_IP_HDR`, `udp_wire_bytes`) belongs to the link model in `hw/wire.rs`, which the SR-IOV
//! VF also uses; it is re-exported here so that a workload names one module for all of them.

use crate::engine::Time;

pub use crate::model::hw::wire::{udp_frames, udp_wire_bytes, TCP_IP_HDR};

/// Linux `TCP_RTO_MIN` (`HZ/5`, include/net/tcp.h): the retransmission timeout of a lost
/// segment (a SYN's initial RTO is the client kernel's: `client.tcp_syn_rto_ns`).
pub const TCP_RTO_MIN_NS: Time = 200_000_000;

/// Linux `TCP_RTO_MAX` (120 s, include/net/tcp.h): the longest a backed-off timer waits.
pub const TCP_RTO_MAX_NS: Time = 120_000_000_000;

/// The retransmission timeout after `backoff` consecutive timeouts without an ACK of new data
/// (`tcp_retransmit_timer`: `icsk_rto = min(icsk_rto << 1, TCP_RTO_MAX)`, from an RTO that a
/// LAN's microsecond RTT leaves at `TCP_RTO_MIN`; `tcp_ack_update_rtt` clears the backoff).
pub fn rto_after(backoff: u32) -> Time {
    backed_off(TCP_RTO_MIN_NS, backoff)
}

/// A timer of initial value `base` after `backoff` timeouts: doubled each time, at most
/// `TCP_RTO_MAX` (a SYN's too: `tcp_retransmit_timer` backs off `icsk_rto` from
/// `TCP_TIMEOUT_INIT` the same way).
pub fn backed_off(base: Time, backoff: u32) -> Time {
    base.saturating_mul(1 << backoff.min(16)).min(TCP_RTO_MAX_NS)
}

#[cfg(test)]
mod tests {
    // By path, not `super::*`: the layer test reads `super::` as an import of the registry.
    use crate::engine::Time;
    use crate::model::workload::net::{backed_off, rto_after, TCP_RTO_MAX_NS};

    #[test]
    fn the_rto_doubles_per_timeout_up_to_tcp_rto_max() {
        let ms: Vec<Time> = (0..4).map(|b| rto_after(b) / 1_000_000).collect();
        assert_eq!(ms, [200, 400, 800, 1600]);
        // 200 ms x 2^10 = 204.8 s is past the cap.
        assert_eq!(rto_after(9), 102_400_000_000);
        assert_eq!(rto_after(10), TCP_RTO_MAX_NS);
        assert_eq!(rto_after(u32::MAX), TCP_RTO_MAX_NS);
        // A SYN from 2.6.32's 3 s: 3, 6, 12 s.
        let syn: Vec<Time> = (0..3).map(|b| backed_off(3_000_000_000, b) / 1_000_000_000).collect();
        assert_eq!(syn, [3, 6, 12]);
    }
}

/// Packets the host's tap device queues for its reader (drivers/net/tun.c `TUN_READQ_SIZE`).
pub const TAP_QUEUE_PACKETS: usize = 500;

/// Per-skb memory charged to a socket besides the payload (skb + shared info, ~`SKB_TRUESIZE`):
/// what a UDP socket's receive buffer counts per datagram.
pub const SKB_OVERHEAD_BYTES: u64 = 768;
