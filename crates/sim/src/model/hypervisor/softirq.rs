//! Host kernel work in interrupt context on a pCPU — the host NIC's interrupt, its RX NAPI and
//! TX clean for the virtio devices (`host.nic_irq_ns`, `host.nic_rx_frame_ns`,
//! `host.nic_tx_clean_ns`) — charged where the kernel runs it: on the pCPU the NIC queue's IRQ
//! affinity names (`host.nic_irq_cpus`), taking that pCPU from whatever runs there. A vCPU in
//! guest mode takes an external-interrupt exit that lasts the work longer (VMX exits on every
//! host interrupt; the handler and the softirq run before the VM entry); a back-end thread's step
//! under way ends that much later; an idle pCPU spends it without a thread. Work that lands
//! while a vCPU is already in host mode or a thread is being switched in is counted, its delay
//! not modelled (short next to the exits it would lengthen). A pCPU runs its interrupt work one
//! piece after another ([`SoftirqCpus`]), which keeps its count within the window; the thread
//! there is charged each piece's own time — while the work in hand fits one softirq run. Linux
//! ends a run after `MAX_SOFTIRQ_TIME` (2 ms, `__do_softirq`) and leaves the rest to ksoftirqd,
//! a thread the scheduler shares the pCPU with: beyond 2 ms of work in hand the thread there is
//! held up at most half the time since (fair sharing with ksoftirqd). Without that bound a pCPU
//! whose NIC work came faster than it could run it never gave its thread back
//! (`tests/fuzz-open/` case 475, now `fuzz-regressions/softirq-overload-thread-keeps-half.toml`).

use crate::engine::Time;

/// Linux `MAX_SOFTIRQ_TIME`: the longest one softirq run goes on before ksoftirqd takes over.
const MAX_SOFTIRQ_NS: Time = 2_000_000;

/// Each pCPU's host interrupt work: when the work in hand ends, and how much ran.
#[derive(Debug)]
pub(crate) struct SoftirqCpus {
    until: Vec<Time>,
    /// Work charged since the window began (ns), per pCPU.
    charged: Vec<Time>,
    /// The part of it that came while no thread ran on the pCPU: time the pCPU was busy that
    /// no thread's run time holds (`/proc/stat` counts it as irq and softirq time).
    idle: Vec<Time>,
    /// Per pCPU: since when the work in hand has been beyond one softirq run (ksoftirqd's), and
    /// how long the thread there has been held up since.
    ksoftirqd: Vec<Option<(Time, Time)>>,
}

impl SoftirqCpus {
    /// `pcpus` pCPUs with no work.
    pub fn new(pcpus: usize) -> Self {
        SoftirqCpus { until: vec![0; pcpus], charged: vec![0; pcpus], idle: vec![0; pcpus], ksoftirqd: vec![None; pcpus] }
    }

    /// `ns` of work arrives on `cpu` at `now` (`idle`: no thread runs there): it runs after the
    /// work in hand. Returns when it ends and how long it holds up the thread on `cpu`: all of
    /// it within one softirq run, else what keeps the thread's share of the pCPU at half since
    /// ksoftirqd took over.
    pub fn run(&mut self, now: Time, cpu: u32, ns: Time, idle: bool) -> (Time, Time) {
        let c = cpu as usize;
        let in_hand = self.until[c].saturating_sub(now);
        self.until[c] = self.until[c].max(now) + ns;
        self.charged[c] += ns;
        if idle {
            self.idle[c] += ns;
        }
        let held = if in_hand < MAX_SOFTIRQ_NS {
            self.ksoftirqd[c] = None;
            ns
        } else {
            let (since, held_since) = self.ksoftirqd[c].get_or_insert((now, 0));
            let held = ns.min(((now - *since) / 2).saturating_sub(*held_since));
            *held_since += held;
            held
        };
        (self.until[c], held)
    }

    /// The measurement window starts: count from zero.
    pub fn reset_metrics(&mut self) {
        self.charged.iter_mut().for_each(|c| *c = 0);
        self.idle.iter_mut().for_each(|c| *c = 0);
    }

    /// Work that ran on `cpu` in the window up to `now` (what is still to run is not counted).
    pub fn ns(&self, cpu: u32, now: Time) -> Time {
        let c = cpu as usize;
        self.charged[c] - self.until[c].saturating_sub(now).min(self.charged[c])
    }

    /// The part of [`Self::ns`] that ran while no thread ran on `cpu` (what is still to run is
    /// taken from it first: at the window's end, at most the work in hand).
    pub fn idle_ns(&self, cpu: u32, now: Time) -> Time {
        let c = cpu as usize;
        self.idle[c] - self.until[c].saturating_sub(now).min(self.idle[c])
    }
}


#[cfg(test)]
mod tests {
    use super::SoftirqCpus;

    #[test]
    fn work_on_a_pcpu_runs_after_the_work_in_hand_and_other_pcpus_are_apart() {
        let mut s = SoftirqCpus::new(2);
        assert_eq!(s.run(1_000, 0, 500, false), (1_500, 500), "an idle pCPU runs it at once");
        assert_eq!(s.run(1_200, 0, 300, false), (1_800, 300), "it waits for the work in hand");
        assert_eq!(s.run(1_200, 1, 300, false), (1_500, 300), "another pCPU's work is its own");
        assert_eq!(s.run(5_000, 0, 100, false), (5_100, 100), "after a gap it starts when it arrives");
    }

    #[test]
    fn beyond_one_softirq_run_the_thread_keeps_half_its_pcpu() {
        let mut s = SoftirqCpus::new(1);
        // 3 ms of work at once: the first piece finds nothing in hand and holds the thread up
        // fully; the pCPU's work in hand is then beyond 2 ms.
        assert_eq!(s.run(0, 0, 3_000_000, false), (3_000_000, 3_000_000));
        // Work keeps coming faster than the pCPU runs it: ksoftirqd's from now on.
        assert_eq!(s.run(1_000_000, 0, 1_000_000, false).1, 0, "ksoftirqd has had no time yet");
        assert_eq!(s.run(2_000_000, 0, 1_000_000, false).1, 500_000, "half of the 1 ms since");
        assert_eq!(s.run(2_100_000, 0, 1_000_000, false).1, 50_000);
        assert_eq!(s.run(10_000_000, 0, 10, false).1, 10, "in hand below 2 ms again: all of it");
    }

    #[test]
    fn the_window_counts_what_ran_in_it_and_not_what_is_still_to_run() {
        let mut s = SoftirqCpus::new(1);
        s.run(0, 0, 400, false);
        s.reset_metrics();
        s.run(1_000, 0, 600, false);
        assert_eq!(s.ns(0, 1_300), 300, "half of it has run by 1.3 us");
        assert_eq!(s.ns(0, 2_000), 600);
    }

    #[test]
    fn work_on_an_idle_pcpu_is_counted_apart_from_work_that_held_up_a_thread() {
        let mut s = SoftirqCpus::new(2);
        s.run(0, 0, 500, false);
        s.run(1_000, 0, 300, true);
        s.run(1_000, 1, 200, true);
        assert_eq!((s.ns(0, 2_000), s.idle_ns(0, 2_000)), (800, 300));
        assert_eq!(s.idle_ns(0, 1_100), 100, "what is still to run is not counted");
        assert_eq!(s.idle_ns(1, 2_000), 200, "another pCPU's is its own");
        s.reset_metrics();
        assert_eq!(s.idle_ns(0, 2_000), 0);
    }
}
