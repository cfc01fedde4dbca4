/*
 * kb_assoc.h - binary associative memory with product random sampling, class-incremental
 * (Boukli Hacene et al., SiPS 2017); docs/contract.md section 9. Header-only, C99, no float,
 * no malloc: the caller owns every buffer.
 *
 * A model is its parameters and five buffers:
 *   labels[cap], nf[cap]   label and fill counter of each class slot (slots in order of arrival)
 *   anchors[S*T]           int8 anchor rows, S = cap*kt rows of T = P*d values, row-major;
 *                          class slot c owns rows c*kt .. c*kt+kt-1 (I-I, N-I): its first
 *                          example fills row 0, each later one a single subspace of the next
 *                          rows (kb_assoc_learn); N-O: all S rows fixed (host-made)
 *   conn[...]              connection bits, bit (p*S + row)*cap*R + c*R + r, LSB first
 *   near[P], dist[P]       scratch: per subspace the nearest row and its squared distance
 * labels | nf | anchors | conn, back to back, is "the memory" of the golden files and dumps.
 *
 * Widths: a squared difference is at most 255^2 = 65,025 (uint16_t, computed unsigned: on AVR
 * `int` is 16-bit signed), a subspace distance at most 255 * 65,025 < 2^24 and a class's
 * distance sum at most T*(2^B-1)^2 <= 2^30 - 1 (the loader's check): uint32_t. Bit indices are
 * below P*S*cap*R <= 2^30: uint32_t.
 */
#ifndef KB_ASSOC_H
#define KB_ASSOC_H

#include <stddef.h>
#include <stdint.h>

#include "kb_rng.h"

#define KB_ASSOC_II 0
#define KB_ASSOC_NI 1
#define KB_ASSOC_NO 2
#define KB_ASSOC_NONE (-1)   /* the prediction when no class is known */
#define KB_ASSOC_FULL 1      /* kb_assoc_learn: a new label, but every class slot is taken */
#define KB_ASSOC_SMALL UINT32_C(0x3FFFFFFF)
#define KB_ASSOC_PARAMS 10   /* approach bits P d cap kt R nc rng(u16) */

typedef struct {
    uint8_t approach, bits, P, d, cap, kt, R, nc;
    kb_rng_t rng;
    uint8_t *labels, *nf;
    int8_t *anchors;
    uint8_t *conn;
    uint16_t *near;
    uint32_t *dist;
    uint8_t count;   /* count of the last prediction */
    uint8_t changed; /* kb_assoc_learn: 1 when the step changed the memory */
} kb_assoc_t;

static inline uint16_t kb_assoc_rows(const kb_assoc_t *m)
{
    return (uint16_t)((uint16_t)m->cap * m->kt);
}

static inline uint16_t kb_assoc_T(const kb_assoc_t *m)
{
    return (uint16_t)((uint16_t)m->P * m->d);
}

/* Bytes of the connection bits and of the whole memory, for parameters (any width). */
static inline uint32_t kb_assoc_conn_bytes(uint8_t P, uint8_t cap, uint8_t kt, uint8_t R)
{
    return ((uint32_t)P * cap * kt * cap * R + 7u) >> 3;
}

static inline uint32_t kb_assoc_mem_bytes(uint8_t P, uint8_t d, uint8_t cap, uint8_t kt,
                                          uint8_t R)
{
    return 2u * cap + (uint32_t)cap * kt * P * d + kb_assoc_conn_bytes(P, cap, kt, R);
}

/* S for N-O, else the examples that wrote anchors (the sum of the fill counters). */
static inline uint16_t kb_assoc_stored(const kb_assoc_t *m)
{
    uint16_t n = 0;
    uint8_t c;
    if (m->approach == KB_ASSOC_NO)
        return kb_assoc_rows(m);
    for (c = 0; c < m->nc; c++)
        n = (uint16_t)(n + m->nf[c]);
    return n;
}

/* How many of class slot c's rows are valid for subspace p (contract 9.2): always a prefix, row
 * 0 from the class's first example, then one more row per P later examples. */
static inline uint8_t kb_assoc_valid(const kb_assoc_t *m, uint8_t c, uint8_t p)
{
    const uint8_t f = m->nf[c];
    if (f <= (uint16_t)p + 1u)
        return (uint8_t)(f != 0);
    return (uint8_t)(1u + ((uint16_t)f - 2u - p + m->P) / m->P);
}

static inline uint8_t kb_assoc_bit(const uint8_t *conn, uint32_t b)
{
    const uint8_t v = conn[b >> 3];
    return (uint8_t)((v >> (uint8_t)(b & 7u)) & 1);
}

