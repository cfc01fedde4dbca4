/*
 * armv6m.c - what GCC calls on a Cortex-M0/M0+ that a native module must bring itself.
 *
 * ARMv6-M has no divide instruction, so `/` and `%` become calls of the run-time ABI's
 * __aeabi_{u,}idiv{,mod}; MicroPython 1.23's dynruntime.mk links no libgcc (no LINK_RUNTIME),
 * and mpy_ld.py resolves no symbol of the firmware. The Makefile defines KBN_NEED_<helper> for
 * what each module's objects call (a helper nobody calls would only take flash).
 *
 * Division here is the portable shift-and-subtract loop, one step per quotient bit (the
 * callers divide small numbers: a 16-bit product by C, a bit budget by M, a fill counter by
 * P). An RP2040 has a hardware divider in its SIO block (0xd0000060..) that pico-sdk routes
 * `/` to; it is not used here, so that the same armv6m module also runs on other Cortex-M0
 * ports. Division by 0 never happens in these modules (every divisor is a parameter >= 1
 * checked by the loader); it returns quotient 0 and the dividend as the remainder.
 */
#include <stddef.h>
#include <stdint.h>

#if defined(KBN_NEED_UIDIV) || defined(KBN_NEED_IDIV) || defined(KBN_NEED_UIDIVMOD) || \
    defined(KBN_NEED_IDIVMOD)
/* quotient n / d, remainder in *r */
static uint32_t kbn_udivmod(uint32_t n, uint32_t d, uint32_t *r)
{
    uint32_t q = 0, bit = 1;
    if (d == 0) {
        *r = n;
        return 0;
    }
    /* align d under the top of n, then subtract back down */
    while (d < n && !(d & 0x80000000u)) {
        d <<= 1;
        bit <<= 1;
    }
    while (bit != 0) {
        if (n >= d) {
            n -= d;
            q |= bit;
        }
        d >>= 1;
        bit >>= 1;
    }
    *r = n;
    return q;
}

#endif

#if defined(KBN_NEED_IDIV) || defined(KBN_NEED_IDIVMOD)
static uint32_t kbn_abs(int32_t x)
{
    return x < 0 ? 0u - (uint32_t)x : (uint32_t)x;
}

/* C's truncating signed division: the quotient's sign is the product of the signs, the
 * remainder's that of the dividend. */
static int32_t kbn_idivmod(int32_t n, int32_t d, int32_t *r)
{
    uint32_t ur;
    const uint32_t uq = kbn_udivmod(kbn_abs(n), kbn_abs(d), &ur);
    *r = n < 0 ? -(int32_t)ur : (int32_t)ur;
    return (n < 0) != (d < 0) ? -(int32_t)uq : (int32_t)uq;
}
#endif

#ifdef KBN_NEED_UIDIV
uint32_t __aeabi_uidiv(uint32_t n, uint32_t d);
uint32_t __aeabi_uidiv(uint32_t n, uint32_t d)
{
    uint32_t r;
    return kbn_udivmod(n, d, &r);
}
#endif

#ifdef KBN_NEED_IDIV
int32_t __aeabi_idiv(int32_t n, int32_t d);
int32_t __aeabi_idiv(int32_t n, int32_t d)
{
    int32_t r;
    return kbn_idivmod(n, d, &r);
}
#endif

/* The divmod helpers return the quotient in r0 and the remainder in r1: a 64-bit value with
 * the quotient in its low word, under the AAPCS. */
#ifdef KBN_NEED_UIDIVMOD
uint64_t __aeabi_uidivmod(uint32_t n, uint32_t d);
uint64_t __aeabi_uidivmod(uint32_t n, uint32_t d)
{
    uint32_t r;
    const uint32_t q = kbn_udivmod(n, d, &r);
    return (uint64_t)q | (uint64_t)r << 32;
}
#endif

#ifdef KBN_NEED_IDIVMOD
uint64_t __aeabi_idivmod(int32_t n, int32_t d);
uint64_t __aeabi_idivmod(int32_t n, int32_t d)
{
    int32_t r;
    const int32_t q = kbn_idivmod(n, d, &r);
    return (uint64_t)(uint32_t)q | (uint64_t)(uint32_t)r << 32;
}
#endif

