//! VM-exit counters by reason, with the time each reason cost.

use serde::Serialize;

/// Why a vCPU left guest mode (the reasons of the summary.json contract).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ExitReason {
    /// PIO/MMIO access, e.g. a virtqueue kick.
    IoInstruction,
    /// IPI sent to a running vCPU to make it take a virtual interrupt (emulated LAPIC).
    InterruptDelivery,
    /// Guest write to the EOI register of an emulated LAPIC.
    Eoi,
    /// A host interrupt arrived while the guest ran.
    ExternalInterrupt,
    /// Guest programmed its LAPIC timer (TMICT write) or the preemption timer fired.
    Timer,
    /// Guest executed HLT with nothing to do.
    Hlt,
    /// EPT violation (MMIO emulation, first touch).
    EptViolation,
    /// Open interrupt window requested to inject a pending interrupt.
    InterruptWindow,
    /// Guest write to the ICR (xAPIC, trapped even with APICv) to send an IPI, e.g. the
    /// scheduler's reschedule IPI waking a thread on another vCPU.
    Ipi,
    /// Anything else.
    Other,
}

impl ExitReason {
    /// All reasons in contract order.
    pub const ALL: [ExitReason; 10] = [
        ExitReason::IoInstruction,
        ExitReason::InterruptDelivery,
        ExitReason::Eoi,
        ExitReason::ExternalInterrupt,
        ExitReason::Timer,
        ExitReason::Hlt,
        ExitReason::EptViolation,
        ExitReason::InterruptWindow,
        ExitReason::Ipi,
        ExitReason::Other,
    ];

    /// The key used in summary.json and the tables.
    pub fn key(self) -> &'static str {
        match self {
            ExitReason::IoInstruction => "io_instruction",
            ExitReason::InterruptDelivery => "interrupt_delivery",
            ExitReason::Eoi => "eoi",
            ExitReason::ExternalInterrupt => "external_interrupt",
            ExitReason::Timer => "timer",
            ExitReason::Hlt => "hlt",
            ExitReason::EptViolation => "ept_violation",
            ExitReason::InterruptWindow => "interrupt_window",
            ExitReason::Ipi => "ipi",
            ExitReason::Other => "other",
        }
    }
}

/// Exit count and handling time (ns) per reason.
#[derive(Debug, Clone, Default)]
pub struct ExitCounters {
    count: [u64; 10],
    time_ns: [u64; 10],
    /// The reason of the last exit recorded (the one a vCPU may still be in).
    last: Option<ExitReason>,
}

impl ExitCounters {
    /// Record one exit of `reason` whose direct handling took `cost_ns`.
    #[inline]
    pub fn record(&mut self, reason: ExitReason, cost_ns: u64) {
        self.count[reason as usize] += 1;
        self.time_ns[reason as usize] += cost_ns;
        self.last = Some(reason);
    }

    /// Handling time of the exits of `reason` (ns), as recorded (an exit still running at the
    /// end of the window counts whole; see [`ExitCounters::last`]).
    pub fn time_ns(&self, reason: ExitReason) -> u64 {
        self.time_ns[reason as usize]
    }

    /// The reason of the last exit recorded.
    pub fn last(&self) -> Option<ExitReason> {
        self.last
    }

    /// Exits of `reason`.
    pub fn count(&self, reason: ExitReason) -> u64 {
        self.count[reason as usize]
    }

    /// All exits.
    pub fn total(&self) -> u64 {
        self.count.iter().sum()
    }

    /// Handling time of all exits (ns): the numerator of EHT.
    pub fn total_time_ns(&self) -> u64 {
        self.time_ns.iter().sum()
    }

    /// Add another set of counters (e.g. per-vCPU into per-VM).
    pub fn add(&mut self, o: &ExitCounters) {
        for i in 0..ExitReason::ALL.len() {
            self.count[i] += o.count[i];
            self.time_ns[i] += o.time_ns[i];
        }
    }
}
