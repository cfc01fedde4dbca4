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
 * the reference and the build everywhere else (host, Uno).
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
    uint32_t plen, off, nmem, rest, top, maxsvs, k;
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
    rest = plen - off - nq - nmem - 1u; /* bytes after the scaler flag */
    if (p[off + nq + nmem] == 1) {
        if (rest != 8u * dims) /* float32 lo[dims], hi[dims]: skipped, never read */
            return KB_ERR_TRUNCATED;
    } else if (p[off + nq + nmem] != 0 || rest != 0) {
        return KB_ERR_TRAILER;
    }
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
            if ((mem[bit >> 3] >> (bit & 7u)) & 1u)
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
