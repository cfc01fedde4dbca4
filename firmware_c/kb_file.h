/*
 * kb_file.h - read and validate a .kb model file (docs/contract.md, section 4).
 *
 * Refuses exactly what the host loader (kilobit.core.kbfile.unpack, RKPInt.from_bytes) refuses, in
 * the same order, each with its own error code: a device must never learn on top of a foreign,
 * truncated or corrupt snapshot. The trailer's float scaler (float32 lo/hi) is host-only and is
 * skipped as bytes, so no floating point is involved; its integer quantizer is kb_quant.h's.
 *
 * Runtime-parameter builds load in place: the kb_rkp_t's table and memory point into the
 * caller's buffer, which must stay alive and writable. Compile-time-parameter builds
 * (KB_RKP_CONST) check that the file matches the compiled-in parameters and table and copy
 * the memory into kb_rkp_mem.
 */
#ifndef KB_FILE_H
#define KB_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "kb_crc32.h"
#include "kb_rkp.h"

typedef enum {
    KB_OK = 0,
    KB_ERR_MAGIC,     /* not a kilobit file */
    KB_ERR_VERSION,   /* a format version this code does not read */
    KB_ERR_TYPE,      /* a model type this code does not run */
    KB_ERR_TRUNCATED, /* length fields disagree with the data (truncated or padded) */
    KB_ERR_CRC,       /* the bytes changed after writing */
    KB_ERR_PARAM,     /* a parameter outside the contract's ranges */
    KB_ERR_TABLE,     /* power table not in 1..C or increasing */
    KB_ERR_TRAILER,   /* extras refused by contract 4.1 (kb_file_trailer) */
    KB_ERR_LIMIT,     /* valid, but larger than this build supports */
    KB_ERR_MISMATCH,  /* valid, but not the parameters this build was compiled for */
    KB_ERR_COUNT_
} kb_err_t;

static inline const char *kb_strerror(kb_err_t err)
{
    switch (err) {
    case KB_OK: return "ok";
    case KB_ERR_MAGIC: return "not a kilobit model file (bad magic)";
    case KB_ERR_VERSION: return "unsupported model file version";
    case KB_ERR_TYPE: return "unknown model type";
    case KB_ERR_TRUNCATED: return "truncated or padded model file";
    case KB_ERR_CRC: return "corrupt model file (CRC mismatch)";
    case KB_ERR_PARAM: return "bad rkp parameters";
    case KB_ERR_TABLE: return "bad rkp weight table";
    case KB_ERR_TRAILER: return "bad rkp trailer";
    case KB_ERR_LIMIT: return "model too large for this build";
    case KB_ERR_MISMATCH: return "model parameters differ from the compiled-in ones";
    case KB_ERR_COUNT_: break;
    }
    return "unknown error";
}

/* kb_strerror with the model named where the error is the model's ("bad protonn
 * parameters"), as the host's messages; `type` is the file's model type byte. */
static inline const char *kb_model_strerror(kb_err_t err, uint8_t type)
{
    static const char *const text[5][3] = {
        {"bad rkp parameters", "bad rkp weight table", "bad rkp trailer"},
        {"bad ckp parameters", "bad ckp weight table", "bad ckp trailer"},
        {"bad bonsai parameters", "bad bonsai tables", "bad bonsai trailer"},
        {"bad protonn parameters", "bad protonn tables", "bad protonn trailer"},
        {"bad assoc parameters or memory", "bad assoc tables", "bad assoc trailer"},
    };
    int i = err == KB_ERR_PARAM ? 0 : err == KB_ERR_TABLE ? 1 : err == KB_ERR_TRAILER ? 2 : -1;
    if (i < 0 || type < 1 || type > 5)
        return kb_strerror(err);
    return text[type - 1][i];
}

#define KB_FILE_MAGIC "KBIT"
#define KB_FILE_VERSION 1
#define KB_FILE_TYPE_RKP 1
#define KB_FILE_TYPE_CKP 2 /* docs/contract.md section 6; loaded by kb_ckp.h */
#define KB_FILE_TYPE_BONSAI 3 /* docs/contract.md section 8; loaded by kb_bonsai.h */
#define KB_FILE_TYPE_ASSOC 5 /* docs/contract.md section 9; loaded by kb_assoc.h */
#define KB_FILE_TYPE_PROTONN 4 /* docs/contract.md section 10; loaded by kb_protonn.h */
#ifndef KB_FILE_TYPE_KNOWN
#define KB_FILE_TYPE_KNOWN(t) ((t) == KB_FILE_TYPE_RKP || (t) == KB_FILE_TYPE_BONSAI || \
                               (t) == KB_FILE_TYPE_ASSOC || (t) == KB_FILE_TYPE_CKP || \
                               (t) == KB_FILE_TYPE_PROTONN)
