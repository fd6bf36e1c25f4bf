//! Optional APIC features of a VM on today's KVM hosts (`[vm.apic]`), on top of its
//! [`DeliveryMode`]: which guest IPI sends and EOI writes still exit.
//!
//! | feature    | what it removes                                   | what it leaves                               |
//! |------------|---------------------------------------------------|----------------------------------------------|
//! | `ipiv`     | the sender's ICR-write exit of a unicast physical-mode IPI (the CPU posts it to the target's PID) | logical/shorthand IPIs; a halted target still woken by the host |
//! | `pv_eoi`   | an EOI exit when KVM flagged, at the last entry, that nothing else is pending or in service | EOIs with another vector in the IRR or ISR   |
//! | `pv_ipi`   | one ICR-write exit per destination of a multi-destination send: one hypercall exit instead | single-destination sends (reschedule IPIs)   |
//! | `pv_sched_yield` | no exit (it adds one hypercall): the sender's wait for a preempted destination, whose thread it yields its pCPU to | a wait for a destination that is blocked or runs; a yield CFS finds too unfair |
//! | `avic`     | the sender's ICR-write exit when its target is running (IsRunning: the CPU sets the target's vIRR and rings its doorbell) | an AVIC_INCOMPLETE_IPI exit of the sender for a target not running (blocked, preempted, woken but not yet on its pCPU), whose handler wakes it; every cross-CPU IPI's exit on a CPU with erratum 1235 |
//!
//! Sources:
//! - **IPIv**: Intel SDM Vol. 3C §30.1.6 "IPI virtualization" (tertiary processor-based
//!   control; Sapphire Rapids and later); KVM patch series "IPI virtualization support for VM"
//!   (Zeng Guang, merged for Linux 5.19): `vmx.c` sets `TERTIARY_EXEC_IPI_VIRT` only with APICv
//!   and posted interrupts (`enable_ipiv` requires `enable_apicv` and the PID table), and only
//!   for physical-destination, no-shorthand ICR writes — the rest still trap (`handle_apic_write`).
//!   A blocked target's PID carries the wake-up vector (`vmx/posted_intr.c` `pi_wakeup_handler`).
//!   The patch's kvm-unit-tests IPI round trip: −22.21 % cycles (xAPIC), −15.98 % (x2APIC).
//! - **PV EOI**: `KVM_FEATURE_PV_EOI` (Michael S. Tsirkin, Linux 3.6): `lapic.c`
//!   `apic_sync_pv_eoi_to_guest` sets the guest's flag at entry only when no IRR bit is set and
//!   exactly one vector is in service (`highest_isr_cache != -1`); the guest's
//!   `kvm_guest_apic_eoi_write` skips the EOI write when it clears the flag;
//!   `apic_sync_pv_eoi_from_guest` at the next exit completes that ISR bit. Under APICv
//!   `highest_isr_cache` stays -1 (the ISR is the hardware's), so the flag is never set.
//! - **PV IPI**: `KVM_HC_SEND_IPI` (Wanpeng Li, Linux 4.19): `arch/x86/kernel/kvm.c`
//!   `kvm_setup_pv_ipi` replaces `apic->send_IPI_mask` (and `_allbutself`), one hypercall per
//!   128 destinations; `apic->send_IPI`, which `smp_send_reschedule` uses for one CPU, keeps
//!   its ICR write.
//! - **AVIC / x2AVIC** (AMD APM Vol. 2 §15.29 "Advanced Virtual Interrupt Controller"; KVM
//!   `arch/x86/kvm/svm/avic.c`): `avic_vcpu_load`/`avic_vcpu_put` set and clear IsRunning in the
//!   vCPU's physical APIC ID table entry when its thread is scheduled in and out, and
//!   `avic_vcpu_blocking` clears it before the thread blocks (`kvm_vcpu_halt` halt-polls first,
//!   so a polling vCPU is still running). An ICR write to a running target sets its vIRR and
//!   rings the doorbell: no exit; to a target not running the CPU sets the vIRR and exits the
//!   sender with AVIC_INCOMPLETE_IPI / `AVIC_IPI_FAILURE_TARGET_NOT_RUNNING`, whose handler
//!   (`avic_incomplete_ipi_interception` → `avic_kick_target_vcpus`) wakes the target.
//!   Device interrupts take posted mode's paths: `svm_deliver_avic_intr` rings the doorbell of
//!   a running vCPU and wakes one that is not; an IOMMU-posted (GA mode) interrupt for a vCPU
//!   not running is logged in the GA log, whose interrupt's `avic_ga_log_notifier` wakes it.
//!   Edge-triggered EOIs are accelerated (a level-triggered one traps:
//!   `avic_unaccelerated_access_interception`); TMICT writes trap as under APICv. Inhibits
//!   (`svm_check_apicv_inhibit_reasons`): a guest with x2APIC on a CPU without x2AVIC
//!   (`APICV_INHIBIT_REASON_X2APIC`; x2AVIC from Zen 4), PIT re-injection, nested, IRQ window.
//!   Erratum 1235 (Family 17h, Zen 1/2): the CPU may miss a just-cleared IsRunning; KVM sets
//!   `enable_ipiv = false` there and never sets IsRunning, so every ICR write but a self-IPI
//!   exits (patch "KVM: SVM: Disable (x2)AVIC IPI virtualization if CPU has erratum #1235",
//!   Maxim Levitsky, in Sean Christopherson's device-posted-IRQ series, 2025) while device
//!   interrupts, the IPI's receiving side and EOIs stay accelerated.
//! - **PV sched yield** (`KVM_HC_SCHED_YIELD`, Wanpeng Li, Linux 5.3): the guest's
//!   `kvm_smp_send_call_func_ipi` sends the call-function IPI (`native_send_call_func_ipi`), then
//!   looks at the destinations in order and, at the first whose steal-time record says it is
//!   preempted (`vcpu_is_preempted`), makes one `KVM_HC_SCHED_YIELD` hypercall with its APIC ID
//!   and stops looking. KVM's `kvm_sched_yield` yields the caller's thread to that vCPU's
//!   (`kvm_vcpu_yield_to` → `yield_to(task, true)`) if the target is `ready`. Only
//!   `smp_call_function_many`'s mask path goes through it: a single destination
//!   (`smp_call_function_single`, `send_call_func_single_ipi`) and a reschedule IPI do not.

