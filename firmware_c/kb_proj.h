/*
 * kb_proj.h - the streamed sparse projection (docs/contract.md, 7.3), shared by the
 * host-trained predictors (Bonsai's Z, ProtoNN's W).
 *
 *     kb_proj_update(&p, j, c)   feature j (strictly increasing within one input) has code c
 *     kb_proj_finish(&p, P)      P[r] = sat(rshift_round(acc_r, shift_r) + bias_r); resets
 *
 * The stored matrix has one row per input feature (dims x d, kb_smat.h encodings). A cursor
 * walks it forward only: one input costs one pass over the stored weights, and the RAM is the
 * d int32 accumulators and the cursor, whatever the input dimension.
 *
 * KB_PROJ_DMAX (default 64) sizes the accumulators; a firmware sets it to its model's d.
 */
#ifndef KB_PROJ_H
#define KB_PROJ_H

#include <stdint.h>

#include "kb_fixed.h"
#include "kb_smat.h"

#ifndef KB_PROJ_DMAX
#define KB_PROJ_DMAX 64
#endif

/* KB_PROJ_AVR: the Uno's build (KB_SMAT_AVR, kb_smat.h). The updates then run in assembly
 * (kb_proj_avr_block10, kb_proj_avr_block7 for a DENSE matrix, kb_proj_avr_scan through the row
 * table KB_PROJ_ROWS for a SPARSE one) and acc[r] holds the sum in a split form that costs
 * one 16-bit add a product: its low half L (bytes 0-1) and high half H (bytes 2-3) mean
 * H * 65536 + (int16_t)L. A product w * c (|w| <= 127, c <= 255) fits int16; it is added to L
 * alone, and when that add overflows int16 (rarely) H moves by +-1, which keeps the value
 * exact. kb_proj_finish turns it back into the plain sum. Every other build keeps the plain
 * int32 sum. */
#define KB_PROJ_AVR KB_SMAT_AVR

typedef struct {
    const uint8_t *z;     /* the stored matrix */
    const uint8_t *shift; /* d shifts */
    const uint8_t *bias;  /* d int16, little-endian */
    uint16_t zlen;
    uint16_t dims;
    uint8_t d, wb, enc, top; /* top: the largest code, 2^B - 1 */
    /* the input in progress */
    uint16_t next;        /* the next update's index must be >= next */
    uint16_t row, col, i; /* cursor: position (row, col) of the pending weight at z[i];
                           * row 0xFFFF: no weight left */
    int32_t acc[KB_PROJ_DMAX];
} kb_proj_t;

/* Move the cursor from position (row, col) to the next stored weight (row = dims at the end). */
static inline void kb_proj_seek(kb_proj_t *p, uint16_t col)
{
    uint16_t i = p->i, row = p->row;
    for (;;) {
        uint8_t g;
        if (i >= p->zlen) {
            p->row = 0xFFFFu; /* no weight left: above every index */
            p->col = col;
            p->i = i;
            return;
        }
        g = KB_FLASH_BYTE(p->z + i);
        i++;
        if (g != 0) {
            col = (uint16_t)(col + g - 1u);
            break;
        }
        col = (uint16_t)(col + 255u);
    }
    while (col >= p->d) {
        col = (uint16_t)(col - p->d);
        row++;
    }
    p->row = row;
    p->col = col;
    p->i = i;
}

#if KB_PROJ_AVR && defined(KB_PROJ_ROWS)
/* KB_PROJ_ROWS: the SPARSE matrix of the one model this translation unit runs, as the Uno reads
 * it (the firmware header makes it from the same model file: kilobit.models.predictor.
 * proj_rows): per row a flash pointer to its record (a count, then per weight 4 * its column and
 * the weight; a row without weights points to a shared count of 0), so the update reads a row
 * only when its code is not 0 and keeps no cursor between frames. */
#define KB_PROJ_USE_ROWS 1
#else
#define KB_PROJ_USE_ROWS 0
#endif

/* The next input starts at feature 0 (acc[] as it is). */
static inline void kb_proj_rewind(kb_proj_t *p)
{
    p->next = 0;
    p->row = 0;
    p->col = 0;
    p->i = 0;
#if !KB_PROJ_USE_ROWS /* the row table needs no cursor */
    if (p->enc == KB_SMAT_SPARSE)
        kb_proj_seek(p, 0);
#endif
}

/* Forget the input in progress. */
static inline void kb_proj_reset(kb_proj_t *p)
{
    uint8_t r;
    for (r = 0; r < p->d; r++)
        p->acc[r] = 0;
    kb_proj_rewind(p);
}

/* Parse the section at s[0 .. len); 1 on success (then *used = its size), 0 when it is cut
 * short or outside the contract (with check != 0: the matrix is checked in full too). */
static inline int kb_proj_init(kb_proj_t *p, const uint8_t *s, uint32_t len, uint16_t dims,
                               uint8_t d, uint8_t in_bits, uint8_t wbits, int check,
                               uint32_t *used)
{
    uint32_t n, need;
    uint8_t r;
    if (len < 3 || d == 0 || d > KB_PROJ_DMAX)
        return 0;
    p->enc = KB_FLASH_BYTE(s);
    n = (uint32_t)KB_FLASH_BYTE(s + 1) | (uint32_t)KB_FLASH_BYTE(s + 2) << 8;
    need = 3u + n + 3u * d;
    if (need > len)
        return 0;
    p->z = s + 3;
    p->zlen = (uint16_t)n;
    p->shift = s + 3 + n;
    p->bias = s + 3 + n + d;
    p->dims = dims;
    p->d = d;
    p->wb = (uint8_t)(wbits >> 3);
    p->top = (uint8_t)((1u << in_bits) - 1u);
    for (r = 0; r < d; r++) {
        const int16_t b = kb_flash_i16(p->bias + 2u * r);
        if (KB_FLASH_BYTE(p->shift + r) > KB_SHIFT_MAX || b < -KB_ACT_MAX)
            return 0;
        p->acc[r] = 0;
    }
    if (check && !kb_smat_check(p->z, n, dims, d, p->wb, p->enc, p->acc, 1,
                                (int32_t)(KB_SMALL / p->top)))
        return 0;
    *used = need;
    kb_proj_reset(p);
    return 1;
}

