//! Guest-physical layout. Mirrors `guest/layout.h`; `tests::layout_matches_header` checks both agree.
#![allow(missing_docs)]

pub const GUEST_MEM_SIZE: u64 = 0x0080_0000;
pub const GDT_ADDR: u64 = 0x1000;
pub const IDT_ADDR: u64 = 0x2000;
pub const TSS_ADDR: u64 = 0x8_0000;
pub const TSS_STRIDE: u64 = 0x2100;
pub const PML4_ADDR: u64 = 0x4000;
pub const PDPT_ADDR: u64 = 0x5000;
pub const PD_ADDR: u64 = 0x6000;
pub const IMAGE_ADDR: u64 = 0x10000;
pub const IMAGE_MAX: u64 = 0x70000;
pub const VCPU_CTL_ADDR: u64 = 0x10_0000;
pub const VCPU_CTL_STRIDE: u64 = 0x4000;
pub const GLOBAL_CTL_ADDR: u64 = 0x18_0000;
pub const STACKS_ADDR: u64 = 0x20_0000;
pub const STACK_STRIDE: u64 = 0x2_0000;
pub const USER_STACK_TOP: u64 = 0x1_0000;
pub const KERNEL_STACK_TOP: u64 = 0x1_8000;
pub const IST_TOP: u64 = 0x1_F000;
pub const QUEUES_ADDR: u64 = 0x40_0000;
pub const QUEUE_STRIDE: u64 = 0x1_0000;
pub const BUFFERS_ADDR: u64 = 0x60_0000;
pub const BUFFER_STRIDE: u64 = 0x1_0000;
pub const BUFFER_SIZE: u64 = 64;
pub const MMIO_KICK_ADDR: u64 = 0x3000_0000;
pub const PIO_KICK_PORT: u64 = 0x6000;
pub const PIO_FAULT_PORT: u64 = 0xE1;
pub const PIO_EXIT_PORT: u64 = 0xE2;
/// Probe: a guest write here exits to userspace (KVM_EXIT_MMIO; no ioeventfd registered).
pub const MMIO_EXIT_ADDR: u64 = 0x3000_1000;
pub const MAX_VCPUS: u64 = 8;
pub const MAX_QUEUES: u64 = 8;
pub const MAX_QSIZE: u64 = 1024;
pub const IRQ_VECTOR: u64 = 0x40;
pub const HIST_BUCKETS: u64 = 1024;
pub const ADV_KINDS: u64 = 8;

pub const ROLE_SPIN: u64 = 0;
pub const ROLE_STREAM: u64 = 1;
pub const ROLE_CLOSED: u64 = 2;
pub const ROLE_BURST: u64 = 3;
pub const ROLE_IRQ_SINK: u64 = 4;
pub const ROLE_ADVERSARY: u64 = 5;
pub const ROLE_KICK_LOOP: u64 = 6;
pub const ROLE_EXIT_LOOP: u64 = 7;

pub const KICK_PIO: u64 = 0;
pub const KICK_MMIO: u64 = 1;
pub const KICK_NONE: u64 = 2;

pub const CONSUME_POLL: u64 = 0;
pub const CONSUME_IRQ: u64 = 1;

/// Offsets of the split-ring parts inside a queue's area (guest/ctl.h).
pub const DESC_OFF: u64 = 0x0000;
pub const AVAIL_OFF: u64 = 0x4000;
pub const USED_OFF: u64 = 0x5000;

