/*
 * kb_selftest - expose kb_rng.h and the weight function of kb_rkp.h to the Python tests, which
 * compare them exhaustively with kilobit.core.rng and kilobit.models.rkp.weight.
 *
 *     kb_selftest seed SEED            the generator state of a seed
 *     kb_selftest rng STATE N          N outputs of next() from STATE, one per line
 *     kb_selftest below STATE N BOUND  N outputs of below(BOUND) from STATE
 *     kb_selftest weight C P0 P1 ..    w(k) for each k read from stdin (table may be empty)
 *     kb_selftest errors               every error code and its kb_strerror text
 *     kb_selftest recip                the 32-bit path's division by multiply, every case
 *     kb_selftest quant TYPE BITS      kb_quant.h's code of each "lo hi x" read from stdin
 *
 * Exit status 2 on bad arguments.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kb_file.h"
#include "../kb_quant.h"
#include "../kb_rkp.h"

static unsigned long arg(const char *s, unsigned long max)
{
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v > max) {
        fprintf(stderr, "error: bad argument %s\n", s);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "seed") == 0) {
        printf("%u\n", (unsigned)kb_rng_seed((uint32_t)arg(argv[2], 0xFFFFFFFFul)));
        return 0;
    }
    if (argc == 4 && strcmp(argv[1], "rng") == 0) {
        kb_rng_t state = (kb_rng_t)arg(argv[2], 65535);
        unsigned long n = arg(argv[3], 1ul << 24);
        while (n--)
            printf("%u\n", (unsigned)kb_rng_next(&state));
        return 0;
    }
    if (argc == 5 && strcmp(argv[1], "below") == 0) {
        kb_rng_t state = (kb_rng_t)arg(argv[2], 65535);
        unsigned long n = arg(argv[3], 1ul << 24);
        uint16_t bound = (uint16_t)arg(argv[4], 65535);
        while (n--)
            printf("%u\n", (unsigned)kb_rng_below(&state, bound));
        return 0;
    }
    if (argc >= 3 && argc - 3 <= KB_TABLE_MAX && strcmp(argv[1], "weight") == 0) {
        uint8_t table[KB_TABLE_MAX];
        kb_rkp_t m;
        unsigned long k;
        int i;
        memset(&m, 0, sizeof m);
        m.C = (uint8_t)arg(argv[2], 255);
        m.ntab = (uint8_t)(argc - 3);
        for (i = 0; i < m.ntab; i++)
            table[i] = (uint8_t)arg(argv[3 + i], 255);
        m.table = table;
        while (scanf("%lu", &k) == 1)
            printf("%u\n", (unsigned)kb_rkp_weight(&m, (kb_dist_t)k));
        return 0;
    }
#ifdef KB_FAST32
    if (argc == 2 && strcmp(argv[1], "recip") == 0) {
        /* kb_kernel.h's division-free rounded division, checked for every divisor C and every
         * dividend the log method can make (x <= C*C + C/2): the quotient is x / C and the
         * product x * recip never wraps. Prints the number of cases, or the first failure. */
        unsigned long n = 0;
        uint32_t C, x;
        for (C = 1; C <= 255; C++) {
            const uint32_t recip = kb_recip24((uint8_t)C);
            for (x = 0; x <= C * C + C / 2u; x++, n++) {
                if ((uint64_t)x * recip > 0xFFFFFFFFu || kb_div_recip24(x, recip) != x / C) {
                    printf("fail C=%u x=%u\n", (unsigned)C, (unsigned)x);
                    return 1;
                }
            }
        }
        printf("ok %lu\n", n);
        return 0;
    }
#endif
    if (argc == 4 && strcmp(argv[1], "quant") == 0) {
        /* one feature at a time, so a test can put any bounds beside any reading */
        const uint8_t bits = (uint8_t)arg(argv[3], 8);
        kb_quant_t q;
        int32_t lo, hi;
        uint32_t M;
        long a, b, x;
        if (bits == 0)
            return 2;
        q.n = 1;
        kb_quant_setup(&q, (uint8_t)arg(argv[2], 255), bits);
        q.lo = &lo;
        q.hi = &hi;
        q.M = &M;
        while (scanf("%ld %ld %ld", &a, &b, &x) == 3) {
            kb_quant_derive((int32_t)a, (int32_t)b, &lo, &hi, &M);
            printf("%u\n", (unsigned)kb_quant_one(&q, 0, (int32_t)x));
        }
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "errors") == 0) {
        int e;
        for (e = KB_OK; e < KB_ERR_COUNT_; e++)
            printf("%d %s\n", e, kb_strerror((kb_err_t)e));
        return 0;
    }
    fputs("usage: kb_selftest seed SEED | rng STATE N | below STATE N BOUND | weight C P0 P1 .. "
          "| errors | quant TYPE BITS\n", stderr);
    return 2;
}