/* Per subspace p, the nearest row valid for p of class slots c0 .. c1-1 (every row for N-O) and
 * its squared distance, into m->near / m->dist. Rows ascend and only a strictly nearer row
 * replaces the best, so the lowest row wins a tie; a row is given up once its partial sum
 * reaches the best (the same result, fewer operations). */
static inline void kb_assoc_nearest(kb_assoc_t *m, const int8_t *u, uint8_t c0, uint8_t c1)
{
    const uint16_t T = kb_assoc_T(m);
    const uint8_t d = m->d;
    uint8_t p;
    if (m->approach == KB_ASSOC_NO) {
        c0 = 0;
        c1 = 1;
    }
    for (p = 0; p < m->P; p++) {
        const uint16_t o = (uint16_t)((uint16_t)p * d);
        const int8_t *up = u + o;
        uint32_t best = KB_ASSOC_SMALL;
        uint16_t bk = 0;
        uint8_t c;
        for (c = c0; c < c1; c++) {
            uint16_t s, s1;
            if (m->approach == KB_ASSOC_NO) {
                s = 0;
                s1 = kb_assoc_rows(m);
            } else {
                s = (uint16_t)((uint16_t)c * m->kt);
                s1 = (uint16_t)(s + kb_assoc_valid(m, c, p));
            }
            for (; s < s1; s++) {
                const int8_t *a = m->anchors + (uint32_t)s * T + o;
                uint32_t dist = 0;
                uint8_t j;
                for (j = 0; j < d; j++) {
                    const int16_t t = (int16_t)((int16_t)a[j] - (int16_t)up[j]);
                    const uint16_t at = (uint16_t)(t < 0 ? -t : t);
                    dist += (uint16_t)(at * at);
                    if (dist >= best)
                        break;
                }
                if (j == d) {
                    best = dist;
                    bk = s;
                }
            }
        }
        m->near[p] = bk;
        m->dist[p] = best;
    }
}

/* The winning class (contract 9.3): the output neuron with the most connected subspaces, then
 * the smallest sum of their distances, then the lowest index. Returns its label, or
 * KB_ASSOC_NONE with count 0 when no class is known; m->count = the winner's count. */
static inline int16_t kb_assoc_predict(kb_assoc_t *m, const int8_t *u)
{
    const uint16_t S = kb_assoc_rows(m);
    const uint16_t CR = (uint16_t)((uint16_t)m->cap * m->R);
    int16_t best_n = -1;
    uint32_t best_s = 0;
    uint8_t best_c = 0, c, r, p;
    if (m->nc == 0) {
        m->count = 0;
        return KB_ASSOC_NONE;
    }
    kb_assoc_nearest(m, u, 0, m->nc);
    for (c = 0; c < m->nc; c++) {
        for (r = 0; r < m->R; r++) {
            const uint16_t col = (uint16_t)((uint16_t)c * m->R + r);
            int16_t n = 0;
            uint32_t s = 0;
            for (p = 0; p < m->P; p++) {
                const uint32_t b = ((uint32_t)p * S + m->near[p]) * CR + col;
                if (kb_assoc_bit(m->conn, b)) {
                    n++;
                    s += m->dist[p];
                }
            }
            if (n > best_n || (n == best_n && s < best_s)) {
                best_n = n;
                best_s = s;
                best_c = c;
            }
        }
    }
    m->count = (uint8_t)best_n;
    return (int16_t)m->labels[best_c];
}

/* Class slot of label y, or -1. */
static inline int16_t kb_assoc_slot(const kb_assoc_t *m, uint8_t y)
{
    uint8_t c;
    for (c = 0; c < m->nc; c++)
        if (m->labels[c] == y)
            return c;
    return -1;
}

/* One learning step (contract 9.4). *pred gets the label predicted before learning (count in
 * m->count). Returns 0, or KB_ASSOC_FULL (nothing changed) for a new label with every class
 * slot taken. */
