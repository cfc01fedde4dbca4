/* kern_features.c - the kernel of _kb_features: kb_features.h's window features and kb_fft.h's
 * band energies (kbn.h). */
/* -O2 with unrolled loops for the whole file, the headers' inline functions included (the
 * modules build -Os): on the emulated Pico the time-domain features of a 3 x 100 window took
 * 41,122 cycles at -Os, 38,325 at -O2, 40,600 at -O3 and 35,911 so (through kb_features; through
 * kb_features_extract, the one call both of the module's functions now make, 32,899); issue
 * 29's target is 300 us, 37,500 cycles. C reaches it: no assembly. */
#pragma GCC optimize("O2", "unroll-loops")
#include <stddef.h>

#include "kbn.h"

int kbn_features_run(const kbn_features_t *x, const int16_t *w)
{
    return kb_features_extract(w, x->n, x->axes, x->mask, x->p, x->bands, x->scratch, x->out);
}
