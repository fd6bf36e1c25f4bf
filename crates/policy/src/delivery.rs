//! Virtual interrupt delivery: what each mode does when an interrupt is raised for a vCPU, when
//! the guest writes EOI, and when it programs its LAPIC timer (DESIGN §3.3).
//!
//! The modes differ in which of those steps cost a VM exit:
//!
//! | mode       | virtual-device irq, running | assigned (VF) irq, running | timer irq, running | EOI | TMICT |
//! |------------|-----------------------------|----------------------------|--------------------|-----|-------|
//! | `emulated` | IPI kick: interrupt-delivery exit | external-interrupt exit | external-interrupt exit | exit | exit |
//! | `apicv`    | IPI kick: interrupt-delivery exit | external-interrupt exit | external-interrupt exit | —    | exit |
//! | `posted`   | PIR + notification: —       | VT-d posted: —             | external-interrupt exit | —   | exit |
//! | `eli`      | exit, injected              | direct: — (exit, injected, in injection mode) | exit, injected | exit only in injection mode | exit |
//! | `did`      | IPI with the guest vector: — | IRTE to the vCPU's core: — | the guest's own LAPIC timer: — | — | — |
//! | `native`   | (bare metal: no hypervisor) | —                          | —                  | —   | —     |
//! | `evtchn`   | pending bit + IPI into Xen, upcall: interrupt-delivery exit | (none: Xen PV devices only) | external-interrupt exit | — | exit |
//!
//! Sources: `emulated` ES2 §2.2, DID §2.2; `apicv` (APIC virtualization without posting: EOI
//! virtualized, interrupts still injected at entry) DID §2.4, §5.9; `posted` ES2 §3.2 with VT-d
//! posting of assigned-device interrupts (DID §2.4 last sentence); `eli` ELVIS §2.4 and DID §3,
//! Fig. 1 and Fig. 3c (injection mode); `did` DID §4.2–4.5; `evtchn` hBalance §2.2 and Fig. 2
//! (Xen's event channels: the back end's `evtchn_send` sets the pending bit in the shared
//! `shared_info` page; a running target is sent an IPI that traps its pCPU into Xen, which
//! bounces the upcall into the guest on its way back; a blocked one is woken), with no EOI: the
//! guest clears the pending bit in shared memory (`__xen_evtchn_do_upcall`). Our reading for
//! what the paper leaves open: the upcall is charged as the interrupt-delivery exit (the cost is
//! the profile's `xen.evtchn_upcall_ns`, not a VMX exit's), and the guest's upcall mask needs no
//! interrupt-window exit (the guest re-checks `evtchn_upcall_pending` when it unmasks).
//!
//! Whatever the mode, an interrupt for a vCPU that is not in guest mode is recorded and taken at
//! its next VM entry (`Pend`): one raised during an exit waits for that exit's end, with no exit
//! of its own (KVM `kvm_vcpu_kick` sends no IPI to a vCPU outside guest mode). A halted vCPU is
//! woken (`Wake`, or `PollWake` while its thread halt-polls). The IRR/ISR/PIR bits themselves are
//! hardware state the caller keeps; this module decides only which path a vector takes and what
//! follows.
//!
//! **The guest's interrupt flag.** A guest takes no interrupt while RFLAGS.IF is clear — in the
//! model, a hard-irq handler from its injection (the interrupt gate clears IF; Linux runs
//! hard-irq handlers with interrupts off) to its `iret`. The hardware holds a posted or direct
//! vector in the (virtual) IRR and delivers it when IF is set again, with no exit. A
//! software-injected vector cannot wait in hardware: KVM finds it pending at an entry while
//! interrupts are off (`kvm_check_and_inject_events` → `interrupt_allowed` false), sets
//! interrupt-window exiting (`vmx.c enable_irq_window`), and injects it after the exit that the
//! guest's `iret` causes (`handle_interrupt_window`). That exit exists only without virtual-
//! interrupt delivery: with APICv the hardware evaluates RVI when IF is set
//! (`irq.c kvm_cpu_has_injectable_intr` returns 0 for LAPIC vectors when APICv is active).
//! [`DeliveryMode::window_exit`] says which.
//!
//! Not modelled: re-injection after an exit that interrupts the delivery itself (IDT-vectoring
//! information, `vmx_complete_interrupts`). Injection here is part of the entry and takes no
//! time, and the model has no event that faults during it (an EPT violation on the guest's IDT
//! or stack).
//!
//! The optional APIC features of today's hosts on top of a mode (IPI virtualization, PV EOI,
//! PV IPI) are [`features`].

