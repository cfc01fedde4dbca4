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

#if KB_SMAT_AVR && defined(KB_PROTONN_NO_FIELDS) && defined(KB_PROTONN_GROUPS)
/* The Uno's prototype distances (KB_SMAT_AVR, a build that reports no D, and the firmware
 * header's table and constants KB_PROTONN_GROUPS, KB_PROTONN_Q*: kilobit.models.protonn.firmware,
 * made from the same model file). With b = Bq << bshift and no e_r saturating
 * (|P_r - b_r| <= 32767), e^2 = P^2 - 2 P b + b^2, and when 2^dshift divides 2 P b and b^2
 * (dshift <= bshift + 1, bshift >= 1) the rounding shift passes through them: D_j = Q + H_j 2^e,
 * with
 *     Q   = sum_r rshift_round(P_r^2, dshift)          once per prediction
 *     H_j = C_j - sum_r P_r Bq_jr                       one multiply-add a term
 *     C_j = 2^(bshift-1) sum_r Bq_jr^2,  e = bshift + 1 - dshift.
 * Only k_j = table[D_j >> kshift] is needed (0 from stop on, or the saturated D's entry);
 * with kshift >= e that is (floor(Q / 2^e) + H_j) >> (kshift - e), compared with stop >> e:
 * the same integers as the contract's. The products are taken unsigned, P_r + 2^15 (its top bit
 * flipped) times Bq_jr + 128 (the table's copy), so a term is two MULs without sign
 * extension; the offsets are 2^15 sum_r Bq_jr, in the table's C'_j, and 2^7 sum_r P_r + d 2^22,
 * in the per-input constant. Four prototypes share each load of P_r, their sums in registers:
 * 16 cycles a term (issue 22). A prediction outside these conditions takes the C. */
#define KB_PROTONN_AVR 1
#ifndef KB_PROTONN_BLOCK /* the header's: all the prototypes, up to 64 */
#define KB_PROTONN_BLOCK 32 /* prototypes a pass of kb_protonn_avr_labels: 4 B of RAM each */
#endif
#if KB_PROTONN_BLOCK % 4 != 0 || KB_PROTONN_BLOCK > 64
#error "KB_PROTONN_BLOCK must be a multiple of the kernel's group of 4, at most 64"
#endif
#define KB_PROTONN_STR_(x) #x
#define KB_PROTONN_STR(x) KB_PROTONN_STR_(x)

/* What kb_protonn_avr_kern reads of a prediction (the offsets are the assembly's). */
typedef struct {
    uint32_t h0;          /* 0: floor(Q / 2^e) - stop + 2^7 sum_r P_r + d 2^22 (mod 2^32) */
    const int16_t *P;     /* 4 */
    const uint8_t *table; /* 6: the kernel table, flash */
    uint8_t *list;        /* 8: L > 1: where the next (k, labels row) entry goes */
    uint8_t left;         /* 10: prototypes left */
    uint8_t unused;       /* 11 */
    int32_t s;            /* 12: L = 1: S_0 so far */
} kb_protonn_avr_ctx_t;
KB_AVR_LAYOUT(kb_protonn_avr_ctx_layout, offsetof(kb_protonn_avr_ctx_t, P) == 4 &&
                                         offsetof(kb_protonn_avr_ctx_t, table) == 6 &&
                                         offsetof(kb_protonn_avr_ctx_t, list) == 8 &&
                                         offsetof(kb_protonn_avr_ctx_t, left) == 10 &&
                                         offsetof(kb_protonn_avr_ctx_t, s) == 12);

