/*
 * kb_protonn.h - ProtoNN, integer only (docs/contract.md, section 10).
 *
 *     kb_protonn_t m;
 *     kb_protonn_init(&m, payload, len, 1);      payload: the model file's, in RAM or flash
 *     kb_protonn_update(&m, j, c);                feature j (increasing), code c
 *     kb_protonn_update_run(&m, j, codes, n);     features j..j+n-1, checked by the caller
 *     y = kb_protonn_predict(&m);                 prediction; m.P, m.scores (m.D, m.k); reset
 *
 * The weights and the kernel table are read where they are stored (flash on AVR:
 * KB_FLASH_PROGMEM); RAM holds the parsed pointers, the projection's accumulators, P and the
 * scores. D and k of every prototype are kept for the golden checks unless
 * KB_PROTONN_NO_FIELDS is defined (the Uno firmware: 6 bytes a prototype it cannot spare).
 * KB_PROTONN_LMAX (default 255) sizes the scores, KB_PROTONN_MMAX (default 255) D and k.
 */
#ifndef KB_PROTONN_H
#define KB_PROTONN_H

#include <stddef.h>
#include <stdint.h>

#include "kb_file.h"
#include "kb_fixed.h"
#include "kb_proj.h"
#include "kb_smat.h"

#ifndef KB_PROTONN_LMAX
#define KB_PROTONN_LMAX 255
#endif
#ifndef KB_PROTONN_MMAX
#define KB_PROTONN_MMAX 255
#endif
#define KB_PROTONN_HEAD 8 /* wbits in_bits dims(u16) d m classes multilabel */
#define KB_PROTONN_PROJ_MAX 64
#define KB_PROTONN_BSHIFT_MAX 8
#define KB_PROTONN_MULTILABEL_MAX 30
#define KB_PROTONN_END 0xFFFFu /* cursor position: no stored weight left (m*d, m*L < 65535) */

typedef struct {
    kb_proj_t proj;
    const uint8_t *table;  /* nt u16, little-endian */
    const uint8_t *protos; /* m x d */
    const uint8_t *labels; /* m x L */
    uint16_t plen, llen;
    int16_t bmul; /* 2^bshift: the prototype scale as a multiply (no shift loop on AVR) */
    uint8_t m, L, classes, multilabel, dshift, kshift, nt, penc, lenc, wb;
    uint32_t used; /* payload bytes up to the host-only trailer */
    /* results of the last prediction */
    int16_t P[KB_PROJ_DMAX];
    int32_t scores[KB_PROTONN_LMAX];
#ifndef KB_PROTONN_NO_FIELDS
    int32_t D[KB_PROTONN_MMAX];
    int16_t k[KB_PROTONN_MMAX];
#endif
} kb_protonn_t;

/* A forward walk over a SPARSE stored matrix: pos is the flat position of the pending weight
 * at p[i] (KB_PROTONN_END when none is left). */
typedef struct {
    const uint8_t *p;
    uint16_t len, i, pos;
} kb_protonn_cur_t;

/* Find the pending weight from flat position pos on. */
static inline void kb_protonn_seek(kb_protonn_cur_t *c, uint16_t pos)
{
    while (c->i < c->len) {
        const uint8_t g = KB_FLASH_BYTE(c->p + c->i);
        c->i++;
        if (g != 0) {
            c->pos = (uint16_t)(pos + g - 1u);
            return;
        }
        pos = (uint16_t)(pos + 255u);
    }
    c->pos = KB_PROTONN_END;
}

static inline void kb_protonn_cur_init(kb_protonn_cur_t *c, const uint8_t *p, uint16_t len)
{
    c->p = p;
    c->len = len;
    c->i = 0;
    kb_protonn_seek(c, 0);
}

/* The pending weight (SPARSE); the cursor moves on to the next one. */
static inline int16_t kb_protonn_take(kb_protonn_cur_t *c, uint8_t wb)
{
    const int16_t w = kb_smat_weight(c->p + c->i, wb);
    c->i = (uint16_t)(c->i + KB_WB(wb));
    kb_protonn_seek(c, (uint16_t)(c->pos + 1u));
    return w;
}

/* 1 when every stored weight of the prototype matrix is within +-(32767 >> bshift). */
static inline int kb_protonn_check_protos(const kb_protonn_t *m, uint8_t bshift)
{
    const int16_t top = (int16_t)(KB_ACT_MAX >> bshift);
    uint16_t i = 0;
    while (i < m->plen) {
        int16_t w;
        if (m->penc == KB_SMAT_SPARSE) {
            const uint8_t g = KB_FLASH_BYTE(m->protos + i);
            i++;
            if (g == 0)
                continue; /* an escape: no weight follows */
        }
        w = kb_smat_weight(m->protos + i, m->wb);
        if (w > top || w < -top)
            return 0;
        i = (uint16_t)(i + m->wb);
    }
    return 1;
}

/* Parse a ProtoNN payload (the model file's, from its first byte up to at least the labels).
 * KB_OK, KB_ERR_TRUNCATED when it is cut short, KB_ERR_PARAM when it is outside the contract,
 * KB_ERR_LIMIT when it is larger than this build's buffers; the trailer is the loader's.
 * check != 0 also checks every stored matrix in full (the host loader does; a firmware built
 * from a checked file may skip it). */
