//! What a guest can get wrong in a split virtqueue, and the per-kind counters.

/// One kind of bad guest input. The request it belongs to is dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum VirtqError {
    /// The avail ring names a head descriptor index >= the ring size.
    #[error("head descriptor index out of range")]
    HeadOutOfRange,
    /// A descriptor's buffer lies (partly) outside guest memory.
    #[error("buffer address outside guest memory")]
    AddrOutOfRange,
    /// A descriptor's length exceeds the per-buffer limit (MAX_BUFFER_LEN).
    #[error("buffer length too large")]
    HugeLength,
    /// The chain visits more descriptors than the ring has: a loop.
    #[error("loop in descriptor chain")]
    ChainLoop,
    /// A `next` index >= the ring size.
    #[error("next descriptor index out of range")]
    NextOutOfRange,
    /// avail->idx moved by more than the ring size since the device last looked.
    #[error("avail index jumped by more than the ring size")]
    AvailIdxJump,
    /// VIRTQ_DESC_F_INDIRECT, which this device does not negotiate.
    #[error("indirect descriptor not negotiated")]
    Indirect,
    /// The rings themselves do not fit guest memory (set-up error).
    #[error("ring outside guest memory")]
    RingOutOfRange,
}

impl VirtqError {
    /// Every kind, in counter order.
    pub const ALL: [VirtqError; 8] = [
        VirtqError::HeadOutOfRange,
        VirtqError::AddrOutOfRange,
        VirtqError::HugeLength,
        VirtqError::ChainLoop,
        VirtqError::NextOutOfRange,
        VirtqError::AvailIdxJump,
        VirtqError::Indirect,
        VirtqError::RingOutOfRange,
    ];

    /// Stable name used in summary.json `counters.guest_errors`.
    pub fn name(self) -> &'static str {
        match self {
            VirtqError::HeadOutOfRange => "head_out_of_range",
            VirtqError::AddrOutOfRange => "addr_out_of_range",
            VirtqError::HugeLength => "huge_length",
            VirtqError::ChainLoop => "chain_loop",
            VirtqError::NextOutOfRange => "next_out_of_range",
            VirtqError::AvailIdxJump => "avail_idx_jump",
            VirtqError::Indirect => "indirect",
            VirtqError::RingOutOfRange => "ring_out_of_range",
        }
    }

    fn slot(self) -> usize {
        Self::ALL.iter().position(|k| *k == self).unwrap_or(0)
    }
}

/// Errors counted per kind (each one is a dropped request, except `AvailIdxJump`, which drops
/// whatever the guest claimed to have published).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ErrorCounts(pub [u64; 8]);

impl ErrorCounts {
    /// Counts one error.
    pub fn count(&mut self, e: VirtqError) {
        self.0[e.slot()] += 1;
    }
    /// Count of one kind.
    pub fn get(&self, e: VirtqError) -> u64 {
        self.0[e.slot()]
    }
    /// All kinds.
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }
    /// Adds another set.
    pub fn add(&mut self, o: &ErrorCounts) {
        for (a, b) in self.0.iter_mut().zip(o.0) {
            *a += b;
        }
    }
}
