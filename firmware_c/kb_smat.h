/*
 * kb_smat.h - stored integer weight matrices, dense or sparse (docs/contract.md, 7.2).
 * Shared by the host-trained predictors (Bonsai, ProtoNN).
 *
 *   DENSE  (0)  rows*cols weights, row-major, wb bytes each (1: int8, 2: int16 little-endian)
 *   SPARSE (1)  the non-zero weights in row-major order, each a gap byte then the weight:
 *               gap d in 1..255: the weight is d-1 positions after the cursor, which then moves
 *               just past it; d == 0: the cursor moves 255 positions on, no weight follows.
 *
 * The bytes are read through KB_FLASH_BYTE (flash on AVR). A build may fix the weight width
 * at compile time with KB_SMAT_WBYTES (1 or 2): the hot loops then lose a branch.
 */
#ifndef KB_SMAT_H
#define KB_SMAT_H

#include <stdint.h>

#include "kb_fixed.h"

#define KB_SMAT_DENSE 0
#define KB_SMAT_SPARSE 1

#ifdef KB_SMAT_WBYTES
#define KB_WB(wb) KB_SMAT_WBYTES
#else
#define KB_WB(wb) (wb)
#endif

/* KB_SMAT_AVR: an AVR with a hardware multiplier (the Uno: MUL in 2 cycles, LPM in 3) running a
 * model whose weights are int8 (KB_SMAT_WBYTES 1) in flash (KB_FLASH_PROGMEM), as the firmware
 * header sets it up. The predictors' hot loops then run in inline assembly (here, kb_proj.h,
 * kb_protonn.h) with the same integer results; every other build runs the C. */
#if defined(__AVR__) && defined(__AVR_HAVE_MUL__) && defined(KB_FLASH_PROGMEM) && \
    defined(KB_SMAT_WBYTES) && KB_SMAT_WBYTES == 1
#define KB_SMAT_AVR 1
#else
#define KB_SMAT_AVR 0
#endif

#if KB_SMAT_AVR
/* The prologue and epilogue of an assembly routine (kb_proj.h, kb_bonsai.h, kb_protonn.h) that
 * uses every register avr-gcc's ABI has the callee save (r2-r17, r28, r29); the epilogue also
 * clears r1, the compiler's zero, which MUL overwrites, and returns. */
#define KB_AVR_SAVE_ALL                                                                       \
    "push r2\n\t" "push r3\n\t" "push r4\n\t" "push r5\n\t" "push r6\n\t" "push r7\n\t"      \
    "push r8\n\t" "push r9\n\t" "push r10\n\t" "push r11\n\t" "push r12\n\t" "push r13\n\t"  \
    "push r14\n\t" "push r15\n\t" "push r16\n\t" "push r17\n\t" "push r28\n\t" "push r29\n\t"
#define KB_AVR_RESTORE_ALL                                                                    \
    "clr r1\n\t" "pop r29\n\t" "pop r28\n\t" "pop r17\n\t" "pop r16\n\t" "pop r15\n\t"     \
    "pop r14\n\t" "pop r13\n\t" "pop r12\n\t" "pop r11\n\t" "pop r10\n\t" "pop r9\n\t"     \
    "pop r8\n\t" "pop r7\n\t" "pop r6\n\t" "pop r5\n\t" "pop r4\n\t" "pop r3\n\t"          \
    "pop r2\n\t" "ret\n\t"
/* A compile-time check (C99 has no static assertion) that a struct an assembly routine reads by
 * fixed offsets is laid out as the routine expects: an array of -1 chars otherwise. */
#define KB_AVR_LAYOUT(name, cond) typedef char name[(cond) ? 1 : -1]
#endif

/* The signed weight of wb bytes at p. */
static inline int16_t kb_smat_weight(const uint8_t *p, uint8_t wb)
{
    (void)wb;
    if (KB_WB(wb) == 1)
        return (int16_t)(int8_t)KB_FLASH_BYTE(p);
    return (int16_t)(uint16_t)((uint16_t)KB_FLASH_BYTE(p) |
                               (uint16_t)((uint16_t)KB_FLASH_BYTE(p + 1) << 8));
}

/* A little-endian int16 at p (not a weight: whatever KB_SMAT_WBYTES says). */
static inline int16_t kb_flash_i16(const uint8_t *p)
{
    return (int16_t)(uint16_t)((uint16_t)KB_FLASH_BYTE(p) |
                               (uint16_t)((uint16_t)KB_FLASH_BYTE(p + 1) << 8));
}

