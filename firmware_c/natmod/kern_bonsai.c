/* kern_bonsai.c - the kernel of _kb_bonsai: kb_bonsai.h's parse, update, update_run, reset,
 * predict (kbn.h). */
#include "kbn.h"

int kbn_bonsai_init(kb_bonsai_t *m, const uint8_t *payload, uint32_t len)
{
    return (int)kb_bonsai_init(m, payload, len, 0); /* kbit.bonsai has checked the matrices */
}

int kbn_bonsai_update(kb_bonsai_t *m, uint16_t j, uint8_t c)
{
    return kb_bonsai_update(m, j, c);
}

int kbn_bonsai_update_run(kb_bonsai_t *m, uint32_t start, const uint8_t *c, uint32_t n)
{
    KBN_UPDATE_RUN(kb_bonsai_update_run, m, start, c, n);
}

void kbn_bonsai_reset(kb_bonsai_t *m)
{
    kb_bonsai_reset(m);
}

uint8_t kbn_bonsai_predict(kb_bonsai_t *m)
{
    return kb_bonsai_predict(m);
}
