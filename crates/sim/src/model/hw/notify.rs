//! Notification suppression of a split virtqueue, both directions, as the simulator's adapter of
//! `eventpath_policy::notify` (the same functions the KVM testbed's guest and backend use).
//!
//! The model keeps free-running ring counters; the gates see them as the 16-bit indices the
//! ring holds and keep what each side last wrote (flags, `avail_event`, `used_event`):
//!
//! * [`KickGate`] — driver → device: the device enables or disables kicks
//!   (`vhost_enable_notify` / `vhost_disable_notify` → [`kick_control`]); the driver asks
//!   whether to kick after publishing buffers (`virtqueue_kick_prepare` → [`driver_should_kick`]).
//! * [`IrqGate`] — device → driver: the driver enables or disables interrupts
//!   (`virtqueue_enable_cb_prepare` / `virtqueue_disable_cb` → [`interrupt_control`]); the device
//!   asks whether to interrupt after publishing used buffers (`vhost_notify` →
//!   [`device_should_interrupt`], against the used index it last signalled).
//!
//! With `VIRTIO_RING_F_EVENT_IDX` (negotiated by Linux vhost-net; the default), a driver that
//! publishes a second buffer before the device has caught up does not kick again.

use eventpath_policy::notify::{
    device_should_interrupt, driver_should_kick, interrupt_control, kick_control, InterruptControlWrite,
    KickControlWrite, Suppression,
};

/// The 16-bit ring index of a free-running counter.
pub fn idx(counter: u64) -> u16 {
    counter as u16
}

/// Driver → device notifications (kicks) of one virtqueue.
#[derive(Debug, Clone)]
pub struct KickGate {
    mode: Suppression,
    used_flags: u16,
    avail_event: u16,
    /// The avail index at the driver's last `virtqueue_kick_prepare`.
    prepared: u16,
    /// Kicks the device has enabled and not disabled since (a model-side mirror, for reports).
    enabled: bool,
}

impl KickGate {
    /// A gate whose driver has published `avail` buffers so far; kicks enabled or not.
    pub fn new(mode: Suppression, avail: u64, enabled: bool) -> Self {
        let mut g = KickGate { mode, used_flags: 0, avail_event: 0, prepared: idx(avail), enabled };
        // A disabled event index lies just behind what the driver has published.
        g.apply(kick_control(mode, enabled, 0, idx(avail)));
        if !enabled && mode == Suppression::EventIdx {
            g.avail_event = idx(avail).wrapping_sub(1);
        }
        g
    }

    fn apply(&mut self, w: KickControlWrite) {
        match w {
            KickControlWrite::UsedFlags(f) => self.used_flags = f,
            KickControlWrite::AvailEvent(e) => self.avail_event = e,
            KickControlWrite::Nothing => {}
        }
    }

    /// Device: ask for a kick at the next buffer after the `seen_avail` it has read.
    pub fn device_enable(&mut self, seen_avail: u64) {
        self.enabled = true;
        self.apply(kick_control(self.mode, true, self.used_flags, idx(seen_avail)));
    }

    /// Device: no kicks while it works.
    pub fn device_disable(&mut self) {
        self.enabled = false;
        self.apply(kick_control(self.mode, false, self.used_flags, 0));
    }

    /// Driver: it has published buffers up to `avail`; should it kick?
    pub fn driver_kick_prepare(&mut self, avail: u64) -> bool {
        let (old, new) = (self.prepared, idx(avail));
        self.prepared = new;
        driver_should_kick(self.mode, self.used_flags, self.avail_event, new, old)
    }

    /// Has the device enabled kicks (and not disabled them since)?
    pub fn device_enabled(&self) -> bool {
        self.enabled
    }
}

