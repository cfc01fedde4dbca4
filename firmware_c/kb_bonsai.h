/*
 * kb_bonsai.h - Bonsai, integer only (docs/contract.md, section 8).
 *
 *     kb_bonsai_t m;
 *     kb_bonsai_init(&m, payload, len, 1);       payload: the model file's, in RAM or flash
 *     kb_bonsai_update(&m, j, c);                 feature j (increasing), code c
 *     kb_bonsai_update_run(&m, j, codes, n);      features j..j+n-1, checked by the caller
 *     y = kb_bonsai_predict(&m);                  class; m.P, m.leaf, m.scores; then reset
 *
 * The weights are read where they are stored (flash on AVR: KB_FLASH_PROGMEM); RAM holds the
 * parsed offsets, the projection's accumulators, P, the scores and, during a prediction, the
 * dot products of one node (1 + 2L int32 on the stack; the Uno's walk keeps them in registers).
 * Nothing depends on the input dimension.
 * KB_BONSAI_LMAX (default 255) sizes the scores; a firmware sets it to its model's L.
 */
#ifndef KB_BONSAI_H
#define KB_BONSAI_H

#include <stddef.h>
#include <stdint.h>

#include "kb_file.h"
#include "kb_fixed.h"
#include "kb_proj.h"
#include "kb_smat.h"

#ifndef KB_BONSAI_LMAX
#define KB_BONSAI_LMAX 255
#endif
#define KB_BONSAI_HEAD 8 /* wbits in_bits dims(u16) proj depth classes tanh_bits */
#define KB_BONSAI_DEPTH_MAX 6
#define KB_BONSAI_PROJ_MAX 64
#define KB_BONSAI_TANH_BITS_MAX 14

typedef struct {
    kb_proj_t proj;
    const uint8_t *offs; /* u16 node block offsets */
    const uint8_t *tree; /* node blocks */
    const uint8_t *wsh, *vsh;
    uint16_t tlen;
    uint8_t depth, nint, nnodes, L, classes, tanh_bits, tenc, wb;
    uint32_t used; /* payload bytes up to the host-only trailer */
    /* results of the last prediction */
    int16_t P[KB_PROJ_DMAX];
    int32_t scores[KB_BONSAI_LMAX];
    uint8_t leaf;
} kb_bonsai_t;

#ifdef __AVR__
#define KB_BONSAI_INLINE __attribute__((always_inline))
#else
#define KB_BONSAI_INLINE
#endif

static inline KB_BONSAI_INLINE uint16_t kb_bonsai_off(const kb_bonsai_t *m, uint8_t k)
{
    if (k == m->nnodes)
        return m->tlen;
    return (uint16_t)(KB_FLASH_BYTE(m->offs + 2u * k) |
                      (uint16_t)((uint16_t)KB_FLASH_BYTE(m->offs + 2u * k + 1u) << 8));
}

/* Parse a Bonsai payload (the model file's, from its first byte up to at least the tree's
 * shifts). KB_OK, KB_ERR_TRUNCATED when it is cut short, or KB_ERR_PARAM when it is outside the
 * contract. check != 0 also checks every stored matrix in full (the host loader does; a
 * firmware built from a checked file may skip it). */
