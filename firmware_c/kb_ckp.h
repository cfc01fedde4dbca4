/*
 * kb_ckp.h - Compressed Kernel Perceptron, integer only (docs/contract.md, section 6).
 *
 * Header-only, no malloc, no recursion, no floating point. The host integer reference
 * kilobit.models.ckp.CKPInt is the specification; this code must agree with it bit for bit.
 *
 * The budget is L bits: the support vectors live in one bit-packed memory of ceil(L/8) bytes,
 * each its label bit, then its M codes at its own precision (b + 1 bits for slots 0 .. n1-1, b
 * for the rest: the schedule of 6.2, kept in the model as b and n1). On a mistake the learner
 * adds the example, lowering the precision of every stored one in place, or replaces a random
 * one, as the host-made loss table q against ||w||^2 * C (`norm`) decides (6.5).
 *
 * Two configurations, as kb_rkp.h:
 *  - runtime parameters (default): kb_ckp_t carries the parameters and points at the tables and
 *    the memory; kb_ckp_load fills it from a .kb file, in place.
 *  - compile-time parameters (KB_CKP_CONST, for the ATtiny2313): define
 *        KB_CKP_CONST_BITS  KB_CKP_CONST_DIMS  KB_CKP_CONST_L  KB_CKP_CONST_C
 *        KB_CKP_CONST_NTAB  KB_CKP_CONST_TABLE_INIT  KB_CKP_CONST_QSTART  KB_CKP_CONST_NQ
 *        KB_CKP_CONST_Q_INIT  (and optionally KB_CKP_CONST_MEM_INIT)
 *    and the tables become flash arrays (KB_TABLE_PROGMEM), the memory a static array, the
 *    types the narrowest the constants allow.
 *
 * Widths: an input code is at most 8 bits, a centre (2v+1) << (P-b) at most 9; a distance is
 * below 2^30 (the loader's check); weights are 8-bit; a score or margin is at most
 * B_max * C <= 32767 * 255 < 2^23 in magnitude (int32_t; with compile-time parameters int16_t
 * when B_max * C <= 32767, else avr-gcc's 24-bit __int24 on AVR); the norm is an int32_t kept
 * in [-2^30, 2^30 - 1], so norm + delta, |delta| < 2^27, never wraps.
 *
 * Size on the ATtiny2313 (no multiplier, 2 KB flash): one step is passes of a single loop over
 * the memory (kb_ckp_step), fields move one bit at a time through one small function
 * (kb_ckp_bits), the schedule is found by subtraction, the saturation by a test of the top
 * byte: no 32-bit multiply or division is linked. Even so avr-gcc 5.4 makes ~1600 B of the
 * step, so on cores without a multiplier the firmware links the same passes hand-written in
 * assembly (firmware_c/avr/kb_ckp_step.S, ~1000 B; KB_CKP_ASM below says when): this C stays
 * the reference and the build on the Uno. Cores whose int has 32 bits (Cortex-M0+, x64;
 * kb_kernel.h's KB_FAST32) compile another step, same values, decoded word-wise (see "the
 * 32-bit path" below): Banana at 70 B then costs about 10,000 cycles a learning step on the
 * emulated RP2040 (bare C), against 100,000 for this one.
 */
#ifndef KB_CKP_H
#define KB_CKP_H

#include <stddef.h>
#include <stdint.h>

#include "kb_kernel.h"
#include "kb_rng.h"

#define KB_CKP_NORM_MAX 1073741823L
#define KB_CKP_NORM_MIN (-1073741823L - 1L)
#define KB_CKP_DIST_MAX 1073741823UL
#define KB_CKP_PARAMS 17 /* bits dims L width C rng count norm ntab */

#ifdef KB_CKP_CONST

#if !defined(KB_CKP_CONST_BITS) || !defined(KB_CKP_CONST_DIMS) || !defined(KB_CKP_CONST_L) || \
    !defined(KB_CKP_CONST_C) || !defined(KB_CKP_CONST_NTAB) ||                                 \
    !defined(KB_CKP_CONST_TABLE_INIT) || !defined(KB_CKP_CONST_QSTART) ||                       \
    !defined(KB_CKP_CONST_NQ) || !defined(KB_CKP_CONST_QSHIFT) || !defined(KB_CKP_CONST_Q_INIT)
#error "KB_CKP_CONST needs KB_CKP_CONST_{BITS,DIMS,L,C,NTAB,TABLE_INIT,QSTART,NQ,QSHIFT,Q_INIT}"
#endif
#if KB_CKP_CONST_BITS < 1 || KB_CKP_CONST_BITS > 8
#error "KB_CKP_CONST_BITS must be in 1..8"
#endif
#if KB_CKP_CONST_L < KB_CKP_CONST_DIMS + 1 || KB_CKP_CONST_L > 65535
#error "KB_CKP_CONST_L must be in M+1..65535"
#endif
#define KB_CKP_CONST_TOP ((2L << KB_CKP_CONST_BITS) - 1L)
#if KB_CKP_CONST_DIMS * KB_CKP_CONST_TOP * KB_CKP_CONST_TOP > 1073741823L
#error "distance M*(2^(P+1)-1)^2 exceeds 30 bits"
#endif
#define KB_CKP_CONST_MAX_SVS (KB_CKP_CONST_L / (KB_CKP_CONST_DIMS + 1))
#define KB_CKP_CONST_MEM_BYTES ((KB_CKP_CONST_L + 7) / 8)

#if KB_CKP_CONST_DIMS * KB_CKP_CONST_TOP * KB_CKP_CONST_TOP <= 65535L
typedef uint16_t kb_ckp_dist_t;
#else
typedef uint32_t kb_ckp_dist_t;
#endif
#if KB_CKP_CONST_MAX_SVS <= 255
typedef uint8_t kb_ckp_count_t;
#else
typedef uint16_t kb_ckp_count_t;
#endif
#if KB_CKP_CONST_DIMS <= 255
typedef uint8_t kb_ckp_dim_t;
#else
typedef uint16_t kb_ckp_dim_t;
#endif
#if KB_CKP_CONST_BITS <= 7
typedef uint8_t kb_ckp_centre_t; /* (2v+1) << (P-b) <= 2^(P+1) - 1 */
#else
typedef uint16_t kb_ckp_centre_t;
#endif
#if KB_CKP_CONST_MAX_SVS * KB_CKP_CONST_C <= 32767L
typedef int16_t kb_ckp_score_t;
#elif defined(__AVR__) && defined(__INT24_MAX__)
__extension__ typedef __int24 kb_ckp_score_t; /* B_max * C < 2^23 (contract 6.4): 3 registers */
#else
typedef int32_t kb_ckp_score_t;
#endif

#define KB_CKP_BITS(m) ((uint8_t)KB_CKP_CONST_BITS)
#define KB_CKP_DIMS(m) ((kb_ckp_dim_t)KB_CKP_CONST_DIMS)
#define KB_CKP_L(m) ((uint16_t)KB_CKP_CONST_L)
#define KB_CKP_C(m) ((uint8_t)KB_CKP_CONST_C)
#define KB_CKP_NTAB(m) ((uint8_t)KB_CKP_CONST_NTAB)
#define KB_CKP_TABLE(m) (kb_ckp_table)
#define KB_CKP_QSTART(m) ((kb_ckp_count_t)KB_CKP_CONST_QSTART)
#define KB_CKP_NQ(m) ((uint16_t)KB_CKP_CONST_NQ)
#define KB_CKP_QSHIFT(m) ((uint8_t)KB_CKP_CONST_QSHIFT)
#define KB_CKP_MEM(m) (kb_ckp_mem)
#define KB_CKP_SCRATCH(m) (kb_ckp_scratch)
#define KB_CKP_MAX_SVS(m) ((kb_ckp_count_t)KB_CKP_CONST_MAX_SVS)
#define KB_CKP_MEM_BYTES(m) ((uint16_t)KB_CKP_CONST_MEM_BYTES)

