/*
 * kb_replay - run the C runtime on the host, for comparison with the integer reference
 * (kilobit.runtimes.c.c_host drives it; docs/contract.md, section 5).
 *
 *     kb_replay [-r] MODEL.kb < steps
 *
 * One step per line: "L y c0 .. cM-1" (learn, y in {0, 1}, or a class id 0 .. K-1 for a
 * model of K >= 3 classes: one-vs-rest, kb_ovr.h) or "Q c0 .. cM-1" (score only);
 * with -r the values are raw integer readings, quantized by the model's own integer quantizer
 * first (kb_tool.h).
 * Per step it prints "score pred mistake count", followed on a mistake by a space and the
 * support-vector memory in lowercase hex; after the last step "END <memory hex>".
 *
 * Exit status: 0 ok; 1 output failed; 2 model refused (or unreadable, or bad usage);
 * 3 malformed step line.
 * Errors go to stderr as "error: <text>", the text of a refused model being kb_strerror's.
 *
 * Like the devices, it never calls malloc: the model file, the input line and the codes live
 * in static buffers sized for any model whose memory is at most KB_REPLAY_MAX_MEM bytes.
 * It replays rkp (kb_rkp.h) and ckp (kb_ckp.h) models, by the type in the file's header.
 * Built with -include of a KB_RKP_CONST or KB_CKP_CONST configuration it runs that model's
 * compile-time-parameter variant instead (and refuses models of other parameters).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kb_file.h"
#include "../kb_rkp.h"
#include "kb_tool.h"
#ifndef KB_RKP_CONST
#define KB_CKP_FILE
#include "../kb_ckp.h"
#define KB_REPLAY_CKP
#endif
#ifndef KB_CKP_CONST
#define KB_REPLAY_RKP
#define KB_REPLAY_HAS_RKP 1
#else
#define KB_REPLAY_HAS_RKP 0
#endif
#if !defined(KB_RKP_CONST) && !defined(KB_CKP_CONST)
/* One-vs-rest (contract 3.6, 6.8): up to 255 binary learners, each from its own binary file
 * that kb_ovr_split writes; a compile-time build holds one learner. */
#include "../kb_ovr.h"
#define KB_REPLAY_K 255
#else
#define KB_REPLAY_K 1
#endif

#define KB_REPLAY_MAX_MEM 65536ul
#define KB_REPLAY_MAX_DIMS 65535ul
/* Largest file: header, parameters, full table, memory, scaler flag and float32 lo/hi. */
#define KB_REPLAY_MAX_FILE                                                                    \
    (KB_FILE_HEAD + KB_RKP_PARAMS + KB_TABLE_MAX + KB_REPLAY_MAX_MEM + 1 +                    \
     8 * KB_REPLAY_MAX_DIMS + KB_FILE_CRC)
/* "L 1" then up to 65535 codes of at most 3 digits, with room for generous spacing. */
#define KB_REPLAY_MAX_LINE (1ul << 20)

static uint8_t file_buf[KB_REPLAY_MAX_FILE + 1];
static char line[KB_REPLAY_MAX_LINE];
static uint8_t codes[KB_REPLAY_MAX_DIMS];
#if KB_REPLAY_K > 1
/* learner k's binary file at split_at[k]: each repeats the parameters and tables (a ckp loss
 * table up to 32 KiB) beside its own memory */
#define KB_REPLAY_SPLIT (2ul * KB_REPLAY_MAX_FILE + 255ul * 65536ul)
static uint8_t split_buf[KB_REPLAY_SPLIT];
static uint32_t split_at[256];
#endif
#ifdef KB_REPLAY_CKP
static uint16_t scratch[2 * KB_REPLAY_MAX_DIMS];
#endif

/* The model being replayed: one of the two, by the file's type; K learners (1: binary). */
static uint8_t is_ckp;
static uint8_t nclass = 1;
static const uint8_t *model_file = file_buf; /* learner 0's binary file: the trailer's */
#ifdef KB_REPLAY_RKP
static kb_rkp_t rkp[KB_REPLAY_K];
#endif
#ifdef KB_REPLAY_CKP
static kb_ckp_t ckp[KB_REPLAY_K];
#endif

