/*
 * kb_export.h - a model inside the user's own program: the definitions behind the API of a
 * header made by `kilobit export` (kilobit.runtimes.export; README, "Use kilobit in your own
 * firmware"). The exported header declares the API under its prefix and, in the one source
 * file that compiles the model, defines before including this:
 *
 *   KB_EXPORT_NAME   the prefix: banana -> banana_learn, banana_save, ...
 *   the model as its UART firmware gets it: the header kilobit.models.<type>.firmware.header
 *   makes from the model file (compile-time parameters, tables in flash, the learnt state),
 *   then the runtime header its firmware module names (RUNTIME: kb_rkp.h, kb_ckp.h,
 *   kb_predictor_fw.h, kb_assoc_fw.h)
 *   learners on an AVR, with checkpoints: KB_PERSIST_EVERY, KB_PERSIST_FP, KB_PERSIST_BASE and
 *   KB_PERSIST_IRQ (avr/kb_persist.h)
 *
 * Each function is a step of the model's UART firmware (avr/rkp_stream.c, ckp_stream.c,
 * predict_stream.c, assoc_stream.c) without the frames: the same calls on the same state, so
 * an exported model answers bit for bit what the firmware and the host's integer reference
 * answer. A learning step checks its input first and refuses a bad one (nothing changes), as the
 * firmware refuses a bad frame: a wrong step would stay in the model. Queries trust their input.
 *
 * The model's state is static in this translation unit (compile-time parameters): one model
 * per source file; the API functions carry the prefix so that several models share a program.
 */
#ifndef KB_EXPORT_H
#define KB_EXPORT_H

#include <stdint.h>

#ifndef KB_EXPORT_NAME
#error "kb_export.h is included by a header from `kilobit export`"
#endif

#define KB_EXPORT_CAT2(a, b) a##_##b
#define KB_EXPORT_CAT(a, b) KB_EXPORT_CAT2(a, b)
#define KB_X(fn) KB_EXPORT_CAT(KB_EXPORT_NAME, fn)

/* ---- the state of each kind: what kb_persist.h checkpoints ---- */

#if defined(KB_RKP_CONST) || defined(KB_CKP_CONST)
#define KB_EXPORT_LEARNER
#ifdef KB_RKP_CONST
static kb_rkp_t kb_export_model = {KB_FW_RNG, KB_FW_COUNT};
#define KB_EXPORT_DIMS KB_RKP_CONST_DIMS
#define KB_EXPORT_BITS KB_RKP_CONST_BITS
#define KB_EXPORT_SCORE(u) kb_rkp_score(&kb_export_model, (u))
#define KB_EXPORT_LEARN(u, y, mistake) kb_rkp_learn(&kb_export_model, (u), (y), (mistake))
#define KB_STATE_MEM kb_rkp_mem
#define KB_STATE_MEM_BYTES KB_RKP_CONST_MEM_BYTES
/* a mistake changes the generator, the count and the bytes one support vector spans */
#define KB_STATE_STEP_BYTES \
    (sizeof kb_export_model + (KB_RKP_CONST_DIMS * KB_RKP_CONST_BITS + 1L + 7L + 7L) / 8L)
#else
/* kb_ckp_model: the name kb_ckp_step.S reads it by on cores without a multiplier */
KB_CKP_LINK kb_ckp_t kb_ckp_model = {KB_FW_RNG, KB_FW_COUNT, KB_FW_NORM, KB_FW_B, KB_FW_N1};
#define kb_export_model kb_ckp_model
#define KB_EXPORT_DIMS KB_CKP_CONST_DIMS
#define KB_EXPORT_BITS KB_CKP_CONST_BITS
#define KB_EXPORT_SCORE(u) kb_ckp_score(&kb_export_model, (u))
#define KB_EXPORT_LEARN(u, y, mistake) kb_ckp_learn(&kb_export_model, (u), (y), (mistake))
#define KB_STATE_MEM kb_ckp_mem
#define KB_STATE_MEM_BYTES KB_CKP_CONST_MEM_BYTES
/* a mistake can move every stored vector (a new schedule recompresses them all) */
#define KB_STATE_STEP_BYTES (sizeof kb_export_model + KB_CKP_CONST_MEM_BYTES)
#endif
#define KB_STATE_HEAD kb_export_model

#elif defined(KB_ASSOC_FW_H)
#define KB_EXPORT_CLASSES
#ifdef KB_ASSOC_FW_MEM_INIT
static uint8_t kb_export_mem[KB_ASSOC_FW_MEM_BYTES] = KB_ASSOC_FW_MEM_INIT;
#else
static uint8_t kb_export_mem[KB_ASSOC_FW_MEM_BYTES];
#endif
static uint16_t kb_export_near[KB_ASSOC_FW_P];
static uint32_t kb_export_dist[KB_ASSOC_FW_P];
/* its pointers are this build's: a checkpoint (fingerprinted by the build) restores them as
 * they were */
static kb_assoc_t kb_export_model;
#define KB_STATE_HEAD kb_export_model
#define KB_STATE_MEM kb_export_mem
#define KB_STATE_MEM_BYTES KB_ASSOC_FW_MEM_BYTES
#define KB_STATE_STEP_BYTES (sizeof kb_export_model + KB_ASSOC_FW_MEM_BYTES)

#elif defined(KB_PREDICTOR_FW_H)
#define KB_EXPORT_PREDICTOR
static kb_fw_model_t kb_export_model;
static uint8_t kb_export_ready;

#else
#error "no model: include the exported header, not kb_export.h"
#endif

