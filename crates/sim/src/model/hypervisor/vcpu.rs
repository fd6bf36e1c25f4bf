//! A vCPU's state (ES2 §2.2, DID §2): its mode (guest, exit, halted, ...), the guest task it
//! runs and those an exit or a handler saved, its LAPIC and delivery, its halt polling and its
//! counters. Its run loop — VM entry, guest tasks, exits, idling and halting — is
//! `vcpu_run.rs`; how virtual interrupts reach it (emulated or posted), `irq.rs`.

use crate::engine::{Time, Timer};
use crate::model::hw::lapic::Vector;
use crate::model::hypervisor::delivery::Apic;
use crate::model::hypervisor::guest_poll::GuestPoll;
use crate::model::hypervisor::halt::Halt;
use crate::metrics::{BusyTime, ExitCounters};
use crate::config::InterruptDelivery;

/// One guest step of an application, as a vCPU runs it (`Task::App`) (a `write()`, a segment's transmit, a `recvfrom()`...):
/// which step of its workload and two arguments, all the workload's to interpret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// The workload's step number.
    pub kind: u8,
    /// Runs in softirq context (counts with interrupt handling, e.g. for livelock).
    pub softirq: bool,
    /// First argument (bytes, a connection).
    pub a: u32,
    /// Second argument (a time, a flag).
    pub b: u64,
    /// The device whose application the step is (set by the guest context that runs it: a VM
    /// with several VFs runs one receiver per VF).
    pub dev: u32,
}

impl Step {
    /// Step `kind` with arguments `a` and `b`, in process context.
    pub fn new(kind: u8, a: u32, b: u64) -> Self {
        Step { kind, softirq: false, a, b, dev: 0 }
    }
}


/// Length of one chunk of the guest CPU burn. A modelling granularity, not a cost: the burn is
/// cut short by any exit or interrupt and re-chosen after each chunk, so results do not depend
/// on it beyond the (cheap) events it adds.
pub const BURN_CHUNK_NS: Time = 1_000_000;

/// What a vCPU runs in guest mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Task {
    /// A step of the VM's application (`workload.rs`), the workload's to interpret.
    App(Step),
    /// NAPI (softirq): receive one packet from the RX queue.
    NapiRx,
    /// An MTVD thread takes one packet the VF driver handed it up the stack (`guest/mtvd.rs`).
    Backlog,
    /// An interrupt handler for a vector.
    Irq(Vector),
    /// The lowest-priority CPU burn (scenario `guest_cpu_burn`): runs whenever nothing else
    /// would, in chunks of [`BURN_CHUNK_NS`].
    Burn,
    /// A chunk of the vCPU's lookbusy spinner (`[vm.lookbusy]`, `guest/lookbusy.rs`): a nice-0
    /// guest thread, which the guest scheduler weighs against the application's.
    Lookbusy,
}

/// What a vCPU whose application has nothing to run does besides idling: run a guest thread
/// of the VM's own (the lookbusy spinner) for so long, or halt until it wakes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdleThread {
    /// No such thread: idle as the VM idles.
    None,
    /// Run [`Task::Lookbusy`] for this long (ns).
    Run(Time),
    /// The thread sleeps until then: the LAPIC timer is set for it.
    Sleep(Time),
}

/// The keys of summary.json's `interrupts_by_source_per_s`: [`Vcpu::irqs_by_source`]'s first
/// three, the last two (the two IPI kinds) summed into `ipi`.
pub const IRQ_SOURCES: [&str; 3] = ["device", "timer", "ipi"];

/// The keys of summary.json's `ipis_by_kind_per_s`: [`Vcpu::irqs_by_source`]'s last two.
pub const IPI_KINDS: [&str; 2] = ["reschedule", "call_function"];

/// What happens when an exit's handling is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterExit {
    /// Re-enter the guest and carry on.
    Resume,
    /// Follow with a HLT exit (idle: TMICT was just programmed).
    Hlt,
    /// Block the vCPU thread until an interrupt.
    Block,
    /// Follow with a TMICT write exit (the tick handler re-arms its timer), then resume.
    Rearm,
    /// Follow with a TX kick (the qdisc backlog went into the ring), then resume.
    KickTx,
}