/* The step in AVR assembly (firmware_c/avr/kb_ckp_step.S, which repeats this condition) on
 * cores without a multiplier, when a centre and a count fit a byte, a distance 16 bits and the
 * point's centres an `std Y+q` displacement: avr-gcc's build of the C below needs ~1400 B, too
 * many for the ATtiny2313's 2 KB with the UART frames. The assembly reads the tables, the
 * memory and the model (kb_ckp_model) by name, so they are not static there. */
#if defined(__AVR__) && !defined(__AVR_HAVE_MUL__) && !defined(KB_CKP_NO_ASM) &&             \
    KB_CKP_CONST_BITS <= 7 && KB_CKP_CONST_DIMS <= 63 &&                                      \
    KB_CKP_CONST_DIMS * KB_CKP_CONST_TOP * KB_CKP_CONST_TOP <= 65535L &&                      \
    KB_CKP_CONST_MAX_SVS <= 255
#define KB_CKP_ASM
#define KB_CKP_LINK
#else
#define KB_CKP_LINK static
#endif

#else /* runtime parameters */

typedef uint32_t kb_ckp_dist_t;
typedef uint16_t kb_ckp_count_t;
typedef uint16_t kb_ckp_dim_t;
typedef uint16_t kb_ckp_centre_t;
typedef int32_t kb_ckp_score_t;

#define KB_CKP_BITS(m) ((m)->bits)
#define KB_CKP_DIMS(m) ((m)->dims)
#define KB_CKP_L(m) ((m)->L)
#define KB_CKP_C(m) ((m)->C)
#define KB_CKP_NTAB(m) ((m)->ntab)
#define KB_CKP_TABLE(m) ((m)->table)
#define KB_CKP_QSTART(m) ((m)->qstart)
#define KB_CKP_NQ(m) ((m)->nq)
#define KB_CKP_QSHIFT(m) ((m)->qshift)
#define KB_CKP_MEM(m) ((m)->mem)
#define KB_CKP_SCRATCH(m) ((m)->scratch)
#define KB_CKP_MAX_SVS(m) ((kb_ckp_count_t)((m)->L / ((uint32_t)(m)->dims + 1u)))
#define KB_CKP_MEM_BYTES(m) ((uint16_t)(((uint32_t)(m)->L + 7u) / 8u))

#endif /* KB_CKP_CONST */

typedef struct {
    kb_rng_t rng;         /* advances only when a mistake replaces a support vector */
    kb_ckp_count_t count; /* support vectors stored, B */
    int32_t norm;         /* ||w||^2 * C, contract 6.5 */
    uint8_t b;            /* the schedule of `count` (6.2): slots n1.. hold b bits, */
    kb_ckp_count_t n1;    /* slots 0 .. n1-1 hold b + 1 */
#ifndef KB_CKP_CONST
    uint8_t bits;            /* P, 1..8 */
    uint16_t dims;           /* M */
    uint16_t L;              /* budget in bits */
    uint16_t width;          /* A in thousandths; only the host needs it (it made the tables) */
    uint8_t C;               /* weight scale */
    uint8_t ntab;            /* J */
    const uint8_t *table;    /* P[0..J-1] */
    uint16_t qstart, nq;     /* the loss table covers B = qstart .. qstart + nq - 1 */
    uint8_t qshift;          /* loss_q(B) = q[B - qstart] << qshift, in 1/C */
    const uint8_t *q;        /* q[0..nq-1] */
    uint8_t *mem;            /* ceil(L/8) bytes */
    uint16_t *scratch;       /* 2M centres: the point being scored, a replaced vector */
#endif
} kb_ckp_t;

#ifdef KB_CKP_CONST
KB_CKP_LINK const uint8_t kb_ckp_table[KB_CKP_CONST_NTAB > 0 ? KB_CKP_CONST_NTAB : 1] KB_FLASH =
    KB_CKP_CONST_TABLE_INIT;
KB_CKP_LINK const uint8_t kb_ckp_q[KB_CKP_CONST_NQ > 0 ? KB_CKP_CONST_NQ : 1] KB_FLASH =
    KB_CKP_CONST_Q_INIT;
#define KB_CKP_Q(m, i) KB_TABLE_READ(kb_ckp_q, i)
#ifdef KB_CKP_CONST_MEM_INIT
KB_CKP_LINK uint8_t kb_ckp_mem[KB_CKP_CONST_MEM_BYTES] = KB_CKP_CONST_MEM_INIT;
#else
KB_CKP_LINK uint8_t kb_ckp_mem[KB_CKP_CONST_MEM_BYTES];
#endif
KB_CKP_LINK kb_ckp_centre_t kb_ckp_scratch[2 * KB_CKP_CONST_DIMS];
#else
#define KB_CKP_Q(m, i) ((m)->q[i])
#endif

/* ---- products ---- */

/* a * b for 16-bit factors, exact in 32 bits; shift-add over b's bits without a multiplier. */
#ifdef KB_SOFT_MUL
static __attribute__((noinline, unused)) uint32_t kb_mul16(uint16_t a, uint16_t b)
{
    uint32_t x = a, p = 0;
    for (; b != 0; b >>= 1, x <<= 1)
        if (b & 1u)
            p += x;
    return p;
}
#else
#define kb_mul16(a, b) ((uint32_t)(a) * (uint32_t)(b))
#endif

/* The square of a centre difference: up to 8 bits through kb_sq8, else a 16x16 product. */
KB_ALWAYS_INLINE kb_ckp_dist_t kb_ckp_sq(kb_ckp_centre_t diff)
{
#if defined(KB_CKP_CONST) && KB_CKP_CONST_BITS <= 7
    return (kb_ckp_dist_t)kb_sq8(diff);
#else
    return (kb_ckp_dist_t)kb_mul16(diff, diff);
#endif
}

/* B * q of the loss test (B < 2^15, q < 2^8): an 8x8 product when B fits a byte. */
KB_ALWAYS_INLINE uint32_t kb_ckp_mul_q(kb_ckp_count_t B, uint8_t q)
{
#if defined(KB_CKP_CONST) && KB_CKP_CONST_MAX_SVS <= 255
    return kb_mul8(B, q);
#else
    return kb_mul16(B, q);
#endif
}

KB_LOG_WEIGHT_DEF(kb_ckp_log_weight, kb_ckp_dist_t)

/* ---- the schedule and the memory (contract 6.2, 6.6) ---- */

#if !defined(KB_CKP_ASM) || defined(KB_CKP_FILE)
/* b and n1 of `count` support vectors (count >= 1): Lm = (L - B) / M bits per attribute,
 * b = Lm / B, n1 = Lm - B*b, unless b >= P (then every slot holds P bits). b never exceeds P,
 * so Lm / B is at most P + 1 subtractions: no division, no product. */
static void kb_ckp_schedule(kb_ckp_t *m)
{
    const uint16_t B = m->count;
    uint16_t r = (uint16_t)((uint16_t)(KB_CKP_L(m) - B) / KB_CKP_DIMS(m));
    uint8_t b = 0;
    while (b < KB_CKP_BITS(m) && r >= B) {
        r = (uint16_t)(r - B);
        b++;
    }
    m->b = b;
    m->n1 = (kb_ckp_count_t)(b < KB_CKP_BITS(m) ? r : 0u);
}
#endif

#ifndef KB_CKP_ASM