static inline kb_err_t kb_protonn_init(kb_protonn_t *m, const uint8_t *pl, uint32_t len,
                                       int check)
{
    uint8_t wbits, in_bits, d, bshift, i;
    uint16_t dims;
    uint32_t off, used;
    if (len < KB_PROTONN_HEAD)
        return KB_ERR_TRUNCATED;
    wbits = KB_FLASH_BYTE(pl);
    in_bits = KB_FLASH_BYTE(pl + 1);
    dims = (uint16_t)(KB_FLASH_BYTE(pl + 2) | (uint16_t)((uint16_t)KB_FLASH_BYTE(pl + 3) << 8));
    d = KB_FLASH_BYTE(pl + 4);
    m->m = KB_FLASH_BYTE(pl + 5);
    m->classes = KB_FLASH_BYTE(pl + 6);
    m->multilabel = KB_FLASH_BYTE(pl + 7);
    if ((wbits != 8 && wbits != 16) || in_bits < 1 || in_bits > 8 || dims < 1 || d < 1 ||
        d > KB_PROTONN_PROJ_MAX || m->m < 1 || m->classes < 1 || m->multilabel > 1 ||
        (m->multilabel && m->classes > KB_PROTONN_MULTILABEL_MAX))
        return KB_ERR_PARAM;
    m->L = (m->multilabel || m->classes > 2) ? m->classes : 1;
#if KB_PROTONN_LMAX < 255
    if (m->L > KB_PROTONN_LMAX)
        return KB_ERR_LIMIT;
#endif
#if !defined(KB_PROTONN_NO_FIELDS) && KB_PROTONN_MMAX < 255
    if (m->m > KB_PROTONN_MMAX)
        return KB_ERR_LIMIT;
#endif
    if (d > KB_PROJ_DMAX)
        return KB_ERR_LIMIT;
    m->wb = (uint8_t)(wbits >> 3);
    if (len - KB_PROTONN_HEAD < 3)
        return KB_ERR_TRUNCATED;
    if (!kb_proj_init(&m->proj, pl + KB_PROTONN_HEAD, len - KB_PROTONN_HEAD, dims, d, in_bits,
                      wbits, check, &used)) {
        const uint32_t n = (uint32_t)KB_FLASH_BYTE(pl + KB_PROTONN_HEAD + 1) |
                           (uint32_t)KB_FLASH_BYTE(pl + KB_PROTONN_HEAD + 2) << 8;
        return KB_PROTONN_HEAD + 3u + n + 3u * d > len ? KB_ERR_TRUNCATED : KB_ERR_PARAM;
    }
    off = KB_PROTONN_HEAD + used;
    if (off + 4u > len)
        return KB_ERR_TRUNCATED;
    bshift = KB_FLASH_BYTE(pl + off);
    m->dshift = KB_FLASH_BYTE(pl + off + 1);
    m->kshift = KB_FLASH_BYTE(pl + off + 2);
    m->nt = KB_FLASH_BYTE(pl + off + 3);
    m->table = pl + off + 4;
    off += 4u + 2u * m->nt;
    if (off > len)
        return KB_ERR_TRUNCATED;
    if (bshift > KB_PROTONN_BSHIFT_MAX || m->dshift > KB_SHIFT_MAX ||
        m->kshift > KB_SHIFT_MAX || m->nt == 0)
        return KB_ERR_PARAM;
    m->bmul = (int16_t)(1 << bshift);
    for (i = 0; i < m->nt; i++)
        if (KB_FLASH_BYTE(m->table + 2u * i + 1u) > 127u)
            return KB_ERR_PARAM; /* an entry above 32767 */
    for (i = 0; i < 2; i++) {
        uint32_t n;
        uint8_t enc;
        if (off + 3u > len)
            return KB_ERR_TRUNCATED;
        enc = KB_FLASH_BYTE(pl + off);
        n = (uint32_t)KB_FLASH_BYTE(pl + off + 1) | (uint32_t)KB_FLASH_BYTE(pl + off + 2) << 8;
        if (off + 3u + n > len)
            return KB_ERR_TRUNCATED;
        if (enc != KB_SMAT_DENSE && enc != KB_SMAT_SPARSE)
            return KB_ERR_PARAM;
        if (i == 0) {
            m->penc = enc;
            m->protos = pl + off + 3;
            m->plen = (uint16_t)n;
        } else {
            m->lenc = enc;
            m->labels = pl + off + 3;
            m->llen = (uint16_t)n;
        }
        off += 3u + n;
    }
    m->used = off;
    if (check) {
        uint16_t r;
        /* the projection's accumulators and the scores serve as the column sums */
        for (r = 0; r < d; r++)
            m->proj.acc[r] = 0;
        if (!kb_smat_check(m->protos, m->plen, m->m, d, m->wb, m->penc, m->proj.acc, 1,
                           (int32_t)KB_SMALL))
            return KB_ERR_PARAM;
        kb_proj_reset(&m->proj);
        for (r = 0; r < m->L; r++)
            m->scores[r] = 0;
        if (!kb_smat_check(m->labels, m->llen, m->m, m->L, m->wb, m->lenc, m->scores, 1,
                           (int32_t)(KB_SMALL / KB_ACT_MAX)))
            return KB_ERR_PARAM;
        if (!kb_protonn_check_protos(m, bshift))
            return KB_ERR_PARAM;
    }
    return KB_OK;
}

/* Load a ProtoNN model file in place (the payload stays in `data`, which must stay alive). */
static inline kb_err_t kb_protonn_load(kb_protonn_t *m, const uint8_t *data, size_t len)
{
    uint8_t type;
    uint32_t plen;
    kb_err_t err = kb_file_unpack(data, len, &type, &plen);
    if (err != KB_OK)
        return err;
    if (type != KB_FILE_TYPE_PROTONN)
        return KB_ERR_TYPE;
    err = kb_protonn_init(m, data + KB_FILE_HEAD, plen, 1);
    if (err != KB_OK)
        return err;
    return kb_file_trailer(data + KB_FILE_HEAD, plen, m->used, m->proj.dims);
}

static inline int kb_protonn_update(kb_protonn_t *m, uint16_t j, uint8_t c)
{
    return kb_proj_update(&m->proj, j, c);
}

/* Features start .. start+n-1 have the codes c[0..n-1], already checked by the caller (see
 * kb_proj_update_run). */
static inline void kb_protonn_update_run(kb_protonn_t *m, uint16_t start, const uint8_t *c,
                                         uint8_t n)
{
    kb_proj_update_run(&m->proj, start, c, n);
}

static inline void kb_protonn_reset(kb_protonn_t *m)
{
    kb_proj_reset(&m->proj);
}

#ifdef __AVR__
#define KB_PROTONN_HOT __attribute__((optimize("O2")))
#else
#define KB_PROTONN_HOT
#endif

/* x >> s for an unsigned x: whole bytes first (register moves on AVR, where a shift by a
 * variable count is otherwise a loop of s 4-byte shifts), then the remaining bits. */
static inline uint32_t kb_protonn_shr(uint32_t x, uint8_t s)
{
    while (s >= 8u) {
        x >>= 8;
        s = (uint8_t)(s - 8u);
    }
    return x >> s;
}

/* u^2 for u <= 32767. On an AVR with MUL: three 8x8 multiplies inline (2 u_lo u_hi < 2^16, so
 * the doubled cross term carries into the top byte only), about half of libgcc's
 * __umulhisi3 with its call. */
