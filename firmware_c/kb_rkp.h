/*
 * kb_rkp.h - Random Kernel Perceptron, integer only (docs/contract.md, section 3).
 *
 * Header-only, no malloc, no recursion, no floating point. The host integer reference
 * kilobit.models.rkp.RKPInt is the specification; this code must agree with it bit for bit.
 *
 * Two configurations share every line of the algorithm below:
 *
 *  - Runtime parameters (default). kb_rkp_t carries kernel, bits, dims, budget, C, the power
 *    table and a pointer to the support-vector memory; kb_file.h fills it from a .kb file.
 *
 *  - Compile-time parameters, for chips where every byte counts (ATtiny2313: 2 KiB flash,
 *    128 B RAM). Define before including this header (a host tool generates these):
 *        KB_RKP_CONST
 *        KB_RKP_CONST_KERNEL  KB_RKP_CONST_BITS  KB_RKP_CONST_DIMS  KB_RKP_CONST_BUDGET
 *        KB_RKP_CONST_C       KB_RKP_CONST_NTAB  KB_RKP_CONST_TABLE_INIT  (e.g. {5})
 *    The parameters become constants the compiler folds, the power table becomes the array
 *    kb_rkp_table (in flash with KB_TABLE_PROGMEM), the memory the static array kb_rkp_mem,
 *    and kb_rkp_t shrinks to the generator state and the count. The arrays are defined here,
 *    so include this header from one translation unit only in that mode.
 *
 * Every parameter is read through a KB_RKP_<NAME>(m) accessor and every table byte through
 * KB_TABLE_READ(table, i), which is what lets one source serve both configurations.
 *
 * Cost on an ATtiny2313 (the paper's setting: laplace, B = 4, M = 2, 62 support vectors,
 * J = 1): one learning step decodes each support vector once, whole (kb_reader_t's window),
 * into two register accumulators, about 60 cycles each; about 4,600 cycles per step in all,
 * measured by `kilobit bench avr` (docs/benchmarks/avr-rkp.md). See kb_rkp_score for the score
 * algorithms. What makes that possible on a core without multiplier or barrel shifter: no
 * shift by a variable count in the inner loop, no libgcc multiply (kb_mul_score and friends),
 * and, with compile-time parameters, the weights w(0..2^J-1) as a flash table
 * (KB_RKP_CONST_WTAB_INIT) instead of the log method's divisions.
 *
 * Cores whose int has 32 bits (Cortex-M0+, x64; kb_kernel.h's KB_FAST32) compile another
 * score, same values, decoded word-wise (see "the 32-bit path" below): the paper's Banana
 * setting then costs about 4,100 cycles a learning step on the emulated RP2040 (bare C,
 * tools/pico/floor), against 11,400 for the code the AVRs compile.
 *
 * Optional compile-time inputs besides the parameters: KB_RKP_CONST_MEM_INIT (the initial
 * memory of a saved model), KB_RKP_CONST_WTAB_INIT (see kb_rkp_wtab), KB_RKP_ACC_LOG2 (largest
 * J scored in one pass; 2^J accumulators live on the stack), KB_RKP_NO_WINDOW.
 *
 * Type choices (AVR `int` is 16-bit signed, so nothing that can exceed 32767 is left to int):
 *  - distances: uint16_t suffices for laplace (the loader caps it at 65535), rbf needs
 *    uint32_t (capped at 2^30 - 1). A runtime-configured build uses uint32_t for both; a
 *    compile-time one the narrowest type that holds M*(2^B-1) or M*(2^B-1)^2.
 *  - the score: int32_t, or int16_t when budget * C <= 32767 (define KB_SCORE16, automatic
 *    for compile-time configurations that fit; KB_SCORE32 forces 32 bits).
 */
#ifndef KB_RKP_H
#define KB_RKP_H

#include <stddef.h>
#include <stdint.h>

#include "kb_kernel.h"
#include "kb_rng.h"

#define KB_KERNEL_LAPLACE 0
#define KB_KERNEL_RBF 1
#define KB_LAPLACE_DIST_MAX 65535u            /* d fits uint16_t */
#define KB_RBF_DIST_MAX 1073741823u           /* 2^30 - 1: a MicroPython small int */

#ifdef KB_RKP_CONST

#if !defined(KB_RKP_CONST_KERNEL) || !defined(KB_RKP_CONST_BITS) || \
    !defined(KB_RKP_CONST_DIMS) || !defined(KB_RKP_CONST_BUDGET) || \
    !defined(KB_RKP_CONST_C) || !defined(KB_RKP_CONST_NTAB) || !defined(KB_RKP_CONST_TABLE_INIT)
#error "KB_RKP_CONST needs KB_RKP_CONST_{KERNEL,BITS,DIMS,BUDGET,C,NTAB,TABLE_INIT}"
#endif

/* The loader's range checks (contract 3, 4), moved to compile time. */
#if KB_RKP_CONST_KERNEL != KB_KERNEL_LAPLACE && KB_RKP_CONST_KERNEL != KB_KERNEL_RBF
#error "KB_RKP_CONST_KERNEL must be KB_KERNEL_LAPLACE (0) or KB_KERNEL_RBF (1)"
#endif
#if KB_RKP_CONST_BITS < 1 || KB_RKP_CONST_BITS > 8
#error "KB_RKP_CONST_BITS must be in 1..8"
#endif
#if KB_RKP_CONST_DIMS < 1 || KB_RKP_CONST_DIMS > 65535
#error "KB_RKP_CONST_DIMS must be in 1..65535"
#endif
#if KB_RKP_CONST_BUDGET < 1 || KB_RKP_CONST_BUDGET > 65535
#error "KB_RKP_CONST_BUDGET must be in 1..65535"
#endif
#if KB_RKP_CONST_C < 1 || KB_RKP_CONST_C > 255
#error "KB_RKP_CONST_C must be in 1..255"
#endif
#if KB_RKP_CONST_NTAB < 0 || KB_RKP_CONST_NTAB > KB_TABLE_MAX
#error "KB_RKP_CONST_NTAB must be in 0..32"
#endif
#define KB_RKP_CONST_TOP ((1L << KB_RKP_CONST_BITS) - 1)
#if KB_RKP_CONST_KERNEL == KB_KERNEL_LAPLACE && \
    KB_RKP_CONST_DIMS * KB_RKP_CONST_TOP > 65535L
