/*
 * kb_tool.h - what the host replay tools (kb_replay, kb_predict, kb_assoc_replay) share: the
 * error exit, the tokens of a step line, and raw steps (-r). Host only (stdio, exit); no malloc.
 */
#ifndef KB_TOOL_H
#define KB_TOOL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KB_QUANT_FILE
#include "../kb_features.h"
#include "../kb_quant.h"

/* "error: [step N: ]what" on stderr after what stdout has so far, then exit(status). */
static inline void kb_die(int status, const char *what, unsigned long step)
{
    fflush(stdout);
    if (step)
        fprintf(stderr, "error: step %lu: %s\n", step, what);
    else
        fprintf(stderr, "error: %s\n", what);
    exit(status);
}

static inline int kb_is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static inline const char *kb_skip_space(const char *s)
{
    while (kb_is_space(*s))
        s++;
    return s;
}

/* Parse an unsigned decimal token at *s that is at most `max`; advance past it. Signs, other
 * bases and trailing garbage are refused (strtoul would accept "-1", "+1" and " 0x1"). */
static inline int kb_parse_uint(const char **s, unsigned long max, unsigned long *value)
{
    const char *p = *s;
    unsigned long v = 0;
    if (*p < '0' || *p > '9')
        return 0;
    while (*p >= '0' && *p <= '9') {
        v = v * 10u + (unsigned long)(*p - '0');
        if (v > max)
            return 0;
        p++;
    }
    if (*p != '\0' && !kb_is_space(*p))
        return 0;
    *s = p;
    *value = v;
    return 1;
}

/* ---- raw steps: `TOOL -r MODEL.kb ...` (golden cases with "raw": true) ----
 * Each step's values are raw integer readings that the model's own integer quantizer (contract
 * 1.1, kb_quant.h) turns into codes first, as a board does with m.quantize before learning or
 * predicting; a model without an integer quantizer is refused. */
#define KB_TOOL_MAX_RAW 65535u
static int32_t kb_tool_raw[KB_TOOL_MAX_RAW];
static int32_t kb_tool_qlo[KB_TOOL_MAX_RAW], kb_tool_qhi[KB_TOOL_MAX_RAW];
static uint32_t kb_tool_qM[KB_TOOL_MAX_RAW];
static kb_quant_t kb_tool_quant;
/* a model with a window pipeline (contract 12.1): a raw step is a window of axes*n readings */
static kb_pipeline_t kb_tool_pipe;
static uint16_t kb_tool_inputs; /* raw values a step holds: the quantizer's n, or the window's */
static int16_t kb_tool_window[256u * KB_PIPELINE_AXES];
static int16_t kb_tool_scratch[2u * 256u];

/* 1 when argv[1] is "-r" (then dropped from argc/argv), else 0. */
static inline int kb_tool_raw_flag(int *argc, char ***argv)
{
    if (*argc < 2 || strcmp((*argv)[1], "-r") != 0)
        return 0;
    (*argv)[1] = (*argv)[0];
    (*argv)++;
    (*argc)--;
    return 1;
}

/* The quantizer of the loaded model file `file` (type and code width `bits`), whose trailer is
 * at payload byte `used`, for n raw inputs; exits 2 when the model has none. */
static inline void kb_tool_quant_load(const uint8_t *file, uint8_t bits, uint32_t used,
                                      unsigned long n)
{
    kb_err_t err;
    if (n > KB_TOOL_MAX_RAW)
        kb_die(2, kb_strerror(KB_ERR_LIMIT), 0);
    err = kb_quant_load(&kb_tool_quant, file[5], bits, file + KB_FILE_HEAD, kb_le32(file + 8),
                        used, (uint16_t)n, kb_tool_qlo, kb_tool_qhi, kb_tool_qM);
    if (err != KB_OK)
        kb_die(2, kb_model_strerror(err, file[5]), 0);
    if (kb_tool_quant.n == 0)
        kb_die(2, "raw steps need a model with an integer quantizer", 0);
    kb_tool_inputs = kb_tool_quant.n;
    kb_tool_pipe.n = 0;
    if (file[KB_FILE_HEAD + used] & KB_EXTRA_PIPELINE) { /* the payload's last 6 bytes */
        kb_pipeline_read(file + KB_FILE_HEAD + kb_le32(file + 8) - KB_PIPELINE_SIZE,
                         &kb_tool_pipe);
        kb_tool_inputs = (uint16_t)(kb_tool_pipe.n * kb_tool_pipe.axes);
    }
}

/* A decimal int32_t token at *s (optional '-'); advance past it. */
static inline int kb_parse_int32(const char **s, int32_t *value)
{
    const char *p = *s;
    const int neg = *p == '-';
    unsigned long v = 0;
    if (neg)
        p++;
    if (*p < '0' || *p > '9')
        return 0;
    while (*p >= '0' && *p <= '9') {
        v = v * 10u + (unsigned long)(*p - '0');
        if (v > 2147483648ul - (neg ? 0u : 1u))
            return 0;
        p++;
    }
    if (*p != '\0' && !kb_is_space(*p))
        return 0;
    *s = p;
    *value = neg ? (int32_t)(-(long long)v) : (int32_t)v;
    return 1;
}

/* The n raw readings of a step at s, quantized into codes[0 .. n) (or, with `values`, assoc's
 * signed values); the rest of the line after them. */
static inline const char *kb_tool_read_raw(const char *s, uint8_t *codes, int8_t *values,
                                           unsigned long step)
{
    uint16_t j;
    for (j = 0; j < kb_tool_inputs; j++) {
        s = kb_skip_space(s);
        if (*s == '\0')
            kb_die(3, "fewer raw values than the model's inputs", step);
        if (!kb_parse_int32(&s, &kb_tool_raw[j]))
            kb_die(3, "raw value is not a 32-bit integer", step);
        if (kb_tool_pipe.n) {
            if (kb_tool_raw[j] < -32768L || kb_tool_raw[j] > 32767L)
                kb_die(3, "a window's reading is not an int16", step);
            kb_tool_window[j] = (int16_t)kb_tool_raw[j];
        }
    }
    if (*kb_skip_space(s) != '\0')
        kb_die(3, "more raw values than the model's inputs", step);
    if (kb_tool_pipe.n) { /* the window's features are the quantizer's readings */
        kb_err_t err = kb_features_extract(kb_tool_window, kb_tool_pipe.n, kb_tool_pipe.axes,
                                           kb_tool_pipe.mask, kb_tool_pipe.p,
                                           kb_tool_pipe.bands, kb_tool_scratch, kb_tool_raw);
        if (err != KB_OK)
            kb_die(3, kb_strerror(err), step);
    }
    if (values)
        kb_quant_values32(&kb_tool_quant, kb_tool_raw, values);
    else
        kb_quant_codes32(&kb_tool_quant, kb_tool_raw, codes);
    return s;
}

#endif /* KB_TOOL_H */