#ifndef KB_FAST32 /* the 32-bit path has its own reader and writer (below) */
/* A cursor on the memory: bit p is bit p%8 of byte p/8 (contract 3.5), held as the byte and the
 * bit's mask. Fields go one bit at a time: a few cycles more per field than shifting it into
 * place, but one small loop reads and writes every field and no bit position is ever computed
 * (the ATtiny2313's flash is 2 KB). */
typedef struct {
    uint8_t *p;
    uint8_t mask;
} kb_ckp_cur_t;

/* The n (0..8) bits at the cursor, LSB first, which it moves past; with `put`, v's low n bits
 * are written in their place. */
static __attribute__((noinline)) uint8_t kb_ckp_bits(kb_ckp_cur_t *c, uint8_t n, uint8_t v,
                                                     uint8_t put)
{
    uint8_t r = 0, bit = 1;
    for (; n != 0; n--, bit = (uint8_t)(bit << 1)) {
        if (*c->p & c->mask)
            r |= bit;
        if (put)
            *c->p = (uint8_t)((v & bit) ? *c->p | c->mask : *c->p & ~c->mask);
        c->mask = (uint8_t)(c->mask << 1);
        if (c->mask == 0) {
            c->mask = 1;
            c->p++;
        }
    }
    return r;
}

static inline uint8_t kb_ckp_get(kb_ckp_cur_t *c, uint8_t n)
{
    return kb_ckp_bits(c, n, 0, 0);
}

#endif /* KB_FAST32 */

/* ---- learning (contract 6.5) ---- */

/* The centres 2u+1 of input codes u (P bits), into the scratch's first half. */
static kb_ckp_centre_t *kb_ckp_centres(const kb_ckp_t *m, const uint8_t *u)
{
    kb_ckp_centre_t *x = KB_CKP_SCRATCH(m);
    kb_ckp_dim_t j;
    (void)m;
    for (j = 0; j < KB_CKP_DIMS(m); j++)
        x[j] = (kb_ckp_centre_t)(2u * u[j] + 1u);
    return x;
}

#ifndef KB_FAST32
/* Write a slot at the cursor: the label, then each centre as a b-bit code. A centre c on the
 * grid of 2^-(P+1) lies in the b-bit bin c >> (P + 1 - b): the input's 2u + 1 gives u >> (P - b)
 * (6.5), a stored centre (2v + 1) << (P - b') gives v >> (b' - b), its code lowered (6.6). */
static __attribute__((noinline)) void kb_ckp_put_slot(const kb_ckp_t *m, kb_ckp_cur_t *c,
                                                      uint8_t label, const kb_ckp_centre_t *x,
                                                      uint8_t b)
{
    const uint8_t sh = (uint8_t)(KB_CKP_BITS(m) + 1u - b);
    kb_ckp_dim_t j;
    (void)m;
    kb_ckp_bits(c, 1, label, 1);
    for (j = 0; j < KB_CKP_DIMS(m); j++)
        kb_ckp_bits(c, b, (uint8_t)(x[j] >> sh), 1);
}
#endif

/* A mistake adds when B < B_max and B * (q << qshift) < norm: norm > 0 and
 * B * q <= (norm - 1) >> qshift (q = 0 below qstart, none past the table; B * q < 2^23). */
static uint8_t kb_ckp_adds(const kb_ckp_t *m)
{
    const kb_ckp_count_t B = m->count;
    uint8_t q = 0;
    if (B >= KB_CKP_MAX_SVS(m) || m->norm <= 0)
        return 0;
    if (B >= KB_CKP_QSTART(m)) {
        const uint16_t i = (uint16_t)(B - KB_CKP_QSTART(m));
        if (i + 1u > (uint16_t)KB_CKP_NQ(m)) /* i >= nq (no warning at nq = 0) */
            return 0;
        q = KB_CKP_Q(m, i);
    }
    return (uint8_t)(kb_ckp_mul_q(B, q) <= (uint32_t)(m->norm - 1) >> KB_CKP_QSHIFT(m));
}

/* n saturated to [-2^30, 2^30 - 1] (n = norm + delta: |norm| <= 2^30, |delta| < 2^27, no
 * wrap). n is inside when its bits 31 and 30 agree: a test of the top byte, no 32-bit compare. */
static inline int32_t kb_ckp_sat(int32_t n)
{
    const uint8_t top = (uint8_t)((uint32_t)n >> 24);
    if ((uint8_t)(top + 0x40u) & 0x80u)
        return (top & 0x80u) ? KB_CKP_NORM_MIN : KB_CKP_NORM_MAX;
    return n;
}

#ifndef KB_FAST32

/* The passes of one step over the support vectors (see kb_ckp_step). */
#define KB_CKP_NEAREST 0 /* the nearest distance */
#define KB_CKP_RING 1    /* sum y_i w(d_i - base) over d_i >= base (contract 3.3) */
#define KB_CKP_LOCATE 2  /* the margin sum y_i w(d_i) (base 0); captures the evicted slot */
#define KB_CKP_EVICTED 3 /* the margin of the evicted slot's centres */
#define KB_CKP_LOWER 4   /* every slot rewritten at the precision of B + 1 slots (6.6) */

/* Score the codes u (P bits each) and, unless `mistake` is NULL, learn them with label y in
 * {0, 1} (contract 6.5; *mistake is set to 1 on a mistake). Returns the score before learning.
 *
 * Everything is passes of one loop over the support vectors, so that the decoder exists once
 * in flash and a small chip's stack holds no nested frame: NEAREST, the score's RINGs
 * (contract 3.3, 6.4), then on a mistake LOCATE (the margin m(x); for a replacement also where
 * the evicted slot starts, its centres, label and weight w(|x - c_R|^2)), then EVICTED (its
 * margin m(c_R)) or LOWER (B -> B+1 slots, each rewritten in place from the first: a slot
 * never moves up nor gains bits and is read whole before it is written, so nothing unread is
 * overwritten). Then the norm (6.5) and the new slot. */