/* kb_protonn_avr_kern(ctx, grp, zq, n): the kernel values of n >= 1 prototypes (counted down in
 * ctx->left) from the KB_PROTONN_GROUPS group at grp on: per prototype j
 * v = h0 + C'_j - sum_r (P_r + 2^15)(Bq_jr + 128), and when v < 0 (D below stop)
 * k = table[istop + (v >> sh) mod 256], else ksat;
 * each k that is not 0 goes onto ctx->list with its labels row (k u16, zq + j L u16: a flash
 * address for DENSE labels, j L when zq is 0); with one score (L = 1) ctx->s += Zq_j0 k_j
 * instead, Zq_j0 the group's last bytes. About 45 cycles a prototype besides its terms.
 * The model's d, L, sh, istop and ksat are immediates (the header's KB_PROTONN_Q*).
 * Registers: the four sums r2-r5, r6-r9, r10-r13, r14-r17; P_r r18:r19, a weight r20, turns
 * r21 (then h0 in r18-r21), zero r22, r23 scratch, the labels row r24:r25, X P then the list,
 * Y ctx, Z the group. Assembly as a weak symbol in its own section, as kb_proj_avr_block7. */
#ifdef __cplusplus
extern "C" {
#endif
void kb_protonn_avr_kern(kb_protonn_avr_ctx_t *ctx, const uint8_t *grp, const uint8_t *zq,
                         uint8_t n);
#ifdef __cplusplus
}
#endif
__asm__(
    ".pushsection .text.kb_protonn_avr_kern,\"ax\",@progbits\n\t"
    ".weak kb_protonn_avr_kern\n\t"
    ".type kb_protonn_avr_kern, @function\n\t"
    ".set kb_q_d, " KB_PROTONN_STR(KB_PROTONN_QD) "\n\t"
    ".set kb_q_l, " KB_PROTONN_STR(KB_PROTONN_QL) "\n\t"
    ".set kb_q_ib, (" KB_PROTONN_STR(KB_PROTONN_QSH) ") >> 3\n\t"
    ".set kb_q_t, (" KB_PROTONN_STR(KB_PROTONN_QSH) ") & 7\n\t"
    ".set kb_q_istop, " KB_PROTONN_STR(KB_PROTONN_QISTOP) "\n\t"
    ".set kb_q_ksat, " KB_PROTONN_STR(KB_PROTONN_QKSAT) "\n\t"
    /* a -= (P_r + 2^15) w, w = Bq + 128 the group's next byte */
    ".macro kb_q_term a0, a1, a2, a3\n\t"
    "lpm r20, Z+\n\t"
    "mul r18, r20\n\t"
    "sub \\a0, r0\n\t"
    "sbc \\a1, r1\n\t"
    "sbc \\a2, r22\n\t"
    "sbc \\a3, r22\n\t"
    "mul r19, r20\n\t"
    "sub \\a1, r0\n\t"
    "sbc \\a2, r1\n\t"
    "sbc \\a3, r22\n\t"
    ".endm\n\t"
    /* the four sums' terms of one r: P_r + 2^15 in r19:r18 */
    ".macro kb_q_row\n\t"
    "ld r18, X+\n\t"
    "ld r19, X+\n\t"
    "eor r19, r23\n\t"
    "kb_q_term r2, r3, r4, r5\n\t"
    "kb_q_term r6, r7, r8, r9\n\t"
    "kb_q_term r10, r11, r12, r13\n\t"
    "kb_q_term r14, r15, r16, r17\n\t"
    ".endm\n\t"
    /* r0 = istop + (v >> sh) mod 256 from v's bytes lo, hi (sh = 8 ib + t), s a free register:
     * lo >> t and hi << (8 - t) as the high and low bytes of two MULs by 2^(8 - t) */
    ".macro kb_q_index lo, hi, s\n\t"
    ".if kb_q_t == 0\n\t"
    "mov r0, \\lo\n\t"
    ".else\n\t"
    "ldi r23, 1 << (8 - kb_q_t)\n\t"
    "mul \\lo, r23\n\t"
    "mov \\s, r1\n\t"
    ".if kb_q_ib == 3\n\t" /* above byte 3: the sign, all ones (v < 0) */
    "ldi r23, (0xFF << (8 - kb_q_t)) & 0xFF\n\t"
    "mov r0, r23\n\t"
    ".else\n\t"
    "mul \\hi, r23\n\t"
    ".endif\n\t"
    "or r0, \\s\n\t"
    ".endif\n\t"
    "ldi r23, kb_q_istop\n\t"
    "add r0, r23\n\t"
    ".endm\n\t"
    /* v = a + h0; k onto the list unless 0; the labels row on by L */
    /* v = a + h0, its k (table, ksat); L > 1: k onto the list unless 0, the labels row on by
     * L; L = 1: S += Zq_j k (Zq_j the group's next byte; a byte taken unsigned is 2^8 too
     * much when negative: 2^8 k off) */
    ".macro kb_q_post a0, a1, a2, a3\n\t"
    "add \\a0, r18\n\t"
    "adc \\a1, r19\n\t"
    "adc \\a2, r20\n\t"
    "adc \\a3, r21\n\t"
    "sbrs \\a3, 7\n\t"
    ".if kb_q_l != 1 && kb_q_ksat == 0\n\t"
    "rjmp 7f\n\t" /* D from stop on: k = 0, nothing onto the list */
    ".else\n\t"
    "rjmp 9f\n\t"
    ".endif\n\t"
    ".if kb_q_ib == 0\n\t"
    "kb_q_index \\a0, \\a1, \\a2\n\t"
    ".elseif kb_q_ib == 1\n\t"
    "kb_q_index \\a1, \\a2, \\a0\n\t"
    ".elseif kb_q_ib == 2\n\t"
    "kb_q_index \\a2, \\a3, \\a0\n\t"
    ".else\n\t"
    "kb_q_index \\a3, \\a3, \\a0\n\t"
    ".endif\n\t"
    "movw \\a0, r30\n\t" /* k = table[r0], Z kept in a0:a1 */
    "ldd r30, Y+6\n\t"
    "ldd r31, Y+7\n\t"
    "add r30, r0\n\t"
    "adc r31, r22\n\t"
    "add r30, r0\n\t"
    "adc r31, r22\n\t"
    "lpm \\a2, Z+\n\t"
    "lpm \\a3, Z\n\t"
    "movw r30, \\a0\n\t"
    ".if kb_q_l == 1 || kb_q_ksat != 0\n\t"
    "rjmp 8f\n"
    "9:\n\t"
    ".if kb_q_l == 1 && kb_q_ksat == 0\n\t"
    "adiw r30, 1\n\t" /* k = 0: past Zq_j */
    "rjmp 7f\n\t"
    ".else\n\t"
    "ldi r23, lo8(kb_q_ksat)\n\t"
    "mov \\a2, r23\n\t"
    "ldi r23, hi8(kb_q_ksat)\n\t"
    "mov \\a3, r23\n\t"
    ".endif\n"
    "8:\n\t"
    ".endif\n\t"
    ".if kb_q_l == 1\n\t"
    "lpm r23, Z+\n\t"
    "mul r23, \\a2\n\t"
    "add r24, r0\n\t"
    "adc r25, r1\n\t"
    "adc r26, r22\n\t"
    "adc r27, r22\n\t"
    "mul r23, \\a3\n\t"
    "add r25, r0\n\t"
    "adc r26, r1\n\t"
    "adc r27, r22\n\t"
    "sbrs r23, 7\n\t"
    "rjmp 7f\n\t"
    "sub r25, \\a2\n\t"
    "sbc r26, \\a3\n\t"
    "sbc r27, r22\n"
    "7:\n\t"
    ".else\n\t"
    "mov r23, \\a2\n\t"
    "or r23, \\a3\n\t"
    "breq 7f\n\t"
    "st X+, \\a2\n\t"
    "st X+, \\a3\n\t"
    "st X+, r24\n\t"
    "st X+, r25\n"
    "7:\n\t"
    "subi r24, lo8(-kb_q_l)\n\t"
    "sbci r25, hi8(-kb_q_l)\n\t"
    ".endif\n\t"
    ".endm\n\t"
    /* the list (L > 1) or S's bytes 2-3 (L = 1: bytes 0-1 stay in r24:r25) in X, and back */
    ".macro kb_q_xin\n\t"
    ".if kb_q_l == 1\n\t"
    "ldd r26, Y+14\n\t"
    "ldd r27, Y+15\n\t"
    ".else\n\t"
    "ldd r26, Y+8\n\t"
    "ldd r27, Y+9\n\t"
    ".endif\n\t"
    ".endm\n\t"
    ".macro kb_q_xout\n\t"
    ".if kb_q_l == 1\n\t"
    "std Y+14, r26\n\t"
    "std Y+15, r27\n\t"
    ".else\n\t"
    "std Y+8, r26\n\t"
    "std Y+9, r27\n\t"
    ".endif\n\t"
    ".endm\n"
    "kb_protonn_avr_kern:\n\t"
    KB_AVR_SAVE_ALL
    "movw r28, r24\n\t"
    "movw r30, r22\n\t"
    "movw r24, r20\n\t"
    "std Y+10, r18\n\t" /* prototypes left */
    ".if kb_q_l == 1\n\t"
    "ldd r24, Y+12\n\t"
    "ldd r25, Y+13\n\t"
    ".endif\n\t"
    "clr r22\n"
    ".Lkb_q_group:\n\t"
    "lpm r2, Z+\n\t" /* the sums start at C'_j */
    "lpm r3, Z+\n\t"
    "lpm r4, Z+\n\t"
    "lpm r5, Z+\n\t"
    "lpm r6, Z+\n\t"
    "lpm r7, Z+\n\t"
    "lpm r8, Z+\n\t"
    "lpm r9, Z+\n\t"
    "lpm r10, Z+\n\t"
    "lpm r11, Z+\n\t"
    "lpm r12, Z+\n\t"
    "lpm r13, Z+\n\t"
    "lpm r14, Z+\n\t"
    "lpm r15, Z+\n\t"
    "lpm r16, Z+\n\t"
    "lpm r17, Z+\n\t"
    "ldd r26, Y+4\n\t"
    "ldd r27, Y+5\n\t"
    "ldi r21, (kb_q_d + 1) / 2\n\t" /* two r a turn, an odd d entering at the second */
    "ldi r23, 0x80\n\t"
    ".if kb_q_d & 1\n\t"
    "rjmp .Lkb_q_r2\n\t"
    ".endif\n"
    ".Lkb_q_r:\n\t"
    "kb_q_row\n"
    ".Lkb_q_r2:\n\t"
    "kb_q_row\n\t"
    "dec r21\n\t"
    "breq .Lkb_q_rend\n\t"
    "rjmp .Lkb_q_r\n"
    ".Lkb_q_rend:\n\t"
    "ldd r18, Y+0\n\t"
    "ldd r19, Y+1\n\t"
    "ldd r20, Y+2\n\t"
    "ldd r21, Y+3\n\t"
    "kb_q_xin\n\t"
    "ldd r23, Y+10\n\t"
    "subi r23, 4\n\t"
    "brsh 1f\n\t"
    "rjmp .Lkb_q_last\n"
    "1:\n\t"
    "std Y+10, r23\n\t"
    "kb_q_post r2, r3, r4, r5\n\t"
    "kb_q_post r6, r7, r8, r9\n\t"
    "kb_q_post r10, r11, r12, r13\n\t"
    "kb_q_post r14, r15, r16, r17\n\t"
    "kb_q_xout\n\t"
    "ldd r23, Y+10\n\t"
    "cpse r23, r22\n\t"
    "rjmp .Lkb_q_group\n\t"
    "rjmp .Lkb_q_end\n"
    ".Lkb_q_last:\n\t" /* 1 to 3 prototypes in a padded group */
    "subi r23, -4\n\t"
    "std Y+10, r23\n\t"
    "kb_q_post r2, r3, r4, r5\n\t"
    "ldd r23, Y+10\n\t"
    "cpi r23, 2\n\t"
    "brsh 1f\n\t"
    "rjmp .Lkb_q_end\n"
    "1:\n\t"
    "kb_q_post r6, r7, r8, r9\n\t"
    "ldd r23, Y+10\n\t"
    "cpi r23, 3\n\t"
    "brsh 1f\n\t"
    "rjmp .Lkb_q_end\n"
    "1:\n\t"
    "kb_q_post r10, r11, r12, r13\n"
    ".Lkb_q_end:\n\t"
    "kb_q_xout\n\t"
    ".if kb_q_l == 1\n\t"
    "std Y+12, r24\n\t"
    "std Y+13, r25\n\t"
    ".endif\n\t"
    KB_AVR_RESTORE_ALL
    ".purgem kb_q_term\n\t"
    ".purgem kb_q_row\n\t"
    ".purgem kb_q_index\n\t"
    ".purgem kb_q_post\n\t"
    ".purgem kb_q_xin\n\t"
    ".purgem kb_q_xout\n\t"
    ".size kb_protonn_avr_kern, .-kb_protonn_avr_kern\n\t"
    ".popsection");

