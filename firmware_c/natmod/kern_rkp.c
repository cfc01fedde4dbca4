/* kern_rkp.c - the kernel of _kb_rkp: kb_rkp.h's score and learning step (see kbn.h). */
#include "kbn.h"

int32_t kbn_rkp_step(kb_rkp_t *m, const uint8_t *u, int y, uint8_t *mistake)
{
    if (y < 0)
        return (int32_t)kb_rkp_score(m, u);
    return (int32_t)kb_rkp_learn(m, u, (uint8_t)y, mistake);
}
