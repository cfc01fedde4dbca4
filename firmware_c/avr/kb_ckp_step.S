/*
 * kb_ckp_step.S - kb_ckp.h's kb_ckp_step, hand-written for AVR cores without a multiplier
 * (the ATtiny2313: 2 KB of flash), for compile-time parameters that keep every quantity in one
 * or two registers (the condition below is kb_ckp.h's KB_CKP_ASM; keep the two in step).
 *
 * The C in kb_ckp.h stays the specification and the build for every other target; this file
 * follows it pass for pass (NEAREST, RING..., LOCATE, EVICTED or LOWER, then the norm and the
 * new slot), so the comments here say only where the two differ. Compiled by avr-gcc 5.4 from
 * the C, the step with its helpers needs ~1600 B of flash and a 39-byte stack frame (its ~30
 * live values spill); here it is ~1000 B, each value has a register for the whole step (below)
 * and the stack holds only the score and the margin (6 B) and 3 return addresses.
 *
 * Called by ckp_stream.c through an asm statement, not the C ABI (it names every register it
 * changes, and main saves nothing for its caller):
 *     in:  Z = the M input codes, r16 = the label y (0, 1) or 2 to score only
 *     out: r24:r23:r22 = the score before learning (24-bit, two's complement),
 *          r25 = 1 on a mistake (the memory changed), else 0
 *     changes r0, r2..r27, r30, r31, T and the model; r1 stays 0, Y is saved.
 *
 * Registers for the whole step:
 *     r2 B (count on entry)   r3 n1, r4 b of the read layout   r5 the captured slot (B: none)
 *     r6 y                    r7:r8:r9 the pass's sum r (24-bit, two's complement)
 *     r10:r11 base (passes 0-1); then r10 y_R, r11 w_R of the captured slot
 *     r12:r13 first, r14:r15 next (passes 0-1); then r12:r13:r14 the writer `at` (pointer,
 *         mask), r15 b_R
 *     r16 pass   r17 slot i   r18 its width b   X, r19 the reader (pointer, mask)
 *     Y the point's centres (scratch, or the captured slot's for EVICTED)
 *     r20..r23 fields, products, quotients   r24:r25 the distance d, then the weight's key
 */
#include <avr/io.h>

#if defined(KB_CKP_CONST) && !defined(__AVR_HAVE_MUL__) && !defined(KB_CKP_NO_ASM)
#define KB_TOP ((2L << KB_CKP_CONST_BITS) - 1L)
#define KB_MAX_SVS (KB_CKP_CONST_L / (KB_CKP_CONST_DIMS + 1))
#if KB_CKP_CONST_BITS <= 7 && KB_CKP_CONST_DIMS <= 63 && \
    KB_CKP_CONST_DIMS * KB_TOP * KB_TOP <= 65535L && KB_MAX_SVS <= 255

#define M KB_CKP_CONST_DIMS
#define P KB_CKP_CONST_BITS
#define C KB_CKP_CONST_C
#define END (kb_ckp_mem + (KB_CKP_CONST_L + 7) / 8)

#define NEAREST 0
#define RING 1
#define LOCATE 2
#define EVICTED 3
#define LOWER 4

    .section .text.kb_ckp_step_avr, "ax", @progbits
    .global kb_ckp_step_avr
kb_ckp_step_avr:
    push r28
    push r29
    mov r6, r16
    ldi r28, lo8(kb_ckp_scratch) /* the centres 2u + 1 */
    ldi r29, hi8(kb_ckp_scratch)
    ldi r20, M
1:  ld r0, Z+
    lsl r0
    inc r0
    st Y+, r0
    dec r20
    brne 1b
    rcall model
    ldd r2, Z + 2
    ldd r3, Z + 8
    ldd r4, Z + 7
    mov r5, r2
    clr r10
    clr r11
    ldi r24, 0xFF
    mov r12, r24
    mov r13, r24
    clr r16

.Lpass:
    ldi r26, lo8(kb_ckp_mem)
    ldi r27, hi8(kb_ckp_mem)
    ldi r19, 1
    cpi r16, LOWER
    brne 1f
    movw r12, r26
    mov r14, r19
1:  clr r7
    clr r8
    clr r9
    clr r17
    ldi r28, lo8(kb_ckp_scratch)
    ldi r29, hi8(kb_ckp_scratch)
    cpi r16, EVICTED
    brne .Lslot
    adiw r28, M

.Lslot:
    cp r17, r2
    brlo 1f
    rjmp .Lpass_end