static inline uint32_t kb_protonn_sq(uint16_t u)
{
#if defined(__AVR__) && defined(__AVR_HAVE_MUL__)
    uint32_t r;
    __asm__("mul %A1, %A1\n\t"
            "movw %A0, r0\n\t"
            "mul %B1, %B1\n\t"
            "movw %C0, r0\n\t"
            "mul %A1, %B1\n\t"
            "lsl r0\n\t"
            "rol r1\n\t"
            "add %B0, r0\n\t"
            "adc %C0, r1\n\t"
            "clr r1\n\t" /* eor: the carry survives */
            "adc %D0, r1"
            : "=&r"(r)
            : "r"(u));
    return r;
#else
    return (uint32_t)u * u;
#endif
}

/* rshift_round(e^2, dshift) for e = sat(p - b), with half = 2^(dshift-1) (0 when dshift is 0).
 * |e| is a 16-bit unsigned value, so the square is one unsigned 16x16 -> 32 multiply; for
 * dshift >= 1 and a non-negative square t, rshift_round(t, dshift) = (t + half) >> dshift,
 * and t + half < 2^31: nothing negative is ever shifted. */
static inline uint32_t kb_protonn_term(int16_t p, int16_t b, uint8_t dshift, uint32_t half)
{
    uint16_t u = p >= b ? (uint16_t)((uint16_t)p - (uint16_t)b)
                        : (uint16_t)((uint16_t)b - (uint16_t)p); /* |p - b| <= 65534 */
    uint32_t t;
    if (u > KB_ACT_MAX)
        u = KB_ACT_MAX;
    t = kb_protonn_sq(u);
    return dshift ? kb_protonn_shr(t + half, dshift) : t;
}

/* The distance of one DENSE prototype row at pp, counted down: `rem` is what the sum may
 * still grow by before it reaches `stop` (see kb_protonn_predict); returns the rest, 0 when
 * the sum reached `stop`. Not inlined, so that its few values stay in registers. */
static KB_PROTONN_HOT __attribute__((noinline)) uint32_t
kb_protonn_dist_dense(const int16_t *P, const uint8_t *pp, uint8_t d, uint8_t wb, int16_t bmul,
                      uint8_t dshift, uint32_t half, uint32_t rem)
{
    (void)wb;
    do {
        const uint32_t t = kb_protonn_term(*P++, (int16_t)(kb_smat_weight(pp, wb) * bmul),
                                           dshift, half);
        pp += KB_WB(wb);
        if (t >= rem)
            return 0;
        rem -= t;
    } while (--d);
    return rem;
}

/* The same for the SPARSE prototype matrix: row j starts at flat position p0 of the cursor,
 * which is left at the next row's first weight. */
static KB_PROTONN_HOT __attribute__((noinline)) uint32_t
kb_protonn_dist_sparse(const kb_protonn_t *m, kb_protonn_cur_t *pc, uint16_t p0, uint32_t half,
                       uint32_t stop)
{
    const uint16_t end = (uint16_t)(p0 + m->proj.d);
    uint32_t s = 0;
    uint8_t r;
    for (r = 0; r < m->proj.d; r++) {
        int16_t b = 0;
        uint32_t t;
        if (pc->pos == (uint16_t)(p0 + r))
            b = (int16_t)(kb_protonn_take(pc, m->wb) * m->bmul);
        t = kb_protonn_term(m->P[r], b, m->dshift, half);
        if (t >= stop - s) {
            while (pc->pos < end)
                (void)kb_protonn_take(pc, m->wb);
            return stop;
        }
        s += t;
    }
    return s;
}

#if KB_SMAT_AVR && defined(KB_PROTONN_NO_FIELDS) && defined(KB_PROTONN_CSUM)
/* The Uno's prototype distances (KB_SMAT_AVR, a build that reports no D, and the firmware
 * header's table KB_PROTONN_CSUM: C_j = 2^(bshift-1) sum_r Bq_jr^2, made from the same model
 * file). With b = Bq << bshift and no e_r saturating (|P_r - b_r| <= 32767),
 * e^2 = P^2 - 2 P b + b^2, and when 2^dshift divides 2 P b and b^2 (dshift <= bshift + 1,
 * bshift >= 1) the rounding shift passes through them: D_j = Q + H_j 2^e, with
 *     Q   = sum_r rshift_round(P_r^2, dshift)          once per prediction
 *     H_j = C_j - sum_r P_r Bq_jr                       one multiply-add a term
 *     e   = bshift + 1 - dshift.
 * Only k_j = table[D_j >> kshift] is needed (0 from stop on, or the saturated D's entry);
 * with kshift >= e that is (floor(Q / 2^e) + H_j) >> (kshift - e), compared with stop >> e:
 * the same integers as the contract's, a 24-cycle term per weight instead of a subtraction, a
 * square and a rounding shift. A prediction outside these conditions takes the C.
 *
 * Where a prediction's cycles go (issue 22, kb_sim, the bench models): pendigits-10 (d 10, m 50,
 * L 10) about 1,700 for the update, 1,000 for P, 800 for Q, 50 x 320 for the prototypes (215 of
 * them the distance's terms, about 105 C_j, the kernel index, the table and the list) and 9,450
 * for the labels: 29.7 cycles a stored weight. mnist16-2 (256 features, m 20, one score): 6,400
 * for the update (19 cycles a row of W whose code is 0, about 70 a frame), 1,000 + 800, 20 x 330:
 * 32.6 a weight. Not yet tried, by a cycle count: prototypes two at a time over a derived copy of
 * B, interleaved and offset-binary (MUL without the top-bit flips: 17.5 a term, m x d more
 * flash), the kernel index's constants as immediates, Q in assembly: about 24.8 a weight for
 * letter-26, 26-27 for pendigits-10 and mnist16-2. */
#define KB_PROTONN_AVR 1
#ifndef KB_PROTONN_BLOCK
#define KB_PROTONN_BLOCK 32 /* prototypes a pass of kb_protonn_avr_labels: 4 B of stack each */
#endif

/* start - sum_r (P_r Bq_r + the offsets of kb_smat_avr_dots) for the DENSE prototype row at pp:
 * with KB_PROTONN_CSUM (C_j = 2^(bshift-1) sum_r Bq_r^2, made by the firmware header from the
 * same model file) H_j = C_j - sum_r P_r Bq_r is a plain dot product, 24 cycles a term. */
