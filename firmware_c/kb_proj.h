/*
 * kb_proj.h - the streamed sparse projection (docs/contract.md, 7.3), shared by the
 * host-trained predictors (Bonsai's Z, ProtoNN's W).
 *
 *     kb_proj_update(&p, j, c)   feature j (strictly increasing within one input) has code c
 *     kb_proj_finish(&p, P)      P[r] = sat(rshift_round(acc_r, shift_r) + bias_r); resets
 *
 * The stored matrix has one row per input feature (dims x d, kb_smat.h encodings). A cursor
 * walks it forward only: one input costs one pass over the stored weights, and the RAM is the
 * d int32 accumulators and the cursor, whatever the input dimension.
 *
 * KB_PROJ_DMAX (default 64) sizes the accumulators; a firmware sets it to its model's d.
 */
#ifndef KB_PROJ_H
#define KB_PROJ_H

#include <stdint.h>

#include "kb_fixed.h"
#include "kb_smat.h"

#ifndef KB_PROJ_DMAX
#define KB_PROJ_DMAX 64
#endif

typedef struct {
    const uint8_t *z;     /* the stored matrix */
    const uint8_t *shift; /* d shifts */
    const uint8_t *bias;  /* d int16, little-endian */
    uint16_t zlen;
    uint16_t dims;
    uint8_t d, wb, enc, top; /* top: the largest code, 2^B - 1 */
    /* the input in progress */
    uint16_t next;        /* the next update's index must be >= next */
    uint16_t row, col, i; /* cursor: position (row, col) of the pending weight at z[i];
                           * row 0xFFFF: no weight left */
    int32_t acc[KB_PROJ_DMAX];
} kb_proj_t;

/* Move the cursor from position (row, col) to the next stored weight (row = dims at the end). */
static inline void kb_proj_seek(kb_proj_t *p, uint16_t col)
{
    uint16_t i = p->i, row = p->row;
    for (;;) {
        uint8_t g;
        if (i >= p->zlen) {
            p->row = 0xFFFFu; /* no weight left: above every index */
            p->col = col;
            p->i = i;
            return;
        }
        g = KB_FLASH_BYTE(p->z + i);
        i++;
        if (g != 0) {
            col = (uint16_t)(col + g - 1u);
            break;
        }
        col = (uint16_t)(col + 255u);
    }
    while (col >= p->d) {
        col = (uint16_t)(col - p->d);
        row++;
    }
    p->row = row;
    p->col = col;
    p->i = i;
}

/* Forget the input in progress. */
static inline void kb_proj_reset(kb_proj_t *p)
{
    uint8_t r;
    for (r = 0; r < p->d; r++)
        p->acc[r] = 0;
    p->next = 0;
    p->row = 0;
    p->col = 0;
    p->i = 0;
    if (p->enc == KB_SMAT_SPARSE)
        kb_proj_seek(p, 0);
}

/* Parse the section at s[0 .. len); 1 on success (then *used = its size), 0 when it is cut
 * short or outside the contract (with check != 0: the matrix is checked in full too). */
static inline int kb_proj_init(kb_proj_t *p, const uint8_t *s, uint32_t len, uint16_t dims,
                               uint8_t d, uint8_t in_bits, uint8_t wbits, int check,
                               uint32_t *used)
{
    uint32_t n, need;
    uint8_t r;
    if (len < 3 || d == 0 || d > KB_PROJ_DMAX)
        return 0;
    p->enc = KB_FLASH_BYTE(s);
    n = (uint32_t)KB_FLASH_BYTE(s + 1) | (uint32_t)KB_FLASH_BYTE(s + 2) << 8;
    need = 3u + n + 3u * d;
    if (need > len)
        return 0;
    p->z = s + 3;
    p->zlen = (uint16_t)n;
    p->shift = s + 3 + n;
    p->bias = s + 3 + n + d;
    p->dims = dims;
    p->d = d;
    p->wb = (uint8_t)(wbits >> 3);
    p->top = (uint8_t)((1u << in_bits) - 1u);
    for (r = 0; r < d; r++) {
        const int16_t b = kb_flash_i16(p->bias + 2u * r);
        if (KB_FLASH_BYTE(p->shift + r) > KB_SHIFT_MAX || b < -KB_ACT_MAX)
            return 0;
        p->acc[r] = 0;
    }
    if (check && !kb_smat_check(p->z, n, dims, d, p->wb, p->enc, p->acc, 1,
                                (int32_t)(KB_SMALL / p->top)))
        return 0;
    *used = need;
    kb_proj_reset(p);
    return 1;
}

/* acc += w * c; for int8 weights as an 8x8 -> 16-bit product (|w| <= 127, c <= 255 fit). */
#define KB_PROJ_MAC(acc, z, wb, c)                                                            \
    do {                                                                                      \
        if (KB_WB(wb) == 1)                                                                   \
            (acc) += (int16_t)((int16_t)(int8_t)KB_FLASH_BYTE(z) * (int16_t)(uint8_t)(c));   \
        else                                                                                  \
            (acc) += (int32_t)kb_smat_weight((z), (wb)) * (c);                                \
    } while (0)

