/*
 * kb_fixed.h - fixed-point helpers of the host-trained predictors (docs/contract.md, 7.1).
 *
 * C's >> on a negative signed integer is implementation-defined, so nothing here shifts a
 * negative signed value: kb_floor_shift32 works on the bit pattern of a non-negative value and
 * gives Python's x >> s (floor division by 2^s) for every int32_t x. int32_t is two's
 * complement by definition (C99 7.18.1.1).
 */
#ifndef KB_FIXED_H
#define KB_FIXED_H

#include <stdint.h>

#define KB_SMALL 0x3FFFFFFFL /* every intermediate stays within +-(2^30 - 1) */
#define KB_ACT_MAX 32767      /* activations saturate to +-32767 */
#define KB_SHIFT_MAX 30

/* floor(x / 2^s), 0 <= s <= 31: Python's x >> s. */
static inline int32_t kb_floor_shift32(int32_t x, uint8_t s)
{
    if (x >= 0)
        return (int32_t)((uint32_t)x >> s);
    return -1 - (int32_t)((uint32_t)(-1 - x) >> s); /* -1 - x >= 0: no overflow */
}

/* floor((x + 2^(s-1)) / 2^s) for s >= 1 (round half up), x for s == 0: (x >> s) + bit s-1. */
#if defined(__AVR__)
/* The same in AVR assembly: y = x >> (s - 1) by the arithmetic shift instructions (ASR, the
 * floor shift of the bit pattern: no C shift of a negative value; whole bytes by register moves,
 * then bit by bit), then one more whose carry out is bit s-1, added back: 20 to 50 cycles where
 * avr-gcc's variable shifts of 32 bits take about 6 a bit, twice. */
static inline __attribute__((always_inline)) int32_t kb_rshift_round32(int32_t x, uint8_t s)
{
    __asm__("tst %[s]\n\t"
            "breq 4f\n\t"
            "dec %[s]\n"
            "1:\n\t"
            "cpi %[s], 8\n\t"
            "brlo 2f\n\t"
            "mov %A[x], %B[x]\n\t"
            "mov %B[x], %C[x]\n\t"
            "mov %C[x], %D[x]\n\t"
            "lsl %D[x]\n\t"
            "sbc %D[x], %D[x]\n\t"
            "subi %[s], 8\n\t"
            "rjmp 1b\n"
            "2:\n\t"
            "tst %[s]\n\t"
            "breq 3f\n"
            "5:\n\t"
            "asr %D[x]\n\t"
            "ror %C[x]\n\t"
            "ror %B[x]\n\t"
            "ror %A[x]\n\t"
            "dec %[s]\n\t"
            "brne 5b\n"
            "3:\n\t"
            "asr %D[x]\n\t"
            "ror %C[x]\n\t"
            "ror %B[x]\n\t"
            "ror %A[x]\n\t"
            "adc %A[x], __zero_reg__\n\t"
            "adc %B[x], __zero_reg__\n\t"
            "adc %C[x], __zero_reg__\n\t"
            "adc %D[x], __zero_reg__\n"
            "4:"
            : [x] "+r"(x), [s] "+d"(s));
    return x;
}
#else
static inline int32_t kb_rshift_round32(int32_t x, uint8_t s)
{
    int32_t y;
    if (s == 0)
        return x;
    y = kb_floor_shift32(x, (uint8_t)(s - 1u));
    return kb_floor_shift32(y, 1) + (int32_t)((uint32_t)y & 1u);
}
#endif

static inline int32_t kb_sat_act(int32_t x)
{
    return x > KB_ACT_MAX ? KB_ACT_MAX : (x < -KB_ACT_MAX ? -KB_ACT_MAX : x);
}

/* Constant data: in flash (PROGMEM) on AVR builds that define KB_FLASH_PROGMEM. */
#if defined(KB_FLASH_PROGMEM) && defined(__AVR__)
#include <avr/pgmspace.h>
#define KB_FLASH_BYTE(p) pgm_read_byte(p)
#else
#define KB_FLASH_BYTE(p) (*(const uint8_t *)(p))
#endif

#endif /* KB_FIXED_H */