#endif
#define KB_FILE_HEAD 12 /* magic, version, type, reserved, payload length */
#define KB_FILE_CRC 4
#define KB_RKP_PARAMS 13 /* kernel bits dims budget width C rng count ntab */

static inline uint16_t kb_le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (uint16_t)((uint16_t)p[1] << 8));
}

static inline uint32_t kb_le32(const uint8_t *p)
{
    return (uint32_t)kb_le16(p) | (uint32_t)kb_le16(p + 2) << 16;
}

/* The checks that need only the first bytes: magic, version, model type. `len` may be a prefix
 * of the file, which lets a caller with a small buffer tell a foreign file from a big one. */
static inline kb_err_t kb_file_head(const uint8_t *data, size_t len, uint8_t *type)
{
    uint8_t i;
    if (len < 4)
        return KB_ERR_MAGIC;
    for (i = 0; i < 4; i++)
        if (data[i] != (uint8_t)KB_FILE_MAGIC[i])
            return KB_ERR_MAGIC;
    if (len < KB_FILE_HEAD + KB_FILE_CRC)
        return KB_ERR_TRUNCATED;
    if (data[4] != KB_FILE_VERSION)
        return KB_ERR_VERSION;
    if (!KB_FILE_TYPE_KNOWN(data[5]))
        return KB_ERR_TYPE;
    *type = data[5];
    return KB_OK;
}

/* Validate the container. On success the payload is data[KB_FILE_HEAD .. +*payload_len). */
static inline kb_err_t kb_file_unpack(const uint8_t *data, size_t len, uint8_t *type,
                                      uint32_t *payload_len)
{
    uint32_t plen;
    kb_err_t err = kb_file_head(data, len, type);
    if (err != KB_OK)
        return err;
    plen = kb_le32(data + 8);
    /* Compared in the wider of size_t and uint32_t, so neither side can wrap. */
    if (len - (KB_FILE_HEAD + KB_FILE_CRC) != plen)
        return KB_ERR_TRUNCATED;
    if (kb_crc32(data, len - KB_FILE_CRC) != kb_le32(data + len - KB_FILE_CRC))
        return KB_ERR_CRC;
    *payload_len = plen;
    return KB_OK;
}

/* The payload's trailer (contract 4.1): one byte `extras`, then the sections its bits name. */
#define KB_EXTRA_SCALER 1u /* f32 lo[n], hi[n]: the host's float scaler, skipped as bytes */
#define KB_EXTRA_QUANT 2u  /* i32 lo[n], hi[n]: the integer quantizer (kb_quant.h) */
#define KB_EXTRA_LABELS 4u /* u8 K, then K labels: u8 len, len printable bytes */
#define KB_EXTRA_PIPELINE 8u /* u16 N, u8 A, u8 mask, u8 p, u8 B: the window pipeline (12.1) */
#define KB_PIPELINE_SIZE 6u
#define KB_PIPELINE_AXES 16u
#define KB_QUANT_LIMIT 0x40000000L /* -2^30 <= lo <= hi < 2^30 */
#define KB_QUANT_SPAN 0x10000000L  /* hi - lo < 2^28: (x - lo) * M stays below 2^30 */
#define KB_LABEL_MAX 32u

static inline int32_t kb_le32s(const uint8_t *p)
{
    uint32_t u = kb_le32(p);
    /* two's complement by hand: converting an out-of-range uint32_t to int32_t is
     * implementation-defined */
    return u < 0x80000000ul ? (int32_t)u : -(int32_t)(0xFFFFFFFFul - u) - 1;
}

/* A model's window pipeline (contract 12.1): windows of n samples x axes readings, the
 * time-domain features of mask and the bands band energies of a 2^p-point FFT per axis. */
typedef struct {
    uint16_t n;
    uint8_t axes, mask, p, bands;
} kb_pipeline_t;

/* Features per axis of a selection (contract 12.1) for windows of n samples: the mask's
 * time-domain features, then the bands of a 2^p-point FFT; 0 when 12.1 refuses it. One check
 * for a model file's pipeline (below) and kb_features_extract's arguments. */
static inline uint8_t kb_selection_per_axis(uint16_t n, uint8_t mask, uint8_t p, uint8_t bands)
{
    uint8_t f = 0, k;
    if (n < 1u || n > 256u || (mask & 0x80u))
        return 0;
    for (k = 0; k < 7u; k++)
        f = (uint8_t)(f + (((unsigned)mask >> k) & 1u));
    if (p) {
        if (p < 5u || p > 8u || (1u << p) > n || bands < 1u || bands > (1u << (p - 1u)) ||
            (bands & (bands - 1u)))
            return 0;
    } else if (bands) {
        return 0;
    }
    return (uint8_t)(f + bands);
}