static inline int32_t kb_protonn_avr_dotsub(const uint8_t *pp, const int16_t *P, uint8_t d,
                                            uint32_t start)
{
    uint32_t s = start;
    uint8_t cnt = d, wt, lo, hi;
    __asm__ volatile(
        "1:\n\t"
        "lpm %[wt], Z+\n\t"
        "ld %[lo], X+\n\t"
        "ld %[hi], X+\n\t"
        "mulsu %[wt], %[lo]\n\t"
        "eor r1, %[m80]\n\t"
        "sub %A[s], r0\n\t"
        "sbc %B[s], r1\n\t"
        "sbc %C[s], %[z0]\n\t"
        "sbc %D[s], %[z0]\n\t"
        "muls %[wt], %[hi]\n\t"
        "eor r1, %[m80]\n\t"
        "sub %B[s], r0\n\t"
        "sbc %C[s], r1\n\t"
        "sbc %D[s], %[z0]\n\t"
        "dec %[cnt]\n\t"
        "brne 1b\n\t"
        "clr __zero_reg__"
        : [s] "+r"(s), [pp] "+z"(pp), [P] "+x"(P), [cnt] "+r"(cnt), [wt] "=&a"(wt),
          [lo] "=&a"(lo), [hi] "=&a"(hi)
        : [m80] "r"((uint8_t)0x80), [z0] "r"((uint8_t)0)
        : "r0", "memory");
    return (int32_t)s;
}

/* What kb_protonn_avr_one reads of a prediction (the offsets are the assembly's). */
typedef struct {
    uint32_t h0;          /* 0: the kernel's start, less C_j */
    const int16_t *P;     /* 4 */
    const uint8_t *table; /* 6: the kernel table, flash */
    uint16_t imul;        /* 8: the index's multiplier, 2^(8 - sh % 8) */
    uint8_t d, ib, istop; /* 10, 11, 12: d, sh / 8, stop >> sh */
    uint8_t L;            /* 13: the scores (DENSE labels, L of them a prototype) */
    uint8_t *list;        /* 14: L > 1: where the next (k, labels row) entry goes (L = 1: the
                           * sum is returned) */
    int16_t ksat;         /* 16: k of a D from stop on (0 unless D saturated below nt) */
} kb_protonn_avr_ctx_t;
typedef char kb_protonn_avr_ctx_layout[(offsetof(kb_protonn_avr_ctx_t, P) == 4 &&
                                        offsetof(kb_protonn_avr_ctx_t, table) == 6 &&
                                        offsetof(kb_protonn_avr_ctx_t, imul) == 8 &&
                                        offsetof(kb_protonn_avr_ctx_t, d) == 10 &&
                                        offsetof(kb_protonn_avr_ctx_t, ib) == 11 &&
                                        offsetof(kb_protonn_avr_ctx_t, istop) == 12 &&
                                        offsetof(kb_protonn_avr_ctx_t, L) == 13 &&
                                        offsetof(kb_protonn_avr_ctx_t, list) == 14 &&
                                        offsetof(kb_protonn_avr_ctx_t, ksat) == 16)
                                           ? 1
                                           : -1];

/* kb_protonn_avr_one(ctx, pp, csum, zq, m): the kernel values of a model with DENSE labels over
 * m DENSE prototypes (rows at pp, C_j at csum, labels at zq, all flash): per prototype
 * v = h0 + C_j - sum_r P_r Bq_r (24 cycles a term, kb_protonn_avr_dotsub, two a loop turn),
 * and when v < 0 (D below stop) k = table[istop + the index of v], else ksat. L = 1: S_0 +=
 * Zq_j0 k in registers, returned. L > 1: each k that is not 0 goes onto ctx->list with its
 * labels row (k u16, the row's flash address u16), for kb_protonn_avr_labels. About 60 cycles a
 * prototype besides. Assembly (the context in Y) as a weak symbol in its own
 * section, as kb_proj_avr_block7 (kb_proj.h). */