#error "laplace distance M*(2^B-1) exceeds 16 bits"
#endif
#if KB_RKP_CONST_KERNEL == KB_KERNEL_RBF && \
    KB_RKP_CONST_DIMS * KB_RKP_CONST_TOP * KB_RKP_CONST_TOP > 1073741823L
#error "rbf distance M*(2^B-1)^2 exceeds 30 bits"
#endif

#define KB_RKP_KERNEL(m) ((uint8_t)KB_RKP_CONST_KERNEL)
#define KB_RKP_BITS(m) ((uint8_t)KB_RKP_CONST_BITS)
#define KB_RKP_DIMS(m) ((kb_dim_t)KB_RKP_CONST_DIMS)
#define KB_RKP_BUDGET(m) ((kb_count_t)KB_RKP_CONST_BUDGET)
#define KB_RKP_C(m) ((uint8_t)KB_RKP_CONST_C)
#define KB_RKP_NTAB(m) ((uint8_t)KB_RKP_CONST_NTAB)
#define KB_RKP_TABLE(m) (kb_rkp_table)
#define KB_RKP_MEM(m) (kb_rkp_mem)
#define KB_RKP_SV_BITS(m) ((kb_bitpos_t)(KB_RKP_CONST_DIMS * KB_RKP_CONST_BITS + 1L))
#define KB_RKP_MEM_BYTES(m) (KB_RKP_CONST_MEM_BYTES)
#define KB_RKP_CONST_MEM_BYTES \
    ((KB_RKP_CONST_BUDGET * (KB_RKP_CONST_DIMS * KB_RKP_CONST_BITS + 1L) + 7) / 8)

/* The narrowest types the constants allow: on an 8-bit core every byte saved in a loop
 * counter or accumulator is an instruction saved per support vector. */
#if KB_RKP_CONST_KERNEL == KB_KERNEL_LAPLACE
#define KB_RKP_CONST_DIST_MAX (KB_RKP_CONST_DIMS * KB_RKP_CONST_TOP)
#else
#define KB_RKP_CONST_DIST_MAX (KB_RKP_CONST_DIMS * KB_RKP_CONST_TOP * KB_RKP_CONST_TOP)
#endif
#if KB_RKP_CONST_DIST_MAX <= 255L
typedef uint8_t kb_dist_t; /* e.g. the paper's laplace, B = 4, M = 2: at most 30 */
#elif KB_RKP_CONST_DIST_MAX <= 65535L
typedef uint16_t kb_dist_t;
#else
typedef uint32_t kb_dist_t;
#endif
#if KB_RKP_CONST_BUDGET <= 255
typedef uint8_t kb_count_t;
#else
typedef uint16_t kb_count_t;
#endif
#if KB_RKP_CONST_DIMS <= 255
typedef uint8_t kb_dim_t;
#else
typedef uint16_t kb_dim_t;
#endif
#if KB_RKP_CONST_MEM_BYTES * 8L <= 65535L
typedef uint16_t kb_bitpos_t;
#else
typedef uint32_t kb_bitpos_t;
#endif
#if !defined(KB_SCORE32) && KB_RKP_CONST_BUDGET * KB_RKP_CONST_C <= 32767L && \
    !defined(KB_SCORE16)
#define KB_SCORE16
#endif

/* Support vectors of at most 25 bits (M*B + 1: every 2-D setting of the paper) are read whole:
 * the bytes under one support vector, starting at bit offset 0..7, fit a 16- or 32-bit window
 * (see kb_reader_t). The window of the last support vector may reach up to 3 bytes past the
 * memory, so the array is that much longer; dumps and files never see the extra bytes. */
#define KB_RKP_CONST_SV (KB_RKP_CONST_DIMS * KB_RKP_CONST_BITS + 1L)
#if KB_RKP_CONST_SV <= 25 && !defined(KB_RKP_NO_WINDOW)
#define KB_RKP_WINDOW
#if KB_RKP_CONST_SV + 7 <= 16
typedef uint16_t kb_window_t;
#define KB_RKP_WINDOW_BYTES 2
#elif KB_RKP_CONST_SV + 7 <= 24 && defined(__AVR__) && defined(__INT24_MAX__)
__extension__ typedef __uint24 kb_window_t; /* avr-gcc's 24-bit integer: 3 registers, not 4 */
#define KB_RKP_WINDOW_BYTES 3
#else
typedef uint32_t kb_window_t;
#define KB_RKP_WINDOW_BYTES ((KB_RKP_CONST_SV + 14) / 8) /* 3 or 4 */
#endif
#define KB_RKP_CONST_WINDOW_END \
    (((KB_RKP_CONST_BUDGET - 1L) * KB_RKP_CONST_SV) / 8 + KB_RKP_WINDOW_BYTES)
#define KB_RKP_CONST_MEM_ALLOC \
    (KB_RKP_CONST_WINDOW_END > KB_RKP_CONST_MEM_BYTES ? KB_RKP_CONST_WINDOW_END \
                                                     : KB_RKP_CONST_MEM_BYTES)
#else
#define KB_RKP_CONST_MEM_ALLOC KB_RKP_CONST_MEM_BYTES
#endif

#else /* runtime parameters */

typedef uint32_t kb_dist_t;
typedef uint16_t kb_count_t;
typedef uint16_t kb_dim_t;
typedef uint32_t kb_bitpos_t;

#define KB_RKP_KERNEL(m) ((m)->kernel)
#define KB_RKP_BITS(m) ((m)->bits)
#define KB_RKP_DIMS(m) ((m)->dims)
#define KB_RKP_BUDGET(m) ((m)->budget)
#define KB_RKP_C(m) ((m)->C)
#define KB_RKP_NTAB(m) ((m)->ntab)
#define KB_RKP_TABLE(m) ((m)->table)
#define KB_RKP_MEM(m) ((m)->mem)
#define KB_RKP_SV_BITS(m) ((kb_bitpos_t)((kb_bitpos_t)(m)->dims * (m)->bits + 1u))
#define KB_RKP_MEM_BYTES(m) kb_rkp_mem_bytes((m)->budget, (m)->dims, (m)->bits)

#endif /* KB_RKP_CONST */