pub mod features;

/// Where an interrupt comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A virtual device's back end (vhost, an I/O thread): a *non-assigned* interrupt.
    VirtualDevice,
    /// An assigned device (an SR-IOV VF's MSI-X).
    AssignedDevice,
    /// The vCPU's LAPIC timer (a host hrtimer unless the mode lets the guest own the timer).
    Timer,
    /// An IPI from another vCPU of the VM (reschedule).
    Ipi,
}

/// Where the target vCPU is when the interrupt arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// Running guest code with interrupts enabled.
    InGuest,
    /// Running guest code with interrupts disabled (IF clear): a hard-irq handler between its
    /// injection and its `iret`.
    InGuestIrqsOff,
    /// About to enter the guest (the entry in progress takes the interrupt).
    Entering,
    /// In the hypervisor on its core (an exit), or descheduled.
    InHypervisor,
    /// Blocked after HLT.
    Halted,
    /// Halted, its thread halt-polling.
    Polling,
}

/// How the vector is recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Path {
    /// The hypervisor's software LAPIC (IRR), injected at the next VM entry.
    Injected,
    /// The posted-interrupt descriptor (PIR; notification only if ON was clear).
    Posted,
    /// The core's hardware LAPIC: the guest takes it like a native interrupt.
    Direct,
}

/// What must happen after the vector was recorded (when recording it was news: a vector that
/// coalesced, or a PIR whose notification is already outstanding, needs nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Nothing now: it is taken at the next VM entry.
    Pend,
    /// The running vCPU exits (the reason says why); the vector is injected at the entry.
    Exit(ExitCause),
    /// The running guest takes it now, with no exit.
    TakeNow,
    /// Wake the halted vCPU's thread.
    Wake,
    /// The halt-polling thread sees it and resumes the guest.
    PollWake,
}

/// Why a running vCPU exits for an interrupt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitCause {
    /// The hypervisor kicked it with an IPI to inject a virtual interrupt (ES2 §6.2's
    /// "Interrupt Delivery" class).
    InterruptDelivery,
    /// A physical interrupt (a VF's MSI-X, the host timer) arrived in guest mode.
    ExternalInterrupt,
}

/// A delivery mode's decision for one raised interrupt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// How the vector is recorded.
    pub path: Path,
    /// What follows if recording it was news.
    pub action: Action,
}

/// The interrupt-delivery mode of a VM.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(rename_all = "snake_case"))]
pub enum DeliveryMode {
    /// Software-emulated LAPIC (KVM without APICv).
    #[default]
    Emulated,
    /// APIC virtualization without posted interrupts: EOI virtualized, everything else as
    /// `emulated` (DID §5.9's "KVM+APICv").
    Apicv,
    /// CPU posted interrupts for virtual devices and VT-d posted interrupts for assigned ones.
    Posted,
    /// ELI/ELVIS exitless interrupts: shadow IDT, direct delivery and EOI outside injection mode.
    Eli,
    /// DID: direct delivery of every interrupt of a running VM, direct EOI and timer.
    Did,
    /// Bare metal: no hypervisor (a host mode, not a VM setting).
    Native,
    /// Xen event channels (a `xen_pv` device's only mode): pending bit and upcall, no EOI.
    Evtchn,
}