#ifdef __cplusplus
extern "C" {
#endif
int32_t kb_protonn_avr_one(const kb_protonn_avr_ctx_t *ctx, const uint8_t *pp,
                           const uint8_t *csum, const uint8_t *zq, uint8_t m);
#ifdef __cplusplus
}
#endif
__asm__(
    ".pushsection .text.kb_protonn_avr_one,\"ax\",@progbits\n\t"
    ".weak kb_protonn_avr_one\n\t"
    ".type kb_protonn_avr_one, @function\n"
    "kb_protonn_avr_one:\n\t"
    KB_AVR_SAVE_ALL
    "movw r28, r24\n\t" /* Y: the context */
    "movw r10, r22\n\t" /* the prototype rows */
    "movw r8, r20\n\t"  /* C_j */
    "movw r6, r18\n\t"  /* the labels */
    "mov r21, r16\n\t"  /* prototypes left */
    "clr r2\n\t"        /* zero */
    "clr r12\n\t"       /* S_0 */
    "clr r13\n\t"
    "movw r14, r12\n\t"
    "ldd r19, Y+13\n\t" /* T: more than one score */
    "clt\n\t"
    "cpi r19, 2\n\t"
    "brlo 1f\n\t"
    "set\n"
    "1:\n"
    ".Lkb_p1_proto:\n\t"
    "movw r30, r8\n\t" /* s = h0 + C_j */
    "lpm r22, Z+\n\t"
    "lpm r23, Z+\n\t"
    "lpm r24, Z+\n\t"
    "lpm r25, Z+\n\t"
    "movw r8, r30\n\t"
    "ldd r3, Y+0\n\t"
    "add r22, r3\n\t"
    "ldd r3, Y+1\n\t"
    "adc r23, r3\n\t"
    "ldd r3, Y+2\n\t"
    "adc r24, r3\n\t"
    "ldd r3, Y+3\n\t"
    "adc r25, r3\n\t"
    "movw r30, r10\n\t"
    "ldd r26, Y+4\n\t"
    "ldd r27, Y+5\n\t"
    "ldd r20, Y+10\n\t"
    "ldi r19, 0x80\n\t"
    /* two terms a turn: (d + 1) / 2 turns, an odd d entering at the second */
    "lsr r20\n\t"
    "brcc .Lkb_p1_term\n\t"
    "inc r20\n\t"
    "rjmp .Lkb_p1_term2\n"
    ".Lkb_p1_term:\n\t" /* s -= P_r Bq_r with the offsets (kb_smat_avr_dots) */
    "lpm r16, Z+\n\t"
    "ld r17, X+\n\t"
    "ld r18, X+\n\t"
    "mulsu r16, r17\n\t"
    "eor r1, r19\n\t"
    "sub r22, r0\n\t"
    "sbc r23, r1\n\t"
    "sbc r24, r2\n\t"
    "sbc r25, r2\n\t"
    "muls r16, r18\n\t"
    "eor r1, r19\n\t"
    "sub r23, r0\n\t"
    "sbc r24, r1\n\t"
    "sbc r25, r2\n\t"
    ".Lkb_p1_term2:\n\t"
    "lpm r16, Z+\n\t"
    "ld r17, X+\n\t"
    "ld r18, X+\n\t"
    "mulsu r16, r17\n\t"
    "eor r1, r19\n\t"
    "sub r22, r0\n\t"
    "sbc r23, r1\n\t"
    "sbc r24, r2\n\t"
    "sbc r25, r2\n\t"
    "muls r16, r18\n\t"
    "eor r1, r19\n\t"
    "sub r23, r0\n\t"
    "sbc r24, r1\n\t"
    "sbc r25, r2\n\t"
    "dec r20\n\t"
    "brne .Lkb_p1_term\n\t"
    "movw r10, r30\n\t"
    "sbrc r25, 7\n\t"
    "rjmp 5f\n\t"
    "ldd r17, Y+16\n\t" /* v >= 0: D from stop on, k = ksat (mostly 0) */
    "ldd r18, Y+17\n\t"
    "cp r17, r2\n\t"
    "cpc r18, r2\n\t"
    "breq .Lkb_p1_next\n\t"
    "rjmp 6f\n"
    "5:\n\t"
    /* w: the 16 bits of v from byte ib on (the sign above byte 3) */
    "ldd r19, Y+11\n\t"
    "movw r16, r22\n\t"
    "cpi r19, 1\n\t"
    "brlo 2f\n\t"
    "mov r16, r23\n\t"
    "mov r17, r24\n\t"
    "breq 2f\n\t"
    "mov r16, r24\n\t"
    "mov r17, r25\n\t"
    "cpi r19, 3\n\t"
    "brne 2f\n\t"
    "mov r16, r25\n\t"
    "mov r17, r25\n\t"
    "lsl r17\n\t"
    "sbc r17, r17\n"
    "2:\n\t" /* i = istop + the top byte of w * imul, modulo 2^16 and 2^8 */
    "ldd r3, Y+8\n\t"
    "ldd r4, Y+9\n\t"
    "mul r16, r3\n\t"
    "mov r26, r1\n\t"
    "mul r17, r3\n\t"
    "add r26, r0\n\t"
    "mul r16, r4\n\t"
    "add r26, r0\n\t"
    "ldd r3, Y+12\n\t"
    "add r26, r3\n\t"
    "ldd r30, Y+6\n\t" /* k = table[i] */
    "ldd r31, Y+7\n\t"
    "add r30, r26\n\t"
    "adc r31, r2\n\t"
    "add r30, r26\n\t"
    "adc r31, r2\n\t"
    "lpm r17, Z+\n\t"
    "lpm r18, Z\n"
    "6:\n\t"
    "movw r30, r6\n\t" /* S_l += Zq_jl k (k >= 0) */
    "brts .Lkb_p1_many\n\t"
    "lpm r16, Z\n\t"
    "mulsu r16, r17\n\t"
    "clr r3\n\t"
    "sbrc r1, 7\n\t"
    "com r3\n\t"
    "add r12, r0\n\t"
    "adc r13, r1\n\t"
    "adc r14, r3\n\t"
    "adc r15, r3\n\t"
    "mulsu r16, r18\n\t"
    "clr r3\n\t"
    "sbrc r1, 7\n\t"
    "com r3\n\t"
    "add r13, r0\n\t"
    "adc r14, r1\n\t"
    "adc r15, r3\n"
    ".Lkb_p1_next:\n\t"
    "ldd r19, Y+13\n\t" /* the next prototype's labels */
    "add r6, r19\n\t"
    "adc r7, r2\n\t"
    "dec r21\n\t"
    "breq 3f\n\t"
    "rjmp .Lkb_p1_proto\n"
    ".Lkb_p1_many:\n\t" /* L > 1: k (when not 0) and the labels row onto the list */
    "cp r17, r2\n\t"
    "cpc r18, r2\n\t"
    "breq .Lkb_p1_next\n\t"
    "ldd r26, Y+14\n\t"
    "ldd r27, Y+15\n\t"
    "st X+, r17\n\t"
    "st X+, r18\n\t"
    "st X+, r6\n\t"
    "st X+, r7\n\t"
    "std Y+14, r26\n\t"
    "std Y+15, r27\n\t"
    "rjmp .Lkb_p1_next\n"
    "3:\n\t"
    "movw r22, r12\n\t"
    "movw r24, r14\n\t"
    KB_AVR_RESTORE_ALL
    ".size kb_protonn_avr_one, .-kb_protonn_avr_one\n\t"
    ".popsection");

/* kb_protonn_avr_labels(lab): S_l += sum over the list's entries of Zq_jl k_j for every label l,
 * the labels a group of 4 (then 2, 1) at a time: the group's sums in registers over the whole
 * list, so a term is an LPM and two products into a register sum, 16 cycles, and an entry 13
 * more a group; the sums go to RAM once a group. Where kb_protonn_avr_one added each label into
 * RAM as it went, about 40 cycles a label. As kb_smat_avr_dots, a product's top bit is flipped
 * (2^15 more, 2^23 for the high byte's: no sign extension) and n times both are taken off at
 * the end. k >= 0. Assembly as a weak symbol in its own section (see kb_proj_avr_block7). */
typedef struct {
    const uint8_t *list; /* 0: n entries: k u16, the labels row's flash address u16 */
    int32_t *scores;     /* 2 */
    uint8_t n, L;        /* 4, 5: n >= 1 */
} kb_protonn_avr_lab_t;
typedef char kb_protonn_avr_lab_layout[(offsetof(kb_protonn_avr_lab_t, scores) == 2 &&
                                        offsetof(kb_protonn_avr_lab_t, n) == 4 &&
                                        offsetof(kb_protonn_avr_lab_t, L) == 5)
                                           ? 1
                                           : -1];