static kb_ckp_score_t kb_ckp_step(kb_ckp_t *m, const uint8_t *u, uint8_t y, uint8_t *mistake)
{
    kb_ckp_centre_t *const rc = KB_CKP_SCRATCH(m) + KB_CKP_DIMS(m);
    const kb_ckp_centre_t *x = kb_ckp_centres(m, u);
    const kb_ckp_count_t B = m->count, n1 = m->n1;
    const uint8_t b0 = m->b;
    kb_ckp_count_t capture = B; /* none */
    kb_ckp_score_t s = 0, mg = 0, r;
    kb_ckp_dist_t base = 0, first = (kb_ckp_dist_t)~(kb_ckp_dist_t)0, next = 0;
    kb_ckp_cur_t at;
    uint8_t pass = KB_CKP_NEAREST, yR = 0, bR = 0, wR = 0;
    int32_t delta;
    for (;;) {
        kb_ckp_cur_t c;
        kb_ckp_count_t i;
        uint8_t b = (uint8_t)(b0 + 1u);
        c.p = KB_CKP_MEM(m);
        c.mask = 1;
        if (pass == KB_CKP_LOWER)
            at = c; /* the writer */
        r = 0;
        for (i = 0; i < B; i++) {
            const uint8_t keep = (uint8_t)(i == capture || pass == KB_CKP_LOWER);
            uint8_t positive, sh;
            kb_ckp_dist_t d = 0;
            kb_ckp_dim_t j;
            if (i == n1)
                b = b0;
            sh = (uint8_t)(KB_CKP_BITS(m) - b);
            if (i == capture) {
                at = c;
                bR = b;
            }
            positive = kb_ckp_get(&c, 1);
            for (j = 0; j < KB_CKP_DIMS(m); j++) {
                const kb_ckp_centre_t v =
                    (kb_ckp_centre_t)((kb_ckp_centre_t)(2u * kb_ckp_get(&c, b) + 1u) << sh);
                if (keep)
                    rc[j] = v;
                d = (kb_ckp_dist_t)(d + kb_ckp_sq((kb_ckp_centre_t)(x[j] > v ? x[j] - v
                                                                           : v - x[j])));
            }
            if (pass == KB_CKP_LOWER) {
                kb_ckp_put_slot(m, &at, positive, rc, (uint8_t)(i < m->n1 ? m->b + 1u : m->b));
                continue;
            }
            if (d < base)
                continue;
            if (d < first)
                first = d;
            if (d > base && (next == base || d < next))
                next = d;
            if (pass != KB_CKP_NEAREST) {
                const uint8_t k = kb_ckp_log_weight(KB_CKP_TABLE(m), KB_CKP_NTAB(m),
                                                    KB_CKP_C(m), (kb_ckp_dist_t)(d - base));
                if (i == capture) {
                    yR = positive;
                    wR = k;
                }
                r = (kb_ckp_score_t)(positive ? r + k : r - k);
            }
        }
        if (pass == KB_CKP_NEAREST) {
            pass = KB_CKP_RING;
        } else if (pass == KB_CKP_RING) {
            if (r == 0 && next != base) { /* every ring so far cancels: the next one */
                first = next;
            } else {
                s = r;
                if (!mistake || !(y ? s <= 0 : s >= 0))
                    return s;
                *mistake = 1;
                base = 0;
                if (B != 0 && !kb_ckp_adds(m)) /* replace: the generator moves only here */
                    capture = (kb_ckp_count_t)kb_rng_below(&m->rng, B);
                pass = KB_CKP_LOCATE;
                continue;
            }
        } else if (pass == KB_CKP_LOCATE) {
            mg = r;
            if (capture != B) {
                x = rc;
                capture = B;
                pass = KB_CKP_EVICTED;
                continue;
            }
            if (B == 0) /* the first support vector: norm = 0 + 2*0 + C */
                m->norm = 0;
            m->count = (kb_ckp_count_t)(B + 1u);
            kb_ckp_schedule(m);
            pass = KB_CKP_LOWER;
            continue;
        } else {
            break;
        }
        base = first;
        next = base;
    }
    /* adding:    norm + 2m + C                      (m = y' margin(x))
     * replacing: norm + 2(m - m_R - y' y_R k) + 2C  (m_R = y_R margin(c_R), k = w(|x - c_R|^2))
     *            = norm + 2(m - y_R (margin(c_R) + y' k) + C) */
    delta = y ? mg : -(int32_t)mg;
    if (pass == KB_CKP_LOWER) {
        /* every bit past the new layout cleared (those past the old one are 0 already) */
        uint8_t *const end = KB_CKP_MEM(m) + KB_CKP_MEM_BYTES(m);
        kb_ckp_cur_t z;
        for (z = at; z.p < end; z.p++, z.mask = 1)
            *z.p &= (uint8_t)(z.mask - 1u);
        bR = m->b; /* slot B >= n1: the new slot holds b bits */
        delta = 2 * delta + KB_CKP_C(m);
    } else {
        r = (kb_ckp_score_t)(y ? r + wR : r - wR); /* |margin| + C < 2^23 */
        delta = 2 * (delta - (yR ? r : -(int32_t)r) + KB_CKP_C(m));
    }
    m->norm = kb_ckp_sat(m->norm + delta);
    kb_ckp_put_slot(m, &at, y, KB_CKP_SCRATCH(m), bR);
    return s;
}

#else /* KB_FAST32 */

/* ---- the 32-bit path (KB_FAST32, kb_kernel.h): the same step, decoded word-wise ----
 *
 * kb_ckp_step above moves every field one bit at a time, through one small function, in up to
 * five passes over the memory: the ATtiny2313's flash decides there. A 32-bit core shifts any
 * distance in one cycle. Here a 2-D slot (the paper's setting, M = 2: S = 2b + 1 <= 17 bits)
 * is read as one 3-byte window, its two codes taken with constant shifts and, for a run of
 * slots of up to KB_CKP_TAB_BITS bits a code, their squared differences looked up in a table
 * made for the step's point (2^b codes a run, against one product per code read); a slot of
 * more codes goes through a 32-bit bit buffer (kb_stream32_t, a byte load per field at most).
 * The point's distances to the first KB_CKP_CACHE slots are decoded once per step and kept
 * (d << 1 | label, d < 2^30), so the score's rings and a mistake's margin m(x) read them
 * instead of the memory; the weights' rounded division is a multiply (kb_log_weight32), and a
 * weighing pass leaves a slot as soon as its partial distance is past the last nonzero weight.
 * A mistake reads the evicted slot directly (its position is the schedule's formula, 6.6),
 * weighs the memory against its centres (m(c_R)), and a lowering rewrites the memory in one
 * streamed read-and-write pass. The values are those of kb_ckp_step above, rule for rule. */

#ifndef KB_CKP_CACHE
#define KB_CKP_CACHE 64 /* slots whose distance one step keeps: 4 bytes each, on the stack */
#endif

/* What a pass over slots does with each (its distance d to the point, its label y): */
#define KB_CKP_F_KEEP 0  /* d << 1 | y into the cache, and the least d */
#define KB_CKP_F_LEAST 1 /* the least d >= lo */
#define KB_CKP_F_WEIGH 2 /* sum y w(d - lo) over lo <= d < lo + span */

/* The weight of offset k < span (span = min(2^J, 2^30)): C at 0, else the log method. */
KB_ALWAYS_INLINE uint32_t kb_ckp_w32(const kb_ckp_t *m, uint32_t k, uint32_t recip)
{
    (void)m;
    return k == 0 ? KB_CKP_C(m)
                  : kb_log_weight32(KB_CKP_TABLE(m), KB_CKP_NTAB(m), KB_CKP_C(m), recip, k);
}

/* Distances are below 2^30 (the loader's limit), so past J = 30 every offset weighs. */
KB_ALWAYS_INLINE uint32_t kb_ckp_span(const kb_ckp_t *m)
{
    (void)m;
    return KB_CKP_NTAB(m) < 30u ? 1u << KB_CKP_NTAB(m) : 1u << 30;
}

/* The distance of a slot of 2 codes of b bits, w = its bits (label lowest), to the point. A
 * centre is (2v + 1) << sh = (v << sh1) + half (sh1 = sh + 1), so the point comes as
 * X = x - half and each difference is X - (v << sh1); each square is below 2^18. */
KB_ALWAYS_INLINE uint32_t kb_ckp_dist2(uint32_t w, int32_t X0, int32_t X1, uint32_t b,
                                       uint32_t mask, uint32_t sh1)
{
    const int32_t d0 = X0 - (int32_t)(((w >> 1) & mask) << sh1);
    const int32_t d1 = X1 - (int32_t)(((w >> (b + 1u)) & mask) << sh1);
    return (uint32_t)(d0 * d0) + (uint32_t)(d1 * d1);
}

/* One slot of M codes of b bits, field by field: its label bit in *y, its distance to the
 * centres x, or, as soon as a partial sum reaches lim, that partial sum (>= lim; the rest of
 * the slot skipped). Each term is below 2^18 and their sum below 2^30: no wrap. */
KB_ALWAYS_INLINE uint32_t kb_ckp_slot(kb_stream32_t *r, const kb_ckp_centre_t *x, uint32_t M,
                                      uint32_t b, uint32_t sh, uint32_t lim, uint32_t *y)
{
    const uint32_t half = 1u << sh;
    uint32_t d = 0, j;
    *y = kb_stream32_get(r, 1);
    for (j = 0; j < M; j++) {
        const int32_t diff =
            (int32_t)x[j] - (int32_t)((kb_stream32_get(r, b) << (sh + 1u)) | half);
        d += (uint32_t)(diff * diff);
        if (d >= lim) {
            kb_stream32_skip(r, (M - 1u - j) * b);
            break;
        }
    }
    return d;
}

