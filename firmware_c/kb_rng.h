/*
 * kb_rng.h - the one pseudo-random generator of kilobit (docs/contract.md, section 2).
 *
 * 16-bit xorshift with shifts (7, 9, 8). Chosen for the ATtiny2313: shifts and xors on two
 * registers, no table, no division; `below` takes the high half of a 16x16->32 product instead
 * of a modulo. Every runtime must produce the same sequence, so the arithmetic is spelled out
 * with explicit uint16_t/uint32_t casts: on AVR `int` is 16-bit signed and an unguarded
 * promotion would change the result or be undefined.
 */
#ifndef KB_RNG_H
#define KB_RNG_H

#include <stdint.h>

/* The generator state: 1..65535. 0 is a fixed point of xorshift, hence invalid. */
typedef uint16_t kb_rng_t;

/* Map any seed to a valid state, as kilobit.core.rng.seed_state (the modulo runs once, at init). */
static inline kb_rng_t kb_rng_seed(uint32_t seed)
{
    return (kb_rng_t)(seed % 65535u + 1u);
}

static inline uint16_t kb_rng_next(kb_rng_t *state)
{
    uint16_t x = *state;
    x = (uint16_t)(x ^ (uint16_t)(x << 7));
    x = (uint16_t)(x ^ (x >> 9));
    x = (uint16_t)(x ^ (uint16_t)(x << 8));
    *state = x;
    return x;
}

/* Integer in [0, n) for n <= 65535: the high half of next() * n. The product needs all 32 bits
 * unsigned (0xFFFF * 0xFFFF), so both operands are widened before multiplying. */
static inline uint16_t kb_rng_below(kb_rng_t *state, uint16_t n)
{
#if defined(__AVR__) && !defined(__AVR_HAVE_MUL__)
    /* No multiplier (ATtiny2313): libgcc's __mulsi3 loops over 32 bits, several hundred
     * cycles. The same product by shift-and-add over the bits of n only, in 32-bit adds. */
    uint32_t x = kb_rng_next(state), p = 0;
    for (; n != 0; n >>= 1, x <<= 1)
        if (n & 1u)
            p += x;
    return (uint16_t)(p >> 16);
#else
    return (uint16_t)(((uint32_t)kb_rng_next(state) * (uint32_t)n) >> 16);
#endif
}

#endif /* KB_RNG_H */