static inline kb_err_t kb_bonsai_init(kb_bonsai_t *m, const uint8_t *pl, uint32_t len,
                                      int check)
{
    uint8_t wbits, in_bits, d, k;
    uint16_t dims;
    uint32_t off, used;
    if (len < KB_BONSAI_HEAD)
        return KB_ERR_TRUNCATED;
    wbits = KB_FLASH_BYTE(pl);
    in_bits = KB_FLASH_BYTE(pl + 1);
    dims = (uint16_t)(KB_FLASH_BYTE(pl + 2) | (uint16_t)((uint16_t)KB_FLASH_BYTE(pl + 3) << 8));
    d = KB_FLASH_BYTE(pl + 4);
    m->depth = KB_FLASH_BYTE(pl + 5);
    m->classes = KB_FLASH_BYTE(pl + 6);
    m->tanh_bits = KB_FLASH_BYTE(pl + 7);
    if ((wbits != 8 && wbits != 16) || in_bits < 1 || in_bits > 8 || dims < 1 || d < 1 ||
        d > KB_BONSAI_PROJ_MAX || m->depth > KB_BONSAI_DEPTH_MAX || m->classes < 1 ||
        m->tanh_bits < 1 || m->tanh_bits > KB_BONSAI_TANH_BITS_MAX)
        return KB_ERR_PARAM;
    m->L = m->classes <= 2 ? 1 : m->classes;
#if KB_BONSAI_LMAX < 255
    if (m->L > KB_BONSAI_LMAX)
        return KB_ERR_LIMIT;
#endif
    if (d > KB_PROJ_DMAX)
        return KB_ERR_LIMIT;
    m->wb = (uint8_t)(wbits >> 3);
    m->nnodes = (uint8_t)((2u << m->depth) - 1u);
    m->nint = (uint8_t)((1u << m->depth) - 1u);
    if (len - KB_BONSAI_HEAD < 3)
        return KB_ERR_TRUNCATED;
    if (!kb_proj_init(&m->proj, pl + KB_BONSAI_HEAD, len - KB_BONSAI_HEAD, dims, d, in_bits,
                      wbits, check, &used)) {
        /* cut short, or a bad section: tell which */
        const uint32_t n = (uint32_t)KB_FLASH_BYTE(pl + KB_BONSAI_HEAD + 1) |
                           (uint32_t)KB_FLASH_BYTE(pl + KB_BONSAI_HEAD + 2) << 8;
        return KB_BONSAI_HEAD + 3u + n + 3u * d > len ? KB_ERR_TRUNCATED : KB_ERR_PARAM;
    }
    off = KB_BONSAI_HEAD + used;
    if (off + 3u + 2u * m->nnodes > len)
        return KB_ERR_TRUNCATED;
    m->tenc = KB_FLASH_BYTE(pl + off);
    m->tlen = (uint16_t)(KB_FLASH_BYTE(pl + off + 1) |
                         (uint16_t)((uint16_t)KB_FLASH_BYTE(pl + off + 2) << 8));
    m->offs = pl + off + 3;
    m->tree = m->offs + 2u * m->nnodes;
    m->wsh = m->tree + m->tlen;
    m->vsh = m->wsh + m->nnodes;
    m->used = off + 3u + 2u * m->nnodes + m->tlen + 2u * m->nnodes;
    if (m->used > len)
        return KB_ERR_TRUNCATED;
    if (m->tenc != KB_SMAT_DENSE && m->tenc != KB_SMAT_SPARSE)
        return KB_ERR_PARAM;
    for (k = 0; k < m->nnodes; k++) {
        const uint16_t a = kb_bonsai_off(m, k), b = kb_bonsai_off(m, (uint8_t)(k + 1u));
        const uint8_t rows = (uint8_t)((k < m->nint ? 1u : 0u) + 2u * m->L);
        if ((k == 0 && a != 0) || b < a || KB_FLASH_BYTE(m->wsh + k) > KB_SHIFT_MAX ||
            KB_FLASH_BYTE(m->vsh + k) > KB_SHIFT_MAX)
            return KB_ERR_PARAM;
        if (check) {
            int32_t sums[1 + 2 * KB_BONSAI_LMAX];
            uint16_t r;
            for (r = 0; r < rows; r++)
                sums[r] = 0;
            if (!kb_smat_check(m->tree + a, (uint32_t)(b - a), rows, d, m->wb, m->tenc, sums,
                               0, (int32_t)(KB_SMALL / KB_ACT_MAX)))
                return KB_ERR_PARAM;
        }
    }
    m->leaf = 0;
    return KB_OK;
}

