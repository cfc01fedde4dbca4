/* kern_features.c - the kernel of _kb_features: kb_features.h's window features and kb_fft.h's
 * band energies (kbn.h). */
/* -O2 with unrolled loops for the whole file, the header's inline functions included (the
 * modules build -Os): on the emulated Pico a 3 x 100 window took 41,122 cycles at -Os, 38,325 at
 * -O2, 40,600 at -O3 and 35,911 so (issue 29's target: 300 us, 37,500 cycles) */
#pragma GCC optimize("O2", "unroll-loops")
#include <stddef.h>

#include "kbn.h"

int kbn_features_time(const int16_t *w, uint16_t n, uint8_t axes, int32_t *out)
{
    return kb_features(w, n, axes, out);
}

int kbn_features_run(const kbn_features_t *x, const int16_t *w)
{
    return kb_features_extract(w, x->n, x->axes, x->mask, x->p, x->bands, x->scratch, x->out);
}
