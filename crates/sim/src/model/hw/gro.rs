//! The receive half of segmentation offload: GRO and the buffers a merged skb fills.
//!
//! * **GRO** (`napi_gro_receive` → `dev_gro_receive` → `tcp4_gro_receive`): within one NAPI
//!   poll, a TCP data segment that continues a held skb of the same flow is appended to it
//!   (`skb_gro_receive`) instead of going up the stack on its own; the held skb goes up when
//!   the poll ends or when the next segment would reach `gro_max_size` (64 KB:
//!   `p->len + len >= gro_max_size` refuses it). The host's NIC driver does it on the port's
//!   path (a poll is the frames of one interrupt) and the guest's virtio-net or VF driver does
//!   it in its own NAPI poll. A segment that carries a SYN or FIN, a pure ACK, or UDP is never
//!   merged (`tcp4_gro_receive` flushes on flags; UDP GRO of forwarded traffic is off by
//!   default).
//! * **`VIRTIO_NET_F_GUEST_TSO4`**: the guest takes GSO skbs, so the host's GRO skb reaches it
//!   whole; without it the tap's features lack TSO and the host cuts the skb back into MSS
//!   frames before the tap (`validate_xmit_skb` → software GSO), so nothing the host merged
//!   reaches the guest merged.
//! * **Mergeable receive buffers** (`VIRTIO_NET_F_MRG_RXBUF`): a packet larger than one buffer
//!   fills several (`num_buffers`), each a used-ring entry. The driver sizes its buffers by
//!   an average of recent packet lengths up to a page less the header (`get_mergeable_buf_len`,
//!   `PAGE_SIZE` 4096), so a 64 KB skb takes 16 buffers and an MSS frame one.
//!
//! Nothing here is a cost: the costs per frame, per skb and per buffer are the profile's
//! (`host.nic_rx_frame_ns` / `nic_rx_skb_ns`, `guest.gro_segment_ns`, `guest.rx_buffer_ns`).

use crate::engine::Time;
use crate::model::hw::rxq::{Ctl, RxPkt};
use crate::model::hw::wire::TCP_IP_HDR;

/// `ETH_HLEN`: the Ethernet header GRO's skb carries beyond the IP packet.
const ETH_HLEN: u32 = 14;

/// A mergeable receive buffer's largest payload: a page less the virtio-net header
/// (`PAGE_SIZE` 4096 − `sizeof(struct virtio_net_hdr_mrg_rxbuf)` 12).
pub const MERGEABLE_BUF_BYTES: u32 = 4096 - 12;

/// A frame of one TCP flow that GRO may append to a held skb: data, no SYN/FIN.
pub fn mergeable(p: &RxPkt) -> bool {
    p.bytes > 0 && p.ctl == Ctl::None
}

/// Whether `next` can be appended to `held` within `gro_max` bytes (the skb's length with its
/// Ethernet and TCP/IP headers must stay below it).
pub fn fits(held: &RxPkt, next: &RxPkt, gro_max: u32) -> bool {
    mergeable(held) && mergeable(next) && held.conn == next.conn && ETH_HLEN + TCP_IP_HDR + held.bytes + next.bytes < gro_max
}

/// Append `next` to `held`: its bytes and frames; the newest ACK; the oldest send time.
pub fn merge(held: &mut RxPkt, next: &RxPkt) {
    held.bytes += next.bytes;
    held.segs += next.segs;
    held.ack = held.ack.max(next.ack);
    held.born = held.born.min(next.born);
}

/// Receive buffers a packet of `bytes` payload takes in the guest's RX ring: one without
/// `VIRTIO_NET_F_GUEST_TSO4` (no packet exceeds an MTU buffer), else as many mergeable
/// buffers as its Ethernet frame needs.
pub fn buffers(bytes: u32, guest_tso4: bool) -> u16 {
    if !guest_tso4 {
        return 1;
    }
    (ETH_HLEN + TCP_IP_HDR + bytes).div_ceil(MERGEABLE_BUF_BYTES).max(1) as u16
}

/// An skb on the host's receive path between the port and the tap: the frames of one NAPI
/// poll (one interrupt, `irq`) that GRO merged, or a single frame.
#[derive(Debug, Clone, Copy)]
pub struct PortSkb {
    /// Its first frame opened the host NIC's interrupt (whose work it then carries).
    pub opened: bool,
    /// The interrupt whose poll receives it.
    pub irq: Time,
    /// The skb as far as GRO has built it (its frames, bytes and flow).
    pub pkt: RxPkt,
}