/// Device → driver notifications (interrupts) of one virtqueue.
#[derive(Debug, Clone)]
pub struct IrqGate {
    mode: Suppression,
    avail_flags: u16,
    used_event: u16,
    /// The used index the device last signalled (`vq->signalled_used`).
    signalled: u16,
    /// The driver's mirror: interrupts enabled and not disabled since.
    enabled: bool,
}

impl IrqGate {
    /// A gate at used index `used`, interrupts enabled or not.
    pub fn new(mode: Suppression, used: u64, enabled: bool) -> Self {
        let mut g = IrqGate { mode, avail_flags: 0, used_event: 0, signalled: idx(used), enabled };
        g.apply(interrupt_control(mode, enabled, 0, idx(used)));
        if !enabled && mode == Suppression::EventIdx {
            g.used_event = idx(used).wrapping_sub(1);
        }
        g
    }

    fn apply(&mut self, w: InterruptControlWrite) {
        match w {
            InterruptControlWrite::AvailFlags(f) => self.avail_flags = f,
            InterruptControlWrite::UsedEvent(e) => self.used_event = e,
            InterruptControlWrite::Nothing => {}
        }
    }

    /// Driver: interrupt me at the next used buffer after the `last_used` it has consumed.
    pub fn driver_enable(&mut self, last_used: u64) {
        self.enabled = true;
        self.apply(interrupt_control(self.mode, true, self.avail_flags, idx(last_used)));
    }

    /// Driver: no interrupts (its handler or poll runs).
    pub fn driver_disable(&mut self) {
        self.enabled = false;
        self.apply(interrupt_control(self.mode, false, self.avail_flags, 0));
    }

    /// Device: it has published used buffers up to `used`; should it interrupt?
    pub fn device_publish(&mut self, used: u64) -> bool {
        let (old, new) = (self.signalled, idx(used));
        self.signalled = new;
        device_should_interrupt(self.mode, self.avail_flags, self.used_event, new, old)
    }

    /// Has the driver enabled interrupts (and not disabled them since)?
    pub fn driver_enabled(&self) -> bool {
        self.enabled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_idx_kicks_once_until_the_device_catches_up() {
        let mut k = KickGate::new(Suppression::EventIdx, 0, true);
        assert!(k.driver_kick_prepare(1));
        assert!(!k.driver_kick_prepare(2), "second buffer before the device ran: no kick");
        k.device_disable();
        k.device_enable(2); // drained both
        assert!(k.driver_kick_prepare(3));
    }

    #[test]
    fn flags_kick_on_every_buffer_until_the_device_disables() {
        let mut k = KickGate::new(Suppression::Flags, 0, true);
        assert!(k.driver_kick_prepare(1));
        assert!(k.driver_kick_prepare(2));
        k.device_disable();
        assert!(!k.driver_kick_prepare(3));
    }

    #[test]
    fn a_gate_created_disabled_stays_quiet_until_enabled() {
        for mode in [Suppression::Flags, Suppression::EventIdx] {
            let mut k = KickGate::new(mode, 256, false);
            assert!(!k.driver_kick_prepare(300), "{mode:?}");
            k.device_enable(300);
            assert!(k.driver_kick_prepare(301), "{mode:?}");
            let mut i = IrqGate::new(mode, 0, false);
            assert!(!i.device_publish(1), "{mode:?}");
            i.driver_enable(1);
            assert!(i.device_publish(2), "{mode:?}");
        }
    }

    #[test]
    fn event_idx_interrupts_once_per_enable() {
        let mut i = IrqGate::new(Suppression::EventIdx, 0, true);
        assert!(i.device_publish(1));
        assert!(!i.device_publish(2));
        i.driver_enable(2);
        assert!(i.device_publish(3));
    }

    #[test]
    fn indices_wrap_like_the_ring() {
        let mut k = KickGate::new(Suppression::EventIdx, 65_535, true);
        k.device_enable(65_535);
        assert!(k.driver_kick_prepare(65_536));
        assert!(!k.driver_kick_prepare(65_537));
    }
}