1:  mov r18, r4 /* b = i < n1 ? b0 + 1 : b0 */
    cp r17, r3
    brsh 2f
    inc r18
2:  cp r17, r5
    brne 3f
    movw r12, r26
    mov r14, r19
    mov r15, r18
3:  ldi r20, 1
    rcall get
    bst r22, 0 /* T: the slot's label */
    clr r24
    clr r25
    ldi r21, M
.Lcode:
    mov r20, r18
    rcall get
    lsl r22 /* the centre (2v + 1) << (P - b) */
    inc r22
    ldi r20, P
    sub r20, r18
    breq 5f
4:  lsl r22
    dec r20
    brne 4b
5:  cp r17, r5
    breq 6f
    cpi r16, LOWER
    brne 7f
6:  std Y+M, r22
7:  ld r0, Y+
    sub r0, r22
    brcc 8f
    neg r0
8:  mov r22, r0
    rcall mul8
    add r24, r22
    adc r25, r23
    dec r21
    brne .Lcode
    sbiw r28, M

    cpi r16, LOWER
    brne .Lring
    rcall swap /* rewrite the slot at the precision of B + 1 slots */
    rcall model
    ldd r25, Z + 7
    ldd r0, Z + 8
    cp r17, r0
    brsh 1f
    inc r25
1:  movw r30, r28
    adiw r30, M
    rcall put_slot
    rcall swap
    rjmp .Lnext

.Lring:
    cpi r16, LOCATE
    brsh .Lweigh /* from LOCATE on, base is 0: every slot counts */
    cp r24, r10
    cpc r25, r11
    brlo .Lnext
    cp r24, r12
    cpc r25, r13
    brsh 1f
    movw r12, r24
1:  cp r10, r24
    cpc r11, r25
    brsh 2f
    cp r14, r10
    cpc r15, r11
    breq 3f
    cp r24, r14
    cpc r25, r15
    brsh 2f
3:  movw r14, r24
2:  tst r16
    breq .Lnext
    sub r24, r10
    sbc r25, r11
.Lweigh:
    rcall logw
    cp r17, r5
    brne 1f
    clr r10
    bld r10, 0
    mov r11, r22
1:  brts 2f
    sub r7, r22
    sbc r8, r1
    sbc r9, r1
    rjmp .Lnext
2:  add r7, r22
    adc r8, r1
    adc r9, r1
.Lnext:
    inc r17
    rjmp .Lslot

.Lpass_end:
    cpi r16, RING
    brsh 1f
    ldi r16, RING
    rjmp .Lrebase
1:  breq 2f
    rjmp .Lafter_score
2:  mov r0, r7 /* r0 = s < 0, or y when s = 0: a mistake (y ? s <= 0 : s >= 0) iff r0 = y */
    or r0, r8
    or r0, r9
    breq 3f
    clr r0
    sbrc r9, 7
    inc r0
    rjmp .Lscored
3:  cp r14, r10
    cpc r15, r11
    bst r6, 0 /* r0 = y & 1: 2 (score only) never matches */
    bld r0, 0
    breq .Lscored
    movw r12, r14 /* every ring so far cancels: the next one */
.Lrebase:
    movw r10, r12
    movw r14, r10
    rjmp .Lpass

.Lscored:
    clr r25
    cp r0, r6
    breq 1f
    rjmp .Lreturn
1:  push r7 /* s, for the return */
    push r8
    push r9
    tst r2
    brne 4f
    rjmp .Llocate
4:  ldi r20, KB_MAX_SVS /* kb_ckp_adds */
    cp r2, r20
    brsh .Lreplace
    mov r20, r2
    subi r20, KB_CKP_CONST_QSTART
    clr r22 /* q = 0 below qstart (clr keeps the carry) */
    clr r23
    brlo 2f
    cpi r20, KB_CKP_CONST_NQ
    brsh .Lreplace
    ldi r30, lo8(kb_ckp_q)
    ldi r31, hi8(kb_ckp_q)
    add r30, r20
    adc r31, r1
    lpm r0, Z
    mov r22, r2
    rcall mul8
2:  movw r18, r22
    rcall model
    ldd r22, Z + 3
    ldd r23, Z + 4
    ldd r24, Z + 5
    ldd r25, Z + 6
    subi r22, 1
    sbci r23, 0
    sbci r24, 0
    sbci r25, 0
    brmi .Lreplace
#if KB_CKP_CONST_QSHIFT > 0
    ldi r20, KB_CKP_CONST_QSHIFT
3:  lsr r25
    ror r24
    ror r23
    ror r22
    dec r20
    brne 3b