/* Feature j has code c. 0 on success; -1 (nothing changed) when j is not above the previous
 * index of this input, j >= dims, or c > 2^B - 1. */
static inline int kb_proj_update(kb_proj_t *p, uint16_t j, uint8_t c)
{
    const uint8_t *z = p->z;
    const uint8_t wb = p->wb, d = p->d;
    if (j < p->next || j >= p->dims || c > p->top)
        return -1;
    p->next = (uint16_t)(j + 1u);
    if (c == 0)
        return 0;
    if (p->enc == KB_SMAT_DENSE) {
        uint8_t r;
        z += (uint32_t)j * d * KB_WB(wb);
        for (r = 0; r < d; r++) {
            KB_PROJ_MAC(p->acc[r], z, wb, c);
            z += KB_WB(wb);
        }
        return 0;
    }
    {
        /* the cursor in registers: pending weight at z[i], position (row, col) */
        uint16_t i = p->i, row = p->row, col = p->col;
        const uint16_t zlen = p->zlen;
        while (row <= j) {
            if (row == j)
                KB_PROJ_MAC(p->acc[col], z + i, wb, c);
            i = (uint16_t)(i + KB_WB(wb));
            col++;
            for (;;) {
                uint8_t g;
                if (i >= zlen) {
                    row = 0xFFFFu; /* no weight left: above every index */
                    goto done;
                }
                g = KB_FLASH_BYTE(z + i);
                i++;
                if (g != 0) {
                    col = (uint16_t)(col + g - 1u);
                    break;
                }
                col = (uint16_t)(col + 255u);
            }
            while (col >= d) {
                col = (uint16_t)(col - d);
                row++;
            }
        }
    done:
        p->i = i;
        p->row = row;
        p->col = col;
    }
    return 0;
}

#ifdef __AVR__
#define KB_PROJ_HOT __attribute__((optimize("O2")))
#else
#define KB_PROJ_HOT
#endif

/* Features start .. start+n-1 have the codes c[0..n-1]: the same as n calls of kb_proj_update,
 * for a caller that has checked the run already (start >= next, start + n <= dims, every code
 * <= 2^B - 1, n >= 1). One walk of the cursor over the run's stored weights, with the cursor in
 * registers and zero codes skipped; int8 weights multiply 8x8 -> 16 bits. */
static KB_PROJ_HOT void kb_proj_update_run(kb_proj_t *p, uint16_t start, const uint8_t *c,
                                           uint8_t n)
{
    const uint8_t *z = p->z;
    const uint8_t d = p->d;
    const uint16_t end = (uint16_t)(start + n);
    p->next = end;
    if (p->enc == KB_SMAT_DENSE) {
        uint8_t k;
        z += (uint32_t)start * d * KB_WB(p->wb);
        for (k = 0; k < n; k++) {
            const uint8_t ck = c[k];
            if (ck != 0) {
                const uint8_t *zr = z;
                uint8_t r;
                for (r = 0; r < d; r++) {
                    KB_PROJ_MAC(p->acc[r], zr, p->wb, ck);
                    zr += KB_WB(p->wb);
                }
            }
            z += (uint16_t)d * KB_WB(p->wb);
        }
        return;
    }
    {
        /* The cursor as a pointer zp at the pending weight, its column col (< d) and row; ck is
         * the code of that row (0 for a row before start: those features were never sent). Most
         * steps stay in the row or move one row on; the division loop runs only then. */
        const uint8_t *zp = z + p->i;
        const uint8_t *const zend = z + p->zlen;
        uint16_t row = p->row;
        uint8_t col = (uint8_t)p->col;
        uint8_t ck;
        int32_t *const acc = p->acc;
        if (row >= end)
            return;
        ck = row >= start ? c[row - start] : 0u;
        for (;;) {
            uint16_t cc;
            uint8_t g;
            if (ck != 0)
                KB_PROJ_MAC(acc[col], zp, p->wb, ck);
            zp += KB_WB(p->wb);
            cc = col;
            for (;;) {
                if (zp >= zend) {
                    row = 0xFFFFu; /* no weight left: above every index */
                    goto done;
                }
                g = KB_FLASH_BYTE(zp);
                zp++;
                if (g != 0)
                    break;
                cc = (uint16_t)(cc + 255u);
            }
            cc = (uint16_t)(cc + g); /* (col + 1) + (g - 1) */
            if (cc >= d) {
                do {
                    cc = (uint16_t)(cc - d);
                    row++;
                } while (cc >= d);
                if (row >= end) {
                    col = (uint8_t)cc;
                    break;
                }
                ck = row >= start ? c[row - start] : 0u;
            }
            col = (uint8_t)cc;
        }
    done:
        p->i = (uint16_t)(zp - z);
        p->row = row;
        p->col = col;
    }
}

/* P[r] of the input streamed so far; then ready for the next input. */
static inline void kb_proj_finish(kb_proj_t *p, int16_t *P)
{
    uint8_t r;
    for (r = 0; r < p->d; r++)
        P[r] = (int16_t)kb_sat_act(
            kb_rshift_round32(p->acc[r], KB_FLASH_BYTE(p->shift + r)) +
            kb_flash_i16(p->bias + 2u * r));
    kb_proj_reset(p);
}

#endif /* KB_PROJ_H */