/* Load a Bonsai model file in place (the payload stays in `data`, which must stay alive). */
static inline kb_err_t kb_bonsai_load(kb_bonsai_t *m, const uint8_t *data, size_t len)
{
    uint8_t type;
    uint32_t plen;
    const uint8_t *pl = data + KB_FILE_HEAD;
    kb_err_t err = kb_file_unpack(data, len, &type, &plen);
    if (err != KB_OK)
        return err;
    if (type != KB_FILE_TYPE_BONSAI)
        return KB_ERR_TYPE;
    err = kb_bonsai_init(m, pl, plen, 1);
    if (err != KB_OK)
        return err;
    return kb_file_trailer(pl, plen, m->used, m->proj.dims);
}

/* Feature j has code c: 0, or -1 (nothing changed) for an index not above the previous one of
 * this input, beyond dims, or a code above 2^B - 1. */
static inline int kb_bonsai_update(kb_bonsai_t *m, uint16_t j, uint8_t c)
{
    return kb_proj_update(&m->proj, j, c);
}

/* Features start .. start+n-1 have the codes c[0..n-1], already checked by the caller (see
 * kb_proj_update_run): n updates in one walk of the projection. */
static inline void kb_bonsai_update_run(kb_bonsai_t *m, uint16_t start, const uint8_t *c,
                                        uint8_t n)
{
    kb_proj_update_run(&m->proj, start, c, n);
}

/* Drop the input in progress. */
static inline void kb_bonsai_reset(kb_bonsai_t *m)
{
    kb_proj_reset(&m->proj);
}

#if KB_SMAT_AVR && defined(KB_BONSAI_ROWS) && defined(KB_BONSAI_ROFF)
#define KB_BONSAI_AVR 1
#include <stddef.h>
/* The Uno's tree walk. KB_BONSAI_ROWS and KB_BONSAI_ROFF hold the int8 tree of the one model this
 * translation unit runs, as the Uno walks it (the firmware header makes them from the same model
 * file: kilobit.models.bonsai.firmware.tree_rows). Node k starts at byte ROFF[k] of ROWS: its
 * shifts ws and vs, theta_k's row if internal, a count of the classes whose W_k and V_k rows both
 * hold a weight, then per such class its index, its W row and its V row. A row is a count byte,
 * then per non-zero weight (u8 2 * column, i8 weight). A class left out has w = 0 or v = 0, so it
 * adds round(w t) = 0: nothing.
 *
 * kb_bonsai_avr_tree(c) walks the path from the root: per node theta's dot product picks the next
 * one (internal nodes), and per listed class l
 *     w = sat(rshift_round(W_l . P, ws)), and when w != 0:
 *     v = rshift_round(V_l . P, vs);  scores[l] += w if v >= one, -w if v <= -one, else
 *     (w * (v << tq) + 2^14) >> 15   (= rshift_round(w * v, eT): 2^14 = 2^(eT-1) 2^tq)
 * with the sums in registers: 29 cycles a weight, about 17 a row and 130 a class, where the C over
 * the model file's rows took about 60 a weight, 30 a row and 215 a class. A dot product takes
 * 2^15 + 2^23 more a weight (the products' top bits flipped: no sign extension, as
 * kb_smat_avr_dots) and starts at minus count times that (count * 128 by one MUL, placed by
 * bytes). |w (v << tq)| < 2^30, so (it + 2^14) shifted left once fits 32 bits and the sum's
 * part is its top half. Assembly as a weak symbol in its own section (see kb_proj_avr_block7). */