/// A vCPU's Xen device, as its exits see it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum XenIo {
    /// Not a Xen guest (KVM, bare metal).
    #[default]
    None,
    /// A PV guest (netfront): its notify is an `EVTCHNOP_send` hypercall, its interrupts
    /// event-channel upcalls, its other exits hypercalls.
    Pv,
    /// An FV guest (QEMU's e1000): its register accesses are synchronous ioreqs to dom0.
    Fv,
}

/// Where a vCPU is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// In guest mode on its pCPU, running `task` until `end`.
    Guest {
        /// The task.
        task: Task,
        /// When it completes unless interrupted.
        end: Time,
    },
    /// In guest mode with nothing scheduled (transient, inside one event).
    Entering,
    /// Handling an exit; then `then`.
    Exit {
        /// What follows.
        then: AfterExit,
    },
    /// Blocked in the host after HLT.
    Halted,
    /// Halted, its thread polling for an interrupt on its pCPU before blocking (`halt.rs`).
    Polling,
    /// Woken, its thread not yet running.
    Waking,
}

/// Lifetime interrupt counters of one vCPU (never reset; for the conservation identity
/// `raised = accepted + coalesced + pending`).
#[derive(Debug, Clone, Copy, Default)]
pub struct IrqLedger {
    /// Vectors raised by devices and timers.
    pub raised: u64,
    /// Raises merged into an already pending request (IRR or PIR bit already set).
    pub coalesced: u64,
    /// Vectors accepted by the guest (IRR → ISR).
    pub accepted: u64,
}

/// In which state a raised interrupt found its vCPU (window counts; ES2 §3.3).
#[derive(Debug, Clone, Copy, Default)]
pub struct TargetState {
    /// In guest mode.
    pub guest: u64,
    /// In the hypervisor handling an exit (or woken, not yet entered).
    pub exit: u64,
    /// Halted (blocked in the host).
    pub halted: u64,
}

/// How many times its CPU an application step may take (shared pCPUs, interrupts, exits)
/// before the liveness watchdog stops counting the wait as the step's (`take_app_step`).
pub(crate) const STEP_STRETCH: Time = 20;

