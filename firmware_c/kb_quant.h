/*
 * kb_quant.h - the integer quantizer (docs/contract.md 1.1): raw integer readings -> codes.
 *
 * Every runtime turns a sensor's raw reading into the code the model was trained on with the
 * same integer formula, so a model trained on raw readings sees on the chip exactly the codes
 * the host saw. Per reading: two compares, one 32-bit multiply, an add and a shift; the one
 * division per feature (M) happens at load time, never in the per-reading loop.
 *
 * The bounds and multipliers (lo, hi, M; one each per feature) are read through KB_QUANT_LO,
 * KB_QUANT_HI and KB_QUANT_M: RAM arrays by default, flash (PROGMEM) on an AVR build that
 * defines KB_QUANT_PROGMEM (the exported header's constants). kb_quant_load (defined with
 * KB_QUANT_FILE, which pulls in kb_file.h) fills RAM arrays from a model file's trailer.
 */
#ifndef KB_QUANT_H
#define KB_QUANT_H

#include <stdint.h>

#define KB_QUANT_TOTAL 28 /* S + b: (x - lo) * M + R stays below 2^30 */

#if defined(__AVR__) && defined(KB_QUANT_PROGMEM)
#include <avr/pgmspace.h>
#define KB_QUANT_FLASH PROGMEM
#define KB_QUANT_I32(p) ((int32_t)pgm_read_dword(p))
#define KB_QUANT_U32(p) ((uint32_t)pgm_read_dword(p))
#else
#define KB_QUANT_FLASH
#define KB_QUANT_I32(p) (*(p))
#define KB_QUANT_U32(p) (*(p))
#endif

/* How the per-reading function is declared: a build that wants the loops fast whatever its -O
 * (the native module: -Os leaves it a call with its arguments on the stack, 75 cycles a reading
 * on a Cortex-M0+) defines it with always_inline before including this. */
#ifndef KB_QUANT_INLINE
#define KB_QUANT_INLINE static inline
#endif

typedef struct {
    uint16_t n;      /* raw inputs (0: the model has no integer quantizer) */
    uint8_t top;     /* 2^b - 1, the largest code */
    uint8_t S;       /* 28 - b */
    uint32_t R;      /* 2^(S-1) (round half up), 0 for ckp (floor) */
    uint8_t offset;  /* kb_quant_values subtracts it: 2^(b-1) for assoc's int8 values, else 0 */
    const int32_t *lo; /* n bounds each, as the file stores them */
    const int32_t *hi;
    const uint32_t *M; /* (2^28 + span / 2) / span; 0 where span is 0 */
} kb_quant_t;

/* The code of reading x of a feature whose lo, hi and M are at lo, hi, M (RAM or flash).
 * x - lo is formed only when lo < x < hi, where it is positive and below 2^28 (contract 1.1),
 * so neither it nor the product can overflow, whatever the int32_t reading. M is 0 exactly when
 * the span is (a constant feature): code 0 there, also above hi. */
KB_QUANT_INLINE uint8_t kb_quant_code(int32_t x, const int32_t *lo, const int32_t *hi,
                                      const uint32_t *M, uint32_t R, uint8_t S, uint8_t top)
{
    const int32_t a = KB_QUANT_I32(lo);
    uint32_t c;
    if (x <= a)
        return 0;
    if (x >= KB_QUANT_I32(hi))
        return KB_QUANT_U32(M) ? top : 0;
    c = ((uint32_t)(x - a) * KB_QUANT_U32(M) + R) >> S;
    return c > top ? top : (uint8_t)c;
}

/* The code of reading x of feature j < n. */
static inline uint8_t kb_quant_one(const kb_quant_t *q, uint16_t j, int32_t x)
{
    return kb_quant_code(x, q->lo + j, q->hi + j, q->M + j, q->R, q->S, q->top);
}

/* The loops over n readings: int16_t (what most sensors and ADCs give) or int32_t readings
 * (24-bit ADCs, sums of readings) into codes, or into assoc's signed values, code - 2^(b-1)
 * (contract 9.1). One definition for every loop, so they cannot drift apart. The fields are
 * read once into locals: a store into out (bytes) could otherwise alias *q, and the compiler
 * would read them again for every reading. `step` is how far apart one feature's lo, hi and M
 * are from the next one's: 1 in the arrays a kb_quant_t usually points to, 3 where lo, hi and M
 * are interleaved in one array (q->hi == q->lo + 1, q->M == q->lo + 2: kbit's table, which the
 * native module reads in one pass). */