/* kb_protonn_avr_labels(lab): S_l += sum over the list's entries of Zq_jl k_j for every label l,
 * the labels a group of 4 (then 2, 1) at a time: the group's sums in registers over the whole
 * list, so a term is an LPM and two products into a register sum, 16 cycles, and an entry 13
 * more a group; the sums go to RAM once a group (added into RAM label by label, a term cost
 * about 40 cycles). As kb_smat_avr_dots, a product's top bit is flipped
 * (2^15 more, 2^23 for the high byte's: no sign extension) and n times both are taken off at
 * the end. k >= 0. Assembly as a weak symbol in its own section (see kb_proj_avr_block7). */
typedef struct {
    const uint8_t *list; /* 0: n entries: k u16, the labels row's flash address u16 */
    int32_t *scores;     /* 2 */
    uint8_t n, L;        /* 4, 5: n >= 1 */
} kb_protonn_avr_lab_t;
KB_AVR_LAYOUT(kb_protonn_avr_lab_layout, offsetof(kb_protonn_avr_lab_t, scores) == 2 &&
                                         offsetof(kb_protonn_avr_lab_t, n) == 4 &&
                                         offsetof(kb_protonn_avr_lab_t, L) == 5);
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
    "brne 1b\n\t" /* 55 words back at most (g = 4) */
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