#ifdef KB_SCORE16
#if defined(KB_RKP_CONST) && KB_RKP_CONST_BUDGET * KB_RKP_CONST_C > 32767L
#error "KB_SCORE16 needs budget * C <= 32767 (contract 3.3)"
#endif
typedef int16_t kb_score_t;
#define KB_SCORE_MAX 32767L
#else
typedef int32_t kb_score_t;
#define KB_SCORE_MAX 2147483647L
#endif

typedef struct {
#ifndef KB_RKP_CONST
    uint8_t kernel;       /* KB_KERNEL_LAPLACE or KB_KERNEL_RBF */
    uint8_t bits;         /* B, 1..8 */
    uint16_t dims;        /* M */
    uint16_t budget;      /* T, support-vector slots */
    int8_t width;         /* A; only the host needs it (it made the table), kept for files */
    uint8_t C;            /* weight scale, 1..255 */
    uint8_t ntab;         /* J, entries in table */
    const uint8_t *table; /* P[0..J-1] */
    uint8_t *mem;         /* ceil(T*(M*B+1)/8) bytes, contract 3.5 */
#endif
    kb_rng_t rng;         /* advances only when a full budget removes a support vector */
    kb_count_t count;     /* support vectors stored */
} kb_rkp_t;

#ifdef KB_RKP_CONST
/* Zero count, generator state `state` (kb_rng_seed() of a seed, or a file's saved state). */
#define KB_RKP_INIT(state) {(state), 0}

static const uint8_t kb_rkp_table[KB_RKP_CONST_NTAB > 0 ? KB_RKP_CONST_NTAB : 1] KB_FLASH =
    KB_RKP_CONST_TABLE_INIT;

/* Optional: the weights themselves, KB_RKP_CONST_WTAB_INIT = {w(0), .., w(2^J - 1)}, computed by
 * the host with the rule of contract 3.2 (kilobit.runtimes.avr.firmware does, for 2^J <= 64). w(k) is
 * then
 * one flash read, and the log method with its division is not linked at all. */
#ifdef KB_RKP_CONST_WTAB_INIT
#define KB_RKP_CONST_WTAB_N (1L << KB_RKP_CONST_NTAB)
static const uint8_t kb_rkp_wtab[KB_RKP_CONST_WTAB_N] KB_FLASH = KB_RKP_CONST_WTAB_INIT;
#endif
/* Zero (.bss) unless KB_RKP_CONST_MEM_INIT gives the memory of a saved model ({b0, b1, ..}):
 * then .data, copied from flash at reset, so a host-trained model continues learning. */
#ifdef KB_RKP_CONST_MEM_INIT
static uint8_t kb_rkp_mem[KB_RKP_CONST_MEM_ALLOC] = KB_RKP_CONST_MEM_INIT;
#else
static uint8_t kb_rkp_mem[KB_RKP_CONST_MEM_ALLOC];
#endif
#endif

/* Bytes of support-vector memory (contract 3.5). budget*(dims*bits+1) can need 35 bits, the
 * byte count never more than 32: with budget = 8q + r it is q*S + ceil(r*S/8). */
static inline uint32_t kb_rkp_mem_bytes(uint16_t budget, uint16_t dims, uint8_t bits)
{
    uint32_t sv = (uint32_t)dims * bits + 1u;
    return (uint32_t)(budget >> 3) * sv + ((uint32_t)(budget & 7u) * sv + 7u) / 8u;
}

/* ---- bit-packed memory: bit p is bit p%8 of byte p/8, fields LSB first (contract 3.5) ---- */

#ifdef KB_RKP_WINDOW

/* Whole-support-vector reader (compile-time parameters, S = M*B + 1 <= 25 bits). Support vector
 * i starts at bit i*S, i.e. at bit `off` of byte `next`; its bytes are loaded into a window,
 * shifted down by `off` in three constant steps (4, 2, 1: a shift by a variable count is a loop
 * on AVR), and the fields are then taken with constant shifts. The next support vector's
 * position follows by adding the constant S: no multiply, no variable shift per field. */
typedef struct {
    const uint8_t *next; /* the byte holding the first bit of the next support vector */
    uint8_t off;         /* that bit, 0..7 */
    kb_window_t w;       /* the codes of the current support vector, code 0 lowest */
} kb_reader_t;

static inline void kb_reader_init(kb_reader_t *r, const uint8_t *mem)
{
    r->next = mem;
    r->off = 0;
    r->w = 0;
}

/* w >> 4. At -Os avr-gcc makes a shift by 4 a 4-iteration loop; moving nibbles with AVR's
 * `swap` (what `(uint8_t)x >> 4` and `<< 4` compile to) takes a third of the cycles. */
KB_ALWAYS_INLINE kb_window_t kb_window_shr4(kb_window_t w)
{
    /* each byte: its own high nibble down, the next byte's low nibble up */
    const uint8_t b0 = (uint8_t)w, b1 = (uint8_t)(w >> 8);
    kb_window_t r;
#if KB_RKP_WINDOW_BYTES > 2
    const uint8_t b2 = (uint8_t)(w >> 16);
#endif
#if KB_RKP_WINDOW_BYTES > 3
    const uint8_t b3 = (uint8_t)(w >> 24);
    r = (kb_window_t)((kb_window_t)((uint8_t)(b2 >> 4) | (uint8_t)(b3 << 4)) << 16 |
                      (kb_window_t)(uint8_t)(b3 >> 4) << 24);
    r |= (kb_window_t)((uint8_t)(b1 >> 4) | (uint8_t)(b2 << 4)) << 8;
#elif KB_RKP_WINDOW_BYTES > 2
    r = (kb_window_t)((kb_window_t)(uint8_t)(b2 >> 4) << 16);
    r |= (kb_window_t)((uint8_t)(b1 >> 4) | (uint8_t)(b2 << 4)) << 8;
#else
    r = (kb_window_t)((kb_window_t)(uint8_t)(b1 >> 4) << 8);
#endif
    return (kb_window_t)(r | (uint8_t)((uint8_t)(b0 >> 4) | (uint8_t)(b1 << 4)));
}

/* w >> n for a constant n in 1..8: a byte move, a nibble swap, then single-bit shifts. */
KB_ALWAYS_INLINE kb_window_t kb_window_shr(kb_window_t w, uint8_t n)
{
#ifdef __AVR__
    if (n & 8u)
        w = (kb_window_t)(w >> 8);
    if (n & 4u)
        w = kb_window_shr4(w);
    if (n & 2u)
        w = (kb_window_t)(w >> 2);
    if (n & 1u)
        w = (kb_window_t)(w >> 1);
    return w;
#else
    return (kb_window_t)(w >> n);
#endif
}