typedef struct {
    const uint8_t *rows;  /* 0: KB_BONSAI_ROWS */
    const int16_t *P;     /* 2 */
    int32_t *scores;      /* 4 */
    const uint8_t *roff;  /* 6: KB_BONSAI_ROFF */
    uint8_t k;            /* 8: in 0, out the leaf */
    uint8_t nint;         /* 9: internal nodes */
    uint8_t ws, vs, more; /* 10, 11, 12: the node's (scratch) */
    uint8_t tq;           /* 13: 15 - eT */
    int16_t one;          /* 14: 2^eT */
    int16_t mone;         /* 16: 1 - 2^eT */
} kb_bonsai_avr_ctx_t;
KB_AVR_LAYOUT(kb_bonsai_avr_ctx_layout, offsetof(kb_bonsai_avr_ctx_t, P) == 2 &&
                                        offsetof(kb_bonsai_avr_ctx_t, scores) == 4 &&
                                        offsetof(kb_bonsai_avr_ctx_t, roff) == 6 &&
                                        offsetof(kb_bonsai_avr_ctx_t, k) == 8 &&
                                        offsetof(kb_bonsai_avr_ctx_t, nint) == 9 &&
                                        offsetof(kb_bonsai_avr_ctx_t, ws) == 10 &&
                                        offsetof(kb_bonsai_avr_ctx_t, vs) == 11 &&
                                        offsetof(kb_bonsai_avr_ctx_t, more) == 12 &&
                                        offsetof(kb_bonsai_avr_ctx_t, tq) == 13 &&
                                        offsetof(kb_bonsai_avr_ctx_t, one) == 14 &&
                                        offsetof(kb_bonsai_avr_ctx_t, mone) == 16);
#ifdef __cplusplus
extern "C" {
#endif
void kb_bonsai_avr_tree(kb_bonsai_avr_ctx_t *c);
#ifdef __cplusplus
}
#endif
/* Registers: Z the rows, Y the context, r12:r13 P, r8:r9 the scores, r4:r5 one, r6:r7 1 - one,
 * r14 zero, r15 0x80, r11 classes left, r10 the class, r2:r3 w, r18-r21 the sum, r16/r17/r23 a
 * product's operands, r22 a row's count. */