#if KB_PROTONN_QL > 1
/* The scores for SPARSE labels from a block's list (kb_protonn_avr_kern with zq 0: an entry's
 * row is j L; L > 1), the labels' cursor zc carried from block to block. Apart, so that its
 * frame is not on the stack of a model with DENSE labels. */
static __attribute__((noinline)) void kb_protonn_avr_sparse(kb_protonn_t *m, kb_protonn_cur_t *zc,
                                                            const uint8_t *e, uint8_t n)
{
    for (; n != 0; n--, e += 4) {
        const int16_t k = (int16_t)(e[0] | (uint16_t)e[1] << 8);
        const uint16_t z0 = (uint16_t)(e[2] | (uint16_t)e[3] << 8);
        const uint16_t end = (uint16_t)(z0 + m->L);
        while (zc->pos < z0) /* the labels of prototypes whose k is 0 */
            (void)kb_protonn_take(zc, 1);
        while (zc->pos < end) {
            const uint8_t col = (uint8_t)(zc->pos - z0);
            m->scores[col] += kb_smat_avr_mul((int8_t)kb_protonn_take(zc, 1), k);
        }
    }
}

#endif

/* The model's constants of kb_protonn_avr_scores, made by its first prediction: the one model
 * this translation unit runs never changes, and their shifts are loops here. */
