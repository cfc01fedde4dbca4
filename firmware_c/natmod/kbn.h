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
#include "../kb_protonn.h"
#include "../kb_rkp.h"
#pragma GCC diagnostic pop

/* The interface version of the modules: kbit refuses a module whose ABI global differs (a
 * stale build beside a newer kbit). */
#define KBN_ABI 2

/* kern_rkp.c: the score (y < 0) or one learning step (y = 0, 1) of kb_rkp.h. */
int32_t kbn_rkp_step(kb_rkp_t *m, const uint8_t *u, int y, uint8_t *mistake);

/* kern_ckp.c: b and n1 from m->count (kb_ckp_schedule), then the score (y < 0) or one
 * learning step (y = 0, 1) of kb_ckp.h. */
int32_t kbn_ckp_step(kb_ckp_t *m, const uint8_t *u, int y, uint8_t *mistake);

/* kern_assoc.c: the prediction (y < 0) or one learning step (y = 0..255) of kb_assoc.h;
 * returns the (predicted) label, or -2 when kb_assoc_learn refuses (class capacity full). */
int16_t kbn_assoc_step(kb_assoc_t *m, const int8_t *u, int y);

/* kern_bonsai.c, kern_protonn.c: kb_<model>_init (payload already checked by kbit; KB_OK or
 * KB_ERR_LIMIT for a model larger than this build holds), update, reset and predict. */
int kbn_bonsai_init(kb_bonsai_t *m, const uint8_t *payload, uint32_t len);
int kbn_bonsai_update(kb_bonsai_t *m, uint16_t j, uint8_t c);
void kbn_bonsai_reset(kb_bonsai_t *m);
uint8_t kbn_bonsai_predict(kb_bonsai_t *m);

int kbn_protonn_init(kb_protonn_t *m, const uint8_t *payload, uint32_t len);
int kbn_protonn_update(kb_protonn_t *m, uint16_t j, uint8_t c);
void kbn_protonn_reset(kb_protonn_t *m);
uint32_t kbn_protonn_predict(kb_protonn_t *m);

#endif /* KBN_H */
