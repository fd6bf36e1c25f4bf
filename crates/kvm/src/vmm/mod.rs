//! A minimal VMM: one VM with the in-kernel irqchip, guest RAM, the guest image, ioeventfds for
//! kicks, irqfds with MSI routes for interrupts, optional halt polling.
//!
//! ```text
//!  guest CPL3 loop ── out/mov (kick) ──> KVM ioeventfd ──> backend thread (eventfd read)
//!  backend ── eventfd write ──> KVM irqfd ──> MSI route (GSI -> APIC id) ──> vCPU ── CPL0 handler
//! ```
pub mod cpu;
pub mod layout;
pub mod memory;
pub mod stats;
pub mod sys;
pub mod vcpu;

use crate::error::{Error, Result};
use crate::guest;
use kvm_bindings::{
    kvm_enable_cap, kvm_irq_routing_entry, kvm_userspace_memory_region, KvmIrqRouting, Msrs,
    kvm_msr_entry, KVM_CAP_HALT_POLL, KVM_IRQ_ROUTING_MSI, KVM_MAX_CPUID_ENTRIES, KVM_MP_STATE_RUNNABLE,
};
use kvm_ioctls::{IoEventAddress, Kvm, NoDatamatch, VcpuFd, VmFd};
use layout::*;
use memory::GuestMem;
use std::sync::{Arc, Mutex};
use vmm_sys_util::eventfd::{EventFd, EFD_NONBLOCK};

/// First GSI used for our MSI routes (0..23 belong to the IOAPIC/PIC by convention).
pub const GSI_BASE: u32 = 24;

/// How the guest notifies the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KickVia {
    /// `out` to PIO_KICK_PORT + queue, caught by an ioeventfd.
    Pio,
    /// 32-bit write to MMIO_KICK_ADDR + 4 * queue, caught by an ioeventfd.
    Mmio,
    /// The guest never kicks (the backend polls).
    None,
}

/// What one VM needs.
#[derive(Debug, Clone)]
pub struct VmSpec {
    /// Name in reports.
    pub name: String,
    /// vCPUs (1..=MAX_VCPUS).
    pub vcpus: u64,
    /// Virtqueues (0..=MAX_QUEUES).
    pub queues: u64,
    /// Kick path.
    pub kick: KickVia,
    /// `halt_poll_ns` for this VM (None: the host default).
    pub halt_poll_ns: Option<u64>,
    /// Extra MSI sources beyond one per queue (interrupt generators).
    pub extra_msis: u32,
}

/// A created VM: fds, memory, eventfds; vCPUs are handed to their threads by [`Vm::take_vcpus`].
pub struct Vm {
    /// Spec it was built from.
    pub spec: VmSpec,
    /// VM fd.
    pub fd: Arc<VmFd>,
    /// Guest RAM.
    pub mem: Arc<GuestMem>,
    vcpus: Vec<VcpuFd>,
    /// One kick eventfd per queue.
    pub kick_fds: Vec<Arc<EventFd>>,
    /// One irqfd per MSI source: queues first, then the extra sources. Its GSI's destination is
    /// rewritten by [`Vm::set_route`] (KVM_SET_GSI_ROUTING).
    pub irq_fds: Vec<Arc<EventFd>>,
    /// `vcpu_irq_fds[src][v]`: an irqfd of source `src` whose GSI is routed to vCPU `v` for good,
    /// so a sender can re-route by choosing the fd instead of rewriting the routing table.
    pub vcpu_irq_fds: Vec<Vec<Arc<EventFd>>>,
    /// Destination vCPU of each MSI source; `set_route` rewrites the table.
    routes: Mutex<Vec<u64>>,
}

fn kvm_err(what: &str) -> impl FnOnce(kvm_ioctls::Error) -> Error + '_ {
    move |e| Error::Kvm(format!("{what}: {e}"))
}

/// Opens /dev/kvm and checks the capabilities the testbed needs.
pub fn open_kvm() -> Result<Kvm> {
    let kvm = Kvm::new().map_err(|e| Error::Unavailable(format!("cannot open /dev/kvm: {e}")))?;
    for (cap, name) in [
        (kvm_ioctls::Cap::Irqchip, "KVM_CAP_IRQCHIP"),
        (kvm_ioctls::Cap::Ioeventfd, "KVM_CAP_IOEVENTFD"),
        (kvm_ioctls::Cap::Irqfd, "KVM_CAP_IRQFD"),
        (kvm_ioctls::Cap::IrqRouting, "KVM_CAP_IRQ_ROUTING"),
        (kvm_ioctls::Cap::ExtCpuid, "KVM_CAP_EXT_CPUID"),
    ] {
        if !kvm.check_extension(cap) {
            return Err(Error::Unavailable(format!("/dev/kvm lacks {name}")));
        }
    }
    Ok(kvm)
}