typedef struct {
    uint32_t h0c;    /* h0 less floor(Q / 2^e) and 2^7 sum_r P_r */
    uint16_t topmax; /* the largest |P| no e_r saturates with */
    uint8_t state; /* 0 not made yet, 1 made, 2 a model outside the conditions */
} kb_protonn_avr_const_t;

static __attribute__((noinline)) void kb_protonn_avr_const(const kb_protonn_t *m,
                                                           kb_protonn_avr_const_t *k)
{
    const uint8_t d = m->proj.d, s = m->dshift, ks = m->kshift;
    const uint16_t bmul = (uint16_t)m->bmul;
    uint32_t stop, isat;
    uint8_t b = 0, e, r;
    int16_t ksat;
    k->state = 2;
    if (m->penc != KB_SMAT_DENSE || bmul < 2u || m->wb != 1u)
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
    k->h0c = ((uint32_t)d << 22) - stop;
    /* v = u - stop < 0 means D below stop; then the index u >> sh (sh = kshift - e) is
     * istop + (v >> sh) with istop = stop >> sh (stop is a multiple of 2^sh), below nt: the
     * assembly's immediates, which the header made from the same file */
    isat = kb_protonn_shr((uint32_t)KB_SMALL, ks);
    ksat = isat < m->nt ? (int16_t)pgm_read_word(m->table + 2u * (uint8_t)isat) : 0;
    if (d != KB_PROTONN_QD || m->L != KB_PROTONN_QL || e != KB_PROTONN_QE ||
        ks - e != KB_PROTONN_QSH ||
        kb_protonn_shr(stop, (uint8_t)(ks - e)) != KB_PROTONN_QISTOP || ksat != KB_PROTONN_QKSAT)
        return;
    k->state = 1;
}

