// 32-bit division for the C code (the VM's `//` and `%` on small ints, mpz, ...) through the
// RP2040's SIO hardware divider, as pico-sdk routes it: the ARM EABI helpers
// __aeabi_[u]idiv (quotient in r0) and __aeabi_[u]idivmod (quotient r0, remainder r1).
// The divider truncates toward zero, as C does; -2**31 / -1 gives 0x80000000, remainder 0.
// Results are valid 8 cycles after the divisor is written (4 taken branches of 2 cycles each
// on a Cortex-M0+; the signed entry spends 2 more).
// Interrupt handlers of this port never divide, so the divider's state is not saved around them
// (pico-sdk saves it in handlers that may). rp2040js computes the result at once and charges
// 8 cycles per operand write, so 16 per division here; silicon takes 8.
    .syntax unified
    .cpu cortex-m0plus
    .thumb

    .equ SIO_BASE, 0xd0000000
    .equ DIV_UDIVIDEND, 0x60
    .equ DIV_UDIVISOR,  0x64
    .equ DIV_SDIVIDEND, 0x68
    .equ DIV_SDIVISOR,  0x6c
    .equ DIV_QUOTIENT,  0x70
    .equ DIV_REMAINDER, 0x74

    .section .text.kb_divider, "ax"
    .global __aeabi_idiv, __aeabi_idivmod, __aeabi_uidiv, __aeabi_uidivmod
    .type __aeabi_idiv, %function
    .type __aeabi_idivmod, %function
    .type __aeabi_uidiv, %function
    .type __aeabi_uidivmod, %function

    .thumb_func
__aeabi_idiv:
    .thumb_func
__aeabi_idivmod:
    ldr r3, =SIO_BASE
    str r0, [r3, #DIV_SDIVIDEND]
    str r1, [r3, #DIV_SDIVISOR]
    b kb_div_wait

    .thumb_func
__aeabi_uidiv:
    .thumb_func
__aeabi_uidivmod:
    ldr r3, =SIO_BASE
    str r0, [r3, #DIV_UDIVIDEND]
    str r1, [r3, #DIV_UDIVISOR]
kb_div_wait:
    b 1f
1:  b 1f
1:  b 1f
1:  b 1f
1:  ldr r1, [r3, #DIV_REMAINDER]
    ldr r0, [r3, #DIV_QUOTIENT]     // read last: reading the quotient clears CSR.DIRTY
    bx lr
    .ltorg
