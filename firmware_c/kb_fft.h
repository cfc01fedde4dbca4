/*
 * kb_fft.h - band energies of one axis of a window from an integer radix-2 FFT
 * (docs/contract.md section 13), the same integers as the host's
 * kilobit.core.features.fft_bands and kbit.fft.
 *
 *     int16_t scratch[2 * 128];
 *     int32_t e[8];
 *     kb_fft_bands(window + a, 3, mean, 7, 8, scratch, e);   axis a of 3 interleaved, P = 128
 *
 * int16 storage (re, im stay below 16402 in modulus), int32 products (below 2^30), no float.
 * The quarter-wave table W sits in flash on an AVR (PROGMEM, 130 bytes), where RAM is the
 * scarce thing. C's >> of a negative value is implementation-defined, so no signed value is
 * shifted here: every floor shift whose result is known to fit an int16 takes the low 16 bits
 * of the logical shift of the bit pattern, which are the arithmetic shift's.
 */
#ifndef KB_FFT_H
#define KB_FFT_H

#include <stdint.h>

#if defined(__AVR__)
#include <avr/pgmspace.h>
#define KB_FFT_FLASH PROGMEM
#define KB_FFT_W(j) ((int16_t)pgm_read_word(&kb_fft_w[j]))
#define KB_FFT_NIB(j) pgm_read_byte(&kb_fft_nib[j])
#else
#define KB_FFT_FLASH
#define KB_FFT_W(j) (kb_fft_w[j])
#define KB_FFT_NIB(j) (kb_fft_nib[j])
#endif

#define KB_FFT_P_MIN 5 /* P = 2^p: 32 .. 256 points */
#define KB_FFT_P_MAX 8

/* W[k] = round(32767 cos(2 pi k / 256)), k = 0..64 (contract 13.2) */
static const int16_t kb_fft_w[65] KB_FFT_FLASH = {
    32767, 32757, 32728, 32678, 32609, 32521, 32412, 32285, 32137, 31971, 31785, 31580, 31356,
    31113, 30852, 30571, 30273, 29956, 29621, 29268, 28898, 28510, 28105, 27683, 27245, 26790,
    26319, 25832, 25329, 24811, 24279, 23731, 23170, 22594, 22005, 21403, 20787, 20159, 19519,
    18868, 18204, 17530, 16846, 16151, 15446, 14732, 14010, 13279, 12539, 11793, 11039, 10278,
    9512,  8739,  7962,  7179,  6393,  5602,  4808,  4011,  3212,  2410,  1608,  804,   0};

/* 4-bit reversals: an 8-bit reversal from two reads */
static const uint8_t kb_fft_nib[16] KB_FFT_FLASH = {0, 8, 4, 12, 2, 10, 6, 14,
                                                    1, 9, 5, 13, 3, 11, 7, 15};

/* The int16 whose bit pattern is u (two's complement, without C's implementation-defined
 * conversion of an out-of-range value). */
static inline int16_t kb_fft_i16(uint16_t u)
{
    return u < 0x8000u ? (int16_t)u : (int16_t)((int32_t)u - 65536L);
}

/* floor(z / 2) for a z whose half fits an int16 */
static inline int16_t kb_fft_half(int32_t z)
{
    return kb_fft_i16((uint16_t)((uint32_t)z >> 1));
}

/* r(z) = (z + 2^14) >> 15 for |z| < 2^30 (result within int16): bits 15..30 of z + 2^14, taken
 * as a byte move and one shift rather than a 15-step 32-bit shift on an AVR */
static inline int16_t kb_fft_r15(int32_t z)
{
    const uint32_t t = (uint32_t)(z + 0x4000L);
    return kb_fft_i16((uint16_t)((uint16_t)((uint16_t)(t >> 16) << 1) | ((uint16_t)t >> 15)));
}

/* cos(j) and sin(j) of an angle index 0 <= j < 128 (angle 2 pi j / 256) from the quarter wave */
static inline void kb_fft_twiddle(uint8_t j, int16_t *c, int16_t *s)
{
    if (j <= 64) {
        *c = KB_FFT_W(j);
        *s = KB_FFT_W(64 - j);
    } else {
        *c = (int16_t)-KB_FFT_W(128 - j);
        *s = KB_FFT_W(j - 64);
    }
}

/* Contract 13 for one axis: its first P = 2^p samples x[0], x[step], ... (p 5..8), m its rounded
 * mean over the whole window; the B band energies (B a power of two, 1..P/2) into out[0..B-1].
 * scratch: 2*P int16 (re, then im). Parameters are the caller's to check (kb_features_extract). */
