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

#include <stdint.h>

#define KB_TABLE_MAX 32

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
