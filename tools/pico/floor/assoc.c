/*
 * assoc.c - the binary associative memory (kb_assoc.h) on the emulated RP2040, bare C:
 * firmware_c/host/kb_assoc_replay's replay, its input and output (floor.h), except where the
 * memory goes: kb_assoc_replay writes it to a file, here it follows its row in hex (one UART).
 *
 * Steps "L y v0 .. vT-1" (learn label y, 0..255) or "Q v0 .. vT-1" (predict), the values int8
 * within the model's bits. Per step "pred count classes anchors changed", then, when a learning
 * step changed the memory, a space and the memory (labels | nf | anchors | connections) in hex;
 * at the end "END <memory hex>". Exit status as kb_assoc_replay's (4: a new label with every
 * class slot taken). Each step's cycles: the learn or predict call alone.
 */
#include "floor.h"

#include "kb_assoc_file.h"

#define FILE_MAX (160u * 1024u)
#define T_MAX 16384u

static uint8_t file_buf[FILE_MAX];
static char line[FLOOR_LINE_MAX];
static int8_t values[T_MAX];
static uint16_t near_buf[256];
static uint32_t dist_buf[256];
static kb_assoc_t m;

/* The timed calls (out of line, through a pointer: see learner.c); KB_ASSOC_FULL when a new
 * label finds every class slot taken. */
__attribute__((noinline)) static uint8_t learn_step(uint8_t y, int16_t *pred)
{
    return kb_assoc_learn(&m, values, y, pred);
}

__attribute__((noinline)) static uint8_t predict_step(uint8_t y, int16_t *pred)
{
    (void)y;
    *pred = kb_assoc_predict(&m, values);
    return 0;
}

static void put_mem(void)
{
    /* contiguous in the file buffer, from the labels on */
    floor_put_hex(m.labels, kb_assoc_mem_bytes(m.P, m.d, m.cap, m.kt, m.R));
}

int main(void)
{
    floor_input_t in;
    kb_err_t err;
    long lo, hi;

    floor_init(&in);
    if (in.model_len > FILE_MAX)
        floor_die(2, kb_strerror(KB_ERR_LIMIT), 0);
    memcpy(file_buf, in.model, in.model_len); /* learnt in place: RAM, not flash */
    err = kb_assoc_load(&m, file_buf, in.model_len, near_buf, dist_buf, 256);
    if (err != KB_OK)
        floor_die(2, kb_model_strerror(err, KB_FILE_TYPE_ASSOC), 0);
    if (kb_assoc_T(&m) > T_MAX)
        floor_die(2, kb_strerror(KB_ERR_LIMIT), 0);
    lo = -(1l << (m.bits - 1));
    hi = (1l << (m.bits - 1)) - 1;
    floor_times_begin();

    while (floor_next_line(&in, line)) {
        const char *s = floor_skip_space(line);
        long y = 0, v;
        uint16_t j;
        const uint16_t T = kb_assoc_T(&m);
        int learn;
        int16_t pred;
        uint32_t t0, t1;
        uint8_t (*step)(uint8_t, int16_t *);
        int full;

        learn = *s == 'L';
        if ((*s != 'L' && *s != 'Q') || !floor_is_space(s[1]))
            floor_die(3, "expected 'L y values..' or 'Q values..'", in.step);
        s = floor_skip_space(s + 1);
        if (learn && !floor_parse_int(&s, 0, 255, &y))
            floor_die(3, "label must be an integer in 0..255", in.step);
        for (j = 0; j < T; j++) {
            s = floor_skip_space(s);
            if (*s == '\0')
                floor_die(3, "fewer values than the model's T", in.step);
            if (!floor_parse_int(&s, lo, hi, &v))
                floor_die(3, "value is not an integer within the model's bits", in.step);
            values[j] = (int8_t)v;
        }
        if (*floor_skip_space(s) != '\0')
            floor_die(3, "more values than the model's T", in.step);

        step = learn ? learn_step : predict_step;
        t0 = floor_cycles();
        FLOOR_BARRIER();
        full = step((uint8_t)y, &pred) == KB_ASSOC_FULL;
        FLOOR_BARRIER();
        t1 = floor_cycles();
        if (full)
            floor_die(4, "class capacity full: a new label cannot be learnt", in.step);
        floor_time(t1 - t0);
        learn = learn && m.changed; /* a memory snapshot follows only when it changed */
        floor_put_long(pred);
        floor_putc(' ');
        floor_put_long(m.count);
        floor_putc(' ');
        floor_put_long(m.nc);
        floor_putc(' ');
        floor_put_long(kb_assoc_stored(&m));
        floor_putc(' ');
        floor_putc(learn ? '1' : '0');
        if (learn) {
            floor_putc(' ');
            put_mem();
        }
        floor_putc('\n');
    }
    floor_puts("END ");
    put_mem();
    floor_putc('\n');
    return 0;
}