static void print_mem(void)
{
    static const char hex[] = "0123456789abcdef";
    const uint8_t *mem = NULL;
    uint32_t n = 0, i, k;
    for (k = 0; k < nclass; k++) { /* the K memories back to back, as the file holds them */
#ifdef KB_REPLAY_RKP
        if (!is_ckp) {
            mem = KB_RKP_MEM(&rkp[k]);
            n = KB_RKP_MEM_BYTES(&rkp[k]);
        }
#endif
#ifdef KB_REPLAY_CKP
        if (is_ckp) {
            mem = KB_CKP_MEM(&ckp[k]);
            n = KB_CKP_MEM_BYTES(&ckp[k]);
        }
#endif
        for (i = 0; i < n; i++) {
            putchar(hex[mem[i] >> 4]);
            putchar(hex[mem[i] & 15u]);
        }
    }
}

static kb_err_t load_one(uint8_t k, uint8_t *data, size_t len)
{
#ifdef KB_REPLAY_CKP
    if (is_ckp || !KB_REPLAY_HAS_RKP)
        return kb_ckp_load(&ckp[k], data, len, scratch);
#endif
#ifdef KB_REPLAY_RKP
    {
        kb_err_t err = kb_rkp_load(&rkp[k], data, len);
        if (err == KB_OK && KB_RKP_MEM_BYTES(&rkp[k]) > KB_REPLAY_MAX_MEM)
            return KB_ERR_LIMIT;
        return err;
    }
#endif
}

static kb_err_t load(const char *path)
{
    size_t len;
    uint8_t type;
    FILE *f = fopen(path, "rb");
    if (!f || (len = fread(file_buf, 1, sizeof file_buf, f), ferror(f))) {
        static char msg[512];
        sprintf(msg, "cannot read model file %.400s: %.80s", path, strerror(errno));
        kb_die(2, msg, 0);
    }
    fclose(f);
    if (len > KB_REPLAY_MAX_FILE) {
        /* Still name a foreign file as such rather than as a big one. */
        kb_err_t err = kb_file_head(file_buf, len, &type);
        return err != KB_OK ? err : KB_ERR_LIMIT;
    }
    is_ckp = (uint8_t)(len > 5 && file_buf[5] == KB_FILE_TYPE_CKP);
#if KB_REPLAY_K > 1
    {
        uint8_t k;
        kb_err_t err = kb_ovr_split(file_buf, len, split_buf, sizeof split_buf, &nclass,
                                    split_at);
        if (err != KB_OK || nclass == 1)
            return err != KB_OK ? err : load_one(0, file_buf, len);
        model_file = split_buf;
        for (k = 0; k < nclass; k++)
            if ((err = load_one(k, split_buf + split_at[k], split_at[k + 1] - split_at[k])) !=
                KB_OK)
                return err;
        return KB_OK;
    }
#else
    return load_one(0, file_buf, len);
#endif
}

static const char *strerror_of(kb_err_t err)
{
#ifdef KB_REPLAY_CKP
    if (is_ckp)
        return kb_model_strerror(err, KB_FILE_TYPE_CKP);
#endif
    return kb_model_strerror(err, KB_FILE_TYPE_RKP);
}

static unsigned long dims_of(void)
{
#ifdef KB_REPLAY_CKP
    if (is_ckp)
        return KB_CKP_DIMS(&ckp[0]);
#endif
#ifdef KB_REPLAY_RKP
    return KB_RKP_DIMS(&rkp[0]);
#else
    return 0;
#endif
}

static unsigned long top_code(void)
{
#ifdef KB_REPLAY_CKP
    if (is_ckp)
        return (1ul << KB_CKP_BITS(&ckp[0])) - 1u;
#endif
#ifdef KB_REPLAY_RKP
    return (1ul << KB_RKP_BITS(&rkp[0])) - 1u;
#else
    return 0;
#endif
}

/* Where the payload's trailer starts (contract 4 and 6.7), from the file's own fields: the
 * compile-time builds keep no pointer into the file. */
static uint32_t trailer_at(void)
{
    const uint8_t *p = model_file + KB_FILE_HEAD;
#ifdef KB_REPLAY_CKP
    if (is_ckp) {
        const uint32_t off = KB_CKP_PARAMS + (uint32_t)p[16] + 5u;
        return off + kb_le16(p + off - 3u) + ((uint32_t)kb_le16(p + 3) + 7u) / 8u;
    }
#endif
    return KB_RKP_PARAMS + (uint32_t)p[12] +
           kb_rkp_mem_bytes(kb_le16(p + 4), kb_le16(p + 2), p[1]);
}

