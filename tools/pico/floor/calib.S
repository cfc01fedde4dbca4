// Loops of known instruction cost for calib.c, each timed from inside by two reads of KbEmu's
// cycle counter (so no compiler-generated code lies between them). Each returns the second read
// minus the first: the first LDR's own cost (the overhead, calib_empty) plus the loop.
    .syntax unified
    .cpu cortex-m0plus
    .thumb

    .equ KBEMU_CYCLES, 0x40070004

    .macro FUNC name
    .section .text.\name, "ax"
    .global \name
    .type \name, %function
    .thumb_func
\name:
    .endm

// uint32_t calib_empty(void): the two reads back to back
FUNC calib_empty
    ldr r2, =KBEMU_CYCLES
    ldr r1, [r2]
    ldr r0, [r2]
    subs r0, r0, r1
    bx lr
    .ltorg

// uint32_t calib_loop(uint32_t n), n >= 1: n rounds of SUBS (1 cycle) and BNE (2 taken, 1 not)
FUNC calib_loop
    ldr r2, =KBEMU_CYCLES
    ldr r1, [r2]
1:  subs r0, #1
    bne 1b
    ldr r0, [r2]
    subs r0, r0, r1
    bx lr
    .ltorg

// uint32_t calib_call(uint32_t n), n >= 1: n calls of a leaf that saves and restores a register
// as compiled functions do (BL, PUSH {r4, lr}, POP {r4, pc}), plus SUBS and BNE
FUNC calib_call
    push {r4, r5, r6, lr}
    movs r4, r0
    ldr r6, =KBEMU_CYCLES
    ldr r5, [r6]
1:  bl calib_leaf
    subs r4, #1
    bne 1b
    ldr r0, [r6]
    subs r0, r0, r5
    pop {r4, r5, r6, pc}
    .ltorg

FUNC calib_leaf
    push {r4, lr}
    pop {r4, pc}

// uint32_t calib_div(uint32_t n), n >= 1: n unsigned divisions through divider.S (the SIO
// divider), each with its two MOVS, BL, SUBS and BNE
FUNC calib_div
    push {r4, r5, r6, lr}
    movs r4, r0
    ldr r6, =KBEMU_CYCLES
    ldr r5, [r6]
1:  movs r0, #200
    movs r1, #7
    bl __aeabi_uidiv
    subs r4, #1
    bne 1b
    ldr r0, [r6]
    subs r0, r0, r5
    pop {r4, r5, r6, pc}
    .ltorg
