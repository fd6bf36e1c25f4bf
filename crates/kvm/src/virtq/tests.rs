//! Ring validation on a plain memory buffer: every kind of bad input is counted and dropped, the
//! queue (and its neighbours) keep working, and nothing outside guest memory is touched.
use super::*;

const MEM: u64 = 0x10000;
const Q: u16 = 8;

fn ring(q: u64) -> RingAddrs {
    let base = 0x1000 + q * 0x1000;
    RingAddrs { desc: base, avail: base + 0x200, used: base + 0x400 }
}

struct Driver {
    a: RingAddrs,
    idx: u16,
}

impl Driver {
    fn desc(&self, m: &GuestMem, i: u16, addr: u64, len: u32, flags: u16, next: u16) {
        let d = self.a.desc + 16 * i as u64;
        m.store_u64(d, addr).unwrap();
        m.store_u64(d + 8, len as u64 | (flags as u64) << 32 | (next as u64) << 48).unwrap();
    }
    fn publish(&mut self, m: &GuestMem, head: u16) {
        m.store_u16(self.a.avail + 4 + 2 * (self.idx % Q) as u64, head).unwrap();
        self.idx = self.idx.wrapping_add(1);
        m.store_u16(self.a.avail + 2, self.idx).unwrap();
    }
}

fn setup() -> (GuestMem, DeviceQueue, Driver) {
    let m = GuestMem::new(MEM).unwrap();
    let q = DeviceQueue::new(&m, ring(0), Q).unwrap();
    (m, q, Driver { a: ring(0), idx: 0 })
}

#[test]
fn valid_request_round_trip() {
    let (m, mut q, mut d) = setup();
    d.desc(&m, 3, 0x8000, 64, 2, 0);
    d.publish(&m, 3);
    let c = q.pop(&m).unwrap().unwrap();
    assert_eq!((c.head, c.len, c.bufs[0]), (3, 1, (0x8000, 64, true)));
    assert!(q.pop(&m).is_none());
    q.push_used(&m, c.head, 64);
    assert_eq!(m.load_u16(ring(0).used + 2).unwrap(), 1);
    assert_eq!(m.load_u32(ring(0).used + 4).unwrap(), 3);
    assert_eq!(q.errors.total(), 0);
}

fn expect(kind: VirtqError, build: impl FnOnce(&GuestMem, &mut Driver)) {
    let (m, mut q, mut d) = setup();
    build(&m, &mut d);
    assert_eq!(q.pop(&m), Some(Err(kind)));
    assert_eq!(q.errors.get(kind), 1);
    assert_eq!(q.errors.total(), 1);
    // The queue keeps serving: a good request after the bad one goes through.
    d.desc(&m, 5, 0x9000, 16, 0, 0);
    d.publish(&m, 5);
    let c = q.pop(&m).expect("served after error").expect("valid");
    assert_eq!(c.head, 5);
}

#[test]
fn head_out_of_range() {
    expect(VirtqError::HeadOutOfRange, |m, d| d.publish(m, Q + 7));
    expect(VirtqError::HeadOutOfRange, |m, d| d.publish(m, u16::MAX));
}

#[test]
fn address_outside_memory() {
    expect(VirtqError::AddrOutOfRange, |m, d| {
        d.desc(m, 0, 0xffff_ffff_f000, 64, 0, 0);
        d.publish(m, 0)
    });
    expect(VirtqError::AddrOutOfRange, |m, d| {
        d.desc(m, 0, MEM - 8, 64, 0, 0); // straddles the end
        d.publish(m, 0)
    });
    expect(VirtqError::AddrOutOfRange, |m, d| {
        d.desc(m, 0, u64::MAX - 10, 64, 0, 0); // addr + len overflows
        d.publish(m, 0)
    });
}

#[test]
fn huge_length() {
    expect(VirtqError::HugeLength, |m, d| {
        d.desc(m, 0, 0x8000, u32::MAX, 0, 0);
        d.publish(m, 0)
    });
}

#[test]
fn loops_are_bounded() {
    expect(VirtqError::ChainLoop, |m, d| {
        d.desc(m, 0, 0x8000, 8, 1, 1);
        d.desc(m, 1, 0x8000, 8, 1, 0);
        d.publish(m, 0)
    });
    expect(VirtqError::ChainLoop, |m, d| {
        d.desc(m, 2, 0x8000, 8, 1, 2); // self loop
        d.publish(m, 2)
    });
}

#[test]
fn next_out_of_range() {
    expect(VirtqError::NextOutOfRange, |m, d| {
        d.desc(m, 0, 0x8000, 8, 1, 0xfff0);
        d.publish(m, 0)
    });
}

#[test]
fn indirect_is_refused() {
    expect(VirtqError::Indirect, |m, d| {
        d.desc(m, 0, 0x8000, 16, 4, 0);
        d.publish(m, 0)
    });
}

#[test]
fn avail_index_jump_resynchronises() {
    let (m, mut q, mut d) = setup();
    d.idx = Q + 3;
    m.store_u16(ring(0).avail + 2, d.idx).unwrap();
    assert_eq!(q.pop(&m), Some(Err(VirtqError::AvailIdxJump)));
    assert!(q.pop(&m).is_none(), "the bogus entries are dropped, not walked");
    d.desc(&m, 1, 0x8000, 8, 0, 0);
    d.publish(&m, 1);
    assert_eq!(q.pop(&m).unwrap().unwrap().head, 1);
}

