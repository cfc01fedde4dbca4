/*
 * kb_features_replay - the features of windows of raw readings through kb_features_extract
 * (docs/contract.md 12, 12.1, 13), for the c-host runtime's replay of a features golden file.
 *
 *     kb_features_replay < input
 *
 * input: the selection "axes n mask p bands" (contract 12.1), then windows of axes*n int16
 * readings each (interleaved, whitespace-separated; a window a line by convention only). Prints
 * one line per window: its axes*F features. A bad selection, a reading outside int16 or a
 * window cut short: "error: ..." on stderr, exit status 1 (the windows before it printed).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../kb_features.h"

#define AXES_MAX 255u
#define N_MAX 256u
#define P_MAX 256u
#define F_MAX (7u + P_MAX / 2u)

static int16_t window[AXES_MAX * N_MAX];
static int16_t scratch[2u * P_MAX];
static int32_t out[AXES_MAX * F_MAX];

static void die(const char *what, unsigned long count)
{
    fflush(stdout);
    if (count)
        fprintf(stderr, "error: window %lu: %s\n", count, what);
    else
        fprintf(stderr, "error: %s\n", what);
    exit(1);
}

/* 1 and *v when the next token is a decimal integer in lo..hi; 0 at the end of the input
 * before any character of a token; dies on anything else, naming `what`. */
static int read_int(const char *what, long lo, long hi, long *v, unsigned long count)
{
    char text[96];
    int got = scanf("%ld", v);
    if (got == EOF)
        return 0;
    if (got != 1 || *v < lo || *v > hi) {
        snprintf(text, sizeof text, "%s is not an integer in %ld..%ld", what, lo, hi);
        die(text, count);
    }
    return 1;
}

int main(void)
{
    long axes, n, mask, p, bands, v;
    unsigned long count = 0, i, size, per_axis, k;
    kb_err_t err;

    if (!read_int("axes", 1, (long)AXES_MAX, &axes, 0) || !read_int("n", 1, (long)N_MAX, &n, 0) ||
        !read_int("mask", 0, 255, &mask, 0) || !read_int("p", 0, 255, &p, 0) ||
        !read_int("bands", 0, 255, &bands, 0))
        die("the input does not start with the selection: axes n mask p bands", 0);
    size = (unsigned long)axes * (unsigned long)n;
    per_axis = (unsigned long)bands;
    for (k = 0; k < 8; k++)
        per_axis += ((unsigned long)mask >> k) & 1u;

    for (;;) {
        count++;
        for (i = 0; i < size; i++) {
            if (!read_int("a reading", -32768, 32767, &v, count)) {
                if (i == 0)
                    return 0;
                die("the input ends inside a window", count);
            }
            window[i] = (int16_t)v;
        }
        err = kb_features_extract(window, (uint16_t)n, (uint8_t)axes, (uint8_t)mask, (uint8_t)p,
                                  (uint8_t)bands, scratch, out);
        if (err != KB_OK) {
            fflush(stdout);
            fprintf(stderr, "error: kb_features_extract refused the selection (axes %ld n %ld "
                            "mask %ld p %ld bands %ld): error %d\n",
                    axes, n, mask, p, bands, (int)err);
            return 1;
        }
        for (k = 0; k < (unsigned long)axes * per_axis; k++)
            printf(k ? " %ld" : "%ld", (long)out[k]);
        printf("\n");
    }
}
