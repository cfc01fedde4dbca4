/*
 * kb_kernel.h - what the kernel perceptrons share (docs/contract.md, 3.2 and 6): table access in
 * RAM or flash, products on a core without a multiplier, the log-method weight w(k) with
 * rounded division, and the bit-packed memory's stream reader and field writer.
 *
 * kb_rkp.h (Random Kernel Perceptron) and kb_ckp.h (Compressed Kernel Perceptron) both use
 * these; a translation unit may include both.
 */
#ifndef KB_KERNEL_H
#define KB_KERNEL_H

#include <limits.h>
#include <stdint.h>

#define KB_TABLE_MAX 32

/* KB_FAST32: the kernels' 32-bit path (kb_rkp.h, kb_ckp.h), for cores whose int has 32 bits
 * (Cortex-M0+, x64): the support vectors decoded through a 32-bit bit buffer, the rounded
 * division of the weights as a multiply, fields skipped once a partial distance decides. Same
 * values as the byte-wise code, which 16-bit-int cores (AVR) keep unchanged: there a 32-bit
 * buffer is four registers shifted one bit per instruction, and flash, not time, is what runs
 * out. -DKB_NO_FAST32 builds the byte-wise code anywhere (tests compare the two). */
#if !defined(KB_FAST32) && !defined(KB_NO_FAST32) && UINT_MAX >= 0xFFFFFFFFu
#define KB_FAST32
#endif

/* Table access. On AVR a table in flash must be read with pgm_read_byte; anything else (a
 * table in EEPROM, a cached copy) can supply its own KB_TABLE_READ before including. */
#ifndef KB_TABLE_READ
#ifdef KB_TABLE_PROGMEM
#include <avr/pgmspace.h>
#define KB_TABLE_READ(t, i) pgm_read_byte(&(t)[i])
#else
#define KB_TABLE_READ(t, i) ((t)[i])
#endif
#endif

/* For the innermost helpers only: at -Os GCC would otherwise make them calls, which on AVR
 * also forces their state out of registers into RAM. */
#ifdef __GNUC__
#define KB_ALWAYS_INLINE static inline __attribute__((always_inline))
#else
#define KB_ALWAYS_INLINE static inline
#endif

#ifdef KB_TABLE_PROGMEM
#define KB_FLASH PROGMEM
#else
#define KB_FLASH
#endif

/* ---- products on a core without a multiplier ---- */

/* The ATtiny2313 (like every AVR without MUL) multiplies through libgcc: __mulhi3 loops over all
 * 16 bits, __mulsi3 over 32. The products below have one 8-bit factor, so a shift-add loop over
 * that factor's bits, stopping when none are left, does the same exactly in a fraction of the
 * time. Elsewhere the plain product is used. */
#if defined(__AVR__) && !defined(__AVR_HAVE_MUL__)
#define KB_SOFT_MUL
#endif

/* a * b for 8-bit factors: the square of an rbf difference. */
KB_ALWAYS_INLINE uint16_t kb_mul8(uint8_t a, uint8_t b)
{
#ifdef KB_SOFT_MUL
    uint16_t x = a, p = 0;
    for (; b != 0; b >>= 1, x = (uint16_t)(x << 1))
        if (b & 1u)
            p = (uint16_t)(p + x);
    return p;
#else
    return (uint16_t)((uint16_t)a * b);
#endif
}

/* diff^2 for rbf: not inlined without a multiplier, where the loop is worth one copy only. */
#ifdef KB_SOFT_MUL
static __attribute__((noinline, unused)) uint16_t kb_sq8(uint8_t diff)
{
    return kb_mul8(diff, diff);
}
#else
#define kb_sq8(diff) kb_mul8((diff), (diff))
#endif

/* w(k), the log method with rounded division (contract 3.2): P[j] for the highest set bit j
 * of k, then one rounded multiply per lower set bit; 0 as soon as the weight is known to be 0.
 * KB_LOG_WEIGHT_DEF(name, key type) defines it for a key type: each model passes the narrowest
 * type its distances need (on an 8-bit core a wider key is more code and more cycles). */