/* A constant memory under 3 bytes never takes the table path (kb_ckp_keep2's `safe` is 0):
 * leaving it out then keeps gcc -O2 from warning of the 3-byte reads of a path it cannot rule
 * out (-Warray-bounds on kb_ckp_mem[1] or [2]; ASan finds no such access). */
#if defined(KB_CKP_CONST) && KB_CKP_CONST_MEM_BYTES < 3
#define KB_CKP_TABLES 0
#else
#define KB_CKP_TABLES 1
#endif

#if KB_CKP_TABLES
/* KEEP for 2 codes of b bits, b a constant (1..KB_CKP_TAB_BITS) where this is inlined: each
 * slot from bit pos up to `stop` (where its 3-byte window still lies within the memory) read
 * as one window, its two squares looked up, d << 1 | y into cp. T[c] is the square for code
 * c of the first attribute, T[2^b + c] of the second. On a Cortex-M0+ (eight low registers)
 * this loop keeps its state in registers: every shift is a constant, no mask is live.
 * Returns where cp stopped. */
KB_ALWAYS_INLINE uint32_t *kb_ckp_keep2_b(const uint8_t *mem, uint32_t pos, uint32_t stop,
                                          const uint32_t *T, uint32_t *cp, uint32_t *least,
                                          uint32_t b)
{
    const uint32_t mask = (1u << b) - 1u, S = 2u * b + 1u;
    uint32_t lo = *least;
    for (; pos < stop; pos += S) {
        const uint8_t *const p = mem + (pos >> 3);
        const uint32_t w =
            ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16) >> (pos & 7u);
        const uint32_t d = T[(w >> 1) & mask] + T[(1u << b) + ((w >> (b + 1u)) & mask)];
        *cp++ = d << 1 | (w & 1u);
        if (d < lo)
            lo = d;
    }
    *least = lo;
    return cp;
}

#define KB_CKP_TAB_BITS 4 /* table-driven up to 4 bits a code: 2 x 16 squares on the stack */

/* kb_ckp_keep2_b for each width, out of line: T and cp arrive in registers (inlined into the
 * step, whose frame holds the cache, every access to T would recompute its stack address). */
#define KB_CKP_KEEP2_B(b)                                                                     \
    static KB_NOINLINE uint32_t *kb_ckp_keep2_##b(const uint8_t *mem, uint32_t pos,          \
                                                  uint32_t stop, const uint32_t *T,           \
                                                  uint32_t *cp, uint32_t *least)              \
    {                                                                                         \
        return kb_ckp_keep2_b(mem, pos, stop, T, cp, least, b);                               \
    }
KB_CKP_KEEP2_B(1)
KB_CKP_KEEP2_B(2)
KB_CKP_KEEP2_B(3)
KB_CKP_KEEP2_B(4)
#undef KB_CKP_KEEP2_B

/* T[c] = (X0 - c*step)^2 and U[c] = (X1 - c*step)^2 for T + c < end: the squares of a table
 * of kb_ckp_keep2 (out of line: its five values stay in registers). */
static KB_NOINLINE void kb_ckp_squares(uint32_t *T, const uint32_t *end, uint32_t *U,
                                       int32_t X0, int32_t X1, uint32_t step)
{
    for (; T != end; X0 -= (int32_t)step, X1 -= (int32_t)step) {
        *T++ = (uint32_t)(X0 * X0);
        *U++ = (uint32_t)(X1 * X1);
    }
}
#endif /* KB_CKP_TABLES */

/* KEEP for 2 codes: n slots of b bits from bit pos on, d << 1 | y of each into cp[0..n-1]; the
 * centres are 2u + 1 = X + half (X0, X1; see kb_ckp_dist2). Up to KB_CKP_TAB_BITS bits a code
 * the 2 * 2^b squares are tabulated first (2^b multiplies, against one per code read), and a
 * loop with b as a constant reads the slots; the last ones, whose window the memory's end
 * cuts, and wider codes, are computed one by one. */
static uint32_t kb_ckp_keep2(const uint8_t *mem, uint32_t nbytes, uint32_t pos, uint32_t n,
                             uint32_t b, uint32_t sh, int32_t X0, int32_t X1, uint32_t *cp,
                             uint32_t least)
{
    const uint32_t S = 2u * b + 1u, mask = (1u << b) - 1u, end = pos + n * S;
#if KB_CKP_TABLES
    const uint32_t safe = nbytes > 2u ? 8u * (nbytes - 2u) : 0u; /* pos < safe: 3 bytes in */
    const uint32_t stop = end < safe ? end : safe;
    if (b <= KB_CKP_TAB_BITS && n >= (1u << b) && pos < stop) { /* 2^b codes: it pays */
        uint32_t T[2u << KB_CKP_TAB_BITS];
        kb_ckp_squares(T, T + (1u << b), T + (1u << b), X0, X1, 1u << (sh + 1u));
        {
            uint32_t *const first = cp;
            /* a loop per width, b <= KB_CKP_TAB_BITS here (tests, not a switch: on armv6m a
             * switch's jump table calls a libgcc helper a native module does not link) */
            if (b == 1)
                cp = kb_ckp_keep2_1(mem, pos, stop, T, cp, &least);
            else if (b == 2)
                cp = kb_ckp_keep2_2(mem, pos, stop, T, cp, &least);
            else if (b == 3)
                cp = kb_ckp_keep2_3(mem, pos, stop, T, cp, &least);
            else
                cp = kb_ckp_keep2_4(mem, pos, stop, T, cp, &least);
            pos += (uint32_t)(cp - first) * S;
        }
    }
#endif
    for (; pos < end; pos += S) {
        const uint32_t w = kb_window24(mem, nbytes, pos);
        const uint32_t d = kb_ckp_dist2(w, X0, X1, b, mask, sh + 1u);
        *cp++ = d << 1 | (w & 1u);
        if (d < least)
            least = d;
    }
    return least;
}

/* n slots from slot i on, each of b bits per code, the first at bit pos: `f`'s share of a pass
 * (f and two, M == 2, are constants where this is inlined). acc is the least distance (KEEP,
 * LEAST) or the sum (WEIGH, as uint32_t: two's complement) so far; returns it updated. Two
 * codes are read as one window per slot (no stream state to carry: fewer live registers on a
 * Cortex-M0+), more through the stream. */
