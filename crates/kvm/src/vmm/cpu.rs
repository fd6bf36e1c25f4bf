//! x86-64 set-up written by the host: page tables, GDT, per-vCPU TSS, IDT, and the register state
//! that enters the guest directly at CPL3 in long mode (KVM-NOTES: CPL0 may be emulated, so the
//! guest runs no CPL0 start-up code at all).
use super::layout::*;
use super::memory::{GuestMem, OutOfRange};
use kvm_bindings::{kvm_regs, kvm_segment, kvm_sregs};

const KERNEL_CS: u16 = 0x08;
const USER_DS: u16 = 0x23;
const USER_CS: u16 = 0x2b;
const TSS_SEL_BASE: u16 = 0x30;
/// TSS (0x68 bytes) + I/O permission bitmap (all ports allowed: 8 KiB of zeros) + 0xFF.
const TSS_LIMIT: u64 = 0x68 + 8192;

/// The entry points the image header names (guest/entry.S `.header`).
#[derive(Debug, Clone, Copy)]
pub struct ImageEntries {
    /// `_start` (CPL3).
    pub start: u64,
    /// Device-interrupt handler (vector IRQ_VECTOR, IST1).
    pub irq: u64,
    /// #GP handler (HLT from CPL3).
    pub gp: u64,
    /// First of 32 exception stubs.
    pub fault_stubs: u64,
    /// Bytes per exception stub.
    pub fault_stub_size: u64,
}

/// Identity map of the first 1 GiB with 2 MiB pages, user-accessible.
pub fn write_page_tables(mem: &GuestMem) -> Result<(), OutOfRange> {
    const P_RW_US: u64 = 0x7;
    mem.store_u64(PML4_ADDR, PDPT_ADDR | P_RW_US)?;
    mem.store_u64(PDPT_ADDR, PD_ADDR | P_RW_US)?;
    for i in 0..512u64 {
        mem.store_u64(PD_ADDR + i * 8, (i << 21) | P_RW_US | 0x80)?; // PS: 2 MiB page
    }
    Ok(())
}

/// GDT: null, kernel code, kernel data, (unused), user data, user code, one TSS per vCPU.
pub fn write_gdt(mem: &GuestMem, nvcpus: u64) -> Result<(), OutOfRange> {
    let entries: [u64; 6] = [
        0,
        0x00AF_9A00_0000_FFFF, // 0x08 kernel code, L=1
        0x00CF_9200_0000_FFFF, // 0x10 kernel data
        0x00CF_FA00_0000_FFFF, // 0x18 user code 32 (unused)
        0x00CF_F200_0000_FFFF, // 0x20 user data, DPL3
        0x00AF_FA00_0000_FFFF, // 0x28 user code 64, DPL3
    ];
    for (i, e) in entries.iter().enumerate() {
        mem.store_u64(GDT_ADDR + 8 * i as u64, *e)?;
    }
    for v in 0..nvcpus {
        let base = TSS_ADDR + v * TSS_STRIDE;
        let limit = TSS_LIMIT;
        let lo = (limit & 0xFFFF)
            | ((base & 0xFF_FFFF) << 16)
            | (0x89u64 << 40) // present, 64-bit TSS available
            | (((limit >> 16) & 0xF) << 48)
            | (((base >> 24) & 0xFF) << 56);
        let at = GDT_ADDR + TSS_SEL_BASE as u64 + 16 * v;
        mem.store_u64(at, lo)?;
        mem.store_u64(at + 8, base >> 32)?;
        // TSS: RSP0 at +4, IST1 at +36, I/O map base beyond the limit (+102).
        let stacks = STACKS_ADDR + v * STACK_STRIDE;
        mem.store_u32(base + 4, (stacks + KERNEL_STACK_TOP) as u32)?;
        mem.store_u32(base + 8, ((stacks + KERNEL_STACK_TOP) >> 32) as u32)?;
        mem.store_u32(base + 36, (stacks + IST_TOP) as u32)?;
        mem.store_u32(base + 40, ((stacks + IST_TOP) >> 32) as u32)?;
        // I/O map base right after the TSS: a zeroed bitmap allows every port at CPL3 (some
        // hosts do not honour IOPL = 3 for in/out), then the 0xFF terminator byte.
        mem.store_u16(base + 102, 0x68)?;
        mem.store_u8(base + TSS_LIMIT, 0xff)?;
    }
    Ok(())
}

