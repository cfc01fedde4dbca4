/*
 * kbn_learner.h - what the binary learners' glue (rkp.c, ckp.c) shares: bind, the context of a
 * call (get) and score/predict over the model's step function, KBN_LEARNER_STEP(k, u, y,
 * mistake) (kern_<model>.c's, y = -1: score only). Included once by each, after its ctx_t,
 * NSLOT and rebind; each keeps its own learn, which stores back its own state.
 */
#ifndef KBN_LEARNER_H
#define KBN_LEARNER_H

#ifndef KBN_LEARNER_STEP
#error "define KBN_LEARNER_STEP before including kbn_learner.h"
#endif

static KBN_TEXT mp_obj_t bind(mp_obj_t self)
{
    rebind((ctx_t *)kbn_find_or_new(self, sizeof(ctx_t), NSLOT));
    return mp_const_none;
}

/* The context of model `self` with codes u of its length, each in 0 .. 2^B - 1 (bound again
 * first when the model changed), or NULL: the bytecode runs the call (and raises its error). */
static KBN_TEXT ctx_t *get(mp_obj_t self, mp_obj_t u_in, const uint8_t **u)
{
    ctx_t *x = (ctx_t *)kbn_find(self);
    size_t n;
    if (x == NULL)
        return NULL;
    if (!kbn_fresh(&x->h))
        rebind(x);
    *u = kbn_codes(u_in, &n, 0);
    if (*u == NULL || n != x->k.dims || !kbn_codes_fit(*u, n, (1u << x->k.bits) - 1u))
        return NULL;
    return x;
}

KBN_FUN(score)
{
    const uint8_t *u;
    ctx_t *x;
    if (n_args == 2 && n_kw == 0 && (x = get(args[0], args[1], &u)) != NULL)
        return kbn_int(KBN_LEARNER_STEP(&x->k, u, -1, NULL));
    return kbn_py(fun, MP_QSTR_score_py, n_args, n_kw, args);
}

KBN_FUN(predict)
{
    const uint8_t *u;
    ctx_t *x;
    if (n_args == 2 && n_kw == 0 && (x = get(args[0], args[1], &u)) != NULL)
        return kbn_small(KBN_LEARNER_STEP(&x->k, u, -1, NULL) > 0);
    return kbn_py(fun, MP_QSTR_predict_py, n_args, n_kw, args);
}

#endif /* KBN_LEARNER_H */