__asm__(
    ".pushsection .text.kb_bonsai_avr_tree,\"ax\",@progbits\n\t"
    ".weak kb_bonsai_avr_tree\n\t"
    ".type kb_bonsai_avr_tree, @function\n"
    /* r18..r21 = the dot product of the row at Z with P (Z moves past it) */
    ".macro kb_bn_row\n\t"
    "lpm r22, Z+\n\t"
    "mul r22, r15\n\t"
    "clr r18\n\t"
    "clr r19\n\t"
    "clr r20\n\t"
    "clr r21\n\t"
    "sub r19, r0\n\t"
    "sbc r20, r1\n\t"
    "sbc r21, r14\n\t"
    "sub r20, r0\n\t"
    "sbc r21, r1\n\t"
    "tst r22\n\t"
    "breq 2f\n"
    "1:\n\t"
    "lpm r0, Z+\n\t"
    "lpm r16, Z+\n\t"
    "movw r26, r12\n\t"
    "add r26, r0\n\t"
    "adc r27, r14\n\t"
    "ld r17, X+\n\t"
    "ld r23, X\n\t"
    "mulsu r16, r17\n\t"
    "eor r1, r15\n\t"
    "add r18, r0\n\t"
    "adc r19, r1\n\t"
    "adc r20, r14\n\t"
    "adc r21, r14\n\t"
    "muls r16, r23\n\t"
    "eor r1, r15\n\t"
    "add r19, r0\n\t"
    "adc r20, r1\n\t"
    "adc r21, r14\n\t"
    "dec r22\n\t"
    "brne 1b\n"
    "2:\n\t"
    ".endm\n\t"
    /* r18..r21 = rshift_round(r18..r21, r24): >> (s - 1) by whole bytes, then bits (right, or
     * for 5 to 7 left into a fifth byte that is then the top: fewer), then one more whose carry
     * out is added back (round half up). Clobbers r24, r25. */
    ".macro kb_bn_shr\n\t"
    "tst r24\n\t"
    "breq 9f\n\t"
    "dec r24\n"
    "3:\n\t"
    "cpi r24, 8\n\t"
    "brlo 4f\n\t"
    "mov r18, r19\n\t"
    "mov r19, r20\n\t"
    "mov r20, r21\n\t"
    "lsl r21\n\t"
    "sbc r21, r21\n\t"
    "subi r24, 8\n\t"
    "rjmp 3b\n"
    "4:\n\t"
    "cpi r24, 5\n\t"
    "brsh 7f\n\t"
    "tst r24\n\t"
    "breq 6f\n"
    "5:\n\t"
    "asr r21\n\t"
    "ror r20\n\t"
    "ror r19\n\t"
    "ror r18\n\t"
    "dec r24\n\t"
    "brne 5b\n\t"
    "rjmp 6f\n"
    "7:\n\t"
    "mov r25, r21\n\t"
    "lsl r25\n\t"
    "sbc r25, r25\n\t"
    "subi r24, 8\n\t"
    "neg r24\n"
    "8:\n\t"
    "lsl r18\n\t"
    "rol r19\n\t"
    "rol r20\n\t"
    "rol r21\n\t"
    "rol r25\n\t"
    "dec r24\n\t"
    "brne 8b\n\t"
    "mov r18, r19\n\t"
    "mov r19, r20\n\t"
    "mov r20, r21\n\t"
    "mov r21, r25\n"
    "6:\n\t"
    "asr r21\n\t"
    "ror r20\n\t"
    "ror r19\n\t"
    "ror r18\n\t"
    "adc r18, r14\n\t"
    "adc r19, r14\n\t"
    "adc r20, r14\n\t"
    "adc r21, r14\n"
    "9:\n\t"
    ".endm\n"
    "kb_bonsai_avr_tree:\n\t"
    KB_AVR_SAVE_ALL
    "movw r28, r24\n\t"
    "ldd r12, Y+2\n\t"
    "ldd r13, Y+3\n\t"
    "ldd r8, Y+4\n\t"
    "ldd r9, Y+5\n\t"
    "ldd r4, Y+14\n\t"
    "ldd r5, Y+15\n\t"
    "ldd r6, Y+16\n\t"
    "ldd r7, Y+17\n\t"
    "clr r14\n\t"
    "ldi r24, 0x80\n\t"
    "mov r15, r24\n\t"
    ".Lkb_bn_node:\n\t" /* Z = rows + roff[k]; the node's shifts */
    "ldd r24, Y+8\n\t"
    "ldd r30, Y+6\n\t"
    "ldd r31, Y+7\n\t"
    "add r30, r24\n\t"
    "adc r31, r14\n\t"
    "add r30, r24\n\t"
    "adc r31, r14\n\t"
    "lpm r22, Z+\n\t"
    "lpm r23, Z\n\t"
    "ld r30, Y\n\t"
    "ldd r31, Y+1\n\t"
    "add r30, r22\n\t"
    "adc r31, r23\n\t"
    "lpm r25, Z+\n\t"
    "std Y+10, r25\n\t"
    "lpm r25, Z+\n\t"
    "std Y+11, r25\n\t"
    "std Y+12, r14\n\t"
    "ldd r25, Y+9\n\t"
    "cp r24, r25\n\t"
    "brsh .Lkb_bn_classes\n\t"
    "kb_bn_row\n\t" /* theta: the next node is 2k + 1 when its dot product is > 0, else 2k + 2 */
    "ldd r24, Y+8\n\t"
    "lsl r24\n\t"
    "subi r24, 0xFF\n\t"
    "tst r21\n\t"
    "brmi 1f\n\t"
    "or r18, r19\n\t"
    "or r18, r20\n\t"
    "or r18, r21\n\t"
    "brne 2f\n"
    "1:\n\t"
    "inc r24\n"
    "2:\n\t"
    "std Y+8, r24\n\t"
    "ldi r24, 1\n\t"
    "std Y+12, r24\n"
    ".Lkb_bn_classes:\n\t"
    "lpm r11, Z+\n\t"
    "tst r11\n\t"
    "brne .Lkb_bn_class\n\t"
    "rjmp .Lkb_bn_end\n"
    ".Lkb_bn_class:\n\t"
    "lpm r10, Z+\n\t"
    "kb_bn_row\n\t"
    "ldd r24, Y+10\n\t"
    "kb_bn_shr\n\t"
    /* w = sat(it): an int16 when bytes 2-3 extend the sign of byte 1; -32768 -> -32767 */
    "mov r24, r19\n\t"
    "lsl r24\n\t"
    "sbc r24, r24\n\t"
    "cp r20, r24\n\t"
    "cpc r21, r24\n\t"
    "brne 1f\n\t"
    "ldi r24, 0x80\n\t"
    "cp r18, r14\n\t"
    "cpc r19, r24\n\t"
    "brne 2f\n\t"
    "ldi r18, 1\n\t"
    "rjmp 2f\n"
    "1:\n\t"
    "ldi r18, 0xFF\n\t"
    "ldi r19, 0x7F\n\t"
    "sbrs r21, 7\n\t"
    "rjmp 2f\n\t"
    "ldi r18, 0x01\n\t"
    "ldi r19, 0x80\n"
    "2:\n\t"
    "movw r2, r18\n\t"
    "cp r2, r14\n\t"
    "cpc r3, r14\n\t"
    "brne .Lkb_bn_v\n\t"
    "lpm r22, Z+\n\t" /* w = 0: nothing to add; step over the V row */
    "add r30, r22\n\t"
    "adc r31, r14\n\t"
    "add r30, r22\n\t"
    "adc r31, r14\n\t"
    "rjmp .Lkb_bn_next\n"
    ".Lkb_bn_v:\n\t"
    "kb_bn_row\n\t"
    "ldd r24, Y+11\n\t"
    "kb_bn_shr\n\t"
    "cp r18, r4\n\t" /* v >= one: + w */
    "cpc r19, r5\n\t"
    "cpc r20, r14\n\t"
    "cpc r21, r14\n\t"
    "brge .Lkb_bn_pos\n\t"
    "ldi r24, 0xFF\n\t" /* v < 1 - one: - w */
    "cp r18, r6\n\t"
    "cpc r19, r7\n\t"
    "cpc r20, r24\n\t"
    "cpc r21, r24\n\t"
    "brlt .Lkb_bn_neg\n\t"
    "ldd r24, Y+13\n" /* |v| < one: v << tq fits int16 */
    "3:\n\t"
    "lsl r18\n\t"
    "rol r19\n\t"
    "dec r24\n\t"
    "brne 3b\n\t"
    "movw r16, r2\n\t"
    "movw r22, r18\n\t"
    "muls r17, r23\n\t" /* w * (v << tq), signed 16x16 (as avr-libc's __mulhisi3) */
    "movw r20, r0\n\t"
    "mul r16, r22\n\t"
    "movw r18, r0\n\t"
    "mulsu r17, r22\n\t"
    "sbc r21, r14\n\t"
    "add r19, r0\n\t"
    "adc r20, r1\n\t"
    "adc r21, r14\n\t"
    "mulsu r23, r16\n\t"
    "sbc r21, r14\n\t"
    "add r19, r0\n\t"
    "adc r20, r1\n\t"
    "adc r21, r14\n\t"
    "subi r19, 0xC0\n\t" /* + 2^14 (- 0xFFFFC000) */
    "sbci r20, 0xFF\n\t"
    "sbci r21, 0xFF\n\t"
    "lsl r19\n\t"
    "rol r20\n\t"
    "rol r21\n\t"
    "movw r24, r20\n\t"
    "rjmp .Lkb_bn_add\n"
    ".Lkb_bn_pos:\n\t"
    "movw r24, r2\n\t"
    "rjmp .Lkb_bn_add\n"
    ".Lkb_bn_neg:\n\t"
    "clr r24\n\t"
    "clr r25\n\t"
    "sub r24, r2\n\t"
    "sbc r25, r3\n"
    ".Lkb_bn_add:\n\t" /* scores[l] += r25:r24, sign-extended */
    "movw r26, r8\n\t"
    "mov r0, r10\n\t"
    "clr r1\n\t"
    "lsl r0\n\t"
    "rol r1\n\t"
    "lsl r0\n\t"
    "rol r1\n\t"
    "add r26, r0\n\t"
    "adc r27, r1\n\t"
    "mov r22, r25\n\t"
    "lsl r22\n\t"
    "sbc r22, r22\n\t"
    "ld r0, X\n\t"
    "add r0, r24\n\t"
    "st X+, r0\n\t"
    "ld r0, X\n\t"
    "adc r0, r25\n\t"
    "st X+, r0\n\t"
    "ld r0, X\n\t"
    "adc r0, r22\n\t"
    "st X+, r0\n\t"
    "ld r0, X\n\t"
    "adc r0, r22\n\t"
    "st X, r0\n"
    ".Lkb_bn_next:\n\t"
    "dec r11\n\t"
    "breq .Lkb_bn_end\n\t"
    "rjmp .Lkb_bn_class\n"
    ".Lkb_bn_end:\n\t"
    "ldd r24, Y+12\n\t"
    "tst r24\n\t"
    "breq .Lkb_bn_done\n\t"
    "rjmp .Lkb_bn_node\n"
    ".Lkb_bn_done:\n\t"
    KB_AVR_RESTORE_ALL
    ".purgem kb_bn_row\n\t"
    ".purgem kb_bn_shr\n\t"
    ".size kb_bonsai_avr_tree, .-kb_bonsai_avr_tree\n\t"
    ".popsection");