#ifdef __cplusplus
extern "C" {
#endif
void kb_protonn_avr_labels(const kb_protonn_avr_lab_t *lab);
#ifdef __cplusplus
}
#endif
/* Registers: Y lab, X the list, Z a labels row, r17:r18 k, r16 a label weight, r19 0x80, r20
 * zero, r21 entries left, r23 the group's first label; the sums r2-r5, r6-r9, r10-r13,
 * r14/r15/r24/r25. */
__asm__(
    ".pushsection .text.kb_protonn_avr_labels,\"ax\",@progbits\n\t"
    ".weak kb_protonn_avr_labels\n\t"
    ".type kb_protonn_avr_labels, @function\n"
    ".macro kb_pl_term a0, a1, a2, a3\n\t"
    "lpm r16, Z+\n\t"
    "mulsu r16, r17\n\t"
    "eor r1, r19\n\t"
    "add \\a0, r0\n\t"
    "adc \\a1, r1\n\t"
    "adc \\a2, r20\n\t"
    "adc \\a3, r20\n\t"
    "mulsu r16, r18\n\t"
    "eor r1, r19\n\t"
    "add \\a1, r0\n\t"
    "adc \\a2, r1\n\t"
    "adc \\a3, r20\n\t"
    ".endm\n\t"
    ".macro kb_pl_zero a0, a1, a2, a3\n\t"
    "clr \\a0\n\t"
    "clr \\a1\n\t"
    "clr \\a2\n\t"
    "clr \\a3\n\t"
    ".endm\n\t"
    /* r1:r0 = n * 128: take n (2^15 + 2^23) off, then add the sum into RAM at X */
    ".macro kb_pl_out a0, a1, a2, a3\n\t"
    "sub \\a1, r0\n\t"
    "sbc \\a2, r1\n\t"
    "sbc \\a3, r20\n\t"
    "sub \\a2, r0\n\t"
    "sbc \\a3, r1\n\t"
    "ld r16, X\n\t"
    "add r16, \\a0\n\t"
    "st X+, r16\n\t"
    "ld r16, X\n\t"
    "adc r16, \\a1\n\t"
    "st X+, r16\n\t"
    "ld r16, X\n\t"
    "adc r16, \\a2\n\t"
    "st X+, r16\n\t"
    "ld r16, X\n\t"
    "adc r16, \\a3\n\t"
    "st X+, r16\n\t"
    ".endm\n\t"
    ".macro kb_pl_pass g\n\t"
    "kb_pl_zero r2, r3, r4, r5\n\t"
    ".if \\g >= 2\n\t"
    "kb_pl_zero r6, r7, r8, r9\n\t"
    ".endif\n\t"
    ".if \\g >= 4\n\t"
    "kb_pl_zero r10, r11, r12, r13\n\t"
    "kb_pl_zero r14, r15, r24, r25\n\t"
    ".endif\n\t"
    "ld r26, Y\n\t"
    "ldd r27, Y+1\n\t"
    "ldd r21, Y+4\n"
    "1:\n\t"
    "ld r17, X+\n\t"
    "ld r18, X+\n\t"
    "ld r30, X+\n\t"
    "ld r31, X+\n\t"
    "add r30, r23\n\t"
    "adc r31, r20\n\t"
    "kb_pl_term r2, r3, r4, r5\n\t"
    ".if \\g >= 2\n\t"
    "kb_pl_term r6, r7, r8, r9\n\t"
    ".endif\n\t"
    ".if \\g >= 4\n\t"
    "kb_pl_term r10, r11, r12, r13\n\t"
    "kb_pl_term r14, r15, r24, r25\n\t"
    ".endif\n\t"
    "dec r21\n\t"
    "breq 2f\n\t"
    "rjmp 1b\n"
    "2:\n\t"
    "ldd r26, Y+2\n\t" /* X = scores + 4 * the group's first label */
    "ldd r27, Y+3\n\t"
    "mov r16, r23\n\t"
    "clr r17\n\t"
    "lsl r16\n\t"
    "rol r17\n\t"
    "lsl r16\n\t"
    "rol r17\n\t"
    "add r26, r16\n\t"
    "adc r27, r17\n\t"
    "ldd r21, Y+4\n\t"
    "mul r21, r19\n\t"
    "kb_pl_out r2, r3, r4, r5\n\t"
    ".if \\g >= 2\n\t"
    "kb_pl_out r6, r7, r8, r9\n\t"
    ".endif\n\t"
    ".if \\g >= 4\n\t"
    "kb_pl_out r10, r11, r12, r13\n\t"
    "kb_pl_out r14, r15, r24, r25\n\t"
    ".endif\n\t"
    "subi r23, -\\g\n\t"
    ".endm\n"
    "kb_protonn_avr_labels:\n\t"
    KB_AVR_SAVE_ALL
    "movw r28, r24\n\t"
    "clr r20\n\t"
    "ldi r19, 0x80\n\t"
    "clr r23\n"
    ".Lkb_pl_group:\n\t"
    "ldd r22, Y+5\n\t" /* labels left */
    "sub r22, r23\n\t"
    "cpi r22, 4\n\t"
    "brsh 6f\n\t"
    "rjmp 3f\n"
    "6:\n\t"
    "kb_pl_pass 4\n\t"
    "rjmp .Lkb_pl_group\n"
    "3:\n\t"
    "cpi r22, 2\n\t"
    "brsh 7f\n\t"
    "rjmp 4f\n"
    "7:\n\t"
    "kb_pl_pass 2\n\t"
    "rjmp .Lkb_pl_group\n"
    "4:\n\t"
    "tst r22\n\t"
    "breq 5f\n\t"
    "kb_pl_pass 1\n\t"
    "rjmp .Lkb_pl_group\n"
    "5:\n\t"
    KB_AVR_RESTORE_ALL
    ".purgem kb_pl_term\n\t"
    ".purgem kb_pl_zero\n\t"
    ".purgem kb_pl_out\n\t"
    ".purgem kb_pl_pass\n\t"
    ".size kb_protonn_avr_labels, .-kb_protonn_avr_labels\n\t"
    ".popsection");

/* The scores for SPARSE labels (kb_protonn_avr_scores has made ctx): per prototype v as
 * kb_protonn_avr_one's, its labels through the cursor. Apart, so that its frame is not on the
 * stack of a model with DENSE labels. */