/* kb_protonn_avr_q(P, d, o): in one pass over P_0 .. P_{d-1} (d >= 1, |P_r| <= 32767, as
 * kb_proj_finish leaves them) the sum of the squares P_r^2 (o->q; 0xFFFFFFFF when it passes
 * 2^32), of the odd |P_r| (o->odd), of P_r (o->sum) and the largest |P_r| (o->top): what
 * kb_protonn_avr_scores needs of P for Q when dshift <= 1, about 40 cycles a dimension where the
 * C took 75. u^2 = lo^2 + 2 lo hi 2^8 + hi^2 2^16 for u = hi 2^8 + lo, hi <= 127: 2 lo hi
 * fits 16 bits. Assembly as a weak symbol in its own section, as kb_proj_avr_block7. */
typedef struct {
    uint32_t q;   /* 0 */
    int32_t sum;  /* 4: bytes 0-2, sign-extended into 3 by the caller's read */
    uint16_t top; /* 8 */
    uint8_t odd;  /* 10 */
} kb_protonn_avr_q_t;
KB_AVR_LAYOUT(kb_protonn_avr_q_layout, offsetof(kb_protonn_avr_q_t, sum) == 4 &&
                                       offsetof(kb_protonn_avr_q_t, top) == 8 &&
                                       offsetof(kb_protonn_avr_q_t, odd) == 10);
#ifdef __cplusplus
extern "C" {
#endif
void kb_protonn_avr_q(const int16_t *P, uint8_t d, kb_protonn_avr_q_t *o);
#ifdef __cplusplus
}
#endif
/* Registers: X P, Z o, P_r r22:r23 (then |P_r|), the sum of squares r18-r21, of P_r r14-r16,
 * top r24:r25, odd r17, sign r12, turns r13, zero r11. */