#if KB_PROJ_AVR
/* acc += prod in the split form (KB_PROJ_AVR): the C of a sparse matrix without the firmware's
 * row table (KB_PROJ_ROWS: past kilobit.models.predictor.TABLE_ROOM the header leaves it out). */
static inline void kb_proj_split_add(int32_t *acc, int16_t prod)
{
    int32_t v = *acc;
    int16_t lo;
    if ((uint16_t)v & 0x8000u)
        v -= 0x10000L;
    v += prod;
    lo = (int16_t)(uint16_t)v;
    *acc = (int32_t)((uint32_t)(v - lo) | (uint16_t)lo);
}
#define KB_PROJ_MAC(acc, z, wb, c)                                                            \
    kb_proj_split_add(&(acc), (int16_t)((int16_t)(int8_t)KB_FLASH_BYTE(z) * (int16_t)(uint8_t)(c)))
#else
/* acc += w * c; for int8 weights as an 8x8 -> 16-bit product (|w| <= 127, c <= 255 fit). */
#define KB_PROJ_MAC(acc, z, wb, c)                                                            \
    do {                                                                                      \
        if (KB_WB(wb) == 1)                                                                   \
            (acc) += (int16_t)((int16_t)(int8_t)KB_FLASH_BYTE(z) * (int16_t)(uint8_t)(c));   \
        else                                                                                  \
            (acc) += (int32_t)kb_smat_weight((z), (wb)) * (c);                                \
    } while (0)
#endif

#ifdef __AVR__
#define KB_PROJ_HOT __attribute__((optimize("O2")))
#else
#define KB_PROJ_HOT
#endif

static KB_PROJ_HOT void kb_proj_update_run(kb_proj_t *p, uint16_t start, const uint8_t *c,
                                           uint8_t n);

/* Feature j has code c. 0 on success; -1 (nothing changed) when j is not above the previous
 * index of this input, j >= dims, or c > 2^B - 1. */
static inline int kb_proj_update(kb_proj_t *p, uint16_t j, uint8_t c)
{
#if KB_PROJ_AVR
    /* one feature is a run of one: the assembly keeps acc[] in its split form */
    if (j < p->next || j >= p->dims || c > p->top)
        return -1;
    if (c == 0)
        p->next = (uint16_t)(j + 1u);
    else
        kb_proj_update_run(p, j, &c, 1);
    return 0;
#else
    const uint8_t *z = p->z;
    const uint8_t wb = p->wb, d = p->d;
    if (j < p->next || j >= p->dims || c > p->top)
        return -1;
    p->next = (uint16_t)(j + 1u);
    if (c == 0)
        return 0;
    if (p->enc == KB_SMAT_DENSE) {
        uint8_t r;
        z += (uint32_t)j * d * KB_WB(wb);
        for (r = 0; r < d; r++) {
            KB_PROJ_MAC(p->acc[r], z, wb, c);
            z += KB_WB(wb);
        }
        return 0;
    }
    {
        /* the cursor in registers: pending weight at z[i], position (row, col) */
        uint16_t i = p->i, row = p->row, col = p->col;
        const uint16_t zlen = p->zlen;
        while (row <= j) {
            if (row == j)
                KB_PROJ_MAC(p->acc[col], z + i, wb, c);
            i = (uint16_t)(i + KB_WB(wb));
            col++;
            for (;;) {
                uint8_t g;
                if (i >= zlen) {
                    row = 0xFFFFu; /* no weight left: above every index */
                    goto done;
                }
                g = KB_FLASH_BYTE(z + i);
                i++;
                if (g != 0) {
                    col = (uint16_t)(col + g - 1u);
                    break;
                }
                col = (uint16_t)(col + 255u);
            }
            while (col >= d) {
                col = (uint16_t)(col - d);
                row++;
            }
        }
    done:
        p->i = i;
        p->row = row;
        p->col = col;
    }
    return 0;
#endif /* KB_PROJ_AVR */
}

#if KB_PROJ_AVR
/* kb_proj_avr_block7(acc, rowp, codes, n, d, s0): acc[i] += w[i] * code for the w = 7 - s0
 * columns (1..7) of a DENSE matrix whose sums start at acc (split form, KB_PROJ_AVR), over n
 * rows: row k's w weights at rowp + k * d (flash), its code codes[k]. The low halves L of the
 * sums live in registers (r2..r15, the last w of the 7 slots) for the whole run, so a weight
 * costs 8 cycles (LPM, MULSU, a 16-bit add, the overflow test) where a sum in RAM costs 21; a
 * row whose code is 0 costs 11, and a narrower block enters its slots part way (a computed
 * jump: push the address, ret; 8 cycles a row). An overflow of L calls a stub that moves H in
 * RAM. Defined here in assembly (avr-gcc's calling convention: the arguments in r24:25,
 * r22:23, r20:21, r18, r16, r14; r2-r17 and r28-r29 saved) as a weak symbol in its own
 * section, so that every translation unit may include this header and the linker keeps one
 * copy, or none when nothing calls it. */