/* Features per axis of a pipeline, or 0 when contract 12.1 refuses its fields. */
static inline uint8_t kb_pipeline_per_axis(const kb_pipeline_t *pp)
{
    if (pp->axes < 1u || pp->axes > KB_PIPELINE_AXES)
        return 0;
    return kb_selection_per_axis(pp->n, pp->mask, pp->p, pp->bands);
}

/* The pipeline of the 6 bytes at b (read from a trailer kb_file_trailer accepted). */
static inline void kb_pipeline_read(const uint8_t *b, kb_pipeline_t *pp)
{
    pp->n = (uint16_t)(b[0] | (uint16_t)b[1] << 8);
    pp->axes = b[2];
    pp->mask = b[3];
    pp->p = b[4];
    pp->bands = b[5];
}

/* Check the trailer of the payload pl[0 .. plen) that starts at pl[used], for a model of n raw
 * inputs (dims, or assoc's P*d). Every loader calls this one function, so every runtime refuses
 * the same trailers: KB_ERR_TRUNCATED when the extras byte itself is missing, KB_ERR_TRAILER for
 * anything else 4.1 refuses (unknown bits, both scalers, a section of the wrong length, a
 * quantizer out of its ranges, a bad label, bytes after the last section). */
static inline kb_err_t kb_file_trailer(const uint8_t *pl, uint32_t plen, uint32_t used,
                                       uint32_t n)
{
    uint32_t off, k, count, len;
    uint8_t extras;
    if (used >= plen)
        return KB_ERR_TRUNCATED;
    extras = pl[used];
    if ((extras & ~(KB_EXTRA_SCALER | KB_EXTRA_QUANT | KB_EXTRA_LABELS | KB_EXTRA_PIPELINE)) !=
            0 ||
        (extras & (KB_EXTRA_SCALER | KB_EXTRA_QUANT)) == (KB_EXTRA_SCALER | KB_EXTRA_QUANT))
        return KB_ERR_TRAILER;
    if (extras & KB_EXTRA_PIPELINE) {
        /* the last section: checked here, then cut off, so the sections before it read as
         * before (features need the integer quantizer) */
        kb_pipeline_t pp;
        if (!(extras & KB_EXTRA_QUANT) || plen - used - 1u < KB_PIPELINE_SIZE)
            return KB_ERR_TRAILER;
        plen -= KB_PIPELINE_SIZE;
        kb_pipeline_read(pl + plen, &pp);
        if ((uint32_t)pp.axes * kb_pipeline_per_axis(&pp) != n)
            return KB_ERR_TRAILER;
    }
    off = used + 1u;
    if (extras & (KB_EXTRA_SCALER | KB_EXTRA_QUANT)) {
        /* n < 2^16, so 8 n cannot wrap; plen - off cannot either (off <= plen here) */
        if (plen - off < 8u * n)
            return KB_ERR_TRAILER;
        if (extras & KB_EXTRA_SCALER)
            /* a float32 whose exponent bits are all ones (byte 3 bits 0-6, byte 2 bit 7) is
             * infinite or NaN: the host refuses such a bound, every runtime does (4.1) */
            for (k = 0; k < 2u * n; k++)
                if ((pl[off + 4u * k + 3u] & 0x7Fu) == 0x7Fu && (pl[off + 4u * k + 2u] & 0x80u))
                    return KB_ERR_TRAILER;
        if (extras & KB_EXTRA_QUANT)
            for (k = 0; k < n; k++) {
                int32_t lo = kb_le32s(pl + off + 4u * k), hi = kb_le32s(pl + off + 4u * (n + k));
                if (lo < -KB_QUANT_LIMIT || hi >= KB_QUANT_LIMIT || hi < lo ||
                    hi - lo >= KB_QUANT_SPAN)
                    return KB_ERR_TRAILER;
            }
        off += 8u * n;
    }
    if (extras & KB_EXTRA_LABELS) {
        if (off >= plen || pl[off] == 0)
            return KB_ERR_TRAILER;
        count = pl[off++];
        for (k = 0; k < count; k++) {
            if (off >= plen)
                return KB_ERR_TRAILER;
            len = pl[off++];
            if (len < 1u || len > KB_LABEL_MAX || plen - off < len)
                return KB_ERR_TRAILER;
            for (; len; len--, off++)
                if (pl[off] < 0x20u || pl[off] > 0x7Eu)
                    return KB_ERR_TRAILER;
        }
    }
    return off == plen ? KB_OK : KB_ERR_TRAILER;
}