__asm__(
    ".pushsection .text.kb_protonn_avr_q,\"ax\",@progbits\n\t"
    ".weak kb_protonn_avr_q\n\t"
    ".type kb_protonn_avr_q, @function\n"
    "kb_protonn_avr_q:\n\t"
    "push r11\n\t"
    "push r12\n\t"
    "push r13\n\t"
    "push r14\n\t"
    "push r15\n\t"
    "push r16\n\t"
    "push r17\n\t"
    "movw r26, r24\n\t"
    "movw r30, r20\n\t"
    "mov r13, r22\n\t"
    "clr r11\n\t"
    "clr r18\n\t"
    "clr r19\n\t"
    "movw r20, r18\n\t"
    "movw r14, r18\n\t"
    "clr r16\n\t"
    "clr r17\n\t"
    "movw r24, r18\n"
    "1:\n\t"
    "ld r22, X+\n\t"
    "ld r23, X+\n\t"
    "mov r12, r23\n\t" /* sum += P_r */
    "lsl r12\n\t"
    "sbc r12, r12\n\t"
    "add r14, r22\n\t"
    "adc r15, r23\n\t"
    "adc r16, r12\n\t"
    "sbrs r23, 7\n\t" /* |P_r| */
    "rjmp 2f\n\t"
    "com r23\n\t"
    "neg r22\n\t"
    "sbci r23, 0xFF\n"
    "2:\n\t"
    "cp r24, r22\n\t" /* top */
    "cpc r25, r23\n\t"
    "brsh 3f\n\t"
    "movw r24, r22\n"
    "3:\n\t"
    "sbrc r22, 0\n\t"
    "inc r17\n\t"
    "mul r22, r22\n\t" /* + lo^2 */
    "add r18, r0\n\t"
    "adc r19, r1\n\t"
    "adc r20, r11\n\t"
    "adc r21, r11\n\t"
    "brcs 5f\n\t"
    "mul r22, r23\n\t" /* + 2 lo hi 2^8 */
    "lsl r0\n\t"
    "rol r1\n\t"
    "add r19, r0\n\t"
    "adc r20, r1\n\t"
    "adc r21, r11\n\t"
    "brcs 5f\n\t"
    "mul r23, r23\n\t" /* + hi^2 2^16 */
    "add r20, r0\n\t"
    "adc r21, r1\n\t"
    "brcs 5f\n\t"
    "dec r13\n\t"
    "brne 1b\n"
    "4:\n\t"
    "st Z+, r18\n\t"
    "st Z+, r19\n\t"
    "st Z+, r20\n\t"
    "st Z+, r21\n\t"
    "st Z+, r14\n\t"
    "st Z+, r15\n\t"
    "st Z+, r16\n\t"
    "st Z+, r16\n\t"
    "st Z+, r24\n\t"
    "st Z+, r25\n\t"
    "st Z+, r17\n\t"
    "clr r1\n\t"
    "pop r17\n\t"
    "pop r16\n\t"
    "pop r15\n\t"
    "pop r14\n\t"
    "pop r13\n\t"
    "pop r12\n\t"
    "pop r11\n\t"
    "ret\n"
    "5:\n\t" /* past 2^32: far above 2 SMALL + 1 */
    "ldi r18, 0xFF\n\t"
    "ldi r19, 0xFF\n\t"
    "movw r20, r18\n\t"
    "rjmp 4b\n\t"
    ".size kb_protonn_avr_q, .-kb_protonn_avr_q\n\t"
    ".popsection");

#if KB_PROTONN_QL > 1
/* kb_protonn_avr_kern's list of a block (static: a frame this large costs the C around it
 * more than the RAM is worth on the stack; one score needs none) */
static uint8_t kb_protonn_avr_list[4 * KB_PROTONN_BLOCK];
#endif

/* The scores (m->scores, zeroed by the caller) through D_j = Q + H_j 2^e; 0 when this
 * prediction is outside the conditions above (nothing changed: the caller runs the C). */