#endif
    cp r22, r18
    cpc r23, r19
    cpc r24, r1
    cpc r25, r1
    brsh .Llocate
.Lreplace: /* capture = kb_rng_below(B): the high byte of next() * B */
    rcall model
    ld r24, Z
    ldd r25, Z + 1
    mov r23, r25 /* x ^= x << 7 */
    lsr r23
    mov r23, r24
    ror r23
    clr r22
    ror r22
    eor r24, r22
    eor r25, r23
    mov r23, r25 /* x ^= x >> 9 */
    lsr r23
    eor r24, r23
    eor r25, r24 /* x ^= x << 8 */
    st Z, r24
    std Z + 1, r25
    mov r0, r2
    mov r22, r24
    rcall mul8
    mov r18, r23
    mov r22, r25
    rcall mul8
    add r22, r18
    adc r23, r1
    mov r5, r23
.Llocate:
    ldi r16, LOCATE
    rjmp .Lpass

.Lafter_score:
    cpi r16, LOCATE
    brne .Lfinish
    push r7 /* the margin m(x) */
    push r8
    push r9
    cp r5, r2
    breq .Ladd
    mov r5, r2
    ldi r16, EVICTED
    rjmp .Lpass
.Ladd: /* count = B + 1 and kb_ckp_schedule */
    mov r21, r2
    inc r21
    rcall model
    std Z + 2, r21
    ldi r22, lo8(KB_CKP_CONST_L)
    ldi r23, hi8(KB_CKP_CONST_L)
    sub r22, r21
    sbc r23, r1
    ldi r20, M
    mov r0, r20
    rcall div16
    clr r24
1:  cpi r24, P
    brsh 2f
    cp r22, r21
    cpc r23, r1
    brlo 2f
    sub r22, r21
    sbc r23, r1
    inc r24
    rjmp 1b
2:  std Z + 7, r24
    cpi r24, P
    brlo 3f
    clr r22
3:  std Z + 8, r22
    ldi r16, LOWER
    rjmp .Lpass

.Lfinish: /* the norm: adding 2 y'm + C, replacing 2 (y'm - y_R (m(c_R) + y' w_R) + C) */
    pop r24
    pop r23
    pop r22
    rcall sext
    sbrs r6, 0
    rcall neg32
    cpi r16, LOWER
    breq 1f
    movw r18, r22
    movw r20, r24
    mov r22, r7
    mov r23, r8
    mov r24, r9
    rcall sext
    sbrs r6, 0 /* r - w = -(-r + w) */
    rcall neg32
    add r22, r11
    adc r23, r1
    adc r24, r1
    adc r25, r1
    sbrs r6, 0
    rcall neg32
    sbrc r10, 0
    rcall neg32
    add r22, r18
    adc r23, r19
    adc r24, r20
    adc r25, r21
    rcall add_c
1:  lsl r22
    rol r23
    rol r24
    rol r25
    cpi r16, LOWER
    brne 4f
    rcall add_c
4:  rcall model
    ldd r18, Z + 3
    ldd r19, Z + 4
    ldd r20, Z + 5
    ldd r21, Z + 6
    tst r2
    brne 2f
    clr r18 /* the first support vector: norm = 0 */
    clr r19
    movw r20, r18
2:  add r22, r18
    adc r23, r19
    adc r24, r20
    adc r25, r21
    mov r20, r25 /* kb_ckp_sat: bits 31 and 30 differ */
    subi r20, 0xC0
    sbrs r20, 7
    rjmp 3f
    mov r22, r25 /* 0x3FFFFFFF, or 0xC0000000 below */
    lsl r22
    sbc r22, r22
    com r22
    mov r23, r22
    mov r24, r22
    mov r25, r22
    ldi r20, 0xC0
    eor r25, r20
3:  std Z + 3, r22
    std Z + 4, r23
    std Z + 5, r24
    std Z + 6, r25
    cpi r16, LOWER
    brne 5f
    movw r26, r12 /* every bit past the new layout cleared */
    mov r20, r14
6:  ldi r21, hi8(END)
    cpi r26, lo8(END)
    cpc r27, r21
    brsh 7f
    ld r0, X
    dec r20
    and r0, r20
    st X+, r0
    ldi r20, 1
    rjmp 6b
7:  ldd r15, Z + 7
5:  movw r26, r12 /* the new slot: label y, the centres of x at b_R bits */
    mov r19, r14
    bst r6, 0
    mov r25, r15
    ldi r30, lo8(kb_ckp_scratch)
    ldi r31, hi8(kb_ckp_scratch)
    rcall put_slot
    pop r9
    pop r8
    pop r7
    ldi r25, 1