/// The host's GRO on the port's path for one device: frames of one poll whose flow continues
/// the last skb still on its way to the tap are appended to it; `enabled` is false for a
/// device whose skbs cannot reach the guest merged (no `GUEST_TSO4`) or whose guest takes no
/// TCP data.
#[derive(Debug, Clone, Copy)]
pub struct HostGro {
    pub enabled: bool,
    /// `gro_max_size`, and at most what the guest's RX ring can hold in one packet.
    pub max_bytes: u32,
}

impl HostGro {
    /// Whether the frame `pkt`, received by the poll of interrupt `irq`, joins `tail` (the
    /// device's newest skb not yet at the tap).
    pub fn joins(&self, tail: Option<&PortSkb>, irq: Time, pkt: &RxPkt) -> bool {
        self.enabled && tail.is_some_and(|t| t.irq == irq && fits(&t.pkt, pkt, self.max_bytes))
    }
}

/// The run of packets at the head of `used` the guest's GRO merges into one skb: one flow's
/// data within `gro_max` bytes, at most `limit` packets (the poll's budget left).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GuestRun {
    /// Packets in the run.
    pub pkts: u32,
    /// Their payload bytes.
    pub bytes: u64,
    /// Their receive buffers beyond each packet's first.
    pub extra_bufs: u64,
}

/// The guest GRO's run at the head of `used` (see [`GuestRun`]); one pass over the ring.
pub fn guest_run<'a>(mut used: impl Iterator<Item = &'a RxPkt>, gro_max: u32, limit: u32) -> GuestRun {
    let Some(first) = used.next() else { return GuestRun { pkts: 0, bytes: 0, extra_bufs: 0 } };
    let mut held = *first;
    let mut run = GuestRun { pkts: 1, bytes: u64::from(first.bytes), extra_bufs: u64::from(first.bufs) - 1 };
    for p in used {
        if run.pkts >= limit || !fits(&held, p, gro_max) {
            break;
        }
        merge(&mut held, p);
        run.pkts += 1;
        run.bytes += u64::from(p.bytes);
        run.extra_bufs += u64::from(p.bufs) - 1;
    }
    run
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(bytes: u32, conn: u32) -> RxPkt {
        RxPkt { bytes, ack: 0, born: 0, conn, ctl: Ctl::None, segs: 1, bufs: 1 }
    }

    #[test]
    fn gro_appends_one_flows_data_up_to_64_kb_and_never_a_pure_ack_a_syn_or_another_flow() {
        let mut held = seg(1448, 0);
        for _ in 1..45 {
            assert!(fits(&held, &seg(1448, 0), 65536));
            merge(&mut held, &seg(1448, 0));
        }
        assert_eq!((held.bytes, held.segs), (45 * 1448, 45));
        assert!(!fits(&held, &seg(1448, 0), 65536), "a 46th segment would pass 64 KB");
        let one = seg(1448, 0);
        assert!(!fits(&one, &seg(1448, 1), 65536));
        assert!(!fits(&one, &seg(0, 0), 65536));
        assert!(!fits(&one, &RxPkt { ctl: Ctl::Fin, ..seg(100, 0) }, 65536));
    }

    #[test]
    fn a_64_kb_skb_fills_16_mergeable_buffers_and_an_mss_frame_one() {
        assert_eq!(buffers(45 * 1448, true), 16);
        assert_eq!(buffers(1448, true), 1);
        assert_eq!(buffers(45 * 1448, false), 1);
    }

    #[test]
    fn the_guests_run_stops_at_another_flow_and_at_the_budget() {
        let used = [seg(1448, 0), seg(1448, 0), seg(1448, 1), seg(1448, 1)];
        assert_eq!(guest_run(used.iter(), 65536, 64), GuestRun { pkts: 2, bytes: 2 * 1448, extra_bufs: 0 });
        assert_eq!(guest_run(used[2..].iter(), 65536, 64).pkts, 2);
        assert_eq!(guest_run(used.iter(), 65536, 1).pkts, 1);
        assert_eq!(guest_run([].iter(), 65536, 64).pkts, 0);
    }

    #[test]
    fn the_host_joins_only_frames_of_the_same_poll() {
        let g = HostGro { enabled: true, max_bytes: 65536 };
        let tail = PortSkb { opened: true, irq: 100, pkt: seg(1448, 0) };
        assert!(g.joins(Some(&tail), 100, &seg(1448, 0)));
        assert!(!g.joins(Some(&tail), 200, &seg(1448, 0)));
        assert!(!g.joins(None, 100, &seg(1448, 0)));
        assert!(!HostGro { enabled: false, ..g }.joins(Some(&tail), 100, &seg(1448, 0)));
    }
}
