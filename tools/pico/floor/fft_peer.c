/*
 * fft_peer.c - kilobit's integer FFT band energies (firmware_c/kb_fft.h, contract 13) beside
 * emlearn's float FFT (eml_fft.h from PyPI's emlearn, single precision: soft float on the
 * Cortex-M0+, which is what its users get there), bare C on the emulated RP2040 (floor.h):
 * the peer measurement of `kilobit bench features` (kilobit.bench.features).
 *
 * Not in the floor's Makefile: that build refuses any soft-float helper, and this program links
 * them on purpose. kilobit.bench.features builds it with the floor's flags, -I the pinned
 * emlearn's headers (unpacked under build/ by scripts/setup.sh), and runs it with
 * tools/pico/floor/run.mjs IMAGE INPUT.
 *
 * Input (the "model" of run.mjs, little-endian): p, B, count (u32 each), emlearn's twiddle tables
 * cos[P/2] and sin[P/2] (float32, what eml_fft_fill computes, made on the host: the board has no
 * libm here), then count windows of P int16 readings, then count int16 rounded means (contract
 * 12's m over the window). No steps.
 *
 * Per window, on UART0: "K e_0 .. e_B-1" (kb_fft_bands), then "E" and the P/2 + 1 bins of
 * emlearn's transform of the deviations x_i - m as float32 bits in hex (re, im alternating);
 * on UART1 (floor_time) three counts: kb_fft_bands; eml_fft_forward alone (the float copy of the
 * deviations made before the clock starts); emlearn from the readings to B band powers (the
 * float copy, the transform, |X_k|^2 summed over contract 13's bands), so that each side's
 * figure covers the same work.
 */
#include "floor.h"

#include "kb_fft.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wsign-conversion"
#pragma GCC diagnostic ignored "-Wdouble-promotion"
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wpedantic"
#pragma GCC diagnostic ignored "-Wfloat-conversion"
#pragma GCC diagnostic ignored "-Wtype-limits"
#include "eml_fft.h"
#pragma GCC diagnostic pop

#define P_MAX 256u

static int16_t scratch[2 * P_MAX];
static int32_t bands[P_MAX / 2];
static float re[P_MAX], im[P_MAX], cs[P_MAX / 2], sn[P_MAX / 2], pw[P_MAX / 2];

static uint32_t word(const uint8_t *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static int16_t half(const uint8_t *b)
{
    return (int16_t)(uint16_t)((uint16_t)b[0] | (uint16_t)(b[1] << 8));
}

static void put_bits(float f)
{
    union {
        float f;
        uint8_t b[4];
    } u;
    uint8_t be[4];
    u.f = f;
    be[0] = u.b[3];
    be[1] = u.b[2];
    be[2] = u.b[1];
    be[3] = u.b[0];
    floor_putc(' ');
    floor_put_hex(be, 4);
}

/* the deviations of window x from m as floats, imaginary parts 0 */
static void load(const uint8_t *x, int16_t m, uint16_t P)
{
    uint16_t i;
    for (i = 0; i < P; i++) {
        re[i] = (float)((int32_t)half(x + 2 * i) - m);
        im[i] = 0.0f;
    }
}

__attribute__((noinline)) static void ours(const int16_t *x, int16_t m, uint8_t p, uint8_t B)
{
    kb_fft_bands(x, 1, m, p, B, scratch, bands);
}

__attribute__((noinline)) static void theirs(EmlFFT *t, uint16_t P)
{
    eml_fft_forward(*t, re, im, P);
}

/* emlearn from the readings to B band powers, bins 1 .. P/2 as contract 13 groups them */
__attribute__((noinline)) static void theirs_bands(EmlFFT *t, const uint8_t *x, int16_t m,
                                                   uint16_t P, uint8_t B)
{
    const uint16_t w = (uint16_t)(P / 2u / B);
    uint16_t b, k;
    load(x, m, P);
    eml_fft_forward(*t, re, im, P);
    for (b = 0; b < B; b++) {
        float s = 0.0f;
        for (k = (uint16_t)(b * w + 1u); k <= (uint16_t)(b * w + w); k++)
            s += re[k] * re[k] + im[k] * im[k];
        pw[b] = s;
    }
}

int main(void)
{
    floor_input_t in;
    const uint8_t *h;
    uint32_t p, B, count, c, t0, t1;
    uint16_t P, i;
    EmlFFT table;

    floor_init(&in);
    h = in.model;
    if (in.model_len < 12)
        floor_die(2, "input too short", 0);
    p = word(h);
    B = word(h + 4);
    count = word(h + 8);
    if (p < KB_FFT_P_MIN || p > KB_FFT_P_MAX || B < 1 || B > (1u << (p - 1)) || (B & (B - 1u)))
        floor_die(2, "p or B outside contract 13", 0);
    P = (uint16_t)(1u << p);
    if (in.model_len != 12u + 4u * P + count * (2u * P + 2u))
        floor_die(2, "input length disagrees with p and count", 0);
    for (i = 0; i < P / 2u; i++) {
        union {
            uint32_t u;
            float f;
        } v;
        v.u = word(h + 12 + 4 * i);
        cs[i] = v.f;
        v.u = word(h + 12 + 2 * P + 4 * i);
        sn[i] = v.f;
    }
    table.length = (int)(P / 2u);
    table.cos = cs;
    table.sin = sn;
    h += 12u + 4u * P;
    floor_times_begin();
    for (c = 0; c < count; c++) {
        const uint8_t *x = h + c * 2u * P;
        const int16_t m = half(h + count * 2u * P + 2u * c);
        /* run.mjs pads the input's start to a word: the windows are int16-aligned in flash */
        t0 = floor_cycles();
        FLOOR_BARRIER();
        ours((const int16_t *)(const void *)x, m, (uint8_t)p, (uint8_t)B);
        FLOOR_BARRIER();
        t1 = floor_cycles();
        floor_time(t1 - t0);
        floor_putc('K');
        for (i = 0; i < B; i++) {
            floor_putc(' ');
            floor_put_long((long)bands[i]);
        }
        floor_putc('\n');

        load(x, m, P);
        t0 = floor_cycles();
        FLOOR_BARRIER();
        theirs(&table, P);
        FLOOR_BARRIER();
        t1 = floor_cycles();
        floor_time(t1 - t0);
        floor_putc('E');
        for (i = 0; i <= P / 2u; i++) {
            put_bits(re[i]);
            put_bits(im[i]);
        }
        floor_putc('\n');

        t0 = floor_cycles();
        FLOOR_BARRIER();
        theirs_bands(&table, x, m, P, (uint8_t)B);
        FLOOR_BARRIER();
        t1 = floor_cycles();
        floor_time(t1 - t0);
    }
    return 0;
}