impl Vm {
    /// Creates the VM, loads the guest and sets up every vCPU to enter `_start` at CPL3.
    pub fn new(kvm: &Kvm, spec: VmSpec) -> Result<Vm> {
        let fd = kvm.create_vm().map_err(kvm_err("KVM_CREATE_VM"))?;
        fd.set_tss_address(0xfffb_d000).map_err(kvm_err("KVM_SET_TSS_ADDR"))?;
        fd.create_irq_chip().map_err(kvm_err("KVM_CREATE_IRQCHIP"))?;
        if let Some(ns) = spec.halt_poll_ns {
            if kvm.check_extension_raw(KVM_CAP_HALT_POLL as _) == 0 {
                return Err(Error::Unavailable("halt_poll_ns set but KVM_CAP_HALT_POLL is missing".into()));
            }
            let cap = kvm_enable_cap { cap: KVM_CAP_HALT_POLL, args: [ns, 0, 0, 0], ..Default::default() };
            fd.enable_cap(&cap).map_err(kvm_err("KVM_ENABLE_CAP(HALT_POLL)"))?;
        }
        let mem = GuestMem::new(GUEST_MEM_SIZE).map_err(|e| Error::Kvm(e.to_string()))?;
        let region = kvm_userspace_memory_region {
            slot: 0,
            flags: 0,
            guest_phys_addr: 0,
            memory_size: GUEST_MEM_SIZE,
            userspace_addr: mem.host_base(),
        };
        // SAFETY: the region is our own live anonymous mapping of GUEST_MEM_SIZE bytes; `Vm` keeps
        // it (through `mem`) alive for as long as the VM fd exists.
        unsafe { fd.set_user_memory_region(region) }.map_err(kvm_err("KVM_SET_USER_MEMORY_REGION"))?;

        let entries = guest::load(&mem, spec.vcpus)?;
        cpu::write_page_tables(&mem)?;
        cpu::write_gdt(&mem, spec.vcpus)?;
        cpu::write_idt(&mem, &entries)?;

        let cpuid = kvm.get_supported_cpuid(KVM_MAX_CPUID_ENTRIES).map_err(kvm_err("KVM_GET_SUPPORTED_CPUID"))?;
        let mut vcpus = Vec::new();
        for i in 0..spec.vcpus {
            let v = fd.create_vcpu(i).map_err(kvm_err("KVM_CREATE_VCPU"))?;
            v.set_cpuid2(&cpuid).map_err(kvm_err("KVM_SET_CPUID2"))?;
            let sregs = v.get_sregs().map_err(kvm_err("KVM_GET_SREGS"))?;
            v.set_sregs(&cpu::long_mode_sregs(sregs, i, spec.vcpus)).map_err(kvm_err("KVM_SET_SREGS"))?;
            v.set_regs(&cpu::start_regs(entries.start, i)).map_err(kvm_err("KVM_SET_REGS"))?;
            // x2APIC on (IA32_APIC_BASE: enable | x2APIC | BSP for vCPU 0), then software-enable
            // the APIC (SVR bit 8, spurious vector 0xff) so MSIs are accepted and EOI is a wrmsr.
            let base = 0xFEE0_0000u64 | 0x800 | 0x400 | if i == 0 { 0x100 } else { 0 };
            let msrs = Msrs::from_entries(&[kvm_msr_entry { index: 0x1b, data: base, ..Default::default() }])
                .map_err(|e| Error::Kvm(format!("msrs: {e:?}")))?;
            v.set_msrs(&msrs).map_err(kvm_err("KVM_SET_MSRS(APIC_BASE)"))?;
            let mut lapic = v.get_lapic().map_err(kvm_err("KVM_GET_LAPIC"))?;
            let svr: [i8; 4] = [0xffu8 as i8, 0x01, 0, 0];
            lapic.regs[0xF0..0xF4].copy_from_slice(&svr);
            lapic.regs[0x80..0x84].copy_from_slice(&[0; 4]); // TPR 0
            v.set_lapic(&lapic).map_err(kvm_err("KVM_SET_LAPIC"))?;
            // vCPUs other than 0 would wait for INIT/SIPI: make them runnable.
            v.set_mp_state(kvm_bindings::kvm_mp_state { mp_state: KVM_MP_STATE_RUNNABLE })
                .map_err(kvm_err("KVM_SET_MP_STATE"))?;
            vcpus.push(v);
        }

        let mut kick_fds = Vec::new();
        for q in 0..spec.queues {
            let e = EventFd::new(EFD_NONBLOCK).map_err(|e| Error::Kvm(format!("eventfd: {e}")))?;
            match spec.kick {
                KickVia::Pio => fd
                    .register_ioevent(&e, &IoEventAddress::Pio(PIO_KICK_PORT + q), NoDatamatch)
                    .map_err(kvm_err("KVM_IOEVENTFD(pio)"))?,
                KickVia::Mmio => fd
                    .register_ioevent(&e, &IoEventAddress::Mmio(MMIO_KICK_ADDR + 4 * q), NoDatamatch)
                    .map_err(kvm_err("KVM_IOEVENTFD(mmio)"))?,
                KickVia::None => {}
            }
            kick_fds.push(Arc::new(e));
        }
        let nsrc = spec.queues as u32 + spec.extra_msis;
        let vm = Vm {
            spec,
            fd: Arc::new(fd),
            mem: Arc::new(mem),
            vcpus,
            kick_fds,
            irq_fds: Vec::new(),
            vcpu_irq_fds: Vec::new(),
            routes: Mutex::new(vec![0; nsrc as usize]),
        };
        vm.apply_routes(&vm.routes.lock().unwrap())?;
        let mut irq_fds = Vec::new();
        for s in 0..nsrc {
            let e = EventFd::new(EFD_NONBLOCK).map_err(|e| Error::Kvm(format!("eventfd: {e}")))?;
            vm.fd.register_irqfd(&e, GSI_BASE + s).map_err(kvm_err("KVM_IRQFD"))?;
            irq_fds.push(Arc::new(e));
        }
        let mut vcpu_irq_fds = Vec::new();
        for s in 0..nsrc {
            let mut per = Vec::new();
            for v in 0..vm.spec.vcpus as u32 {
                let e = EventFd::new(EFD_NONBLOCK).map_err(|e| Error::Kvm(format!("eventfd: {e}")))?;
                vm.fd.register_irqfd(&e, vm.fixed_gsi(s, v)).map_err(kvm_err("KVM_IRQFD"))?;
                per.push(Arc::new(e));
            }
            vcpu_irq_fds.push(per);
        }
        Ok(Vm { irq_fds, vcpu_irq_fds, ..vm })
    }

