/*
 * predict.c - the host-trained predictors (Bonsai: kb_bonsai.h, ProtoNN: kb_protonn.h) on the
 * emulated RP2040, bare C: firmware_c/host/kb_predict's replay, its input and output (floor.h).
 *
 * Steps "P x0 .. xD-1": the D codes streamed feature by feature (kb_proj_update, zeros too),
 * then the prediction. Per step the golden fields: Bonsai P[0..d-1], leaf, scores, prediction;
 * ProtoNN P[0..d-1], D[0..m-1], k[0..m-1], scores, prediction. Exit status as kb_predict's.
 * The model is read where run.mjs put it, in flash (XIP), as a firmware keeps its constants;
 * RAM holds only the predictor's state. Each step's cycles: the D updates and the prediction
 * (the line is parsed before the clock starts), as tools/replay/replay_predict.py times them.
 */
#include "floor.h"

#include "kb_bonsai.h"
#include "kb_file.h"
#include "kb_protonn.h"

#define DIMS_MAX 16384u

static char line[FLOOR_LINE_MAX];
static uint8_t codes[DIMS_MAX];
static kb_bonsai_t bonsai;
static kb_protonn_t protonn;
static kb_proj_t *proj;
static uint8_t is_protonn;

/* The timed call (out of line: see learner.c). Returns the class; *refused when an update was
 * refused (an index out of order: cannot happen with j = 0..D-1, but kb_predict checks it). */
__attribute__((noinline)) static unsigned long predict_step(int *refused)
{
    uint16_t j;
    int bad = 0;
    for (j = 0; j < proj->dims; j++)
        bad |= kb_proj_update(proj, j, codes[j]);
    *refused = bad;
    return is_protonn ? (unsigned long)kb_protonn_predict(&protonn)
                      : (unsigned long)kb_bonsai_predict(&bonsai);
}

static void put_fields(unsigned long pred)
{
    unsigned r, j, l;
    if (is_protonn) {
        for (r = 0; r < protonn.proj.d; r++) {
            floor_put_long(protonn.P[r]);
            floor_putc(' ');
        }
        for (j = 0; j < protonn.m; j++) {
            floor_put_long((long)protonn.D[j]);
            floor_putc(' ');
        }
        for (j = 0; j < protonn.m; j++) {
            floor_put_long(protonn.k[j]);
            floor_putc(' ');
        }
        for (l = 0; l < protonn.L; l++) {
            floor_put_long((long)protonn.scores[l]);
            floor_putc(' ');
        }
        floor_put_long((long)pred);
    } else {
        for (r = 0; r < bonsai.proj.d; r++) {
            floor_put_long(bonsai.P[r]);
            floor_putc(' ');
        }
        floor_put_long(bonsai.leaf);
        for (l = 0; l < bonsai.L; l++) {
            floor_putc(' ');
            floor_put_long((long)bonsai.scores[l]);
        }
        floor_putc(' ');
        floor_put_long((long)pred);
    }
    floor_putc('\n');
}

int main(void)
{
    floor_input_t in;
    kb_err_t err;

    floor_init(&in);
    is_protonn = (uint8_t)(in.model_len > 5 && in.model[5] == KB_FILE_TYPE_PROTONN);
    err = is_protonn ? kb_protonn_load(&protonn, in.model, in.model_len)
                     : kb_bonsai_load(&bonsai, in.model, in.model_len);
    if (err != KB_OK)
        floor_die(2, kb_model_strerror(err, in.model_len > 5 ? in.model[5] : 0), 0);
    proj = is_protonn ? &protonn.proj : &bonsai.proj;
    if (proj->dims > DIMS_MAX)
        floor_die(2, kb_strerror(KB_ERR_LIMIT), 0);
    floor_times_begin();

    while (floor_next_line(&in, line)) {
        const char *s = floor_skip_space(line);
        unsigned long v, pred;
        uint16_t j;
        uint32_t t0, t1;
        int refused;

        if (*s != 'P' || !floor_is_space(s[1]))
            floor_die(3, "expected 'P codes..'", in.step);
        s++;
        for (j = 0; j < proj->dims; j++) {
            s = floor_skip_space(s);
            if (*s == '\0')
                floor_die(3, "fewer codes than the model's dims", in.step);
            if (!floor_parse_uint(&s, proj->top, &v))
                floor_die(3, "code is not an integer in 0..2^in_bits-1", in.step);
            codes[j] = (uint8_t)v;
        }
        if (*floor_skip_space(s) != '\0')
            floor_die(3, "more codes than the model's dims", in.step);

        t0 = floor_cycles();
        FLOOR_BARRIER();
        pred = predict_step(&refused);
        FLOOR_BARRIER();
        t1 = floor_cycles();
        if (refused)
            floor_die(3, "update refused", in.step);
        floor_time(t1 - t0);
        put_fields(pred);
    }
    return 0;
}