#ifdef __cplusplus
extern "C" {
#endif
void kb_proj_avr_block7(int32_t *acc, const uint8_t *rowp, const uint8_t *codes, uint8_t n,
                        uint8_t d, uint8_t s0);
#ifdef __cplusplus
}
#endif
__asm__(
    ".pushsection .text.kb_proj_avr_block7,\"ax\",@progbits\n\t"
    ".weak kb_proj_avr_block7\n\t"
    ".type kb_proj_avr_block7, @function\n"
    "kb_proj_avr_block7:\n\t"
    KB_AVR_SAVE_ALL
    "movw r26, r20\n\t"
    "mov r21, r16\n\t"
    "movw r16, r24\n\t"
    "mov r20, r18\n\t"
    "mov r24, r14\n\t"
    "clt\n\t"
    "tst r24\n\t"
    "breq 1f\n\t"
    "set\n\t"
    "1:\n\t"
    "mov r25, r24\n\t"
    "lsl r25\n\t"
    "lsl r25\n\t"
    "movw r30, r16\n\t"
    "sub r16, r25\n\t"
    "sbc r17, r1\n\t"
    "ldi r28, lo8(gs(.Lkb_b7_l0))\n\t"
    "ldi r29, hi8(gs(.Lkb_b7_l0))\n\t"
    "mov r25, r24\n\t"
    "lsl r25\n\t"
    "add r25, r24\n\t"
    "add r28, r25\n\t"
    "adc r29, r1\n\t"
    "push r28\n\t"
    "push r29\n\t"
    "ret\n\t"
    ".Lkb_b7_l0:\n\t"
    "ld r2, Z+\n\t"
    "ld r3, Z+\n\t"
    "adiw r30, 2\n\t"
    "ld r4, Z+\n\t"
    "ld r5, Z+\n\t"
    "adiw r30, 2\n\t"
    "ld r6, Z+\n\t"
    "ld r7, Z+\n\t"
    "adiw r30, 2\n\t"
    "ld r8, Z+\n\t"
    "ld r9, Z+\n\t"
    "adiw r30, 2\n\t"
    "ld r10, Z+\n\t"
    "ld r11, Z+\n\t"
    "adiw r30, 2\n\t"
    "ld r12, Z+\n\t"
    "ld r13, Z+\n\t"
    "adiw r30, 2\n\t"
    "ld r14, Z+\n\t"
    "ld r15, Z+\n\t"
    "adiw r30, 2\n\t"
    "ldi r28, lo8(gs(.Lkb_b7_s0))\n\t"
    "ldi r29, hi8(gs(.Lkb_b7_s0))\n\t"
    "mov r25, r24\n\t"
    "lsl r25\n\t"
    "lsl r25\n\t"
    "add r25, r24\n\t"
    "add r28, r25\n\t"
    "adc r29, r1\n\t"
    "push r24\n\t"
    ".Lkb_b7_row:\n\t"
    "ld r19, X+\n\t"
    "tst r19\n\t"
    "breq .Lkb_b7_skip\n\t"
    "movw r30, r22\n\t"
    "brtc .Lkb_b7_s0\n\t"
    "push r28\n\t"
    "push r29\n\t"
    "ret\n\t"
    ".Lkb_b7_s0:\n\t"
    "lpm r18, Z+\n\t"
    "mulsu r18, r19\n\t"
    "add r2, r0\n\t"
    "adc r3, r1\n\t"
    "brvs .Lkb_b7_o0\n\t"
    ".Lkb_b7_b0:\n\t"
    "lpm r18, Z+\n\t"
    "mulsu r18, r19\n\t"
    "add r4, r0\n\t"
    "adc r5, r1\n\t"
    "brvs .Lkb_b7_o1\n\t"
    ".Lkb_b7_b1:\n\t"
    "lpm r18, Z+\n\t"
    "mulsu r18, r19\n\t"
    "add r6, r0\n\t"
    "adc r7, r1\n\t"
    "brvs .Lkb_b7_o2\n\t"
    ".Lkb_b7_b2:\n\t"
    "lpm r18, Z+\n\t"
    "mulsu r18, r19\n\t"
    "add r8, r0\n\t"
    "adc r9, r1\n\t"
    "brvs .Lkb_b7_o3\n\t"
    ".Lkb_b7_b3:\n\t"
    "lpm r18, Z+\n\t"
    "mulsu r18, r19\n\t"
    "add r10, r0\n\t"
    "adc r11, r1\n\t"
    "brvs .Lkb_b7_o4\n\t"
    ".Lkb_b7_b4:\n\t"
    "lpm r18, Z+\n\t"
    "mulsu r18, r19\n\t"
    "add r12, r0\n\t"
    "adc r13, r1\n\t"
    "brvs .Lkb_b7_o5\n\t"
    ".Lkb_b7_b5:\n\t"
    "lpm r18, Z+\n\t"
    "mulsu r18, r19\n\t"
    "add r14, r0\n\t"
    "adc r15, r1\n\t"
    "brvs .Lkb_b7_o6\n\t"
    ".Lkb_b7_b6:\n\t"
    ".Lkb_b7_skip:\n\t"
    "clr r1\n\t"
    "add r22, r21\n\t"
    "adc r23, r1\n\t"
    "dec r20\n\t"
    "brne .Lkb_b7_row\n\t"
    "rjmp .Lkb_b7_end\n\t"
    ".Lkb_b7_o0:\n\t"
    "ldi r24, 2\n\t"
    "rcall .Lkb_b7_ov\n\t"
    "rjmp .Lkb_b7_b0\n\t"
    ".Lkb_b7_o1:\n\t"
    "ldi r24, 6\n\t"
    "rcall .Lkb_b7_ov\n\t"
    "rjmp .Lkb_b7_b1\n\t"
    ".Lkb_b7_o2:\n\t"
    "ldi r24, 10\n\t"
    "rcall .Lkb_b7_ov\n\t"
    "rjmp .Lkb_b7_b2\n\t"
    ".Lkb_b7_o3:\n\t"
    "ldi r24, 14\n\t"
    "rcall .Lkb_b7_ov\n\t"
    "rjmp .Lkb_b7_b3\n\t"
    ".Lkb_b7_o4:\n\t"
    "ldi r24, 18\n\t"
    "rcall .Lkb_b7_ov\n\t"
    "rjmp .Lkb_b7_b4\n\t"
    ".Lkb_b7_o5:\n\t"
    "ldi r24, 22\n\t"
    "rcall .Lkb_b7_ov\n\t"
    "rjmp .Lkb_b7_b5\n\t"
    ".Lkb_b7_o6:\n\t"
    "ldi r24, 26\n\t"
    "rcall .Lkb_b7_ov\n\t"
    "rjmp .Lkb_b7_b6\n\t"
    ".Lkb_b7_ov:\n\t"
    "push r30\n\t"
    "push r31\n\t"
    "ldi r25, 1\n\t"
    "brmi 1f\n\t"
    "ldi r25, 0xFF\n\t"
    "1:\n\t"
    "clr r1\n\t"
    "movw r30, r16\n\t"
    "add r30, r24\n\t"
    "adc r31, r1\n\t"
    "ld r24, Z\n\t"
    "ldd r0, Z+1\n\t"
    "add r24, r25\n\t"
    "adc r0, r1\n\t"
    "sbrc r25, 7\n\t"
    "dec r0\n\t"
    "st Z, r24\n\t"
    "std Z+1, r0\n\t"
    "pop r31\n\t"
    "pop r30\n\t"
    "ret\n\t"
    ".Lkb_b7_end:\n\t"
    "pop r24\n\t"
    "mov r25, r24\n\t"
    "lsl r25\n\t"
    "lsl r25\n\t"
    "movw r30, r16\n\t"
    "add r30, r25\n\t"
    "adc r31, r1\n\t"
    "ldi r28, lo8(gs(.Lkb_b7_t0))\n\t"
    "ldi r29, hi8(gs(.Lkb_b7_t0))\n\t"
    "mov r25, r24\n\t"
    "lsl r25\n\t"
    "add r25, r24\n\t"
    "add r28, r25\n\t"
    "adc r29, r1\n\t"
    "push r28\n\t"
    "push r29\n\t"
    "ret\n\t"
    ".Lkb_b7_t0:\n\t"
    "st Z+, r2\n\t"
    "st Z+, r3\n\t"
    "adiw r30, 2\n\t"
    "st Z+, r4\n\t"
    "st Z+, r5\n\t"
    "adiw r30, 2\n\t"
    "st Z+, r6\n\t"
    "st Z+, r7\n\t"
    "adiw r30, 2\n\t"
    "st Z+, r8\n\t"
    "st Z+, r9\n\t"
    "adiw r30, 2\n\t"
    "st Z+, r10\n\t"
    "st Z+, r11\n\t"
    "adiw r30, 2\n\t"
    "st Z+, r12\n\t"
    "st Z+, r13\n\t"
    "adiw r30, 2\n\t"
    "st Z+, r14\n\t"
    "st Z+, r15\n\t"
    "adiw r30, 2\n\t"
    KB_AVR_RESTORE_ALL
    ".size kb_proj_avr_block7, .-kb_proj_avr_block7\n\t"
    ".popsection");

