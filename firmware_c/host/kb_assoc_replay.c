/*
 * kb_assoc_replay - run kb_assoc.h on the host, for comparison with the integer reference
 * (kilobit.runtimes.assoc_rt drives it; docs/contract.md sections 5 and 9).
 *
 *     kb_assoc_replay [-r] MODEL.kb MEMOUT < steps
 *
 * One step per line: "L y v0 .. vT-1" (learn label y, 0..255) or "Q v0 .. vT-1" (predict), the
 * values int8 within the model's B bits (with -r raw integer readings, quantized by the model's
 * own integer quantizer first, kb_tool.h). Per step it prints "pred count classes anchors changed"
 * (pred -1: no class yet; changed 1 when a learning step changed the memory); after each such
 * step, and once at the end, it appends the memory (labels | nf | anchors | connections) to
 * MEMOUT, in binary.
 *
 * Exit status: 0 ok; 1 output failed; 2 model refused (or unreadable, or bad usage); 3 malformed
 * step line; 4 a new label with every class slot taken. Errors go to stderr as "error: <text>".
 * No malloc: static buffers for any model file up to KB_AREPLAY_MAX_FILE bytes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kb_assoc_file.h"
#include "kb_tool.h"

#define KB_AREPLAY_MAX_FILE (1ul << 24)
#define KB_AREPLAY_MAX_LINE (1ul << 20)
#define KB_AREPLAY_MAX_T (255ul * 255ul)

static uint8_t file_buf[KB_AREPLAY_MAX_FILE + 1];
static char line[KB_AREPLAY_MAX_LINE];
static int8_t values[KB_AREPLAY_MAX_T];
static uint16_t near_buf[256];
static uint32_t dist_buf[256];

/* A decimal integer token in lo..hi (optional leading '-'); advance past it. */
static int parse_int(const char **s, long lo, long hi, long *value)
{
    const char *p = *s;
    long v = 0;
    int neg = 0;
    if (*p == '-') {
        neg = 1;
        p++;
    }
    if (*p < '0' || *p > '9')
        return 0;
    while (*p >= '0' && *p <= '9') {
        v = v * 10 + (*p - '0');
        if (v > 1000)
            return 0;
        p++;
    }
    if (*p != '\0' && !kb_is_space(*p))
        return 0;
    if (neg)
        v = -v;
    if (v < lo || v > hi)
        return 0;
    *s = p;
    *value = v;
    return 1;
}

static void write_mem(FILE *f, const kb_assoc_t *m)
{
    const size_t n = (size_t)kb_assoc_mem_bytes(m->P, m->d, m->cap, m->kt, m->R);
    if (fwrite(m->labels, 1, n, f) != n) /* the memory is contiguous in the file buffer */
        kb_die(1, "cannot write the memory", 0);
}

int main(int argc, char **argv)
{
    kb_assoc_t m;
    kb_err_t err;
    unsigned long step = 0;
    size_t len;
    long lo, hi;
    FILE *f, *out;
    const int raw = kb_tool_raw_flag(&argc, &argv);

    if (argc != 3)
        kb_die(2, "usage: kb_assoc_replay [-r] MODEL.kb MEMOUT < steps", 0);
    f = fopen(argv[1], "rb");
    if (!f || (len = fread(file_buf, 1, sizeof file_buf, f), ferror(f))) {
        static char msg[512];
        sprintf(msg, "cannot read model file %.400s: %.80s", argv[1], strerror(errno));
        kb_die(2, msg, 0);
    }
    fclose(f);
    if (len > KB_AREPLAY_MAX_FILE)
        kb_die(2, kb_strerror(KB_ERR_LIMIT), 0);
    err = kb_assoc_load(&m, file_buf, len, near_buf, dist_buf, 256);
    if (err != KB_OK)
        kb_die(2, kb_model_strerror(err, KB_FILE_TYPE_ASSOC), 0);
    if (raw)
        kb_tool_quant_load(file_buf, m.bits,
                           KB_ASSOC_PARAMS + kb_assoc_mem_bytes(m.P, m.d, m.cap, m.kt, m.R),
                           kb_assoc_T(&m));
    out = fopen(argv[2], "wb");
    if (!out)
        kb_die(1, "cannot open the memory output", 0);
    lo = -(1l << (m.bits - 1));
    hi = (1l << (m.bits - 1)) - 1;

    while (fgets(line, sizeof line, stdin)) {
        const char *s = kb_skip_space(line);
        long y = 0, v;
        uint16_t j, T = kb_assoc_T(&m);
        int learn;
        int16_t pred;

        if (*s == '\0')
            continue;
        step++;
        if (!strchr(line, '\n') && !feof(stdin))
            kb_die(3, "line too long", step);
        learn = *s == 'L';
        if ((*s != 'L' && *s != 'Q') || !kb_is_space(s[1]))
            kb_die(3, "expected 'L y values..' or 'Q values..'", step);
        s = kb_skip_space(s + 1);
        if (learn && !parse_int(&s, 0, 255, &y))
            kb_die(3, "label must be an integer in 0..255", step);
        if (raw)
            s = kb_tool_read_raw(s, NULL, values, step);
        for (j = 0; !raw && j < T; j++) {
            s = kb_skip_space(s);
            if (*s == '\0')
                kb_die(3, "fewer values than the model's T", step);
            if (!parse_int(&s, lo, hi, &v))
                kb_die(3, "value is not an integer within the model's bits", step);
            values[j] = (int8_t)v;
        }
        if (!raw && *kb_skip_space(s) != '\0')
            kb_die(3, "more values than the model's T", step);
        if (learn) {
            if (kb_assoc_learn(&m, values, (uint8_t)y, &pred) == KB_ASSOC_FULL)
                kb_die(4, "class capacity full: a new label cannot be learnt", step);
        } else {
            pred = kb_assoc_predict(&m, values);
        }
        learn = learn && m.changed; /* a memory snapshot follows only when it changed */
        printf("%d %d %d %d %d\n", pred, m.count, m.nc, kb_assoc_stored(&m), learn);
        if (learn)
            write_mem(out, &m);
    }
    if (ferror(stdin))
        kb_die(3, "cannot read steps", 0);
    write_mem(out, &m);
    if (fclose(out) != 0 || fflush(stdout) != 0)
        kb_die(1, "cannot write results", 0);
    return 0;
}