fn write_gate(mem: &GuestMem, vector: u64, handler: u64, ist: u64) -> Result<(), OutOfRange> {
    let at = IDT_ADDR + 16 * vector;
    let lo = (handler & 0xFFFF)
        | ((KERNEL_CS as u64) << 16)
        | (ist << 32)
        | (0x8Eu64 << 40) // present, DPL0, 64-bit interrupt gate
        | (((handler >> 16) & 0xFFFF) << 48);
    mem.store_u64(at, lo)?;
    mem.store_u64(at + 8, handler >> 32)
}

/// IDT: exceptions to the reporting stubs, #GP to the HLT path, IRQ_VECTOR to the counter (IST1).
pub fn write_idt(mem: &GuestMem, e: &ImageEntries) -> Result<(), OutOfRange> {
    for v in 0..32 {
        write_gate(mem, v, e.fault_stubs + v * e.fault_stub_size, 0)?;
    }
    write_gate(mem, 13, e.gp, 0)?;
    write_gate(mem, IRQ_VECTOR, e.irq, 1)
}

fn seg(selector: u16, code: bool, dpl: u8) -> kvm_segment {
    kvm_segment {
        base: 0,
        limit: 0xFFFF_FFFF,
        selector,
        type_: if code { 0xB } else { 0x3 },
        present: 1,
        dpl,
        db: if code { 0 } else { 1 },
        s: 1,
        l: if code { 1 } else { 0 },
        g: 1,
        avl: 0,
        unusable: 0,
        padding: 0,
    }
}

/// Long mode, paging on, CPL3 segments, this vCPU's TSS.
pub fn long_mode_sregs(mut s: kvm_sregs, vcpu: u64, nvcpus: u64) -> kvm_sregs {
    s.cr0 = 0x8000_0033; // PG | NE | ET | MP | PE
    s.cr3 = PML4_ADDR;
    s.cr4 = 0x20 | 0x200; // PAE | OSFXSR
    s.efer = 0x500; // LME | LMA
    s.cs = seg(USER_CS, true, 3);
    let ds = seg(USER_DS, false, 3);
    s.ds = ds;
    s.es = ds;
    s.fs = ds;
    s.gs = ds;
    s.ss = ds;
    s.gdt.base = GDT_ADDR;
    s.gdt.limit = (TSS_SEL_BASE as u64 + 16 * nvcpus - 1) as u16;
    s.idt.base = IDT_ADDR;
    s.idt.limit = 16 * 256 - 1;
    s.tr = kvm_segment {
        base: TSS_ADDR + vcpu * TSS_STRIDE,
        limit: TSS_LIMIT as u32,
        selector: TSS_SEL_BASE + 16 * vcpu as u16,
        type_: 0xB, // busy 64-bit TSS
        present: 1,
        dpl: 0,
        db: 0,
        s: 0,
        l: 0,
        g: 0,
        avl: 0,
        unusable: 0,
        padding: 0,
    };
    s
}

/// Registers at `_start`: CPL3 stack, rdi = vCPU index, RFLAGS = IOPL3 | IF.
pub fn start_regs(entry: u64, vcpu: u64) -> kvm_regs {
    kvm_regs {
        rip: entry,
        rsp: STACKS_ADDR + vcpu * STACK_STRIDE + USER_STACK_TOP,
        rdi: vcpu,
        rflags: 0x3202,
        ..Default::default()
    }
}