/* kb_proj_avr_block10(acc, rowp, codes, n): the same for a DENSE matrix of exactly d = 10
 * columns (the trainers' default projection): all ten low halves in registers (r2..r15,
 * r18..r23), the row pointer advancing by itself (each row's ten weights read in order), so a
 * weight costs 8 cycles, a row whose code is 0 costs 10 and nothing is entered part way. */
#ifdef __cplusplus
extern "C" {
#endif
void kb_proj_avr_block10(int32_t *acc, const uint8_t *rowp, const uint8_t *codes, uint8_t n);
#ifdef __cplusplus
}
#endif
__asm__(
    ".pushsection .text.kb_proj_avr_block10,\"ax\",@progbits\n\t"
    ".weak kb_proj_avr_block10\n\t"
    ".type kb_proj_avr_block10, @function\n"
    "kb_proj_avr_block10:\n\t"
    KB_AVR_SAVE_ALL
    "movw r28, r24\n\t"
    "movw r26, r20\n\t"
    "movw r30, r22\n\t"
    "mov r24, r18\n\t"
    "ldd r2, Y+0\n\t"
    "ldd r3, Y+1\n\t"
    "ldd r4, Y+4\n\t"
    "ldd r5, Y+5\n\t"
    "ldd r6, Y+8\n\t"
    "ldd r7, Y+9\n\t"
    "ldd r8, Y+12\n\t"
    "ldd r9, Y+13\n\t"
    "ldd r10, Y+16\n\t"
    "ldd r11, Y+17\n\t"
    "ldd r12, Y+20\n\t"
    "ldd r13, Y+21\n\t"
    "ldd r14, Y+24\n\t"
    "ldd r15, Y+25\n\t"
    "ldd r18, Y+28\n\t"
    "ldd r19, Y+29\n\t"
    "ldd r20, Y+32\n\t"
    "ldd r21, Y+33\n\t"
    "ldd r22, Y+36\n\t"
    "ldd r23, Y+37\n\t"
    ".Lkb_b10_row:\n\t"
    "ld r17, X+\n\t"
    "tst r17\n\t"
    "breq .Lkb_b10_zero\n\t"
    "lpm r16, Z+\n\t"
    "mulsu r16, r17\n\t"
    "add r2, r0\n\t"
    "adc r3, r1\n\t"
    "brvs .Lkb_b10_t0\n\t"
    ".Lkb_b10_b0:\n\t"
    "lpm r16, Z+\n\t"
    "mulsu r16, r17\n\t"
    "add r4, r0\n\t"
    "adc r5, r1\n\t"
    "brvs .Lkb_b10_t1\n\t"
    ".Lkb_b10_b1:\n\t"
    "lpm r16, Z+\n\t"
    "mulsu r16, r17\n\t"
    "add r6, r0\n\t"
    "adc r7, r1\n\t"
    "brvs .Lkb_b10_t2\n\t"
    ".Lkb_b10_b2:\n\t"
    "lpm r16, Z+\n\t"
    "mulsu r16, r17\n\t"
    "add r8, r0\n\t"
    "adc r9, r1\n\t"
    "brvs .Lkb_b10_t3\n\t"
    ".Lkb_b10_b3:\n\t"
    "lpm r16, Z+\n\t"
    "mulsu r16, r17\n\t"
    "add r10, r0\n\t"
    "adc r11, r1\n\t"
    "brvs .Lkb_b10_t4\n\t"
    ".Lkb_b10_b4:\n\t"
    "lpm r16, Z+\n\t"
    "mulsu r16, r17\n\t"
    "add r12, r0\n\t"
    "adc r13, r1\n\t"
    "brvs .Lkb_b10_t5\n\t"
    ".Lkb_b10_b5:\n\t"
    "lpm r16, Z+\n\t"
    "mulsu r16, r17\n\t"
    "add r14, r0\n\t"
    "adc r15, r1\n\t"
    "brvs .Lkb_b10_t6\n\t"
    ".Lkb_b10_b6:\n\t"
    "lpm r16, Z+\n\t"
    "mulsu r16, r17\n\t"
    "add r18, r0\n\t"
    "adc r19, r1\n\t"
    "brvs .Lkb_b10_t7\n\t"
    ".Lkb_b10_b7:\n\t"
    "lpm r16, Z+\n\t"
    "mulsu r16, r17\n\t"
    "add r20, r0\n\t"
    "adc r21, r1\n\t"
    "brvs .Lkb_b10_t8\n\t"
    ".Lkb_b10_b8:\n\t"
    "lpm r16, Z+\n\t"
    "mulsu r16, r17\n\t"
    "add r22, r0\n\t"
    "adc r23, r1\n\t"
    "brvs .Lkb_b10_t9\n\t"
    ".Lkb_b10_b9:\n\t"
    "dec r24\n\t"
    "brne .Lkb_b10_row\n\t"
    "rjmp .Lkb_b10_end\n\t"
    ".Lkb_b10_zero:\n\t"
    "adiw r30, 10\n\t"
    "dec r24\n\t"
    "brne .Lkb_b10_row\n\t"
    "rjmp .Lkb_b10_end\n\t"
    ".Lkb_b10_t0:\n\t"
    "rjmp .Lkb_b10_o0\n\t"
    ".Lkb_b10_t1:\n\t"
    "rjmp .Lkb_b10_o1\n\t"
    ".Lkb_b10_t2:\n\t"
    "rjmp .Lkb_b10_o2\n\t"
    ".Lkb_b10_t3:\n\t"
    "rjmp .Lkb_b10_o3\n\t"
    ".Lkb_b10_t4:\n\t"
    "rjmp .Lkb_b10_o4\n\t"
    ".Lkb_b10_t5:\n\t"
    "rjmp .Lkb_b10_o5\n\t"
    ".Lkb_b10_t6:\n\t"
    "rjmp .Lkb_b10_o6\n\t"
    ".Lkb_b10_t7:\n\t"
    "rjmp .Lkb_b10_o7\n\t"
    ".Lkb_b10_t8:\n\t"
    "rjmp .Lkb_b10_o8\n\t"
    ".Lkb_b10_t9:\n\t"
    "rjmp .Lkb_b10_o9\n\t"
    ".Lkb_b10_o0:\n\t"
    "push r24\n\t"
    "ldi r24, 2\n\t"
    "rcall .Lkb_b10_ov\n\t"
    "pop r24\n\t"
    "rjmp .Lkb_b10_b0\n\t"
    ".Lkb_b10_o1:\n\t"
    "push r24\n\t"
    "ldi r24, 6\n\t"
    "rcall .Lkb_b10_ov\n\t"
    "pop r24\n\t"
    "rjmp .Lkb_b10_b1\n\t"
    ".Lkb_b10_o2:\n\t"
    "push r24\n\t"
    "ldi r24, 10\n\t"
    "rcall .Lkb_b10_ov\n\t"
    "pop r24\n\t"
    "rjmp .Lkb_b10_b2\n\t"
    ".Lkb_b10_o3:\n\t"
    "push r24\n\t"
    "ldi r24, 14\n\t"
    "rcall .Lkb_b10_ov\n\t"
    "pop r24\n\t"
    "rjmp .Lkb_b10_b3\n\t"
    ".Lkb_b10_o4:\n\t"
    "push r24\n\t"
    "ldi r24, 18\n\t"
    "rcall .Lkb_b10_ov\n\t"
    "pop r24\n\t"
    "rjmp .Lkb_b10_b4\n\t"
    ".Lkb_b10_o5:\n\t"
    "push r24\n\t"
    "ldi r24, 22\n\t"
    "rcall .Lkb_b10_ov\n\t"
    "pop r24\n\t"
    "rjmp .Lkb_b10_b5\n\t"
    ".Lkb_b10_o6:\n\t"
    "push r24\n\t"
    "ldi r24, 26\n\t"
    "rcall .Lkb_b10_ov\n\t"
    "pop r24\n\t"
    "rjmp .Lkb_b10_b6\n\t"
    ".Lkb_b10_o7:\n\t"
    "push r24\n\t"
    "ldi r24, 30\n\t"
    "rcall .Lkb_b10_ov\n\t"
    "pop r24\n\t"
    "rjmp .Lkb_b10_b7\n\t"
    ".Lkb_b10_o8:\n\t"
    "push r24\n\t"
    "ldi r24, 34\n\t"
    "rcall .Lkb_b10_ov\n\t"
    "pop r24\n\t"
    "rjmp .Lkb_b10_b8\n\t"
    ".Lkb_b10_o9:\n\t"
    "push r24\n\t"
    "ldi r24, 38\n\t"
    "rcall .Lkb_b10_ov\n\t"
    "pop r24\n\t"
    "rjmp .Lkb_b10_b9\n\t"
    ".Lkb_b10_ov:\n\t"
    "push r25\n\t"
    "push r26\n\t"
    "push r27\n\t"
    "ldi r25, 1\n\t"
    "brmi 1f\n\t"
    "ldi r25, 0xFF\n\t"
    "1:\n\t"
    "movw r26, r28\n\t"
    "add r26, r24\n\t"
    "brcc 2f\n\t"
    "inc r27\n\t"
    "2:\n\t"
    "ld r0, X\n\t"
    "add r0, r25\n\t"
    "st X+, r0\n\t"
    "ld r0, X\n\t"
    "brcc 3f\n\t"
    "inc r0\n\t"
    "3:\n\t"
    "sbrc r25, 7\n\t"
    "dec r0\n\t"
    "st X, r0\n\t"
    "pop r27\n\t"
    "pop r26\n\t"
    "pop r25\n\t"
    "ret\n\t"
    ".Lkb_b10_end:\n\t"
    "std Y+0, r2\n\t"
    "std Y+1, r3\n\t"
    "std Y+4, r4\n\t"
    "std Y+5, r5\n\t"
    "std Y+8, r6\n\t"
    "std Y+9, r7\n\t"
    "std Y+12, r8\n\t"
    "std Y+13, r9\n\t"
    "std Y+16, r10\n\t"
    "std Y+17, r11\n\t"
    "std Y+20, r12\n\t"
    "std Y+21, r13\n\t"
    "std Y+24, r14\n\t"
    "std Y+25, r15\n\t"
    "std Y+28, r18\n\t"
    "std Y+29, r19\n\t"
    "std Y+32, r20\n\t"
    "std Y+33, r21\n\t"
    "std Y+36, r22\n\t"
    "std Y+37, r23\n\t"
    KB_AVR_RESTORE_ALL
    ".size kb_proj_avr_block10, .-kb_proj_avr_block10\n\t"
    ".popsection");