    /// GSI of source `src` fixed to vCPU `v` (after the re-routable GSIs).
    fn fixed_gsi(&self, src: u32, v: u32) -> u32 {
        GSI_BASE + self.routes.lock().unwrap().len() as u32 + src * self.spec.vcpus as u32 + v
    }

    fn msi_entry(gsi: u32, dest: u64) -> kvm_irq_routing_entry {
        let mut e = kvm_irq_routing_entry { gsi, type_: KVM_IRQ_ROUTING_MSI, ..Default::default() };
        e.u.msi.address_lo = 0xFEE0_0000 | ((dest as u32) << 12);
        e.u.msi.address_hi = 0;
        e.u.msi.data = IRQ_VECTOR as u32; // fixed delivery, edge
        e
    }

    fn apply_routes(&self, dest: &[u64]) -> Result<()> {
        let mut entries = Vec::with_capacity(dest.len() * (1 + self.spec.vcpus as usize));
        for (s, &d) in dest.iter().enumerate() {
            entries.push(Self::msi_entry(GSI_BASE + s as u32, d));
        }
        for s in 0..dest.len() as u32 {
            for v in 0..self.spec.vcpus as u32 {
                entries.push(Self::msi_entry(GSI_BASE + dest.len() as u32 + s * self.spec.vcpus as u32 + v, v as u64));
            }
        }
        let table = KvmIrqRouting::from_entries(&entries).map_err(|e| Error::Kvm(format!("routing: {e:?}")))?;
        self.fd.set_gsi_routing(&table).map_err(kvm_err("KVM_SET_GSI_ROUTING"))
    }

    /// Points MSI source `src` at vCPU `dest` (KVM_SET_GSI_ROUTING, works while the VM runs).
    pub fn set_route(&self, src: usize, dest: u64) -> Result<()> {
        let mut r = self.routes.lock().unwrap();
        if r.get(src) == Some(&dest) {
            return Ok(());
        }
        r[src] = dest;
        self.apply_routes(&r)
    }

    /// Current destination of each MSI source.
    pub fn routes(&self) -> Vec<u64> {
        self.routes.lock().unwrap().clone()
    }

    /// Hands the vCPU fds to the caller (once).
    pub fn take_vcpus(&mut self) -> Vec<VcpuFd> {
        std::mem::take(&mut self.vcpus)
    }
}