static __attribute__((noinline)) void kb_protonn_avr_sparse(kb_protonn_t *m,
                                                            const kb_protonn_avr_ctx_t *c)
{
    const uint8_t *pp = m->protos;
    kb_protonn_cur_t zc;
    uint16_t z0 = 0;
    uint8_t j;
    kb_protonn_cur_init(&zc, m->labels, m->llen);
    for (j = 0; j < m->m; j++, pp += c->d) {
        const int32_t v = kb_protonn_avr_dotsub(pp, c->P, c->d,
                                                c->h0 + pgm_read_dword(KB_PROTONN_CSUM + 4u * j));
        const uint16_t end = (uint16_t)(z0 + c->L);
        int16_t k = c->ksat;
        if (v < 0) {
            const uint16_t w = c->ib == 0 ? (uint16_t)v
                                          : (c->ib == 1 ? (uint16_t)((uint32_t)v >> 8)
                                                        : (c->ib == 2
                                                               ? (uint16_t)((uint32_t)v >> 16)
                                                               : (uint16_t)((uint32_t)v >> 24)));
            const uint8_t i = (uint8_t)(c->istop + (uint8_t)((uint16_t)(w * c->imul) >> 8u));
            k = (int16_t)pgm_read_word(c->table + 2u * i);
        }
        while (zc.pos < end) {
            const uint8_t col = (uint8_t)(zc.pos - z0);
            m->scores[col] += kb_smat_avr_mul((int8_t)kb_protonn_take(&zc, 1), k);
        }
        z0 = end;
    }
}

/* The model's constants of kb_protonn_avr_scores, made by its first prediction: the one model
 * this translation unit runs (KB_PROTONN_CSUM) never changes, and their shifts are loops here. */
typedef struct {
    kb_protonn_avr_ctx_t c; /* all but h0 and list */
    uint32_t h0c;           /* h0 less floor(Q / 2^e) */
    uint16_t topmax;        /* the largest |P| no e_r saturates with */
    uint8_t e, s;
    uint8_t state;          /* 0 not made yet, 1 made, 2 a model outside the conditions */
} kb_protonn_avr_const_t;

static __attribute__((noinline)) void kb_protonn_avr_const(kb_protonn_t *m,
                                                           kb_protonn_avr_const_t *k)
{
    const uint8_t d = m->proj.d, s = m->dshift, ks = m->kshift;
    const uint16_t bmul = (uint16_t)m->bmul;
    uint32_t stop;
    uint8_t b = 0, e, r;
    k->state = 2;
    if (m->penc != KB_SMAT_DENSE || bmul < 2u)
        return;
    for (r = (uint8_t)(bmul >> 1); r != 0; r = (uint8_t)(r >> 1)) /* bshift: bmul = 2^bshift */
        b++;
    if (s > b + 1u)
        return;
    e = (uint8_t)(b + 1u - s);
    if (ks < e)
        return;
    /* an e_r could saturate when |P| + 127 * 2^bshift is above 32767 */
    if (((uint32_t)bmul << 7) - bmul > (uint32_t)KB_ACT_MAX)
        return;
    k->topmax = (uint16_t)((uint32_t)KB_ACT_MAX - (((uint32_t)bmul << 7) - bmul));
    stop = (uint32_t)KB_SMALL + 1u;
    if (ks < 23u && ((uint32_t)m->nt << ks) < stop)
        stop = (uint32_t)m->nt << ks;
    stop = kb_protonn_shr(stop, e);
    {
        /* the kernel's sum starts at floor(Q / 2^e) - stop plus the offsets its products
         * take off (kb_protonn_avr_dotsub) */
        const uint16_t k7 = (uint16_t)((uint16_t)d << 7);
        k->h0c = (((uint32_t)k7 << 16) + ((uint32_t)k7 << 8)) - stop;
    }
    /* v = u - stop < 0 means D below stop; then the index u >> sh (sh = kshift - e) is
     * istop + (v >> sh) with istop = stop >> sh (stop is a multiple of 2^sh): below nt, so
     * modulo 256 it is istop + the top byte of the 16 bits of v from byte sh / 8 on times
     * 2^(8 - sh % 8) -- a multiply where a variable shift is a loop */
    k->c.ib = (uint8_t)((uint8_t)(ks - e) >> 3);
    k->c.imul = (uint16_t)(256u >> ((uint8_t)(ks - e) & 7u));
    k->c.istop = (uint8_t)kb_protonn_shr(stop, (uint8_t)(ks - e));
    /* a D from stop on: past the table, or (stop = SMALL + 1) saturated to SMALL, whose index
     * may be inside it */
    {
        const uint32_t isat = kb_protonn_shr((uint32_t)KB_SMALL, ks);
        k->c.ksat = isat < m->nt ? (int16_t)pgm_read_word(m->table + 2u * (uint8_t)isat) : 0;
    }
    k->c.P = m->P;
    k->c.table = m->table;
    k->c.d = d;
    k->c.L = m->L;
    k->e = e;
    k->s = s;
    k->state = 1;
}

/* The scores (m->scores, zeroed by the caller) through D_j = Q + H_j 2^e; 0 when this
 * prediction is outside the conditions above (nothing changed: the caller runs the C). */