#if !KB_PROJ_USE_ROWS
/* acc[r] += w * c for the DENSE rows start .. start+n-1 (codes c[0..n-1], checked): the
 * columns seven at a time in registers (kb_proj_avr_block7), the last block narrower. */
static __attribute__((noinline)) void kb_proj_avr_dense(kb_proj_t *p, uint16_t start,
                                                        const uint8_t *c, uint8_t n)
{
    const uint8_t d = p->d;
    const uint8_t *z = p->z + (uint16_t)(start * d); /* dims * d < 65536: the length is u16 */
    uint8_t c0;
    if (d == 10u) {
        kb_proj_avr_block10(p->acc, z, c, n);
        return;
    }
    for (c0 = 0; c0 < d; c0 = (uint8_t)(c0 + 7u)) {
        const uint8_t w = (uint8_t)(d - c0) < 7u ? (uint8_t)(d - c0) : 7u;
        kb_proj_avr_block7(p->acc + c0, z + c0, c, n, d, (uint8_t)(7u - w));
    }
}
#endif

#if KB_PROJ_USE_ROWS
/* kb_proj_avr_scan(acc, base, c, n): acc[column] += w * code in the split form (KB_PROJ_AVR) for
 * every stored weight of the rows whose codes c[0..n-1] (n >= 1) are not 0, the row of c[i]'s
 * pointer at flash address base + 2 * (c + i + 1) (modulo 2^16: kb_proj_update_run makes base).
 * A code of 0 costs 4 cycles (LD and a CPSE over the call, four to a loop turn, the first turn
 * entered part-way for n % 4); any other code about 24 and 26 a weight of its row. Assembly (the
 * codes in Y; r1 stays 0 between products) as a weak symbol in its own section, as
 * kb_proj_avr_block7. */