/// One vCPU.
#[derive(Debug)]
pub struct Vcpu {
    /// A lowest-priority CPU burn runs when the guest would otherwise idle.
    pub burn: bool,
    /// That burn is the guest's `idle=poll` loop (no work done; the tick stops meanwhile).
    pub idle_poll: bool,
    /// With a burn: the LAPIC timer deadline already programmed for the workload (so the burn
    /// does not re-program it on every chunk).
    pub burn_timer: Option<Time>,
    /// VM index.
    pub vm: u32,
    /// Current mode.
    pub mode: Mode,
    /// Interrupt delivery mode of its VM.
    pub delivery: InterruptDelivery,
    /// Its VM's optional APIC features (`[vm.apic]`: IPIv, PV EOI) on top of `delivery`.
    pub features: eventpath_policy::delivery::features::ApicFeatures,
    /// What the host's CPU offers those features (the profile's `cpu.ipiv`, `cpu.avic`...).
    pub cpu_caps: eventpath_policy::delivery::features::CpuCaps,
    /// Its VM's Xen device, if any (`[vm.net] kind = "xen_pv" | "xen_e1000"`): what its
    /// kicks and device interrupts cost (`docs/model.md`, "Xen's I/O paths").
    pub xen: XenIo,
    /// vBalance rebound its VM's event channel to this vCPU: the guest's `EVTCHNOP_bind_vcpu`
    /// hypercall is owed, paid at the end of the next device handler here.
    pub(crate) rebind_owed: bool,
    /// The running guest task's end (its `GuestDone`): armed when the task starts, cancelled
    /// when it is cut short (a restartable `engine::Timer`, deadline semantics).
    pub(in crate::model::hypervisor) done: Timer,
    /// Tasks cut short by an exit or an interrupt handler, with the ns they still need.
    pub(crate) saved: Vec<(Task, Time)>,
    /// The application's step under way (when it began, its guest CPU), and the longest
    /// stretch a step took since the liveness watchdog last asked ([`Vcpu::take_app_step`]).
    app_step: Option<(Time, Time)>,
    longest_app_step: Time,
    /// Its interrupt controller: LAPIC (emulated, or the virtual-APIC page under APICv) and
    /// posted-interrupt descriptor.
    pub apic: Apic,
    /// Exits by reason (window).
    pub exits: ExitCounters,
    /// Time in guest mode (window).
    pub guest_time: BusyTime,
    /// Time not halted: guest + exits (window).
    pub busy: BusyTime,
    /// Virtual interrupts injected (window).
    pub irqs: u64,
    /// Of those, by source: a device's (virtio, VF, MSI), the LAPIC timer's, another vCPU's
    /// reschedule IPI, another vCPU's call-function IPI (window; [`IRQ_SOURCES`] and
    /// [`IPI_KINDS`] name them).
    pub irqs_by_source: [u64; 4],
    /// State of the vCPU when each interrupt was raised (window).
    pub target: TargetState,
    /// Interrupt conservation ledger (lifetime).
    pub ledger: IrqLedger,
    /// Its halt handling: KVM halt polling (`[vm.halt_poll]`) if on, the current halt, the
    /// poll counters (`halt.rs`).
    pub(crate) halt: Halt,
    /// The guest's halt polling (`[vm.guest_halt_poll]`), if its driver is loaded
    /// (`guest_poll.rs`).
    pub(crate) guest_poll: Option<GuestPoll>,
    /// Woken from a halt, its thread not yet back in the guest (pays `host.halt_wakeup_ns`).
    pub(crate) from_halt: bool,
    /// Indirect exit cost still owed by the next guest task (cache/TLB refill), ns.
    pub(in crate::model::hypervisor) pollution_ns: Time,
    /// The running task's share of that cost, when the task started and its whole length (its
    /// own work plus that share). The refill's misses are spread over the task: cut short
    /// after a fraction of its length, it has done that fraction of its own work, and the
    /// unpaid rest of the refill is dropped (the refill after the next exit replaces, not adds
    /// to, the one it had not finished). (Until issue 26 the refill was paid first, so a vCPU
    /// preempted more often than the refill took made no progress at all: a vhost thread
    /// waking every 7 µs on its pCPU stalled a polling guest for good.)
    pub(in crate::model::hypervisor) task_pollution: (Time, Time, Time),
    /// Guest time run (lifetime, ns; a task is charged when it starts, the unrun rest refunded
    /// when it is cut short): all tasks, and interrupt handlers plus softirq work (NAPI and the
    /// ACKs it sends) among them.
    pub(crate) guest_ns_life: Time,
    pub(crate) irq_ns_life: Time,
    /// Work the guest CPU burn (`guest_cpu_burn`, not `idle=poll`'s loop) got done (window, ns):
    /// its guest time less the cache refills it paid after exits — what a fixed-work program
    /// such as DID §5.3's WhileLoop advances by.
    pub burn_work_ns: Time,
    /// The lookbusy spinner's guest time (window, ns), and lifetime its guest time and its work
    /// (guest time less the cache refills it paid): `guest/lookbusy.rs` reads the lifetime ones.
    pub lookbusy_ns: Time,
    pub(crate) lookbusy_cpu_life: Time,
    pub(crate) lookbusy_work_life: Time,
    /// Guest time of `Task::Burn` (lifetime, ns): the burn, the `idle=poll` loop and the guest's
    /// halt polling — idle time in the guest's own accounting (`/proc/stat`), except the burn.
    pub(crate) burn_cpu_life: Time,
    /// Start of the measurement window (a burn task that began before it counts from it).
    window_start: Time,
    /// When the exit it is in (or its latest) ends: the part past the window's end is not
    /// the window's exit handling time.
    pub(crate) exit_until: Time,
}

