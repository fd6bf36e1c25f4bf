//! Virtio notification suppression: the event-index test and the two "should I notify" checks.
//!
//! Both directions of the split virtqueue can suppress notifications (virtio 1.x §2.7.7–2.7.10):
//!
//! * driver → device (kick): the device sets `VRING_USED_F_NO_NOTIFY` in the used ring's flags, or,
//!   with `VIRTIO_F_EVENT_IDX`, publishes `avail_event` (the avail index at which it wants a kick);
//! * device → driver (interrupt): the driver sets `VRING_AVAIL_F_NO_INTERRUPT` in the avail ring's
//!   flags, or, with `VIRTIO_F_EVENT_IDX`, publishes `used_event`.
//!
//! Ring indices are free-running `u16` counters that wrap; all arithmetic here wraps exactly as the
//! C code does on `__u16`.

/// `VRING_USED_F_NO_NOTIFY`: in the used ring's `flags`, the device asks the driver not to kick.
pub const VRING_USED_F_NO_NOTIFY: u16 = 1;
/// `VRING_AVAIL_F_NO_INTERRUPT`: in the avail ring's `flags`, the driver asks for no interrupts.
pub const VRING_AVAIL_F_NO_INTERRUPT: u16 = 1;

/// Literal port of Linux `vring_need_event()` (include/uapi/linux/virtio_ring.h):
///
/// ```c
/// static inline int vring_need_event(__u16 event_idx, __u16 new_idx, __u16 old)
/// {
///     return (__u16)(new_idx - event_idx - 1) < (__u16)(new_idx - old);
/// }
/// ```
///
/// True when moving the index from `old` to `new_idx` crossed `event_idx`, i.e. the other side
/// asked to be notified at an index in `(old, new_idx]` (modulo 2^16).
#[inline]
pub fn vring_need_event(event_idx: u16, new_idx: u16, old: u16) -> bool {
    new_idx.wrapping_sub(event_idx).wrapping_sub(1) < new_idx.wrapping_sub(old)
}

/// Which suppression scheme the two sides negotiated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(rename_all = "snake_case"))]
pub enum Suppression {
    /// Without `VIRTIO_F_EVENT_IDX`: the `flags` fields of the rings.
    Flags,
    /// With `VIRTIO_F_EVENT_IDX`: the `avail_event` / `used_event` indices.
    EventIdx,
}

/// Should the driver kick after publishing avail entries `old_avail..new_avail`?
///
/// Mirrors Linux `virtqueue_kick_prepare_split()`: with event indices, `vring_need_event(avail_event,
/// new, old)`; otherwise, unless the device set `VRING_USED_F_NO_NOTIFY` in `used_flags`.
pub fn driver_should_kick(
    mode: Suppression,
    used_flags: u16,
    avail_event: u16,
    new_avail: u16,
    old_avail: u16,
) -> bool {
    match mode {
        Suppression::EventIdx => vring_need_event(avail_event, new_avail, old_avail),
        Suppression::Flags => used_flags & VRING_USED_F_NO_NOTIFY == 0,
    }
}

/// Should the device interrupt after publishing used entries `old_used..new_used`?
///
/// Mirrors Linux vhost `vhost_notify()` (without `VIRTIO_F_NOTIFY_ON_EMPTY`): with event indices,
/// `vring_need_event(used_event, new, old)`; otherwise unless the driver set
/// `VRING_AVAIL_F_NO_INTERRUPT` in `avail_flags`. Publishing nothing never interrupts.
pub fn device_should_interrupt(
    mode: Suppression,
    avail_flags: u16,
    used_event: u16,
    new_used: u16,
    old_used: u16,
) -> bool {
    match mode {
        Suppression::EventIdx => vring_need_event(used_event, new_used, old_used),
        Suppression::Flags => new_used != old_used && avail_flags & VRING_AVAIL_F_NO_INTERRUPT == 0,
    }
}

/// What the device writes into the used ring to enable or disable kicks.
///
/// Mirrors Linux `vhost_enable_notify()` / `vhost_disable_notify()`: with flags, set or clear
/// `VRING_USED_F_NO_NOTIFY`; with event indices, enabling publishes `avail_event = last_avail_idx`
/// (kick me at the next new buffer) and disabling writes nothing (the stale `avail_event` lies
/// behind the driver, so `vring_need_event` stays false until it wraps around).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KickControlWrite {
    /// Write this value to the used ring's `flags`.
    UsedFlags(u16),
    /// Write this value to `avail_event`.
    AvailEvent(u16),
    /// Nothing to write.
    Nothing,
}

/// The device-side write that enables (`enable = true`) or disables kicks.
pub fn kick_control(mode: Suppression, enable: bool, used_flags: u16, last_avail_idx: u16) -> KickControlWrite {
    match (mode, enable) {
        (Suppression::Flags, true) => KickControlWrite::UsedFlags(used_flags & !VRING_USED_F_NO_NOTIFY),
        (Suppression::Flags, false) => KickControlWrite::UsedFlags(used_flags | VRING_USED_F_NO_NOTIFY),
        (Suppression::EventIdx, true) => KickControlWrite::AvailEvent(last_avail_idx),
        (Suppression::EventIdx, false) => KickControlWrite::Nothing,
    }
}

/// What the driver writes into the avail ring to enable or disable interrupts.
///
/// Mirrors Linux `virtqueue_enable_cb_prepare()` / `virtqueue_disable_cb()` (split ring, 4.4):
/// with flags, clear or set `VRING_AVAIL_F_NO_INTERRUPT`; with event indices, enabling publishes
/// `used_event = last_used_idx` (interrupt me at the next used buffer) and disabling writes
/// nothing (the stale `used_event` lies behind the device, so `vring_need_event` stays false).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InterruptControlWrite {
    /// Write this value to the avail ring's `flags`.
    AvailFlags(u16),
    /// Write this value to `used_event`.
    UsedEvent(u16),
    /// Nothing to write.
    Nothing,
}