/* Load the next support vector; return its label bit. */
KB_ALWAYS_INLINE uint8_t kb_reader_label(kb_reader_t *r)
{
    const uint8_t *p = r->next;
    kb_window_t w = (kb_window_t)(p[0] | (kb_window_t)((kb_window_t)p[1] << 8));
#if KB_RKP_WINDOW_BYTES > 2
    w |= (kb_window_t)p[2] << 16;
#endif
#if KB_RKP_WINDOW_BYTES > 3
    w |= (kb_window_t)p[3] << 24;
#endif
    if (r->off & 4u)
        w = kb_window_shr4(w);
    if (r->off & 2u)
        w = (kb_window_t)(w >> 2);
    if (r->off & 1u)
        w = (kb_window_t)(w >> 1);
    r->w = (kb_window_t)(w >> 1);
    r->next = p + (KB_RKP_CONST_SV >> 3);
    r->off = (uint8_t)(r->off + (KB_RKP_CONST_SV & 7));
    if (r->off >= 8u) {
        r->off = (uint8_t)(r->off - 8u);
        r->next++;
    }
    return (uint8_t)(w & 1u);
}

/* The next code of the current support vector. */
KB_ALWAYS_INLINE uint8_t kb_reader_code(const kb_rkp_t *m, kb_reader_t *r)
{
    (void)m;
    const uint8_t v = (uint8_t)(r->w & ((1u << KB_RKP_CONST_BITS) - 1u));
    r->w = kb_window_shr(r->w, KB_RKP_CONST_BITS);
    return v;
}

#else /* the stream reader */

/* Support vectors are contiguous, so the score decodes the memory as one stream of fields and
 * never computes a bit position: on an 8-bit core without a barrel shifter, a per-field
 * `pos >> 3` and `byte >> (pos & 7)` cost more than the arithmetic of the kernel. */
typedef kb_bitreader_t kb_reader_t; /* kb_kernel.h */

static inline void kb_reader_init(kb_reader_t *r, const uint8_t *mem)
{
    kb_bitreader_init(r, mem);
}

KB_ALWAYS_INLINE uint8_t kb_reader_get(kb_reader_t *r, uint8_t nbits)
{
    return kb_bitreader_get(r, nbits);
}

/* The label bit that leads a support vector, then its codes. */
KB_ALWAYS_INLINE uint8_t kb_reader_label(kb_reader_t *r)
{
    return kb_reader_get(r, 1);
}

KB_ALWAYS_INLINE uint8_t kb_reader_code(const kb_rkp_t *m, kb_reader_t *r)
{
    (void)m;
    return kb_reader_get(r, KB_RKP_BITS(m));
}

#endif /* KB_RKP_WINDOW */

static inline void kb_bits_put(uint8_t *mem, kb_bitpos_t pos, uint8_t nbits, uint8_t value)
{
    kb_bits_put_at(mem + (pos >> 3), (uint8_t)(pos & 7u), nbits, value);
}

/* a * w, |a * w| fitting kb_score_t (the callers' bound: |a| <= budget, w <= C). */
KB_ALWAYS_INLINE kb_score_t kb_mul_score(kb_score_t a, uint8_t w)
{
#ifdef KB_SOFT_MUL
    /* unsigned arithmetic: two's complement wraps to the same bits as the signed product */
#ifdef KB_SCORE16
    uint16_t x = (uint16_t)a, p = 0;
#else
    uint32_t x = (uint32_t)a, p = 0;
#endif
    for (; w != 0; w >>= 1, x <<= 1)
        if (w & 1u)
            p += x;
    return (kb_score_t)p;
#else
    return (kb_score_t)(a * (kb_score_t)w);
#endif
}

/* The first bit of support vector `slot`: slot * S. */
KB_ALWAYS_INLINE kb_bitpos_t kb_slot_pos(kb_count_t slot, kb_bitpos_t sv_bits)
{
#ifdef KB_SOFT_MUL
    kb_bitpos_t x = sv_bits, p = 0;
    for (; slot != 0; slot = (kb_count_t)(slot >> 1), x = (kb_bitpos_t)(x << 1))
        if (slot & 1u)
            p = (kb_bitpos_t)(p + x);
    return p;
#else
    return (kb_bitpos_t)((kb_bitpos_t)slot * sv_bits);
#endif
}

/* ---- kernel ---- */

/* The distance term of one code: |u - v| (laplace) or (u - v)^2 (rbf). */
KB_ALWAYS_INLINE uint16_t kb_rkp_term(const kb_rkp_t *m, uint8_t uj, uint8_t v)
{
    const uint8_t diff = (uint8_t)(uj > v ? uj - v : v - uj);
    (void)m;
    if (KB_RKP_KERNEL(m) == KB_KERNEL_LAPLACE)
        return diff;
    return kb_sq8(diff); /* 255^2 fits uint16_t, not AVR's int */
}

/* Distance between codes u and the support vector whose codes the reader is at. */
static inline kb_dist_t kb_rkp_distance(const kb_rkp_t *m, const uint8_t *u, kb_reader_t *r)
{
#if defined(KB_RKP_WINDOW) && KB_RKP_CONST_DIMS <= 4
    /* a few codes (the 2-D data sets): unrolled, each code a constant shift of the window */
    kb_dist_t d = (kb_dist_t)kb_rkp_term(m, u[0], kb_reader_code(m, r));
    if (KB_RKP_CONST_DIMS > 1)
        d = (kb_dist_t)(d + kb_rkp_term(m, u[1], kb_reader_code(m, r)));
    if (KB_RKP_CONST_DIMS > 2)
        d = (kb_dist_t)(d + kb_rkp_term(m, u[2], kb_reader_code(m, r)));
    if (KB_RKP_CONST_DIMS > 3)
        d = (kb_dist_t)(d + kb_rkp_term(m, u[3], kb_reader_code(m, r)));
    return d;
#else
    kb_dist_t d = 0;
    kb_dim_t j;
    for (j = 0; j < KB_RKP_DIMS(m); j++)
        d = (kb_dist_t)(d + kb_rkp_term(m, u[j], kb_reader_code(m, r)));
    return d;
#endif
}

