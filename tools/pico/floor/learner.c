/*
 * learner.c - the online learners (RKP: kb_rkp.h, CKP: kb_ckp.h) on the emulated RP2040, bare C:
 * firmware_c/host/kb_replay's replay, its input and output (floor.h: where they come from).
 *
 * Steps "L y c0 .. cM-1" (learn) or "Q c0 .. cM-1" (score only); per step "score pred mistake
 * count", then on a mistake a space and the support-vector memory in hex; at the end "END <memory
 * hex>". Exit status 0 ok, 2 model refused, 3 malformed step line, as kb_replay's.
 * Each step's cycles: the learn or score call alone (the line is parsed before the clock starts).
 */
#include "floor.h"

#include "kb_file.h"
#include "kb_rkp.h"
#define KB_CKP_FILE
#include "kb_ckp.h"

/* No malloc: static buffers. RAM is 264 KiB, and the stack wants 16 of them (pico.ld). */
#define FILE_MAX (160u * 1024u)
#define DIMS_MAX 8192u

static uint8_t file_buf[FILE_MAX];
static char line[FLOOR_LINE_MAX];
static uint8_t codes[DIMS_MAX];
static uint16_t scratch[2u * DIMS_MAX];
static kb_rkp_t rkp;
static kb_ckp_t ckp;
static uint8_t is_ckp;

/* The timed calls: out of line (and called through a pointer chosen before the clock starts),
 * so that nothing but the call lies between the counter reads around them. */
__attribute__((noinline)) static long rkp_step(uint8_t learn, uint8_t y, uint8_t *mistake)
{
    return learn ? (long)kb_rkp_learn(&rkp, codes, y, mistake) : (long)kb_rkp_score(&rkp, codes);
}

__attribute__((noinline)) static long ckp_step(uint8_t learn, uint8_t y, uint8_t *mistake)
{
    return learn ? (long)kb_ckp_learn(&ckp, codes, y, mistake) : (long)kb_ckp_score(&ckp, codes);
}

static kb_err_t load(const floor_input_t *in)
{
    const uint32_t len = in->model_len;
    kb_err_t err;
    uint8_t type;
    if (len > FILE_MAX) { /* still name a foreign file as such rather than as a big one */
        err = kb_file_head(in->model, len, &type);
        return err != KB_OK ? err : KB_ERR_LIMIT;
    }
    memcpy(file_buf, in->model, len); /* the memory is learnt in place: RAM, not flash */
    is_ckp = (uint8_t)(len > 5 && file_buf[5] == KB_FILE_TYPE_CKP);
    if (is_ckp) {
        err = kb_ckp_load(&ckp, file_buf, len, scratch);
        return err == KB_OK && KB_CKP_DIMS(&ckp) > DIMS_MAX ? KB_ERR_LIMIT : err;
    }
    err = kb_rkp_load(&rkp, file_buf, len);
    return err == KB_OK && KB_RKP_DIMS(&rkp) > DIMS_MAX ? KB_ERR_LIMIT : err;
}

static void put_mem(void)
{
    if (is_ckp)
        floor_put_hex(KB_CKP_MEM(&ckp), KB_CKP_MEM_BYTES(&ckp));
    else
        floor_put_hex(KB_RKP_MEM(&rkp), KB_RKP_MEM_BYTES(&rkp));
}

int main(void)
{
    floor_input_t in;
    unsigned long dims, top;
    long (*step)(uint8_t, uint8_t, uint8_t *);
    kb_err_t err;

    floor_init(&in);
    err = load(&in);
    if (err != KB_OK)
        floor_die(2, kb_model_strerror(err, is_ckp ? KB_FILE_TYPE_CKP : KB_FILE_TYPE_RKP), 0);
    dims = is_ckp ? KB_CKP_DIMS(&ckp) : KB_RKP_DIMS(&rkp);
    top = (1ul << (is_ckp ? KB_CKP_BITS(&ckp) : KB_RKP_BITS(&rkp))) - 1u;
    step = is_ckp ? ckp_step : rkp_step; /* chosen once: no branch inside the timed region */
    floor_times_begin();

    while (floor_next_line(&in, line)) {
        const char *s = floor_skip_space(line);
        unsigned long y = 0, v, j;
        uint8_t mistake = 0, learn;
        uint32_t t0, t1;
        long score;

        learn = (uint8_t)(*s == 'L');
        if ((*s != 'L' && *s != 'Q') || !floor_is_space(s[1]))
            floor_die(3, "expected 'L y codes..' or 'Q codes..'", in.step);
        s = floor_skip_space(s + 1);
        if (learn && !floor_parse_uint(&s, 1, &y))
            floor_die(3, "label must be 0 or 1", in.step);
        for (j = 0; j < dims; j++) {
            s = floor_skip_space(s);
            if (*s == '\0')
                floor_die(3, "fewer codes than the model's dims", in.step);
            if (!floor_parse_uint(&s, top, &v))
                floor_die(3, "code is not an integer in 0..2^bits-1", in.step);
            codes[j] = (uint8_t)v;
        }
        if (*floor_skip_space(s) != '\0')
            floor_die(3, "more codes than the model's dims", in.step);

        t0 = floor_cycles();
        FLOOR_BARRIER();
        score = step(learn, (uint8_t)y, &mistake);
        FLOOR_BARRIER();
        t1 = floor_cycles();
        floor_time(t1 - t0);

        floor_put_long(score);
        floor_putc(' ');
        floor_putc(score > 0 ? '1' : '0');
        floor_putc(' ');
        floor_putc(mistake ? '1' : '0');
        floor_putc(' ');
        floor_put_long((long)(is_ckp ? ckp.count : rkp.count));
        if (mistake) {
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
