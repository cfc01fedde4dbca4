/*
 * kb_predict - run a host-trained predictor of the C runtime on the host, for comparison with
 * the integer reference (kilobit.runtimes.c.c_host drives it; docs/contract.md, section 5).
 *
 *     kb_predict [-r] MODEL.kb < steps
 *
 * One step per line: "P x0 .. xD-1" (the D codes of one input, streamed feature by feature
 * in index order; zeros are streamed too; with -r raw integer readings, quantized by the
 * model's own integer quantizer first, kb_tool.h). Per step it prints the golden fields of the
 * model, space-separated; for Bonsai: P[0..d-1], the leaf, the L scores, the prediction; for ProtoNN
 * (model type 4): P[0..d-1], D[0..m-1], k[0..m-1], the L scores, the prediction.
 *
 * Exit status: 0 ok; 1 output failed; 2 model refused (or unreadable, or bad usage);
 * 3 malformed step line. Errors go to stderr as "error: <text>", a refused model's text being
 * kb_model_strerror's. No malloc: the model file and the line live in static buffers.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kb_bonsai.h"
#include "../kb_file.h"
#include "../kb_protonn.h"
#include "kb_tool.h"

#define KB_PREDICT_MAX_FILE (1ul << 20)
#define KB_PREDICT_MAX_LINE (1ul << 20)

static uint8_t file_buf[KB_PREDICT_MAX_FILE + 1];
static char line[KB_PREDICT_MAX_LINE];
static kb_bonsai_t model;
static kb_protonn_t protonn;
static uint8_t codes[KB_TOOL_MAX_RAW];

int main(int argc, char **argv)
{
    size_t len;
    uint8_t type;
    unsigned long step = 0;
    kb_err_t err;
    FILE *f;
    int is_protonn;
    kb_proj_t *proj;
    const int raw = kb_tool_raw_flag(&argc, &argv);

    if (argc != 2)
        kb_die(2, "usage: kb_predict [-r] MODEL.kb < steps", 0);
    f = fopen(argv[1], "rb");
    if (!f || (len = fread(file_buf, 1, sizeof file_buf, f), ferror(f))) {
        static char msg[512];
        sprintf(msg, "cannot read model file %.400s: %.80s", argv[1], strerror(errno));
        kb_die(2, msg, 0);
    }
    fclose(f);
    if (len > KB_PREDICT_MAX_FILE) {
        err = kb_file_head(file_buf, len, &type);
        kb_die(2, kb_strerror(err != KB_OK ? err : KB_ERR_LIMIT), 0);
    }
    is_protonn = len > 5 && file_buf[5] == KB_FILE_TYPE_PROTONN;
    err = is_protonn ? kb_protonn_load(&protonn, file_buf, len)
                     : kb_bonsai_load(&model, file_buf, len);
    if (err != KB_OK)
        kb_die(2, kb_model_strerror(err, file_buf[5]), 0);
    proj = is_protonn ? &protonn.proj : &model.proj;
    if (raw) {
        uint8_t bits = 0; /* in_bits, from top = 2^in_bits - 1 */
        while (proj->top >> bits)
            bits++;
        kb_tool_quant_load(file_buf, bits, is_protonn ? protonn.used : model.used, proj->dims);
    }

    while (fgets(line, sizeof line, stdin)) {
        const char *s = kb_skip_space(line);
        unsigned long v;
        uint16_t j;
        uint8_t r, l;
        if (*s == '\0')
            continue;
        step++;
        if (!strchr(line, '\n') && !feof(stdin))
            kb_die(3, "line too long", step);
        if (*s != 'P' || !kb_is_space(s[1]))
            kb_die(3, "expected 'P codes..'", step);
        s++;
        if (raw)
            s = kb_tool_read_raw(s, codes, NULL, step);
        for (j = 0; j < proj->dims; j++) {
            s = kb_skip_space(s);
            if (raw)
                v = codes[j];
            else if (*s == '\0')
                kb_die(3, "fewer codes than the model's dims", step);
            else if (!kb_parse_uint(&s, proj->top, &v))
                kb_die(3, "code is not an integer in 0..2^in_bits-1", step);
            if (kb_proj_update(proj, j, (uint8_t)v) != 0)
                kb_die(3, "update refused", step);
        }
        if (*kb_skip_space(s) != '\0')
            kb_die(3, "more codes than the model's dims", step);
        if (is_protonn) {
            const unsigned long pred = (unsigned long)kb_protonn_predict(&protonn);
            for (r = 0; r < protonn.proj.d; r++)
                printf("%d ", protonn.P[r]);
            for (j = 0; j < protonn.m; j++)
                printf("%ld ", (long)protonn.D[j]);
            for (j = 0; j < protonn.m; j++)
                printf("%d ", protonn.k[j]);
            for (l = 0; l < protonn.L; l++)
                printf("%ld ", (long)protonn.scores[l]);
            printf("%lu\n", pred);
            continue;
        }
        {
            const uint8_t pred = kb_bonsai_predict(&model);
            for (r = 0; r < model.proj.d; r++)
                printf("%d ", model.P[r]);
            printf("%d", model.leaf);
            for (l = 0; l < model.L; l++)
                printf(" %ld", (long)model.scores[l]);
            printf(" %d\n", pred);
        }
    }
    if (ferror(stdin))
        kb_die(3, "cannot read steps", 0);
    if (fflush(stdout) != 0)
        kb_die(1, "cannot write results", 0);
    return 0;
}
