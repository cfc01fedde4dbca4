/*
 * kb_fuzz_file - libFuzzer target: every model-file loader of the C runtime on any bytes, and a
 * few steps of the model when one loads (issue 15; docs/contract.md section 4).
 *
 *     make -C firmware_c fuzz          # clang -fsanitize=fuzzer,address,undefined
 *     build/firmware_c/fuzz/kb_fuzz_file -max_total_time=20 CORPUS_DIR
 *
 * The loaders are the device's first line of defence: a truncated, corrupt or foreign file must
 * be refused with an error code, never read out of bounds, never half-loaded. When the file
 * loads, its decoders run too: learn and score steps (rkp, ckp, assoc) and a streamed prediction
 * (bonsai, protonn) on inputs taken from the fuzzer's bytes, so the sparse-matrix and memory
 * decoders see every state a file can put them in. Models whose steps would take long (very
 * wide inputs) are loaded but not stepped, to keep the executions fast.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../kb_assoc_file.h"
#include "../kb_bonsai.h"
#include "../kb_file.h"
#include "../kb_protonn.h"
#include "../kb_rkp.h"
#define KB_CKP_FILE
#include "../kb_ckp.h"

#define FUZZ_MAX_FILE 65536u
#define FUZZ_MAX_WORK 200000ul /* dims x stored vectors a step may cost */

static uint8_t buf[FUZZ_MAX_FILE];
static uint8_t codes[65535];
static int8_t values[65535];
static uint16_t scratch[2 * 65535];
static uint16_t near_buf[256];
static uint32_t dist_buf[256];
static kb_rkp_t rkp;
static kb_ckp_t ckp;
static kb_bonsai_t bonsai;
static kb_protonn_t protonn;
static kb_assoc_t assoc;

/* Inputs for the steps: the fuzzer's bytes again, reduced to the model's code range. */
static void fill(const uint8_t *data, size_t size, uint16_t n, uint8_t top)
{
    uint16_t j;
    for (j = 0; j < n; j++)
        codes[j] = (uint8_t)(size ? data[(j * 7u + 3u) % size] & top : 0);
}

static void run_rkp(const uint8_t *data, size_t size)
{
    uint8_t mistake;
    int k;
    if ((unsigned long)rkp.dims * (rkp.budget + 1ul) > FUZZ_MAX_WORK)
        return;
    fill(data, size, rkp.dims, (uint8_t)((1u << rkp.bits) - 1u));
    for (k = 0; k < 3; k++) {
        (void)kb_rkp_learn(&rkp, codes, (uint8_t)(k & 1), &mistake);
        (void)kb_rkp_score(&rkp, codes);
        codes[0] = (uint8_t)(codes[0] ^ 1u) & (uint8_t)((1u << rkp.bits) - 1u);
    }
}

static void run_ckp(const uint8_t *data, size_t size)
{
    uint8_t mistake;
    int k;
    if ((unsigned long)ckp.dims * (ckp.count + 2ul) > FUZZ_MAX_WORK)
        return;
    fill(data, size, ckp.dims, (uint8_t)((1u << ckp.bits) - 1u));
    for (k = 0; k < 3; k++) {
        (void)kb_ckp_learn(&ckp, codes, (uint8_t)(k & 1), &mistake);
        (void)kb_ckp_score(&ckp, codes);
        codes[0] = (uint8_t)(codes[0] ^ 1u) & (uint8_t)((1u << ckp.bits) - 1u);
    }
}

static void run_proj(kb_proj_t *p, const uint8_t *data, size_t size)
{
    uint16_t j;
    fill(data, size, p->dims, p->top);
    for (j = 0; j < p->dims; j++)
        if (codes[j])
            (void)kb_proj_update(p, j, codes[j]);
}

static void run_assoc(const uint8_t *data, size_t size)
{
    uint16_t j, T = (uint16_t)(assoc.P * assoc.d);
    const int lo = -(1 << (assoc.bits - 1)), hi = (1 << (assoc.bits - 1)) - 1;
    int16_t pred;
    unsigned k;
    if ((unsigned long)T * assoc.cap * assoc.kt > FUZZ_MAX_WORK)
        return;
    for (k = 0; k < 3; k++) {
        for (j = 0; j < T; j++) {
            int v = size ? (int)(int8_t)data[(j * 5u + k) % size] : 0;
            values[j] = (int8_t)(v < lo ? lo : v > hi ? hi : v);
        }
        (void)kb_assoc_learn(&assoc, values, (uint8_t)(size ? data[k % size] : 0), &pred);
        (void)kb_assoc_predict(&assoc, values);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* The first byte picks what the fuzzer's file gets before it is loaded: nothing (the container
 * checks: a random mutation almost always breaks the CRC), a recomputed CRC, or a recomputed
 * length and CRC (so mutations reach the payload decoders behind them). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t type, mode;
    int loaded = 0;
    if (size < 1 || size - 1 > FUZZ_MAX_FILE)
        return 0;
    mode = data[0] & 3u;
    data++;
    size--;
    memcpy(buf, data, size);
    if (mode && size >= KB_FILE_HEAD + KB_FILE_CRC) {
        if (mode >= 2)
            put32(buf + 8, (uint32_t)(size - KB_FILE_HEAD - KB_FILE_CRC));
        put32(buf + size - KB_FILE_CRC, kb_crc32(buf, size - KB_FILE_CRC));
    }
    if (kb_file_head(buf, size, &type) != KB_OK)
        return 0;
    switch (type) {
    case KB_FILE_TYPE_RKP:
        loaded = kb_rkp_load(&rkp, buf, size) == KB_OK;
        if (loaded)
            run_rkp(data, size);
        break;
    case KB_FILE_TYPE_CKP:
        loaded = kb_ckp_load(&ckp, buf, size, scratch) == KB_OK;
        if (loaded)
            run_ckp(data, size);
        break;
    case KB_FILE_TYPE_BONSAI:
        loaded = kb_bonsai_load(&bonsai, buf, size) == KB_OK;
        if (loaded) {
            run_proj(&bonsai.proj, data, size);
            (void)kb_bonsai_predict(&bonsai);
        }
        break;
    case KB_FILE_TYPE_PROTONN:
        loaded = kb_protonn_load(&protonn, buf, size) == KB_OK;
        if (loaded) {
            run_proj(&protonn.proj, data, size);
            (void)kb_protonn_predict(&protonn);
        }
        break;
    case KB_FILE_TYPE_ASSOC:
        loaded = kb_assoc_load(&assoc, buf, size, near_buf, dist_buf, 256) == KB_OK;
        if (loaded)
            run_assoc(data, size);
        break;
    default:
        break;
    }
#ifdef KB_FUZZ_PLANTED_BUG
    /* tests/test_fuzz.py: the fuzzer must find this read past buf. Any model type that loads
     * reaches it (mode 3 is one bit flip from a mode-2 seed), so finding it is a matter of
     * seconds on any machine, not of luck with one type's seeds. */
    if (loaded && mode == 3)
        codes[0] = buf[FUZZ_MAX_FILE + (size & 1u)];
#else
    (void)loaded;
#endif
    return 0;
}