#define KB_QUANT_LOOP(name, raw_t, out_t, out_of, step)                                        \
    static inline void name(const kb_quant_t *q, const raw_t *raw, out_t *out)                 \
    {                                                                                          \
        const int32_t *lo = q->lo, *hi = q->hi;                                                \
        const uint32_t *M = q->M, R = q->R;                                                    \
        const uint8_t S = q->S, top = q->top, off = q->offset;                                 \
        const raw_t *const end = raw + q->n;                                                   \
        (void)off;                                                                             \
        for (; raw < end; lo += (step), hi += (step), M += (step))                             \
            *out++ = out_of(kb_quant_code(*raw++, lo, hi, M, R, S, top), off);                 \
    }
#define KB_QUANT_CODE(c, off) (c)
#define KB_QUANT_VALUE(c, off) ((int8_t)((int16_t)(c) - (int16_t)(off)))
KB_QUANT_LOOP(kb_quant_codes, int16_t, uint8_t, KB_QUANT_CODE, 1)
KB_QUANT_LOOP(kb_quant_codes32, int32_t, uint8_t, KB_QUANT_CODE, 1)
KB_QUANT_LOOP(kb_quant_values, int16_t, int8_t, KB_QUANT_VALUE, 1)
KB_QUANT_LOOP(kb_quant_values32, int32_t, int8_t, KB_QUANT_VALUE, 1)

/* The fields that follow from the model: its type (ckp floors, assoc is signed) and code
 * width b (1..8). */
static inline void kb_quant_setup(kb_quant_t *q, uint8_t type, uint8_t bits)
{
    q->top = (uint8_t)((1u << bits) - 1u);
    q->S = (uint8_t)(KB_QUANT_TOTAL - bits);
    q->R = type == 2 ? 0 : (uint32_t)1 << (q->S - 1u); /* 2: ckp (KB_FILE_TYPE_CKP) */
    q->offset = (uint8_t)(type == 5 ? 1u << (bits - 1u) : 0u); /* 5: assoc */
}

/* lo, hi, M of one feature from its bounds (-2^30 <= lo <= hi < 2^30, hi - lo < 2^28). */
static inline void kb_quant_derive(int32_t lo, int32_t hi, int32_t *qlo, int32_t *qhi,
                                   uint32_t *qM)
{
    const uint32_t span = (uint32_t)(hi - lo);
    *qlo = lo;
    *qhi = hi;
    *qM = span ? (((uint32_t)1 << KB_QUANT_TOTAL) + span / 2u) / span : 0;
}

#ifdef KB_QUANT_FILE
#include "kb_file.h"

/* The integer quantizer of a model of `type` and code width `bits` (1..8) whose payload
 * pl[0 .. plen) has its trailer at pl[used] for n raw inputs: lo, hi and M into the caller's
 * arrays of n entries each. A model without one loads as q->n == 0 (its caller gives codes);
 * a bad trailer is KB_ERR_TRAILER, a width out of 1..8 KB_ERR_PARAM. */
static inline kb_err_t kb_quant_load(kb_quant_t *q, uint8_t type, uint8_t bits,
                                     const uint8_t *pl, uint32_t plen, uint32_t used,
                                     uint16_t n, int32_t *lo, int32_t *hi, uint32_t *M)
{
    uint32_t off;
    uint16_t j;
    kb_err_t err = kb_file_trailer(pl, plen, used, n);
    if (err != KB_OK)
        return err;
    if (bits < 1 || bits > 8)
        return KB_ERR_PARAM;
    q->n = 0;
    q->lo = lo;
    q->hi = hi;
    q->M = M;
    kb_quant_setup(q, type, bits);
    if (!(pl[used] & KB_EXTRA_QUANT))
        return KB_OK;
    off = used + 1u;
    for (j = 0; j < n; j++)
        kb_quant_derive(kb_le32s(pl + off + 4u * j), kb_le32s(pl + off + 4u * ((uint32_t)n + j)),
                        lo + j, hi + j, M + j);
    q->n = n;
    return KB_OK;
}
#endif /* KB_QUANT_FILE */

#endif /* KB_QUANT_H */
