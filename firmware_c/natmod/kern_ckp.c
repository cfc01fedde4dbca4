/* kern_ckp.c - the kernel of _kb_ckp: kb_ckp.h's schedule, score and learning step (kbn.h). */
#include "kbn.h"

int32_t kbn_ckp_step(kb_ckp_t *m, const uint8_t *u, int y, uint8_t *mistake)
{
    m->b = 0; /* no support vector: no schedule (as kb_ckp_load leaves it) */
    m->n1 = 0;
    if (m->count != 0)
        kb_ckp_schedule(m);
    if (y < 0)
        return (int32_t)kb_ckp_score(m, u);
    return (int32_t)kb_ckp_learn(m, u, (uint8_t)y, mistake);
}