static inline uint8_t kb_assoc_learn(kb_assoc_t *m, const int8_t *u, uint8_t y, int16_t *pred)
{
    const uint16_t S = kb_assoc_rows(m);
    const uint16_t CR = (uint16_t)((uint16_t)m->cap * m->R);
    int16_t cs = kb_assoc_slot(m, y);
    uint8_t c, p;
    uint16_t col;
    if (cs < 0 && m->nc == m->cap)
        return KB_ASSOC_FULL;
    *pred = kb_assoc_predict(m, u);
    m->changed = (uint8_t)(cs < 0);
    if (cs < 0) {
        cs = m->nc;
        m->labels[cs] = y;
        m->nc++;
    }
    c = (uint8_t)cs;
    if (m->approach != KB_ASSOC_NO && m->nf[c] <= (uint16_t)(m->kt - 1u) * m->P) {
        /* example 0: a whole row (one-shot); example n: subspace (n-1) % P of a later row */
        const uint16_t T = kb_assoc_T(m);
        const uint8_t n = m->nf[c];
        uint32_t row = (uint32_t)c * m->kt;
        uint16_t j = 0, j1 = T;
        if (n != 0) {
            j = (uint16_t)((uint16_t)((uint8_t)(n - 1u) % m->P) * m->d);
            j1 = (uint16_t)(j + m->d);
            row += 1u + (uint8_t)(n - 1u) / m->P;
        }
        for (; j < j1; j++)
            m->anchors[row * T + j] = u[j];
        m->nf[c] = (uint8_t)(n + 1u);
        m->changed = 1;
    }
    if (m->approach == KB_ASSOC_II)
        kb_assoc_nearest(m, u, c, (uint8_t)(c + 1));
    else
        kb_assoc_nearest(m, u, 0, m->nc);
    col = (uint16_t)((uint16_t)c * m->R);
    if (m->R > 1)
        col = (uint16_t)(col + kb_rng_below(&m->rng, m->R));
    for (p = 0; p < m->P; p++) {
        const uint32_t b = ((uint32_t)p * S + m->near[p]) * CR + col;
        const uint8_t bit = (uint8_t)(1u << (b & 7u));
        if (!(m->conn[b >> 3] & bit)) {
            m->conn[b >> 3] = (uint8_t)(m->conn[b >> 3] | bit);
            m->changed = 1;
        }
    }
    return 0;
}

/* Parameter ranges of the contract (kilobit.models.assoc.check_params), plus nc and the
 * generator. */
static inline int kb_assoc_check_params(uint8_t approach, uint8_t bits, uint8_t P, uint8_t d,
                                        uint8_t cap, uint8_t kt, uint8_t R, uint8_t nc,
                                        uint16_t rng)
{
    uint32_t top;
    if (approach > KB_ASSOC_NO || bits < 1 || bits > 8 || P < 1 || d < 1 || cap < 1 ||
        kt < 1 || R < 1 || nc > cap || rng == 0)
        return 0;
    top = (uint32_t)((1ul << bits) - 1u);
    if ((uint32_t)P * d > KB_ASSOC_SMALL / (top * top))
        return 0;
    if ((uint32_t)P * cap * kt * cap > KB_ASSOC_SMALL / R)
        return 0;
    if (approach != KB_ASSOC_NO && 1u + (uint32_t)(kt - 1u) * P > 255u)
        return 0; /* the fill counter is a u8 */
    return 1;
}

/* Row s holds a learnt (or, N-O, fixed) anchor for subspace p. */
static inline int kb_assoc_live(const kb_assoc_t *m, uint16_t s, uint8_t p)
{
    return m->approach == KB_ASSOC_NO ||
           s % m->kt < kb_assoc_valid(m, (uint8_t)(s / m->kt), p);
}

/* The state checks of kilobit.models.assoc.AssocInt.check_state: 1 when a learner can reach it. */
static inline int kb_assoc_check_state(const kb_assoc_t *m)
{
    const uint16_t S = kb_assoc_rows(m), T = kb_assoc_T(m);
    const uint16_t CR = (uint16_t)((uint16_t)m->cap * m->R);
    const uint16_t live_cols = (uint16_t)((uint16_t)m->nc * m->R);
    uint8_t c, e, p;
    uint16_t s, col;
    uint32_t b = 0;
    for (c = 0; c < m->cap; c++) {
        if (c < m->nc) {
            for (e = 0; e < c; e++)
                if (m->labels[e] == m->labels[c])
                    return 0;
        } else if (m->labels[c] != 0) {
            return 0;
        }
    }
    for (c = 0; c < m->cap; c++) {
        if (m->approach == KB_ASSOC_NO) {
            if (m->nf[c] != 0)
                return 0;
        } else if (c < m->nc ? (m->nf[c] < 1 || m->nf[c] > 1u + (uint16_t)(m->kt - 1u) * m->P)
                             : m->nf[c] != 0) {
            return 0;
        }
    }
    for (s = 0; s < S; s++)
        for (p = 0; p < m->P; p++)
            if (!kb_assoc_live(m, s, p)) {
                const int8_t *a = m->anchors + (uint32_t)s * T + (uint16_t)p * m->d;
                uint8_t j;
                for (j = 0; j < m->d; j++)
                    if (a[j] != 0)
                        return 0;
            }
    for (p = 0; p < m->P; p++)
        for (s = 0; s < S; s++) {
            const int live = kb_assoc_live(m, s, p);
            for (col = 0; col < CR; col++, b++)
                if (kb_assoc_bit(m->conn, b) && (!live || col >= live_cols))
                    return 0;
        }
    if ((b & 7u) != 0 && (m->conn[b >> 3] >> (uint8_t)(b & 7u)) != 0)
        return 0;
    return 1;
}

#endif /* KB_ASSOC_H */
