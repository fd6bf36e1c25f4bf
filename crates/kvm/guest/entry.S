/* Guest entry and CPL0 handlers. The host enters _start at CPL3 (rdi = vCPU index).
 * CPL0 is emulated on some hosts (~650 ns per instruction), so the handlers are a few
 * instructions each. The image starts with a header the VMM reads to build the IDT. */
#include "layout.h"
    .intel_syntax noprefix
    .section .header, "a"
    .quad 0x4854415054564545       /* magic "EEVTPATH" */
    .quad _start
    .quad irq_handler
    .quad gp_handler
    .quad fault_stubs
    .quad fault_stub_end - fault_stubs  /* 32 stubs of equal size */

    .text
    .globl _start
_start:
    call guest_main
1:  jmp 1b

/* Device interrupt (IST1): count it at the IST top, x2APIC EOI, return. */
    .globl irq_handler
irq_handler:
    push rax
    push rcx
    push rdx
    inc qword ptr [rsp + 64]
    mov ecx, 0x80b
    xor eax, eax
    xor edx, edx
    wrmsr
    pop rdx
    pop rcx
    pop rax
    iretq

/* #GP: the CPL3 loop halts by executing HLT (rdi = &interrupt count, rax = count seen).
 * Skip the HLT; halt at CPL0 unless an interrupt came in since the CPL3 check. */
    .globl gp_handler
gp_handler:
    add rsp, 8
    push rbx
    mov rbx, [rsp + 8]
    cmp byte ptr [rbx], 0xf4
    jne 2f
    inc rbx
    mov [rsp + 8], rbx
    pop rbx
    cmp [rdi], rax
    jne 1f
    sti
    hlt
1:  iretq
2:  pop rbx
    mov al, 13
    out PIO_FAULT_PORT, al
3:  hlt
    jmp 3b

/* Any other exception: report the vector to the VMM (an exit to userspace) and stop. */
    .p2align 3
fault_stubs:
    .set vec, 0
    .rept 32
    mov al, vec
    jmp fault_common
    .p2align 3
    .set vec, vec + 1
    .endr
fault_stub_end:
fault_common:
    out PIO_FAULT_PORT, al
1:  hlt
    jmp 1b
    .section .note.GNU-stack,"",@progbits