#ifdef __cplusplus
extern "C" {
#endif
void kb_proj_avr_scan(int32_t *acc, uint16_t base, const uint8_t *c, uint8_t n);
#ifdef __cplusplus
}
#endif
__asm__(
    ".pushsection .text.kb_proj_avr_scan,\"ax\",@progbits\n\t"
    ".weak kb_proj_avr_scan\n\t"
    ".type kb_proj_avr_scan, @function\n"
    "kb_proj_avr_scan:\n\t"
    "push r28\n\t"
    "push r29\n\t"
    "movw r28, r20\n\t" /* Y: the codes */
    "mov r30, r18\n\t"  /* turns: n / 4, one more entered at step 4 - n % 4 */
    "andi r30, 3\n\t"
    "lsr r18\n\t"
    "lsr r18\n\t"
    "tst r30\n\t"
    "breq 1f\n\t"
    "inc r18\n\t"
    "neg r30\n\t"
    "subi r30, -4\n"
    "1:\n\t"
    "mov r31, r30\n\t" /* 3 words a step */
    "lsl r30\n\t"
    "add r30, r31\n\t"
    "ldi r31, 0\n\t"
    "subi r30, lo8(-(pm(.Lkb_s_turn)))\n\t"
    "sbci r31, hi8(-(pm(.Lkb_s_turn)))\n\t"
    "ijmp\n"
    ".Lkb_s_turn:\n\t"
    ".rept 4\n\t" /* a step: 3 words (the entry's arithmetic) */
    "ld r20, Y+\n\t"
    "cpse r20, r1\n\t"
    "rcall .Lkb_s_row\n\t"
    ".endr\n\t"
    "dec r18\n\t"
    "brne .Lkb_s_turn\n\t"
    "pop r29\n\t"
    "pop r28\n\t"
    "ret\n"
    /* code r20 of the row whose pointer is at base + 2 Y; r1 is 0 here and on return */
    ".Lkb_s_row:\n\t"
    "movw r30, r28\n\t"
    "add r30, r30\n\t"
    "adc r31, r31\n\t"
    "add r30, r22\n\t"
    "adc r31, r23\n\t"
    "lpm r21, Z+\n\t"
    "lpm r31, Z\n\t"
    "mov r30, r21\n\t"
    "lpm r21, Z+\n\t" /* the row's weights */
    "tst r21\n\t"
    "breq 3f\n"
    "2:\n\t"
    "lpm r0, Z+\n\t"  /* 4 * column */
    "lpm r19, Z+\n\t" /* the weight */
    "movw r26, r24\n\t"
    "add r26, r0\n\t"
    "adc r27, r1\n\t"
    "mulsu r19, r20\n\t"
    "ld r19, X+\n\t" /* L += the product, in r1:r0 */
    "add r0, r19\n\t"
    "ld r19, X\n\t"
    "adc r1, r19\n\t"
    "st X, r1\n\t"
    "st -X, r0\n\t"
    "brvs 4f\n\t"
    "clr r1\n"
    "5:\n\t"
    "dec r21\n\t"
    "brne 2b\n"
    "3:\n\t"
    "ret\n"
    /* L overflowed int16: a positive overflow (N = 1) moves H up one, else down */
    "4:\n\t"
    "brmi 6f\n\t"
    "clr r1\n\t"
    "adiw r26, 2\n\t"
    "ld r19, X\n\t"
    "subi r19, 1\n\t"
    "st X+, r19\n\t"
    "ld r19, X\n\t"
    "sbci r19, 0\n\t"
    "st X, r19\n\t"
    "rjmp 5b\n"
    "6:\n\t"
    "clr r1\n\t"
    "adiw r26, 2\n\t"
    "ld r19, X\n\t"
    "subi r19, 0xFF\n\t"
    "st X+, r19\n\t"
    "ld r19, X\n\t"
    "sbci r19, 0xFF\n\t"
    "st X, r19\n\t"
    "rjmp 5b\n\t"
    ".size kb_proj_avr_scan, .-kb_proj_avr_scan\n\t"
    ".popsection");
