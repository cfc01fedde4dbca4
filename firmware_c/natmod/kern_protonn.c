/* kern_protonn.c - the kernel of _kb_protonn: kb_protonn.h's parse, update, update_run, reset,
 * predict (kbn.h). */
#include "kbn.h"

int kbn_protonn_init(kb_protonn_t *m, const uint8_t *payload, uint32_t len)
{
    return (int)kb_protonn_init(m, payload, len, 0); /* kbit.protonn has checked the matrices */
}

int kbn_protonn_update(kb_protonn_t *m, uint16_t j, uint8_t c)
{
    return kb_protonn_update(m, j, c);
}

int kbn_protonn_update_run(kb_protonn_t *m, uint32_t start, const uint8_t *c, uint32_t n)
{
    KBN_UPDATE_RUN(kb_protonn_update_run, m, start, c, n);
}

void kbn_protonn_reset(kb_protonn_t *m)
{
    kb_protonn_reset(m);
}

uint32_t kbn_protonn_predict(kb_protonn_t *m)
{
    return kb_protonn_predict(m);
}