/* 1 when p[0 .. len) is exactly one valid matrix (no weight beyond rows*cols, no stored zero
 * in SPARSE, dense length exact) whose sums of |w| -- per column (by_col) or per row, added
 * into sums[] -- stay <= limit; else 0. */
static inline int kb_smat_check(const uint8_t *p, uint32_t len, uint32_t rows, uint16_t cols,
                                uint8_t wb, uint8_t enc, int32_t *sums, int by_col,
                                int32_t limit)
{
    uint32_t i = 0, row = 0;
    uint32_t col = 0;
    if (enc == KB_SMAT_DENSE) {
        if (len != rows * cols * wb)
            return 0;
    } else if (enc != KB_SMAT_SPARSE) {
        return 0;
    }
    while (i < len) {
        int32_t w;
        uint32_t k;
        if (enc == KB_SMAT_SPARSE) {
            const uint8_t g = KB_FLASH_BYTE(p + i);
            i++;
            col += g == 0 ? 255u : (uint32_t)g - 1u;
            while (col >= cols) {
                col -= cols;
                row++;
            }
            if (g == 0)
                continue;
            if (row >= rows || i + wb > len)
                return 0;
        }
        w = kb_smat_weight(p + i, wb);
        i += wb;
        if ((enc == KB_SMAT_SPARSE && w == 0) || w == (wb == 1 ? -128 : -32768))
            return 0; /* a stored zero, or outside the symmetric range -qmax .. qmax */
        k = by_col ? col : row;
        sums[k] += w < 0 ? -w : w;
        if (sums[k] > limit)
            return 0;
        if (++col == cols) {
            col = 0;
            row++;
        }
    }
    return 1;
}

#if KB_SMAT_AVR
/* One term of kb_smat_avr_dots: s += w * x with the top bits of both products flipped (no sign
 * extension; the offsets come off through the starting sum). */
#define KB_SMAT_AVR_DOT_TERM                                                                  \
    "lpm %[wt], Z+\n\t"                                                                       \
    "ld %[lo], X+\n\t"                                                                        \
    "ld %[hi], X+\n\t"                                                                        \
    "mulsu %[wt], %[lo]\n\t"                                                                  \
    "eor r1, %[m80]\n\t"                                                                      \
    "add %A[s], r0\n\t"                                                                       \
    "adc %B[s], r1\n\t"                                                                       \
    "adc %C[s], %[z0]\n\t"                                                                    \
    "adc %D[s], %[z0]\n\t"                                                                    \
    "muls %[wt], %[hi]\n\t"                                                                   \
    "eor r1, %[m80]\n\t"                                                                      \
    "add %B[s], r0\n\t"                                                                       \
    "adc %C[s], r1\n\t"                                                                       \
    "adc %D[s], %[z0]\n\t"

/* dots[r] = sum_c w[r][c] * vec[c] for the DENSE int8 rows r < nrows (cols weights each, in
 * flash from p) and the int16 values vec (RAM): one assembly loop over every row, two terms a
 * turn, 22.5 cycles a term. A term is two 8x8 products, w * low byte (MULSU) and w * high byte
 * (MULS, weight 256); each is made non-negative by adding 2^15 (flipping its top bit), so that
 * it adds into the 32-bit sum without a sign extension: the sum starts at
 * -(cols * (2^15 + 2^23)), the offsets its terms add (it wraps modulo 2^32 on the way; the
 * result is exact). */