use super::DeliveryMode;

/// The VM's optional APIC features. Default: none (every existing scenario unchanged).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields, default))]
pub struct ApicFeatures {
    /// Intel IPI virtualization (IPIv).
    pub ipiv: bool,
    /// KVM paravirtual EOI (`KVM_FEATURE_PV_EOI`).
    pub pv_eoi: bool,
    /// KVM paravirtual IPIs (`KVM_HC_SEND_IPI`).
    pub pv_ipi: bool,
    /// KVM paravirtual sched yield (`KVM_HC_SCHED_YIELD`).
    pub pv_sched_yield: bool,
    /// AMD AVIC (x2AVIC with [`ApicFeatures::x2apic`]).
    pub avic: bool,
    /// The guest runs its LAPIC in x2APIC mode (its CPUID has x2APIC): under AVIC it needs
    /// x2AVIC; nothing else in the model depends on it.
    pub x2apic: bool,
}

/// What the host's CPU offers that a feature needs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuCaps {
    /// The CPU has IPI virtualization (the tertiary VM-execution control).
    pub ipiv: bool,
    /// The CPU has AMD AVIC (CPUID Fn8000_000A EDX bit 13).
    pub avic: bool,
    /// The CPU has x2AVIC (CPUID Fn8000_000A EDX bit 18; Zen 4 and later).
    pub x2avic: bool,
    /// The CPU has erratum 1235 (Family 17h: Zen 1, Zen 2): KVM disables AVIC's IPI
    /// virtualization, so every ICR write exits.
    pub avic_erratum_1235: bool,
}

