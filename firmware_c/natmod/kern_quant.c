/* kern_quant.c - the kernel of _kb_quant: kb_quant.h's loops over a model's readings (kbn.h). */
#define KB_QUANT_INLINE static inline __attribute__((always_inline))
#include <stddef.h>

#include "kbn.h"

/* kbit.quant.Quantizer's table t holds lo, up and M of feature j at t[3j], t[3j+1], t[3j+2]
 * (q->lo = t, q->hi = t + 1, q->M = t + 2), where up, the first reading whose code is top,
 * stands for hi (quant.py): kb_quant_code's x >= hi gives top from there on, and its clamp to
 * top never acts below it. */
#if defined(__thumb__) && !defined(__thumb2__)
/* Cortex-M0+ (the RP2040): GCC's code for the C loops keeps R, S and top on the stack and a
 * pointer for each of lo, up and M (39 cycles a reading at -O2). Written out, one LDM reads a
 * feature's three words, R, S and top wait in high registers, a negative index walks raw and
 * out towards their ends (its increment sets the flags the loop branches on), and no clamp is
 * needed below up: 21 cycles a reading (22 with assoc's offset). The same steps as
 * kb_quant_code: x <= lo: 0; x >= up: top, or 0 where M is 0; else ((x - lo) * M + R) >> S.
 * A function of its own, not inline asm: GCC does not save the high registers an asm
 * statement's register variables take. Called as f(q, raw, out) with q->n >= 1, it reads q's
 * fields at the offsets checked below. */
#define KBN_QUANT_ASM(name, load, size_log2, add_off)                                          \
    __asm__(".syntax unified\n\t"                                                             \
            ".text\n\t"                                                                       \
            ".balign 2\n\t"                                                                   \
            ".global " #name "\n\t"                                                           \
            ".hidden " #name "\n\t"                                                           \
            ".type " #name ", %function\n\t"                                                  \
            ".thumb_func\n"                                                                   \
            #name ":\n\t"                                                                     \
            "push {r4, r5, r6, r7, lr}\n\t"                                                   \
            "mov r4, r8\n\t"                                                                  \
            "mov r5, r9\n\t"                                                                  \
            "mov r6, r10\n\t"                                                                 \
            "mov r7, r11\n\t"                                                                 \
            "push {r4, r5, r6, r7}\n\t"                                                       \
            "ldr r4, [r0, #4]\n\t"                                                            \
            "mov r8, r4\n\t" /* R */                                                          \
            "ldrb r4, [r0, #3]\n\t"                                                           \
            "mov r9, r4\n\t" /* S */                                                          \
            "ldrb r4, [r0, #2]\n\t"                                                           \
            "mov r10, r4\n\t" /* top */                                                       \
            "ldrb r4, [r0, #8]\n\t"                                                           \
            "negs r4, r4\n\t"                                                                 \
            "mov r11, r4\n\t" /* -offset */                                                   \
            "ldrh r7, [r0, #0]\n\t" /* n */                                                   \
            "adds r3, r2, r7\n\t" /* out + n */                                               \
            "lsls r4, r7, #" #size_log2 "\n\t"                                                \
            "adds r2, r1, r4\n\t" /* raw + n */                                               \
            "ldr r1, [r0, #12]\n\t" /* t */                                                   \
            "negs r7, r7\n" /* the index, -n .. -1 */                                         \
            "0:\n\t" load                                                                     \
            "ldmia r1!, {r4, r5, r6}\n\t" /* lo, up, M */                                     \
            "cmp r0, r4\n\t"                                                                  \
            "ble 2f\n\t"                                                                      \
            "cmp r0, r5\n\t"                                                                  \
            "bge 3f\n\t"                                                                      \
            "subs r0, r0, r4\n\t"                                                             \
            "muls r0, r6, r0\n\t"                                                             \
            "add r0, r8\n\t"                                                                  \
            "mov r5, r9\n\t"                                                                  \
            "lsrs r0, r0, r5\n"                                                               \
            "1:\n\t" add_off                                                                  \
            "strb r0, [r3, r7]\n\t"                                                           \
            "adds r7, #1\n\t"                                                                 \
            "bne 0b\n\t"                                                                      \
            "pop {r4, r5, r6, r7}\n\t"                                                        \
            "mov r8, r4\n\t"                                                                  \
            "mov r9, r5\n\t"                                                                  \
            "mov r10, r6\n\t"                                                                 \
            "mov r11, r7\n\t"                                                                 \
            "pop {r4, r5, r6, r7, pc}\n"                                                       \
            "2:\n\t"                                                                          \
            "movs r0, #0\n\t"                                                                 \
            "b 1b\n"                                                                          \
            "3:\n\t"                                                                          \
            "mov r0, r10\n\t"                                                                 \
            "cmp r6, #0\n\t"                                                                  \
            "bne 1b\n\t"                                                                      \
            "movs r0, #0\n\t"                                                                 \
            "b 1b\n\t"                                                                        \
            ".size " #name ", . - " #name "\n");                                              \
    void name(const kb_quant_t *q, const void *raw, void *out)
#define KBN_LOAD16 "adds r4, r7, r7\n\tldrsh r0, [r2, r4]\n\t"
#define KBN_LOAD32 "lsls r4, r7, #2\n\tldr r0, [r2, r4]\n\t"
#define KBN_OFF "add r0, r11\n\t"
KBN_QUANT_ASM(codes3, KBN_LOAD16, 1, "");
KBN_QUANT_ASM(codes3_32, KBN_LOAD32, 2, "");
KBN_QUANT_ASM(values3, KBN_LOAD16, 1, KBN_OFF);
KBN_QUANT_ASM(values3_32, KBN_LOAD32, 2, KBN_OFF);

/* the offsets the loops read (a negative array size fails the build) */
#define KBN_AT(f, at) (offsetof(kb_quant_t, f) == (at))
typedef char kbn_quant_layout[KBN_AT(n, 0) && KBN_AT(top, 2) && KBN_AT(S, 3) && KBN_AT(R, 4) &&
                                      KBN_AT(offset, 8) && KBN_AT(lo, 12) ? 1 : -1];
#else
KB_QUANT_LOOP(codes3, int16_t, uint8_t, KB_QUANT_CODE, 3)
KB_QUANT_LOOP(codes3_32, int32_t, uint8_t, KB_QUANT_CODE, 3)
KB_QUANT_LOOP(values3, int16_t, int8_t, KB_QUANT_VALUE, 3)
KB_QUANT_LOOP(values3_32, int32_t, int8_t, KB_QUANT_VALUE, 3)
#endif

/* -O2 here (the modules build -Os): the C loops of the x64 build inlined and unrolled */
__attribute__((optimize("O2"))) int kbn_quant_run(const kb_quant_t *q, const void *raw, int wide,
                                                  void *out)
{
    if (q->n == 0) /* the context never binds one; the armv6m loops count from -n up to 0 */
        return 0;
    if (wide) {
        /* kbit refuses a reading outside -2^30 .. 2^30-1 before anything is written: each
         * shifted by 2^30 into 0 .. 2^31-1, one below wrapping far above, so the OR tells */
        const int32_t *r = raw, *const end = r + q->n;
        uint32_t any = 0;
        while (r < end)
            any |= (uint32_t)*r++ + 0x40000000u;
        if (any >= 0x80000000u)
            return -1;
        if (q->offset)
            values3_32(q, raw, out);
        else
            codes3_32(q, raw, out);
    } else if (q->offset) {
        values3(q, raw, out);
    } else {
        codes3(q, raw, out);
    }
    return 0;
}
