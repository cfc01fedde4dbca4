/*
 * _kb_rkp: kbit.rkp's score and learning step as a native module (kb_rkp.h, issue 20).
 *
 *     bind(model)            check a kbit.rkp.RKP and make its context, model._ctx (kbn_mp.h)
 *     score(model, u)        RKP.score, RKP.learn and RKP.predict, bound as methods by kbit:
 *     learn(model, u, y)     the score (before learning), one learning step (kb_rkp_learn,
 *     predict(model, u)      which sets count, state and mistake), 1 if the score is > 0
 *     score_py, learn_py, predict_py   kbit's bytecode methods: what runs when u is not a
 *                            buffer of bytes of length dims, a code is above 2^B - 1, y is not 0
 *                            or 1, or the model has no context (set by kbit): the errors are
 *                            the bytecode's
 *     ABI                    KBN_ABI (kbn.h)
 *
 * The context is made from the model's kernel, bits, dims, budget, C, state, count and mistake
 * attributes, its power table `table` and its support-vector memory `memory` (a bytearray of
 * exactly ceil(T*(M*B+1)/8) bytes), checked as kbit's loader checks them.
 */
#include "kbn_mp.h"

enum { KERNEL, BITS, DIMS, BUDGET, WSCALE, STATE, COUNT, MISTAKE, TABLE, MEMORY, NSLOT };
KBN_CTX(NSLOT, kb_rkp_t);

/* the module's functions; mpy_init first in the text: 1.23's mpy_ld.py enters it by an 11-bit
 * jump (kbn.h) */
#define KBN_FUNS(X) \
    X(MP_QSTR_score, score) \
    X(MP_QSTR_learn, learn) \
    X(MP_QSTR_predict, predict)
KBN_MODULE(KBN_FUNS)

#include "kbn_bind.h"

/* Bind x to its model's attributes as they are now: every check, or ValueError. */
static KBN_TEXT void rebind(ctx_t *x)
{
    kbn_head_t *h = &x->h;
    mp_map_t *map = kbn_rebind(h);
    kb_rkp_t *m = &x->k;
    size_t ntab;
    m->kernel = (uint8_t)kbn_slot_int(h, map, KERNEL, MP_QSTR_kernel, 0, KB_KERNEL_RBF);
    m->bits = (uint8_t)kbn_slot_int(h, map, BITS, MP_QSTR_bits, 1, 8);
    m->dims = (uint16_t)kbn_slot_int(h, map, DIMS, MP_QSTR_dims, 1, 0xFFFF);
    m->budget = (uint16_t)kbn_slot_int(h, map, BUDGET, MP_QSTR_budget, 1, 0xFFFF);
    m->C = (uint8_t)kbn_slot_int(h, map, WSCALE, MP_QSTR_C, 1, 255);
    m->rng = (kb_rng_t)kbn_slot_int(h, map, STATE, MP_QSTR_state, 1, 0xFFFF);
    m->count = (kb_count_t)kbn_slot_int(h, map, COUNT, MP_QSTR_count, 0, m->budget);
    kbn_slot(h, map, MISTAKE, MP_QSTR_mistake);
    m->width = 0; /* the host's; the kernel never reads it */
    m->table = kbn_slot_buf(h, map, TABLE, MP_QSTR_table, 0, -1, KBN_RO, &ntab);
    if (ntab > KB_TABLE_MAX)
        kbn_bad_state();
    m->ntab = (uint8_t)ntab;
    m->mem = kbn_slot_buf(h, map, MEMORY, MP_QSTR_memory, 0,
                          (mp_int_t)kb_rkp_mem_bytes(m->budget, m->dims, m->bits), KBN_RW, NULL);
    kbn_bound(h, map);
}

#define KBN_LEARNER_STEP kbn_rkp_step
#include "kbn_learner.h" /* bind, get, score, predict */

KBN_FUN(learn)
{
    const uint8_t *u;
    ctx_t *x;
    mp_int_t y;
    uint8_t miss = 0;
    int32_t s;
    if (n_args == 3 && n_kw == 0 && (y = kbn_arg(args[2], 0, 1)) >= 0 &&
        (x = get(args[0], args[1], &u)) != NULL) {
        s = kbn_rkp_step(&x->k, u, (int)y, &miss);
        kbn_put(&x->h, COUNT, kbn_small(x->k.count));
        kbn_put(&x->h, STATE, kbn_small(x->k.rng));
        kbn_put(&x->h, MISTAKE, miss ? mp_const_true : mp_const_false);
        return kbn_int(s);
    }
    return kbn_py(fun, MP_QSTR_learn_py, n_args, n_kw, args);
}
