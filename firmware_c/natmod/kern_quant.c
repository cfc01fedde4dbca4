/* kern_quant.c - the kernel of _kb_quant: kb_quant.h's loops over a model's readings (kbn.h). */
#define KB_QUANT_INLINE static inline __attribute__((always_inline))
#include "kbn.h"

/* -O2 here (the modules build -Os): 47 -> 39 emulated cycles a reading on the Pico */
__attribute__((optimize("O2"))) int kbn_quant_run(const kb_quant_t *q, const void *raw, int wide,
                                                  void *out)
{
    if (wide) {
        /* kbit refuses a reading outside -2^30 .. 2^30-1 before anything is written: each
         * shifted by 2^30 into 0 .. 2^31-1, one below wrapping far above, so the OR tells */
        const int32_t *r = raw, *const end = r + q->n;
        uint32_t any = 0;
        while (r < end)
            any |= (uint32_t)*r++ + 0x40000000u;
        if (any >= 0x80000000u)
            return -1;
        if (q->offset)
            kb_quant_values32(q, raw, out);
        else
            kb_quant_codes32(q, raw, out);
    } else if (q->offset) {
        kb_quant_values(q, raw, out);
    } else {
        kb_quant_codes(q, raw, out);
    }
    return 0;
}