KB_ALWAYS_INLINE uint32_t kb_ckp_run_f(const kb_ckp_t *m, const kb_ckp_centre_t *x, uint32_t i,
                                       uint32_t pos, uint32_t n, uint32_t b, uint32_t lo,
                                       uint32_t recip, uint32_t *cache, uint32_t acc, int f,
                                       int two)
{
    const uint32_t sh = KB_CKP_BITS(m) - b, M = KB_CKP_DIMS(m), span = kb_ckp_span(m);
    const uint32_t S = 1u + M * b, mask = (1u << b) - 1u, nbytes = KB_CKP_MEM_BYTES(m);
    const uint8_t *const mem = KB_CKP_MEM(m);
    const int32_t X0 = (int32_t)x[0] - (int32_t)(1u << sh);
    const int32_t X1 = two ? (int32_t)x[1] - (int32_t)(1u << sh) : 0;
    /* a weighing slot is decided once past lo + span, one for the least once at or past the
     * least so far (one whose distance is kept never) */
    uint32_t lim = f == KB_CKP_F_WEIGH ? lo + span : f == KB_CKP_F_LEAST ? acc : 0xFFFFFFFFu;
    uint32_t *cp = cache != NULL ? cache + i : NULL; /* NULL: WEIGH/LEAST, which keep none */
    kb_stream32_t r;
    (void)m;
    (void)S;
    (void)mask;
    (void)nbytes;
    if (f == KB_CKP_F_KEEP && two)
        return kb_ckp_keep2(mem, nbytes, pos, n, b, sh, X0, X1, cp, acc);
    if (!two)
        kb_stream32_init(&r, mem, pos);
    for (; n != 0; n--) {
        uint32_t y, d;
        if (two) {
            const uint32_t w = kb_window24(mem, nbytes, pos);
            pos += S;
            y = w & 1u;
            d = kb_ckp_dist2(w, X0, X1, b, mask, sh + 1u);
        } else {
            d = kb_ckp_slot(&r, x, M, b, sh, lim, &y);
        }
        if (f == KB_CKP_F_KEEP) {
            *cp++ = d << 1 | y;
            if (d < acc)
                acc = d;
        } else if (f == KB_CKP_F_LEAST) {
            if (d >= lo && d < acc)
                lim = acc = d;
        } else if (d - lo < span) { /* d >= lo too: below, d - lo wraps past 2^31 */
            const uint32_t w = kb_ckp_w32(m, d - lo, recip);
            acc = y ? acc + w : acc - w;
        }
    }
    return acc;
}

/* kb_ckp_run_f with f and two as constants: five loops, each without a test of either (the
 * least beyond a ring, only wanted on a tie or past KB_CKP_CACHE slots, always through the
 * stream: a native module's code is loaded into RAM). */
static uint32_t kb_ckp_run(const kb_ckp_t *m, const kb_ckp_centre_t *x, uint32_t i,
                           uint32_t pos, uint32_t n, uint32_t b, uint32_t lo, uint32_t recip,
                           uint32_t *cache, uint32_t acc, int f)
{
    if (KB_CKP_DIMS(m) == 2u && f != KB_CKP_F_LEAST) {
        if (f == KB_CKP_F_KEEP)
            return kb_ckp_run_f(m, x, i, pos, n, b, lo, recip, cache, acc, KB_CKP_F_KEEP, 1);
        return kb_ckp_run_f(m, x, i, pos, n, b, lo, recip, cache, acc, KB_CKP_F_WEIGH, 1);
    }
    if (f == KB_CKP_F_KEEP)
        return kb_ckp_run_f(m, x, i, pos, n, b, lo, recip, cache, acc, KB_CKP_F_KEEP, 0);
    if (f == KB_CKP_F_LEAST)
        return kb_ckp_run_f(m, x, i, pos, n, b, lo, recip, cache, acc, KB_CKP_F_LEAST, 0);
    return kb_ckp_run_f(m, x, i, pos, n, b, lo, recip, cache, acc, KB_CKP_F_WEIGH, 0);
}

/* The first bit of slot i under the schedule (b0, n1): i (1 + M b0) + M min(i, n1) (6.6);
 * below L <= 65535. */
KB_ALWAYS_INLINE uint32_t kb_ckp_slot_pos(const kb_ckp_t *m, uint32_t i, uint32_t b0,
                                          uint32_t n1)
{
    (void)m;
    return i * (1u + KB_CKP_DIMS(m) * b0) + KB_CKP_DIMS(m) * (i < n1 ? i : n1);
}

/* A pass `f` over slots first .. B-1 (schedule b0, n1) against the centres x, in runs of one
 * precision; KEEP keeps the slots below KB_CKP_CACHE and finds the least over the rest (with
 * lo = 0). acc as kb_ckp_run's. */
static uint32_t kb_ckp_pass(const kb_ckp_t *m, const kb_ckp_centre_t *x, uint32_t first,
                            uint32_t B, uint32_t b0, uint32_t n1, uint32_t lo, uint32_t recip,
                            uint32_t *cache, uint32_t acc, int f)
{
    uint32_t i = first, pos = kb_ckp_slot_pos(m, first, b0, n1);
    while (i < B) {
        const uint32_t b = i < n1 ? b0 + 1u : b0;
        uint32_t end = i < n1 ? n1 : B;
        int g = f;
        if (f == KB_CKP_F_KEEP) {
            if (i >= KB_CKP_CACHE)
                g = KB_CKP_F_LEAST;
            else if (end > KB_CKP_CACHE)
                end = KB_CKP_CACHE;
        }
        acc = kb_ckp_run(m, x, i, pos, end - i, b, lo, recip, cache, acc, g);
        pos += (end - i) * (1u + KB_CKP_DIMS(m) * b);
        i = end;
    }
    return acc;
}

/* y w(k) for a cache entry e = d << 1 | y at offset k = d - base > 0 (out of line: the loop of
 * kb_ckp_wsum keeps its few values in registers across the call). */
static KB_NOINLINE uint32_t kb_ckp_yw(const kb_ckp_t *m, uint32_t e, uint32_t k, uint32_t recip)
{
    const uint32_t w = kb_log_weight32(KB_CKP_TABLE(m), KB_CKP_NTAB(m), KB_CKP_C(m), recip, k);
    (void)m;
    return (e & 1u) ? w : 0u - w;
}

/* sum y w(d - base) over the cache entries e = d << 1 | y in [cp, end) with base <= d <
 * base + span, as two's complement; base2 = 2 base, span2 = 2 span. On the entries' own
 * scale e - base2 = 2 (d - base) + y, below span2 exactly when d - base < span (and past
 * 2^31 >= span2 when d < base). */
static KB_NOINLINE uint32_t kb_ckp_wsum(const kb_ckp_t *m, const uint32_t *cp,
                                        const uint32_t *end, uint32_t base2, uint32_t span2,
                                        uint32_t recip)
{
    uint32_t acc = 0;
    for (; cp != end; cp++) {
        const uint32_t t = *cp - base2;
        if (t < span2)
            acc += t < 2u ? ((t & 1u) ? KB_CKP_C(m) : 0u - KB_CKP_C(m))
                          : kb_ckp_yw(m, *cp, t >> 1, recip);
    }
    return acc;
}

/* sum y_i w(d_i - base) over the point's slots, base <= d_i (the kept ones from the cache,
 * the rest decoded again). */
static int32_t kb_ckp_weigh(const kb_ckp_t *m, const kb_ckp_centre_t *x, const uint32_t *cache,
                            uint32_t B, uint32_t b0, uint32_t n1, uint32_t base,
                            uint32_t recip)
{
    const uint32_t nc = B < KB_CKP_CACHE ? B : KB_CKP_CACHE;
    const uint32_t acc = kb_ckp_wsum(m, cache, cache + nc, base << 1, kb_ckp_span(m) << 1, recip);
    return (int32_t)kb_ckp_pass(m, x, nc, B, b0, n1, base, recip, NULL, acc, KB_CKP_F_WEIGH);
}

/* The nbits-bit (1..8) field at bit pos of mem. The second byte, when the field reaches it,
 * is addressed by the field's last bit, not as p[1]: with a one-byte memory GCC would
 * otherwise warn of p[1] (never read then). */
KB_ALWAYS_INLINE uint32_t kb_ckp_get32(const uint8_t *mem, uint32_t pos, uint32_t nbits)
{
    const uint32_t sh = pos & 7u;
    uint32_t v = (uint32_t)mem[pos >> 3] >> sh;
    if (sh + nbits > 8u)
        v |= (uint32_t)mem[(pos + nbits - 1u) >> 3] << (8u - sh);
    return v & ((1u << nbits) - 1u);
}

/* Write the nbits-bit (0..8) value v at bit pos of mem, every other bit kept (the second byte
 * addressed as in kb_ckp_get32). */