static __attribute__((noinline)) void kb_smat_avr_dots(const uint8_t *p, uint8_t cols,
                                                       const int16_t *vec, int32_t *dots,
                                                       uint8_t nrows)
{
    const uint16_t k = (uint16_t)((uint16_t)cols << 7);
    const uint32_t s0 = 0u - (((uint32_t)k << 16) + ((uint32_t)k << 8));
    /* two terms a loop turn: (cols + 1) / 2 turns, an odd cols entering at the second */
    const uint8_t turns = (uint8_t)((cols + 1u) >> 1), odd = (uint8_t)(cols & 1u);
    uint32_t s;
    const int16_t *x;
    uint8_t cnt, wt, lo, hi;
    if (nrows == 0)
        return;
    __asm__ volatile(
        "1:\n\t"
        "movw %A[s], %A[s0]\n\t"
        "movw %C[s], %C[s0]\n\t"
        "movw %A[x], %A[vec]\n\t"
        "mov %[cnt], %[turns]\n\t"
        "tst %[odd]\n\t"
        "brne 3f\n"
        "2:\n\t" KB_SMAT_AVR_DOT_TERM
        "3:\n\t" KB_SMAT_AVR_DOT_TERM        "dec %[cnt]\n\t"
        "brne 2b\n\t"
        "movw %A[x], %A[dp]\n\t"
        "st X+, %A[s]\n\t"
        "st X+, %B[s]\n\t"
        "st X+, %C[s]\n\t"
        "st X+, %D[s]\n\t"
        "movw %A[dp], %A[x]\n\t"
        "dec %[nr]\n\t"
        "breq 4f\n\t"
        "rjmp 1b\n"
        "4:\n\t"
        "clr __zero_reg__"
        : [s] "=&r"(s), [p] "+z"(p), [x] "=&x"(x), [dp] "+r"(dots), [nr] "+r"(nrows),
          [cnt] "=&r"(cnt), [wt] "=&a"(wt), [lo] "=&a"(lo), [hi] "=&a"(hi)
        : [s0] "r"(s0), [vec] "r"(vec), [turns] "r"(turns), [odd] "r"(odd),
          [m80] "r"((uint8_t)0x80), [z0] "r"((uint8_t)0)
        : "r0", "memory");
}

/* kb_smat_avr_sdots(p, end, vec, dots, cols): dots[row] += w * vec[col] for every weight of
 * the SPARSE int8 matrix at p .. end (flash; rows of cols), dots zeroed by the caller: about 60
 * cycles a stored weight (the gap, the row step, an 8x16 product added into RAM). Assembly as
 * a weak symbol in its own section (see kb_proj_avr_block7, kb_proj.h). */
#ifdef __cplusplus
extern "C" {
#endif
void kb_smat_avr_sdots(const uint8_t *p, const uint8_t *end, const int16_t *vec, int32_t *dots,
                       uint8_t cols);
#ifdef __cplusplus
}
#endif
__asm__(
    ".pushsection .text.kb_smat_avr_sdots,\"ax\",@progbits\n\t"
    ".weak kb_smat_avr_sdots\n\t"
    ".type kb_smat_avr_sdots, @function\n"
    "kb_smat_avr_sdots:\n\t"
    "push r7\n\t"
    "push r8\n\t"
    "push r9\n\t"
    "push r10\n\t"
    "push r11\n\t"
    "push r12\n\t"
    "push r13\n\t"
    "push r16\n\t"
    "push r17\n\t"
    "push r28\n\t"
    "push r29\n\t"
    "movw r30, r24\n\t" /* Z: the matrix */
    "movw r24, r18\n\t" /* the row's sum */
    "mov r7, r16\n\t"   /* cols */
    "clr r18\n\t"       /* the column, 16 bits */
    "clr r19\n\t"
    "clr r8\n"          /* zero */
    ".Lkb_sd_loop:\n\t"
    "cp r30, r22\n\t"
    "cpc r31, r23\n\t"
    "brsh .Lkb_sd_done\n\t"
    "lpm r9, Z+\n\t"
    "tst r9\n\t"
    "breq .Lkb_sd_esc\n\t"
    "dec r9\n\t"
    "add r18, r9\n\t"
    "adc r19, r8\n"
    ".Lkb_sd_wrap:\n\t"
    "tst r19\n\t"
    "brne 1f\n\t"
    "cp r18, r7\n\t"
    "brlo .Lkb_sd_w\n"
    "1:\n\t"
    "sub r18, r7\n\t"
    "sbc r19, r8\n\t"
    "adiw r24, 4\n\t"
    "rjmp .Lkb_sd_wrap\n"
    ".Lkb_sd_w:\n\t"
    "lpm r17, Z+\n\t" /* the weight */
    "movw r26, r20\n\t" /* vec[col] */
    "add r26, r18\n\t"
    "adc r27, r8\n\t"
    "add r26, r18\n\t"
    "adc r27, r8\n\t"
    "ld r16, X+\n\t"
    "ld r28, X\n\t"
    "mulsu r17, r16\n\t" /* w * vec, 24 bits signed, in r10..r13 */
    "movw r10, r0\n\t"
    "clr r12\n\t"
    "sbrc r11, 7\n\t"
    "com r12\n\t"
    "mov r13, r12\n\t"
    "muls r17, r28\n\t"
    "clr r9\n\t"
    "sbrc r1, 7\n\t"
    "com r9\n\t"
    "add r11, r0\n\t"
    "adc r12, r1\n\t"
    "adc r13, r9\n\t"
    "movw r26, r24\n\t" /* dots[row] += it */
    "ld r9, X\n\t"
    "add r9, r10\n\t"
    "st X+, r9\n\t"
    "ld r9, X\n\t"
    "adc r9, r11\n\t"
    "st X+, r9\n\t"
    "ld r9, X\n\t"
    "adc r9, r12\n\t"
    "st X+, r9\n\t"
    "ld r9, X\n\t"
    "adc r9, r13\n\t"
    "st X, r9\n\t"
    "inc r18\n\t"
    "rjmp .Lkb_sd_loop\n"
    ".Lkb_sd_esc:\n\t" /* gap 0: the column moves 255 on, no weight */
    "subi r18, 1\n\t"
    "sbci r19, 0xFF\n"
    "2:\n\t"
    "tst r19\n\t"
    "brne 3f\n\t"
    "cp r18, r7\n\t"
    "brlo .Lkb_sd_loop\n"
    "3:\n\t"
    "sub r18, r7\n\t"
    "sbc r19, r8\n\t"
    "adiw r24, 4\n\t"
    "rjmp 2b\n"
    ".Lkb_sd_done:\n\t"
    "clr r1\n\t"
    "pop r29\n\t"
    "pop r28\n\t"
    "pop r17\n\t"
    "pop r16\n\t"
    "pop r13\n\t"
    "pop r12\n\t"
    "pop r11\n\t"
    "pop r10\n\t"
    "pop r9\n\t"
    "pop r8\n\t"
    "pop r7\n\t"
    "ret\n\t"
    ".size kb_smat_avr_sdots, .-kb_smat_avr_sdots\n\t"
    ".popsection");

