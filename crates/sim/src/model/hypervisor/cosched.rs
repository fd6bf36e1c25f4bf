//! Co-scheduling of a VM's vCPUs (issue 48's lock-step gauge): how much of the window all of a
//! multi-vCPU VM's vCPU threads were on pCPUs at once, beside what their own shares would give
//! if they ran independently (the product of each vCPU's on-CPU share). On a host whose pCPUs
//! run the VMs in lock-step the first is far above the second (a VM's vCPUs run all together
//! or not at all); ES2 §6.4's "nearly 70 %" of pings under 0.2 ms with PI+R is what independent
//! phases give (1 − (3/4)^4 with four 4-vCPU VMs on four pCPUs).

use crate::engine::Time;
use crate::metrics::BusyTime;

/// One VM's vCPU threads on pCPUs: each one's time there and the time all of them were.
pub(crate) struct CoSched {
    /// How many of its vCPU threads are on a pCPU now.
    running: usize,
    /// Each vCPU thread's time on a pCPU (window).
    each: Vec<BusyTime>,
    /// Time with all of them on pCPUs (window).
    all: BusyTime,
}

impl CoSched {
    pub fn new(n: u32) -> Self {
        CoSched { running: 0, each: vec![BusyTime::default(); n as usize], all: BusyTime::default() }
    }

    /// Its vCPU `j` (local index) got a pCPU (`on`) or left it.
    pub fn set(&mut self, now: Time, j: usize, on: bool) {
        if self.each[j].is_busy() == on {
            return;
        }
        self.each[j].set(now, on);
        if on {
            self.running += 1;
        } else {
            self.running -= 1;
        }
        self.all.set(now, self.running == self.each.len());
    }

    /// Start a new window at `now`.
    pub fn reset(&mut self, now: Time) {
        self.all.reset(now);
        self.each.iter_mut().for_each(|b| b.reset(now));
    }

    /// Of a window of `window` ns to `now`: the share (%) all its vCPUs were on pCPUs at once,
    /// and the share independent vCPUs with the same time on pCPUs would give (the product of
    /// their shares). None for a one-vCPU VM (always "all") or an empty window.
    pub fn pct(&self, now: Time, window: f64) -> Option<(f64, f64)> {
        if self.each.len() < 2 || window <= 0.0 {
            return None;
        }
        let share = |b: &BusyTime| (b.busy_ns(now) as f64 / window).min(1.0);
        let independent: f64 = self.each.iter().map(share).product();
        Some((100.0 * share(&self.all), 100.0 * independent))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_on_counts_only_while_every_vcpu_is_on_a_pcpu() {
        let mut c = CoSched::new(2);
        c.set(0, 0, true); // one of two
        c.set(10, 1, true); // both from 10
        c.set(20, 1, true); // told twice: no change
        c.set(30, 0, false); // one leaves at 30
        c.set(40, 0, true); // both again from 40
        let (all, independent) = c.pct(50, 50.0).unwrap();
        assert_eq!(all, 100.0 * 30.0 / 50.0);
        assert!((independent - 100.0 * (40.0 / 50.0) * (40.0 / 50.0)).abs() < 1e-9);
        c.reset(50);
        assert_eq!(c.pct(60, 10.0).unwrap(), (100.0, 100.0), "a new window keeps the state");
    }

    #[test]
    fn a_one_vcpu_vm_has_no_co_scheduling_share() {
        let mut c = CoSched::new(1);
        c.set(5, 0, true);
        assert_eq!(c.pct(20, 20.0), None);
    }
}