/* Learner k's step (y: its own 0/1 label): its score, *mistake, and *count increased. */
static long step_one(uint8_t k, uint8_t learn, uint8_t y, uint8_t *mistake, unsigned long *count)
{
    long score = 0;
#ifdef KB_REPLAY_CKP
    if (is_ckp) {
        score = learn ? (long)kb_ckp_learn(&ckp[k], codes, y, mistake)
                      : (long)kb_ckp_score(&ckp[k], codes);
        *count += ckp[k].count;
        return score;
    }
#endif
#ifdef KB_REPLAY_RKP
    score = learn ? (long)kb_rkp_learn(&rkp[k], codes, y, mistake)
                  : (long)kb_rkp_score(&rkp[k], codes);
    *count += rkp[k].count;
#endif
    return score;
}

/* One step of the model: its score (the largest of K), *pred (its class, or score > 0 for a
 * binary model), *mistake (any learner stored) and *count (all the learners'). */
static long step_model(uint8_t learn, uint8_t y, uint8_t *pred, uint8_t *mistake,
                       unsigned long *count)
{
    static int32_t scores[KB_REPLAY_K];
    int32_t best;
    uint8_t k;
    *count = 0;
    if (nclass == 1) {
        best = (int32_t)step_one(0, learn, y, mistake, count);
        *pred = (uint8_t)(best > 0);
        return best;
    }
    for (k = 0; k < nclass; k++) {
        uint8_t miss = 0;
        scores[k] = (int32_t)step_one(k, learn, (uint8_t)(k == y), &miss, count);
        *mistake = (uint8_t)(*mistake | miss);
    }
#if KB_REPLAY_K > 1
    *pred = kb_ovr_best(scores, nclass, &best);
#else
    *pred = 0;
    best = scores[0];
#endif
    return best;
}

int main(int argc, char **argv)
{
    kb_err_t err;
    unsigned long step = 0;
    unsigned long top;
    const int raw = kb_tool_raw_flag(&argc, &argv);

    if (argc != 2)
        kb_die(2, "usage: kb_replay [-r] MODEL.kb < steps", 0);
    err = load(argv[1]);
    if (err != KB_OK)
        kb_die(2, strerror_of(err), 0);
    top = top_code();
    if (raw)
        kb_tool_quant_load(model_file, (uint8_t)(is_ckp ? model_file[KB_FILE_HEAD] :
                                                 model_file[KB_FILE_HEAD + 1]), trailer_at(),
                           dims_of());

    while (fgets(line, sizeof line, stdin)) {
        const char *s = kb_skip_space(line);
        unsigned long y = 0, v, j, count = 0;
        uint8_t mistake = 0, pred, learn;
        long score;

        if (*s == '\0')
            continue; /* blank line */
        step++;
        if (!strchr(line, '\n') && !feof(stdin))
            kb_die(3, "line too long", step);
        learn = (uint8_t)(*s == 'L');
        if ((*s != 'L' && *s != 'Q') || !kb_is_space(s[1]))
            kb_die(3, "expected 'L y codes..' or 'Q codes..'", step);
        s = kb_skip_space(s + 1);
        if (learn && !kb_parse_uint(&s, nclass > 1 ? nclass - 1u : 1u, &y))
            kb_die(3, nclass > 1 ? "label must be a class id in 0..K-1" : "label must be 0 or 1",
                   step);
        if (raw)
            s = kb_tool_read_raw(s, codes, NULL, step);
        for (j = 0; !raw && j < dims_of(); j++) {
            s = kb_skip_space(s);
            if (*s == '\0')
                kb_die(3, "fewer codes than the model's dims", step);
            if (!kb_parse_uint(&s, top, &v))
                kb_die(3, "code is not an integer in 0..2^bits-1", step);
            codes[j] = (uint8_t)v;
        }
        if (*kb_skip_space(s) != '\0')
            kb_die(3, "more codes than the model's dims", step);

        score = step_model(learn, (uint8_t)y, &pred, &mistake, &count);
        printf("%ld %d %d %lu", score, pred, mistake, count);
        if (mistake) {
            putchar(' ');
            print_mem();
        }
        putchar('\n');
    }
    if (ferror(stdin))
        kb_die(3, "cannot read steps", 0);
    fputs("END ", stdout);
    print_mem();
    putchar('\n');
    if (fflush(stdout) != 0)
        kb_die(1, "cannot write results", 0);
    return 0;
}
