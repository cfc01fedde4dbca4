/*
 * kbn_predictor.h - what the predictors' glue (bonsai.c, protonn.c) shares: bind, the context
 * of a call (get), update, update_run and reset over the model's kernel functions
 * KBN_PREDICTOR_UPDATE(k, j, c), KBN_PREDICTOR_UPDATE_RUN(k, start, c, n) and
 * KBN_PREDICTOR_RESET(k) (kern_<model>.c's). Included once by each, after its ctx_t (k, the
 * kernel's struct), NSLOT and rebind (0, or the payload's kb_err_t code); each keeps its own
 * predict, which stores back its own fields.
 */
#ifndef KBN_PREDICTOR_H
#define KBN_PREDICTOR_H

#if !defined(KBN_PREDICTOR_UPDATE) || !defined(KBN_PREDICTOR_UPDATE_RUN) || \
    !defined(KBN_PREDICTOR_RESET)
#error "define KBN_PREDICTOR_UPDATE, _UPDATE_RUN and _RESET before including kbn_predictor.h"
#endif

static KBN_TEXT mp_obj_t bind(mp_obj_t self)
{
    ctx_t *x = (ctx_t *)kbn_new(self, sizeof(ctx_t), NSLOT);
    return MP_OBJ_NEW_SMALL_INT(rebind(x));
}

/* The context of model `self` (bound again first when the model changed), or NULL. */
static KBN_TEXT ctx_t *get(mp_obj_t self)
{
    ctx_t *x = (ctx_t *)kbn_find(self);
    if (x != NULL && !kbn_fresh(&x->h) && rebind(x) != 0)
        kbn_raise("kbit native: the model's payload is outside the native kernel");
    return x;
}

KBN_FUN(update)
{
    ctx_t *x;
    mp_int_t j, c;
    if (n_args != 3 || n_kw != 0 || (x = get(args[0])) == NULL)
        return kbn_py(fun, MP_QSTR_update_py, n_args, n_kw, args);
    j = kbn_arg(args[1], 0, 0xFFFF);
    c = kbn_arg(args[2], 0, 255);
    if (j < 0 || c < 0 || KBN_PREDICTOR_UPDATE(&x->k, (uint16_t)j, (uint8_t)c) != 0)
        return kbn_py(fun, MP_QSTR_update_err, n_args, n_kw, args);
    return mp_const_none;
}

/* update_run(model, start, codes). A model without its context runs kbit's bytecode
 * (update_run_py). The input in progress lives in the context, so whatever else the kernel does
 * not take -- codes that are not a buffer of bytes (a list), a start that is not an int in
 * 0..65535, a run it refuses -- goes to kbit's update_run_err, which raises the bytecode's
 * error or hands codes in range back as a bytes. No codes: nothing to do, as in the bytecode. */
KBN_FUN(update_run)
{
    ctx_t *x;
    const uint8_t *c;
    size_t n = 0;
    mp_int_t start;
    if (n_args != 3 || n_kw != 0 || (x = get(args[0])) == NULL)
        return kbn_py(fun, MP_QSTR_update_run_py, n_args, n_kw, args);
    c = kbn_codes(args[2], &n, 0);
    if (c != NULL && n == 0)
        return mp_const_none;
    start = kbn_arg(args[1], 0, 0xFFFF);
    if (c == NULL || start < 0 || n > 0xFFFF ||
        KBN_PREDICTOR_UPDATE_RUN(&x->k, (uint32_t)start, c, (uint32_t)n) != 0)
        return kbn_py(fun, MP_QSTR_update_run_err, n_args, n_kw, args);
    return mp_const_none;
}

KBN_FUN(reset)
{
    ctx_t *x;
    if (n_args != 1 || n_kw != 0 || (x = get(args[0])) == NULL)
        return kbn_py(fun, MP_QSTR_reset_py, n_args, n_kw, args);
    KBN_PREDICTOR_RESET(&x->k);
    return mp_const_none;
}

#endif /* KBN_PREDICTOR_H */