.Lreturn:
    mov r22, r7
    mov r23, r8
    mov r24, r9
    pop r29
    pop r28
    ret

/* r22 = the r20 bits at the reader, LSB first, which moves past them; changes r0, r20, r23 */
get:
    clr r22
    ldi r23, 1
1:  subi r20, 1
    brcs 9f
    ld r0, X
    and r0, r19
    breq 2f
    or r22, r23
2:  lsl r23
    rcall adv
    rjmp 1b
adv:
    lsl r19
    brne 9f
    inc r19
    adiw r26, 1
9:  ret

/* write the r20 low bits of r21 at the reader's cursor; changes r0, r20, r21 */
put:
1:  subi r20, 1
    brcs 9b
    ld r0, X
    or r0, r19
    sbrs r21, 0
    eor r0, r19
    st X, r0
    lsr r21
    rcall adv
    rjmp 1b

/* kb_ckp_put_slot at the cursor X, r19: label T, the M centres at Z as r25-bit codes;
 * changes r0, r20, r21, r24, Z */
put_slot:
    ldi r20, 1
    bld r21, 0 /* put reads bit 0 only */
    rcall put
    ldi r24, M
1:  ld r21, Z+
    ldi r20, P + 1
    sub r20, r25
2:  lsr r21
    dec r20
    brne 2b
    mov r20, r25
    rcall put
    dec r24
    brne 1b
    ret

/* exchange the reader (X, r19) and the writer (r12:r13, r14); changes r24, r25 */
swap:
    movw r24, r26
    movw r26, r12
    movw r12, r24
    mov r24, r19
    mov r19, r14
    mov r14, r24
    ret

/* r23:r22 = r22 * r0, shift and add; changes r20 */
mul8:
    clr r23
    ldi r20, 8
    lsr r22
1:  brcc 2f
    add r23, r0
2:  ror r23
    ror r22
    dec r20
    brne 1b
    ret

/* r23:r22 = r23:r22 / r0 (r0 >= 1), remainder in r18; changes r20 */
div16:
    clr r18
    ldi r20, 16
1:  lsl r22
    rol r23
    rol r18
    brcs 2f
    cp r18, r0
    brlo 3f
2:  sub r18, r0
    inc r22
3:  dec r20
    brne 1b
    ret

/* r22 = w(r25:r24), the log method with rounded division (contract 3.2); changes r0, r18,
 * r20, r21, r23, r24, r25, Z */
#ifdef KB_CKP_LOGW_ENTRY /* firmware_c/sim/test_ckp_logw.c checks logw for every k */
    .global kb_ckp_logw
kb_ckp_logw:
#endif
logw:
    ldi r22, C
    sbiw r24, 0
    breq 9f
    ldi r21, 16 /* j: the highest set bit, shifted out of the top */
1:  dec r21
    lsl r24
    rol r25
    brcc 1b
    clr r22
    cpi r21, KB_CKP_CONST_NTAB
    brsh 9f
    rcall tab
    mov r22, r0
3:  subi r21, 1 /* the lower bits, highest first, out of the top */
    brcs 9f
    lsl r24
    rol r25
    brcc 3b
    rcall tab
    rcall mul8
    subi r22, lo8(-(C / 2))
    sbci r23, hi8(-(C / 2))
    ldi r20, C
    mov r0, r20
    rcall div16
    tst r22
    brne 3b
9:  ret

/* Z = &kb_ckp_model: kb_ckp_t is rng 0-1, count 2, norm 3-6, b 7, n1 8 (kb_ckp.h checks) */
model:
    ldi r30, lo8(kb_ckp_model)
    ldi r31, hi8(kb_ckp_model)
    ret

/* r0 = P[r21] */
tab:
    ldi r30, lo8(kb_ckp_table)
    ldi r31, hi8(kb_ckp_table)
    add r30, r21
    adc r31, r1
    lpm r0, Z
    ret

/* r25 = the sign of r24: r25:r22 the 32-bit value of r24:r22 */
sext:
    clr r25
    sbrc r24, 7
    com r25
    ret

neg32:
    com r25
    com r24
    com r23
    neg r22
    sbci r23, 0xFF
    sbci r24, 0xFF
    sbci r25, 0xFF
    ret

add_c:
    subi r22, lo8(-C)
    sbci r23, hi8(-C)
    sbci r24, hlo8(-C)
    sbci r25, hhi8(-C)
    ret

#endif
#endif