#define KB_LOG_WEIGHT_DEF(name, key_t)                                                        \
    static inline uint8_t name(const uint8_t *table, uint8_t ntab, uint8_t C, key_t k)        \
    {                                                                                         \
        key_t bit;                                                                            \
        uint8_t j = 0, w;                                                                     \
        (void)table;                                                                          \
        if (k == 0)                                                                           \
            return C;                                                                         \
        for (bit = k; bit > 1; bit >>= 1)                                                     \
            j++;                                                                              \
        if (j + 1u > ntab) /* j >= J, i.e. k >= 2^J: w(k) = 0 (no warning at J = 0) */       \
            return 0;                                                                         \
        w = KB_TABLE_READ(table, j);                                                          \
        bit = (key_t)((key_t)1 << j);                                                         \
        while (j-- > 0) {                                                                     \
            bit >>= 1;                                                                        \
            if (k & bit) {                                                                    \
                /* w*P + C/2 <= 255*255 + 127 = 65152: unsigned 16-bit, never AVR's int */    \
                const uint16_t prod = kb_mul8(w, KB_TABLE_READ(table, j));                    \
                w = (uint8_t)((uint16_t)(prod + (uint16_t)(C >> 1)) / C);                     \
                if (w == 0)                                                                   \
                    return 0;                                                                 \
            }                                                                                 \
        }                                                                                     \
        return w;                                                                             \
    }

#ifdef KB_FAST32
/* For a hot loop of the 32-bit path that must keep its own registers: inlined into a caller
 * with many live values, GCC's Thumb-1 code spills what the loop needs to the stack. */
#ifdef __GNUC__
#define KB_NOINLINE __attribute__((noinline))
#else
#define KB_NOINLINE
#endif

/* ceil(2^24 / C), C in 1..255: the reciprocal that turns the log method's rounded division
 * into a multiply (kb_log_weight32). One division, made once per score or step. */
static inline uint32_t kb_recip24(uint8_t C)
{
    return (0x1000000u + (uint32_t)C - 1u) / C; /* no %: a native module has no __aeabi_uidivmod */
}

/* floor(x / C) as (x * ceil(2^24 / C)) >> 24, for 0 <= x <= C*C + C/2 and C in 1..255: the
 * dividends of the log method (w <= C because P[b] <= C, so w*P[b] + C/2 <= C*C + C/2). Why
 * exact: recip = (2^24 + e)/C with 0 <= e < C, so x*recip/2^24 = x/C + x*e/(C*2^24); with
 * x = qC + r (r <= C - 1) the floor stays q while r + x*e/2^24 < C, i.e. x*e < 2^24, and
 * x*e < (C*C + C/2)(C - 1) < C^3 <= 255^3 < 2^24. The product is at most
 * (C + 1/2)(2^24 + C - 1) < 2^32. `kb_selftest recip` checks every such (C, x) exhaustively
 * (tests/test_c_runtime.py). */
KB_ALWAYS_INLINE uint32_t kb_div_recip24(uint32_t x, uint32_t recip)
{
    return (x * recip) >> 24;
}

/* w(k) of contract 3.2 for 0 < k < 2^ntab (the callers test k == 0 and k >= 2^ntab, which
 * cost nothing there; a distance, and so k, is below 2^30): P[j] for the highest set bit j of
 * k, then one rounded multiply per lower set bit, the division by C as kb_div_recip24
 * (recip = kb_recip24(C)). No division on cores without one (a Cortex-M0+'s `/` is a library
 * call of 8-40 cycles, or a loop in a native module). One scan down from bit J-1 finds j and
 * then each lower set bit: an offset below 2^J is most often within a bit or two of the top. */
static inline uint32_t kb_log_weight32(const uint8_t *table, uint32_t ntab, uint32_t C,
                                       uint32_t recip, uint32_t k)
{
    const uint32_t half = C >> 1, top = (ntab < 30u ? ntab : 30u) - 1u;
    uint32_t bit = 1u << top, w;
    table += top;
    while (!(k & bit)) {
        bit >>= 1;
        table--;
    }
    w = KB_TABLE_READ(table, 0);
    for (k ^= bit; k != 0; k ^= bit) { /* k: the set bits still to apply */
        do {
            bit >>= 1;
            table--;
        } while (!(k & bit));
        w = kb_div_recip24(w * KB_TABLE_READ(table, 0) + half, recip);
        if (w == 0)
            return 0;
    }
    return w;
}

/* The bit-packed memory (contract 3.5: bit p is bit p%8 of byte p/8, fields LSB first) as
 * one stream of bits through a 32-bit buffer: `buf` holds the `nb` unread bits, the next one
 * lowest, and nothing above them. A byte is loaded only when a field needs it, so the stream
 * never reads past the last byte its fields occupy (a native module's bytearray ends there). */
typedef struct {
    const uint8_t *p; /* the next byte to load */
    uint32_t buf;
    uint32_t nb;
} kb_stream32_t;

/* The stream from bit `pos` of mem. */
KB_ALWAYS_INLINE void kb_stream32_init(kb_stream32_t *r, const uint8_t *mem, uint32_t pos)
{
    const uint32_t off = pos & 7u;
    r->p = mem + (pos >> 3);
    r->buf = 0;
    r->nb = 0;
    if (off != 0) { /* that byte holds the first field: within the memory */
        r->buf = (uint32_t)*r->p++ >> off;
        r->nb = 8u - off;
    }
}