static __attribute__((noinline)) uint8_t kb_protonn_avr_scores(kb_protonn_t *m)
{
    static kb_protonn_avr_const_t K;
    const uint8_t d = m->proj.d, L = m->L;
    const int16_t *const P = m->P;
    kb_protonn_avr_ctx_t c;
    uint32_t q = 0;
    int32_t pw = 0; /* sum_r P_r */
    uint16_t top = 0;
    uint8_t r;
    if (K.state == 0)
        kb_protonn_avr_const(m, &K);
    if (K.state != 1)
        return 0;
    if (m->dshift <= 1u) {
        /* rshift_round(P^2, 1) = (P^2 + (P & 1)) / 2, P^2 and P having one parity: the sum
         * of squares and of the odd P's, halved once */
        kb_protonn_avr_q_t o;
        kb_protonn_avr_q(P, d, &o);
        q = o.q;
        if (q > 2u * (uint32_t)KB_SMALL + 1u)
            return 0;
        if (m->dshift)
            q = (q + o.odd) >> 1;
        if (q > (uint32_t)KB_SMALL)
            return 0;
        pw = (int32_t)((uint32_t)o.sum << 8) >> 8; /* 24 bits, sign-extended */
        top = o.top;
    } else {
        const uint32_t half = (uint32_t)1 << (m->dshift - 1u);
        for (r = 0; r < d; r++) {
            const int16_t p = P[r];
            const uint16_t u = p < 0 ? (uint16_t)-p : (uint16_t)p;
            pw += p;
            if (u > top)
                top = u;
            q += kb_protonn_term(p, 0, m->dshift, half);
            if (q > (uint32_t)KB_SMALL)
                return 0;
        }
    }
    if (top > K.topmax)
        return 0; /* an e_r could saturate */
    /* floor(Q / 2^e) + 2^7 sum_r P_r with byte moves where -Os makes shift loops (|sum| <
     * 2^21: the shift by 8 stays an int32) */
#if KB_PROTONN_QE > 4 && KB_PROTONN_QE < 8
    q = (q >> 8) << (8 - KB_PROTONN_QE) | (uint8_t)((uint8_t)q >> KB_PROTONN_QE);
#else
    q >>= KB_PROTONN_QE;
#endif
    c.h0 = q + K.h0c + (uint32_t)((int32_t)((uint32_t)pw << 8) >> 1);
    c.P = P;
    c.table = m->table;
#if KB_PROTONN_QL == 1 /* the labels are in the groups: one pass */
    (void)L;
    c.s = 0;
    kb_protonn_avr_kern(&c, KB_PROTONN_GROUPS, NULL, m->m);
    m->scores[0] = c.s;
#else
    {
        kb_protonn_avr_lab_t lab;
        kb_protonn_cur_t zc;
        const uint8_t *grp = KB_PROTONN_GROUPS;
        uint16_t z0 = 0;
        uint8_t left = m->m;
        lab.list = kb_protonn_avr_list;
        lab.scores = m->scores;
        lab.L = L;
        kb_protonn_cur_init(&zc, m->labels, m->lenc == KB_SMAT_SPARSE ? m->llen : 0u);
        /* the kernel values of KB_PROTONN_BLOCK prototypes at a time, then their labels */
        while (left != 0) {
            const uint8_t nb = left > KB_PROTONN_BLOCK ? KB_PROTONN_BLOCK : left;
            c.list = kb_protonn_avr_list;
            kb_protonn_avr_kern(&c, grp,
                                m->lenc == KB_SMAT_DENSE ? m->labels + z0
                                                         : (const uint8_t *)(uintptr_t)z0,
                                nb);
            lab.n = (uint8_t)((uint16_t)(c.list - kb_protonn_avr_list) >> 2);
            if (lab.n != 0) {
                if (m->lenc == KB_SMAT_DENSE)
                    kb_protonn_avr_labels(&lab);
                else
                    kb_protonn_avr_sparse(m, &zc, kb_protonn_avr_list, lab.n);
            }
            grp += KB_PROTONN_BLOCK / 4u * (16u + 4u * KB_PROTONN_QD);
            z0 = (uint16_t)(z0 + KB_PROTONN_BLOCK * KB_PROTONN_QL);
            left = (uint8_t)(left - nb);
        }
    }
#endif
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
    /* KB_PROTONN_LMAX == 1 (a binary model's export): L is 1 (the loader refuses more), and
     * saying so at compile time keeps gcc -O2 from warning of scores[1] in the dead loop */
    if (L == 1 || KB_PROTONN_LMAX == 1)
        return (uint32_t)(m->scores[0] > 0);
    {
        int32_t best = m->scores[0];
        j = 0;
        for (l = 1; l < L; l++) {
            const int32_t v = m->scores[l];
            if (v > best) {
                best = v;
                j = l;
            }
        }
    }
    return j;
}

#endif /* KB_PROTONN_H */