#[test]
fn full_ring_of_valid_requests_and_index_wrap() {
    let (m, mut q, mut d) = setup();
    d.idx = u16::MAX - 3;
    m.store_u16(ring(0).avail + 2, d.idx).unwrap();
    let mut q2 = DeviceQueue::new(&m, ring(0), Q).unwrap();
    // Device starts in sync with the guest's index (as after a reset at that index).
    while q2.pop(&m).is_some() {}
    for round in 0..3 {
        for i in 0..Q {
            d.desc(&m, i, 0x8000 + 64 * i as u64, 64, 2, 0);
            d.publish(&m, i);
        }
        for i in 0..Q {
            let c = q2.pop(&m).unwrap().unwrap_or_else(|e| panic!("round {round}: {e}"));
            assert_eq!(c.head, i);
            q2.push_used(&m, c.head, 0);
        }
    }
    let _ = &mut q;
}

#[test]
fn errors_on_one_queue_leave_another_alone() {
    let m = GuestMem::new(MEM).unwrap();
    let mut bad = DeviceQueue::new(&m, ring(0), Q).unwrap();
    let mut good = DeviceQueue::new(&m, ring(1), Q).unwrap();
    let mut db = Driver { a: ring(0), idx: 0 };
    let mut dg = Driver { a: ring(1), idx: 0 };
    for i in 0..50u16 {
        db.desc(&m, 0, 0x8000, u32::MAX, 0, 0);
        db.publish(&m, if i % 2 == 0 { 0 } else { 999 });
        dg.desc(&m, i % Q, 0x9000, 64, 2, 0);
        dg.publish(&m, i % Q);
        assert!(bad.pop(&m).unwrap().is_err());
        let c = good.pop(&m).unwrap().unwrap();
        good.push_used(&m, c.head, 64);
    }
    assert_eq!(bad.errors.total(), 50);
    assert_eq!(good.errors.total(), 0);
}

#[test]
fn rings_must_fit_memory() {
    let m = GuestMem::new(MEM).unwrap();
    let a = RingAddrs { desc: MEM - 16, avail: 0x200, used: 0x400 };
    assert_eq!(DeviceQueue::new(&m, a, Q).unwrap_err(), VirtqError::RingOutOfRange);
    assert_eq!(DeviceQueue::new(&m, ring(0), 6).unwrap_err(), VirtqError::RingOutOfRange);
}

#[test]
fn interrupt_suppression_follows_used_event() {
    let (m, mut q, mut d) = setup();
    let used_event_at = ring(0).avail + 4 + 2 * Q as u64;
    m.store_u16(used_event_at, 0x8000).unwrap(); // guest: no interrupts, please
    d.desc(&m, 0, 0x8000, 8, 2, 0);
    d.publish(&m, 0);
    let c = q.pop(&m).unwrap().unwrap();
    q.push_used(&m, c.head, 8);
    assert!(!q.should_interrupt(&m));
    m.store_u16(used_event_at, 1).unwrap(); // interrupt when used idx passes 1
    d.publish(&m, 0);
    let c = q.pop(&m).unwrap().unwrap();
    q.push_used(&m, c.head, 8);
    assert!(q.should_interrupt(&m));
    assert!(!q.should_interrupt(&m), "nothing new since the last one");
}

#[test]
fn kick_control_writes_avail_event() {
    let (m, q, _) = setup();
    let at = ring(0).used + 4 + 8 * Q as u64;
    m.store_u16(at, 7).unwrap();
    assert!(!q.enable_notification(&m), "an empty ring has nothing to re-check");
    assert_eq!(m.load_u16(at).unwrap(), 0, "kick me at the next request after next_avail 0");
    q.disable_notification(&m);
    assert_eq!(m.load_u16(at).unwrap(), 0, "event index: disabling writes nothing (Linux vhost, DPDK, rust-vmm)");
}

/// The re-check the ring answers itself: requests published while kicks were off are reported
/// (no kick will come for them); once re-enabled, the next publish asks for a kick.
#[test]
fn enable_notification_reports_requests_that_raced_it() {
    use eventpath_policy::notify::vring_need_event;
    let (m, mut q, mut d) = setup();
    let at = ring(0).used + 4 + 8 * Q as u64;
    m.store_u16(at, 0x8000).unwrap(); // kicks off: an avail_event the guest is far from
    d.desc(&m, 0, 0x8000, 8, 2, 0);
    d.publish(&m, 0); // the guest does not kick
    assert!(!vring_need_event(m.load_u16(at).unwrap(), 1, 0));
    assert!(q.enable_notification(&m), "the request that raced the re-enable is reported");
    assert!(q.pop(&m).unwrap().is_ok());
    assert!(!q.enable_notification(&m), "taken: nothing left");
    // Re-enabled at next_avail = 1: the guest's next publish (1 -> 2) kicks.
    assert_eq!(m.load_u16(at).unwrap(), 1);
    d.publish(&m, 0);
    assert!(vring_need_event(m.load_u16(at).unwrap(), 2, 1));
}