/* w * v for an int8 w and an int16 v: two 8x8 products, no library call. */
static inline int32_t kb_smat_avr_mul(int8_t w, int16_t v)
{
    int32_t r;
    uint8_t t;
    __asm__("mulsu %[w], %A[v]\n\t"
            "movw %A[r], r0\n\t"
            "clr %C[r]\n\t"
            "sbrc %B[r], 7\n\t"
            "com %C[r]\n\t"
            "mov %D[r], %C[r]\n\t"
            "muls %[w], %B[v]\n\t"
            "clr %[t]\n\t"
            "sbrc r1, 7\n\t"
            "com %[t]\n\t"
            "add %B[r], r0\n\t"
            "adc %C[r], r1\n\t"
            "adc %D[r], %[t]\n\t"
            "clr __zero_reg__"
            : [r] "=&r"(r), [t] "=&r"(t)
            : [w] "a"(w), [v] "a"(v)
            : "r0");
    return r;
}
#endif /* KB_SMAT_AVR */

/* dots[r] = sum_c M[r][c] * vec[c] for r < nrows (M: the stored matrix at p[0 .. len)). The
 * caller guarantees (kb_smat_check) that every sum stays within +-KB_SMALL. */
static inline void kb_smat_row_dots(const uint8_t *p, uint16_t len, uint8_t cols, uint8_t wb,
                                    uint8_t enc, const int16_t *vec, int32_t *dots,
                                    uint8_t nrows)
{
    uint8_t r;
#if KB_SMAT_AVR
    (void)wb;
    if (enc == KB_SMAT_DENSE) {
        kb_smat_avr_dots(p, cols, vec, dots, nrows);
        return;
    }
    for (r = 0; r < nrows; r++)
        dots[r] = 0;
    kb_smat_avr_sdots(p, p + len, vec, dots, cols);
#else
    uint16_t i = 0;
    if (enc == KB_SMAT_DENSE) {
        uint8_t c;
        for (r = 0; r < nrows; r++) {
            int32_t s = 0;
            for (c = 0; c < cols; c++) {
                s += (int32_t)kb_smat_weight(p + i, wb) * vec[c];
                i = (uint16_t)(i + KB_WB(wb));
            }
            dots[r] = s;
        }
        return;
    }
    {
        uint16_t col = 0;
        uint8_t row = 0;
        for (r = 0; r < nrows; r++)
            dots[r] = 0;
        while (i < len) {
            const uint8_t g = KB_FLASH_BYTE(p + i);
            i++;
            col = (uint16_t)(col + (g == 0 ? 255u : (uint16_t)(g - 1u)));
            while (col >= cols) {
                col = (uint16_t)(col - cols);
                row++;
            }
            if (g == 0)
                continue;
            dots[row] += (int32_t)kb_smat_weight(p + i, wb) * vec[col];
            i = (uint16_t)(i + KB_WB(wb));
            col++;
        }
    }
#endif
}

#endif /* KB_SMAT_H */