static inline void kb_fft_bands(const int16_t *x, uint8_t step, int16_t m, uint8_t p, uint8_t B,
                                int16_t *scratch, int32_t *out)
{
    const uint16_t P = (uint16_t)(1u << p), half = (uint16_t)(P >> 1);
    int16_t *re = scratch, *im = scratch + P;
    uint16_t i, k, h, M = 0, width;
    uint8_t b, sh;
    int8_t s = 0;
    const int16_t *q = x;

    for (i = 0; i < P; i++, q += step) {
        const int32_t d = (int32_t)*q - m;
        const uint16_t e = (uint16_t)(d < 0 ? -d : d); /* |d| <= 65535 */
        if (e > M)
            M = e;
    }
    if (M == 0) {
        for (b = 0; b < B; b++)
            out[b] = 0;
        return;
    }
    while (M >= 0x4000u) { /* s = 14 - bitlen(M): M << s lands in 2^13 .. 2^14 - 1 */
        M >>= 1;
        s--;
    }
    while (M < 0x2000u) {
        M = (uint16_t)(M << 1);
        s++;
    }

    /* normalised deviations in bit-reversed order with stage 1 fused in: its pairs are samples
     * j and j + P/2 at rev(j), rev(j) + 1, twiddle (32767, 0) -- not exactly 1, so r(32767 y)
     * as every stage forms it -- and im all 0 */
    sh = (uint8_t)(8 - p);
    q = x;
    for (i = 0; i < half; i++, q += step) {
        const int32_t d0 = (int32_t)q[0] - m, d1 = (int32_t)q[(uint16_t)half * step] - m;
        int16_t y0, y1;
        uint8_t u;
        if (s >= 0) { /* |d << s| < 2^14: a product, as C does not shift negative values */
            y0 = (int16_t)(d0 * (int32_t)(1u << s));
            y1 = (int16_t)(d1 * (int32_t)(1u << s));
        } else {
            y0 = kb_fft_i16((uint16_t)((uint32_t)d0 >> -s));
            y1 = kb_fft_i16((uint16_t)((uint32_t)d1 >> -s));
        }
        y1 = kb_fft_r15(32767L * y1);
        u = (uint8_t)((uint8_t)(KB_FFT_NIB(i & 15u) << 4 | KB_FFT_NIB(i >> 4)) >> sh);
        re[u] = kb_fft_half((int32_t)y0 + y1);
        re[u + 1] = kb_fft_half((int32_t)y0 - y1);
        im[u] = 0;
        im[u + 1] = 0;
    }

    /* stages L = 4 .. P: butterflies (u, u + h), h = L/2, twiddle index j = k * 256 / L */
    for (h = 2; h < P; h = (uint16_t)(h << 1)) {
        const uint16_t L = (uint16_t)(h << 1);
        const uint8_t jstep = (uint8_t)(128u / h);
        uint8_t j = 0;
        for (k = 0; k < h; k++, j = (uint8_t)(j + jstep)) {
            int16_t c, sn;
            uint16_t u;
            kb_fft_twiddle(j, &c, &sn);
            for (u = k; u < P; u = (uint16_t)(u + L)) {
                const uint16_t v = (uint16_t)(u + h);
                const int16_t xr = re[v], xi = im[v], yr = re[u], yi = im[u];
                const int32_t tr = (int32_t)kb_fft_r15((int32_t)c * xr) +
                                   kb_fft_r15((int32_t)sn * xi);
                const int32_t ti = (int32_t)kb_fft_r15((int32_t)c * xi) -
                                   kb_fft_r15((int32_t)sn * xr);
                re[v] = kb_fft_half(yr - tr);
                im[v] = kb_fft_half(yi - ti);
                re[u] = kb_fft_half(yr + tr);
                im[u] = kb_fft_half(yi + ti);
            }
        }
    }

    /* bins 1 .. P/2 (no DC, Nyquist in), width P/(2B) a band; E = Q / 2^(2s+5) rounded half up
     * (2s + 4 >= 0: s >= -2) */
    width = (uint16_t)(half / B);
    sh = (uint8_t)(2 * s + 4);
    k = 1;
    for (b = 0; b < B; b++) {
        uint32_t Q = 0;
        for (i = 0; i < width; i++, k++)
            Q += (uint32_t)((int32_t)re[k] * re[k]) + (uint32_t)((int32_t)im[k] * im[k]);
        out[b] = (int32_t)(((Q >> sh) + 1u) >> 1);
    }
}

#endif /* KB_FFT_H */