/* w(k) of contract 3.2: a flash table of every nonzero weight, or the log method (kb_kernel.h).
 * Returns as soon as the weight is known to be 0, which for small tables (the paper's Banana
 * setting has J = 1) is almost always. */
#ifndef KB_RKP_CONST_WTAB_N
KB_LOG_WEIGHT_DEF(kb_rkp_log_weight, kb_dist_t)
#endif
static inline uint8_t kb_rkp_weight(const kb_rkp_t *m, kb_dist_t k)
{
#ifdef KB_RKP_CONST_WTAB_N
    (void)m;
    return k < (kb_dist_t)KB_RKP_CONST_WTAB_N ? KB_TABLE_READ(kb_rkp_wtab, k) : 0;
#elif defined(KB_FAST32)
    /* the same w(k) without a division (kb_kernel.h); a distance is below 2^30 */
    (void)m;
    if (k == 0)
        return KB_RKP_C(m);
    if (KB_RKP_NTAB(m) < 30u && ((uint32_t)k >> KB_RKP_NTAB(m)) != 0)
        return 0;
    return (uint8_t)kb_log_weight32(KB_RKP_TABLE(m), KB_RKP_NTAB(m), KB_RKP_C(m),
                                    kb_recip24(KB_RKP_C(m)), k);
#else
    (void)m;
    return kb_rkp_log_weight(KB_RKP_TABLE(m), KB_RKP_NTAB(m), KB_RKP_C(m), k);
#endif
}

/* ---- the perceptron ---- */

/* s = sum_i y_i * w(d_i - d_min) (contract 3.3), two ways with the same value:
 *
 * - one pass with offset accumulators, when the table is short (2^J <= KB_RKP_ACC_MAX): w(k)
 *   is 0 for k >= 2^J, so acc[k] = sum of the labels of the support vectors at distance
 *   d_min + k, k < 2^J, is all the score needs; a nearer support vector shifts acc up. Each
 *   support vector is decoded once and w() runs 2^J times instead of once per support vector.
 *   This is the path the paper's ATtiny2313 setting (J = 1) takes.
 * - two passes otherwise: the nearest distance, then the weights. Distances are recomputed
 *   rather than kept, because a small chip has no RAM for `budget` of them.
 *
 * With compile-time parameters the choice is a constant and only one path is compiled. */
#ifndef KB_RKP_ACC_LOG2
#define KB_RKP_ACC_LOG2 4
#endif
#if KB_RKP_ACC_LOG2 > 7
#error "KB_RKP_ACC_LOG2 must be at most 7 (the offsets are uint8_t)"
#endif
#define KB_RKP_ACC_MAX (1u << KB_RKP_ACC_LOG2)
#if defined(KB_RKP_CONST) && KB_RKP_CONST_NTAB <= KB_RKP_ACC_LOG2
#define KB_RKP_ACC_N (1u << KB_RKP_CONST_NTAB)
#else
#define KB_RKP_ACC_N KB_RKP_ACC_MAX
#endif
#if !defined(KB_RKP_CONST) || KB_RKP_CONST_NTAB <= KB_RKP_ACC_LOG2
#define KB_RKP_HAVE_ACC
#endif
#if !defined(KB_RKP_CONST) || KB_RKP_CONST_NTAB > KB_RKP_ACC_LOG2
#define KB_RKP_HAVE_2PASS
#endif

/* An accumulator counts support vectors: |acc[k]| <= budget. One byte when that is <= 127. */
#if defined(KB_RKP_CONST) && KB_RKP_CONST_BUDGET <= 127
typedef int8_t kb_acc_t;
#else
typedef kb_score_t kb_acc_t;
#endif

#ifndef KB_FAST32

#ifdef KB_RKP_HAVE_ACC
#if defined(KB_RKP_CONST) && KB_RKP_CONST_NTAB <= 2
/* J <= 2 (the paper's Banana settings at 2, 4 and 6 bits): at most offsets 0..3 have a weight,
 * so the accumulators are scalars the compiler keeps in registers; unused ones fold away. Same
 * value as the array form below, which an 8-bit core indexes through memory for every support
 * vector. */
#define KB_RKP_NACC (1 << KB_RKP_CONST_NTAB)
static inline kb_score_t kb_rkp_score_acc(const kb_rkp_t *m, const uint8_t *u, kb_dist_t floor,
                                          kb_dist_t *nearest)
{
    kb_acc_t a0 = 0, a1 = 0, a2 = 0, a3 = 0; /* acc[0..3] */
    kb_dist_t dmin = (kb_dist_t)~(kb_dist_t)0;
    kb_reader_t r;
    kb_count_t i;
    uint8_t found = 0;

    kb_reader_init(&r, KB_RKP_MEM(m));
    for (i = 0; i < m->count; i++) {
        const uint8_t positive = kb_reader_label(&r);
        const kb_dist_t d = kb_rkp_distance(m, u, &r);
        kb_dist_t k;
        if (d < floor) /* a ring the tie-break has left behind */
            continue;
        found = 1;
        if (d < dmin) { /* every offset seen so far grows by dmin - d */
            kb_dist_t grow = (kb_dist_t)(dmin - d);
            dmin = d;
            if (KB_RKP_NACC == 1 || grow >= KB_RKP_NACC) {
                a0 = a1 = a2 = a3 = 0;
            } else {
                do {
                    a3 = a2;
                    a2 = a1;
                    a1 = a0;
                    a0 = 0;
                } while (--grow != 0);
            }
        }
        k = (kb_dist_t)(d - dmin);
        if (k == 0)
            a0 = (kb_acc_t)(positive ? a0 + 1 : a0 - 1);
        else if (KB_RKP_NACC > 1 && k == 1)
            a1 = (kb_acc_t)(positive ? a1 + 1 : a1 - 1);
        else if (KB_RKP_NACC > 2 && k == 2)
            a2 = (kb_acc_t)(positive ? a2 + 1 : a2 - 1);
        else if (KB_RKP_NACC > 2 && k == 3)
            a3 = (kb_acc_t)(positive ? a3 + 1 : a3 - 1);
    }
    if (found)
        *nearest = dmin;
    {
        kb_score_t s = kb_mul_score(a0, KB_RKP_C(m));
        if (KB_RKP_NACC > 1)
            s = (kb_score_t)(s + kb_mul_score(a1, kb_rkp_weight(m, 1)));
        if (KB_RKP_NACC > 2)
            s = (kb_score_t)(s + kb_mul_score(a2, kb_rkp_weight(m, 2)) +
                             kb_mul_score(a3, kb_rkp_weight(m, 3)));
        return s;
    }
}
#else
static inline kb_score_t kb_rkp_score_acc(const kb_rkp_t *m, const uint8_t *u, kb_dist_t floor,
                                          kb_dist_t *nearest)
{
    const uint8_t span = (uint8_t)(1u << KB_RKP_NTAB(m)); /* offsets with a nonzero weight */
    kb_acc_t acc[KB_RKP_ACC_N];
    kb_score_t s = 0;
    kb_dist_t dmin = (kb_dist_t)~(kb_dist_t)0; /* >= any distance, so the first one wins */
    kb_reader_t r;
    kb_count_t i;
    uint8_t k, found = 0;

    for (k = 0; k < span; k++)
        acc[k] = 0;
    kb_reader_init(&r, KB_RKP_MEM(m));
    for (i = 0; i < m->count; i++) {
        const uint8_t positive = kb_reader_label(&r); /* the label bit leads the SV */
        const kb_dist_t d = kb_rkp_distance(m, u, &r);
        if (d < floor) /* a ring the tie-break has left behind */
            continue;
        found = 1;
        if (d < dmin) { /* every offset seen so far grows by dmin - d */
            const kb_dist_t grow = (kb_dist_t)(dmin - d);
            for (k = span; k-- > 0;)
                acc[k] = k >= grow ? acc[k - grow] : 0;
            dmin = d;
        }
        if (d - dmin < span) {
            k = (uint8_t)(d - dmin);
            acc[k] = (kb_acc_t)(acc[k] + (positive ? 1 : -1));
        }
    }
    for (k = 0; k < span; k++)
        if (acc[k] != 0) /* |acc[k]| * C <= budget * C: fits kb_score_t */
            s = (kb_score_t)(s + kb_mul_score(acc[k], kb_rkp_weight(m, k)));
    if (found)
        *nearest = dmin;
    return s;
}
#endif

