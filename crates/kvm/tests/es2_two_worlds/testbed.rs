//! (b) The testbed's side: the real `JointAdapter` (`backend/joint.rs`) over real split rings
//! (`DeviceQueue` in `GuestMem`), a scripted guest driver, and kick eventfds read as
//! `serve/joint.rs` and `serve.rs` read them.
use super::*;
use eventpath_kvm::backend::joint::{JointAdapter, Rings};
use eventpath_kvm::backend::Took;
use eventpath_kvm::virtq::{DeviceQueue, RingAddrs};
use eventpath_kvm::vmm::memory::GuestMem;
use eventpath_policy::es2::JointDecision;
use eventpath_policy::notify::{driver_should_kick, Suppression};
use eventpath_policy::vhost::VhostConfig;
use eventpath_sim::scenario::IoHandling;
pub struct TestbedWorld {
    mem: GuestMem,
    qs: Vec<DeviceQueue>,
    addrs: Vec<RingAddrs>,
    /// The guest's avail index per queue (what it last published).
    idx: Vec<u16>,
    /// Kick eventfds: signalled and not yet read, with the guest's time of the last kick.
    eventfd: Vec<Option<u64>>,
    /// Kicks read in the order they came (`serve.rs`), or in device order (the contrast).
    arrival_order: bool,
    guest: Guest,
    t: u64,
    trace: Trace,
}

impl TestbedWorld {
    pub fn new(guest: Guest, arrival_order: bool) -> Self {
        let n = guest.arrivals.len();
        let mem = GuestMem::new(0x10000 * (n as u64 + 1)).unwrap();
        let addrs: Vec<RingAddrs> = (0..n as u64).map(|q| RingAddrs { desc: 0x10000 * q, avail: 0x10000 * q + 0x4000, used: 0x10000 * q + 0x5000 }).collect();
        let qs = addrs.iter().map(|&a| DeviceQueue::new(&mem, a, QSIZE).unwrap()).collect();
        // Every request is descriptor 0: one device-writable 64-byte buffer.
        for (q, a) in addrs.iter().enumerate() {
            mem.store_u64(a.desc, 0x8000 + 0x10000 * q as u64).unwrap();
            mem.store_u64(a.desc + 8, BYTES | 2 << 32).unwrap();
        }
        TestbedWorld { mem, qs, addrs, idx: vec![0; n], eventfd: vec![None; n], arrival_order, guest, t: 0, trace: vec![] }
    }

    pub fn run(mut self, io: &IoHandling) -> Trace {
        let mut a = JointAdapter::new(io, &VhostConfig::default(), self.qs.len());
        while self.t <= END {
            let d = a.next(self.t);
            self.trace.push((self.t, Rec::Next(d)));
            let more = match d {
                JointDecision::Run(i, _) => {
                    a.run(i, &mut self);
                    true
                }
                JointDecision::Sleep { until_ns } => wait(&mut self, Some(until_ns)),
                JointDecision::Idle => wait(&mut self, None),
            };
            if !more {
                break;
            }
            if !matches!(d, JointDecision::Run(..)) {
                for i in self.kicks() {
                    a.on_kick(i);
                }
            }
        }
        self.trace
    }
}

impl World for TestbedWorld {
    fn t(&mut self) -> &mut u64 {
        &mut self.t
    }
    fn guest(&self) -> &Guest {
        &self.guest
    }
    /// The guest driver: head 0 into the avail ring, avail->idx, then `virtqueue_kick_prepare`
    /// against the avail_event the device wrote.
    fn publish(&mut self) -> bool {
        let mut kicked = false;
        while let Some((at, q)) = self.guest.due(self.t) {
            let a = self.addrs[q];
            let old = self.idx[q];
            self.mem.store_u16(a.avail + 4 + 2 * (old % QSIZE) as u64, 0).unwrap();
            self.idx[q] = old.wrapping_add(1);
            self.mem.store_u16(a.avail + 2, self.idx[q]).unwrap();
            let avail_event = self.mem.load_u16(a.used + 4 + 8 * QSIZE as u64).unwrap();
            if driver_should_kick(Suppression::EventIdx, 0, avail_event, self.idx[q], old) {
                self.trace.push((self.t, Rec::Kick(q)));
                self.eventfd[q] = Some(at); // the guest's last_kick_tsc
                kicked = true;
            }
        }
        kicked
    }
}

impl Rings for TestbedWorld {
    fn take(&mut self, i: usize) -> Took {
        self.publish();
        let got = match self.qs[i].pop(&self.mem) {
            None => None,
            Some(Ok(chain)) => {
                self.qs[i].push_used(&self.mem, chain.head, 0);
                Some(chain.total_len)
            }
            Some(Err(e)) => panic!("the scripted guest wrote a bad request: {e:?}"),
        };
        self.trace.push((self.t, Rec::Take(i, got.is_some())));
        self.t += if got.is_some() { ITEM } else { LOOK };
        self.publish();
        got.map_or(Took::Empty, Took::Request)
    }
    fn enable_kicks(&mut self, i: usize) -> bool {
        self.publish();
        let raced = self.qs[i].enable_notification(&self.mem);
        self.trace.push((self.t, Rec::Enable(i, raced)));
        raced
    }
    fn disable_kicks(&mut self, i: usize) {
        self.publish();
        self.qs[i].disable_notification(&self.mem);
        self.trace.push((self.t, Rec::Disable(i)));
    }
    /// One ppoll(2) over the eventfds: the signalled ones, in the order they kicked.
    fn kicks(&mut self) -> Vec<usize> {
        self.publish();
        let mut k: Vec<(u64, usize)> = (0..self.eventfd.len()).filter_map(|i| self.eventfd[i].take().map(|t| (t, i))).collect();
        if self.arrival_order {
            k.sort_unstable();
        }
        k.into_iter().map(|(_, i)| i).collect()
    }
    fn now_ns(&mut self) -> u64 {
        self.t
    }
}