/* check_params of kilobit.models.rkp, plus the generator state. */
static inline kb_err_t kb_rkp_check_params(uint8_t kernel, uint8_t bits, uint16_t dims,
                                           uint16_t budget, int8_t width, uint8_t C,
                                           uint16_t rng)
{
    uint16_t top;
    if (kernel > KB_KERNEL_RBF || bits < 1 || bits > 8 || dims < 1 || budget < 1 ||
        width < -16 || width > 16 || C < 1 || rng == 0)
        return KB_ERR_PARAM;
    top = (uint16_t)((1u << bits) - 1u);
    /* Divisions instead of products: M*(2^B-1)^2 overflows 32 bits near the limits. */
    if (kernel == KB_KERNEL_LAPLACE && dims > KB_LAPLACE_DIST_MAX / top)
        return KB_ERR_PARAM;
    if (kernel == KB_KERNEL_RBF && dims > KB_RBF_DIST_MAX / ((uint32_t)top * top))
        return KB_ERR_PARAM;
    return KB_OK;
}

/* Load an RKP model file into *m (left untouched on error). */
static inline kb_err_t kb_rkp_load(kb_rkp_t *m, uint8_t *data, size_t len)
{
    const uint8_t *p = data + KB_FILE_HEAD;
    uint32_t plen, nmem, off;
    uint8_t type, kernel, bits, C, ntab, i;
    uint16_t dims, budget, rng, count;
    int8_t width;
    kb_err_t err = kb_file_unpack(data, len, &type, &plen);

    if (err != KB_OK)
        return err;
    if (type != KB_FILE_TYPE_RKP)
        return KB_ERR_TYPE;
    if (plen < KB_RKP_PARAMS)
        return KB_ERR_TRUNCATED;
    kernel = p[0];
    bits = p[1];
    dims = kb_le16(p + 2);
    budget = kb_le16(p + 4);
    width = (int8_t)(p[6] < 128 ? p[6] : p[6] - 256);
    C = p[7];
    rng = kb_le16(p + 8);
    count = kb_le16(p + 10);
    ntab = p[12];
    err = kb_rkp_check_params(kernel, bits, dims, budget, width, C, rng);
    if (err != KB_OK)
        return err;
    if (count > budget || ntab > KB_TABLE_MAX)
        return KB_ERR_PARAM;

    /* Table, memory and the scaler flag byte must all be there. */
    nmem = kb_rkp_mem_bytes(budget, dims, bits);
    off = KB_RKP_PARAMS + (uint32_t)ntab;
    if (plen < off || plen - off <= nmem)
        return KB_ERR_TRUNCATED;
    for (i = 0; i < ntab; i++)
        if (p[KB_RKP_PARAMS + i] == 0 || p[KB_RKP_PARAMS + i] > C ||
            (i > 0 && p[KB_RKP_PARAMS + i] > p[KB_RKP_PARAMS + i - 1]))
            return KB_ERR_TABLE;
    err = kb_file_trailer(p, plen, off + nmem, dims);
    if (err != KB_OK)
        return err;

#ifdef KB_SCORE16
    if ((uint32_t)budget * C > (uint32_t)KB_SCORE_MAX)
        return KB_ERR_LIMIT;
#endif
#ifdef KB_RKP_CONST
    if (kernel != KB_RKP_KERNEL(m) || bits != KB_RKP_BITS(m) || dims != KB_RKP_DIMS(m) ||
        budget != KB_RKP_BUDGET(m) || C != KB_RKP_C(m) || ntab != KB_RKP_NTAB(m))
        return KB_ERR_MISMATCH;
    for (i = 0; i < ntab; i++)
        if (p[KB_RKP_PARAMS + i] != KB_TABLE_READ(KB_RKP_TABLE(m), i))
            return KB_ERR_MISMATCH;
    {
        const uint8_t *src = p + KB_RKP_PARAMS + ntab;
        uint8_t *dst = KB_RKP_MEM(m);
        uint32_t b;
        for (b = 0; b < nmem; b++)
            dst[b] = src[b];
    }
    (void)width;
#else
    m->kernel = kernel;
    m->bits = bits;
    m->dims = dims;
    m->budget = budget;
    m->width = width;
    m->C = C;
    m->ntab = ntab;
    m->table = p + KB_RKP_PARAMS;
    m->mem = data + KB_FILE_HEAD + KB_RKP_PARAMS + ntab;
#endif
    m->rng = rng;
    m->count = (kb_count_t)count;
    return KB_OK;
}

#endif /* KB_FILE_H */
