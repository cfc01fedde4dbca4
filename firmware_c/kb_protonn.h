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

/* The prediction for the input streamed since the last one (binary: 1 when S_0 > 0;
 * multi-class: the first highest score; multilabel: the bit mask of the positive scores);
 * sets P, scores (and D, k) and resets the stream.
 *
 * D only grows as terms are added, so a prototype's sum stops at `stop`: SMALL + 1 (the sum
 * saturates to SMALL, 10.1) and, in a build that does not report D (KB_PROTONN_NO_FIELDS),
 * nt << kshift when that is smaller: from there on its index is past the table and k = 0
 * whatever the remaining terms are. */
static KB_PROTONN_HOT uint32_t kb_protonn_predict(kb_protonn_t *m)
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
    kb_proj_finish(&m->proj, m->P);
    for (l = 0; l < L; l++)
        m->scores[l] = 0;
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
