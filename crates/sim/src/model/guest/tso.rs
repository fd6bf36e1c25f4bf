//! The guest TCP's size goal: how many bytes one skb may carry down the stack (Linux 4.4
//! `tcp_send_mss` → `tcp_xmit_size_goal`). Without segmentation offload an skb is one MSS, so
//! every per-packet cost — the TCP/IP transmit path, a virtqueue descriptor chain, the back
//! end's request, a tap and NIC hand-off — is paid per 1,448 bytes. With TSO negotiated
//! (`VIRTIO_NET_F_HOST_TSO4`: the device takes GSO skbs, which the host's NIC cuts into frames)
//! the goal is as many whole MSS as fit in the device's `gso_max_size` less the stack's header
//! room, bounded by half the peer's window (`tcp_bound_to_half_wnd`): 45 × 1,448 = 65,160
//! bytes on a 1,500-byte MTU, the size a capture of a Linux TSO sender shows.
//!
//! With TSO, `tcp_tso_should_defer` holds an skb of several segments back while the open
//! window is less than both a full TSO skb and a third of the window (`tcp_tso_win_divisor`
//! 3), so that a sender whose ACKs come back slowly — a busy back end, a long queue — sends
//! fewer, larger skbs instead of trickling out each MSS as it is written; an ACK that opens
//! the window releases it. Its other rules are not modelled: the head's age against half the
//! smoothed RTT (here a window-limited sender's oldest byte is always that old) and the
//! recency of the last write. Not modelled either: `tcp_tso_autosize` (a goal of about 1 ms of
//! the pacing rate; on a LAN with a µs RTT the pacing rate is far above line rate, so the GSO
//! limit binds).

use crate::model::hw::wire::TCP_IP_HDR;
use crate::profile::Profile;

/// `MAX_TCP_HEADER` on x86-64 (include/net/tcp.h: 128 + `MAX_HEADER`, which is
/// `LL_MAX_HEADER` 128 + 48 with the distribution kernels' tunnel options): the header room
/// `tcp_xmit_size_goal` keeps out of `gso_max_size`.
const MAX_TCP_HEADER: u32 = 304;

/// One connection's segmentation: its MSS and the most bytes one skb carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SizeGoal {
    mss: u32,
    goal: u32,
    /// The peer's window (bytes): a third of it is open enough to send at once.
    window: u64,
}

impl SizeGoal {
    /// The goal on profile `p`'s link for a connection whose peer's window is `window` bytes,
    /// with TSO negotiated (`tso`) or not.
    pub fn new(p: &Profile, tso: bool, window: u64) -> Self {
        let mss = p.nic.mtu_bytes.value as u32 - TCP_IP_HDR;
        if !tso {
            return SizeGoal { mss, goal: mss, window };
        }
        let room = (p.nic.gso_max_size_bytes.value as u32).saturating_sub(1 + MAX_TCP_HEADER);
        let half_window = u32::try_from(window / 2).unwrap_or(u32::MAX);
        let bytes = room.min(half_window.max(mss));
        SizeGoal { mss, goal: (bytes / mss).max(1) * mss, window }
    }

    /// The most payload one skb carries.
    pub fn goal(&self) -> u32 {
        self.goal
    }

    /// The next skb of whole segments when `unsent` bytes wait and the window has `room`:
    /// whole MSS up to the goal (`tcp_mss_split_point`), or None when not even one MSS fits
    /// (a shorter tail is Nagle's to decide).
    pub fn full_segments(&self, unsent: u64, room: u64) -> Option<u32> {
        let n = unsent.min(room).min(u64::from(self.goal));
        (n >= u64::from(self.mss)).then(|| (n / u64::from(self.mss)) as u32 * self.mss)
    }

    /// `tcp_tso_should_defer`: with `unsent` bytes waiting (more than one segment), `room`
    /// of the window open and `in_flight` bytes unacknowledged, hold the skb for an ACK.
    pub fn should_defer(&self, unsent: u64, room: u64, in_flight: u64) -> bool {
        self.goal > self.mss
            && in_flight > 0
            && unsent > u64::from(self.mss)
            && room < u64::from(self.goal)
            && room < self.window / 3
    }

    /// The segments (frames on the wire) an skb of `bytes` payload is cut into.
    pub fn segs(&self, bytes: u32) -> u16 {
        u16::try_from(bytes.div_ceil(self.mss).max(1)).unwrap_or(u16::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile() -> Profile {
        Profile::load("es2").expect("es2 profile")
    }

    #[test]
    fn without_tso_an_skb_is_one_mss() {
        let g = SizeGoal::new(&profile(), false, 1 << 20);
        assert_eq!(g.goal(), 1448);
        assert_eq!(g.full_segments(10_000, 10_000), Some(1448));
        assert_eq!(g.full_segments(1000, 10_000), None);
    }

    #[test]
    fn with_tso_the_goal_is_45_segments_on_a_1500_byte_mtu() {
        let g = SizeGoal::new(&profile(), true, 1 << 20);
        assert_eq!(g.goal(), 45 * 1448);
        assert_eq!(g.full_segments(1 << 20, 1 << 20), Some(65_160));
        // Whole segments only: the tail waits.
        assert_eq!(g.full_segments(16_384, 1 << 20), Some(11 * 1448));
        // The window bounds it.
        assert_eq!(g.full_segments(1 << 20, 3000), Some(2 * 1448));
        assert_eq!(g.segs(65_160), 45);
        assert_eq!(g.segs(100), 1);
    }

    #[test]
    fn an_skb_waits_for_an_ack_only_while_little_of_the_window_is_open() {
        let g = SizeGoal::new(&profile(), true, 300_000);
        assert!(!g.should_defer(3000, 200_000, 100_000), "a full TSO skb can go");
        assert!(g.should_defer(3000, 60_000, 240_000), "less than a full skb and less than a third");
        let small = SizeGoal::new(&profile(), true, 150_000);
        assert!(!small.should_defer(3000, 55_000, 95_000), "a third of the window is open");
        assert!(!g.should_defer(1000, 20_000, 280_000), "one segment is Nagle's");
        assert!(!g.should_defer(3000, 20_000, 0), "nothing in flight: no ACK to wait for");
        assert!(!SizeGoal::new(&profile(), false, 300_000).should_defer(3000, 20_000, 280_000), "without TSO");
    }

    #[test]
    fn half_the_peer_window_bounds_the_goal() {
        let g = SizeGoal::new(&profile(), true, 16_384);
        assert_eq!(g.goal(), 5 * 1448);
    }
}
