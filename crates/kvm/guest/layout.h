/* Guest-physical layout shared by the guest and the VMM (crates/kvm/src/vmm/layout.rs mirrors it;
 * a unit test checks that both agree). Physical == virtual (identity map, 2 MiB pages). */
#ifndef EVENTPATH_LAYOUT_H
#define EVENTPATH_LAYOUT_H

#define GUEST_MEM_SIZE     0x00800000UL /* 8 MiB of RAM */
#define GDT_ADDR           0x00001000UL
#define IDT_ADDR           0x00002000UL
#define TSS_ADDR           0x00080000UL /* one TSS + I/O bitmap (TSS_STRIDE) per vCPU */
#define TSS_STRIDE         0x00002100UL
#define PML4_ADDR          0x00004000UL
#define PDPT_ADDR          0x00005000UL
#define PD_ADDR            0x00006000UL
#define IMAGE_ADDR         0x00010000UL /* guest image (header first) */
#define IMAGE_MAX          0x00070000UL
#define VCPU_CTL_ADDR      0x00100000UL /* one control block per vCPU */
#define VCPU_CTL_STRIDE    0x00004000UL /* 16 KiB: parameters, counters, histogram */
#define GLOBAL_CTL_ADDR    0x00180000UL
#define STACKS_ADDR        0x00200000UL /* per vCPU: user stack, kernel stack, IST stack */
#define STACK_STRIDE       0x00020000UL
#define USER_STACK_TOP     0x00010000UL /* offsets inside a vCPU's stack region */
#define KERNEL_STACK_TOP   0x00018000UL
#define IST_TOP            0x0001F000UL /* the 8 bytes at IST_TOP count this vCPU's interrupts */
#define QUEUES_ADDR        0x00400000UL /* one 64 KiB virtqueue area per queue */
#define QUEUE_STRIDE       0x00010000UL
#define BUFFERS_ADDR       0x00600000UL /* one 64 KiB buffer area per queue */
#define BUFFER_STRIDE      0x00010000UL
#define BUFFER_SIZE        64UL
#define MMIO_KICK_ADDR     0x30000000UL /* + 4 * queue, outside RAM */
#define PIO_KICK_PORT      0x6000       /* + queue */
#define PIO_FAULT_PORT     0x00E1       /* CPL0 fault stubs report the vector here */
#define PIO_EXIT_PORT      0x00E2       /* probe: an exit to userspace */
#define MMIO_EXIT_ADDR     0x30001000UL /* probe: an MMIO exit to userspace (no ioeventfd) */
#define MAX_VCPUS          8
#define MAX_QUEUES         8
#define MAX_QSIZE          1024
#define IRQ_VECTOR         0x40
#define HIST_BUCKETS       1024
#define ADV_KINDS          8

/* vcpu_ctl.role */
#define ROLE_SPIN          0 /* heartbeat only (a busy vCPU) */
#define ROLE_STREAM        1 /* open loop at a rate */
#define ROLE_CLOSED        2 /* closed loop with a window */
#define ROLE_BURST         3 /* bursts with idle gaps */
#define ROLE_IRQ_SINK      4 /* notes interrupts; halts when idle if halt_idle */
#define ROLE_ADVERSARY     5 /* writes garbage into its queue */
#define ROLE_KICK_LOOP     6 /* probe: back-to-back kicks */
#define ROLE_EXIT_LOOP     7 /* probe: back-to-back exits to userspace */

/* vcpu_ctl.kick */
#define KICK_PIO           0
#define KICK_MMIO          1
#define KICK_NONE          2

/* vcpu_ctl.consume */
#define CONSUME_POLL       0
#define CONSUME_IRQ        1

#endif