/// The driver-side write that enables (`enable = true`) or disables interrupts.
pub fn interrupt_control(mode: Suppression, enable: bool, avail_flags: u16, last_used_idx: u16) -> InterruptControlWrite {
    match (mode, enable) {
        (Suppression::Flags, true) => InterruptControlWrite::AvailFlags(avail_flags & !VRING_AVAIL_F_NO_INTERRUPT),
        (Suppression::Flags, false) => InterruptControlWrite::AvailFlags(avail_flags | VRING_AVAIL_F_NO_INTERRUPT),
        (Suppression::EventIdx, true) => InterruptControlWrite::UsedEvent(last_used_idx),
        (Suppression::EventIdx, false) => InterruptControlWrite::Nothing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Verbatim transcription of the C expression with C's integer promotion: operands promote to
    /// `int`, the subtraction happens in `int`, and the cast to `__u16` keeps the low 16 bits.
    fn vring_need_event_c(event_idx: u16, new_idx: u16, old: u16) -> bool {
        let (e, n, o) = (event_idx as i32, new_idx as i32, old as i32);
        ((n - e - 1) as u16) < ((n - o) as u16)
    }

    #[test]
    fn matches_verbatim_transcription_over_many_values() {
        let samples: Vec<u16> = (0..=u16::MAX).step_by(251).chain([0, 1, 2, 0x7fff, 0x8000, 0xfffe, 0xffff]).collect();
        let mut checked = 0u64;
        for &e in &samples {
            for &n in &samples {
                for &o in &samples {
                    assert_eq!(vring_need_event(e, n, o), vring_need_event_c(e, n, o), "e={e} n={n} o={o}");
                    checked += 1;
                }
            }
        }
        // Exhaustive around the wrap point.
        for e in 0xfff0u16..=0xffff {
            for d in 0u16..32 {
                let n = e.wrapping_add(d);
                for back in 0u16..32 {
                    let o = n.wrapping_sub(back);
                    assert_eq!(vring_need_event(e, n, o), vring_need_event_c(e, n, o));
                    checked += 1;
                }
            }
        }
        assert!(checked > 1_000_000);
    }

    #[test]
    fn crossing_the_event_index_notifies() {
        assert!(vring_need_event(5, 6, 5)); // moved 5 -> 6: entry 5 published, event at 5
        assert!(!vring_need_event(6, 6, 5)); // event at 6 not yet reached
        assert!(vring_need_event(0xffff, 2, 0xfffe)); // crosses the wrap
        assert!(!vring_need_event(10, 10, 10)); // nothing published
    }

    #[test]
    fn kick_follows_flags_or_event_index() {
        assert!(driver_should_kick(Suppression::Flags, 0, 0, 1, 0));
        assert!(!driver_should_kick(Suppression::Flags, VRING_USED_F_NO_NOTIFY, 0, 1, 0));
        assert!(driver_should_kick(Suppression::EventIdx, VRING_USED_F_NO_NOTIFY, 3, 4, 3));
        assert!(!driver_should_kick(Suppression::EventIdx, 0, 3, 7, 4));
    }

    #[test]
    fn interrupt_follows_flags_or_event_index() {
        assert!(device_should_interrupt(Suppression::Flags, 0, 0, 1, 0));
        assert!(!device_should_interrupt(Suppression::Flags, 0, 0, 1, 1));
        assert!(!device_should_interrupt(Suppression::Flags, VRING_AVAIL_F_NO_INTERRUPT, 0, 1, 0));
        assert!(device_should_interrupt(Suppression::EventIdx, VRING_AVAIL_F_NO_INTERRUPT, 9, 10, 8));
        assert!(!device_should_interrupt(Suppression::EventIdx, 0, 20, 10, 8));
    }

    #[test]
    fn interrupt_control_enable_disable_round_trip() {
        let off = interrupt_control(Suppression::Flags, false, 0, 0);
        assert_eq!(off, InterruptControlWrite::AvailFlags(VRING_AVAIL_F_NO_INTERRUPT));
        let on = interrupt_control(Suppression::Flags, true, VRING_AVAIL_F_NO_INTERRUPT, 0);
        assert_eq!(on, InterruptControlWrite::AvailFlags(0));
        // With event idx, enabling asks for an interrupt at the next used buffer, once.
        let InterruptControlWrite::UsedEvent(ev) = interrupt_control(Suppression::EventIdx, true, 0, 7) else { panic!() };
        assert!(device_should_interrupt(Suppression::EventIdx, 0, ev, 8, 7));
        assert!(!device_should_interrupt(Suppression::EventIdx, 0, ev, 9, 8));
        assert_eq!(interrupt_control(Suppression::EventIdx, false, 0, 7), InterruptControlWrite::Nothing);
    }

    #[test]
    fn kick_control_enable_disable_round_trip() {
        let off = kick_control(Suppression::Flags, false, 0, 0);
        assert_eq!(off, KickControlWrite::UsedFlags(VRING_USED_F_NO_NOTIFY));
        assert_eq!(kick_control(Suppression::Flags, true, VRING_USED_F_NO_NOTIFY, 0), KickControlWrite::UsedFlags(0));
        // With event idx, enabling asks for a kick at the next new buffer.
        let KickControlWrite::AvailEvent(ev) = kick_control(Suppression::EventIdx, true, 0, 42) else { panic!() };
        assert!(driver_should_kick(Suppression::EventIdx, 0, ev, 43, 42));
        assert_eq!(kick_control(Suppression::EventIdx, false, 0, 42), KickControlWrite::Nothing);
    }
}