impl Vcpu {
    /// A vCPU whose thread is runnable; it enters the guest when its thread first runs.
    pub fn new(vm: u32, delivery: InterruptDelivery, burn: bool, idle_poll: bool, halt_poll: Option<eventpath_policy::halt_poll::HaltPollConfig>) -> Self {
        Vcpu {
            burn: burn || idle_poll,
            idle_poll: idle_poll && !burn,
            burn_timer: None,
            pollution_ns: 0,
            task_pollution: (0, 0, 0),
            vm,
            // Runnable but not yet run: its thread may wait on a runqueue behind others, and
            // must not take exits (ticks, interrupt kicks) before it first enters the guest.
            mode: Mode::Waking,
            delivery,
            features: Default::default(),
            cpu_caps: Default::default(),
            xen: XenIo::None,
            rebind_owed: false,
            app_step: None,
            longest_app_step: 0,
            done: Timer::default(),
            saved: Vec::with_capacity(8),
            apic: Apic::default(),
            exits: ExitCounters::default(),
            guest_time: BusyTime::default(),
            busy: BusyTime::default(),
            irqs: 0,
            irqs_by_source: [0; 4],
            target: TargetState::default(),
            ledger: IrqLedger::default(),
            guest_ns_life: 0,
            irq_ns_life: 0,
            burn_work_ns: 0,
            lookbusy_ns: 0,
            lookbusy_cpu_life: 0,
            lookbusy_work_life: 0,
            burn_cpu_life: 0,
            window_start: 0,
            exit_until: 0,
            halt: Halt::new(halt_poll),
            guest_poll: None,
            from_halt: false,
        }
    }

    pub(crate) fn reset_metrics(&mut self, now: Time) {
        self.exits = ExitCounters::default();
        self.guest_time.reset(now);
        self.busy.reset(now);
        self.irqs = 0;
        self.irqs_by_source = [0; 4];
        self.target = TargetState::default();
        self.halt.reset_metrics(now);
        if let Some(gp) = self.guest_poll.as_mut() {
            gp.reset_metrics();
        }
        self.burn_work_ns = 0;
        self.lookbusy_ns = 0;
        self.window_start = now;
    }

    /// Of the running task (`task_pollution`), the part of its own work done by `now`.
    fn work_done(&self, now: Time, from: Time) -> Time {
        let (pollution, start, len) = self.task_pollution;
        let ran = now.saturating_sub(from.max(start));
        if len == 0 {
            return 0;
        }
        let work = len - pollution;
        match ran.checked_mul(work) {
            Some(p) => p / len,
            None => (u128::from(ran) * u128::from(work) / u128::from(len)) as Time,
        }
    }

    /// The burn task that started at `task_pollution`'s time stops at `now` (done or cut short).
    pub(in crate::model::hypervisor) fn burn_ran(&mut self, now: Time) {
        self.burn_cpu_life += now - self.task_pollution.1;
        // Only the part in the window.
        if self.guest_poll.as_ref().is_some_and(GuestPoll::polling) {
            let ran = self.work_done(now, self.window_start);
            self.guest_poll.as_mut().expect("checked above").poll_ns += ran;
        } else if !self.idle_poll {
            self.burn_work_ns += self.work_done(now, self.window_start);
        }
    }

    /// The lookbusy chunk that started at `task_pollution`'s time stops at `now` (done or cut
    /// short): its guest time and work are counted.
    pub(in crate::model::hypervisor) fn lookbusy_ran(&mut self, now: Time) {
        let start = self.task_pollution.1;
        self.lookbusy_cpu_life += now - start;
        self.lookbusy_work_life += self.work_done(now, 0);
        self.lookbusy_ns += now.saturating_sub(start.max(self.window_start));
    }

    /// The guest's busy time as its own accounting sees it (lifetime): user + nice + system,
    /// not interrupt handling nor an idle loop's polling (a VM with lookbusy has no burn).
    pub(crate) fn busy_ns_life(&self) -> Time {
        self.guest_ns_life - self.irq_ns_life - self.burn_cpu_life
    }

    /// The application's guest time (lifetime): the guest's busy time less the lookbusy
    /// spinner's.
    pub(crate) fn app_ns_life(&self) -> Time {
        self.busy_ns_life() - self.lookbusy_cpu_life
    }

    /// Halted in the guest's view — blocked, or its thread polling before it blocks — or on its
    /// way there (in the exits of its idle path): a wake-up for it needs an interrupt, which
    /// arriving during those exits cancels the halt.
    pub fn idle(&self) -> bool {
        matches!(
            self.mode,
            Mode::Halted | Mode::Polling | Mode::Exit { then: AfterExit::Hlt | AfterExit::Block }
        )
    }

    /// Would a thread woken for it need a reschedule IPI to run: halted (or halting), or
    /// running only the lowest-priority burn, which any woken thread preempts
    /// (`check_preempt_curr` with an idle-policy current task) — but not the `idle=poll` loop
    /// of a guest whose application is elsewhere: that is the idle task, woken by the IPI too.
    pub fn wants_resched_ipi(&self) -> bool {
        // A woken thread preempts the lookbusy spinner too (a sleeper, placed half a latency
        // behind it, is more than the wake-up granularity behind: `check_preempt_wakeup`).
        self.idle() || matches!(self.mode, Mode::Guest { task: Task::Burn | Task::Lookbusy, .. })
    }

