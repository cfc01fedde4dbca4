/*
 * kb_features.h - the time-domain features of a window of raw int16 readings (docs/contract.md
 * section 12): per axis mean, mad, min, max, energy, diff, cross, the same integers as the host's
 * kilobit.core.features.window_features and kbit.features.
 *
 *     int32_t out[7 * 3];
 *     kb_err_t err = kb_features(window, 100, 3, out);   window: x0 y0 z0 x1 y1 z1 ... (3*100)
 *
 * No 64-bit arithmetic, so an AVR needs no 64-bit library routines: the sum of squared
 * deviations (up to 2^40) is kept as hi*2^16 + lo, the contract's split. In C one deviation
 * e <= 65535 squares into a uint32_t, so each term's (e*e >> 16, e*e & 0xFFFF) is formed
 * directly; they are exactly the contract's terms, whose 2^15 case split only keeps MicroPython
 * small ints small. Deviations and steps are 16-bit modular differences: with the larger value
 * known, the difference of two int16 is below 2^16 and its uint16_t wrap-around is exact, which
 * on an AVR (16-bit int) keeps the per-sample work in 16-bit registers.
 *
 * A selection (contract 12.1) of these and of band energies (kb_fft.h, contract 13):
 *
 *     int16_t scratch[2 * 64];
 *     int32_t out[3 * (3 + 8)];
 *     kb_features_extract(window, 100, 3, 0x13, 6, 8, scratch, out);  mean,mad,energy,fft64:8
 */
#ifndef KB_FEATURES_H
#define KB_FEATURES_H

#include <stdint.h>

#include "kb_fft.h"
#include "kb_file.h"

#define KB_FEATURES_F 7       /* features per axis, out[a * 7 + k] */
#define KB_FEATURES_N_MAX 256 /* samples per window: keeps every sum below 2^24 */

/* The mean's dividend is lifted by 32768*n so that every division is of non-negative integers
 * (C's / truncates, the contract floors: they agree only there). */
#define KB_FEATURES_BIAS 32768L

/* uint16_t difference hi - lo of two int16 with hi >= lo: exact, below 2^16. */
static inline uint16_t kb_features_gap(int16_t hi, int16_t lo)
{
    return (uint16_t)((uint16_t)hi - (uint16_t)lo);
}

/* Round-half-up quotient of non-negative num by positive den, as the contract's every division. */
static inline uint32_t kb_features_div(uint32_t num, uint32_t den)
{
    return (num + (den >> 1)) / den;
}

/* The seven features of one axis whose n samples are p[0], p[step], ... */
static inline void kb_features_axis(const int16_t *p, uint16_t n, uint8_t step, int32_t *out)
{
    const int16_t *q = p;
    int32_t s = 0;
    int16_t lo_x = p[0], hi_x = p[0], m, prev;
    uint32_t dev = 0, hi = 0, lo = 0, steps = 0, d;
    uint16_t i, cross = 0;
    uint8_t up;

    for (i = 0; i < n; i++, q += step) {
        s += *q;
        if (*q < lo_x)
            lo_x = *q;
        else if (*q > hi_x)
            hi_x = *q;
    }
    m = (int16_t)((int32_t)(kb_features_div((uint32_t)(s + KB_FEATURES_BIAS * (int32_t)n), n))
                  - KB_FEATURES_BIAS);

    prev = p[0];
    up = prev >= m;
    for (i = 0, q = p; i < n; i++, q += step) {
        const int16_t x = *q;
        uint16_t e;
        uint32_t sq;
        /* one comparison with m gives both |x - m| and the side of the mean */
        if (x >= m) {
            e = kb_features_gap(x, m);
            cross = (uint16_t)(cross + !up);
            up = 1;
        } else {
            e = kb_features_gap(m, x);
            cross = (uint16_t)(cross + up);
            up = 0;
        }
        dev += e;
        sq = (uint32_t)e * e;
        hi += sq >> 16;
        lo += sq & 0xFFFFu;
        steps += x > prev ? kb_features_gap(x, prev) : kb_features_gap(prev, x);
        prev = x;
    }

    d = 4u * (uint32_t)n;
    out[0] = m;
    out[1] = (int32_t)kb_features_div(dev, n);
    out[2] = lo_x;
    out[3] = hi_x;
    /* (hi*2^16 + lo + 2n) // 4n without forming the 40-bit sum: the second dividend stays below
     * 2^27 (hi % d < 2^10), the result below 2^28 (contract 12) */
    out[4] = (int32_t)(((hi / d) << 16) + (((hi % d) << 16) + lo + 2u * (uint32_t)n) / d);
    out[5] = n > 1 ? (int32_t)kb_features_div(steps, (uint32_t)n - 1u) : 0;
    out[6] = cross;
}

/* Fill out[7 * axes] with the features of window (axes x n int16 readings, interleaved: sample
 * i of axis a at window[i * axes + a]), axis after axis. KB_ERR_PARAM, out untouched, for n
 * outside 1..256, axes 0 or a null pointer. */
static inline kb_err_t kb_features(const int16_t *window, uint16_t n, uint8_t axes, int32_t *out)
{
    uint8_t a;
    if (window == NULL || out == NULL || n < 1 || n > KB_FEATURES_N_MAX || axes == 0)
        return KB_ERR_PARAM;
    for (a = 0; a < axes; a++)
        kb_features_axis(window + a, n, axes, out + (uint16_t)a * KB_FEATURES_F);
    return KB_OK;
}

/* Fill out[axes * F] with a selection's features (contract 12.1), axis after axis: the
 * time-domain features whose bit is set in mask (bit k: feature k, out[a*7 + k] of kb_features),
 * then B band energies of a P = 2^p point FFT (p 0: none; 5..8 with P <= n), F = popcount(mask)
 * + B >= 1. scratch: 2*P int16 (may be NULL when p == 0). KB_ERR_PARAM, out untouched, for
 * anything contract 12.1 refuses or a null pointer. */
static inline kb_err_t kb_features_extract(const int16_t *w, uint16_t n, uint8_t axes,
                                           uint8_t mask, uint8_t p, uint8_t bands,
                                           int16_t *scratch, int32_t *out)
{
    int32_t t[KB_FEATURES_F];
    uint8_t a, k;
    if (w == NULL || out == NULL || axes == 0 || (p != 0 && scratch == NULL) ||
        kb_selection_per_axis(n, mask, p, bands) == 0)
        return KB_ERR_PARAM;
    for (a = 0; a < axes; a++) {
        /* the mean the bands need comes with the seven, so they are all computed */
        kb_features_axis(w + a, n, axes, t);
        for (k = 0; k < KB_FEATURES_F; k++)
            if ((unsigned)mask >> k & 1u)
                *out++ = t[k];
        if (p != 0) {
            kb_fft_bands(w + a, axes, (int16_t)t[0], p, bands, scratch, out);
            out += bands;
        }
    }
    return KB_OK;
}

#endif /* KB_FEATURES_H */