impl DeliveryMode {
    /// Its name in scenarios and summaries.
    pub fn key(self) -> &'static str {
        match self {
            DeliveryMode::Emulated => "emulated",
            DeliveryMode::Apicv => "apicv",
            DeliveryMode::Posted => "posted",
            DeliveryMode::Eli => "eli",
            DeliveryMode::Did => "did",
            DeliveryMode::Native => "native",
            DeliveryMode::Evtchn => "evtchn",
        }
    }

    /// Does the mode bypass the hypervisor only for assigned devices (so a VM without one gains
    /// nothing from it)? True for `eli`; `did` also delivers virtual-device interrupts directly.
    pub fn needs_assigned_device(self) -> bool {
        matches!(self, DeliveryMode::Eli)
    }

    /// An interrupt from `source` is raised for a vCPU at `target`; `injection_mode` (ELI only)
    /// says a virtual interrupt is pending or in service on it.
    pub fn raise(self, source: Source, target: Target, injection_mode: bool) -> Decision {
        use Action::*;
        use DeliveryMode::*;
        use Source::*;
        // Not in guest mode: every mode records it for the next entry, or wakes the vCPU.
        let off_guest = match target {
            Target::InGuest | Target::InGuestIrqsOff => None,
            Target::Entering | Target::InHypervisor => Some(Pend),
            Target::Halted => Some(Wake),
            Target::Polling => Some(PollWake),
        };
        // Software injection exits whatever the guest's IF: KVM kicks a vCPU in guest mode
        // (`__apic_accept_irq` → `kvm_vcpu_kick`) and external-interrupt exiting is
        // unconditional. A vector the hardware holds waits for IF with no exit.
        let in_guest = if target == Target::InGuestIrqsOff { Pend } else { TakeNow };
        let injected = |cause| Decision { path: Path::Injected, action: off_guest.unwrap_or(Exit(cause)) };
        let direct = Decision { path: Path::Direct, action: off_guest.unwrap_or(in_guest) };
        match (self, source) {
            (Native, _) => direct,
            // The software LAPIC: a virtual interrupt needs an IPI kick, a physical one exits on
            // arrival; both are injected at the entry.
            // Event channels alike: Xen's IPI traps the running vCPU's pCPU, the upcall follows.
            (Emulated | Apicv | Evtchn, VirtualDevice | Ipi) => injected(ExitCause::InterruptDelivery),
            (Emulated | Apicv | Evtchn, AssignedDevice | Timer) => injected(ExitCause::ExternalInterrupt),
            // Posting: the notification vector is taken in guest mode; a vCPU entering or in
            // the hypervisor has its PIR synced at entry (ES2 §3.2).
            (Posted, VirtualDevice | Ipi | AssignedDevice) => Decision { path: Path::Posted, action: off_guest.unwrap_or(in_guest) },
            // The guest's LAPIC timer is a host hrtimer: its interrupt exits (DID §5.9).
            (Posted | Eli, Timer) => injected(ExitCause::ExternalInterrupt),
            // ELI: the shadow IDT lets assigned vectors through while no virtual interrupt is
            // pending or in service; in injection mode they exit and are injected (DID Fig. 3c).
            (Eli, AssignedDevice) if !injection_mode => direct,
            (Eli, AssignedDevice) => injected(ExitCause::ExternalInterrupt),
            (Eli, VirtualDevice | Ipi) => injected(ExitCause::InterruptDelivery),
            // DID: VF IRTEs point at the running vCPU's core, back ends send IPIs with the guest
            // vector, the guest owns its core's LAPIC timer; in host mode the hypervisor accepts
            // the interrupt and re-injects it by self-IPI before entry (DID §4.2–4.5).
            (Did, _) => direct,
        }
    }

    /// Does the guest's EOI write exit? `injection_mode`: a virtual interrupt is in service
    /// (or pending) when it writes.
    pub fn eoi_exits(self, injection_mode: bool) -> bool {
        match self {
            // ES2 §2.2 step 6, DID §2.2: the software LAPIC traps the write.
            DeliveryMode::Emulated => true,
            // EOI virtualization (APICv) or the x2APIC EOI MSR passed through (ELI, DID).
            DeliveryMode::Apicv | DeliveryMode::Posted | DeliveryMode::Did | DeliveryMode::Native => false,
            // An event channel has no EOI: the guest clears the pending bit in shared memory.
            DeliveryMode::Evtchn => false,
            // ELI turns direct EOI off while a virtual interrupt is in service (DID Fig. 3c).
            DeliveryMode::Eli => injection_mode,
        }
    }

    /// The guest sets IF again (its handler's `iret`) while a vector recorded on `path` is
    /// deliverable and was held back only by IF: does it take an interrupt-window exit before
    /// the vector is injected? Only software injection without virtual-interrupt delivery needs
    /// one (KVM `enable_irq_window`, `handle_interrupt_window`): `emulated`, and ELI's injection
    /// mode (KVM's software LAPIC, no APICv). APICv evaluates RVI itself (`apicv`, and `posted`
    /// for its injected timer); posted and direct vectors wait in the (virtual) IRR.
    pub fn window_exit(self, path: Path) -> bool {
        path == Path::Injected && matches!(self, DeliveryMode::Emulated | DeliveryMode::Eli)
    }

    /// Does programming the LAPIC timer (a TMICT write) exit? Only DID passes the TMICT MSR
    /// through (DID §4.1); APICv does not virtualize the timer (DID §5.9).
    pub fn timer_write_exits(self) -> bool {
        !matches!(self, DeliveryMode::Did | DeliveryMode::Native)
    }

    /// Does the host's own tick fire on the pCPU that runs this vCPU? DID restricts the
    /// hypervisor's timers to a designated core (DID §4.4), so a DID vCPU's core takes none.
    pub fn host_tick_on_vcpu_core(self) -> bool {
        self != DeliveryMode::Did
    }

    /// Does HLT exit? Only without a hypervisor does it not.
    pub fn hlt_exits(self) -> bool {
        self != DeliveryMode::Native
    }

    /// Is a VM exit possible at all (a hypervisor under the guest)?
    pub fn virtualized(self) -> bool {
        self != DeliveryMode::Native
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Action::*;
    use DeliveryMode::*;
    use Source::*;

    fn running(m: DeliveryMode, s: Source) -> Decision {
        m.raise(s, Target::InGuest, false)
    }

    #[test]
    fn emulated_exits_for_every_interrupt_of_a_running_vcpu_and_every_eoi() {
        assert_eq!(running(Emulated, VirtualDevice).action, Exit(ExitCause::InterruptDelivery));
        assert_eq!(running(Emulated, AssignedDevice).action, Exit(ExitCause::ExternalInterrupt));
        assert_eq!(running(Emulated, Timer).action, Exit(ExitCause::ExternalInterrupt));
        assert_eq!(running(Emulated, Ipi).path, Path::Injected);
        assert!(Emulated.eoi_exits(false) && Emulated.timer_write_exits() && Emulated.hlt_exits());
    }

    #[test]
    fn apicv_removes_only_the_eoi_exit() {
        for s in [VirtualDevice, AssignedDevice, Timer, Ipi] {
            assert_eq!(running(Apicv, s), running(Emulated, s), "{s:?}");
        }
        assert!(!Apicv.eoi_exits(true));
        assert!(Apicv.timer_write_exits(), "TMICT writes still exit (DID §5.9)");
    }

    #[test]
    fn posted_takes_device_interrupts_without_exits_but_not_the_timer() {
        for s in [VirtualDevice, AssignedDevice, Ipi] {
            assert_eq!(running(Posted, s), Decision { path: Path::Posted, action: TakeNow }, "{s:?}");
        }
        assert_eq!(running(Posted, Timer).action, Exit(ExitCause::ExternalInterrupt));
        assert!(!Posted.eoi_exits(false) && Posted.timer_write_exits());
    }

    #[test]
    fn eli_delivers_assigned_interrupts_directly_outside_injection_mode() {
        assert_eq!(Eli.raise(AssignedDevice, Target::InGuest, false), Decision { path: Path::Direct, action: TakeNow });
        assert_eq!(
            Eli.raise(AssignedDevice, Target::InGuest, true),
            Decision { path: Path::Injected, action: Exit(ExitCause::ExternalInterrupt) },
            "in injection mode an assigned interrupt exits and is injected"
        );
        assert_eq!(running(Eli, VirtualDevice), Decision { path: Path::Injected, action: Exit(ExitCause::InterruptDelivery) });
        assert_eq!(running(Eli, Timer).path, Path::Injected);
        assert!(!Eli.eoi_exits(false) && Eli.eoi_exits(true));
        assert!(Eli.needs_assigned_device() && !Did.needs_assigned_device());
    }

    #[test]
    fn did_delivers_everything_directly_and_owns_eoi_and_timer() {
        for s in [VirtualDevice, AssignedDevice, Timer, Ipi] {
            assert_eq!(running(Did, s), Decision { path: Path::Direct, action: TakeNow }, "{s:?}");
        }
        assert!(!Did.eoi_exits(true) && !Did.timer_write_exits() && Did.hlt_exits());
    }

    #[test]
    fn a_vcpu_out_of_guest_mode_is_woken_or_gets_it_at_entry_in_every_mode() {
        for m in [Emulated, Apicv, Posted, Eli, Did, Native] {
            for s in [VirtualDevice, AssignedDevice, Timer, Ipi] {
                assert_eq!(m.raise(s, Target::InHypervisor, false).action, Pend, "{m:?} {s:?}");
                assert_eq!(m.raise(s, Target::Entering, true).action, Pend, "{m:?} {s:?}");
                assert_eq!(m.raise(s, Target::Halted, false).action, Wake, "{m:?} {s:?}");
                assert_eq!(m.raise(s, Target::Polling, false).action, PollWake, "{m:?} {s:?}");
            }
        }
    }

    #[test]
    fn with_interrupts_off_software_injection_still_exits_and_hardware_holds_the_rest() {
        let masked = |m: DeliveryMode, s| m.raise(s, Target::InGuestIrqsOff, false);
        // KVM kicks (or the physical interrupt exits) whatever the guest's IF.
        assert_eq!(masked(Emulated, VirtualDevice), running(Emulated, VirtualDevice));
        assert_eq!(masked(Emulated, Timer), running(Emulated, Timer));
        assert_eq!(masked(Apicv, AssignedDevice), running(Apicv, AssignedDevice));
        assert_eq!(masked(Eli, VirtualDevice), running(Eli, VirtualDevice));
        // The (virtual) IRR holds a posted or direct vector until IF is set: no exit.
        for s in [VirtualDevice, AssignedDevice, Ipi] {
            assert_eq!(masked(Posted, s), Decision { path: Path::Posted, action: Pend }, "{s:?}");
        }
        for s in [VirtualDevice, AssignedDevice, Timer, Ipi] {
            assert_eq!(masked(Did, s), Decision { path: Path::Direct, action: Pend }, "{s:?}");
        }
        assert_eq!(masked(Eli, AssignedDevice), Decision { path: Path::Direct, action: Pend });
        assert_eq!(masked(Posted, Timer).action, Exit(ExitCause::ExternalInterrupt), "a host hrtimer");
    }

    #[test]
    fn only_software_injection_without_virtual_interrupt_delivery_takes_a_window_exit() {
        assert!(Emulated.window_exit(Path::Injected));
        assert!(Eli.window_exit(Path::Injected), "ELI's injection mode is KVM's software LAPIC");
        assert!(!Apicv.window_exit(Path::Injected), "APICv evaluates RVI when IF is set");
        assert!(!Posted.window_exit(Path::Injected), "the timer goes through the vIRR too");
        for m in [Emulated, Apicv, Posted, Eli, Did, Native] {
            assert!(!m.window_exit(Path::Direct) && !m.window_exit(Path::Posted), "{m:?}");
        }
    }

    #[test]
    fn event_channels_kick_a_running_vcpu_but_have_no_eoi_and_no_window_exit() {
        assert_eq!(running(Evtchn, VirtualDevice), Decision { path: Path::Injected, action: Exit(ExitCause::InterruptDelivery) });
        assert_eq!(running(Evtchn, Timer).action, Exit(ExitCause::ExternalInterrupt));
        assert_eq!(Evtchn.raise(VirtualDevice, Target::Halted, false).action, Wake, "a blocked vCPU is woken");
        assert_eq!(Evtchn.raise(VirtualDevice, Target::InHypervisor, false).action, Pend);
        assert!(!Evtchn.eoi_exits(true) && !Evtchn.eoi_exits(false), "no EOI: the guest clears the pending bit");
        assert!(!Evtchn.window_exit(Path::Injected), "the guest re-checks pending events when it unmasks");
        assert!(Evtchn.timer_write_exits() && Evtchn.hlt_exits() && Evtchn.virtualized() && !Evtchn.needs_assigned_device());
        assert_eq!(Evtchn.key(), "evtchn");
    }

    #[test]
    fn bare_metal_has_no_exits() {
        for s in [VirtualDevice, AssignedDevice, Timer, Ipi] {
            assert_eq!(running(Native, s).action, TakeNow);
        }
        assert!(!Native.eoi_exits(true) && !Native.timer_write_exits() && !Native.hlt_exits() && !Native.virtualized());
    }
}
