/*
 * emlfft_kern.c - the work of _eml_fft.bands (emlfft.c): emlearn's eml_fft.h, compiled apart
 * from the glue so that the glue's mpy_init stays first in the module's text (1.23's mpy_ld.py
 * enters it by an 11-bit jump, and GCC places a file's functions as it likes).
 */
#include <stddef.h>
#include <stdint.h>

/* eml_fft_fill is never called here (the host makes the tables: no libm on the board), but
 * it is compiled, and mpy_ld.py drops no unused function: its cosf/sinf calls, and the double
 * arithmetic of their arguments, would be undefined symbols. They become 0. */
#include <math.h>
#define cosf(x) 0.0f
#define sinf(x) 0.0f
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wtype-limits"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "eml_fft.h"
#pragma GCC diagnostic pop

void peer_bands(const int16_t *x, int32_t m, const float *tab, float *re, float *im, size_t P,
                int32_t *out, size_t B);

/* the deviations of x from m as float32, the transform, the B band powers' float32 bits */
void peer_bands(const int16_t *x, int32_t m, const float *tab, float *re, float *im, size_t P,
                int32_t *out, size_t B)
{
    const size_t width = P / 2 / B;
    size_t i, k, b;
    EmlFFT t;
    t.length = (int)(P / 2);
    t.cos = (float *)(uintptr_t)tab; /* eml_fft_forward only reads them */
    t.sin = t.cos + P / 2;
    for (i = 0; i < P; i++) {
        re[i] = (float)((int32_t)x[i] - m);
        im[i] = 0.0f;
    }
    eml_fft_forward(t, re, im, P);
    for (b = 0; b < B; b++) {
        union {
            float f;
            int32_t i;
        } s;
        s.f = 0.0f;
        for (k = b * width + 1; k <= b * width + width; k++)
            s.f += re[k] * re[k] + im[k] * im[k];
        out[b] = s.i;
    }
}