/* Switch tables: at -Os GCC compiles a dense switch for Thumb-1 as a call of libgcc's
 * __gnu_thumb1_case_* with the table of branch offsets right after the call (byte or halfword
 * entries, unsigned or signed): the helper reads entry r0 of the table at lr and returns past
 * lr plus twice that entry. The same four instructions as libgcc's (lib1funcs.S). */
#ifdef KBN_NEED_CASE
__asm__("    .text\n"
        "    .syntax unified\n"
        "    .code 16\n"
        "    .align 1\n"
        "    .global __gnu_thumb1_case_uqi\n"
        "    .thumb_func\n"
        "    .type __gnu_thumb1_case_uqi, %function\n"
        "__gnu_thumb1_case_uqi:\n"
        "    push {r1}\n"
        "    mov r1, lr\n"
        "    lsrs r1, r1, #1\n"
        "    lsls r1, r1, #1\n"
        "    ldrb r1, [r1, r0]\n"
        "    lsls r1, r1, #1\n"
        "    add lr, lr, r1\n"
        "    pop {r1}\n"
        "    bx lr\n"
        "    .size __gnu_thumb1_case_uqi, . - __gnu_thumb1_case_uqi\n"
        "    .align 1\n"
        "    .global __gnu_thumb1_case_sqi\n"
        "    .thumb_func\n"
        "    .type __gnu_thumb1_case_sqi, %function\n"
        "__gnu_thumb1_case_sqi:\n"
        "    push {r1}\n"
        "    mov r1, lr\n"
        "    lsrs r1, r1, #1\n"
        "    lsls r1, r1, #1\n"
        "    ldrsb r1, [r1, r0]\n"
        "    lsls r1, r1, #1\n"
        "    add lr, lr, r1\n"
        "    pop {r1}\n"
        "    bx lr\n"
        "    .size __gnu_thumb1_case_sqi, . - __gnu_thumb1_case_sqi\n"
        "    .align 1\n"
        "    .global __gnu_thumb1_case_uhi\n"
        "    .thumb_func\n"
        "    .type __gnu_thumb1_case_uhi, %function\n"
        "__gnu_thumb1_case_uhi:\n"
        "    push {r0, r1}\n"
        "    mov r1, lr\n"
        "    lsrs r1, r1, #1\n"
        "    lsls r0, r0, #1\n"
        "    lsls r1, r1, #1\n"
        "    ldrh r1, [r1, r0]\n"
        "    lsls r1, r1, #1\n"
        "    add lr, lr, r1\n"
        "    pop {r0, r1}\n"
        "    bx lr\n"
        "    .size __gnu_thumb1_case_uhi, . - __gnu_thumb1_case_uhi\n"
        "    .align 1\n"
        "    .global __gnu_thumb1_case_shi\n"
        "    .thumb_func\n"
        "    .type __gnu_thumb1_case_shi, %function\n"
        "__gnu_thumb1_case_shi:\n"
        "    push {r0, r1}\n"
        "    mov r1, lr\n"
        "    lsrs r1, r1, #1\n"
        "    lsls r0, r0, #1\n"
        "    lsls r1, r1, #1\n"
        "    ldrsh r1, [r1, r0]\n"
        "    lsls r1, r1, #1\n"
        "    add lr, lr, r1\n"
        "    pop {r0, r1}\n"
        "    bx lr\n"
        "    .size __gnu_thumb1_case_shi, . - __gnu_thumb1_case_shi\n");
#endif

#ifdef KBN_NEED_MEMSET
void *memset(void *s, int c, size_t n);
void *memset(void *s, int c, size_t n)
{
    uint8_t *p = s;
    while (n--)
        *p++ = (uint8_t)c;
    return s;
}
#endif

#ifdef KBN_NEED_MEMCPY
void *memcpy(void *dst, const void *src, size_t n);
void *memcpy(void *dst, const void *src, size_t n)
{
    uint8_t *d = dst;
    const uint8_t *s = src;
    while (n--)
        *d++ = *s++;
    return dst;
}
#endif