/* Checkpoints on an AVR (nothing elsewhere, nor without KB_PERSIST_EVERY). Always included:
 * a build without checkpoints gets the two macros the learners call after a step. */
#include "avr/kb_persist.h"

/* ---- learners: rkp, ckp ---- */
#ifdef KB_EXPORT_LEARNER

void KB_X(init)(void)
{
}

int32_t KB_X(score)(const uint8_t *codes)
{
    return (int32_t)KB_EXPORT_SCORE(codes);
}

uint8_t KB_X(predict)(const uint8_t *codes)
{
    return (uint8_t)(KB_EXPORT_SCORE(codes) > 0);
}

int8_t KB_X(learn)(const uint8_t *codes, uint8_t label, int32_t *score)
{
    uint16_t j;
    uint8_t mistake;
    int32_t s;
    if (label > 1u)
        return -1;
    for (j = 0; j < KB_EXPORT_DIMS; j++)
        if ((codes[j] >> KB_EXPORT_BITS) != 0)
            return -1;
    s = (int32_t)KB_EXPORT_LEARN(codes, label, &mistake);
    (void)KB_LEARN_FLAGS(mistake); /* the checkpoint every KB_PERSIST_EVERY mistakes */
    if (score)
        *score = s;
    return (int8_t)mistake;
}

uint16_t KB_X(count)(void)
{
    return (uint16_t)kb_export_model.count;
}

const uint8_t *KB_X(memory)(void)
{
    return KB_STATE_MEM;
}

#endif /* KB_EXPORT_LEARNER */

/* ---- the associative memory ---- */
#ifdef KB_EXPORT_CLASSES

void KB_X(init)(void)
{
    if (kb_export_model.labels == 0) /* set up once: a restored state stays */
        kb_assoc_fw_setup(&kb_export_model, kb_export_mem, kb_export_near, kb_export_dist);
}

int16_t KB_X(predict)(const int8_t *values)
{
    KB_X(init)();
    return kb_assoc_predict(&kb_export_model, values);
}

int16_t KB_X(learn)(const int8_t *values, uint8_t label)
{
    int16_t pred = KB_ASSOC_NONE;
#if KB_ASSOC_FW_BITS < 8 /* at 8 bits every int8 is a value */
    uint16_t j;
    for (j = 0; j < KB_ASSOC_FW_T; j++)
        if (values[j] < -(1 << (KB_ASSOC_FW_BITS - 1)) ||
            values[j] > (1 << (KB_ASSOC_FW_BITS - 1)) - 1)
            return -3;
#endif
    KB_X(init)();
    if (kb_assoc_slot(&kb_export_model, label) < 0 &&
        kb_export_model.nc == kb_export_model.cap)
        return -2;
    kb_assoc_learn(&kb_export_model, values, label, &pred);
    (void)KB_LEARN_FLAGS(kb_export_model.changed);
    return pred;
}

uint8_t KB_X(votes)(void)
{
    return kb_export_model.count;
}

uint8_t KB_X(classes)(void)
{
    KB_X(init)();
    return kb_export_model.nc;
}

uint16_t KB_X(anchors)(void)
{
    KB_X(init)();
    return kb_assoc_stored(&kb_export_model);
}

const uint8_t *KB_X(memory)(void)
{
    return kb_export_mem;
}

#endif /* KB_EXPORT_CLASSES */

/* ---- the host-trained predictors: bonsai, protonn ---- */
#ifdef KB_EXPORT_PREDICTOR

void KB_X(init)(void)
{
    if (!kb_export_ready) { /* the host checked the model: parsing it cannot fail */
        (void)KB_FW_INIT(&kb_export_model);
        kb_export_ready = 1;
    }
}

int KB_X(feature)(uint16_t j, uint8_t code)
{
    KB_X(init)();
    return kb_proj_update(&kb_export_model.proj, j, code);
}

void KB_X(reset)(void)
{
    KB_X(init)();
    kb_proj_reset(&kb_export_model.proj);
}

uint32_t KB_X(predict)(void)
{
    KB_X(init)();
    return (uint32_t)KB_FW_PREDICT(&kb_export_model);
}

uint32_t KB_X(classify)(const uint8_t *codes)
{
    uint16_t j, n;
    KB_X(init)();
    for (j = 0; j < KB_FW_DIMS(&kb_export_model); j++)
        if (codes[j] > KB_FW_TOP(&kb_export_model))
            return (uint32_t)0xFFFFFFFFUL;
    kb_proj_reset(&kb_export_model.proj);
    for (j = 0; j < KB_FW_DIMS(&kb_export_model); j = (uint16_t)(j + n)) {
        n = (uint16_t)(KB_FW_DIMS(&kb_export_model) - j);
        if (n > 255u) /* a run is at most 255 features */
            n = 255u;
        KB_FW_UPDATE_RUN(&kb_export_model, j, codes + j, (uint8_t)n);
    }
    return (uint32_t)KB_FW_PREDICT(&kb_export_model);
}

const int32_t *KB_X(scores)(void)
{
    return kb_export_model.scores;
}

#endif /* KB_EXPORT_PREDICTOR */

/* ---- checkpoints in the EEPROM (AVR learners) ---- */
#ifdef KB_PERSIST_EVERY

uint8_t KB_X(restore)(void)
{
    KB_X(init)();
    return kb_persist_restore();
}

uint8_t KB_X(save)(void)
{
    uint8_t seq;
    KB_X(init)();
    return kb_persist_save(&seq);
}

#endif /* KB_PERSIST_EVERY */

#endif /* KB_EXPORT_H */