/// The IPIs a guest sends, as far as the features distinguish them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IpiKind {
    /// One destination in physical mode (`apic->send_IPI`: a reschedule IPI,
    /// `smp_send_reschedule`).
    Unicast,
    /// `n` destinations at once (`apic->send_IPI_mask`: a call-function IPI, a TLB shootdown).
    Multicast(u32),
}

/// What sending an IPI costs the sender.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IpiSend {
    /// The CPU virtualizes the ICR write: no exit.
    Exitless,
    /// ICR-write exits, one per destination.
    IcrWrites(u32),
    /// One `KVM_HC_SEND_IPI` hypercall exit for every destination.
    Hypercall,
    /// AVIC: the ICR write to these many targets not running exits (AVIC_INCOMPLETE_IPI,
    /// `AVIC_IPI_FAILURE_TARGET_NOT_RUNNING`); the handler wakes them. Those running got the
    /// IPI from the CPU.
    IncompleteIpi(u32),
}

impl IpiSend {
    /// Does the sender exit?
    pub fn exits(self) -> bool {
        !matches!(self, IpiSend::Exitless)
    }
}

/// A feature this VM cannot have, and why (the scenario names the key).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct Refused {
    /// The feature's key under `[vm.apic]`.
    pub feature: &'static str,
    /// Why, with what would allow it.
    pub reason: String,
}

impl ApicFeatures {
    /// Can a VM in `mode` on a CPU with `cpu` have these features? `multicast_ipis`: the guest
    /// sends IPIs to several CPUs at once (call-function IPIs, TLB shootdowns); without them
    /// `pv_ipi` and `pv_sched_yield` change nothing and are refused rather than ignored.
    pub fn check(self, mode: DeliveryMode, cpu: CpuCaps, multicast_ipis: bool) -> Result<(), Refused> {
        let no = |feature, reason: String| Err(Refused { feature, reason });
        if !mode.virtualized() && self != ApicFeatures::default() {
            return no(self.first(), "a bare-metal host has no hypervisor: every IPI and EOI is native".into());
        }
        if self.avic {
            if self.ipiv {
                return no("avic", "AVIC is AMD's and IPI virtualization (ipiv) Intel's: no CPU has both; remove one of the keys".into());
            }
            // AVIC's backing page and doorbell deliver as posted interrupts do (svm_deliver_avic_intr).
            if mode != DeliveryMode::Posted {
                return no(
                    "avic",
                    format!(
                        "AVIC delivers device interrupts into the vAPIC backing page with a doorbell (or a GA-log wake-up), as posted interrupts do, and virtualizes the EOI; set interrupt_delivery = \"posted\" (not \"{}\")",
                        mode.key()
                    ),
                );
            }
            if !cpu.avic {
                return no("avic", "the profile's CPU has no AMD AVIC (cpu.avic = 0 or absent; the built-in profiles' CPUs are Intel); use a profile whose cpu.avic = 1 or set it in [profile_overrides.cpu]".into());
            }
            if self.x2apic && !cpu.x2avic {
                return no("x2apic", "a guest in x2APIC mode inhibits AVIC on a CPU without x2AVIC (KVM APICV_INHIBIT_REASON_X2APIC: the VM would run with the emulated LAPIC; x2AVIC from Zen 4): set cpu.x2avic = 1 in [profile_overrides.cpu] or remove the key (QEMU -cpu ...,-x2apic)".into());
            }
        } else if self.x2apic {
            return no("x2apic", "the guest's x2APIC mode matters in this model only to AVIC (x2AVIC); posted interrupts, IPIv and PV EOI work alike in xAPIC and x2APIC mode: set avic = true or remove the key".into());
        }
        if self.ipiv {
            // vmx.c: enable_ipiv needs APICv and posted interrupts (the PID table IPIv writes).
            if mode != DeliveryMode::Posted {
                return no(
                    "ipiv",
                    format!(
                        "IPI virtualization posts the IPI into the target's posted-interrupt descriptor and needs APICv with posted interrupts; set interrupt_delivery = \"posted\" (not \"{}\")",
                        mode.key()
                    ),
                );
            }
            if !cpu.ipiv {
                return no("ipiv", "the profile's CPU has no IPI virtualization (cpu.ipiv = 0 or absent; Intel Sapphire Rapids and later have it); use a profile whose cpu.ipiv = 1 or set it in [profile_overrides.cpu]".into());
            }
        }
        if self.pv_eoi && mode != DeliveryMode::Emulated {
            let why = match mode {
                DeliveryMode::Eli => "ELI passes the x2APIC EOI MSR through and owns the guest's EOI path",
                DeliveryMode::Did => "DID passes the EOI MSR through: the EOI never exits",
                // lapic.c: with APICv, highest_isr_cache stays -1 and the flag is never set.
                _ => "with APICv the EOI is virtualized and never exits (KVM never sets the PV EOI flag: highest_isr_cache stays -1)",
            };
            return no("pv_eoi", format!("{why}; PV EOI removes only the emulated LAPIC's EOI exit: set interrupt_delivery = \"emulated\" or remove the key"));
        }
        if !multicast_ipis && self.pv_ipi {
            return no("pv_ipi", "PV IPI (KVM_HC_SEND_IPI) replaces only multi-destination sends (apic->send_IPI_mask), and this VM's guest sends only single-destination IPIs (smp_send_reschedule -> apic->send_IPI, still an ICR write): it would change nothing; remove the key, or send one IPI to several vCPUs (workload kind = \"ipi_pingpong\" with targets > 1)".into());
        }
        if !multicast_ipis && self.pv_sched_yield {
            return no("pv_sched_yield", "PV sched yield (KVM_HC_SCHED_YIELD) follows only a multi-destination call-function IPI (smp_call_function_many -> kvm_smp_send_call_func_ipi), and this VM's guest sends only single-destination IPIs (reschedule IPIs, smp_call_function_single): it would change nothing; remove the key, or send one IPI to several vCPUs (workload kind = \"ipi_pingpong\" with targets > 1)".into());
        }
        Ok(())
    }