#endif /* KB_RKP_HAVE_ACC */

#ifdef KB_RKP_HAVE_2PASS
/* Eq. 10 over the support vectors at distance >= floor, in two passes over the memory: find
 * the nearest of them (*nearest, left as it was when there is none), then sum
 * y_i * w(d_i - nearest). One loop body for both passes: the decoder exists once in flash. */
static kb_score_t kb_rkp_score_2pass(const kb_rkp_t *m, const uint8_t *u, kb_dist_t floor,
                                     kb_dist_t *nearest)
{
    kb_dist_t dmin = 0;
    kb_score_t s = 0;
    kb_reader_t r;
    kb_count_t i;
    uint8_t pass, found = 0;

    for (pass = 0; pass < 2; pass++) {
        kb_reader_init(&r, KB_RKP_MEM(m));
        for (i = 0; i < m->count; i++) {
            const uint8_t positive = kb_reader_label(&r);
            const kb_dist_t d = kb_rkp_distance(m, u, &r);
            if (d < floor) /* a ring the tie-break has left behind */
                continue;
            if (pass == 0) {
                if (!found || d < dmin)
                    dmin = d;
                found = 1;
            } else {
                const uint8_t w = kb_rkp_weight(m, (kb_dist_t)(d - dmin));
                if (w != 0)
                    s = (kb_score_t)(positive ? s + w : s - w);
            }
        }
        if (!found)
            return 0;
    }
    *nearest = dmin;
    return s;
}
#endif /* KB_RKP_HAVE_2PASS */

#else /* KB_FAST32 */

/* ---- the 32-bit path (KB_FAST32, kb_kernel.h): the same score, decoded word-wise ----
 *
 * The byte-wise code above is shaped for an 8-bit core without a barrel shifter. A 32-bit core
 * shifts any distance in one cycle: here a 2-D support vector (every 2-D setting of the paper;
 * S = 2B + 1 <= 17 bits) is read as one 3-byte window and its two codes taken with constant
 * masks, a longer one goes through a 32-bit bit buffer (a byte load per field at most), and
 * once a partial distance shows that a support vector cannot matter (not nearer than the
 * nearest so far, or past the last nonzero weight) its remaining fields are skipped. The
 * weights' rounded division is a multiply (kb_log_weight32). The algorithms, and so every
 * value, are those above: one pass with offset accumulators when 2^J <= KB_RKP_ACC_MAX, else
 * two passes; the rings of the tie-break in kb_rkp_score. */

/* The distance term of a code pair: |diff| (laplace) or diff^2 (rbf); diff^2 <= 255^2. */
KB_ALWAYS_INLINE uint32_t kb_rkp_term32(int32_t diff, int rbf)
{
    return rbf ? (uint32_t)(diff * diff) : (uint32_t)(diff < 0 ? -diff : diff);
}

/* A support vector of 2 codes, w = its bits (label lowest): its label bit in *label, its
 * distance to the codes u returned. */
KB_ALWAYS_INLINE uint32_t kb_rkp_sv2(const kb_rkp_t *m, uint32_t w, const uint8_t *u,
                                     uint32_t *label, int rbf)
{
    const uint32_t B = KB_RKP_BITS(m), mask = (1u << B) - 1u;
    (void)m;
    *label = w & 1u;
    return kb_rkp_term32((int32_t)u[0] - (int32_t)((w >> 1) & mask), rbf) +
           kb_rkp_term32((int32_t)u[1] - (int32_t)((w >> (B + 1u)) & mask), rbf);
}

/* The next support vector from the stream r, field by field: its label bit in *label, and
 * its distance to the codes u or, as soon as a partial sum reaches `lim`, that partial sum
 * (>= lim; the rest of its fields skipped). Distances are below 2^30 (the loader's limits):
 * no wrap. */
KB_ALWAYS_INLINE uint32_t kb_rkp_sv_stream(const kb_rkp_t *m, kb_stream32_t *r,
                                           const uint8_t *u, uint32_t lim, uint32_t *label,
                                           int rbf)
{
    const uint32_t B = KB_RKP_BITS(m);
    const uint8_t *const end = u + KB_RKP_DIMS(m);
    uint32_t d = 0;
    (void)m;
    *label = kb_stream32_get(r, 1);
    while (u != end) {
        d += kb_rkp_term32((int32_t)*u++ - (int32_t)kb_stream32_get(r, B), rbf);
        if (d >= lim) {
            kb_stream32_skip(r, (uint32_t)(end - u) * B);
            break;
        }
    }
    return d;
}

