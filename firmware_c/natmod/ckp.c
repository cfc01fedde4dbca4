/*
 * _kb_ckp: kbit.ckp's score and learning step as a native module (kb_ckp.h, issue 20).
 *
 *     bind(model)            check a kbit.ckp.CKP and make its context, model._ctx (kbn_mp.h)
 *     score(model, u)        CKP.score, CKP.learn and CKP.predict, bound as methods by kbit:
 *     learn(model, u, y)     the score (before learning), one learning step (kb_ckp_learn,
 *     predict(model, u)      which sets count, state, norm, _b, _n1 and mistake), 1 if the
 *                            score is > 0
 *     score_py, learn_py, predict_py   kbit's bytecode methods: what runs when u is not a
 *                            buffer of bytes of length dims, a code is above 2^B - 1, y is not 0
 *                            or 1, or the model has no context (set by kbit): the errors are
 *                            the bytecode's
 *     ABI                    KBN_ABI (kbn.h)
 *
 * The context is made from the model's bits, dims, L, C, qstart, qshift, state, norm, count,
 * _b, _n1 and mistake attributes, its power table `table`, loss table `q`, memory `memory`
 * (ceil(L/8) bytes) and `_c`, an array('H') of at least 2*dims entries: kb_ckp_t's scratch
 * (the centres of the point and of a replaced support vector). The schedule (b, n1) is
 * recomputed from count at every call.
 */
#include "kbn_mp.h"

enum {
    BITS, DIMS, BUDGET, WSCALE, QSTART, QSHIFT, STATE, NORM, COUNT, SCHED_B, SCHED_N1, MISTAKE,
    TABLE, QTAB, MEMORY, SCRATCH, NSLOT
};
KBN_CTX(NSLOT, kb_ckp_t);

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
    kb_ckp_t *m = &x->k;
    mp_int_t top;
    size_t n, nq;
    m->bits = (uint8_t)kbn_slot_int(h, map, BITS, MP_QSTR_bits, 1, 8);
    m->dims = (uint16_t)kbn_slot_int(h, map, DIMS, MP_QSTR_dims, 1, 0xFFFF);
    m->L = (uint16_t)kbn_slot_int(h, map, BUDGET, MP_QSTR_L, (mp_int_t)m->dims + 1, 0xFFFF);
    m->C = (uint8_t)kbn_slot_int(h, map, WSCALE, MP_QSTR_C, 1, 255);
    m->qstart = (uint16_t)kbn_slot_int(h, map, QSTART, MP_QSTR_qstart, 1, 0xFFFF);
    m->qshift = (uint8_t)kbn_slot_int(h, map, QSHIFT, MP_QSTR_qshift, 0, 22);
    m->rng = (kb_rng_t)kbn_slot_int(h, map, STATE, MP_QSTR_state, 1, 0xFFFF);
    m->norm = (int32_t)kbn_slot_int(h, map, NORM, MP_QSTR_norm, KB_CKP_NORM_MIN, KB_CKP_NORM_MAX);
    m->count = (kb_ckp_count_t)kbn_slot_int(h, map, COUNT, MP_QSTR_count, 0,
                                            m->L / (m->dims + 1));
    kbn_slot(h, map, SCHED_B, MP_QSTR__b); /* derived from count: recomputed, stored back */
    kbn_slot(h, map, SCHED_N1, MP_QSTR__n1);
    kbn_slot(h, map, MISTAKE, MP_QSTR_mistake);
    top = (2 << m->bits) - 1; /* the largest centre: distances stay below 2^30 */
    if (m->dims > (mp_int_t)(KB_CKP_DIST_MAX / (mp_uint_t)(top * top)))
        kbn_bad_state();
    m->width = 0; /* the host's; the kernel never reads it */
    m->table = kbn_slot_buf(h, map, TABLE, MP_QSTR_table, 0, -1, KBN_RO, &n);
    m->q = kbn_slot_buf(h, map, QTAB, MP_QSTR_q, 0, -1, KBN_RO, &nq);
    if (n > KB_TABLE_MAX || nq > 0xFFFF)
        kbn_bad_state();
    m->ntab = (uint8_t)n;
    m->nq = (uint16_t)nq;
    m->mem = kbn_slot_buf(h, map, MEMORY, MP_QSTR_memory, 0, (m->L + 7) / 8, KBN_RW, NULL);
    m->scratch = kbn_slot_buf(h, map, SCRATCH, MP_QSTR__c, 'H', -1, KBN_RW, &n);
    if (n < 4u * (size_t)m->dims)
        kbn_bad_state();
    kbn_bound(h, map);
}

#define KBN_LEARNER_STEP kbn_ckp_step
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
        s = kbn_ckp_step(&x->k, u, (int)y, &miss);
        kbn_put(&x->h, COUNT, kbn_small(x->k.count));
        kbn_put(&x->h, STATE, kbn_small(x->k.rng));
        kbn_put(&x->h, NORM, kbn_small(x->k.norm));
        kbn_put(&x->h, SCHED_B, kbn_small(x->k.b));
        kbn_put(&x->h, SCHED_N1, kbn_small(x->k.n1));
        kbn_put(&x->h, MISTAKE, miss ? mp_const_true : mp_const_false);
        return kbn_int(s);
    }
    return kbn_py(fun, MP_QSTR_learn_py, n_args, n_kw, args);
}
