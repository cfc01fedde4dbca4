/*
 * emlfft.c - emlearn's float FFT (eml_fft.h from PyPI's emlearn 0.23.2, pinned and unpacked
 * under build/ by scripts/setup.sh) as a MicroPython native module for the Cortex-M0+: the peer
 * that `kilobit bench features` runs on the emulated Pico beside kbit's own native module
 * (_kb_features), the same chip, the same MicroPython, the same call overhead. Not part of kbit.
 *
 *     bands(window, m, tab, re, im, out)   window: array('h') of P readings (one axis); m: its
 *                            rounded mean (int); tab: bytes of the P/2 cos then P/2 sin
 *                            float32 values eml_fft_fill computes (made by the host: the
 *                            emulated Pico's MicroPython has no float); re, im: bytearrays of
 *                            4P (float32 scratch); out: array('i') of B, the float32 bits of the
 *                            B band powers sum |X_k|^2 over contract 13's bins 1 .. P/2.
 *                            Returns out; ValueError for arguments of the wrong shape.
 *
 * The work is what kbit's Extractor.run does for band energies: the deviations as float32, the
 * transform (eml_fft_forward), the band sums. The float arithmetic is libgcc's soft float
 * (Makefile: the helpers linked from the toolchain's own libgcc.a, since 1.23's dynruntime.mk
 * links none).
 */
#include "py/dynruntime.h"
#include "py/objarray.h"


void peer_bands(const int16_t *x, int32_t m, const float *tab, float *re, float *im, size_t P,
                int32_t *out, size_t B); /* emlfft_kern.c */

/* mpy_init first in the text: 1.23's mpy_ld.py enters it by an 11-bit jump */
#define PEER_TEXT __attribute__((section(".text.peer")))

static PEER_TEXT mp_obj_t bands(size_t n_args, const mp_obj_t *args);
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(bands_obj, 6, 6, bands);

mp_obj_t mpy_init(mp_obj_fun_bc_t *self, size_t n_args, size_t n_kw, mp_obj_t *args)
{
    MP_DYNRUNTIME_INIT_ENTRY
    mp_store_global(MP_QSTR_bands, MP_OBJ_FROM_PTR(&bands_obj));
    MP_DYNRUNTIME_INIT_EXIT
}

/* libgcc's __aeabi_uidiv calls it on a division by 0, which never happens here (P >= 4, B >= 1);
 * libgcc's own is a weak symbol, which mpy_ld.py does not link */
int __aeabi_idiv0(int r);
PEER_TEXT int __aeabi_idiv0(int r)
{
    return r;
}

/* the buffer of o, of at least `len` bytes, or ValueError */
static PEER_TEXT void *buffer(mp_obj_t o, size_t len, mp_uint_t flags)
{
    mp_buffer_info_t b;
    if (!mp_get_buffer(o, &b, flags) || b.len < len)
        mp_raise_ValueError(MP_ERROR_TEXT("emlfft: a buffer is too short"));
    return b.buf;
}

static PEER_TEXT mp_obj_t bands(size_t n_args, const mp_obj_t *args)
{
    mp_buffer_info_t w, o;
    size_t P, B;
    const mp_int_t m = mp_obj_get_int(args[1]);
    (void)n_args;
    if (!mp_get_buffer(args[0], &w, MP_BUFFER_READ) || w.typecode != 'h' ||
        !mp_get_buffer(args[5], &o, MP_BUFFER_WRITE) || o.typecode != 'i')
        mp_raise_ValueError(MP_ERROR_TEXT("emlfft: window array('h'), out array('i')"));
    P = w.len / 2;
    B = o.len / 4;
    if (P < 4 || (P & (P - 1)) || B < 1 || B > P / 2 || (P / 2) % B)
        mp_raise_ValueError(MP_ERROR_TEXT("emlfft: P a power of two, B dividing P/2"));
    peer_bands(w.buf, (int32_t)m, buffer(args[2], 4 * P, MP_BUFFER_READ),
               buffer(args[3], 4 * P, MP_BUFFER_WRITE), buffer(args[4], 4 * P, MP_BUFFER_WRITE),
               P, o.buf, B);
    return args[5];
}