KB_ALWAYS_INLINE void kb_ckp_put32(uint8_t *mem, uint32_t pos, uint32_t nbits, uint32_t v)
{
    const uint32_t sh = pos & 7u, mask = ((1u << nbits) - 1u) << sh, bits = (v << sh) & mask;
    uint8_t *const p = mem + (pos >> 3);
    *p = (uint8_t)((*p & ~mask) | bits);
    if (sh + nbits > 8u) {
        uint8_t *const q = mem + ((pos + nbits - 1u) >> 3);
        *q = (uint8_t)((*q & ~(mask >> 8)) | (bits >> 8));
    }
}

/* B -> B + 1 slots (6.6), in one pass: each slot read at the old schedule (b0, n1) and written
 * at the new one (m->b, m->n1), its codes shifted right by the bits it loses, then the new slot
 * B (label y, codes of the centres x at m->b bits) and zeros to the end. In place: a slot
 * never moves up nor gains bits, so the writer never passes the reader, and it writes a byte
 * only once the reader has loaded it (both go byte by byte, the reader ahead). */
static void kb_ckp_lower32(kb_ckp_t *m, const kb_ckp_centre_t *x, uint8_t y, uint32_t B,
                           uint32_t b0, uint32_t n1)
{
    const uint32_t M = KB_CKP_DIMS(m), b = m->b, n1new = m->n1;
    uint8_t *w = KB_CKP_MEM(m), *const end = KB_CKP_MEM(m) + KB_CKP_MEM_BYTES(m);
    uint32_t wbuf = 0, wn = 0, i, j;
    kb_stream32_t r;
    kb_stream32_init(&r, KB_CKP_MEM(m), 0);
/* append the n-bit (0..8) value v: at most one byte completes (wn + n <= 15) */
#define KB_CKP_PUT(v, n)                                                                      \
    do {                                                                                      \
        wbuf |= (uint32_t)(v) << wn;                                                          \
        wn += (n);                                                                            \
        if (wn >= 8u) {                                                                       \
            *w++ = (uint8_t)wbuf;                                                             \
            wbuf >>= 8;                                                                       \
            wn -= 8u;                                                                         \
        }                                                                                     \
    } while (0)
    for (i = 0; i < B; i++) {
        const uint32_t bo = i < n1 ? b0 + 1u : b0, bn = i < n1new ? b + 1u : b;
        KB_CKP_PUT(kb_stream32_get(&r, 1), 1u);
        for (j = 0; j < M; j++)
            KB_CKP_PUT(kb_stream32_get(&r, bo) >> (bo - bn), bn);
    }
    /* the new slot: B >= n1new, so b bits; the input's centre 2u + 1 lies in bin x >> (P+1-b) */
    KB_CKP_PUT(y, 1u);
    for (j = 0; j < M; j++)
        KB_CKP_PUT((uint32_t)x[j] >> (KB_CKP_BITS(m) + 1u - b), b);
#undef KB_CKP_PUT
    if (wn != 0)
        *w++ = (uint8_t)wbuf;
    while (w < end)
        *w++ = 0;
}

/* Score the codes u and, unless `mistake` is NULL, learn them with label y (as kb_ckp_step
 * above: the same passes, the same values). */
static kb_ckp_score_t kb_ckp_step(kb_ckp_t *m, const uint8_t *u, uint8_t y, uint8_t *mistake)
{
    const kb_ckp_centre_t *const x = kb_ckp_centres(m, u);
    kb_ckp_centre_t *const rc = KB_CKP_SCRATCH(m) + KB_CKP_DIMS(m);
    const uint32_t B = m->count, n1 = m->n1, b0 = m->b, M = KB_CKP_DIMS(m);
    const uint32_t nc = B < KB_CKP_CACHE ? B : KB_CKP_CACHE, span = kb_ckp_span(m);
    const uint32_t recip = kb_recip24(KB_CKP_C(m));
    uint32_t cache[KB_CKP_CACHE];
    uint32_t base, next, i;
    int32_t s = 0, mg, delta;

    /* the score (contract 3.3, 6.4): the nearest ring, then farther ones while it cancels */
    base = kb_ckp_pass(m, x, 0, B, b0, n1, 0, recip, cache, 0xFFFFFFFFu, KB_CKP_F_KEEP);
    while (B != 0) {
        s = kb_ckp_weigh(m, x, cache, B, b0, n1, base, recip);
        if (s != 0)
            break;
        next = 0xFFFFFFFFu; /* every ring so far cancels: the next one, if any */
        for (i = 0; i < nc; i++)
            if ((cache[i] >> 1) > base && (cache[i] >> 1) < next)
                next = cache[i] >> 1;
        next = kb_ckp_pass(m, x, nc, B, b0, n1, base + 1u, recip, NULL, next, KB_CKP_F_LEAST);
        if (next == 0xFFFFFFFFu)
            break;
        base = next;
    }
    if (!mistake || !(y ? s <= 0 : s >= 0))
        return (kb_ckp_score_t)s;
    *mistake = 1;

    /* m(x) = sum y_i w(d_i) over every slot: the margin (6.4) */
    mg = B != 0 ? kb_ckp_weigh(m, x, cache, B, b0, n1, 0, recip) : 0;
    delta = y ? mg : -mg;
    if (B != 0 && !kb_ckp_adds(m)) { /* replace: the generator moves only here */
        const uint32_t R = kb_rng_below(&m->rng, (uint16_t)B);
        const uint32_t bR = R < n1 ? b0 + 1u : b0, pos = kb_ckp_slot_pos(m, R, b0, n1);
        const uint32_t yR = kb_ckp_get32(KB_CKP_MEM(m), pos, 1);
        uint32_t dR = 0, wR, p = pos + 1u;
        int32_t mR;
        for (i = 0; i < M; i++, p += bR) { /* c_R, and its distance to the point */
            const uint32_t v = kb_ckp_get32(KB_CKP_MEM(m), p, bR);
            int32_t diff;
            rc[i] = (kb_ckp_centre_t)((2u * v + 1u) << (KB_CKP_BITS(m) - bR));
            diff = (int32_t)x[i] - (int32_t)rc[i];
            dR += (uint32_t)(diff * diff);
        }
        wR = dR < span ? kb_ckp_w32(m, dR, recip) : 0u; /* k = w(|x - c_R|^2) */
        /* m(c_R) over every slot, R included (at distance 0) */
        mR = (int32_t)kb_ckp_pass(m, rc, 0, B, b0, n1, 0, recip, NULL, 0, KB_CKP_F_WEIGH);
        mR = y ? mR + (int32_t)wR : mR - (int32_t)wR; /* |margin| + C < 2^23 */
        delta = 2 * (delta - (yR ? mR : -mR) + KB_CKP_C(m));
        /* the slot rewritten in place: label y, the point's codes at bR bits */
        p = pos;
        kb_ckp_put32(KB_CKP_MEM(m), p++, 1, y);
        for (i = 0; i < M; i++, p += bR)
            kb_ckp_put32(KB_CKP_MEM(m), p, bR, (uint32_t)x[i] >> (KB_CKP_BITS(m) + 1u - bR));
    } else {
        if (B == 0) /* the first support vector: norm = 0 + 2*0 + C */
            m->norm = 0;
        m->count = (kb_ckp_count_t)(B + 1u);
        kb_ckp_schedule(m);
        kb_ckp_lower32(m, x, y, B, b0, n1);
        delta = 2 * delta + KB_CKP_C(m);
    }
    m->norm = kb_ckp_sat(m->norm + delta);
    return (kb_ckp_score_t)s;
}

#endif /* KB_FAST32 */

#else /* KB_CKP_ASM */

/* kb_ckp_t as kb_ckp_step.S addresses it */
typedef char kb_ckp_asm_layout[(offsetof(kb_ckp_t, count) == 2 && offsetof(kb_ckp_t, norm) == 3 &&
                                offsetof(kb_ckp_t, b) == 7 && offsetof(kb_ckp_t, n1) == 8)
                                   ? 1 : -1];