#endif /* KB_PROJ_USE_ROWS */

#endif /* KB_PROJ_AVR */

/* kb_proj_update_run in C: one walk of the cursor over the run's stored weights, with the
 * cursor in registers and zero codes skipped; int8 weights multiply 8x8 -> 16 bits. */
#if !KB_PROJ_USE_ROWS /* the Uno's firmware reads a SPARSE matrix through its row table */
static
#if KB_PROJ_AVR
    __attribute__((noinline)) /* the Uno's path does not pay for its registers */
#else
    inline
#endif
    void kb_proj_run_c(kb_proj_t *p, uint16_t start, const uint8_t *c, uint8_t n)
{
    const uint8_t *z = p->z;
    const uint8_t d = p->d;
    const uint16_t end = (uint16_t)(start + n);
    p->next = end;
    if (p->enc == KB_SMAT_DENSE) {
        uint8_t k;
        z += (uint32_t)start * d * KB_WB(p->wb);
        for (k = 0; k < n; k++) {
            const uint8_t ck = c[k];
            if (ck != 0) {
                const uint8_t *zr = z;
                uint8_t r;
                for (r = 0; r < d; r++) {
                    KB_PROJ_MAC(p->acc[r], zr, p->wb, ck);
                    zr += KB_WB(p->wb);
                }
            }
            z += (uint16_t)d * KB_WB(p->wb);
        }
        return;
    }
    {
        /* The cursor as a pointer zp at the pending weight, its column col (< d) and row; ck is
         * the code of that row (0 for a row before start: those features were never sent). Most
         * steps stay in the row or move one row on; the division loop runs only then. */
        const uint8_t *zp = z + p->i;
        const uint8_t *const zend = z + p->zlen;
        uint16_t row = p->row;
        uint8_t col = (uint8_t)p->col;
        uint8_t ck;
        int32_t *const acc = p->acc;
        if (row >= end)
            return;
        ck = row >= start ? c[row - start] : 0u;
        for (;;) {
            uint16_t cc;
            uint8_t g;
            if (ck != 0)
                KB_PROJ_MAC(acc[col], zp, p->wb, ck);
            zp += KB_WB(p->wb);
            cc = col;
            for (;;) {
                if (zp >= zend) {
                    row = 0xFFFFu; /* no weight left: above every index */
                    goto done;
                }
                g = KB_FLASH_BYTE(zp);
                zp++;
                if (g != 0)
                    break;
                cc = (uint16_t)(cc + 255u);
            }
            cc = (uint16_t)(cc + g); /* (col + 1) + (g - 1) */
            if (cc >= d) {
                do {
                    cc = (uint16_t)(cc - d);
                    row++;
                } while (cc >= d);
                if (row >= end) {
                    col = (uint8_t)cc;
                    break;
                }
                ck = row >= start ? c[row - start] : 0u;
            }
            col = (uint8_t)cc;
        }
    done:
        p->i = (uint16_t)(zp - z);
        p->row = row;
        p->col = col;
    }
}
#endif /* !KB_PROJ_USE_ROWS */

/* Features start .. start+n-1 have the codes c[0..n-1]: the same as n calls of kb_proj_update,
 * for a caller that has checked the run already (start >= next, start + n <= dims, every code
 * <= 2^B - 1, n >= 1): one walk over the run's stored weights (on the Uno in assembly). */
static KB_PROJ_HOT void kb_proj_update_run(kb_proj_t *p, uint16_t start, const uint8_t *c,
                                           uint8_t n)
{
#if KB_PROJ_AVR
#if !KB_PROJ_USE_ROWS /* the header makes a row table for a SPARSE matrix only */
    if (p->enc == KB_SMAT_DENSE) {
        p->next = (uint16_t)(start + n);
        kb_proj_avr_dense(p, start, c, n);
        return;
    }
#endif
#if KB_PROJ_USE_ROWS
    p->next = (uint16_t)(start + n);
    /* the pointer of row start + i at KB_PROJ_ROWS + 2 (start + i) = base + 2 (c + i + 1) */
    kb_proj_avr_scan(p->acc,
                     (uint16_t)((uint16_t)(uintptr_t)KB_PROJ_ROWS + 2u * start -
                                2u * (uint16_t)(uintptr_t)c - 2u),
                     c, n);
#else
    kb_proj_run_c(p, start, c, n);
#endif
#else
    kb_proj_run_c(p, start, c, n);
#endif
}