static __attribute__((noinline)) uint8_t kb_protonn_avr_scores(kb_protonn_t *m)
{
    static kb_protonn_avr_const_t K;
    const uint8_t d = m->proj.d;
    const int16_t *const P = m->P;
    kb_protonn_avr_ctx_t c;
    uint32_t q = 0;
    uint16_t top = 0;
    uint8_t r;
    if (K.state == 0)
        kb_protonn_avr_const(m, &K);
    if (K.state != 1)
        return 0;
    if (K.s <= 1u) {
        /* rshift_round(P^2, 1) = (P^2 + (P & 1)) / 2, P^2 and P having one parity: the sum
         * of squares and of the odd P's, halved once */
        uint8_t odd = 0;
        for (r = 0; r < d; r++) {
            const int16_t p = P[r];
            const uint16_t u = p < 0 ? (uint16_t)-p : (uint16_t)p;
            if (u > top)
                top = u;
            odd = (uint8_t)(odd + (u & 1u));
            q += kb_protonn_sq(u > KB_ACT_MAX ? (uint16_t)KB_ACT_MAX : u);
            if (q > 2u * (uint32_t)KB_SMALL + 1u)
                return 0;
        }
        if (K.s)
            q = (q + odd) >> 1;
        if (q > (uint32_t)KB_SMALL)
            return 0;
    } else {
        const uint32_t half = (uint32_t)1 << (K.s - 1u);
        for (r = 0; r < d; r++) {
            const int16_t p = P[r];
            const uint16_t u = p < 0 ? (uint16_t)-p : (uint16_t)p;
            if (u > top)
                top = u;
            q += kb_protonn_term(p, 0, K.s, half);
            if (q > (uint32_t)KB_SMALL)
                return 0;
        }
    }
    if (top > K.topmax)
        return 0; /* an e_r could saturate */
    c = K.c;
    c.h0 = kb_protonn_shr(q, K.e) + K.h0c;
    if (m->lenc == KB_SMAT_DENSE && c.L == 1) {
        m->scores[0] = kb_protonn_avr_one(&c, m->protos, KB_PROTONN_CSUM, m->labels, m->m);
    }
#if KB_PROTONN_LMAX > 1 /* a firmware of one score leaves out the labels' assembly */
    else if (m->lenc == KB_SMAT_DENSE) {
        /* the kernel values of KB_PROTONN_BLOCK prototypes at a time, then their labels */
        uint8_t list[4 * KB_PROTONN_BLOCK];
        kb_protonn_avr_lab_t lab;
        const uint8_t *pp = m->protos, *cs = KB_PROTONN_CSUM, *zq = m->labels;
        uint8_t left = m->m;
        lab.list = list;
        lab.scores = m->scores;
        lab.L = c.L;
        while (left != 0) {
            const uint8_t nb = left > KB_PROTONN_BLOCK ? KB_PROTONN_BLOCK : left;
            c.list = list;
            (void)kb_protonn_avr_one(&c, pp, cs, zq, nb);
            lab.n = (uint8_t)((uint16_t)(c.list - list) >> 2);
            if (lab.n != 0)
                kb_protonn_avr_labels(&lab);
            pp += (uint16_t)nb * d;
            cs += 4u * nb;
            zq += (uint16_t)nb * c.L;
            left = (uint8_t)(left - nb);
        }
    }
#endif
    else {
        kb_protonn_avr_sparse(m, &c);
    }
    return 1;
}
#else
#define KB_PROTONN_AVR 0
#endif

/* The scores (zeroed by the caller; and D, k) of the prediction, in C.
 *
 * D only grows as terms are added, so a prototype's sum stops at `stop`: SMALL + 1 (the sum
 * saturates to SMALL, 10.1) and, in a build that does not report D (KB_PROTONN_NO_FIELDS),
 * nt << kshift when that is smaller: from there on its index is past the table and k = 0
 * whatever the remaining terms are. */
static KB_PROTONN_HOT
#if KB_PROTONN_AVR
    __attribute__((noinline)) /* its frame is not on the stack of the Uno's path */
#endif
    void kb_protonn_scores_c(kb_protonn_t *m)
{
    const uint8_t d = m->proj.d, L = m->L, wb = m->wb, dshift = m->dshift, kshift = m->kshift;
    const uint32_t half = dshift ? (uint32_t)1 << (dshift - 1u) : 0u;
    const int16_t bmul = m->bmul;
    const uint8_t *pp = m->protos, *zp = m->labels;
    kb_protonn_cur_t pc, zc;
    uint16_t p0 = 0, z0 = 0;
    uint32_t stop = (uint32_t)KB_SMALL + 1u;
    uint8_t j, l;
#ifdef KB_PROTONN_NO_FIELDS
    if (kshift < 23u && ((uint32_t)m->nt << kshift) < stop)
        stop = (uint32_t)m->nt << kshift;
#endif
    /* a DENSE matrix is walked by pointer; its cursor is empty */
    kb_protonn_cur_init(&pc, m->protos, m->penc == KB_SMAT_SPARSE ? m->plen : 0u);
    kb_protonn_cur_init(&zc, m->labels, m->lenc == KB_SMAT_SPARSE ? m->llen : 0u);
    for (j = 0; j < m->m; j++) {
        uint32_t s = 0, i;
        int16_t k = 0;
        if (m->penc == KB_SMAT_DENSE) {
            s = stop - kb_protonn_dist_dense(m->P, pp, d, wb, bmul, dshift, half, stop);
            pp += (uint16_t)d * KB_WB(wb);
        } else {
            s = kb_protonn_dist_sparse(m, &pc, p0, half, stop);
            p0 = (uint16_t)(p0 + d);
        }
        if (s > (uint32_t)KB_SMALL)
            s = (uint32_t)KB_SMALL;
        i = kb_protonn_shr(s, kshift);
        if (i < m->nt)
            k = kb_flash_i16(m->table + 2u * (uint8_t)i);
#ifndef KB_PROTONN_NO_FIELDS
        m->D[j] = (int32_t)s;
        m->k[j] = k;
#endif
        /* |Zq * k| <= 32767^2 < 2^30 and every partial sum stays within SMALL (10.1) */
        if (m->lenc == KB_SMAT_DENSE) {
            if (k != 0)
                for (l = 0; l < L; l++)
                    m->scores[l] += (int32_t)kb_smat_weight(zp + (uint16_t)l * KB_WB(wb), wb) * k;
            zp += (uint16_t)L * KB_WB(wb);
        } else {
            const uint16_t end = (uint16_t)(z0 + L);
            while (zc.pos < end) {
                const uint8_t col = (uint8_t)(zc.pos - z0);
                m->scores[col] += (int32_t)kb_protonn_take(&zc, wb) * k;
            }
            z0 = end;
        }
    }
}

/* The prediction for the input streamed since the last one (binary: 1 when S_0 > 0;
 * multi-class: the first highest score; multilabel: the bit mask of the positive scores);
 * sets P, scores (and D, k) and resets the stream. */
static KB_PROTONN_HOT uint32_t kb_protonn_predict(kb_protonn_t *m)
{
    const uint8_t L = m->L;
    uint8_t j, l;
    kb_proj_finish(&m->proj, m->P);
    for (l = 0; l < L; l++)
        m->scores[l] = 0;
#if KB_PROTONN_AVR
    if (!kb_protonn_avr_scores(m))
#endif
        kb_protonn_scores_c(m);
    if (m->multilabel) {
        uint32_t mask = 0;
        for (l = 0; l < L; l++)
            if (m->scores[l] > 0)
                mask |= (uint32_t)1 << l;
        return mask;
    }
    if (L == 1)
        return (uint32_t)(m->scores[0] > 0);
    j = 0;
    for (l = 1; l < L; l++)
        if (m->scores[l] > m->scores[j])
            j = l;
    return j;
}

#endif /* KB_PROTONN_H */
