/* kern_bonsai.c - the kernel of _kb_bonsai: kb_bonsai.h's parse, update, reset, predict
 * (kbn.h). */
#include "kbn.h"

int kbn_bonsai_init(kb_bonsai_t *m, const uint8_t *payload, uint32_t len)
{
    return (int)kb_bonsai_init(m, payload, len, 0); /* kbit.bonsai has checked the matrices */
}

int kbn_bonsai_update(kb_bonsai_t *m, uint16_t j, uint8_t c)
{
    return kb_bonsai_update(m, j, c);
}

void kbn_bonsai_reset(kb_bonsai_t *m)
{
    kb_bonsai_reset(m);
}

uint8_t kbn_bonsai_predict(kb_bonsai_t *m)
{
    return kb_bonsai_predict(m);
}