#else
#define KB_BONSAI_AVR 0
#endif

/* The class of the input streamed since the last prediction (binary: 1 when the score is > 0;
 * multi-class: the first highest score); sets P, leaf and scores, and resets the stream. */
static inline uint8_t kb_bonsai_predict(kb_bonsai_t *m)
{
    const uint8_t eT = m->tanh_bits;
    const int16_t one = (int16_t)(1 << eT); /* eT <= 14 */
    uint8_t k = 0, l, best;
    kb_proj_finish(&m->proj, m->P);
    for (l = 0; l < m->L; l++)
        m->scores[l] = 0;
#if KB_BONSAI_AVR
    {
        kb_bonsai_avr_ctx_t c;
        c.rows = KB_BONSAI_ROWS;
        c.P = m->P;
        c.scores = m->scores;
        c.roff = KB_BONSAI_ROFF;
        c.k = 0;
        c.nint = m->nint;
        c.tq = (uint8_t)(15u - eT);
        c.one = one;
        c.mone = (int16_t)(1 - one);
        kb_bonsai_avr_tree(&c);
        k = c.k;
    }
#else
    {
        int32_t dots[1 + 2 * KB_BONSAI_LMAX];
        for (;;) {
            const uint8_t internal = (uint8_t)(k < m->nint);
            const uint16_t a = kb_bonsai_off(m, k);
            const uint8_t ws = KB_FLASH_BYTE(m->wsh + k), vs = KB_FLASH_BYTE(m->vsh + k);
            const int32_t *dp = dots + internal;
            kb_smat_row_dots(m->tree + a, (uint16_t)(kb_bonsai_off(m, (uint8_t)(k + 1u)) - a),
                             m->proj.d, m->wb, m->tenc, m->P, dots,
                             (uint8_t)(internal + 2u * m->L));
            for (l = 0; l < m->L; l++, dp += 2) {
                const int16_t w = (int16_t)kb_sat_act(kb_rshift_round32(dp[0], ws));
                const int32_t v = kb_rshift_round32(dp[1], vs);
                const int16_t t = v > one ? one : (v < -one ? (int16_t)-one : (int16_t)v);
                /* |w| <= 32767, |t| <= 2^14: the product fits 30 bits */
                m->scores[l] += kb_rshift_round32((int32_t)w * t, eT);
            }
            if (!internal)
                break;
            k = (uint8_t)(dots[0] > 0 ? 2u * k + 1u : 2u * k + 2u);
        }
    }
#endif
    m->leaf = k;
    if (m->L == 1)
        return (uint8_t)(m->scores[0] > 0);
    best = 0;
    for (l = 1; l < m->L; l++)
        if (m->scores[l] > m->scores[best])
            best = l;
    return best;
}

#endif /* KB_BONSAI_H */
