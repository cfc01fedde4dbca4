/*
 * kb_ovr.h - several classes for the online learners (kb_rkp.h, kb_ckp.h): one-vs-rest,
 * docs/contract.md sections 3.6 and 6.8.
 *
 * A file of K >= 3 classes is K binary learners sharing the parameters and the tables; bit 7
 * of its first payload byte says so, and a classes section (u8 K, then the states of learners
 * 1 .. K-1) follows the parameters, the K memories follow the tables. kb_ovr_split turns such
 * a file into K binary model files, back to back in a buffer of the caller's, each loaded by
 * the learner's own loader (kb_rkp_load, kb_ckp_load) with every check of a binary file:
 * learner k's is the parameters with its state, the tables, its memory and (learner 0 only)
 * the trailer. The learners then step on their own; kb_ovr_best picks the class.
 *
 * Runtime parameters only (the host's tools): a compile-time build holds one learner.
 */
#ifndef KB_OVR_H
#define KB_OVR_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kb_crc32.h"
#include "kb_file.h"

#define KB_OVR_FLAG 0x80u

/* The parameters' bytes (rkp: 13, ckp: 17), a learner's state's (rkp: rng, count; ckp: rng,
 * count, norm), and the bytes of the tables and of one memory of the payload p (after the
 * classes section of K learners), by the model type; 0 for another type. */
static inline uint32_t kb_ovr_layout(uint8_t type, const uint8_t *p, uint32_t plen, uint8_t K,
                                     uint32_t *nstate, uint32_t *ntables, uint32_t *nmem)
{
    const uint32_t nparams = type == KB_FILE_TYPE_RKP ? 13u : 17u;
    *nstate = type == KB_FILE_TYPE_RKP ? 4u : 8u;
    if (type != KB_FILE_TYPE_RKP && type != KB_FILE_TYPE_CKP)
        return 0;
    if (type == KB_FILE_TYPE_RKP) {
        const uint64_t n = ((uint64_t)kb_le16(p + 4) * ((uint64_t)kb_le16(p + 2) * p[1] + 1u) +
                            7u) / 8u;
        if (n > plen)
            return 0;
        *ntables = p[12];
        *nmem = (uint32_t)n;
    } else {
        const uint32_t q = nparams + 1u + (K - 1u) * *nstate + p[16];
        if (plen < q + 5u)
            return 0;
        *ntables = (uint32_t)p[16] + 5u + kb_le16(p + q + 2u);
        *nmem = ((uint32_t)kb_le16(p + 3) + 7u) / 8u;
    }
    return nparams;
}

/* Split `data` (len bytes, a model file of K >= 3 classes) into K binary model files written
 * back to back into out (cap bytes): learner k's at out + at[k], at[k + 1] - at[k] bytes (at
 * has room for 256 offsets). *K = 1 for a binary file (out untouched: load data itself).
 * Errors: the container's (kb_file_unpack), KB_ERR_PARAM for a K outside 3..255,
 * KB_ERR_TRUNCATED for a payload shorter or longer than its K memories say, KB_ERR_LIMIT
 * when out is too small. */
static inline kb_err_t kb_ovr_split(const uint8_t *data, size_t len, uint8_t *out, size_t cap,
                                    uint8_t *K, uint32_t *at)
{
    const uint8_t *p = data + KB_FILE_HEAD;
    uint32_t plen, nparams, nstate, ntables, nmem, tables, mems, ntrail, k;
    uint8_t type;
    kb_err_t err = kb_file_unpack(data, len, &type, &plen);
    *K = 1;
    if (err != KB_OK)
        return err;
    if ((type != KB_FILE_TYPE_RKP && type != KB_FILE_TYPE_CKP) || plen < 1u ||
        !(p[0] & KB_OVR_FLAG))
        return KB_OK; /* the learner's own loader judges it */
    nparams = type == KB_FILE_TYPE_RKP ? 13u : 17u;
    if (plen <= nparams)
        return KB_ERR_TRUNCATED;
    if (p[nparams] < 3u)
        return KB_ERR_PARAM;
    *K = p[nparams];
    if (!kb_ovr_layout(type, p, plen, *K, &nstate, &ntables, &nmem))
        return KB_ERR_TRUNCATED;
    tables = nparams + 1u + (*K - 1u) * nstate;
    mems = tables + ntables;
    if ((uint64_t)tables > plen || (uint64_t)mems + (uint64_t)*K * nmem + 1u > plen)
        return KB_ERR_TRUNCATED;
    ntrail = plen - mems - *K * nmem;
    at[0] = 0;
    for (k = 0; k < *K; k++) {
        const uint32_t n = nparams + ntables + nmem + (k ? 1u : ntrail);
        uint8_t *f = out + at[k], *q = f + KB_FILE_HEAD;
        uint32_t crc;
        if ((uint64_t)at[k] + KB_FILE_HEAD + n + KB_FILE_CRC > cap)
            return KB_ERR_LIMIT;
        memcpy(f, data, KB_FILE_HEAD);
        f[8] = (uint8_t)n;
        f[9] = (uint8_t)(n >> 8);
        f[10] = (uint8_t)(n >> 16);
        f[11] = (uint8_t)(n >> 24);
        memcpy(q, p, nparams);
        q[0] = (uint8_t)(q[0] & ~KB_OVR_FLAG);
        if (k) /* learner k's state where learner 0's is: rng and count at 8, ckp's norm at 12 */
            memcpy(q + 8, p + nparams + 1u + (k - 1u) * nstate, nstate);
        memcpy(q + nparams, p + tables, ntables);
        memcpy(q + nparams + ntables, p + mems + k * nmem, nmem);
        if (k)
            q[n - 1u] = 0; /* no extras: the trailer is the model's, learner 0 carries it */
        else
            memcpy(q + nparams + ntables + nmem, p + mems + *K * nmem, ntrail);
        crc = kb_crc32(f, KB_FILE_HEAD + n);
        f[KB_FILE_HEAD + n] = (uint8_t)crc;
        f[KB_FILE_HEAD + n + 1u] = (uint8_t)(crc >> 8);
        f[KB_FILE_HEAD + n + 2u] = (uint8_t)(crc >> 16);
        f[KB_FILE_HEAD + n + 3u] = (uint8_t)(crc >> 24);
        at[k + 1u] = at[k] + KB_FILE_HEAD + n + KB_FILE_CRC;
    }
    return KB_OK;
}

/* The class of the largest of K scores, the lowest on a tie; *best gets that score. */
static inline uint8_t kb_ovr_best(const int32_t *scores, uint8_t K, int32_t *best)
{
    uint8_t k, c = 0;
    for (k = 1; k < K; k++)
        if (scores[k] > scores[c])
            c = k;
    *best = scores[c];
    return c;
}

#endif /* KB_OVR_H */
