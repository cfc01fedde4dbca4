/* kern_assoc.c - the kernel of _kb_assoc: kb_assoc.h's prediction and learning step (kbn.h). */
#include "kbn.h"

int16_t kbn_assoc_step(kb_assoc_t *m, const int8_t *u, int y)
{
    int16_t pred;
    if (y < 0)
        return kb_assoc_predict(m, u);
    if (kb_assoc_learn(m, u, (uint8_t)y, &pred) != 0)
        return -2;
    return pred;
}