#if KB_PROJ_AVR
/* P[r] = sat(rshift_round(acc[r], shift[r]) + bias[r]) for r < d (d >= 1) in one assembly
 * loop, about 65 cycles a dimension, acc[r] left 0 for the next input: the split sum made plain
 * (bit 15 of L set: H one less), the rounding shift of kb_rshift_round32, the bias, and the
 * saturation to +-32767 (a value that is not an int16, or is -32768). */
static __attribute__((noinline)) void kb_proj_avr_finish(int32_t *acc,
                                                         const uint8_t *sh,
                                                         const uint8_t *bias, int16_t *P,
                                                         uint8_t d)
{
    uint32_t a;
    uint8_t s, b0, b1, t;
    __asm__ volatile(
        "1:\n\t"
        "movw r26, %A[acc]\n\t" /* the sum, and 0 left for the next input */
        "ld %A[a], X\n\t"
        "st X+, __zero_reg__\n\t"
        "ld %B[a], X\n\t"
        "st X+, __zero_reg__\n\t"
        "ld %C[a], X\n\t"
        "st X+, __zero_reg__\n\t"
        "ld %D[a], X\n\t"
        "st X+, __zero_reg__\n\t"
        "movw %A[acc], r26\n\t"
        "sbrs %B[a], 7\n\t"
        "rjmp 2f\n\t"
        "subi %C[a], 1\n\t"
        "sbci %D[a], 0\n"
        "2:\n\t"
        "movw r30, %A[sh]\n\t"
        "lpm %[s], Z+\n\t"
        "movw %A[sh], r30\n\t"
        "tst %[s]\n\t"
        "breq 5f\n\t"
        "dec %[s]\n"
        "3:\n\t" /* >> (s - 1): whole bytes, then bits */
        "cpi %[s], 8\n\t"
        "brlo 4f\n\t"
        "mov %A[a], %B[a]\n\t"
        "mov %B[a], %C[a]\n\t"
        "mov %C[a], %D[a]\n\t"
        "lsl %D[a]\n\t"
        "sbc %D[a], %D[a]\n\t"
        "subi %[s], 8\n\t"
        "rjmp 3b\n"
        "4:\n\t"
        "tst %[s]\n\t"
        "breq 41f\n"
        "42:\n\t"
        "asr %D[a]\n\t"
        "ror %C[a]\n\t"
        "ror %B[a]\n\t"
        "ror %A[a]\n\t"
        "dec %[s]\n\t"
        "brne 42b\n"
        "41:\n\t" /* one more, and the bit shifted out back in: round half up */
        "asr %D[a]\n\t"
        "ror %C[a]\n\t"
        "ror %B[a]\n\t"
        "ror %A[a]\n\t"
        "adc %A[a], __zero_reg__\n\t"
        "adc %B[a], __zero_reg__\n\t"
        "adc %C[a], __zero_reg__\n\t"
        "adc %D[a], __zero_reg__\n"
        "5:\n\t" /* + bias */
        "movw r30, %A[bi]\n\t"
        "lpm %[b0], Z+\n\t"
        "lpm %[b1], Z+\n\t"
        "movw %A[bi], r30\n\t"
        "clr %[t]\n\t"
        "sbrc %[b1], 7\n\t"
        "com %[t]\n\t"
        "add %A[a], %[b0]\n\t"
        "adc %B[a], %[b1]\n\t"
        "adc %C[a], %[t]\n\t"
        "adc %D[a], %[t]\n\t"
        /* an int16 when bytes 2-3 extend the sign of byte 1 */
        "mov %[t], %B[a]\n\t"
        "lsl %[t]\n\t"
        "sbc %[t], %[t]\n\t"
        "cp %C[a], %[t]\n\t"
        "cpc %D[a], %[t]\n\t"
        "brne 6f\n\t"
        "ldi %[t], 0x80\n\t" /* -32768 -> -32767 */
        "cp %A[a], __zero_reg__\n\t"
        "cpc %B[a], %[t]\n\t"
        "brne 7f\n\t"
        "ldi %A[a], 1\n\t"
        "rjmp 7f\n"
        "6:\n\t"
        "ldi %A[a], 0xFF\n\t"
        "ldi %B[a], 0x7F\n\t"
        "sbrs %D[a], 7\n\t"
        "rjmp 7f\n\t"
        "ldi %A[a], 0x01\n\t"
        "ldi %B[a], 0x80\n"
        "7:\n\t"
        "movw r26, %A[P]\n\t"
        "st X+, %A[a]\n\t"
        "st X+, %B[a]\n\t"
        "movw %A[P], r26\n\t"
        "dec %[d]\n\t"
        "breq 8f\n\t"
        "rjmp 1b\n"
        "8:"
        : [a] "=&d"(a), [s] "=&d"(s), [b0] "=&r"(b0), [b1] "=&r"(b1), [t] "=&d"(t),
          [acc] "+r"(acc), [P] "+r"(P), [sh] "+r"(sh), [bi] "+r"(bias), [d] "+r"(d)
        :
        : "r26", "r27", "r30", "r31", "memory");
}
#endif

/* P[r] of the input streamed so far; then ready for the next input. */
static inline void kb_proj_finish(kb_proj_t *p, int16_t *P)
{
#if KB_PROJ_AVR
    kb_proj_avr_finish(p->acc, p->shift, p->bias, P, p->d);
    kb_proj_rewind(p);
#else
    uint8_t r;
    for (r = 0; r < p->d; r++)
        P[r] = (int16_t)kb_sat_act(kb_rshift_round32(p->acc[r], KB_FLASH_BYTE(p->shift + r)) +
                                   kb_flash_i16(p->bias + 2u * r));
    kb_proj_reset(p);
#endif
}

#endif /* KB_PROJ_H */
