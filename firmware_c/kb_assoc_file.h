/*
 * kb_assoc_file.h - load an assoc model file (docs/contract.md sections 4 and 9) in place.
 *
 * Refuses what kilobit.models.assoc.AssocInt.from_bytes refuses, in the same order: the container's
 * errors (kb_file.h), a type other than assoc, parameters outside the contract (KB_ERR_PARAM),
 * a short payload (KB_ERR_TRUNCATED), a state no learner can reach (KB_ERR_PARAM), a bad
 * trailer (kb_file_trailer). The model's buffers point into `data`, which must stay alive and
 * writable; `near` and `dist` are the caller's scratch of at least P entries each (`max_p`).
 */
#ifndef KB_ASSOC_FILE_H
#define KB_ASSOC_FILE_H

#include "kb_assoc.h"
#include "kb_file.h"

static inline kb_err_t kb_assoc_load(kb_assoc_t *m, uint8_t *data, size_t len, uint16_t *near,
                                     uint32_t *dist, uint16_t max_p)
{
    uint8_t *p = data + KB_FILE_HEAD;
    uint32_t plen, nmem;
    uint8_t type;
    kb_assoc_t t;
    kb_err_t err = kb_file_unpack(data, len, &type, &plen);
    if (err != KB_OK)
        return err;
    if (type != KB_FILE_TYPE_ASSOC)
        return KB_ERR_TYPE;
    if (plen < KB_ASSOC_PARAMS)
        return KB_ERR_TRUNCATED;
    if (!kb_assoc_check_params(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], kb_le16(p + 8)))
        return KB_ERR_PARAM;
    nmem = kb_assoc_mem_bytes(p[2], p[3], p[4], p[5], p[6]);
    if (plen - KB_ASSOC_PARAMS < nmem + 1u)
        return KB_ERR_TRUNCATED;
    if (p[2] > max_p)
        return KB_ERR_LIMIT;
    t.approach = p[0];
    t.bits = p[1];
    t.P = p[2];
    t.d = p[3];
    t.cap = p[4];
    t.kt = p[5];
    t.R = p[6];
    t.nc = p[7];
    t.rng = kb_le16(p + 8);
    t.labels = p + KB_ASSOC_PARAMS;
    t.nf = t.labels + t.cap;
    t.anchors = (int8_t *)(t.nf + t.cap);
    t.conn = (uint8_t *)t.anchors + (uint32_t)t.cap * t.kt * t.P * t.d;
    t.near = near;
    t.dist = dist;
    t.count = 0;
    t.changed = 0;
    if (!kb_assoc_check_state(&t))
        return KB_ERR_PARAM;
    err = kb_file_trailer(p, plen, KB_ASSOC_PARAMS + nmem, (uint32_t)t.P * t.d);
    if (err != KB_OK)
        return err;
    *m = t;
    return KB_OK;
}

#endif /* KB_ASSOC_FILE_H */