    /// The guest's haltpoll loop is polling with its POLL flag set: a waker sets need_resched
    /// instead of sending the IPI (`set_nr_and_not_polling`).
    pub fn poll_flag(&self) -> bool {
        self.guest_poll.as_ref().is_some_and(GuestPoll::polling)
    }

    /// Is it in guest mode (running guest code)?
    pub fn in_guest(&self) -> bool {
        matches!(self.mode, Mode::Guest { .. } | Mode::Entering)
    }

    /// Interrupts raised and neither accepted nor coalesced: IRR bits plus PIR bits.
    pub fn irqs_pending(&self) -> u64 {
        self.apic.pending()
    }

    /// Something would be injected at the next VM entry.
    pub(crate) fn has_deliverable(&self) -> bool {
        self.apic.has_deliverable()
    }

    /// Cut the running guest task short; it resumes from the saved stack.
    pub(crate) fn save_running(&mut self, now: Time) {
        if let Mode::Guest { task, end } = self.mode {
            let (pollution, _, len) = self.task_pollution;
            let left = len - pollution - self.work_done(now, 0);
            if task == Task::Burn {
                self.burn_ran(now);
            } else if task == Task::Lookbusy {
                self.lookbusy_ran(now);
            }
            self.saved.push((task, left));
            self.done.cancel();
            self.charge(task, end - now, false);
        }
    }

    /// The application starts a step of `cost` ns of guest CPU at `now`.
    pub(crate) fn app_step_began(&mut self, now: Time, cost: Time) {
        self.app_step = Some((now, cost));
    }

    /// The application's step under way ended at `now` (done, or cut short).
    pub(crate) fn app_step_ended(&mut self, now: Time) {
        if let Some((began, cost)) = self.app_step.take() {
            self.longest_app_step = self.longest_app_step.max((now - began).min(STEP_STRETCH * cost));
        }
    }

    /// The longest stretch an application step took since the last call, the one under way
    /// included, each at most [`STEP_STRETCH`] times its CPU (the liveness watchdog's
    /// question: a step of 20 ms of CPU on a vCPU that gets a sixth of a pCPU takes 120 ms, and
    /// its flow waits that long, slow by configuration; a lost end is still seen, later).
    pub(crate) fn take_app_step(&mut self, now: Time) -> Time {
        let ongoing = self.app_step.map_or(0, |(began, cost)| (now - began).min(STEP_STRETCH * cost));
        std::mem::take(&mut self.longest_app_step).max(ongoing)
    }

    /// End the application's step of `kind` now, whether it runs or waits on the saved stack
    /// (cut short earlier by an exit, an interrupt, a preemption), so that the application
    /// looks again. Returns whether it was running: the vCPU then needs its next task.
    pub(crate) fn cut_app_step(&mut self, now: Time, kind: u8) -> bool {
        let is_it = |t: &Task| matches!(t, Task::App(s) if s.kind == kind);
        if let Mode::Guest { task, .. } = self.mode {
            if is_it(&task) {
                self.save_running(now);
                self.saved.pop();
                // In guest mode with nothing scheduled until the application chooses: an exit it
                // then takes (a timer write before idling) must not save the cut step again.
                self.mode = Mode::Entering;
                return true;
            }
        }
        if self.saved.last().is_some_and(|(t, _)| is_it(t)) {
            self.saved.pop();
        }
        false
    }

    /// Account `ns` of `task`'s guest time (`run`) or refund it (cut short).
    pub(in crate::model::hypervisor) fn charge(&mut self, task: Task, ns: Time, run: bool) {
        let irq = match task {
            Task::App(s) => s.softirq,
            Task::Irq(_) | Task::NapiRx => true,
            Task::Backlog | Task::Burn | Task::Lookbusy => false,
        };
        if run {
            self.guest_ns_life += ns;
            self.irq_ns_life += if irq { ns } else { 0 };
        } else {
            self.guest_ns_life -= ns;
            self.irq_ns_life -= if irq { ns } else { 0 };
        }
    }
}