    /// `kvm_smp_send_call_func_ipi` after a multi-destination call-function IPI: the
    /// destination (its index in send order) the guest yields to with `KVM_HC_SCHED_YIELD` —
    /// the first whose steal-time record says preempted — or None (no feature, none preempted).
    pub fn sched_yield_to(self, preempted: impl IntoIterator<Item = bool>) -> Option<usize> {
        if !self.pv_sched_yield {
            return None;
        }
        preempted.into_iter().position(|p| p)
    }

    /// The key of the first feature set, for a refusal that concerns them all ("ipiv" when
    /// none is).
    pub fn first(self) -> &'static str {
        [
            (self.ipiv, "ipiv"),
            (self.pv_eoi, "pv_eoi"),
            (self.pv_ipi, "pv_ipi"),
            (self.pv_sched_yield, "pv_sched_yield"),
            (self.avic, "avic"),
            (self.x2apic, "x2apic"),
        ]
            .into_iter()
            .find_map(|(on, k)| on.then_some(k))
            .unwrap_or("ipiv")
    }

    /// What the sender of an IPI of `kind` pays in `mode` on a CPU with `cpu`; `not_running`:
    /// how many of its destinations were not running when it wrote the ICR (AVIC's IsRunning
    /// bit: the vCPU's thread not on its pCPU, or blocked after HLT; halt-polling is running).
    pub fn ipi_send(self, mode: DeliveryMode, cpu: CpuCaps, kind: IpiKind, not_running: u32) -> IpiSend {
        let n = match kind {
            IpiKind::Unicast => 1,
            IpiKind::Multicast(n) => n,
        };
        if !mode.virtualized() {
            return IpiSend::Exitless;
        }
        match kind {
            // kvm.c replaces send_IPI_mask whatever else the CPU offers: the guest's choice is
            // by the CPUID feature bit, so a multicast is one hypercall even with IPIv or AVIC.
            IpiKind::Multicast(_) if self.pv_ipi => IpiSend::Hypercall,
            // IPIv virtualizes each physical-mode ICR write (send_IPI_mask loops over them).
            _ if self.ipiv && mode == DeliveryMode::Posted => IpiSend::Exitless,
            // Erratum 1235: KVM never sets IsRunning (enable_ipiv = false), so every target
            // looks not running and every ICR write exits.
            _ if self.avic && mode == DeliveryMode::Posted && cpu.avic_erratum_1235 => IpiSend::IncompleteIpi(n),
            _ if self.avic && mode == DeliveryMode::Posted && not_running == 0 => IpiSend::Exitless,
            _ if self.avic && mode == DeliveryMode::Posted => IpiSend::IncompleteIpi(not_running.min(n)),
            _ => IpiSend::IcrWrites(n),
        }
    }

    /// Does the guest's EOI exit? `injection_mode` as [`DeliveryMode::eoi_exits`];
    /// `others`: at the last VM entry another vector was requested (IRR) or in service beside
    /// the one this EOI completes (KVM `apic_sync_pv_eoi_to_guest` then leaves the flag clear).
    pub fn eoi_exits(self, mode: DeliveryMode, injection_mode: bool, others: bool) -> bool {
        if self.pv_eoi && mode == DeliveryMode::Emulated && !others {
            // kvm_guest_apic_eoi_write: the flag was set; the guest clears it and skips the write.
            return false;
        }
        mode.eoi_exits(injection_mode)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use DeliveryMode::*;

    const ALL: [DeliveryMode; 5] = [Emulated, Apicv, Posted, Eli, Did];
    const MODERN: CpuCaps = CpuCaps { ipiv: true, avic: false, x2avic: false, avic_erratum_1235: false };
    const ZEN4: CpuCaps = CpuCaps { ipiv: false, avic: true, x2avic: true, avic_erratum_1235: false };
    const ZEN2: CpuCaps = CpuCaps { ipiv: false, avic: true, x2avic: false, avic_erratum_1235: true };
    fn with(f: impl FnOnce(&mut ApicFeatures)) -> ApicFeatures {
        let mut a = ApicFeatures::default();
        f(&mut a);
        a
    }

    #[test]
    fn no_features_change_nothing() {
        let none = ApicFeatures::default();
        for m in ALL {
            assert!(none.check(m, CpuCaps::default(), false).is_ok());
            assert_eq!(none.ipi_send(m, CpuCaps::default(), IpiKind::Unicast, 0), IpiSend::IcrWrites(1), "{m:?}");
            assert_eq!(none.ipi_send(m, CpuCaps::default(), IpiKind::Multicast(3), 0), IpiSend::IcrWrites(3), "{m:?}");
            for inj in [false, true] {
                for others in [false, true] {
                    assert_eq!(none.eoi_exits(m, inj, others), m.eoi_exits(inj), "{m:?}");
                }
            }
        }
    }

    #[test]
    fn ipiv_removes_the_senders_icr_exit_in_posted_mode_only() {
        let f = with(|a| a.ipiv = true);
        assert_eq!(f.ipi_send(Posted, CpuCaps::default(), IpiKind::Unicast, 0), IpiSend::Exitless);
        assert_eq!(f.ipi_send(Posted, CpuCaps::default(), IpiKind::Multicast(4), 0), IpiSend::Exitless, "each physical-mode write virtualized");
        assert!(f.check(Posted, MODERN, false).is_ok());
        // The target side is posted mode's own: posted to a running vCPU, a halted one woken.
        assert_eq!(Posted.raise(super::super::Source::Ipi, super::super::Target::InGuest, false).action, super::super::Action::TakeNow);
        assert_eq!(Posted.raise(super::super::Source::Ipi, super::super::Target::Halted, false).action, super::super::Action::Wake);
    }

    #[test]
    fn ipiv_is_refused_without_posted_interrupts_or_on_an_older_cpu() {
        let f = with(|a| a.ipiv = true);
        for m in [Emulated, Apicv, Eli, Did] {
            let e = f.check(m, MODERN, false).unwrap_err();
            assert_eq!(e.feature, "ipiv");
            assert!(e.reason.contains("\"posted\"") && e.reason.contains(m.key()), "{e}");
        }
        let e = f.check(Posted, CpuCaps::default(), false).unwrap_err();
        assert!(e.reason.contains("cpu.ipiv"), "{e}");
    }

    #[test]
    fn pv_eoi_skips_the_exit_only_when_nothing_else_is_pending_or_in_service() {
        let f = with(|a| a.pv_eoi = true);
        assert!(f.check(Emulated, CpuCaps::default(), false).is_ok());
        assert!(!f.eoi_exits(Emulated, false, false), "flag set at entry: no exit");
        assert!(f.eoi_exits(Emulated, false, true), "another vector pending: the real EOI write");
        assert_eq!(f.ipi_send(Emulated, CpuCaps::default(), IpiKind::Unicast, 0), IpiSend::IcrWrites(1), "IPIs unchanged");
    }

    #[test]
    fn pv_eoi_is_refused_where_the_eoi_does_not_exit_as_an_emulated_lapics() {
        let f = with(|a| a.pv_eoi = true);
        for m in [Apicv, Posted, Eli, Did] {
            let e = f.check(m, MODERN, false).unwrap_err();
            assert_eq!(e.feature, "pv_eoi", "{m:?}");
            assert!(e.reason.contains("\"emulated\""), "{e}");
        }
    }

    #[test]
    fn pv_ipi_makes_a_multicast_one_hypercall_and_leaves_unicast_icr_writes() {
        let f = with(|a| a.pv_ipi = true);
        for m in ALL {
            assert_eq!(f.ipi_send(m, CpuCaps::default(), IpiKind::Multicast(8), 0), IpiSend::Hypercall, "{m:?}");
            assert_eq!(f.ipi_send(m, CpuCaps::default(), IpiKind::Unicast, 0), IpiSend::IcrWrites(1), "{m:?}: apic->send_IPI is not replaced");
            assert!(f.check(m, CpuCaps::default(), true).is_ok());
        }
        let both = with(|a| {
            a.pv_ipi = true;
            a.ipiv = true
        });
        assert_eq!(both.ipi_send(Posted, CpuCaps::default(), IpiKind::Multicast(2), 0), IpiSend::Hypercall, "the guest picks the hypercall by CPUID");
        assert_eq!(both.ipi_send(Posted, CpuCaps::default(), IpiKind::Unicast, 0), IpiSend::Exitless);
    }

    #[test]
    fn pv_ipi_and_sched_yield_are_refused_without_multicast_ipis() {
        for (f, k) in [(with(|a| a.pv_ipi = true), "pv_ipi"), (with(|a| a.pv_sched_yield = true), "pv_sched_yield")] {
            let e = f.check(Posted, MODERN, false).unwrap_err();
            assert_eq!(e.feature, k);
            assert!(e.reason.contains("single-destination"), "{e}");
        }
        assert!(with(|a| a.pv_ipi = true).check(Posted, MODERN, true).is_ok(), "a guest that sends multicast IPIs");
        assert!(with(|a| a.pv_sched_yield = true).check(Emulated, CpuCaps::default(), true).is_ok());
    }

    #[test]
    fn pv_sched_yield_yields_to_the_first_preempted_destination_only() {
        let f = with(|a| a.pv_sched_yield = true);
        assert_eq!(f.sched_yield_to([false, true, true]), Some(1), "one hypercall, then it stops looking");
        assert_eq!(f.sched_yield_to([false, false]), None, "none preempted: no hypercall");
        assert_eq!(ApicFeatures::default().sched_yield_to([true]), None, "without the feature the sender just waits");
    }

    #[test]
    fn bare_metal_refuses_every_feature() {
        let e = with(|a| a.pv_eoi = true).check(Native, MODERN, true).unwrap_err();
        assert_eq!(e.feature, "pv_eoi");
        assert_eq!(ApicFeatures::default().ipi_send(Native, CpuCaps::default(), IpiKind::Unicast, 0), IpiSend::Exitless);
    }

    #[test]
    fn avic_removes_the_senders_exit_only_for_a_running_target() {
        let f = with(|a| a.avic = true);
        assert!(f.check(Posted, ZEN4, false).is_ok());
        assert_eq!(f.ipi_send(Posted, ZEN4, IpiKind::Unicast, 0), IpiSend::Exitless, "IsRunning: vIRR set, doorbell rung");
        assert_eq!(f.ipi_send(Posted, ZEN4, IpiKind::Unicast, 1), IpiSend::IncompleteIpi(1), "not running: AVIC_INCOMPLETE_IPI");
        assert_eq!(f.ipi_send(Posted, ZEN4, IpiKind::Multicast(4), 1), IpiSend::IncompleteIpi(1));
        assert!(!f.ipi_send(Posted, ZEN4, IpiKind::Multicast(4), 0).exits());
        // The receiving side is posted mode's: a running target takes it, a halted one is woken.
        assert_eq!(Posted.raise(super::super::Source::Ipi, super::super::Target::Halted, false).action, super::super::Action::Wake);
        assert!(!f.eoi_exits(Posted, false, true), "edge-triggered EOIs accelerated");
    }

    #[test]
    fn erratum_1235_makes_every_icr_write_exit() {
        let f = with(|a| a.avic = true);
        assert!(f.check(Posted, ZEN2, false).is_ok(), "AVIC stays on, without IPI virtualization");
        assert_eq!(f.ipi_send(Posted, ZEN2, IpiKind::Unicast, 0), IpiSend::IncompleteIpi(1));
        assert_eq!(f.ipi_send(Posted, ZEN2, IpiKind::Multicast(3), 0), IpiSend::IncompleteIpi(3));
        let pv = with(|a| {
            a.avic = true;
            a.pv_ipi = true
        });
        assert_eq!(pv.ipi_send(Posted, ZEN2, IpiKind::Multicast(3), 3), IpiSend::Hypercall);
    }

    #[test]
    fn avic_is_refused_on_intel_without_posting_with_ipiv_or_with_an_inhibiting_x2apic() {
        let f = with(|a| a.avic = true);
        let e = f.check(Posted, MODERN, false).unwrap_err();
        assert!(e.feature == "avic" && e.reason.contains("cpu.avic"), "{e}");
        for m in [Emulated, Apicv, Eli, Did] {
            let e = f.check(m, ZEN4, false).unwrap_err();
            assert!(e.feature == "avic" && e.reason.contains("\"posted\""), "{e}");
        }
        let both = with(|a| {
            a.avic = true;
            a.ipiv = true
        });
        assert_eq!(both.check(Posted, ZEN4, false).unwrap_err().feature, "avic");
        let x2 = with(|a| {
            a.avic = true;
            a.x2apic = true
        });
        assert!(x2.check(Posted, ZEN4, false).is_ok(), "x2AVIC");
        let e = x2.check(Posted, ZEN2, false).unwrap_err();
        assert!(e.feature == "x2apic" && e.reason.contains("APICV_INHIBIT_REASON_X2APIC"), "{e}");
        let e = with(|a| a.x2apic = true).check(Posted, ZEN4, false).unwrap_err();
        assert!(e.feature == "x2apic" && e.reason.contains("avic = true"), "{e}");
    }
}
