/*
 * kbn.h - what the native modules of firmware_c/natmod share (issue 20).
 *
 * Each module is two translation units:
 *   <model>.c       the MicroPython glue (py/dynruntime.h, kbn_mp.h, kbn_bind.h): binding the
 *                   model, the calls, mpy_init. First in the link, with mpy_init alone in its
 *                   .text (every other glue function is in .text.kbn), so that the entry jump
 *                   of MicroPython 1.23's mpy_ld.py (an 11-bit Thumb branch on armv6m) always
 *                   reaches mpy_init.
 *   kern_<model>.c  the kernel: the firmware_c header's functions, called as they are, compiled
 *                   with the C runtime's strict warnings. It never includes MicroPython.
 * This header declares what the kernel files export, with the firmware_c types. The integer
 * semantics live in the firmware_c headers only: nothing here computes a model.
 */
#ifndef KBN_H
#define KBN_H

#include <stdint.h>

/* Bonsai's prediction keeps 1 + 2L int32 dot products on the C stack (kb_bonsai_predict), and
 * a MicroPython port's C stack may be a few KiB: at most 64 classes here (about 0.6 KiB); a
 * model with more gets KB_ERR_LIMIT from kb_bonsai_init and kbit runs it in bytecode. */
#define KB_BONSAI_LMAX 64

/* The glue includes the headers for their types; their static functions (not all `inline`)
 * are the kernel files' business, so an unused one is no warning here. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "../kb_assoc.h"
#include "../kb_bonsai.h"
#include "../kb_ckp.h"
#include "../kb_features.h"
#include "../kb_protonn.h"
#include "../kb_quant.h"
#include "../kb_rkp.h"
#pragma GCC diagnostic pop

/* The interface version of the modules: kbit refuses a module whose ABI global differs (a
 * stale build beside a newer kbit). */
#define KBN_ABI 4

/* kern_rkp.c: the score (y < 0) or one learning step (y = 0, 1) of kb_rkp.h. */
int32_t kbn_rkp_step(kb_rkp_t *m, const uint8_t *u, int y, uint8_t *mistake);

/* kern_ckp.c: b and n1 from m->count (kb_ckp_schedule), then the score (y < 0) or one
 * learning step (y = 0, 1) of kb_ckp.h. */
int32_t kbn_ckp_step(kb_ckp_t *m, const uint8_t *u, int y, uint8_t *mistake);

/* kern_assoc.c: the prediction (y < 0) or one learning step (y = 0..255) of kb_assoc.h;
 * returns the (predicted) label, or -2 when kb_assoc_learn refuses (class capacity full). */
int16_t kbn_assoc_step(kb_assoc_t *m, const int8_t *u, int y);

/* kern_quant.c: the n readings raw (int16_t, or int32_t when `wide`) of quantizer q into out
 * (codes, or assoc's int8 values when q->offset is not 0; kb_quant.h): 0, or -1 with nothing
 * written when a wide reading is outside -2^30 .. 2^30-1. */
int kbn_quant_run(const kb_quant_t *q, const void *raw, int wide, void *out);

/* kern_features.c: a window's features (kb_features.h). The selection of kbit.features.Extractor
 * (contract 12.1; p = log2 P or 0), with its output (axes * per-axis count) and the FFT's scratch
 * (2 * 2^p int16, NULL when p == 0). */
typedef struct {
    uint16_t n;
    uint8_t axes, mask, p, bands;
    int16_t *scratch;
    int32_t *out;
} kbn_features_t;

/* The selection x of window w (axes x n) into x->out (kb_features_extract; all seven
 * time-domain features: mask 0x7F, p 0): KB_OK, or an error with nothing written. */
int kbn_features_run(const kbn_features_t *x, const int16_t *w);

/* kern_bonsai.c, kern_protonn.c: kb_<model>_init (payload already checked by kbit; KB_OK or
 * KB_ERR_LIMIT for a model larger than this build holds), update, reset and predict; update_run
 * below. */
int kbn_bonsai_init(kb_bonsai_t *m, const uint8_t *payload, uint32_t len);
int kbn_bonsai_update(kb_bonsai_t *m, uint16_t j, uint8_t c);
void kbn_bonsai_reset(kb_bonsai_t *m);
uint8_t kbn_bonsai_predict(kb_bonsai_t *m);

int kbn_protonn_init(kb_protonn_t *m, const uint8_t *payload, uint32_t len);
int kbn_protonn_update(kb_protonn_t *m, uint16_t j, uint8_t c);
void kbn_protonn_reset(kb_protonn_t *m);
uint32_t kbn_protonn_predict(kb_protonn_t *m);

/* kern_bonsai.c, kern_protonn.c: features start .. start+n-1 have the codes c[0..n-1] (kbit's
 * update_run): 0, or -1 with nothing changed when kb_proj_update would refuse any of them (an
 * index below the input's next one or beyond dims, a code above 2^B - 1). n = 0 does nothing. */
int kbn_bonsai_update_run(kb_bonsai_t *m, uint32_t start, const uint8_t *c, uint32_t n);
int kbn_protonn_update_run(kb_protonn_t *m, uint32_t start, const uint8_t *c, uint32_t n);

/* A word read from a byte buffer (GCC's may_alias: the bytes are not uint32_t objects). */
typedef uint32_t __attribute__((may_alias)) kbn_word_t;

/* 1 when the run start .. start+n-1 of codes c may follow the input in progress of p: what
 * kb_proj_update checks for each feature, and the headers' kb_<model>_update_run leave to
 * their caller. The codes' OR is compared once (top is 2^B - 1), ORed a word at a time. */
static inline int kbn_run_ok(const kb_proj_t *p, uint32_t start, const uint8_t *c, uint32_t n)
{
    const uint8_t *const end = c + n;
    uint32_t any = 0;
    if (start < p->next || start > p->dims || n > (uint32_t)p->dims - start)
        return 0;
    for (; c < end && ((uintptr_t)c & 3u) != 0u; c++)
        any |= *c;
    for (; end - c >= 4; c += 4)
        any |= *(const kbn_word_t *)(const void *)c;
    for (; c < end; c++)
        any |= *c;
    any |= any >> 16;
    return ((any | any >> 8) & 0xFFu) <= p->top;
}

/* The body of kbn_<model>_update_run: the run checked whole, then given to the header's
 * kb_<model>_update_run (`run`) in pieces of at most 255 features (its count is a uint8_t). */
#define KBN_UPDATE_RUN(run, m, start, c, n)                           \
    do {                                                              \
        if ((n) == 0u)                                                \
            return 0;                                                 \
        if (!kbn_run_ok(&(m)->proj, start, c, n))                     \
            return -1;                                                \
        for (; (n) > 255u; (start) += 255u, (c) += 255u, (n) -= 255u) \
            run(m, (uint16_t)(start), c, 255u);                       \
        run(m, (uint16_t)(start), c, (uint8_t)(n));                   \
        return 0;                                                     \
    } while (0)

#endif /* KBN_H */