/* The next support vector, its first bit at *pos: M = 2 (`two`) as a window (no early exit:
 * too few fields for one to pay), any other M through the stream r. */
KB_ALWAYS_INLINE uint32_t kb_rkp_sv32(const kb_rkp_t *m, kb_stream32_t *r, uint32_t *pos,
                                      uint32_t nbytes, const uint8_t *u, uint32_t lim,
                                      uint32_t *label, int rbf, int two)
{
    uint32_t w;
    if (!two)
        return kb_rkp_sv_stream(m, r, u, lim, label, rbf);
    w = kb_window24(KB_RKP_MEM(m), nbytes, *pos);
    *pos += 2u * KB_RKP_BITS(m) + 1u;
    return kb_rkp_sv2(m, w, u, label, rbf);
}

/* Run BODY(rbf, two) with the decoder for this model: for M = 2 one per kernel, each without
 * a test of the kernel per field; else the stream, the kernel tested per field (with
 * compile-time parameters, all constants). Three support-vector loops per pass, not more: a
 * native module's code is loaded into RAM. */
#define KB_RKP_SPECIALISE(m, BODY)                                                            \
    do {                                                                                      \
        const int rbf_ = KB_RKP_KERNEL(m) == KB_KERNEL_RBF;                                   \
        if (KB_RKP_DIMS(m) != 2u)                                                             \
            BODY(rbf_, 0);                                                                    \
        else if (rbf_)                                                                        \
            BODY(1, 1);                                                                       \
        else                                                                                  \
            BODY(0, 1);                                                                       \
    } while (0)

/* The division-free weight of offset k < 2^J (0 < k needs recip = kb_recip24(C) only when k
 * has two set bits or more). */
KB_ALWAYS_INLINE uint32_t kb_rkp_w32(const kb_rkp_t *m, uint32_t k, uint32_t recip)
{
#ifdef KB_RKP_CONST_WTAB_N
    (void)recip;
    return kb_rkp_weight(m, (kb_dist_t)k);
#else
    (void)m;
    return k == 0 ? KB_RKP_C(m)
                  : kb_log_weight32(KB_RKP_TABLE(m), KB_RKP_NTAB(m), KB_RKP_C(m), recip, k);
#endif
}

#ifdef KB_RKP_HAVE_ACC
/* The sweep of kb_rkp_score_acc for one decoder: acc[k] (zeroed by the caller) sums the labels
 * at distance dmin + k, k < span = 2^J; returns dmin, all ones when nothing lies at or beyond
 * lo. A support vector whose partial distance reaches dmin + span is skipped: it can neither
 * be the nearest nor weigh. */
KB_ALWAYS_INLINE uint32_t kb_rkp_acc_sweep(const kb_rkp_t *m, const uint8_t *u, uint32_t lo,
                                           int32_t *acc, uint32_t span, int rbf, int two)
{
    uint32_t dmin = 0xFFFFFFFFu, lim = 0xFFFFFFFFu, i;
    const uint32_t nbytes = KB_RKP_MEM_BYTES(m);
    uint32_t pos = 0;
    kb_stream32_t r;
    if (!two)
        kb_stream32_init(&r, KB_RKP_MEM(m), 0);
    for (i = m->count; i != 0; i--) {
        uint32_t label;
        const uint32_t d = kb_rkp_sv32(m, &r, &pos, nbytes, u, lim, &label, rbf, two);
        if (d < lo || d >= lim) /* a ring left behind, or beyond every weight */
            continue;
        if (d < dmin) { /* every offset seen so far grows by dmin - d (all, the first time) */
            const uint32_t grow = dmin - d;
            uint32_t k;
            for (k = span; k-- > 0;)
                acc[k] = k >= grow ? acc[k - grow] : 0;
            dmin = d;
            lim = d + span; /* d < 2^30, span <= 2^7 */
        }
        acc[d - dmin] += (int32_t)(label << 1) - 1; /* +1 or -1 */
    }
    return dmin;
}

/* One pass with offset accumulators, as kb_rkp_score_acc above. */
static kb_score_t kb_rkp_score_acc(const kb_rkp_t *m, const uint8_t *u, kb_dist_t floor,
                                   kb_dist_t *nearest)
{
    const uint32_t span = 1u << KB_RKP_NTAB(m), lo = floor;
    int32_t acc[KB_RKP_ACC_N], s = 0;
    uint32_t dmin, k, recip = 0;

    for (k = 0; k < span; k++)
        acc[k] = 0;
#define KB_RKP_ACC_BODY(rbf, two) dmin = kb_rkp_acc_sweep(m, u, lo, acc, span, rbf, two)
    KB_RKP_SPECIALISE(m, KB_RKP_ACC_BODY);
#undef KB_RKP_ACC_BODY
    if (dmin == 0xFFFFFFFFu) /* nothing at or beyond floor: *nearest left as it was */
        return 0;
    *nearest = (kb_dist_t)dmin;
    if (span > 2u) /* an offset with two set bits needs the rounded division */
        recip = kb_recip24(KB_RKP_C(m));
    for (k = 0; k < span; k++)
        if (acc[k] != 0) /* |acc[k]| * C <= budget * C: fits kb_score_t */
            s += acc[k] * (int32_t)kb_rkp_w32(m, k, recip);
    return (kb_score_t)s;
}
#endif /* KB_RKP_HAVE_ACC */

#ifdef KB_RKP_HAVE_2PASS
/* The nearest distance at or beyond lo (all ones: none), a support vector skipped as soon as
 * its partial distance reaches the nearest so far. */
KB_ALWAYS_INLINE uint32_t kb_rkp_nearest_sweep(const kb_rkp_t *m, const uint8_t *u, uint32_t lo,
                                               int rbf, int two)
{
    uint32_t dmin = 0xFFFFFFFFu, i;
    const uint32_t nbytes = KB_RKP_MEM_BYTES(m);
    uint32_t pos = 0;
    kb_stream32_t r;
    if (!two)
        kb_stream32_init(&r, KB_RKP_MEM(m), 0);
    for (i = m->count; i != 0; i--) {
        uint32_t label;
        const uint32_t d = kb_rkp_sv32(m, &r, &pos, nbytes, u, dmin, &label, rbf, two);
        if (d >= lo && d < dmin)
            dmin = d;
    }
    return dmin;
}

