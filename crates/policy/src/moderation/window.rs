//! Fixed measurement windows over (packets, bytes), closed lazily from `now_ns`.

/// Traffic seen in one closed window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowSample {
    /// Packets in the window.
    pub packets: u64,
    /// Bytes in the window.
    pub bytes: u64,
    /// Window length. Unit: ns.
    pub len_ns: u64,
}

impl WindowSample {
    /// Average packet size (bytes), `None` when no packet was seen.
    pub fn avg_packet_bytes(&self) -> Option<f64> {
        (self.packets > 0).then(|| self.bytes as f64 / self.packets as f64)
    }
    /// Throughput. Unit: bytes/s.
    pub fn bytes_per_s(&self) -> f64 {
        self.bytes as f64 * 1e9 / self.len_ns as f64
    }
    /// Packet rate. Unit: packets/s.
    pub fn packets_per_s(&self) -> f64 {
        self.packets as f64 * 1e9 / self.len_ns as f64
    }
}

/// Consecutive windows `[start, start+len)`, aligned to the first start.
#[derive(Debug, Clone)]
pub struct Window {
    len_ns: u64,
    start_ns: u64,
    packets: u64,
    bytes: u64,
}

impl Window {
    /// Windows of `len_ns` (≥ 1) starting at `start_ns`.
    pub fn new(len_ns: u64, start_ns: u64) -> Self {
        Self { len_ns: len_ns.max(1), start_ns, packets: 0, bytes: 0 }
    }

    /// Closes the windows that ended by `now_ns`: returns the last full window with traffic, then,
    /// if one or more windows after it passed with no traffic, an empty sample as well (the most
    /// recent state). Returns nothing while the current window is open.
    pub fn advance(&mut self, now_ns: u64) -> [Option<WindowSample>; 2] {
        if now_ns < self.start_ns.saturating_add(self.len_ns) {
            return [None, None];
        }
        let elapsed = (now_ns - self.start_ns) / self.len_ns;
        let closed = WindowSample { packets: self.packets, bytes: self.bytes, len_ns: self.len_ns };
        let empty = WindowSample { packets: 0, bytes: 0, len_ns: self.len_ns };
        self.start_ns += elapsed * self.len_ns;
        self.packets = 0;
        self.bytes = 0;
        [Some(closed), (elapsed > 1 && closed.packets > 0).then_some(empty)]
    }

    /// Counts traffic in the current window (call [`Self::advance`] first).
    pub fn add(&mut self, packets: u32, bytes: u64) {
        self.packets += u64::from(packets);
        self.bytes = self.bytes.saturating_add(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closes_windows_and_reports_idle_gap() {
        let mut w = Window::new(100, 0);
        assert_eq!(w.advance(50), [None, None]);
        w.add(2, 3000);
        let [a, b] = w.advance(100);
        assert_eq!(a.unwrap().avg_packet_bytes(), Some(1500.0));
        assert!(b.is_none());
        w.add(1, 64);
        let [a, b] = w.advance(350); // window [100,200) had traffic, [200,300) empty
        assert_eq!(a.unwrap().packets, 1);
        assert_eq!(b.unwrap().packets, 0);
        assert_eq!(w.advance(399), [None, None]);
    }

    #[test]
    fn rates_are_per_second() {
        let s = WindowSample { packets: 10, bytes: 15_000, len_ns: 100_000_000 };
        assert_eq!(s.packets_per_s(), 100.0);
        assert_eq!(s.bytes_per_s(), 150_000.0);
    }
}

/// What a windowed moderator does when a measurement window closes: look at its traffic and
/// maybe set the throttle's rate (CGR's class table, AIR's Algorithm 1).
pub trait WindowControl {
    /// One closed window.
    fn control(&mut self, s: &WindowSample, throttle: &mut super::Throttle);
}

/// A throttle whose rate a controller sets from the traffic of fixed windows: the common
/// shape of CGR and AIR.
#[derive(Debug, Clone)]
pub struct Windowed<C> {
    control: C,
    window: Window,
    throttle: super::Throttle,
}

impl<C> Windowed<C> {
    /// Windows of `window_ns` from `now_ns`, the throttle at `initial_rate` interrupts/s.
    pub fn with_control(window_ns: u64, now_ns: u64, initial_rate: u32, control: C) -> Self {
        Self { control, window: Window::new(window_ns, now_ns), throttle: super::Throttle::new(initial_rate) }
    }

    /// The controller's state.
    pub fn control(&self) -> &C {
        &self.control
    }
}

impl<C: WindowControl> super::InterruptModerator for Windowed<C> {
    fn on_event(&mut self, now_ns: u64, packets: u32, bytes: u64) -> super::IrqDecision {
        self.advance(now_ns);
        self.window.add(packets, bytes);
        self.throttle.on_event(now_ns, packets, bytes)
    }
    fn on_deadline(&mut self, now_ns: u64) -> bool {
        self.advance(now_ns);
        self.throttle.on_deadline(now_ns)
    }
    fn advance(&mut self, now_ns: u64) {
        for s in self.window.advance(now_ns).into_iter().flatten() {
            self.control.control(&s, &mut self.throttle);
        }
    }
    fn allowed_rate(&self) -> Option<u32> {
        self.throttle.allowed_rate()
    }
    fn observe(&mut self, now_ns: u64, packets: u32, bytes: u64) {
        self.advance(now_ns);
        self.window.add(packets, bytes);
    }
}