/* The 24 bits of mem from bit pos on, lowest first, shifted down by pos & 7: a group of up to
 * 17 bits starting at pos (a 2-D support vector of either model), whole, with no stream state
 * to carry from one to the next (registers are few on a Cortex-M0+). Bytes past the memory's
 * nbytes are not loaded (they read as 0; the group ends before them). */
KB_ALWAYS_INLINE uint32_t kb_window24(const uint8_t *mem, uint32_t nbytes, uint32_t pos)
{
    const uint32_t i = pos >> 3;
    const uint8_t *const p = mem + i;
    uint32_t w = p[0];
    if (i + 2u < nbytes)
        w |= (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
    else if (i + 1u < nbytes)
        w |= (uint32_t)p[1] << 8;
    return w >> (pos & 7u);
}

/* The next n (0..8) bits: a byte load at most (nb + 8 >= n). */
KB_ALWAYS_INLINE uint32_t kb_stream32_get(kb_stream32_t *r, uint32_t n)
{
    uint32_t v;
    if (r->nb < n) {
        r->buf |= (uint32_t)*r->p++ << r->nb;
        r->nb += 8u;
    }
    v = r->buf & ((1u << n) - 1u);
    r->buf >>= n;
    r->nb -= n;
    return v;
}

/* Drop the next n bits (the rest of a support vector whose distance is decided); nb < 16. */
KB_ALWAYS_INLINE void kb_stream32_skip(kb_stream32_t *r, uint32_t n)
{
    if (n <= r->nb) {
        r->buf >>= n;
        r->nb -= n;
        return;
    }
    n -= r->nb;
    r->p += n >> 3;
    r->buf = 0;
    r->nb = 0;
    n &= 7u;
    if (n != 0) { /* that byte still holds bits of this support vector: within the memory */
        r->buf = (uint32_t)*r->p++ >> n;
        r->nb = 8u - n;
    }
}
#endif /* KB_FAST32 */

/* ---- bit-packed memory: bit p is bit p%8 of byte p/8, fields LSB first (contract 3.5) ---- */

/* Support vectors are contiguous, so a model decodes the memory as one stream of fields and
 * never computes a bit position: on an 8-bit core without a barrel shifter, a per-field
 * `pos >> 3` and `byte >> (pos & 7)` cost more than the arithmetic of the kernel. */
typedef struct {
    const uint8_t *next; /* next byte to load */
    uint8_t bits;        /* the unread rest of the last byte loaded, next field lowest */
    uint8_t have;        /* how many, 0..7 */
} kb_bitreader_t;

static inline void kb_bitreader_init(kb_bitreader_t *r, const uint8_t *mem)
{
    r->next = mem;
    r->bits = 0;
    r->have = 0;
}

/* The next nbits (1..8) bits. All 8-bit arithmetic: AVR shifts one bit per instruction, so a
 * 16-bit bit buffer would double the cost of every field. A byte is loaded only when the
 * field needs it, so the stream never reads past the last byte its fields occupy. */
KB_ALWAYS_INLINE uint8_t kb_bitreader_get(kb_bitreader_t *r, uint8_t nbits)
{
    const uint8_t mask = (uint8_t)((1u << nbits) - 1u);
    uint8_t v;
    if (r->have >= nbits) {
        v = (uint8_t)(r->bits & mask);
        r->bits = (uint8_t)(r->bits >> nbits);
        r->have = (uint8_t)(r->have - nbits);
    } else { /* low `have` bits from the old byte, the rest from the next one */
        const uint8_t byte = *r->next++;
        const uint8_t used = (uint8_t)(nbits - r->have); /* 1..8 bits of `byte` */
        v = (uint8_t)((r->bits | (uint8_t)(byte << r->have)) & mask);
        r->bits = (uint8_t)(byte >> used);
        r->have = (uint8_t)(8u - used);
    }
    return v;
}

/* Write the nbits-bit (1..8) value at bit `shift` (0..7) of p[0], LSB first, into p[1] when it
 * does not fit; every other bit is kept. */
KB_ALWAYS_INLINE void kb_bits_put_at(uint8_t *p, uint8_t shift, uint8_t nbits, uint8_t value)
{
    const uint16_t mask = (uint16_t)(((1u << nbits) - 1u) << shift);
    const uint16_t bits = (uint16_t)(((uint16_t)value << shift) & mask);
    p[0] = (uint8_t)((p[0] & ~mask) | bits);
    if (shift + nbits > 8)
        p[1] = (uint8_t)((p[1] & ~(mask >> 8)) | (bits >> 8));
}

#endif /* KB_KERNEL_H */