/* sum y_i w(d_i - dmin) over d_i >= lo, a support vector skipped as soon as its partial
 * distance reaches lim = dmin + 2^J (weight 0). */
KB_ALWAYS_INLINE int32_t kb_rkp_weigh_sweep(const kb_rkp_t *m, const uint8_t *u, uint32_t lo,
                                            uint32_t dmin, uint32_t lim, uint32_t recip,
                                            int rbf, int two)
{
    int32_t s = 0;
    uint32_t i;
    const uint32_t nbytes = KB_RKP_MEM_BYTES(m);
    uint32_t pos = 0;
    kb_stream32_t r;
    if (!two)
        kb_stream32_init(&r, KB_RKP_MEM(m), 0);
    for (i = m->count; i != 0; i--) {
        uint32_t label, w;
        const uint32_t d = kb_rkp_sv32(m, &r, &pos, nbytes, u, lim, &label, rbf, two);
        if (d < lo || d >= lim)
            continue;
        w = kb_rkp_w32(m, d - dmin, recip);
        s += label ? (int32_t)w : -(int32_t)w;
    }
    return s;
}

/* Two passes, as kb_rkp_score_2pass above: the nearest distance, then the weights. */
static kb_score_t kb_rkp_score_2pass(const kb_rkp_t *m, const uint8_t *u, kb_dist_t floor,
                                     kb_dist_t *nearest)
{
    const uint32_t lo = floor, J = KB_RKP_NTAB(m);
    uint32_t dmin, lim, recip;
    int32_t s = 0;

#define KB_RKP_NEAREST_BODY(rbf, two) dmin = kb_rkp_nearest_sweep(m, u, lo, rbf, two)
    KB_RKP_SPECIALISE(m, KB_RKP_NEAREST_BODY);
#undef KB_RKP_NEAREST_BODY
    if (dmin == 0xFFFFFFFFu)
        return 0;
    /* distances are below 2^30: from J = 30 on every offset weighs */
    lim = J < 30u ? dmin + (1u << J) : 0xFFFFFFFFu;
    recip = kb_recip24(KB_RKP_C(m));
#define KB_RKP_WEIGH_BODY(rbf, two)                                                           \
    s = kb_rkp_weigh_sweep(m, u, lo, dmin, lim, recip, rbf, two)
    KB_RKP_SPECIALISE(m, KB_RKP_WEIGH_BODY);
#undef KB_RKP_WEIGH_BODY
    *nearest = (kb_dist_t)dmin;
    return (kb_score_t)s;
}
#endif /* KB_RKP_HAVE_2PASS */

#endif /* KB_FAST32 */

/* Eq. 10 relative to the nearest ring; then, only while the sum is exactly 0, the same over the
 * support vectors beyond that ring (contract 3.3's tie-break: a ring that cancels here cancels in
 * the exact float sum too, so the farther vectors decide). */
static inline kb_score_t kb_rkp_score(const kb_rkp_t *m, const uint8_t *u)
{
    kb_dist_t floor = 0, ring = 0;
    kb_score_t s;

    if (m->count == 0)
        return 0;
    for (;;) {
#if defined(KB_RKP_HAVE_ACC) && defined(KB_RKP_HAVE_2PASS)
        if (KB_RKP_NTAB(m) <= KB_RKP_ACC_LOG2)
            s = kb_rkp_score_acc(m, u, floor, &ring);
        else
            s = kb_rkp_score_2pass(m, u, floor, &ring);
#elif defined(KB_RKP_HAVE_ACC)
        s = kb_rkp_score_acc(m, u, floor, &ring);
#else
        s = kb_rkp_score_2pass(m, u, floor, &ring);
#endif
        /* done on a decision, when nothing lay at or beyond floor (ring unchanged, < floor),
         * or when ring is the largest distance the type holds (nothing can be farther) */
        if (s != 0 || ring < floor || ring == (kb_dist_t)~(kb_dist_t)0)
            return s;
        floor = (kb_dist_t)(ring + 1u);
    }
}

/* 1 for the positive class; a tie (s == 0) predicts the negative class. */
static inline uint8_t kb_rkp_predict(const kb_rkp_t *m, const uint8_t *u)
{
    return (uint8_t)(kb_rkp_score(m, u) > 0);
}

/* Write label y and codes u into slot `slot`. Every bit of the slot is rewritten, so an
 * evicted support vector leaves nothing behind. */
static inline void kb_rkp_store(kb_rkp_t *m, kb_count_t slot, const uint8_t *u, uint8_t y)
{
    uint8_t *mem = KB_RKP_MEM(m);
    const uint8_t bits = KB_RKP_BITS(m);
    kb_bitpos_t pos = kb_slot_pos(slot, KB_RKP_SV_BITS(m));
    kb_dim_t j;
    (void)m;
    kb_bits_put(mem, pos, 1, y ? 1u : 0u);
    pos = (kb_bitpos_t)(pos + 1u);
    for (j = 0; j < KB_RKP_DIMS(m); j++, pos = (kb_bitpos_t)(pos + bits))
        kb_bits_put(mem, pos, bits, u[j]);
}

/* One step of Algorithm 1 with random removal (contract 3.4): score codes u, and on a mistake
 * store (u, y), y in {0, 1}, in the next free slot or, with a full budget, a random one.
 * Returns the score before learning; *mistake (may be NULL) is set to 1 on a mistake. */
static inline kb_score_t kb_rkp_learn(kb_rkp_t *m, const uint8_t *u, uint8_t y, uint8_t *mistake)
{
    const kb_score_t s = kb_rkp_score(m, u);
    const uint8_t miss = (uint8_t)(y ? s <= 0 : s >= 0);
    if (miss) {
        kb_count_t slot;
        if (m->count < KB_RKP_BUDGET(m))
            slot = m->count++;
        else
            slot = (kb_count_t)kb_rng_below(&m->rng, KB_RKP_BUDGET(m));
        kb_rkp_store(m, slot, u, y);
    }
    if (mistake)
        *mistake = miss;
    return s;
}

#endif /* KB_RKP_H */