/// Control block of vCPU `i`.
pub fn vcpu_ctl(i: u64) -> u64 {
    VCPU_CTL_ADDR + i * VCPU_CTL_STRIDE
}
/// The interrupt counter the CPL0 handler of vCPU `i` increments.
pub fn irq_counter(i: u64) -> u64 {
    STACKS_ADDR + i * STACK_STRIDE + IST_TOP
}
/// The queue area of queue `q`.
pub fn queue_area(q: u64) -> u64 {
    QUEUES_ADDR + q * QUEUE_STRIDE
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header_value(text: &str, name: &str) -> u64 {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(name) && l.starts_with("#define"))
            .unwrap_or_else(|| panic!("{name} not in layout.h"));
        let v = line.split_whitespace().nth(2).unwrap().trim_end_matches("UL");
        match v.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16).unwrap(),
            None => v.parse().unwrap(),
        }
    }

    #[test]
    fn layout_matches_header() {
        let text = include_str!("../../guest/layout.h");
        let pairs: &[(&str, u64)] = &[
            ("GUEST_MEM_SIZE", GUEST_MEM_SIZE), ("GDT_ADDR", GDT_ADDR), ("IDT_ADDR", IDT_ADDR),
            ("TSS_ADDR", TSS_ADDR), ("TSS_STRIDE", TSS_STRIDE), ("PML4_ADDR", PML4_ADDR), ("PDPT_ADDR", PDPT_ADDR), ("PD_ADDR", PD_ADDR),
            ("IMAGE_ADDR", IMAGE_ADDR), ("IMAGE_MAX", IMAGE_MAX), ("VCPU_CTL_ADDR", VCPU_CTL_ADDR),
            ("VCPU_CTL_STRIDE", VCPU_CTL_STRIDE), ("GLOBAL_CTL_ADDR", GLOBAL_CTL_ADDR),
            ("STACKS_ADDR", STACKS_ADDR), ("STACK_STRIDE", STACK_STRIDE), ("USER_STACK_TOP", USER_STACK_TOP),
            ("KERNEL_STACK_TOP", KERNEL_STACK_TOP), ("IST_TOP", IST_TOP), ("QUEUES_ADDR", QUEUES_ADDR),
            ("QUEUE_STRIDE", QUEUE_STRIDE), ("BUFFERS_ADDR", BUFFERS_ADDR), ("BUFFER_STRIDE", BUFFER_STRIDE),
            ("BUFFER_SIZE", BUFFER_SIZE), ("MMIO_KICK_ADDR", MMIO_KICK_ADDR), ("PIO_KICK_PORT", PIO_KICK_PORT),
            ("PIO_FAULT_PORT", PIO_FAULT_PORT), ("PIO_EXIT_PORT", PIO_EXIT_PORT), ("MMIO_EXIT_ADDR", MMIO_EXIT_ADDR), ("MAX_VCPUS", MAX_VCPUS),
            ("MAX_QUEUES", MAX_QUEUES), ("MAX_QSIZE", MAX_QSIZE), ("IRQ_VECTOR", IRQ_VECTOR),
            ("HIST_BUCKETS", HIST_BUCKETS), ("ADV_KINDS", ADV_KINDS), ("ROLE_SPIN", ROLE_SPIN),
            ("ROLE_STREAM", ROLE_STREAM), ("ROLE_CLOSED", ROLE_CLOSED), ("ROLE_BURST", ROLE_BURST),
            ("ROLE_IRQ_SINK", ROLE_IRQ_SINK), ("ROLE_ADVERSARY", ROLE_ADVERSARY),
            ("ROLE_KICK_LOOP", ROLE_KICK_LOOP), ("ROLE_EXIT_LOOP", ROLE_EXIT_LOOP), ("KICK_PIO", KICK_PIO),
            ("KICK_MMIO", KICK_MMIO), ("KICK_NONE", KICK_NONE), ("CONSUME_POLL", CONSUME_POLL),
            ("CONSUME_IRQ", CONSUME_IRQ),
        ];
        for (name, v) in pairs {
            assert_eq!(header_value(text, name), *v, "{name}");
        }
        let ctl = include_str!("../../guest/ctl.h");
        for (name, v) in [("DESC_OFF", DESC_OFF), ("AVAIL_OFF", AVAIL_OFF), ("USED_OFF", USED_OFF)] {
            assert_eq!(header_value(ctl, name), v, "{name}");
        }
    }
}