__extension__ typedef __int24 kb_ckp_i24_t;

/* kb_ckp_step of the model kb_ckp_model (m must point to it). The assembly changes most
 * registers and saves none, so the call is an asm statement that names them: the caller
 * (main, OS_main) saves only what it still needs. */
KB_ALWAYS_INLINE kb_ckp_score_t kb_ckp_step(kb_ckp_t *m, const uint8_t *u, uint8_t y,
                                            uint8_t *mistake)
{
    register const uint8_t *pu __asm__("r30") = u;
    register uint8_t py __asm__("r16") = (uint8_t)(mistake ? y : 2u);
    register kb_ckp_i24_t s __asm__("r22");
    register uint8_t miss __asm__("r25");
    (void)m;
    __asm__ __volatile__("%~call kb_ckp_step_avr"
                         : "=r"(s), "=r"(miss), "+z"(pu), "+r"(py)
                         :
                         : "r0", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11",
                           "r12", "r13", "r14", "r15", "r17", "r18", "r19", "r20", "r21", "r26",
                           "r27", "memory");
    if (mistake)
        *mistake = miss;
    return (kb_ckp_score_t)s;
}

#endif /* KB_CKP_ASM */

static inline kb_ckp_score_t kb_ckp_score(kb_ckp_t *m, const uint8_t *u)
{
    return kb_ckp_step(m, u, 0, NULL);
}

static inline uint8_t kb_ckp_predict(kb_ckp_t *m, const uint8_t *u)
{
    return (uint8_t)(kb_ckp_score(m, u) > 0);
}

/* One learning step (contract 6.5) for codes u (P bits each) and label y in {0, 1}. Returns
 * the score before learning; *mistake (may be NULL) is set to 1 on a mistake, else 0. */
static inline kb_ckp_score_t kb_ckp_learn(kb_ckp_t *m, const uint8_t *u, uint8_t y,
                                          uint8_t *mistake)
{
    uint8_t miss = 0;
    const kb_ckp_score_t s = kb_ckp_step(m, u, y, &miss);
    if (mistake)
        *mistake = miss;
    return s;
}

/* ---- the model file (contract 4, 6.7) ---- */
#ifdef KB_CKP_FILE
#include "kb_file.h"

/* Load a CKP model file into *m (left untouched on error): the checks of
 * kilobit.models.ckp.CKPInt.from_bytes in its order. Runtime parameters point into `data`, which
 * must
 * stay alive and writable, and use `scratch` (dims bytes); compile-time parameters must match
 * the file's (KB_ERR_MISMATCH) and the memory is copied into kb_ckp_mem. */
static inline kb_err_t kb_ckp_load(kb_ckp_t *m, uint8_t *data, size_t len, uint16_t *scratch)
{
    const uint8_t *p = data + KB_FILE_HEAD;
    uint32_t plen, off, nmem, top, maxsvs, k;
    uint8_t type, bits, C, ntab;
    uint16_t dims, L, width, rng, count, qstart, nq;
    uint8_t qshift;
    int32_t norm;
    kb_ckp_t t;
    kb_err_t err = kb_file_unpack(data, len, &type, &plen);

    if (err != KB_OK)
        return err;
    if (type != KB_FILE_TYPE_CKP)
        return KB_ERR_TYPE;
    if (plen < KB_CKP_PARAMS)
        return KB_ERR_TRUNCATED;
    bits = p[0];
    dims = kb_le16(p + 1);
    L = kb_le16(p + 3);
    width = kb_le16(p + 5);
    C = p[7];
    rng = kb_le16(p + 8);
    count = kb_le16(p + 10);
    norm = (int32_t)kb_le32(p + 12);
    ntab = p[16];
    if (bits < 1 || bits > 8 || dims < 1 || width < 1 || C < 1 || rng == 0)
        return KB_ERR_PARAM;
    top = (uint32_t)((2u << bits) - 1u);
    if (dims > KB_CKP_DIST_MAX / (top * top) || L < (uint32_t)dims + 1u)
        return KB_ERR_PARAM;
    maxsvs = L / ((uint32_t)dims + 1u);
    if (count > maxsvs || ntab > KB_TABLE_MAX || norm < KB_CKP_NORM_MIN || norm > KB_CKP_NORM_MAX)
        return KB_ERR_PARAM;
    off = KB_CKP_PARAMS + (uint32_t)ntab;
    if (plen < off + 5u)
        return KB_ERR_TRUNCATED;
    qstart = kb_le16(p + off);
    nq = kb_le16(p + off + 2);
    qshift = p[off + 4];
    if (qstart < 1 || (uint32_t)qstart + nq > (maxsvs > 1 ? maxsvs : 1u) || qshift > 22)
        return KB_ERR_PARAM;
    off += 5u;
    nmem = ((uint32_t)L + 7u) / 8u;
    if (plen - off < (uint32_t)nq + nmem + 1u)
        return KB_ERR_TRUNCATED;
    for (k = 0; k < ntab; k++)
        if (p[KB_CKP_PARAMS + k] == 0 || p[KB_CKP_PARAMS + k] > C ||
            (k > 0 && p[KB_CKP_PARAMS + k] > p[KB_CKP_PARAMS + k - 1]))
            return KB_ERR_TABLE;
    err = kb_file_trailer(p, plen, off + nq + nmem, dims);
    if (err != KB_OK)
        return err;
#ifdef KB_CKP_CONST
    (void)scratch;
    if (bits != KB_CKP_BITS(m) || dims != KB_CKP_DIMS(m) || L != KB_CKP_L(m) ||
        C != KB_CKP_C(m) || ntab != KB_CKP_NTAB(m) || qstart != KB_CKP_QSTART(m) ||
        nq != KB_CKP_NQ(m) || qshift != KB_CKP_QSHIFT(m))
        return KB_ERR_MISMATCH;
    for (k = 0; k < ntab; k++)
        if (p[KB_CKP_PARAMS + k] != KB_TABLE_READ(KB_CKP_TABLE(m), k))
            return KB_ERR_MISMATCH;
    for (k = 0; k < nq; k++)
        if (p[off + k] != KB_CKP_Q(m, k))
            return KB_ERR_MISMATCH;
#else
    t.bits = bits;
    t.dims = dims;
    t.L = L;
    t.width = width;
    t.C = C;
    t.ntab = ntab;
    t.table = p + KB_CKP_PARAMS;
    t.qstart = qstart;
    t.nq = nq;
    t.qshift = qshift;
    t.q = p + off;
    t.mem = data + KB_FILE_HEAD + off + nq;
    t.scratch = scratch;
#endif
    t.rng = rng;
    t.count = (kb_ckp_count_t)count;
    t.norm = norm;
    t.b = 0;
    t.n1 = 0;
    {
        /* every bit after the last support vector must be 0 (contract 6.6) */
        const uint8_t *mem = p + off + nq;
        uint32_t bit = 0;
        if (count) { /* the end of the last slot: B (1 + M b) + M n1 */
            kb_ckp_schedule(&t);
            bit = (uint32_t)count * (1u + (uint32_t)dims * t.b) + (uint32_t)dims * t.n1;
        }
        for (; bit < 8u * nmem; bit++)
            if ((mem[bit >> 3] >> (bit & 7u)) & 1)
                return KB_ERR_PARAM;
#ifdef KB_CKP_CONST
        for (k = 0; k < nmem; k++)
            kb_ckp_mem[k] = mem[k];
#endif
    }
    *m = t;
    return KB_OK;
}
#endif /* KB_CKP_FILE */

#endif /* KB_CKP_H */
