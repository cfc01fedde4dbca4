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
 * dot products of one node (1 + 2L int32 on the stack). Nothing depends on the input dimension.
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

/* The class of the input streamed since the last prediction (binary: 1 when the score is > 0;
 * multi-class: the first highest score); sets P, leaf and scores, and resets the stream. */
static inline uint8_t kb_bonsai_predict(kb_bonsai_t *m)
{
    int32_t dots[1 + 2 * KB_BONSAI_LMAX];
    const uint8_t eT = m->tanh_bits;
    const int16_t one = (int16_t)(1 << eT); /* eT <= 14 */
    uint8_t k = 0, l, best;
    kb_proj_finish(&m->proj, m->P);
    for (l = 0; l < m->L; l++)
        m->scores[l] = 0;
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
